//! Compactions, on a thread of their own, so the tail goes on polling
//! (and serving live indexes over the old base) while one runs. Two
//! kinds:
//! - a **refresh** recomputes the compacted values over the base and
//!   the entities held at its start, in memory (`graph/compacted.rs`);
//!   the entities stay held over the same base files;
//! - a **fold** writes the base's files with the held entities laid over
//!   them into a directory of the compaction's own (`rewrite.rs`) and
//!   loads it like any snapshot; what later polls re-read stays held
//!   over the new base (`Overlay::after`). The new base's files are that
//!   directory: the next fold starts from them, and it is removed once
//!   no base is made from it.
//!
//! A refresh runs unless `--fold-interval` has passed since the base's
//! files were loaded, the live index took half a poll interval to build
//! on average since the last compaction (it grows with the entities
//! held), or the entities need files (the live index cannot hold them,
//! or the refresh cannot: `NeedsFold`, and the same job folds).
//!
//! Cost: a refresh, two live index builds and the compacted values (a
//! load's leaderboard and search phases), memory a tenth of a graph; a
//! fold, a stream through the base's list tables and their writing, then
//! a load: peak memory a reload's (the old graph and the new one being
//! built), the files on disk beside the snapshot's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{lock, rewrite, Overlay, Shared};
use crate::graph::Graph;
use crate::live::{Origin, ScratchDir};
use crate::snapshot::{Anchor, DirFiles, Position, SnapshotError, SnapshotErrorKind};

/// What one compaction builds from.
pub(super) struct Job {
    pub(super) origin: Origin,
    pub(super) overlay: Overlay,
    /// Where its directory goes (`--compact-dir`).
    pub(super) dir: PathBuf,
    pub(super) name: String,
    /// The last folded poll's database time: the new base's `created_at`.
    pub(super) created_at_ms: i64,
    pub(super) positions: BTreeMap<i64, Position>,
    /// Set when a refresh may do: the served base and graph.
    pub(super) refresh: Option<Refresh>,
}

/// What a refresh builds on.
pub(super) struct Refresh {
    /// The tail's base graph (with the compacted values it holds).
    pub(super) base: Graph,
    /// The served graph: its new accounts' ids carry over.
    pub(super) served: Option<Graph>,
}

/// The next base and its files.
pub(super) struct Built {
    pub(super) graph: Graph,
    pub(super) origin: Origin,
    /// Whether the entities were folded into files (else refreshed).
    pub(super) folded: bool,
}

/// Builds the next base on the calling thread, its load on a pool of
/// `threads` (a reload's: the request threads keep the other cores).
pub(super) fn build_with(job: Job, threads: usize) -> Result<Built, SnapshotError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("compaction-{i}"))
        .build()
        .map_err(|e| {
            SnapshotError::new(SnapshotErrorKind::Internal, "compaction", e.to_string())
        })?;
    pool.install(|| build(job))
}

fn build(job: Job) -> Result<Built, SnapshotError> {
    if let Some(refresh) = &job.refresh {
        match refreshed(&job, refresh) {
            Ok(graph) => {
                return Ok(Built {
                    graph,
                    origin: job.origin.clone(),
                    folded: false,
                })
            }
            Err(why) => {
                tracing::info!(reason = %why, "the compaction folds the entities into files")
            }
        }
    }
    fold(job)
}

/// The base with its compacted values refreshed and the held entities'
/// live index over it.
fn refreshed(job: &Job, r: &Refresh) -> Result<Graph, String> {
    let changes = job.overlay.changes();
    let held = r
        .base
        .with_live(&changes, r.served.as_ref())
        .map_err(|e| e.to_string())?;
    let base = held
        .refreshed(&changes, job.name.clone(), job.created_at_ms)
        .map_err(|e| e.to_string())?;
    base.with_live(&changes, Some(&held))
        .map_err(|e| e.to_string())
}

