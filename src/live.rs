//! The live snapshot: built completely off the request path, validated,
//! then published with one atomic pointer swap (arc-swap). Requests take
//! an `Arc` of the current one and finish on it, whatever happens after.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwapOption;

use crate::graph::Graph;
use crate::snapshot::{self, SnapshotError};

/// A loaded snapshot and facts about its load.
#[derive(Debug)]
pub struct Served {
    /// 1 for the first snapshot served, +1 per swap.
    pub generation: u64,
    pub graph: Graph,
    pub loaded_at_ms: i64,
    pub load_duration: Duration,
}

#[derive(Default)]
pub struct Live {
    current: ArcSwapOption<Served>,
    generations: AtomicU64,
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Reads, validates and indexes the snapshot at `path` (a root or a
/// snapshot directory) on the current rayon pool.
pub fn build(path: &Path) -> Result<(Graph, Duration), SnapshotError> {
    let started = Instant::now();
    let loaded = snapshot::load(path)?;
    let graph = Graph::build(loaded)?;
    Ok((graph, started.elapsed()))
}

impl Live {
    /// The snapshot requests should use now (`None` before the first load).
    pub fn current(&self) -> Option<Arc<Served>> {
        self.current.load_full()
    }

    /// Publishes a fully built graph; returns its generation.
    pub fn publish(&self, graph: Graph, load_duration: Duration) -> u64 {
        let generation = self.generations.fetch_add(1, Ordering::SeqCst) + 1;
        self.current.store(Some(Arc::new(Served {
            generation,
            graph,
            loaded_at_ms: now_ms(),
            load_duration,
        })));
        generation
    }
}
