//! A compaction's snapshot: the base's files with the held entities laid
//! over them ([`Overlay`]'s rules, the rows `Overlay::merge` gives),
//! written table by table into a directory of the compaction's own,
//! which is then loaded like any snapshot. The three large tables are
//! streamed a decoded batch at a time (their held rows after the base's;
//! the new ops merged into the base's as they pass, which are in export
//! order, else read whole and merged in memory); `lists` and
//! `primary_lists` are read whole; the others are copied.
//!
//! Cost: one decode and encode of the base's list tables, on the calling
//! thread, and their size on disk; memory a few batches (all of the
//! base's ops only when they are not in export order). The load after it
//! is a reload's.

use std::collections::BTreeMap;
use std::path::Path;

use super::Overlay;
use crate::snapshot::{
    checked_manifest, manifest_entries, Anchor, OpRow, SnapshotError, SnapshotErrorKind,
    SnapshotFiles, Table, TableEntry, TableFileWriter, Tables,
};

/// Rows per row group of the written tables (the loader decodes row
/// groups in parallel).
const ROW_GROUP: usize = 1 << 18;
/// Rows written at a time.
const CHUNK: usize = 1 << 16;

/// Writes the base `files` with `overlay` laid over them as the snapshot
/// directory `dir` (created), with `created_at_ms` and `anchor`.
pub(super) fn write(
    files: &dyn SnapshotFiles,
    overlay: &Overlay,
    dir: &Path,
    created_at_ms: i64,
    anchor: &Anchor,
) -> Result<(), SnapshotError> {
    let (manifest, _) = checked_manifest(files)?;
    let at = |e: std::io::Error| io_error(dir, e);
    crate::snapshot::start_snapshot_dir(dir).map_err(at)?;
    let mut entries = BTreeMap::new();
    for (table, entry) in Table::ALL.iter().zip(manifest_entries(&manifest)) {
        let Some(entry) = entry else { continue };
        let path = dir.join(table.file_name());
        let written = match table {
            Table::Lists => {
                let rows = crate::snapshot::read_lists(files, entry)?;
                let rows = overlay.merge_lists(rows);
                write_all(&path, *table, |chunk, r| chunk.lists = r.to_vec(), &rows)?
            }
            Table::PrimaryLists => {
                let rows = crate::snapshot::read_primary_lists(files, entry)?;
                let rows = overlay.merge_primary_lists(rows);
                write_all(&path, *table, |c, r| c.primary_lists = r.to_vec(), &rows)?
            }
            Table::ListRecords => {
                let mut w = Writer::new(&path, *table)?;
                crate::snapshot::stream_list_records(files, entry, |rows| {
                    w.chunk
                        .list_records
                        .extend(rows.into_iter().filter(|r| !overlay.holds_list(r.token_id)));
                    w.flush_full(|c| c.list_records.len())
                })?;
                w.chunk.list_records.extend(overlay.held_records().cloned());
                w.finish()?
            }
            Table::ListRecordTags => {
                let mut w = Writer::new(&path, *table)?;
                crate::snapshot::stream_list_record_tags(files, entry, |rows| {
                    w.chunk
                        .list_record_tags
                        .extend(rows.into_iter().filter(|r| !overlay.holds_list(r.token_id)));
                    w.flush_full(|c| c.list_record_tags.len())
                })?;
                w.chunk
                    .list_record_tags
                    .extend(overlay.held_tags().cloned());
                w.finish()?
            }
            Table::ListOps => match stream_ops(files, entry, overlay, &path)? {
                Some(written) => written,
                None => {
                    let mut ops = Vec::with_capacity(entry.rows as usize);
                    crate::snapshot::stream_list_ops(files, entry, |rows| {
                        ops.extend(rows);
                        Ok(())
                    })?;
                    overlay.merge_ops(&mut ops);
                    write_all(&path, *table, |c, r| c.list_ops = r.to_vec(), &ops)?
                }
            },
            _ => {
                let bytes = files.read(&entry.file)?;
                std::fs::write(&path, &bytes[..]).map_err(at)?;
                let copied = TableEntry {
                    file: table.file_name().to_owned(),
                    ..entry.clone()
                };
                entries.insert(table.name().to_owned(), copied);
                continue;
            }
        };
        entries.insert(
            table.name().to_owned(),
            TableEntry {
                file: table.file_name().to_owned(),
                rows: written,
                sha256: None,
            },
        );
    }
    crate::snapshot::write_manifest(dir, created_at_ms, entries, Some(anchor)).map_err(at)
}

