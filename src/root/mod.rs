//! A snapshot root, on the local disk (`dir.rs`) or on S3-compatible
//! object storage (`s3.rs`), and the one set of rules both follow
//! (docs/snapshot.md): which snapshot is current, what a replica polls,
//! how a snapshot is opened, published (`CURRENT` last, refused when a
//! table shrank past the guard), promoted, retained and locked. Export,
//! generate, publish, the `snapshots` commands and the server's loader go
//! through it, never through a path or a bucket of their own.

pub mod commands;
mod dir;
mod error;
mod s3;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub use dir::DirRoot;
pub use error::{RootError, Shrunk};
pub use s3::{parse_s3_url, S3Root, StoreOptions};

use crate::snapshot::{
    is_valid_snapshot_name, DirFiles, Manifest, MemoryFiles, SnapshotError, SnapshotErrorKind,
    SnapshotFiles, Table,
};

/// Where snapshots are published and served from.
#[derive(Debug)]
pub enum SnapshotRoot {
    Dir(DirRoot),
    S3(S3Root),
}

/// One published snapshot, as `snapshots list` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub name: String,
    pub created_at: String,
    pub rows: u64,
    pub bytes: u64,
}

impl Listed {
    fn new(name: String, manifest: &Manifest, bytes: u64) -> Listed {
        Listed {
            name,
            created_at: manifest.created_at.clone(),
            rows: manifest.tables.values().map(|t| t.rows).sum(),
            bytes,
        }
    }

    fn created_at_ms(&self) -> i64 {
        crate::time::parse_iso_ms(&self.created_at).unwrap_or(i64::MIN)
    }
}

/// Identifies the snapshot a root points at, so a replica reloads only
/// when it changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fingerprint {
    /// On disk: the snapshot's directory and its manifest's size and
    /// modification time.
    Snapshot {
        dir: PathBuf,
        manifest_len: u64,
        manifest_modified: Option<SystemTime>,
    },
    /// On object storage: the name `CURRENT` holds and its manifest's ETag.
    Object {
        name: String,
        e_tag: Option<String>,
    },
    Unresolvable(String),
}

/// The export's guard against publishing a snapshot much smaller than the
/// current one (a truncated table, a wrong database): the greatest share
/// of a table's rows that may go, `None` when any may. Optional tables
/// are not guarded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShrinkGuard(pub Option<f64>);

impl ShrinkGuard {
    pub const OFF: ShrinkGuard = ShrinkGuard(None);

    /// `Err` names the first table (in manifest order) whose rows fell by
    /// more than the guard allows.
    pub fn check(&self, current: &Manifest, next: &Manifest) -> Result<(), Shrunk> {
        let Some(max) = self.0 else {
            return Ok(());
        };
        for (table, was) in &current.tables {
            // A curated list (`recommended`) legitimately loses most of
            // its rows in one edit; its half-built reads are carried
            // forward by the export instead.
            if Table::named(table).is_some_and(Table::is_optional) {
                continue;
            }
            let now = next.tables.get(table).map_or(0, |t| t.rows);
            if was.rows == 0 || now >= was.rows {
                continue;
            }
            let fell = (was.rows - now) as f64 / was.rows as f64;
            if fell > max {
                return Err(Shrunk {
                    table: table.to_string(),
                    was: was.rows,
                    now,
                    fell,
                    max,
                });
            }
        }
        Ok(())
    }
}

/// A snapshot's files, opened for the loader.
pub struct Opened {
    pub name: String,
    /// Where it is, as the server reports it (a path or a URL).
    pub location: PathBuf,
    files: OpenedFiles,
}

enum OpenedFiles {
    Dir(PathBuf),
    Memory(MemoryFiles),
}

impl Opened {
    /// The files, for `Graph::load` and `read_snapshot_from`.
    pub fn with_files<T>(&self, f: impl FnOnce(&dyn SnapshotFiles) -> T) -> T {
        match &self.files {
            OpenedFiles::Dir(dir) => f(&DirFiles(dir)),
            OpenedFiles::Memory(files) => f(files),
        }
    }
}

