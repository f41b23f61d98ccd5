//! Parquet -> validated `Tables`.
//!
//! Every table is read from memory (`Bytes`), its schema checked once, then
//! its row groups decoded in parallel straight into the final row vector;
//! the eight tables are read in parallel too. Uniqueness rules are checked
//! by bucketing and sorting packed `(hash, row)` words and comparing only
//! the rows whose hashes collide, which needs no per-row allocation.
use std::borrow::Cow;
use std::collections::HashSet;
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int32Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, UInt64Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Schema, TimeUnit};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::file::reader::ChunkReader;
use rayon::prelude::*;

pub use super::source::TableBytes;
use super::tables::*;
use super::{LoadedSnapshot, Manifest, SnapshotError, TableEntry, FORMAT_V1};

const MANIFEST: &str = "manifest.json";
const BATCH_ROWS: usize = 8192;
const MAX_TAG_BYTES: usize = 255;

/// Where a snapshot's files come from: a directory, or memory (files
/// downloaded from elsewhere). `file` is a plain name in the snapshot.
pub trait SnapshotFiles: Sync {
    fn read(&self, file: &str) -> Result<Bytes, SnapshotError>;

    /// The file for the streaming loader, which reads it piece by piece.
    fn open(&self, file: &str) -> Result<TableBytes, SnapshotError> {
        self.read(file).map(TableBytes::Memory)
    }
}

/// The files of a snapshot directory.
pub struct DirFiles<'a>(pub &'a Path);

impl SnapshotFiles for DirFiles<'_> {
    fn read(&self, file: &str) -> Result<Bytes, SnapshotError> {
        match std::fs::read(self.0.join(file)) {
            Ok(bytes) => Ok(Bytes::from(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && file != MANIFEST => {
                Err(SnapshotError::new(file, format!("file is missing: {e}")))
            }
            Err(e) => Err(SnapshotError::new(file, format!("cannot read: {e}"))),
        }
    }

    fn open(&self, file: &str) -> Result<TableBytes, SnapshotError> {
        match std::fs::File::open(self.0.join(file)).and_then(TableBytes::open) {
            Ok(bytes) => Ok(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(SnapshotError::new(file, format!("file is missing: {e}")))
            }
            Err(e) => Err(SnapshotError::new(file, format!("cannot read: {e}"))),
        }
    }
}

/// A snapshot's files held in memory, by name.
#[derive(Clone, Debug, Default)]
pub struct MemoryFiles(pub std::collections::HashMap<String, Bytes>);

impl SnapshotFiles for MemoryFiles {
    fn read(&self, file: &str) -> Result<Bytes, SnapshotError> {
        self.0
            .get(file)
            .cloned()
            .ok_or_else(|| SnapshotError::new(file, "file is missing"))
    }
}

/// Reads and validates the snapshot in `dir` (tables and row groups in
/// parallel on the current rayon pool).
pub fn read_snapshot(dir: &Path) -> Result<LoadedSnapshot, SnapshotError> {
    read_snapshot_from(&DirFiles(dir), snapshot_name(dir), dir.to_path_buf())
}

/// Reads and validates the snapshot whose files `src` holds; `name` and
/// `dir` are what the loaded snapshot reports (its name and location).
pub fn read_snapshot_from(
    src: &dyn SnapshotFiles,
    name: String,
    dir: PathBuf,
) -> Result<LoadedSnapshot, SnapshotError> {
    let (manifest, created_at_ms) = checked_manifest(src)?;
    let entries = manifest_entries(&manifest);
    let tables = read_tables(src, &entries)?;
    Ok(LoadedSnapshot {
        name,
        dir,
        manifest,
        created_at_ms,
        tables,
    })
}

/// The manifest of the snapshot `src` holds, checked (format, `created_at`
/// and one plain file name per table), with `created_at` in epoch ms.
pub(crate) fn checked_manifest(src: &dyn SnapshotFiles) -> Result<(Manifest, i64), SnapshotError> {
    let manifest = read_manifest(src)?;
    let created_at_ms = crate::time::parse_iso_ms(&manifest.created_at).ok_or_else(|| {
        SnapshotError::new(
            MANIFEST,
            format!(
                "created_at {:?} is not an ISO 8601 UTC time like 2026-11-20T12:00:00.000Z",
                manifest.created_at
            ),
        )
    })?;
    for name in TABLE_NAMES {
        let entry = manifest.tables.get(name).ok_or_else(|| {
            SnapshotError::new(MANIFEST, format!("no entry for table `{name}` in `tables`"))
        })?;
        if !is_plain_file_name(&entry.file) {
            return Err(SnapshotError::new(
                MANIFEST,
                format!(
                    "table `{name}` names file {:?}, which is not a plain file name in the snapshot directory",
                    entry.file
                ),
            ));
        }
    }
    Ok((manifest, created_at_ms))
}

/// The entries of a checked manifest in [`TABLE_NAMES`] order.
pub(crate) fn manifest_entries(manifest: &Manifest) -> Vec<&TableEntry> {
    TABLE_NAMES
        .iter()
        .map(|name| &manifest.tables[*name])
        .collect()
}

impl LoadedSnapshot {
    /// Reads and validates one table of the snapshot directory `dir` by its
    /// name in [`TABLE_NAMES`] (checksum, schema and per-table rules; no
    /// cross-table check) and returns its row count. For per-table load
    /// timing in benches (`read` is private; this is reachable as
    /// `followgraph::snapshot::LoadedSnapshot::read_table_rows`).
    pub fn read_table_rows(dir: &Path, name: &str) -> Result<usize, SnapshotError> {
        read_table_by_name(dir, name)
    }
}

fn read_table_by_name(dir: &Path, name: &str) -> Result<usize, SnapshotError> {
    let dir = &DirFiles(dir) as &dyn SnapshotFiles;
    let manifest = read_manifest(dir)?;
    let e = manifest.tables.get(name).ok_or_else(|| {
        SnapshotError::new(MANIFEST, format!("no entry for table `{name}` in `tables`"))
    })?;
    Ok(match name {
        "lists" => read_lists(dir, e)?.len(),
        "primary_lists" => read_primary_lists(dir, e)?.len(),
        "list_records" => read_list_records(dir, e)?.len(),
        "list_record_tags" => read_list_record_tags(dir, e)?.len(),
        "list_ops" => read_list_ops(dir, e)?.len(),
        "ens" => read_ens(dir, e)?.len(),
        "badge_events" => read_badge_events(dir, e)?.len(),
        "badges" => read_badges(dir, e)?.len(),
        _ => {
            return Err(SnapshotError::new(
                MANIFEST,
                format!("unknown table `{name}`"),
            ))
        }
    })
}

fn read_manifest(src: &dyn SnapshotFiles) -> Result<Manifest, SnapshotError> {
    let text = src.read(MANIFEST)?;
    let manifest: Manifest = serde_json::from_slice(&text)
        .map_err(|e| SnapshotError::new(MANIFEST, format!("malformed manifest: {e}")))?;
    if manifest.format != FORMAT_V1 {
        return Err(SnapshotError::new(
            MANIFEST,
            format!(
                "unknown format version {:?} (expected {FORMAT_V1:?})",
                manifest.format
            ),
        ));
    }
    Ok(manifest)
}

/// A file name the manifest may use: one path component inside the
/// snapshot directory, never a way out of it.
fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && !name.contains("..")
        && !name.contains(['/', '\\', '\0'])
        && !Path::new(name).is_absolute()
}

