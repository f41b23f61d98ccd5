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
    let read = started.elapsed();
    let graph = Graph::build(loaded)?;
    tracing::debug!(
        read_ms = read.as_millis() as u64,
        index_ms = (started.elapsed() - read).as_millis() as u64,
        "snapshot read and indexed"
    );
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

/// Serialised reloads on a thread of their own: one load at a time, and a
/// trigger that arrives during a load queues at most one more.
pub struct Reloader {
    trigger: std::sync::mpsc::SyncSender<()>,
}

impl Reloader {
    /// Starts the reload thread. `on_swap` runs after each successful swap
    /// (the HTTP layer drops its cache there).
    pub fn start(
        path: std::path::PathBuf,
        live: Arc<Live>,
        load_threads: usize,
        on_swap: impl Fn(u64) + Send + 'static,
    ) -> std::io::Result<Reloader> {
        let (trigger, triggers) = std::sync::mpsc::sync_channel::<()>(1);
        // Loads run on their own rayon pool so that a reload never competes
        // for the threads of anything else using the global pool.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(load_threads.max(1))
            .thread_name(|i| format!("snapshot-load-{i}"))
            .build()
            .map_err(std::io::Error::other)?;
        std::thread::Builder::new()
            .name("snapshot-reloader".into())
            .spawn(move || {
                for () in triggers {
                    match pool.install(|| build(&path)) {
                        Ok((graph, took)) => {
                            let (name, accounts, records) =
                                (graph.name.clone(), graph.account_count(), graph.record_count());
                            let generation = live.publish(graph, took);
                            on_swap(generation);
                            tracing::info!(
                                snapshot = %name,
                                generation,
                                accounts,
                                records,
                                load_ms = took.as_millis() as u64,
                                "snapshot reloaded"
                            );
                        }
                        Err(e) => tracing::error!(error = %e, "snapshot rejected; still serving the previous one"),
                    }
                }
            })?;
        Ok(Reloader { trigger })
    }

    /// Asks for a reload; a no-op when one is already queued.
    pub fn request(&self) {
        let _ = self.trigger.try_send(());
    }
}
