//! The root's commands: `publish DIR ROOT`, `snapshots list ROOT`,
//! `promote ROOT NAME`.

use super::{RootError, SnapshotRoot};
use crate::config::{ListConfig, PromoteConfig, PublishConfig};

/// `followgraph publish DIR ROOT`: the directory's name becomes the
/// snapshot's.
pub fn publish(config: &PublishConfig) -> Result<(), RootError> {
    let root = SnapshotRoot::open(&config.root, &config.store)?;
    let name = config
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| RootError::NoSnapshotName {
            dir: config.dir.clone(),
        })?;
    let _lock = root.lock()?;
    root.publish(&config.dir, &name, config.shrink.guard(), false)?;
    eprintln!("published {}", root.location(&name).display());
    match config.keep {
        Some(keep) => root
            .retain(&name, keep)
            .map_err(|e| RootError::Keep(Box::new(e))),
        None => Ok(()),
    }
}

/// `followgraph snapshots list ROOT`: a table on standard output, or one
/// JSON object per line with `--json`.
pub fn list(config: &ListConfig) -> Result<(), RootError> {
    let root = SnapshotRoot::open(&config.root, &config.store)?;
    let current = root.current()?;
    let listed = root.list()?;
    let mut out = String::new();
    if config.json {
        for s in &listed {
            let line = serde_json::json!({
                "name": s.name,
                "created_at": s.created_at,
                "rows": s.rows,
                "bytes": s.bytes,
                "current": current.as_deref() == Some(s.name.as_str()),
            });
            out.push_str(&format!("{line}\n"));
        }
    } else {
        let width = listed
            .iter()
            .map(|s| s.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        out.push_str(&format!(
            "{:<width$}  {:<24}  {:>12}  {:>14}  CURRENT\n",
            "NAME", "CREATED", "ROWS", "BYTES"
        ));
        for s in &listed {
            let mark = if current.as_deref() == Some(s.name.as_str()) {
                "*"
            } else {
                ""
            };
            out.push_str(&format!(
                "{:<width$}  {:<24}  {:>12}  {:>14}  {mark}\n",
                s.name, s.created_at, s.rows, s.bytes
            ));
        }
    }
    print!("{out}");
    if current.is_some_and(|c| !listed.iter().any(|s| s.name == c)) {
        eprintln!(
            "warning: {}/CURRENT names no published snapshot",
            root.describe()
        );
    }
    Ok(())
}

/// `followgraph promote ROOT NAME`.
pub fn promote(config: &PromoteConfig) -> Result<(), RootError> {
    let root = SnapshotRoot::open(&config.root, &config.store)?;
    let _lock = root.lock()?;
    let before = root.promote(&config.name)?;
    eprintln!(
        "{}/CURRENT: {} -> {}",
        root.describe(),
        before.as_deref().unwrap_or("(none)"),
        config.name
    );
    Ok(())
}
