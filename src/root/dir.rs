//! A snapshot root on the local disk: `ROOT/<name>/` per snapshot,
//! `ROOT/CURRENT` naming the served one, replaced by an atomic rename.
//! Publishers serialise on an exclusive lock of `ROOT/.export.lock`: two
//! on one root would otherwise race on `CURRENT` and retention.

use std::path::{Path, PathBuf};

use super::{Listed, RootError};
use crate::snapshot::{is_valid_snapshot_name, sync_dir, Manifest, IN_PROGRESS_PREFIX, MANIFEST};

#[derive(Clone, Debug)]
pub struct DirRoot {
    path: PathBuf,
}

impl DirRoot {
    pub fn new(path: PathBuf) -> DirRoot {
        DirRoot { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where snapshot `name` is: the path itself when it is one snapshot
    /// directory (served without a root), else `ROOT/<name>`.
    pub(super) fn snapshot_dir(&self, name: &str) -> PathBuf {
        if self.path.join(MANIFEST).is_file() && crate::snapshot::snapshot_name(&self.path) == name
        {
            return self.path.clone();
        }
        self.path.join(name)
    }

    pub(super) fn read_current(&self) -> Result<Option<String>, RootError> {
        let file = self.path.join("CURRENT");
        match std::fs::read_to_string(&file) {
            Ok(text) => Ok(Some(text.trim().to_owned())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(RootError::io("read", file.display().to_string(), e)),
        }
    }

    pub(super) fn manifest(&self, name: &str) -> Result<Option<Manifest>, RootError> {
        manifest_in(&self.snapshot_dir(name))
    }

    /// Every snapshot directory of the root (a valid name holding a
    /// readable manifest; an export's work in progress excepted).
    pub(super) fn list(&self) -> Result<Vec<Listed>, RootError> {
        let entries = std::fs::read_dir(&self.path)
            .map_err(|e| RootError::io("list", self.path.display().to_string(), e))?;
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !is_valid_snapshot_name(&name) || name.starts_with('.') {
                continue;
            }
            let Ok(Some(manifest)) = self.manifest(&name) else {
                continue;
            };
            let bytes = std::fs::read_dir(entry.path())
                .map(|files| {
                    files
                        .flatten()
                        .filter_map(|f| f.metadata().ok())
                        .filter(|m| m.is_file())
                        .map(|m| m.len())
                        .sum()
                })
                .unwrap_or(0);
            out.push(Listed::new(name, &manifest, bytes));
        }
        Ok(out)
    }

    /// Holds `ROOT/.export.lock` exclusively until the file is dropped.
    pub(super) fn lock(&self) -> Result<std::fs::File, RootError> {
        std::fs::create_dir_all(&self.path)
            .map_err(|e| RootError::io("create", self.path.display().to_string(), e))?;
        let path = self.path.join(".export.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| RootError::io("open", path.display().to_string(), e))?;
        match file.try_lock() {
            Ok(()) => Ok(file),
            Err(std::fs::TryLockError::WouldBlock) => Err(RootError::Locked { lock: path }),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(RootError::io("lock", path.display().to_string(), e))
            }
        }
    }

    /// Removes `.tmp-*` directories left by an export that was killed
    /// (the caller holds the lock: no other export is running).
    pub(super) fn remove_stale_work(&self) {
        let Ok(entries) = std::fs::read_dir(&self.path) else {
            return;
        };
        for entry in entries.flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(IN_PROGRESS_PREFIX)
            {
                tracing::info!(
                    "removing {}, left by an interrupted export",
                    entry.path().display()
                );
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }

    /// Puts the finished snapshot directory `staged` at `ROOT/<name>`: a
    /// rename when `take` and it is on the root's file system, else a copy
    /// into a work directory of the root, then a rename.
    pub(super) fn place(&self, staged: &Path, name: &str, take: bool) -> Result<(), RootError> {
        let target = self.path.join(name);
        if target.exists() {
            return Err(RootError::Exists { path: target });
        }
        if take && std::fs::rename(staged, &target).is_ok() {
            return sync_dir(&self.path)
                .map_err(|e| RootError::io("sync", self.path.display().to_string(), e));
        }
        let work = self.path.join(format!("{IN_PROGRESS_PREFIX}{name}"));
        let copied = (|| {
            std::fs::create_dir_all(&work)?;
            for file in std::fs::read_dir(staged)? {
                let file = file?;
                if file.file_type()?.is_file() {
                    std::fs::copy(file.path(), work.join(file.file_name()))?;
                }
            }
            std::fs::File::open(&work)?.sync_all()?;
            std::fs::rename(&work, &target)?;
            sync_dir(&self.path)
        })();
        copied.map_err(|e| {
            let _ = std::fs::remove_dir_all(&work);
            let what = format!("{} to {}", staged.display(), target.display());
            RootError::io("copy", what, e)
        })
    }

    pub(super) fn set_current(&self, name: &str) -> Result<(), RootError> {
        crate::snapshot::publish(&self.path, name)
            .map_err(|e| RootError::io("replace", format!("{}/CURRENT", self.path.display()), e))
    }

    pub(super) fn delete(&self, name: &str) -> Result<(), RootError> {
        let dir = self.path.join(name);
        // The manifest first: a half-deleted snapshot is then no longer one.
        match std::fs::remove_file(dir.join(MANIFEST)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(RootError::io("delete", name, e)),
        }
        std::fs::remove_dir_all(&dir).map_err(|e| RootError::io("delete", name, e))
    }
}

/// The manifest of the snapshot directory `dir`; `None` when it has none.
pub(super) fn manifest_in(dir: &Path) -> Result<Option<Manifest>, RootError> {
    let file = dir.join(MANIFEST);
    match std::fs::read(&file) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|source| RootError::Malformed {
                    what: file.display().to_string(),
                    source,
                })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(RootError::io("read", file.display().to_string(), e)),
    }
}
