//! `Tables` -> a snapshot directory (Parquet files + manifest.json), whole
//! ([`write_snapshot`], [`memory_files`]) or one table streamed batch by
//! batch ([`TableFileWriter`]); and `CURRENT` replaced atomically.
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray,
    UInt64Array,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::schema::{expect_table, Table};
use super::tables::{Address, BadgeEventRow, EnsRow, RecommendedRow, Tables};
use super::{Manifest, MemoryFiles, TableEntry, FORMAT_V1};

#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// Rows per Parquet row group.
    pub row_group_rows: usize,
    /// Record each file's sha256 in the manifest.
    pub checksums: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            row_group_rows: 1 << 20,
            checksums: true,
        }
    }
}

/// Writes `tables` as a complete snapshot directory `dir` (created if
/// missing) with a manifest whose `created_at` is `created_at_ms`.
///
/// The Parquet files (every table, `recommended` too) are written in parallel on the current rayon
/// pool; `manifest.json` is written last (temp file + rename), so a
/// directory whose writing was interrupted has no manifest.
pub fn write_snapshot(
    dir: &Path,
    created_at_ms: i64,
    tables: &Tables,
    opts: &WriteOptions,
) -> std::io::Result<()> {
    start_snapshot_dir(dir)?;
    let row_group_rows = opts.row_group_rows.max(1);
    let written: Vec<std::io::Result<(String, TableEntry)>> = Table::ALL
        .par_iter()
        .map(|&table| {
            let file = table.file_name().to_owned();
            let (rows, sha256) = write_table_file(
                &dir.join(&file),
                table,
                tables,
                row_group_rows,
                opts.checksums,
            )?;
            Ok((table.name().to_owned(), TableEntry { file, rows, sha256 }))
        })
        .collect();
    let mut entries = BTreeMap::new();
    for result in written {
        let (name, entry) = result?;
        entries.insert(name, entry);
    }
    write_manifest(dir, created_at_ms, entries, None)
}

