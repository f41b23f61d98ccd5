//! The live snapshot: built completely off the request path, validated,
//! then published with one atomic pointer swap (arc-swap). Requests take
//! an `Arc` of the current one and finish on it, whatever happens after.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwapOption;

use crate::graph::Graph;
use crate::root::{Fingerprint, SnapshotRoot};
use crate::snapshot::{SnapshotError, SnapshotErrorKind};
use crate::sync::lock;

/// A loaded snapshot and facts about its load.
#[derive(Debug)]
pub struct Served {
    /// 1 for the first snapshot served, +1 per swap.
    pub generation: u64,
    pub graph: Graph,
    pub loaded_at_ms: i64,
    pub load_duration: Duration,
}

/// The live snapshot and the record of loads, for `/ready`, `/metrics`
/// and `/snapshot`.
#[derive(Default)]
pub struct Live {
    current: ArcSwapOption<Served>,
    generations: AtomicU64,
    pub loads_total: AtomicU64,
    pub load_failures_total: AtomicU64,
    last_error: std::sync::Mutex<Option<String>>,
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Where the served snapshot comes from: a snapshot root (or one
/// snapshot directory) on disk or on object storage.
pub type SnapshotSource = Arc<SnapshotRoot>;

/// Where one served base's files are: what a compaction rewrites into
/// the next base. A loaded snapshot's, or a compaction's own directory.
#[derive(Clone, Debug)]
pub struct Origin(OriginAt);

#[derive(Clone, Debug)]
enum OriginAt {
    Snapshot {
        root: Arc<SnapshotRoot>,
        name: String,
    },
    Scratch(Arc<ScratchDir>),
}

impl Origin {
    /// The base's files, opened again.
    pub fn with_files<T>(
        &self,
        f: impl FnOnce(&dyn crate::snapshot::SnapshotFiles) -> Result<T, SnapshotError>,
    ) -> Result<T, SnapshotError> {
        match &self.0 {
            OriginAt::Snapshot { root, name } => {
                let opened = root.open_snapshot(Some(name))?;
                opened.with_files(f)
            }
            OriginAt::Scratch(dir) => f(&crate::snapshot::DirFiles(&dir.0)),
        }
    }

    /// A compaction's directory; removed when the last base made from it
    /// goes.
    pub fn scratch(dir: ScratchDir) -> Origin {
        Origin(OriginAt::Scratch(Arc::new(dir)))
    }
}

/// A directory this process wrote and removes when dropped.
#[derive(Debug)]
pub struct ScratchDir(pub std::path::PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(dir = %self.0.display(), error = %e, "cannot remove a compaction's directory");
            }
        }
    }
}

/// Reads, validates and indexes the snapshot `root` points at now.
fn load(root: &SnapshotSource) -> Result<(Graph, Origin), SnapshotError> {
    let opened = root.open_snapshot(None)?;
    let graph = opened
        .with_files(|files| Graph::load(files, opened.name.clone(), opened.location.clone()))?;
    Ok((
        graph,
        Origin(OriginAt::Snapshot {
            root: root.clone(),
            name: opened.name,
        }),
    ))
}

/// Reads, validates and indexes the snapshot `source` points at on the
/// current rayon pool.
pub fn build(source: &SnapshotSource) -> Result<(Graph, Origin, Duration), SnapshotError> {
    let started = Instant::now();
    let (graph, origin) = crate::allocator::while_loading(|| load(source))?;
    tracing::debug!(
        ms = started.elapsed().as_millis() as u64,
        "snapshot read and indexed"
    );
    if tracing::enabled!(tracing::Level::DEBUG) {
        for (part, bytes) in graph.memory_by_part() {
            tracing::debug!(part, mib = bytes >> 20, "graph memory");
        }
    }
    Ok((graph, origin, started.elapsed()))
}

impl Live {
    /// The snapshot requests should use now (`None` before the first load).
    pub fn current(&self) -> Option<Arc<Served>> {
        self.current.load_full()
    }

    /// The same, borrowed for one synchronous request: no reference count
    /// is touched (`load_full` bumps one counter shared by every worker
    /// thread, a contended cache line per request). Never hold it across
    /// an `.await`: a reload's old graph is freed when the last guard goes.
    pub fn guard(&self) -> arc_swap::Guard<Option<Arc<Served>>> {
        self.current.load()
    }