pub fn snapshot_name(dir: &Path) -> String {
    if let Some(name) = dir.file_name() {
        return name.to_string_lossy().into_owned();
    }
    std::fs::canonicalize(dir)
        .ok()
        .as_deref()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

fn read_tables(dir: &dyn SnapshotFiles, entries: &[&TableEntry]) -> Result<Tables, SnapshotError> {
    let [lists_e, primary_e, records_e, tags_e, ops_e, ens_e, events_e, badges_e] = entries else {
        unreachable!("one entry per table");
    };
    let (mut lists, mut primary, mut records, mut tags) = (None, None, None, None);
    let (mut ops, mut ens, mut events, mut badges) = (None, None, None, None);
    rayon::scope(|s| {
        // Largest tables first, so they start while the small ones fill gaps.
        s.spawn(|_| ops = Some(read_list_ops(dir, ops_e)));
        s.spawn(|_| records = Some(read_list_records(dir, records_e)));
        s.spawn(|_| tags = Some(read_list_record_tags(dir, tags_e)));
        s.spawn(|_| lists = Some(read_lists(dir, lists_e)));
        s.spawn(|_| primary = Some(read_primary_lists(dir, primary_e)));
        s.spawn(|_| ens = Some(read_ens(dir, ens_e)));
        s.spawn(|_| events = Some(read_badge_events(dir, events_e)));
        s.spawn(|_| badges = Some(read_badges(dir, badges_e)));
    });
    // Errors are reported in table order, whichever thread found them first.
    let done = "every table task ran";
    let tables = Tables {
        lists: lists.expect(done)?,
        primary_lists: primary.expect(done)?,
        list_records: records.expect(done)?,
        list_record_tags: tags.expect(done)?,
        list_ops: ops.expect(done)?,
        ens: ens.expect(done)?,
        badge_events: events.expect(done)?,
        badges: badges.expect(done)?,
    };
    check_badge_events(&tables.badges, &tables.badge_events, badges_e, events_e)?;
    Ok(tables)
}

/// Every badge names an event of `badge_events`.
fn check_badge_events(
    badges: &[BadgeRow],
    events: &[BadgeEventRow],
    badges_e: &TableEntry,
    events_e: &TableEntry,
) -> Result<(), SnapshotError> {
    let known: HashSet<i64> = events.iter().map(|e| e.event_id).collect();
    match badges
        .iter()
        .enumerate()
        .find(|(_, b)| !known.contains(&b.event_id))
    {
        None => Ok(()),
        Some((row, b)) => Err(SnapshotError::at_row(
            &badges_e.file,
            row as u64,
            format!(
                "event_id {} is not in badge_events ({})",
                b.event_id, events_e.file
            ),
        )),
    }
}

/// The five small tables, read whole (the streaming loader's first step).
pub(crate) struct SmallTables {
    pub lists: Vec<ListRow>,
    pub primary_lists: Vec<PrimaryListRow>,
    pub ens: Vec<EnsRow>,
    pub badge_events: Vec<BadgeEventRow>,
    pub badges: Vec<BadgeRow>,
}

/// Reads and validates the small tables of `entries` (manifest order) in
/// parallel.
pub(crate) fn read_small_tables(
    dir: &dyn SnapshotFiles,
    entries: &[&TableEntry],
) -> Result<SmallTables, SnapshotError> {
    let [lists_e, primary_e, _, _, _, ens_e, events_e, badges_e] = entries else {
        unreachable!("one entry per table");
    };
    let (mut lists, mut primary, mut ens, mut events, mut badges) = (None, None, None, None, None);
    rayon::scope(|s| {
        s.spawn(|_| ens = Some(read_ens(dir, ens_e)));
        s.spawn(|_| lists = Some(read_lists(dir, lists_e)));
        s.spawn(|_| primary = Some(read_primary_lists(dir, primary_e)));
        s.spawn(|_| events = Some(read_badge_events(dir, events_e)));
        s.spawn(|_| badges = Some(read_badges(dir, badges_e)));
    });
    let done = "every table task ran";
    let small = SmallTables {
        lists: lists.expect(done)?,
        primary_lists: primary.expect(done)?,
        ens: ens.expect(done)?,
        badge_events: events.expect(done)?,
        badges: badges.expect(done)?,
    };
    check_badge_events(&small.badges, &small.badge_events, badges_e, events_e)?;
    Ok(small)
}

// ---------------------------------------------------------------------------
// Column specifications and typed access

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Address,
    TokenId,
    Timestamp,
    Seq,
    Op,
    Int64,
    Int32,
    Text,
}

#[derive(Clone, Copy, Debug)]
struct Spec {
    name: &'static str,
    kind: Kind,
    nullable: bool,
}

const fn req(name: &'static str, kind: Kind) -> Spec {
    Spec {
        name,
        kind,
        nullable: false,
    }
}