/// Creates `dir` if missing and removes its manifest, if any: the
/// directory is not a snapshot until [`write_manifest`] ends its writing.
pub fn start_snapshot_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    match std::fs::remove_file(dir.join("manifest.json")) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Writes `dir/manifest.json` for the table files `entries`, with the
/// export's anchor when there is one (temp file + rename, so an
/// interrupted write leaves no manifest).
pub fn write_manifest(
    dir: &Path,
    created_at_ms: i64,
    entries: BTreeMap<String, TableEntry>,
    anchor: Option<&super::Anchor>,
) -> std::io::Result<()> {
    let manifest = Manifest {
        format: FORMAT_V1.to_owned(),
        created_at: crate::time::format_iso_ms(created_at_ms),
        tables: entries,
        source: anchor.map(super::Anchor::to_json),
    };
    let mut text = serde_json::to_string_pretty(&manifest).map_err(std::io::Error::other)?;
    text.push('\n');
    let tmp = dir.join(format!(".manifest.json.{}.tmp", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, dir.join("manifest.json"))
}

/// Rows per row group of [`memory_files`].
const MEMORY_ROW_GROUP: usize = 1 << 18;

/// The snapshot of `tables` as in-memory files (no checksums, no
/// compression, row groups of at most [`MEMORY_ROW_GROUP`] rows so the
/// loader decodes a large table on every core): how tables built in code,
/// and the tail's compactions, reach the loader. Tables are encoded in
/// parallel.
pub fn memory_files(created_at_ms: i64, tables: &Tables) -> std::io::Result<MemoryFiles> {
    let props = WriterProperties::builder()
        .set_compression(Compression::UNCOMPRESSED)
        .set_max_row_group_row_count(Some(MEMORY_ROW_GROUP))
        .build();
    let encoded: Vec<(Table, Vec<u8>, u64)> = Table::ALL
        .par_iter()
        .map(|&table| {
            let batch = table_batch(table, tables);
            let mut bytes = Vec::new();
            let mut writer = ArrowWriter::try_new(&mut bytes, batch.schema(), Some(props.clone()))
                .map_err(std::io::Error::other)?;
            writer.write(&batch).map_err(std::io::Error::other)?;
            writer.close().map_err(std::io::Error::other)?;
            Ok((table, bytes, batch.num_rows() as u64))
        })
        .collect::<std::io::Result<_>>()?;
    let mut files = std::collections::HashMap::new();
    let mut entries = BTreeMap::new();
    for (table, bytes, rows) in encoded {
        let file = table.file_name().to_owned();
        files.insert(file.clone(), bytes::Bytes::from(bytes));
        entries.insert(
            table.name().to_owned(),
            TableEntry {
                file,
                rows,
                sha256: None,
            },
        );
    }
    let manifest = Manifest {
        format: FORMAT_V1.to_owned(),
        created_at: crate::time::format_iso_ms(created_at_ms),
        tables: entries,
        source: None,
    };
    let text = serde_json::to_vec(&manifest).map_err(std::io::Error::other)?;
    files.insert("manifest.json".to_owned(), bytes::Bytes::from(text));
    Ok(MemoryFiles(files))
}

/// Points `root/CURRENT` at snapshot `name` atomically and durably: temp
/// file, fsync, rename over `CURRENT`, fsync of the root directory.
pub fn publish(root: &Path, name: &str) -> std::io::Result<()> {
    let tmp = root.join(format!(".CURRENT.{}.tmp", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(format!("{name}\n").as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, root.join("CURRENT"))?;
    sync_dir(root)
}

/// fsync of a directory, so a rename inside it survives a crash.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// Writes one record batch as a Parquet file (snappy), whatever its schema.
/// Low-level: lets tests write deliberately broken tables.
pub fn write_batch_file(path: &Path, batch: &RecordBatch) -> std::io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(writer_properties(None)))
        .map_err(std::io::Error::other)?;
    writer.write(batch).map_err(std::io::Error::other)?;
    writer.close().map_err(std::io::Error::other)?;
    Ok(())
}

fn writer_properties(row_group_rows: Option<usize>) -> WriterProperties {
    let mut props = WriterProperties::builder().set_compression(Compression::SNAPPY);
    if let Some(rows) = row_group_rows {
        props = props.set_max_row_group_row_count(Some(rows.max(1)));
    }
    props.build()
}

/// A `Write` that hashes what passes through it when asked to.
struct HashingWriter<W> {
    inner: W,
    hasher: Option<Sha256>,
    bytes: u64,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        if let Some(h) = &mut self.hasher {
            h.update(&buf[..n]);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Writes `table` to `path` in row groups of `row_group_rows`,
/// building the Arrow arrays one row group at a time. Returns the row
/// count and, when asked, the sha256 hex of the file.
fn write_table_file(
    path: &Path,
    table: Table,
    tables: &Tables,
    row_group_rows: usize,
    checksum: bool,
) -> std::io::Result<(u64, Option<String>)> {
    let mut writer = TableFileWriter::create(path, table, row_group_rows, checksum)?;
    let total = table_len(table, tables);
    let mut start = 0;
    while start < total {
        let end = (start + row_group_rows).min(total);
        writer.write_batch(&table_batch_range(table, tables, start..end))?;
        writer.end_row_group()?;
        start = end;
    }
    let written = writer.finish()?;
    Ok((written.rows, written.sha256))
}

/// What [`TableFileWriter::finish`] reports.
#[derive(Clone, Debug)]
pub struct WrittenTable {
    pub rows: u64,
    pub sha256: Option<String>,
    pub bytes: u64,
}

/// One table's Parquet file written incrementally, batch by batch, with the
/// writer's schema for that table: what a streaming producer (the
/// exporter) uses so that no table is ever whole in memory.
pub struct TableFileWriter {
    writer: ArrowWriter<HashingWriter<std::fs::File>>,
    table: Table,
    rows: u64,
}

impl TableFileWriter {
    /// Creates `path` for `table` (a [`Table`], or its name); row groups
    /// close every `row_group_rows` rows.
    ///
    /// # Panics
    /// When `table` is a name that is not one of the snapshot tables.
    pub fn create<T>(
        path: &Path,
        table: T,
        row_group_rows: usize,
        checksum: bool,
    ) -> std::io::Result<TableFileWriter>
    where
        T: TryInto<Table, Error: std::fmt::Display>,
    {
        let table = expect_table(table);
        let file = std::fs::File::create(path)?;
        let sink = HashingWriter {
            inner: file,
            hasher: checksum.then(Sha256::new),
            bytes: 0,
        };
        let writer = ArrowWriter::try_new(
            sink,
            table.schema(),
            Some(writer_properties(Some(row_group_rows))),
        )
        .map_err(std::io::Error::other)?;
        Ok(TableFileWriter {
            writer,
            table,
            rows: 0,
        })
    }

    /// Appends every row of this writer's table in `chunk` (the other
    /// tables of `chunk` are ignored).
    pub fn write_rows(&mut self, chunk: &Tables) -> std::io::Result<()> {
        let batch = table_batch(self.table, chunk);
        self.write_batch(&batch)
    }

    fn write_batch(&mut self, batch: &RecordBatch) -> std::io::Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.rows += batch.num_rows() as u64;
        self.writer.write(batch).map_err(std::io::Error::other)
    }

    /// Closes the current row group early.
    fn end_row_group(&mut self) -> std::io::Result<()> {
        self.writer.flush().map_err(std::io::Error::other)
    }

    /// Writes the footer, fsyncs the file and reports what was written.
    pub fn finish(self) -> std::io::Result<WrittenTable> {
        let rows = self.rows;
        let sink = self.writer.into_inner().map_err(std::io::Error::other)?;
        sink.inner.sync_all()?;
        Ok(WrittenTable {
            rows,
            sha256: sink.hasher.map(|h| faster_hex::hex_string(&h.finalize())),
            bytes: sink.bytes,
        })
    }
}

fn table_len(table: Table, t: &Tables) -> usize {
    match table {
        Table::Lists => t.lists.len(),
        Table::PrimaryLists => t.primary_lists.len(),
        Table::ListRecords => t.list_records.len(),
        Table::ListRecordTags => t.list_record_tags.len(),
        Table::ListOps => t.list_ops.len(),
        Table::Ens => t.ens.len(),
        Table::BadgeEvents => t.badge_events.len(),
        Table::Badges => t.badges.len(),
        Table::Recommended => t.recommended.len(),
    }
}

/// All rows of `table` (a [`Table`], or its name: tests build broken files
/// from a table's batch) as one record batch with the writer's schema.
///
/// # Panics
/// When `table` is a name that is not one of the snapshot tables.
pub fn table_batch<T>(table: T, tables: &Tables) -> RecordBatch
where
    T: TryInto<Table, Error: std::fmt::Display>,
{
    let table = expect_table(table);
    table_batch_range(table, tables, 0..table_len(table, tables))
}

/// Rows `range` of `table`, in the column order of [`Table::columns`].
fn table_batch_range(table: Table, t: &Tables, range: std::ops::Range<usize>) -> RecordBatch {
    let columns: Vec<ArrayRef> = match table {
        Table::Lists => {
            let rows = &t.lists[range];
            vec![
                Arc::new(UInt64Array::from_iter_values(
                    rows.iter().map(|r| r.token_id),
                )),
                addresses(rows.iter().map(|r| &r.user)),
                addresses(rows.iter().map(|r| &r.owner)),
                addresses(rows.iter().map(|r| &r.manager)),
            ]
        }
        Table::PrimaryLists => {
            let rows = &t.primary_lists[range];
            vec![
                addresses(rows.iter().map(|r| &r.address)),
                Arc::new(UInt64Array::from_iter_values(
                    rows.iter().map(|r| r.token_id),
                )),
            ]
        }
        Table::ListRecords => {
            let rows = &t.list_records[range];
            vec![
                Arc::new(UInt64Array::from_iter_values(
                    rows.iter().map(|r| r.token_id),
                )),
                addresses(rows.iter().map(|r| &r.address)),
                timestamps(rows.iter().map(|r| r.updated_at)),
            ]
        }
        Table::ListRecordTags => {
            let rows = &t.list_record_tags[range];
            vec![
                Arc::new(UInt64Array::from_iter_values(
                    rows.iter().map(|r| r.token_id),
                )),
                addresses(rows.iter().map(|r| &r.address)),
                texts(rows.iter().map(|r| r.tag.as_str())),
                timestamps(rows.iter().map(|r| r.updated_at)),
            ]
        }
        Table::ListOps => {
            let rows = &t.list_ops[range];
            let mut ops = BinaryBuilder::with_capacity(rows.len(), rows.len() * 25);
            for r in rows {
                ops.append_value(r.op.encode());
            }
            vec![
                Arc::new(UInt64Array::from_iter_values(
                    rows.iter().map(|r| r.token_id),
                )),
                Arc::new(UInt64Array::from_iter_values(rows.iter().map(|r| r.seq))),
                Arc::new(ops.finish()),
                timestamps(rows.iter().map(|r| r.updated_at)),
            ]
        }
        Table::Ens => {
            let rows = &t.ens[range];
            let opt = |f: fn(&EnsRow) -> &Option<String>| -> ArrayRef {
                Arc::new(StringArray::from_iter(rows.iter().map(|r| f(r).as_deref())))
            };
            vec![
                addresses(rows.iter().map(|r| &r.address)),
                texts(rows.iter().map(|r| r.name.as_str())),
                opt(|r| &r.avatar),
                opt(|r| &r.header),
                opt(|r| &r.display),
                opt(|r| &r.records),
                opt(|r| &r.chains),
                Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.fresh))),
                opt(|r| &r.resolver),
                opt(|r| &r.errors),
            ]
        }
        Table::BadgeEvents => {
            let rows = &t.badge_events[range];
            let text = |f: fn(&BadgeEventRow) -> &str| texts(rows.iter().map(f));
            vec![
                Arc::new(Int64Array::from_iter_values(
                    rows.iter().map(|r| r.event_id),
                )),
                Arc::new(Int32Array::from_iter_values(
                    rows.iter().map(|r| r.position),
                )),
                text(|r| &r.fancy_id),
                text(|r| &r.name),
                text(|r| &r.event_url),
                text(|r| &r.image_url),
                text(|r| &r.country),
                text(|r| &r.city),
                text(|r| &r.description),
                Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.year))),
                text(|r| &r.start_date),
                text(|r| &r.end_date),
                text(|r| &r.expiry_date),
            ]
        }
        Table::Badges => {
            let rows = &t.badges[range];
            vec![
                addresses(rows.iter().map(|r| &r.address)),
                Arc::new(Int64Array::from_iter_values(
                    rows.iter().map(|r| r.event_id),
                )),
                texts(rows.iter().map(|r| r.token_id.as_str())),
                texts(rows.iter().map(|r| r.owner.as_str())),
            ]
        }
        Table::Recommended => {
            let rows = &t.recommended[range];
            let opt = |f: fn(&RecommendedRow) -> &Option<String>| -> ArrayRef {
                Arc::new(StringArray::from_iter(rows.iter().map(|r| f(r).as_deref())))
            };
            vec![
                Arc::new(Int64Array::from_iter_values(
                    rows.iter().map(|r| r.position),
                )),
                addresses(rows.iter().map(|r| &r.address)),
                texts(rows.iter().map(|r| r.name.as_str())),
                opt(|r| &r.avatar),
                opt(|r| &r.header),
                opt(|r| &r.class),
                Arc::new(
                    TimestampMillisecondArray::from_iter(rows.iter().map(|r| r.created_at))
                        .with_timezone("UTC"),
                ),
            ]
        }
    };
    RecordBatch::try_new(table.schema(), columns).expect("columns match the table schema")
}

fn addresses<'a>(values: impl ExactSizeIterator<Item = &'a Address>) -> ArrayRef {
    let mut b = StringBuilder::with_capacity(values.len(), values.len() * 42);
    let mut buf = [0u8; 42];
    buf[0] = b'0';
    buf[1] = b'x';
    for addr in values {
        faster_hex::hex_encode(addr, &mut buf[2..]).expect("40 digits for 20 bytes");
        b.append_value(std::str::from_utf8(&buf).expect("ASCII hex"));
    }
    Arc::new(b.finish())
}

fn texts<'a>(values: impl ExactSizeIterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(values))
}

fn timestamps(values: impl Iterator<Item = i64>) -> ArrayRef {
    Arc::new(TimestampMillisecondArray::from_iter_values(values).with_timezone("UTC"))
}
