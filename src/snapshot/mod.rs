//! Snapshot directories: finding the active one under a root, reading and
//! validating its manifest and eight Parquet tables, and writing them.

mod read;
mod source;
pub mod tables;
#[cfg(test)]
mod tests;
mod write;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub(crate) use read::{
    checked_manifest, manifest_entries, read_small_tables, scan_list_ops, scan_list_record_tags,
    scan_list_records,
};
pub use read::{
    fold_case, is_json_object, read_snapshot_from, DirFiles, MemoryFiles, SnapshotFiles,
};
pub use read::{read_snapshot, snapshot_name};
pub use source::TableBytes;
pub use tables::*;
pub use write::{
    memory_files, publish, start_snapshot_dir, sync_dir, table_batch, table_schema,
    write_batch_file, write_manifest, write_snapshot, TableFileWriter, WriteOptions, WrittenTable,
};

pub const FORMAT_V1: &str = "graph-snapshot/1";

/// Why a snapshot was rejected: the file (relative to the snapshot
/// directory, or the directory itself), the 0-based data row where there is
/// one, and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotError {
    pub file: String,
    pub row: Option<u64>,
    pub reason: String,
}

impl SnapshotError {
    pub fn new(file: impl Into<String>, reason: impl Into<String>) -> Self {
        SnapshotError {
            file: file.into(),
            row: None,
            reason: reason.into(),
        }
    }

    pub fn at_row(file: impl Into<String>, row: u64, reason: impl Into<String>) -> Self {
        SnapshotError {
            file: file.into(),
            row: Some(row),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.row {
            Some(row) => write!(f, "{} row {}: {}", self.file, row, self.reason),
            None => write!(f, "{}: {}", self.file, self.reason),
        }
    }
}

impl std::error::Error for SnapshotError {}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableEntry {
    pub file: String,
    pub rows: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub created_at: String,
    pub tables: BTreeMap<String, TableEntry>,
}

/// A validated snapshot, ready for the graph builder.
#[derive(Debug)]
pub struct LoadedSnapshot {
    /// The directory's name (the name `CURRENT` holds).
    pub name: String,
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// `manifest.created_at` in epoch milliseconds.
    pub created_at_ms: i64,
    pub tables: Tables,
}

/// Finds the snapshot directory `path` stands for: `path` itself when it
/// holds a `manifest.json`; else the directory `path/CURRENT` names; else
/// the sub-directory with the greatest name that holds a `manifest.json`.
pub fn resolve_snapshot_dir(path: &Path) -> Result<PathBuf, SnapshotError> {
    let shown = path.display().to_string();
    if path.join("manifest.json").is_file() {
        return Ok(path.to_path_buf());
    }
    let current = path.join("CURRENT");
    match std::fs::read_to_string(&current) {
        Ok(text) => {
            let name = text.trim();
            if !is_valid_snapshot_name(name) {
                return Err(SnapshotError::new(
                    format!("{shown}/CURRENT"),
                    format!("{name:?} is not a valid snapshot name ([A-Za-z0-9._-]+)"),
                ));
            }
            let dir = path.join(name);
            if !dir.is_dir() {
                return Err(SnapshotError::new(
                    format!("{shown}/CURRENT"),
                    format!("names {name:?}, which is not a directory"),
                ));
            }
            Ok(dir)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let entries = std::fs::read_dir(path)
                .map_err(|e| SnapshotError::new(shown.clone(), format!("cannot read: {e}")))?;
            let mut best: Option<(String, PathBuf)> = None;
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let dir = entry.path();
                if is_valid_snapshot_name(&name)
                    && dir.join("manifest.json").is_file()
                    && best.as_ref().is_none_or(|(b, _)| name > *b)
                {
                    best = Some((name, dir));
                }
            }
            best.map(|(_, dir)| dir).ok_or_else(|| {
                SnapshotError::new(
                    shown,
                    "no CURRENT and no snapshot directory with a manifest.json",
                )
            })
        }
        Err(e) => Err(SnapshotError::new(
            format!("{shown}/CURRENT"),
            format!("cannot read: {e}"),
        )),
    }
}

pub fn is_valid_snapshot_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
}

/// Resolves `path` (root or snapshot directory) and reads the snapshot.
pub fn load(path: &Path) -> Result<LoadedSnapshot, SnapshotError> {
    read_snapshot(&resolve_snapshot_dir(path)?)
}
