//! Finding a snapshot and reading its manifest: which directory a root
//! stands for (`CURRENT`, else the greatest snapshot name), and
//! `manifest.json` checked (format, `created_at`, one plain file name per
//! table) before any table is opened.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::files::SnapshotFiles;
pub(crate) use super::files::MANIFEST;
use super::schema::Table;
use super::{SnapshotError, SnapshotErrorKind};

pub const FORMAT_V1: &str = "graph-snapshot/1";

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
    /// Where the snapshot stands in the indexer's event log (written by
    /// `followgraph export`; absent in generated snapshots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceJson>,
}

/// `source` as `manifest.json` spells it: chain ids as decimal keys,
/// positions as `[block, transaction_index, log_index]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceJson {
    pub positions: BTreeMap<String, [u64; 3]>,
    pub db_time: String,
}

/// An event's position within its chain: (block, transaction, log).
pub type Position = [u64; 3];

/// The anchor a tail starts from (docs/live.md): the greatest position of
/// each chain the export's transaction saw, and that transaction's time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Anchor {
    pub positions: BTreeMap<i64, Position>,
    pub db_time_ms: i64,
}

impl Anchor {
    /// The manifest form.
    pub fn to_json(&self) -> SourceJson {
        SourceJson {
            positions: self
                .positions
                .iter()
                .map(|(chain, p)| (chain.to_string(), *p))
                .collect(),
            db_time: crate::time::format_iso_ms(self.db_time_ms),
        }
    }

    /// The checked form of a manifest's `source`; `Err` says what is wrong.
    pub fn from_json(json: &SourceJson) -> Result<Anchor, AnchorError> {
        let mut positions = BTreeMap::new();
        for (chain, p) in &json.positions {
            let id = chain
                .parse::<i64>()
                .ok()
                .filter(|id| id.to_string() == *chain)
                .ok_or_else(|| AnchorError::ChainId(chain.clone()))?;
            positions.insert(id, *p);
        }
        let db_time_ms = crate::time::parse_iso_ms(&json.db_time)
            .ok_or_else(|| AnchorError::DbTime(json.db_time.clone()))?;
        Ok(Anchor {
            positions,
            db_time_ms,
        })
    }
}

/// Why a manifest's `source` is not an anchor.
#[derive(Debug, thiserror::Error)]
pub enum AnchorError {
    #[error("source.positions key {0:?} is not a chain id")]
    ChainId(String),
    #[error("source.db_time {0:?} is not an ISO 8601 UTC time")]
    DbTime(String),
}

fn manifest_error(reason: String) -> SnapshotError {
    SnapshotError::new(SnapshotErrorKind::Manifest, MANIFEST, reason)
}

/// The manifest of the snapshot `src` holds, checked (format, `created_at`
/// and one plain file name per table), with `created_at` in epoch ms.
pub(crate) fn checked_manifest(src: &dyn SnapshotFiles) -> Result<(Manifest, i64), SnapshotError> {
    let manifest = read_manifest(src)?;
    let created_at_ms = crate::time::parse_iso_ms(&manifest.created_at).ok_or_else(|| {
        manifest_error(format!(
            "created_at {:?} is not an ISO 8601 UTC time like 2026-11-20T12:00:00.000Z",
            manifest.created_at
        ))
    })?;
    if let Some(source) = &manifest.source {
        Anchor::from_json(source).map_err(|e| manifest_error(e.to_string()))?;
    }
    for table in Table::ALL {
        if table.is_optional() && !manifest.tables.contains_key(table.name()) {
            continue;
        }
        let entry = manifest_entry(&manifest, table.name())?;
        if !is_plain_file_name(&entry.file) {
            return Err(manifest_error(format!(
                "table `{table}` names file {:?}, which is not a plain file name in the snapshot directory",
                entry.file
            )));
        }
    }
    Ok((manifest, created_at_ms))
}

/// The entries of a checked manifest in [`Table::ALL`] order; `None` for
/// an optional table the snapshot leaves out.
pub(crate) fn manifest_entries(manifest: &Manifest) -> Vec<Option<&TableEntry>> {
    Table::ALL
        .iter()
        .map(|t| manifest.tables.get(t.name()))
        .collect()
}

/// The manifest's entry for table `name`.
pub(super) fn manifest_entry<'m>(
    manifest: &'m Manifest,
    name: &str,
) -> Result<&'m TableEntry, SnapshotError> {
    manifest
        .tables
        .get(name)
        .ok_or_else(|| manifest_error(format!("no entry for table `{name}` in `tables`")))
}

/// `manifest.json` parsed, its format checked.
pub(super) fn read_manifest(src: &dyn SnapshotFiles) -> Result<Manifest, SnapshotError> {
    let text = src.read(MANIFEST)?;
    let manifest: Manifest = serde_json::from_slice(&text)
        .map_err(|e| manifest_error(format!("malformed manifest: {e}")))?;
    if manifest.format != FORMAT_V1 {
        return Err(manifest_error(format!(
            "unknown format version {:?} (expected {FORMAT_V1:?})",
            manifest.format
        )));
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

/// The name a snapshot directory reports: its last path component (of
/// the canonical path when `dir` ends in `.` or `..`).
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

fn no_snapshot(file: String, reason: impl Into<String>) -> SnapshotError {
    SnapshotError::new(SnapshotErrorKind::NoSnapshot, file, reason)
}

/// Finds the snapshot directory `path` stands for: `path` itself when it
/// holds a `manifest.json`; else the directory `path/CURRENT` names; else
/// the sub-directory with the greatest name that holds a `manifest.json`,
/// an export's `.tmp-` work in progress excepted.
pub fn resolve_snapshot_dir(path: &Path) -> Result<PathBuf, SnapshotError> {
    let shown = path.display().to_string();
    if path.join(MANIFEST).is_file() {
        return Ok(path.to_path_buf());
    }
    let current = path.join("CURRENT");
    match std::fs::read_to_string(&current) {
        Ok(text) => {
            let name = text.trim();
            if !is_valid_snapshot_name(name) {
                return Err(no_snapshot(
                    format!("{shown}/CURRENT"),
                    format!("{name:?} is not a valid snapshot name ([A-Za-z0-9._-]+)"),
                ));
            }
            let dir = path.join(name);
            if !dir.is_dir() {
                return Err(no_snapshot(
                    format!("{shown}/CURRENT"),
                    format!("names {name:?}, which is not a directory"),
                ));
            }
            Ok(dir)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let entries = std::fs::read_dir(path)
                .map_err(|e| no_snapshot(shown.clone(), format!("cannot read: {e}")))?;
            let mut best: Option<(String, PathBuf)> = None;
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let dir = entry.path();
                if is_valid_snapshot_name(&name)
                    && !name.starts_with(IN_PROGRESS_PREFIX)
                    && dir.join(MANIFEST).is_file()
                    && best.as_ref().is_none_or(|(b, _)| name > *b)
                {
                    best = Some((name, dir));
                }
            }
            best.map(|(_, dir)| dir).ok_or_else(|| {
                no_snapshot(
                    shown,
                    "no CURRENT and no snapshot directory with a manifest.json",
                )
            })
        }
        Err(e) => Err(no_snapshot(
            format!("{shown}/CURRENT"),
            format!("cannot read: {e}"),
        )),
    }
}

/// Where `followgraph export` builds a snapshot before renaming it to its
/// name: never a snapshot to serve, never a name to publish under.
pub const IN_PROGRESS_PREFIX: &str = ".tmp-";

pub fn is_valid_snapshot_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
}
