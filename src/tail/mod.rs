//! The tail (docs/live.md): follows the indexer's database between
//! snapshots. One thread owns every state change after the first load:
//! it polls the `events` table (one `REPEATABLE READ, READ ONLY`
//! transaction a poll, `crate::export::reread` for the database side),
//! holds the re-read entities on top of the base ([`overlay::Overlay`]),
//! and builds the next base from them (a compaction) off the request path,
//! validated before it is swapped in like any snapshot. Snapshots the
//! reloader loads come here too: replayed from their anchor before the
//! swap, so no answer ever goes backwards.
//!
//! Requests see a state only through `Live`'s atomic swap, so a poll is
//! served whole or not at all. After each changing poll the held entities
//! are laid over the served base as a live index (`graph::live`); the
//! rare change a live index cannot hold (`graph::live::NotLive`) is
//! served by a compaction at once (once the last build has rested as
//! long as it ran, or when a `cache=fresh` request waits,
//! [`Tail::barrier`]). Otherwise a compaction runs `--compact-interval`
//! after the first change it folds in.
//!
//! Cost per poll: one index probe per chain for the positions, the
//! events of the lookback window, primary-key lookups for the records,
//! tags and roles at the touched storage locations (the tables' stored
//! contract spellings found by a loose index scan), and key lookups in
//! `efp_lists` for the touched lists (those at a location found in
//! `export::locations`, read once, one scan of `efp_lists`, when the
//! tail first needs it). A list's op history is read again (one scan of
//! `events`) only when its storage location is set or moved, or an op
//! may already be in the base. A live index costs what its module doc
//! says (milliseconds); a compaction a rewrite of the base's files
//! (`rewrite.rs`) plus a load.

mod compaction;
#[cfg(test)]
mod live_chain_tests;
mod overlay;
mod poll;
#[cfg(test)]
mod refresh_tests;
mod rewrite;
mod state;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::graph::Graph;
use crate::live::{Live, Origin};
use crate::snapshot::{Anchor, Position, SourceJson};

pub use overlay::Overlay;

/// The tail's settings (`serve --database-url` and its flags).
#[derive(Clone, Debug)]
pub struct TailOptions {
    pub database_url: String,
    /// Between the starts of two polls.
    pub interval: Duration,
    /// Blocks per chain read again behind the position.
    pub lookback: u64,
    /// After a changing poll, how long until its entities are compacted
    /// into the base (zero: at once).
    pub compact_interval: Duration,
    /// How long a base made from files serves before a compaction folds
    /// the entities into files again (zero: every compaction does).
    pub fold_interval: Duration,
    /// How long a `cache=fresh` request waits for its poll at most.
    pub fresh_wait: Duration,
    /// Where compactions write their snapshots (a directory of this
    /// process's own inside it).
    pub compact_dir: std::path::PathBuf,
    /// Threads a compaction's load uses (the reload pool's count).
    pub compact_threads: usize,
    /// Per statement.
    pub statement_timeout: Duration,
}

impl TailOptions {
    /// The tail's options of `serve`, when a database is given.
    pub fn from_config(config: &crate::config::ServeConfig) -> Option<TailOptions> {
        Some(TailOptions {
            database_url: config.database_url()?,
            interval: Duration::from_millis(config.tail_interval),
            lookback: config.tail_lookback,
            compact_interval: Duration::from_secs(config.compact_interval),
            fold_interval: Duration::from_secs(config.fold_interval),
            fresh_wait: Duration::from_millis(config.fresh_wait),
            compact_dir: config
                .compact_dir
                .clone()
                .unwrap_or_else(std::env::temp_dir)
                .join(format!("{}{}", compaction::DIR_PREFIX, std::process::id())),
            compact_threads: config.reload_threads(),
            statement_timeout: Duration::from_secs(30),
        })
    }
}

/// Polls while `cache=fresh` requests wait start at most this often.
const FRESH_POLL_SPACING: Duration = Duration::from_millis(100);
/// The first wait after a failed poll; doubled per failure.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait between tries.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// What `/snapshot` shows of the tail.
#[derive(Clone, Debug, Default)]
pub struct TailStatus {
    pub positions: BTreeMap<i64, Position>,
    pub db_time_ms: Option<i64>,
    pub last_poll_at_ms: Option<i64>,
    pub last_error: Option<String>,
    pub events_applied: u64,
    pub entities_live: usize,
}

/// Counters for `/metrics`.
#[derive(Default)]
pub struct TailCounters {
    pub polls_ok: AtomicU64,
    pub polls_error: AtomicU64,
    pub events: AtomicU64,
    pub fresh_ok: AtomicU64,
    pub fresh_timeout: AtomicU64,
    pub compactions_ok: AtomicU64,
    pub compactions_error: AtomicU64,
    /// Compactions that folded into files, and their wall time.
    pub folds: AtomicU64,
    pub fold_us: AtomicU64,
    pub skipped_rows: AtomicU64,
    /// Wall time of polls, successful or not, in microseconds.
    pub poll_us: AtomicU64,
    /// Wall time of compactions, in microseconds.
    pub compaction_us: AtomicU64,
    /// Live indexes served, and changes deferred to a compaction.
    pub live_ok: AtomicU64,
    pub live_deferred: AtomicU64,
    /// Wall time of live index builds, in microseconds.
    pub live_build_us: AtomicU64,
}