/// Holds a root's publishing lock until dropped (a local root's lock
/// file; object storage has none: its conditional `CURRENT` write keeps
/// two publishers from interleaving).
#[must_use]
pub struct RootLock(#[allow(dead_code)] Option<std::fs::File>);

impl SnapshotRoot {
    /// `s3://bucket/prefix` or a local directory (created when published
    /// to).
    pub fn open(spec: &str, store: &StoreOptions) -> Result<SnapshotRoot, RootError> {
        if spec.starts_with("s3://") {
            return S3Root::open(spec, store).map(SnapshotRoot::S3);
        }
        Ok(SnapshotRoot::Dir(DirRoot::new(PathBuf::from(spec))))
    }

    /// `open` of a path given on the command line.
    pub fn open_path(path: &Path, store: &StoreOptions) -> Result<SnapshotRoot, RootError> {
        match path.to_str() {
            Some(spec) if spec.starts_with("s3://") => SnapshotRoot::open(spec, store),
            _ => Ok(SnapshotRoot::Dir(DirRoot::new(path.to_path_buf()))),
        }
    }

    pub fn is_remote(&self) -> bool {
        matches!(self, SnapshotRoot::S3(_))
    }

    /// The root as users name it: its path or URL.
    pub fn describe(&self) -> String {
        match self {
            SnapshotRoot::Dir(d) => d.path().display().to_string(),
            SnapshotRoot::S3(s) => s.url().to_owned(),
        }
    }

    /// Where snapshot `name` is, as users name it.
    pub fn location(&self, name: &str) -> PathBuf {
        match self {
            SnapshotRoot::Dir(d) => d.snapshot_dir(name),
            SnapshotRoot::S3(s) => PathBuf::from(format!("{}/{name}", s.url())),
        }
    }

    /// The name `CURRENT` holds; `None` when the root has no `CURRENT`.
    pub fn current(&self) -> Result<Option<String>, RootError> {
        match self {
            SnapshotRoot::Dir(d) => d.read_current(),
            SnapshotRoot::S3(s) => s.read_current(),
        }
    }

    /// Snapshot `name`'s manifest; `None` when it is not published.
    pub fn manifest(&self, name: &str) -> Result<Option<Manifest>, RootError> {
        if !is_valid_snapshot_name(name) {
            return Err(RootError::InvalidName {
                name: name.to_owned(),
            });
        }
        match self {
            SnapshotRoot::Dir(d) => d.manifest(name),
            SnapshotRoot::S3(s) => s.manifest(name),
        }
    }

    /// Every published snapshot, newest first (by `created_at`, then name).
    pub fn list(&self) -> Result<Vec<Listed>, RootError> {
        let mut listed = match self {
            SnapshotRoot::Dir(d) => d.list()?,
            SnapshotRoot::S3(s) => s.list()?,
        };
        listed.sort_by(|a, b| (b.created_at_ms(), &b.name).cmp(&(a.created_at_ms(), &a.name)));
        Ok(listed)
    }

    /// Takes the root's publishing lock (and, on disk, clears what an
    /// interrupted export left).
    pub fn lock(&self) -> Result<RootLock, RootError> {
        match self {
            SnapshotRoot::Dir(d) => {
                let file = d.lock()?;
                d.remove_stale_work();
                Ok(RootLock(Some(file)))
            }
            SnapshotRoot::S3(_) => Ok(RootLock(None)),
        }
    }

    /// Publishes the finished snapshot directory `staged` as `name`: the
    /// guard against the current snapshot, then its files, then `CURRENT`.
    /// Nothing is current-visible unless all of it succeeds; a name
    /// already published is refused. On disk `staged` is moved into the
    /// root when `take` (the export's own work directory), else copied.
    pub fn publish(
        &self,
        staged: &Path,
        name: &str,
        guard: ShrinkGuard,
        take: bool,
    ) -> Result<(), RootError> {
        if !is_valid_snapshot_name(name) || name.starts_with('.') {
            return Err(RootError::InvalidName {
                name: name.to_owned(),
            });
        }
        if self.manifest(name)?.is_some() {
            return Err(RootError::AlreadyPublished {
                location: self.location(name).display().to_string(),
            });
        }
        if guard.0.is_some() {
            let next = dir::manifest_in(staged)?.ok_or_else(|| RootError::NoManifest {
                dir: staged.to_path_buf(),
            })?;
            if let Some(current) = self.current()? {
                if let Some(current) = self.manifest(&current)? {
                    guard.check(&current, &next)?;
                }
            }
        }
        match self {
            SnapshotRoot::Dir(d) => d.place(staged, name, take)?,
            SnapshotRoot::S3(s) => s.upload(staged, name)?,
        }
        self.set_current(name)
    }

    /// Points `CURRENT` at the published snapshot `name` (rolling back is
    /// promoting an older one). Returns the name it held before.
    pub fn promote(&self, name: &str) -> Result<Option<String>, RootError> {
        if self.manifest(name)?.is_none() {
            return Err(RootError::NotPublished {
                location: self.location(name).display().to_string(),
                root: self.describe(),
            });
        }
        let before = self.current()?;
        self.set_current(name)?;
        Ok(before)
    }

    fn set_current(&self, name: &str) -> Result<(), RootError> {
        match self {
            SnapshotRoot::Dir(d) => d.set_current(name),
            SnapshotRoot::S3(s) => s.set_current(name),
        }
    }

    /// Keeps the `keep` newest snapshots and always `current`; deletes the
    /// others. Folders without a manifest are never touched.
    pub fn retain(&self, current: &str, keep: usize) -> Result<(), RootError> {
        let mut failures = Vec::new();
        for listed in self.list()?.iter().skip(keep) {
            if listed.name == current {
                continue;
            }
            let deleted = match self {
                SnapshotRoot::Dir(d) => d.delete(&listed.name),
                SnapshotRoot::S3(s) => s.delete(&listed.name),
            };
            if let Err(e) = deleted {
                failures.push(e);
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(RootError::Retain(failures))
        }
    }

    /// What a replica compares between polls.
    pub fn fingerprint(&self) -> Fingerprint {
        match self {
            SnapshotRoot::Dir(d) => match crate::snapshot::resolve_snapshot_dir(d.path()) {
                Err(e) => Fingerprint::Unresolvable(e.to_string()),
                Ok(dir) => match std::fs::metadata(dir.join("manifest.json")) {
                    Err(e) => Fingerprint::Unresolvable(format!("{}: {e}", dir.display())),
                    Ok(meta) => Fingerprint::Snapshot {
                        dir,
                        manifest_len: meta.len(),
                        manifest_modified: meta.modified().ok(),
                    },
                },
            },
            SnapshotRoot::S3(s) => match s.fingerprint() {
                Ok((name, e_tag)) => Fingerprint::Object { name, e_tag },
                Err(e) => Fingerprint::Unresolvable(e.to_string()),
            },
        }
    }

    /// Opens snapshot `name`, or the current one: on disk `CURRENT`, else
    /// the greatest name (a path that is one snapshot directory is that
    /// snapshot); on object storage `CURRENT`, downloaded and checked.
    pub fn open_snapshot(&self, name: Option<&str>) -> Result<Opened, SnapshotError> {
        match self {
            SnapshotRoot::Dir(d) => {
                let dir = match name {
                    Some(name) => d.snapshot_dir(name),
                    None => crate::snapshot::resolve_snapshot_dir(d.path())?,
                };
                Ok(Opened {
                    name: crate::snapshot::snapshot_name(&dir),
                    location: dir.clone(),
                    files: OpenedFiles::Dir(dir),
                })
            }
            SnapshotRoot::S3(s) => {
                let name = match name {
                    Some(name) => name.to_owned(),
                    None => s.current_name().map_err(|e| {
                        SnapshotError::new(
                            SnapshotErrorKind::NoSnapshot,
                            format!("{}/CURRENT", s.url()),
                            e.to_string(),
                        )
                    })?,
                };
                let files = s.fetch(&name)?;
                Ok(Opened {
                    location: self.location(&name),
                    name,
                    files: OpenedFiles::Memory(files),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::TableEntry;

    fn manifest(rows: &[(&str, u64)]) -> Manifest {
        Manifest {
            format: crate::snapshot::FORMAT_V1.to_owned(),
            created_at: "2026-11-20T12:00:00.000Z".to_owned(),
            tables: rows
                .iter()
                .map(|(t, r)| {
                    (
                        t.to_string(),
                        TableEntry {
                            file: format!("{t}.parquet"),
                            rows: *r,
                            sha256: None,
                        },
                    )
                })
                .collect(),
            source: None,
        }
    }

    #[test]
    fn the_guard_names_the_first_table_that_shrank_too_far() {
        let was = manifest(&[("lists", 100), ("list_records", 1000), ("badges", 0)]);
        let guard = ShrinkGuard(Some(0.2));
        assert_eq!(
            guard.check(&was, &manifest(&[("lists", 80), ("list_records", 1000)])),
            Ok(())
        );
        let err = guard
            .check(&was, &manifest(&[("lists", 100), ("list_records", 799)]))
            .unwrap_err();
        assert_eq!(
            (err.table.as_str(), err.was, err.now),
            ("list_records", 1000, 799)
        );
        assert!(
            err.to_string()
                .starts_with("list_records fell from 1000 to 799 rows (20.1% fewer)"),
            "{err}"
        );
        let err = guard
            .check(&was, &manifest(&[("list_records", 1000)]))
            .unwrap_err();
        assert!(
            err.to_string().starts_with("lists fell from 100 to 0 rows"),
            "{err}"
        );
        assert_eq!(ShrinkGuard::OFF.check(&was, &manifest(&[])), Ok(()));
        assert_eq!(ShrinkGuard(Some(1.0)).check(&was, &manifest(&[])), Ok(()));
    }
}
