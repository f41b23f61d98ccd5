//! Snapshot directories (docs/snapshot.md): finding the active one under a
//! root, reading and validating its manifest and Parquet tables, and
//! writing them.
//!
//! - `schema`: the tables ([`Table`], `recommended` optional) and their columns, the one
//!   list everything else derives from;
//! - `tables`: the tables as plain rows ([`Tables`]), and addresses and ops;
//! - `manifest`: `manifest.json`, `CURRENT` and snapshot names;
//! - `files`: where files come from (a directory, memory) and how a table
//!   file is read (in memory, or in place with positioned reads);
//! - `column`: schema checks and the typed, validating column accessors;
//! - `row_groups`: one table file decoded, row groups in parallel;
//! - `unique`: the uniqueness rules' duplicate finder;
//! - `readers`: the table readers (per-row rules, uniqueness);
//! - `read`: the row reader over a whole snapshot, and the streaming
//!   loader's entry points;
//! - `write`: rows -> Parquet files and a manifest;
//! - `error`: [`SnapshotError`] and its kind.

mod column;
mod error;
mod files;
mod manifest;
mod read;
mod readers;
mod row_groups;
mod schema;
pub mod tables;
#[cfg(test)]
mod tests;
mod unique;
mod write;

pub use column::is_json_object;
pub use error::{ColumnError, RowError, SnapshotError, SnapshotErrorKind};
pub(crate) use files::MANIFEST;
pub use files::{DirFiles, MemoryFiles, SnapshotFiles, TableBytes};
pub(crate) use manifest::{checked_manifest, manifest_entries};
pub use manifest::{
    is_valid_snapshot_name, resolve_snapshot_dir, snapshot_name, Anchor, AnchorError, Manifest,
    Position, SourceJson, TableEntry, FORMAT_V1, IN_PROGRESS_PREFIX,
};
pub(crate) use read::read_small_tables;
pub use read::{load, read_recommended_rows, read_snapshot, read_snapshot_from, LoadedSnapshot};
pub(crate) use readers::{
    read_lists, read_primary_lists, scan_list_ops, scan_list_record_tags, scan_list_records,
    stream_list_ops, stream_list_record_tags, stream_list_records,
};
pub use schema::{ColumnKind, ColumnSpec, Table, UnknownTable, TABLE_NAMES};
pub use tables::*;
pub use unique::fold_case;
pub use write::{
    memory_files, publish, start_snapshot_dir, sync_dir, table_batch, write_batch_file,
    write_manifest, write_snapshot, TableFileWriter, WriteOptions, WrittenTable,
};