/// The base's ops with the new ones merged in as they pass, renumbered;
/// `None` (nothing kept) when the base's are not in export order.
fn stream_ops(
    files: &dyn SnapshotFiles,
    entry: &TableEntry,
    overlay: &Overlay,
    path: &Path,
) -> Result<Option<u64>, SnapshotError> {
    let new = overlay.new_ops();
    let mut new = new.into_iter().peekable();
    let mut w = Writer::new(path, Table::ListOps)?;
    let mut last: Option<(i64, u64)> = None;
    let mut ordered = true;
    let streamed = crate::snapshot::stream_list_ops(files, entry, |rows| {
        for op in rows {
            let key = (op.updated_at, op.seq);
            if last.is_some_and(|l| l >= key) {
                ordered = false;
                return Err(SnapshotError::new(
                    SnapshotErrorKind::Internal,
                    "list_ops",
                    "not in export order",
                ));
            }
            last = Some(key);
            if overlay.replaces_ops(op.token_id) {
                continue;
            }
            // A new op goes after the base's of its `updated_at`.
            while let Some(n) = new.next_if(|n| n.updated_at < op.updated_at) {
                w.push_op(n.clone());
            }
            w.push_op(op);
        }
        w.flush_full(|c| c.list_ops.len())
    });
    match streamed {
        Err(_) if !ordered => return Ok(None),
        other => other?,
    }
    for n in new {
        w.push_op(n.clone());
    }
    w.finish().map(Some)
}

/// One table's file, written a chunk at a time.
struct Writer<'a> {
    path: &'a Path,
    file: TableFileWriter,
    chunk: Tables,
    /// The last op's `seq` (ops are numbered 1, 2, … as written).
    seq: u64,
}