const fn opt(name: &'static str, kind: Kind) -> Spec {
    Spec {
        name,
        kind,
        nullable: true,
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// Checks the type of `spec`'s column; `Err` is the reason.
fn check_type(spec: &Spec, t: &DataType) -> Result<(), String> {
    let ok = match spec.kind {
        Kind::Address | Kind::Text => is_text(t),
        Kind::TokenId => matches!(t, DataType::UInt64 | DataType::Int64),
        Kind::Seq => *t == DataType::UInt64,
        Kind::Timestamp => match t {
            // The contract lists milli-, micro- and nanoseconds only.
            DataType::Timestamp(TimeUnit::Second, _) => false,
            DataType::Timestamp(_, Some(_)) => true,
            DataType::Timestamp(unit, None) => {
                return Err(format!(
                    "column `{}` has type Timestamp({unit:?}) without a time zone: it must be a TIMESTAMP adjusted to UTC",
                    spec.name
                ))
            }
            _ => false,
        },
        Kind::Op => matches!(
            t,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        ),
        Kind::Int64 => *t == DataType::Int64,
        Kind::Int32 => *t == DataType::Int32,
    };
    if ok {
        return Ok(());
    }
    let expected = match spec.kind {
        Kind::Address => "Utf8 (an address)",
        Kind::Text => "Utf8",
        Kind::TokenId => "UInt64 (or non-negative Int64)",
        Kind::Seq => "UInt64",
        Kind::Timestamp => "a Timestamp in milli-, micro- or nanoseconds adjusted to UTC",
        Kind::Op => "Binary",
        Kind::Int64 => "Int64",
        Kind::Int32 => "Int32",
    };
    Err(format!(
        "column `{}` has type {t}, expected {expected}",
        spec.name
    ))
}

/// The schema check: every specified column present with an accepted type.
/// Returns the root column indices to decode.
fn check_schema(file: &str, schema: &Schema, specs: &[Spec]) -> Result<Vec<usize>, SnapshotError> {
    let mut roots = Vec::with_capacity(specs.len());
    for spec in specs {
        let index = schema
            .index_of(spec.name)
            .map_err(|_| SnapshotError::new(file, format!("missing column `{}`", spec.name)))?;
        check_type(spec, schema.field(index).data_type())
            .map_err(|reason| SnapshotError::new(file, reason))?;
        roots.push(index);
    }
    roots.sort_unstable();
    roots.dedup();
    Ok(roots)
}

enum Data<'a> {
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a arrow_array::LargeStringArray),
    Utf8View(&'a arrow_array::StringViewArray),
    Binary(&'a arrow_array::BinaryArray),
    LargeBinary(&'a arrow_array::LargeBinaryArray),
    BinaryView(&'a arrow_array::BinaryViewArray),
    UInt64(&'a [u64]),
    Int64(&'a [i64]),
    Int32(&'a [i32]),
    /// Raw values and the divisor to milliseconds (1 for milliseconds).
    Timestamp(&'a [i64], i64),
}

/// One column of one batch, typed.
struct Column<'a> {
    name: &'static str,
    /// Rows in the batch.
    len: usize,
    /// Whether the spec lets this column hold nulls (the accessors used
    /// must agree: `opt_*` for nullable columns, the others otherwise).
    nullable: bool,
    /// The array when it holds any null (checked per row only then).
    nulls: Option<&'a dyn Array>,
    data: Data<'a>,
}

impl<'a> Column<'a> {
    fn new(batch: &'a RecordBatch, spec: &Spec) -> Result<Column<'a>, String> {
        let array = batch
            .column_by_name(spec.name)
            .ok_or_else(|| format!("missing column `{}`", spec.name))?;
        check_type(spec, array.data_type())?;
        let data = match array.data_type() {
            DataType::Utf8 => Data::Utf8(array.as_string::<i32>()),
            DataType::LargeUtf8 => Data::LargeUtf8(array.as_string::<i64>()),
            DataType::Utf8View => Data::Utf8View(array.as_string_view()),
            DataType::Binary => Data::Binary(array.as_binary::<i32>()),
            DataType::LargeBinary => Data::LargeBinary(array.as_binary::<i64>()),
            DataType::BinaryView => Data::BinaryView(array.as_binary_view()),
            DataType::UInt64 => Data::UInt64(array.as_primitive::<UInt64Type>().values()),
            DataType::Int64 => Data::Int64(array.as_primitive::<Int64Type>().values()),
            DataType::Int32 => Data::Int32(array.as_primitive::<Int32Type>().values()),
            DataType::Timestamp(unit, _) => {
                let (values, divisor): (&[i64], _) = match unit {
                    TimeUnit::Millisecond => {
                        (array.as_primitive::<TimestampMillisecondType>().values(), 1)
                    }
                    TimeUnit::Microsecond => (
                        array.as_primitive::<TimestampMicrosecondType>().values(),
                        1000,
                    ),
                    TimeUnit::Nanosecond => (
                        array.as_primitive::<TimestampNanosecondType>().values(),
                        1_000_000,
                    ),
                    TimeUnit::Second => unreachable!("seconds rejected by check_type"),
                };
                Data::Timestamp(values, divisor)
            }
            other => return Err(format!("column `{}` has type {other}", spec.name)),
        };
        Ok(Column {
            name: spec.name,
            len: array.len(),
            nullable: spec.nullable,
            nulls: (array.null_count() > 0).then_some(array.as_ref()),
            data,
        })
    }

    #[inline]
    fn is_null(&self, i: usize) -> bool {
        self.nulls.is_some_and(|a| a.is_null(i))
    }

    #[inline]
    fn required(&self, i: usize) -> Result<(), String> {
        debug_assert!(!self.nullable, "column `{}` is nullable", self.name);
        if self.is_null(i) {
            Err(format!("null in required column `{}`", self.name))
        } else {
            Ok(())
        }
    }

    /// The text at `i`, which must not be null (checked by the caller).
    #[inline]
    fn str_unchecked_null(&self, i: usize) -> &'a str {
        match &self.data {
            Data::Utf8(a) => a.value(i),
            Data::LargeUtf8(a) => a.value(i),
            Data::Utf8View(a) => a.value(i),
            _ => unreachable!("text column checked by check_type"),
        }
    }

    #[inline]
    fn text(&self, i: usize) -> Result<&'a str, String> {
        self.required(i)?;
        Ok(self.str_unchecked_null(i))
    }

    #[inline]
    fn opt_text(&self, i: usize) -> Option<&'a str> {
        debug_assert!(self.nullable, "column `{}` is required", self.name);
        (!self.is_null(i)).then(|| self.str_unchecked_null(i))
    }

    fn opt_string(&self, i: usize) -> Option<String> {
        self.opt_text(i).map(str::to_owned)
    }

    #[inline]
    fn address(&self, i: usize) -> Result<Address, String> {
        let text = self.text(i)?;
        parse_address(text)
            .ok_or_else(|| format!("malformed address {text:?} in column `{}`", self.name))
    }

    #[inline]
    fn u64(&self, i: usize) -> Result<u64, String> {
        self.required(i)?;
        match &self.data {
            Data::UInt64(v) => Ok(v[i]),
            Data::Int64(v) => u64::try_from(v[i])
                .map_err(|_| format!("negative value {} in column `{}`", v[i], self.name)),
            _ => unreachable!("integer column checked by check_type"),
        }
    }

    #[inline]
    fn token_id(&self, i: usize) -> Result<u64, String> {
        let v = self.u64(i)?;
        if v == 0 {
            return Err(format!("{} must be > 0, got 0", self.name));
        }
        Ok(v)
    }

    #[inline]
    fn i64(&self, i: usize) -> Result<i64, String> {
        self.required(i)?;
        match &self.data {
            Data::Int64(v) => Ok(v[i]),
            _ => unreachable!("Int64 column checked by check_type"),
        }
    }

    fn opt_i64(&self, i: usize) -> Option<i64> {
        debug_assert!(self.nullable, "column `{}` is required", self.name);
        match &self.data {
            Data::Int64(v) if !self.is_null(i) => Some(v[i]),
            _ => None,
        }
    }

    #[inline]
    fn i32(&self, i: usize) -> Result<i32, String> {
        self.required(i)?;
        match &self.data {
            Data::Int32(v) => Ok(v[i]),
            _ => unreachable!("Int32 column checked by check_type"),
        }
    }

    /// Epoch milliseconds, finer units floored.
    #[inline]
    fn timestamp_ms(&self, i: usize) -> Result<i64, String> {
        self.required(i)?;
        match &self.data {
            Data::Timestamp(v, d) => Ok(v[i].div_euclid(*d)),
            _ => unreachable!("timestamp column checked by check_type"),
        }
    }

    #[inline]
    fn bytes(&self, i: usize) -> Result<&'a [u8], String> {
        self.required(i)?;
        Ok(match &self.data {
            Data::Binary(a) => a.value(i),
            Data::LargeBinary(a) => a.value(i),
            Data::BinaryView(a) => a.value(i),
            _ => unreachable!("binary column checked by check_type"),
        })
    }

    /// A nullable JSON-object column, kept as stored (key order, duplicate
    /// keys, number spelling and string escapes), only minified.
    fn json_object(&self, i: usize) -> Result<Option<String>, String> {
        let Some(text) = self.opt_text(i) else {
            return Ok(None);
        };
        // Validates the whole text without building values, so nothing is
        // lost to number ranges or nesting depth.
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
            return Err(format!("column `{}` is not valid JSON: {e}", self.name));
        }
        match json_kind(text) {
            "an object" => Ok(Some(minify_json(text))),
            other => Err(format!(
                "column `{}` must be a JSON object, found {other}",
                self.name
            )),
        }
    }
}

/// Whether `text` is what a nullable JSON-object column may hold: valid
/// JSON whose value is an object (the loader's rule, shared with the
/// exporter so it never writes what the loader rejects).
pub fn is_json_object(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() && json_kind(text) == "an object"
}

/// What the valid JSON text `text` holds, from its first significant byte.
fn json_kind(text: &str) -> &'static str {
    match text.bytes().find(|b| !is_json_whitespace(*b)) {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

fn is_json_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The valid JSON text `text` without its insignificant whitespace: string
/// literals are copied byte for byte (escapes included), everything else
/// but whitespace is kept as it is.
fn minify_json(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for &b in text.as_bytes() {
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if !is_json_whitespace(b) {
            out.push(b);
            in_string = b == b'"';
        }
    }
    // Only ASCII bytes were dropped, so the text is still UTF-8.
    String::from_utf8(out).expect("removing ASCII whitespace keeps UTF-8")
}

// ---------------------------------------------------------------------------
// Reading one table

/// Reads the table file of `entry`: checksum, Parquet metadata, row count,
/// schema, then every row group in parallel through `row`.
fn read_table<R, F>(
    src: &dyn SnapshotFiles,
    entry: &TableEntry,
    specs: &[Spec],
    row: F,
) -> Result<Vec<R>, SnapshotError>
where
    R: Send,
    F: Fn(&[Column<'_>], usize) -> Result<R, String> + Sync,
{
    let file = entry.file.as_str();
    let bytes = src.read(file)?;
    let (checksum, rows) = rayon::join(
        || verify_checksum(file, entry, &TableBytes::Memory(bytes.clone())),
        || decode_table(file, &bytes, entry.rows, specs, &row),
    );
    checksum?;
    rows
}

/// Checks the file against the manifest's `sha256`, when it has one.
fn verify_checksum(
    file: &str,
    entry: &TableEntry,
    bytes: &TableBytes,
) -> Result<(), SnapshotError> {
    let Some(want) = &entry.sha256 else {
        return Ok(());
    };
    let have = bytes
        .sha256_hex()
        .map_err(|e| SnapshotError::new(file, format!("cannot read: {e}")))?;
    if want.eq_ignore_ascii_case(&have) {
        Ok(())
    } else {
        Err(SnapshotError::new(
            file,
            format!("checksum mismatch: manifest says {want}, file has {have}"),
        ))
    }
}

fn unreadable(file: &str, e: impl std::fmt::Display) -> SnapshotError {
    SnapshotError::new(file, format!("not a readable Parquet file: {e}"))
}

/// Runs a call into the parquet crate, turning a panic inside it into an
/// "unreadable" error: hostile files make parquet 60 panic instead of
/// failing (found by fuzz/snapshot_table: a dictionary-encoded data page
/// without a dictionary page panics with "Decoder for dict should have
/// been set" in `column/reader/decoder.rs`). Only parquet's own calls are
/// wrapped, so a bug in this module's row code still panics.
fn parquet_call<T>(
    file: &str,
    call: impl FnOnce() -> Result<T, SnapshotError>,
) -> Result<T, SnapshotError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(unreadable(
            file,
            format!("the Parquet decoder panicked: {message}"),
        ))
    })
}

/// A table file's validated footer: row counts, schema, projection.
struct TableMeta {
    meta: ArrowReaderMetadata,
    mask: ProjectionMask,
    group_rows: Vec<u64>,
    /// The file row number of each group's first row.
    starts: Vec<u64>,
}

/// Loads and checks the footer of `file`: row groups against the footer
/// and the manifest, then the schema against `specs`.
fn table_meta<B: ChunkReader>(
    file: &str,
    bytes: &B,
    manifest_rows: u64,
    specs: &[Spec],
) -> Result<TableMeta, SnapshotError> {
    let meta = parquet_call(file, || {
        ArrowReaderMetadata::load(bytes, ArrowReaderOptions::new()).map_err(|e| unreadable(file, e))
    })?;
    let md = meta.metadata();
    let group_rows: Vec<u64> = md
        .row_groups()
        .iter()
        .map(|g| u64::try_from(g.num_rows()).unwrap_or(u64::MAX))
        .collect();
    let total = group_rows
        .iter()
        .try_fold(0u64, |a, &n| a.checked_add(n))
        .ok_or_else(|| unreadable(file, "row group sizes overflow"))?;
    let file_rows = md.file_metadata().num_rows();
    if u64::try_from(file_rows).ok() != Some(total) {
        return Err(unreadable(
            file,
            format!("the footer says {file_rows} rows but its row groups hold {total}"),
        ));
    }
    if total != manifest_rows {
        return Err(SnapshotError::new(
            file,
            format!("row count {total} differs from the manifest's {manifest_rows}"),
        ));
    }
    if total > u64::from(u32::MAX) {
        return Err(SnapshotError::new(
            file,
            format!("{total} rows: more than {} are not supported", u32::MAX),
        ));
    }
    let roots = check_schema(file, meta.schema(), specs)?;
    let mask = ProjectionMask::roots(meta.parquet_schema(), roots);
    let mut starts = Vec::with_capacity(group_rows.len());
    let mut acc = 0u64;
    for &n in &group_rows {
        starts.push(acc);
        acc += n;
    }
    Ok(TableMeta {
        meta,
        mask,
        group_rows,
        starts,
    })
}

/// Decodes row group `group` batch by batch: `batch(first_row, columns)`
/// for each, with the file row number of the batch's first row.
fn for_each_batch<B: ChunkReader + Clone + 'static>(
    file: &str,
    bytes: &B,
    tm: &TableMeta,
    group: usize,
    specs: &[Spec],
    mut batch: impl FnMut(u64, &[Column<'_>]) -> Result<(), SnapshotError>,
) -> Result<(), SnapshotError> {
    let mut reader = parquet_call(file, || {
        ParquetRecordBatchReaderBuilder::new_with_metadata(bytes.clone(), tm.meta.clone())
            .with_row_groups(vec![group])
            .with_projection(tm.mask.clone())
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| unreadable(file, e))
    })?;
    let mut next_row = tm.starts[group];
    while let Some(decoded) = parquet_call(file, || Ok(reader.next()))? {
        let decoded = decoded.map_err(|e| unreadable(file, e))?;
        let columns = specs
            .iter()
            .map(|spec| Column::new(&decoded, spec))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|reason| SnapshotError::new(file, reason))?;
        batch(next_row, &columns)?;
        next_row += decoded.num_rows() as u64;
    }
    Ok(())
}

fn decode_table<R, F>(
    file: &str,
    bytes: &Bytes,
    manifest_rows: u64,
    specs: &[Spec],
    row: &F,
) -> Result<Vec<R>, SnapshotError>
where
    R: Send,
    F: Fn(&[Column<'_>], usize) -> Result<R, String> + Sync,
{
    let tm = table_meta(file, bytes, manifest_rows, specs)?;
    let counts: Vec<usize> = tm.group_rows.iter().map(|&n| n as usize).collect();
    let (rows, _) = fill_parallel(file, &counts, true, |group, sink| {
        for_each_batch(file, bytes, &tm, group, specs, |first_row, columns| {
            let n = columns.first().map_or(0, |c| c.len);
            for i in 0..n {
                let value = row(columns, i)
                    .map_err(|r| SnapshotError::at_row(file, first_row + i as u64, r))?;
                if !sink.push(value) {
                    return Err(unreadable(
                        file,
                        format!("row group {group} holds more rows than its metadata says"),
                    ));
                }
            }
            Ok(())
        })
    })?;
    Ok(rows)
}

/// Streams the table file of `entry` through `row`, row groups in
/// parallel: checksum (alongside), footer, schema, then every row, in
/// file order within each group. `row` sees each group's own `X` (made by
/// `init`) and returns the item to keep, if any; the kept items come back
/// in file order with the groups' `X`s. Nothing else of a row outlives
/// its decoded batch. `finish` sees each group's kept items once its rows
/// are done (to complete them in one batch, e.g. resolve addresses).
fn scan_table<T, X, F>(
    src: &dyn SnapshotFiles,
    entry: &TableEntry,
    specs: &[Spec],
    init: impl Fn() -> X + Sync,
    row: F,
    finish: impl Fn(&mut X, &mut [T]) + Sync,
) -> Result<(Vec<T>, Vec<X>), SnapshotError>
where
    T: Send,
    X: Send,
    F: Fn(&mut X, &[Column<'_>], usize) -> Result<Option<T>, String> + Sync,
{
    let file = entry.file.as_str();
    let bytes = src.open(file)?;
    let (checksum, scanned) = rayon::join(
        || verify_checksum(file, entry, &bytes),
        || {
            let tm = table_meta(file, &bytes, entry.rows, specs)?;
            let counts: Vec<usize> = tm.group_rows.iter().map(|&n| n as usize).collect();
            fill_parallel(file, &counts, false, |group, sink| {
                let mut x = init();
                let mut seen = 0usize;
                for_each_batch(file, &bytes, &tm, group, specs, |first_row, columns| {
                    let n = columns.first().map_or(0, |c| c.len);
                    seen += n;
                    if seen > counts[group] {
                        return Err(unreadable(
                            file,
                            format!("row group {group} holds more rows than its metadata says"),
                        ));
                    }
                    for i in 0..n {
                        let kept = row(&mut x, columns, i)
                            .map_err(|r| SnapshotError::at_row(file, first_row + i as u64, r))?;
                        if let Some(item) = kept {
                            // Never fails: at most one item per row.
                            sink.push(item);
                        }
                    }
                    Ok(())
                })?;
                if seen != counts[group] {
                    return Err(unreadable(
                        file,
                        format!(
                            "row group {group} holds {seen} rows, its metadata says {}",
                            counts[group]
                        ),
                    ));
                }
                finish(&mut x, sink.filled_mut());
                Ok(x)
            })
        },
    );
    checksum?;
    scanned
}

/// A producer's disjoint window of the output vector's spare capacity.
struct Sink<'a, R> {
    slots: &'a mut [MaybeUninit<R>],
    len: usize,
}

impl<R> Sink<'_, R> {
    /// The values pushed so far.
    fn filled_mut(&mut self) -> &mut [R] {
        let filled = &mut self.slots[..self.len];
        // SAFETY: `push` initialised the first `len` slots, and
        // `MaybeUninit<R>` has the layout of `R`.
        unsafe { &mut *(filled as *mut [MaybeUninit<R>] as *mut [R]) }
    }

    #[inline]
    fn push(&mut self, value: R) -> bool {
        match self.slots.get_mut(self.len) {
            Some(slot) => {
                slot.write(value);
                self.len += 1;
                true
            }
            None => false,
        }
    }
}

/// Runs `produce(g, sink)` for every group in parallel, group `g` filling
/// `counts[g]` slots of one vector, in group order: all of them when
/// `exact`, else at most that many (the vector is then closed up in place).
/// Avoids building per-group vectors and concatenating them (tables run
/// to tens of millions of rows). Returns the groups' results in order; the
/// first error in group order wins.
fn fill_parallel<R, X, P>(
    file: &str,
    counts: &[usize],
    exact: bool,
    produce: P,
) -> Result<(Vec<R>, Vec<X>), SnapshotError>
where
    R: Send,
    X: Send,
    P: Fn(usize, &mut Sink<'_, R>) -> Result<X, SnapshotError> + Sync,
{
    let total: usize = counts.iter().sum();
    let mut out: Vec<R> = Vec::new();
    out.try_reserve_exact(total)
        .map_err(|e| SnapshotError::new(file, format!("cannot allocate {total} rows: {e}")))?;
    let results: Vec<(Result<X, SnapshotError>, usize)> = {
        let mut rest = &mut out.spare_capacity_mut()[..total];
        let mut sinks = Vec::with_capacity(counts.len());
        for &n in counts {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
            sinks.push(Sink {
                slots: head,
                len: 0,
            });
            rest = tail;
        }
        sinks
            .into_par_iter()
            .enumerate()
            .map(|(group, mut sink)| {
                let mut result = produce(group, &mut sink);
                if exact && result.is_ok() && sink.len != sink.slots.len() {
                    result = Err(unreadable(
                        file,
                        format!(
                            "row group {group} holds {} rows, its metadata says {}",
                            sink.len,
                            sink.slots.len()
                        ),
                    ));
                }
                (result, sink.len)
            })
            .collect()
    };
    let base = out.as_mut_ptr();
    if results.iter().all(|(r, _)| r.is_ok()) {
        let mut len = 0;
        let mut start = 0;
        for ((_, written), &n) in results.iter().zip(counts) {
            // SAFETY: group g initialised its first `written` slots from
            // `start`; `len <= start`, so the move closes the gap before
            // them (`copy` allows the overlap), and each value is moved once.
            unsafe { std::ptr::copy(base.add(start), base.add(len), *written) };
            len += written;
            start += n;
        }
        // SAFETY: the first `len` slots now hold the groups' values.
        unsafe { out.set_len(len) };
        if len < total {
            out.shrink_to_fit();
        }
        let extras = results
            .into_iter()
            .map(|(r, _)| r.ok())
            .collect::<Option<Vec<X>>>();
        return Ok((out, extras.expect("every group succeeded")));
    }
    let mut start = 0;
    for ((_, written), &n) in results.iter().zip(counts) {
        // SAFETY: group g initialised exactly its first `written` slots,
        // starting at `start`; `out`'s length stays 0, so they are dropped
        // here once and never again.
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(
                base.add(start),
                *written,
            ));
        }
        start += n;
    }
    let first_error = results.into_iter().find_map(|(r, _)| r.err());
    Err(first_error.expect("some group failed"))
}

// ---------------------------------------------------------------------------
// Uniqueness

/// FxHash-style word mixing with a final avalanche (only the top 32 bits
/// are used).
#[derive(Clone, Copy)]
struct Mix(u64);

impl Mix {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    fn new() -> Self {
        Mix(0)
    }

    #[inline]
    fn word(self, w: u64) -> Self {
        Mix((self.0.rotate_left(5) ^ w).wrapping_mul(Self::K))
    }

    #[inline]
    fn bytes(mut self, b: &[u8]) -> Self {
        let mut chunks = b.chunks_exact(8);
        for c in &mut chunks {
            self = self.word(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.word(u64::from_le_bytes(tail)).word(b.len() as u64)
    }

    #[inline]
    fn address(self, a: &Address) -> Self {
        self.bytes(a)
    }

    #[inline]
    fn finish(self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// Rows per hash bucket `first_duplicate` aims at (a bucket's words then
/// sort inside the L1/L2 cache).
const BUCKET_ROWS: usize = 2048;

/// The earliest row whose key equals an earlier row's key, as
/// `(first, duplicate)`, or `None` when all keys are distinct.
///
/// Each row's 64-bit key hash is split: its top bits pick a bucket, its
/// next 32 bits are packed with the row number into one word. One
/// counting pass scatters the words into their buckets (rows ascending in
/// each), then every bucket is sorted and scanned on its own, in parallel;
/// rows are compared (`eq`) only where hashes collide. No per-row
/// allocation, and no global sort.
pub(super) fn first_duplicate<T, H, E>(items: &[T], hash: H, eq: E) -> Option<(usize, usize)>
where
    T: Sync,
    H: Fn(&T) -> u64 + Sync,
    E: Fn(&T, &T) -> bool + Sync,
{
    let n = items.len();
    if n < 2 {
        return None;
    }
    assert!(n <= u32::MAX as usize, "row numbers are packed in 32 bits");
    let bucket_bits = (usize::BITS - (n / BUCKET_ROWS).leading_zeros()).min(24);
    let buckets = 1usize << bucket_bits;
    let bucket_of = |h: u64| {
        if bucket_bits == 0 {
            0
        } else {
            (h >> (64 - bucket_bits)) as usize
        }
    };
    let hashes: Vec<u64> = items.par_iter().map(&hash).collect();
    let mut starts = vec![0usize; buckets + 1];
    for &h in &hashes {
        starts[bucket_of(h) + 1] += 1;
    }
    for b in 0..buckets {
        starts[b + 1] += starts[b];
    }
    let mut words = vec![0u64; n];
    let mut next = starts[..buckets].to_vec();
    for (row, &h) in hashes.iter().enumerate() {
        let b = bucket_of(h);
        words[next[b]] = ((h << bucket_bits) >> 32 << 32) | row as u64;
        next[b] += 1;
    }
    drop(hashes);
    let mut slices = Vec::with_capacity(buckets);
    let mut rest = words.as_mut_slice();
    for b in 0..buckets {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(starts[b + 1] - starts[b]);
        slices.push(head);
        rest = tail;
    }
    slices
        .into_par_iter()
        .with_min_len(16)
        .filter_map(|bucket| {
            bucket.sort_unstable();
            first_duplicate_in_bucket(bucket, items, &eq)
        })
        .min_by_key(|&(_, dup)| dup)
}

/// The earliest duplicate among sorted `(hash32, row32)` words.
fn first_duplicate_in_bucket<T>(
    words: &[u64],
    items: &[T],
    eq: &impl Fn(&T, &T) -> bool,
) -> Option<(usize, usize)> {
    let row = |w: u64| (w & 0xffff_ffff) as usize;
    let mut best: Option<(usize, usize)> = None;
    let mut start = 0;
    while start < words.len() {
        let h = words[start] >> 32;
        let mut end = start + 1;
        while end < words.len() && words[end] >> 32 == h {
            end += 1;
        }
        // Within a run rows ascend: the first j equal to an earlier i is
        // the run's earliest duplicate.
        'run: for j in start + 1..end {
            let rj = row(words[j]);
            if best.is_some_and(|(_, b)| rj >= b) {
                break;
            }
            for &w in &words[start..j] {
                let ri = row(w);
                if eq(&items[ri], &items[rj]) {
                    best = Some((ri, rj));
                    break 'run;
                }
            }
        }
        start = end;
    }
    best
}

/// Applies `first_duplicate` and turns a hit into the error for the later
/// row.
fn unique<T, H, E, D>(
    file: &str,
    items: &[T],
    hash: H,
    eq: E,
    describe: D,
) -> Result<(), SnapshotError>
where
    T: Sync,
    H: Fn(&T) -> u64 + Sync,
    E: Fn(&T, &T) -> bool + Sync,
    D: Fn(&T) -> String,
{
    match first_duplicate(items, hash, eq) {
        None => Ok(()),
        Some((first, dup)) => Err(SnapshotError::at_row(
            file,
            dup as u64,
            format!("duplicate {}, first at row {first}", describe(&items[dup])),
        )),
    }
}

// ---------------------------------------------------------------------------
// The eight tables

fn read_lists(dir: &dyn SnapshotFiles, e: &TableEntry) -> Result<Vec<ListRow>, SnapshotError> {
    const SPECS: [Spec; 4] = [
        req("token_id", Kind::TokenId),
        req("user", Kind::Address),
        req("owner", Kind::Address),
        req("manager", Kind::Address),
    ];
    let rows = read_table(dir, e, &SPECS, |c, i| {
        Ok(ListRow {
            token_id: c[0].token_id(i)?,
            user: c[1].address(i)?,
            owner: c[2].address(i)?,
            manager: c[3].address(i)?,
        })
    })?;
    unique(
        &e.file,
        &rows,
        |r| Mix::new().word(r.token_id).finish(),
        |a, b| a.token_id == b.token_id,
        |r| format!("token_id {}", r.token_id),
    )?;
    Ok(rows)
}

fn read_primary_lists(
    dir: &dyn SnapshotFiles,
    e: &TableEntry,
) -> Result<Vec<PrimaryListRow>, SnapshotError> {
    const SPECS: [Spec; 2] = [
        req("address", Kind::Address),
        req("token_id", Kind::TokenId),
    ];
    let rows = read_table(dir, e, &SPECS, |c, i| {
        Ok(PrimaryListRow {
            address: c[0].address(i)?,
            token_id: c[1].token_id(i)?,
        })
    })?;
    unique(
        &e.file,
        &rows,
        |r| Mix::new().address(&r.address).finish(),
        |a, b| a.address == b.address,
        |r| format!("address {}", format_address(&r.address)),
    )?;
    Ok(rows)
}

const RECORD_SPECS: [Spec; 3] = [
    req("token_id", Kind::TokenId),
    req("address", Kind::Address),
    req("updated_at", Kind::Timestamp),
];

/// One validated `list_records` row (it owns nothing: the streaming
/// loader and the row reader take the same struct).
fn record_in(c: &[Column<'_>], i: usize) -> Result<RecordRow, String> {
    Ok(RecordRow {
        token_id: c[0].token_id(i)?,
        address: c[1].address(i)?,
        updated_at: c[2].timestamp_ms(i)?,
    })
}

const TAG_SPECS: [Spec; 4] = [
    req("token_id", Kind::TokenId),
    req("address", Kind::Address),
    req("tag", Kind::Text),
    req("updated_at", Kind::Timestamp),
];

/// One validated `list_record_tags` row, the tag borrowed from its batch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TagIn<'a> {
    pub token_id: u64,
    pub address: Address,
    pub tag: &'a str,
    pub updated_at: i64,
}

fn tag_in<'a>(c: &[Column<'a>], i: usize) -> Result<TagIn<'a>, String> {
    let token_id = c[0].token_id(i)?;
    let address = c[1].address(i)?;
    let tag = c[2].text(i)?;
    if tag.is_empty() {
        return Err(format!("tag is empty (must be 1 to {MAX_TAG_BYTES} bytes)"));
    }
    if tag.len() > MAX_TAG_BYTES {
        return Err(format!(
            "tag is {} bytes, longer than {MAX_TAG_BYTES}",
            tag.len()
        ));
    }
    Ok(TagIn {
        token_id,
        address,
        tag,
        updated_at: c[3].timestamp_ms(i)?,
    })
}

const OP_SPECS: [Spec; 4] = [
    req("token_id", Kind::TokenId),
    req("seq", Kind::Seq),
    req("op", Kind::Op),
    req("updated_at", Kind::Timestamp),
];

/// One validated `list_ops` row, its op parsed, the tag borrowed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpIn<'a> {
    pub token_id: u64,
    pub seq: u64,
    pub opcode: u8,
    pub target: Address,
    /// "" for follow and un-follow.
    pub tag: &'a str,
    pub updated_at: i64,
}

fn op_in<'a>(c: &[Column<'a>], i: usize) -> Result<OpIn<'a>, String> {
    let token_id = c[0].token_id(i)?;
    let seq = c[1].u64(i)?;
    let (opcode, target, tag) =
        Op::parse(c[2].bytes(i)?).map_err(|reason| format!("malformed op: {reason}"))?;
    Ok(OpIn {
        token_id,
        seq,
        opcode,
        target,
        tag,
        updated_at: c[3].timestamp_ms(i)?,
    })
}