/// What the request side and the reloader share with the tail thread.
struct Shared {
    options: TailOptions,
    control: Mutex<Control>,
    wake: Condvar,
    /// Polls started so far; a poll's number is this after its start.
    polls_started: AtomicU64,
    /// The number of the last poll whose effects every answer holds.
    served: tokio::sync::watch::Sender<u64>,
    backing_off: AtomicBool,
    /// When the last poll succeeded (for the lag), else the start.
    last_success: Mutex<Option<Instant>>,
    started: Instant,
    status: Mutex<TailStatus>,
    counters: TailCounters,
}

#[derive(Default)]
struct Control {
    fresh_waiting: usize,
    new_base: Option<(Graph, Origin, Duration)>,
}

use crate::sync::lock;

/// The handle the server keeps: the barrier, the reloader's hand-off, the
/// status.
#[derive(Clone)]
pub struct Tail {
    shared: Arc<Shared>,
}

impl Tail {
    /// Starts the tail thread. Every snapshot the reloader loads is to be
    /// handed to [`Tail::hand_off`]; `on_swap` runs after each swap.
    pub fn start(
        options: TailOptions,
        live: Arc<Live>,
        on_swap: impl Fn(u64) + Send + 'static,
    ) -> std::io::Result<Tail> {
        let (served, _) = tokio::sync::watch::channel(0);
        let shared = Arc::new(Shared {
            options,
            control: Mutex::default(),
            wake: Condvar::new(),
            polls_started: AtomicU64::new(0),
            served,
            backing_off: AtomicBool::new(false),
            last_success: Mutex::new(None),
            started: Instant::now(),
            status: Mutex::default(),
            counters: TailCounters::default(),
        });
        compaction::clear_dirs(&shared.options.compact_dir);
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name("tail".into())
            .spawn(move || state::run(thread_shared, live, Box::new(on_swap)))?;
        Ok(Tail { shared })
    }

    /// A snapshot the reloader loaded: replayed and swapped in by the tail.
    pub fn hand_off(&self, graph: Graph, origin: Origin, took: Duration) {
        lock(&self.shared.control).new_base = Some((graph, origin, took));
        self.shared.wake.notify_all();
    }

    /// Waits until every event committed before the call is in the answers
    /// (a poll started after the call is served), at most `--fresh-wait`.
    /// `None` when it is; else the lag: milliseconds since the last
    /// successful poll.
    pub async fn barrier(&self) -> Option<u64> {
        let shared = &self.shared;
        let target = shared.polls_started.load(Ordering::SeqCst) + 1;
        let mut served = shared.served.subscribe();
        let asking = !shared.backing_off.load(Ordering::SeqCst);
        if asking {
            lock(&shared.control).fresh_waiting += 1;
            shared.wake.notify_all();
        }
        let reached =
            tokio::time::timeout(shared.options.fresh_wait, served.wait_for(|&p| p >= target))
                .await
                .is_ok_and(|r| r.is_ok());
        if asking {
            lock(&shared.control).fresh_waiting -= 1;
        }
        if reached {
            shared.counters.fresh_ok.fetch_add(1, Ordering::Relaxed);
            None
        } else {
            shared
                .counters
                .fresh_timeout
                .fetch_add(1, Ordering::Relaxed);
            Some(self.lag_ms())
        }
    }

    /// Milliseconds since the last successful poll (since the start when
    /// none succeeded yet).
    pub fn lag_ms(&self) -> u64 {
        lock(&self.shared.last_success)
            .unwrap_or(self.shared.started)
            .elapsed()
            .as_millis() as u64
    }

    /// Removes the compactions' directory (at shutdown: the process
    /// exits without dropping the base that holds it).
    pub fn remove_compactions(&self) {
        let _ = std::fs::remove_dir_all(&self.shared.options.compact_dir);
    }

    pub fn status(&self) -> TailStatus {
        lock(&self.shared.status).clone()
    }

    pub fn counters(&self) -> &TailCounters {
        &self.shared.counters
    }

    /// `/snapshot`'s `tail` object.
    pub fn to_json(&self) -> serde_json::Value {
        let status = self.status();
        let lag = lock(&self.shared.last_success).map(|t| t.elapsed().as_millis() as u64);
        let positions = Anchor {
            positions: status.positions,
            db_time_ms: 0,
        }
        .to_json();
        let SourceJson { positions, .. } = positions;
        serde_json::json!({
            "positions": positions,
            "db_time": status.db_time_ms.map(crate::time::format_iso_ms),
            "lag_ms": lag,
            "last_poll_at": status.last_poll_at_ms.map(crate::time::format_iso_ms),
            "last_error": status.last_error,
            "events_applied": status.events_applied,
            "entities_live": status.entities_live,
        })
    }
}