impl<'a> Writer<'a> {
    fn new(path: &'a Path, table: Table) -> Result<Writer<'a>, SnapshotError> {
        let file = TableFileWriter::create(path, table, ROW_GROUP, false)
            .map_err(|e| io_error(path, e))?;
        Ok(Writer {
            path,
            file,
            chunk: Tables::default(),
            seq: 0,
        })
    }

    fn push_op(&mut self, mut op: OpRow) {
        self.seq += 1;
        op.seq = self.seq;
        self.chunk.list_ops.push(op);
    }

    /// Writes the chunk once it holds `CHUNK` rows (`len` says how many).
    fn flush_full(&mut self, len: impl Fn(&Tables) -> usize) -> Result<(), SnapshotError> {
        if len(&self.chunk) < CHUNK {
            return Ok(());
        }
        self.flush()
    }

    fn flush(&mut self) -> Result<(), SnapshotError> {
        self.file
            .write_rows(&self.chunk)
            .map_err(|e| io_error(self.path, e))?;
        self.chunk = Tables::default();
        Ok(())
    }

    /// Writes what is left and the footer: the rows written.
    fn finish(mut self) -> Result<u64, SnapshotError> {
        self.flush()?;
        let path = self.path;
        let written = self.file.finish().map_err(|e| io_error(path, e))?;
        Ok(written.rows)
    }
}

/// Writes `rows` as the table's file, `CHUNK` rows at a time (`fill` puts
/// a slice of them in a chunk).
fn write_all<R>(
    path: &Path,
    table: Table,
    fill: impl Fn(&mut Tables, &[R]),
    rows: &[R],
) -> Result<u64, SnapshotError> {
    let mut w = Writer::new(path, table)?;
    for part in rows.chunks(CHUNK) {
        fill(&mut w.chunk, part);
        w.flush()?;
    }
    w.finish()
}

fn io_error(path: &Path, e: std::io::Error) -> SnapshotError {
    SnapshotError::new(
        SnapshotErrorKind::Internal,
        path.display().to_string(),
        format!("cannot write the compaction's snapshot: {e}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::reread::Reread;
    use crate::snapshot::{
        assert_tables_eq, DirFiles, EnsRow, ListRow, ListState, Op, PrimaryListRow, RecordRow,
        TagRow, WriteOptions,
    };

    fn a(b: u8) -> [u8; 20] {
        let mut x = [0; 20];
        x[19] = b;
        x
    }

    fn op(token_id: u64, seq: u64, updated_at: i64, target: u8) -> OpRow {
        OpRow {
            token_id,
            seq,
            op: Op {
                opcode: 1,
                target: a(target),
                tag: String::new(),
            },
            updated_at,
        }
    }

    fn list(token_id: u64, user: u8) -> ListRow {
        ListRow {
            token_id,
            user: a(user),
            owner: a(user),
            manager: a(user),
        }
    }

    fn record(token_id: u64, target: u8) -> RecordRow {
        RecordRow {
            token_id,
            address: a(target),
            updated_at: 10,
        }
    }

    fn tag(token_id: u64, target: u8) -> TagRow {
        TagRow {
            token_id,
            address: a(target),
            tag: "top8".into(),
            updated_at: 10,
        }
    }

    /// Three lists, their records, tags and ops (export order, or not).
    fn base(ordered: bool) -> Tables {
        let mut ops = vec![
            op(1, 1, 100, 7),
            op(2, 2, 100, 8),
            op(3, 3, 150, 9),
            op(1, 4, 200, 9),
            op(2, 5, 250, 7),
        ];
        if !ordered {
            ops.reverse();
        }
        Tables {
            lists: vec![list(1, 1), list(2, 2), list(3, 3)],
            primary_lists: (1..=3)
                .map(|n| PrimaryListRow {
                    address: a(n),
                    token_id: u64::from(n),
                })
                .collect(),
            list_records: vec![record(1, 7), record(2, 8), record(2, 9), record(3, 9)],
            list_record_tags: vec![tag(1, 7), tag(2, 8)],
            list_ops: ops,
            ens: vec![EnsRow {
                address: a(7),
                name: "seven.eth".into(),
                ..EnsRow::default()
            }],
            ..Tables::default()
        }
    }

    /// List 2 re-read (user 5, its records and tags, its ops read again
    /// whole), account 3's primary list gone, new ops of lists 1 and 3.
    fn overlay() -> Overlay {
        let mut r = Reread::default();
        r.lists.insert(
            2,
            ListState {
                row: Some(list(2, 5)),
                records: vec![record(2, 7)],
                tags: vec![tag(2, 7)],
            },
        );
        r.primary.insert(a(3), None);
        r.ops = vec![
            (op(1, 0, 150, 8), (150, 1, [9, 0, 0])),
            (op(3, 0, 100, 7), (100, 1, [8, 0, 0])),
            (op(1, 0, 300, 7), (300, 1, [10, 0, 0])),
        ];
        r.rescanned
            .insert(2, vec![(op(2, 0, 120, 7), (120, 1, [5, 0, 0]))]);
        let mut o = Overlay::default();
        o.apply(r, 1);
        o
    }

    #[test]
    fn a_rewrite_holds_the_merged_rows_whatever_the_base_order() {
        for ordered in [true, false] {
            let root = tempfile::tempdir().expect("tempdir");
            let (from, to) = (root.path().join("base"), root.path().join("next"));
            let options = WriteOptions {
                row_group_rows: 2,
                checksums: true,
            };
            crate::snapshot::write_snapshot(&from, 5, &base(ordered), &options).expect("write");
            let anchor = Anchor {
                positions: [(8453, [7, 0, 0])].into_iter().collect(),
                db_time_ms: 9,
            };
            let o = overlay();
            write(&DirFiles(&from), &o, &to, 9, &anchor).expect("rewrite");
            let got = crate::snapshot::read_snapshot(&to).expect("read");
            assert_tables_eq(&got.tables, &o.merge(base(ordered)));
            assert_eq!(got.created_at_ms, 9);
            let seqs: Vec<u64> = got.tables.list_ops.iter().map(|o| o.seq).collect();
            assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
        }
    }
}