/// The items `keep` makes of a table's rows, per table for the streaming
/// loader (see [`scan_table`]). Every per-row rule is checked as the row
/// readers check it; rules across rows (uniqueness) are the caller's.
pub(crate) fn scan_list_records<T: Send, X: Send>(
    src: &dyn SnapshotFiles,
    entry: &TableEntry,
    init: impl Fn() -> X + Sync,
    keep: impl Fn(&mut X, RecordRow) -> Option<T> + Sync,
    finish: impl Fn(&mut X, &mut [T]) + Sync,
) -> Result<(Vec<T>, Vec<X>), SnapshotError> {
    scan_table(
        src,
        entry,
        &RECORD_SPECS,
        init,
        |x, c, i| Ok(keep(x, record_in(c, i)?)),
        finish,
    )
}

pub(crate) fn scan_list_record_tags<T: Send, X: Send>(
    src: &dyn SnapshotFiles,
    entry: &TableEntry,
    init: impl Fn() -> X + Sync,
    keep: impl Fn(&mut X, TagIn<'_>) -> Option<T> + Sync,
    finish: impl Fn(&mut X, &mut [T]) + Sync,
) -> Result<(Vec<T>, Vec<X>), SnapshotError> {
    scan_table(
        src,
        entry,
        &TAG_SPECS,
        init,
        |x, c, i| Ok(keep(x, tag_in(c, i)?)),
        finish,
    )
}

pub(crate) fn scan_list_ops<T: Send, X: Send>(
    src: &dyn SnapshotFiles,
    entry: &TableEntry,
    init: impl Fn() -> X + Sync,
    keep: impl Fn(&mut X, OpIn<'_>) -> Option<T> + Sync,
    finish: impl Fn(&mut X, &mut [T]) + Sync,
) -> Result<(Vec<T>, Vec<X>), SnapshotError> {
    scan_table(
        src,
        entry,
        &OP_SPECS,
        init,
        |x, c, i| Ok(keep(x, op_in(c, i)?)),
        finish,
    )
}

fn read_list_records(
    dir: &dyn SnapshotFiles,
    e: &TableEntry,
) -> Result<Vec<RecordRow>, SnapshotError> {
    let rows = read_table(dir, e, &RECORD_SPECS, record_in)?;
    unique(
        &e.file,
        &rows,
        |r| Mix::new().word(r.token_id).address(&r.address).finish(),
        |a, b| a.token_id == b.token_id && a.address == b.address,
        |r| {
            format!(
                "(token_id, address) ({}, {})",
                r.token_id,
                format_address(&r.address)
            )
        },
    )?;
    Ok(rows)
}

fn read_list_record_tags(
    dir: &dyn SnapshotFiles,
    e: &TableEntry,
) -> Result<Vec<TagRow>, SnapshotError> {
    let rows = read_table(dir, e, &TAG_SPECS, |c, i| {
        let t = tag_in(c, i)?;
        Ok(TagRow {
            token_id: t.token_id,
            address: t.address,
            tag: t.tag.to_owned(),
            updated_at: t.updated_at,
        })
    })?;
    unique(
        &e.file,
        &rows,
        |r| {
            Mix::new()
                .word(r.token_id)
                .address(&r.address)
                .bytes(r.tag.as_bytes())
                .finish()
        },
        |a, b| a.token_id == b.token_id && a.address == b.address && a.tag == b.tag,
        |r| {
            format!(
                "(token_id, address, tag) ({}, {}, {:?})",
                r.token_id,
                format_address(&r.address),
                r.tag
            )
        },
    )?;
    Ok(rows)
}

fn read_list_ops(dir: &dyn SnapshotFiles, e: &TableEntry) -> Result<Vec<OpRow>, SnapshotError> {
    let rows = read_table(dir, e, &OP_SPECS, |c, i| {
        let o = op_in(c, i)?;
        Ok(OpRow {
            token_id: o.token_id,
            seq: o.seq,
            op: Op {
                opcode: o.opcode,
                target: o.target,
                tag: o.tag.to_owned(),
            },
            updated_at: o.updated_at,
        })
    })?;
    // Producers write ops in seq order: strictly increasing seqs are unique
    // without a sort.
    if !rows.par_windows(2).all(|w| w[0].seq < w[1].seq) {
        unique(
            &e.file,
            &rows,
            |r| Mix::new().word(r.seq).finish(),
            |a, b| a.seq == b.seq,
            |r| format!("seq {}", r.seq),
        )?;
    }
    Ok(rows)
}

fn read_ens(dir: &dyn SnapshotFiles, e: &TableEntry) -> Result<Vec<EnsRow>, SnapshotError> {
    const SPECS: [Spec; 10] = [
        req("address", Kind::Address),
        req("name", Kind::Text),
        opt("avatar", Kind::Text),
        opt("header", Kind::Text),
        opt("display", Kind::Text),
        opt("records", Kind::Text),
        opt("chains", Kind::Text),
        opt("fresh", Kind::Int64),
        opt("resolver", Kind::Text),
        opt("errors", Kind::Text),
    ];
    let rows = read_table(dir, e, &SPECS, |c, i| {
        Ok(EnsRow {
            address: c[0].address(i)?,
            name: c[1].text(i)?.to_owned(),
            avatar: c[2].opt_string(i),
            header: c[3].opt_string(i),
            display: c[4].opt_string(i),
            records: c[5].json_object(i)?,
            chains: c[6].json_object(i)?,
            fresh: c[7].opt_i64(i),
            resolver: c[8].opt_string(i),
            errors: c[9].json_object(i)?,
        })
    })?;
    unique(
        &e.file,
        &rows,
        |r| Mix::new().address(&r.address).finish(),
        |a, b| a.address == b.address,
        |r| format!("address {}", format_address(&r.address)),
    )?;
    let folded: Vec<Cow<'_, str>> = rows.par_iter().map(|r| fold_case(&r.name)).collect();
    if let Some((first, dup)) = first_duplicate(
        &folded,
        |n| Mix::new().bytes(n.as_bytes()).finish(),
        |a, b| a == b,
    ) {
        return Err(SnapshotError::at_row(
            &e.file,
            dup as u64,
            format!(
                "duplicate name {:?} (names are unique case-insensitively), first at row {first} ({:?})",
                rows[dup].name, rows[first].name
            ),
        ));
    }
    Ok(rows)
}

/// Unicode lower case, borrowing when there is nothing to change: the
/// case folding of the `ens` name uniqueness rule.
pub fn fold_case(name: &str) -> Cow<'_, str> {
    if name
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
    {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(name.to_lowercase())
    }
}

fn read_badge_events(
    dir: &dyn SnapshotFiles,
    e: &TableEntry,
) -> Result<Vec<BadgeEventRow>, SnapshotError> {
    const SPECS: [Spec; 13] = [
        req("event_id", Kind::Int64),
        req("position", Kind::Int32),
        req("fancy_id", Kind::Text),
        req("name", Kind::Text),
        req("event_url", Kind::Text),
        req("image_url", Kind::Text),
        req("country", Kind::Text),
        req("city", Kind::Text),
        req("description", Kind::Text),
        req("year", Kind::Int32),
        req("start_date", Kind::Text),
        req("end_date", Kind::Text),
        req("expiry_date", Kind::Text),
    ];
    let rows = read_table(dir, e, &SPECS, |c, i| {
        Ok(BadgeEventRow {
            event_id: c[0].i64(i)?,
            position: c[1].i32(i)?,
            fancy_id: c[2].text(i)?.to_owned(),
            name: c[3].text(i)?.to_owned(),
            event_url: c[4].text(i)?.to_owned(),
            image_url: c[5].text(i)?.to_owned(),
            country: c[6].text(i)?.to_owned(),
            city: c[7].text(i)?.to_owned(),
            description: c[8].text(i)?.to_owned(),
            year: c[9].i32(i)?,
            start_date: c[10].text(i)?.to_owned(),
            end_date: c[11].text(i)?.to_owned(),
            expiry_date: c[12].text(i)?.to_owned(),
        })
    })?;
    unique(
        &e.file,
        &rows,
        |r| Mix::new().word(r.event_id as u64).finish(),
        |a, b| a.event_id == b.event_id,
        |r| format!("event_id {}", r.event_id),
    )?;
    unique(
        &e.file,
        &rows,
        |r| Mix::new().word(r.position as u64).finish(),
        |a, b| a.position == b.position,
        |r| format!("position {}", r.position),
    )?;
    Ok(rows)
}

fn read_badges(dir: &dyn SnapshotFiles, e: &TableEntry) -> Result<Vec<BadgeRow>, SnapshotError> {
    const SPECS: [Spec; 4] = [
        req("address", Kind::Address),
        req("event_id", Kind::Int64),
        req("token_id", Kind::Text),
        req("owner", Kind::Text),
    ];
    let rows = read_table(dir, e, &SPECS, |c, i| {
        Ok(BadgeRow {
            address: c[0].address(i)?,
            event_id: c[1].i64(i)?,
            token_id: c[2].text(i)?.to_owned(),
            owner: c[3].text(i)?.to_owned(),
        })
    })?;
    unique(
        &e.file,
        &rows,
        |r| {
            Mix::new()
                .address(&r.address)
                .word(r.event_id as u64)
                .finish()
        },
        |a, b| a.address == b.address && a.event_id == b.event_id,
        |r| {
            format!(
                "(address, event_id) ({}, {})",
                format_address(&r.address),
                r.event_id
            )
        },
    )?;
    Ok(rows)
}