    /// The error of the last load when it failed (cleared by a success).
    pub fn last_error(&self) -> Option<String> {
        lock(&self.last_error).clone()
    }

    fn record_failure(&self, error: &SnapshotError) {
        self.load_failures_total.fetch_add(1, Ordering::Relaxed);
        *lock(&self.last_error) = Some(error.to_string());
    }

    /// Publishes a fully built graph; returns its generation and the
    /// snapshot it replaced.
    pub fn publish(&self, graph: Graph, load_duration: Duration) -> (u64, Option<Arc<Served>>) {
        self.loads_total.fetch_add(1, Ordering::Relaxed);
        *lock(&self.last_error) = None;
        let generation = self.generations.fetch_add(1, Ordering::SeqCst) + 1;
        let old = self.current.swap(Some(Arc::new(Served {
            generation,
            graph,
            loaded_at_ms: now_ms(),
            load_duration,
        })));
        (generation, old)
    }
}

impl Live {
    /// Publishes the served snapshot with new live entities on top: a new
    /// generation (answers cached before it are stale), not a load.
    pub fn publish_live(&self, graph: Graph) -> (u64, Option<Arc<Served>>) {
        let current = self.current.load_full();
        let generation = self.generations.fetch_add(1, Ordering::SeqCst) + 1;
        let old = self.current.swap(Some(Arc::new(Served {
            generation,
            graph,
            loaded_at_ms: current.as_ref().map_or_else(now_ms, |c| c.loaded_at_ms),
            load_duration: current.as_ref().map_or(Duration::ZERO, |c| c.load_duration),
        })));
        (generation, old)
    }
}

/// Frees a replaced snapshot here, on the reload thread: freeing
/// gigabytes takes long enough that the request which happened to hold the
/// last reference would stall. Requests in flight finish within
/// milliseconds; wait for them to let go first.
pub fn retire(old: Option<Arc<Served>>) {
    let Some(old) = old else { return };
    let deadline = Instant::now() + Duration::from_secs(60);
    while Arc::strong_count(&old) > 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(old);
}

/// What asked for a reload. A signal always reloads; a poll only when the
/// snapshot changed since the last load attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Trigger {
    Poll,
    Signal,
    Initial,
}

#[derive(Default)]
struct Pending {
    trigger: Option<Trigger>,
    /// The fingerprint of the last load attempt (good or bad).
    attempted: Option<Fingerprint>,
}

/// Serialised reloads on a thread of their own: one load at a time, and
/// triggers that arrive during a load fold into at most one more.
pub struct Reloader {
    shared: Arc<(std::sync::Mutex<Pending>, std::sync::Condvar)>,
    root: SnapshotSource,
}

/// Options of the reload thread.
pub struct ReloadOptions {
    /// Threads for the first load, when nothing is served yet.
    pub first_load_threads: usize,
    /// Threads for reloads, which run beside live traffic: fewer, so the
    /// request threads keep most of the CPU.
    pub reload_threads: usize,
    /// Test aid: sleep this long before every load.
    pub delay: Duration,
}

/// Takes a loaded snapshot instead of publishing it (the tail replays the
/// log onto it first).
pub type HandOff = Arc<dyn Fn(Graph, Origin, Duration) + Send + Sync>;

