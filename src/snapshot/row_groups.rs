//! Decoding one table file, row groups in parallel: the footer checked
//! (row counts against the manifest, schema against the table's columns),
//! the checksum hashed alongside, then each row group decoded batch by
//! batch by a Parquet reader of its own straight into its window of one
//! output vector. Two ways in: [`read_table`] keeps every row (the row
//! reader, from the file's bytes in memory), [`scan_table`] keeps what a
//! closure makes of each row (the streaming loader, from positioned reads,
//! so nothing of a row outlives its decoded batch).
use std::mem::MaybeUninit;

use bytes::Bytes;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::file::reader::ChunkReader;
use rayon::prelude::*;

use super::column::{check_schema, schema_error, Column};
use super::error::RowError;
use super::files::{SnapshotFiles, TableBytes};
use super::schema::ColumnSpec as Spec;
use super::{SnapshotError, SnapshotErrorKind, TableEntry};

/// Rows per decoded batch.
const BATCH_ROWS: usize = 8192;

/// Reads the table file of `entry`: checksum, Parquet metadata, row count,
/// schema, then every row group in parallel through `row`.
pub(super) fn read_table<R, F>(
    src: &dyn SnapshotFiles,
    entry: &TableEntry,
    specs: &[Spec],
    row: F,
) -> Result<Vec<R>, SnapshotError>
where
    R: Send,
    F: Fn(&[Column<'_>], usize) -> Result<R, RowError> + Sync,
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

/// A row that breaks a rule of docs/snapshot.md, as its reader says.
fn invalid_row(file: &str, row: u64, e: RowError) -> SnapshotError {
    SnapshotError::at_row(SnapshotErrorKind::InvalidRow, file, row, e.to_string())
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
    let have = bytes.sha256_hex().map_err(|e| {
        SnapshotError::new(
            SnapshotErrorKind::Unreadable,
            file,
            format!("cannot read: {e}"),
        )
    })?;
    if want.eq_ignore_ascii_case(&have) {
        Ok(())
    } else {
        Err(SnapshotError::new(
            SnapshotErrorKind::Checksum,
            file,
            format!("checksum mismatch: manifest says {want}, file has {have}"),
        ))
    }
}

/// A file the Parquet decoder cannot read (corrupt, truncated, hostile).
fn unreadable(file: &str, e: impl std::fmt::Display) -> SnapshotError {
    SnapshotError::new(
        SnapshotErrorKind::Unreadable,
        file,
        format!("not a readable Parquet file: {e}"),
    )
}

/// Runs a call into the parquet crate, turning a panic inside it into an
/// "unreadable" error: hostile files make parquet 60 panic instead of
/// failing (found by fuzz/snapshot_table: a dictionary-encoded data page
/// without a dictionary page panics with "Decoder for dict should have
/// been set" in `column/reader/decoder.rs`). Only parquet's own calls are
/// wrapped, so a bug in a table's row code still panics.
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
            SnapshotErrorKind::RowCount,
            file,
            format!("row count {total} differs from the manifest's {manifest_rows}"),
        ));
    }
    if total > u64::from(u32::MAX) {
        return Err(SnapshotError::new(
            SnapshotErrorKind::Limit,
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
            .map_err(|e| schema_error(file, e))?;
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
    F: Fn(&[Column<'_>], usize) -> Result<R, RowError> + Sync,
{
    let tm = table_meta(file, bytes, manifest_rows, specs)?;
    let counts: Vec<usize> = tm.group_rows.iter().map(|&n| n as usize).collect();
    let (rows, _) = fill_parallel(file, &counts, true, |group, sink| {
        for_each_batch(file, bytes, &tm, group, specs, |first_row, columns| {
            let n = columns.first().map_or(0, |c| c.len);
            for i in 0..n {
                let value =
                    row(columns, i).map_err(|r| invalid_row(file, first_row + i as u64, r))?;
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
pub(super) fn scan_table<T, X, F>(
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
    F: Fn(&mut X, &[Column<'_>], usize) -> Result<Option<T>, RowError> + Sync,
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
                            .map_err(|r| invalid_row(file, first_row + i as u64, r))?;
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

/// Streams the table file of `entry` through `row` in file order, one
/// decoded batch at a time, on the calling thread: `batch` takes each
/// batch's rows, so no more than a batch is in memory. Footer and schema
/// are checked; the checksum is not (a rewrite of a snapshot already
/// loaded: its rows are checked again when the rewrite is loaded).
pub(super) fn stream_table<R, F>(
    src: &dyn SnapshotFiles,
    entry: &TableEntry,
    specs: &[Spec],
    row: F,
    mut batch: impl FnMut(Vec<R>) -> Result<(), SnapshotError>,
) -> Result<(), SnapshotError>
where
    F: Fn(&[Column<'_>], usize) -> Result<R, RowError>,
{
    let file = entry.file.as_str();
    let bytes = src.open(file)?;
    let tm = table_meta(file, &bytes, entry.rows, specs)?;
    for group in 0..tm.group_rows.len() {
        for_each_batch(file, &bytes, &tm, group, specs, |first_row, columns| {
            let n = columns.first().map_or(0, |c| c.len);
            let rows = (0..n)
                .map(|i| row(columns, i).map_err(|r| invalid_row(file, first_row + i as u64, r)))
                .collect::<Result<Vec<R>, _>>()?;
            batch(rows)
        })?;
    }
    Ok(())
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
    out.try_reserve_exact(total).map_err(|e| {
        SnapshotError::new(
            SnapshotErrorKind::Limit,
            file,
            format!("cannot allocate {total} rows: {e}"),
        )
    })?;
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
