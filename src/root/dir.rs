//! A snapshot root on the local disk: `ROOT/<name>/` per snapshot,
//! `ROOT/CURRENT` naming the served one, replaced by an atomic rename.
//! Publishers serialise on an exclusive lock of `ROOT/.export.lock`: two
//! on one root would otherwise race on `CURRENT` and retention.

use std::path::{Path, PathBuf};

use super::Listed;
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

    pub(super) fn read_current(&self) -> Result<Option<String>, String> {
        let file = self.path.join("CURRENT");
        match std::fs::read_to_string(&file) {
            Ok(text) => Ok(Some(text.trim().to_owned())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", file.display())),
        }
    }

    pub(super) fn manifest(&self, name: &str) -> Result<Option<Manifest>, String> {
        manifest_in(&self.snapshot_dir(name))
    }

    /// Every snapshot directory of the root (a valid name holding a
    /// readable manifest; an export's work in progress excepted).
    pub(super) fn list(&self) -> Result<Vec<Listed>, String> {
        let entries = std::fs::read_dir(&self.path)
            .map_err(|e| format!("cannot list {}: {e}", self.path.display()))?;
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
    pub(super) fn lock(&self) -> Result<std::fs::File, String> {
        std::fs::create_dir_all(&self.path)
            .map_err(|e| format!("cannot create {}: {e}", self.path.display()))?;
        let path = self.path.join(".export.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        match file.try_lock() {
            Ok(()) => Ok(file),
            Err(std::fs::TryLockError::WouldBlock) => Err(format!(
                "another publisher holds {} (one exporter per snapshot root)",
                path.display()
            )),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(format!("cannot lock {}: {e}", path.display()))
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
    pub(super) fn place(&self, staged: &Path, name: &str, take: bool) -> Result<(), String> {
        let target = self.path.join(name);
        if target.exists() {
            return Err(format!(
                "{} already exists (a published snapshot is never replaced)",
                target.display()
            ));
        }
        if take && std::fs::rename(staged, &target).is_ok() {
            return sync_dir(&self.path)
                .map_err(|e| format!("cannot sync {}: {e}", self.path.display()));
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
            format!(
                "cannot copy {} to {}: {e}",
                staged.display(),
                target.display()
            )
        })
    }

    pub(super) fn set_current(&self, name: &str) -> Result<(), String> {
        crate::snapshot::publish(&self.path, name)
            .map_err(|e| format!("cannot replace {}/CURRENT: {e}", self.path.display()))
    }

    pub(super) fn delete(&self, name: &str) -> Result<(), String> {
        let dir = self.path.join(name);
        // The manifest first: a half-deleted snapshot is then no longer one.
        match std::fs::remove_file(dir.join(MANIFEST)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot delete {name}: {e}")),
        }
        std::fs::remove_dir_all(&dir).map_err(|e| format!("cannot delete {name}: {e}"))
    }
}

/// The manifest of the snapshot directory `dir`; `None` when it has none.
pub(super) fn manifest_in(dir: &Path) -> Result<Option<Manifest>, String> {
    let file = dir.join(MANIFEST);
    match std::fs::read(&file) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("{} is malformed: {e}", file.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", file.display())),
    }
}