fn fold(job: Job) -> Result<Built, SnapshotError> {
    let anchor = Anchor {
        positions: job.positions,
        db_time_ms: job.created_at_ms,
    };
    let path = job.dir.join(&job.name);
    // Removed again if anything below fails.
    let dir = ScratchDir(path.clone());
    job.origin.with_files(|files| {
        rewrite::write(files, &job.overlay, &path, job.created_at_ms, &anchor)
    })?;
    // The load peaks as a reload does: nothing else of the job is needed.
    drop((job.overlay, job.refresh));
    let graph = Graph::load(&DirFiles(&path), job.name, path.clone())?;
    Ok(Built {
        graph,
        origin: Origin::scratch(dir),
        folded: true,
    })
}

/// The `n`th compaction's name over base `base`: `snap-x+liveN` (of
/// `snap-x` or of an earlier `snap-x+liveM`).
pub(super) fn name(base: &str, n: u64) -> String {
    let stem = base.split_once("+live").map_or(base, |(stem, _)| stem);
    format!("{stem}+live{n}")
}

/// The name of a process's compaction directory, before its pid.
pub(super) const DIR_PREFIX: &str = "followgraph-compactions-";

/// Empties `dir` (this process's compaction directory) and removes those
/// of processes that are gone: a process that was killed leaves its own
/// behind.
pub(super) fn clear_dirs(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    let (Some(root), Some(own)) = (dir.parent(), dir.file_name()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let proc = Path::new("/proc");
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name.to_str().and_then(|n| n.strip_prefix(DIR_PREFIX));
        let Some(pid) = pid.and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if name != own && proc.is_dir() && !proc.join(pid.to_string()).exists() {
            tracing::info!(dir = %entry.path().display(), "removing a gone process's compactions");
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A compaction running on its own thread.
pub(super) struct Compaction {
    /// The last poll it folds in, and the positions then.
    pub(super) through: u64,
    pub(super) positions: BTreeMap<i64, Position>,
    started: Instant,
    done: Arc<AtomicBool>,
    thread: JoinHandle<Result<Built, SnapshotError>>,
}

impl Compaction {
    /// Starts `job`, which folds in the polls up to `through`; the tail is
    /// woken when it ends.
    pub(super) fn start(job: Job, through: u64, shared: Arc<Shared>) -> std::io::Result<Self> {
        let threads = shared.options.compact_threads;
        let positions = job.positions.clone();
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        let thread = std::thread::Builder::new()
            .name("compaction".into())
            .spawn(move || {
                let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    crate::allocator::while_loading(|| build_with(job, threads))
                }))
                .unwrap_or_else(|_| {
                    Err(SnapshotError::new(
                        SnapshotErrorKind::Internal,
                        "compaction",
                        "the build panicked (see the log above)",
                    ))
                });
                flag.store(true, Ordering::SeqCst);
                // Under the lock the tail waits with: no lost wake-up.
                let _control = lock(&shared.control);
                shared.wake.notify_all();
                built
            })?;
        Ok(Compaction {
            through,
            positions,
            started: Instant::now(),
            done,
            thread,
        })
    }

    pub(super) fn is_done(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }

    /// Its result and how long it ran (waits for it).
    pub(super) fn finish(self) -> (Result<Built, SnapshotError>, Duration) {
        let took = self.started.elapsed();
        let built = self.thread.join().unwrap_or_else(|_| {
            Err(SnapshotError::new(
                SnapshotErrorKind::Internal,
                "compaction",
                "the compaction thread died",
            ))
        });
        (built, took)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_empties_its_own_directory_and_removes_gone_processes() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = |name: &str| {
            let d = root.path().join(name);
            std::fs::create_dir_all(d.join("snap-a+live1")).expect("mkdir");
            d
        };
        let own = dir(&format!("{DIR_PREFIX}{}", std::process::id()));
        // pid_max is at most 2^22: no process has this one.
        let gone = dir(&format!("{DIR_PREFIX}4194305"));
        let alive = dir(&format!("{DIR_PREFIX}1"));
        let other = dir("something-else-4194305");
        clear_dirs(&own);
        assert!(!own.exists() && !gone.exists());
        assert!(alive.exists() && other.exists());
    }
}
