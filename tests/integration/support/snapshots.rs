//! Snapshots on disk for the tests: the fixed `created_at` every
//! hand-made snapshot carries, the wall clock, and writing a snapshot with
//! or without pointing CURRENT at it.

use std::path::{Path, PathBuf};

use followgraph::snapshot::{publish, write_snapshot, Tables, WriteOptions};

/// `2026-11-20T12:00:00.000Z` (date -u -d 2026-11-20T12:00:00Z +%s = 1795176000).
pub const CREATED_AT_MS: i64 = 1_795_176_000_000;
pub const CREATED_AT: &str = "2026-11-20T12:00:00.000Z";

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Writes `tables` as `<root>/<name>` without publishing it.
pub fn write_unpublished(
    root: &Path,
    name: &str,
    created_at_ms: i64,
    tables: &Tables,
    checksums: bool,
) -> PathBuf {
    let dir = root.join(name);
    write_snapshot(
        &dir,
        created_at_ms,
        tables,
        &WriteOptions {
            checksums,
            ..WriteOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("write_snapshot({name}) failed: {e}"));
    dir
}

/// Writes `tables` as snapshot `name` under `root` (with checksums) and
/// points CURRENT at it.
pub fn write_and_publish(root: &Path, name: &str, created_at_ms: i64, tables: &Tables) {
    write_unpublished(root, name, created_at_ms, tables, true);
    publish(root, name).unwrap_or_else(|e| panic!("publish({name}) failed: {e}"));
}