impl Reloader {
    /// Starts the reload thread and queues the first load. `on_swap` runs
    /// after each successful swap (the HTTP layer drops its cache there);
    /// `on_first_failure` runs when the very first load fails.
    pub fn start(
        root: SnapshotSource,
        live: Arc<Live>,
        options: ReloadOptions,
        hand_off: Option<HandOff>,
        on_swap: impl Fn(u64) + Send + 'static,
        on_first_failure: impl FnOnce(&SnapshotError) + Send + 'static,
    ) -> std::io::Result<Reloader> {
        let shared: Arc<(std::sync::Mutex<Pending>, std::sync::Condvar)> = Arc::default();
        // Loads run on rayon pools of their own, never the global pool.
        let pool = |threads: usize, name: &'static str| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads.max(1))
                .thread_name(move |i| format!("{name}-{i}"))
                .build()
                .map_err(std::io::Error::other)
        };
        let first_pool = pool(options.first_load_threads, "snapshot-first-load")?;
        let reload_pool = pool(options.reload_threads, "snapshot-reload")?;
        let reloader = Reloader {
            shared: shared.clone(),
            root: root.clone(),
        };
        reloader.request(Trigger::Initial);
        let mut on_first_failure = Some(on_first_failure);
        std::thread::Builder::new()
            .name("snapshot-reloader".into())
            .spawn(move || loop {
                let trigger = {
                    let (mutex, wake) = &*shared;
                    let mut pending = lock(mutex);
                    loop {
                        if let Some(t) = pending.trigger.take() {
                            break t;
                        }
                        pending = crate::sync::wait(wake, pending);
                    }
                };
                let fingerprint = root.fingerprint();
                {
                    let mut pending = lock(&shared.0);
                    if trigger == Trigger::Poll && pending.attempted.as_ref() == Some(&fingerprint) {
                        continue;
                    }
                    pending.attempted = Some(fingerprint);
                }
                std::thread::sleep(options.delay);
                // A panic while loading (a bug, or a dependency tripping on a
                // hostile file) is a failed load, not the end of reloading.
                let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let pool = if trigger == Trigger::Initial {
                        &first_pool
                    } else {
                        &reload_pool
                    };
                    pool.install(|| build(&root))
                }))
                .unwrap_or_else(|_| {
                    Err(SnapshotError::new(
                        SnapshotErrorKind::Internal,
                        root.describe(),
                        "the load panicked (see the log above)",
                    ))
                });
                match built {
                    Ok((graph, origin, took)) => {
                        if let Some(hand_off) = &hand_off {
                            tracing::info!(snapshot = %graph.name, load_ms = took.as_millis() as u64, ?trigger, "snapshot loaded; handed to the tail");
                            hand_off(graph, origin, took);
                            continue;
                        }
                        let (name, accounts, records, ops) = (
                            graph.name.clone(),
                            graph.account_count(),
                            graph.record_count(),
                            graph.notification_count(),
                        );
                        let (generation, old) = live.publish(graph, took);
                        on_swap(generation);
                        retire(old);
                        tracing::info!(
                            snapshot = %name,
                            generation,
                            accounts,
                            records,
                            ops,
                            load_ms = took.as_millis() as u64,
                            ?trigger,
                            "snapshot loaded"
                        );
                    }
                    Err(e) => {
                        live.record_failure(&e);
                        // The store was unreachable mid-download: the same
                        // snapshot is retried at the next poll.
                        if e.kind == SnapshotErrorKind::StoreUnreachable {
                            lock(&shared.0).attempted = None;
                        }
                        tracing::error!(error = %e, ?trigger, "snapshot rejected; the previous one stays live");
                        if trigger == Trigger::Initial {
                            if let Some(fail) = on_first_failure.take() {
                                fail(&e);
                            }
                        }
                    }
                }
            })?;
        Ok(reloader)
    }

    /// Asks for a reload; triggers pending together fold into one (the
    /// strongest: a signal wins over a poll).
    pub fn request(&self, trigger: Trigger) {
        let (mutex, wake) = &*self.shared;
        let mut pending = lock(mutex);
        pending.trigger = pending.trigger.max(Some(trigger));
        wake.notify_one();
    }

    /// Polls the root every `interval`: a changed fingerprint (another
    /// snapshot named by CURRENT, or its manifest rewritten) queues a
    /// reload. The same broken snapshot is not retried until it changes.
    pub fn poll_every(self: &Arc<Self>, interval: Duration) -> std::io::Result<()> {
        let reloader = self.clone();
        std::thread::Builder::new()
            .name("snapshot-poller".into())
            .spawn(move || loop {
                std::thread::sleep(interval);
                let now = reloader.root.fingerprint();
                let changed = {
                    let pending = lock(&reloader.shared.0);
                    pending.attempted.as_ref() != Some(&now)
                };
                if changed {
                    tracing::info!("snapshot changed on disk; reloading");
                    reloader.request(Trigger::Poll);
                }
            })
            .map(|_| ())
    }
}
