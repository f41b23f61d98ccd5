//! Compactions: the base's rows with the held entities laid over them,
//! built into the next base on a thread of their own, so the tail goes on
//! polling (and serving live indexes over the old base) while one runs.
//! A compaction folds in the entities held at its start; what later polls
//! re-read stays held over the new base (`Overlay::after`).
//!
//! A compacted base has no files of its own: it is the snapshot the tail
//! took (its origin) with every entity folded into it since, so a
//! compaction reads the origin's rows again and lays over them the
//! folded entities and the held ones (newest wins), rather than keeping
//! a base's rows in memory between compactions.
//!
//! Cost: a read of the origin's rows, their merge with the entities in
//! place (the new ops merged into the base's in one pass where the base's
//! are in export order), their encoding, and a graph build; peak memory
//! the old graph, the rows and their encoded files, then those files and
//! the new graph.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{lock, Overlay, Shared};
use crate::graph::Graph;
use crate::live::Origin;
use crate::snapshot::{Anchor, Position, SnapshotError, SnapshotErrorKind};

/// What the served base is made of: the origin snapshot's files and the
/// entities folded into it since (none for the snapshot itself).
#[derive(Clone)]
pub(super) struct BaseRows {
    pub(super) origin: Origin,
    pub(super) folded: Overlay,
}

/// What one compaction builds from.
pub(super) struct Job {
    pub(super) base: BaseRows,
    pub(super) overlay: Overlay,
    pub(super) name: String,
    /// The last folded poll's database time: the new base's `created_at`.
    pub(super) created_at_ms: i64,
    pub(super) positions: BTreeMap<i64, Position>,
}

/// The next base and what it is made of.
pub(super) type Built = (Graph, BaseRows);

/// Builds the next base (on the calling thread).
pub(super) fn build(job: Job) -> Result<Built, SnapshotError> {
    let BaseRows { origin, mut folded } = job.base;
    folded.absorb(job.overlay);
    let rows = folded.merge(origin.read_rows()?);
    let mut graph = Graph::from_tables(job.name, job.created_at_ms, rows)?;
    graph.anchor = Some(Anchor {
        positions: job.positions,
        db_time_ms: job.created_at_ms,
    });
    Ok((graph, BaseRows { origin, folded }))
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
        let positions = job.positions.clone();
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        let thread = std::thread::Builder::new()
            .name("compaction".into())
            .spawn(move || {
                let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    crate::allocator::while_loading(|| build(job))
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
