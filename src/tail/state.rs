//! The tail thread: its positions, the keys applied within the lookback,
//! the held entities and the base they lie on; the loop that polls,
//! compacts, takes new snapshots and backs off.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_postgres::Client;

use super::compaction::{self, Built, Compaction, Job, Refresh};
use super::{lock, Overlay, Shared, FIRST_BACKOFF, FRESH_POLL_SPACING, MAX_BACKOFF};
use crate::export::locations::ListLocations;
use crate::graph::Graph;
use crate::live::{now_ms, retire, Live, Origin};
use crate::snapshot::{Position, SnapshotError, SnapshotErrorKind};

/// The pause after a failed compaction.
const COMPACT_RETRY: Duration = Duration::from_secs(5);

/// The tail's state before a new snapshot, put back when its replay
/// fails.
struct Saved {
    base: Option<Origin>,
    base_graph: Option<Graph>,
    base_name: String,
    overlay: Overlay,
    positions: Option<BTreeMap<i64, Position>>,
    base_positions: BTreeMap<i64, Position>,
    applied: BTreeMap<i64, BTreeSet<Position>>,
    unserved_since: Option<Instant>,
    held_since: Option<Instant>,
}

impl Saved {
    fn restore(self, state: &mut State) {
        state.base = self.base;
        state.base_graph = self.base_graph;
        state.base_name = self.base_name;
        state.overlay = self.overlay;
        state.positions = self.positions;
        state.base_positions = self.base_positions;
        state.applied = self.applied;
        state.unserved_since = self.unserved_since;
        state.held_since = self.held_since;
        lock(&state.shared.status).entities_live = state.overlay.entities();
    }
}

struct State {
    /// A loaded snapshot whose replay failed: tried again at the next poll.
    pending_base: Option<(Graph, Origin, Duration)>,
    /// The first snapshot's replay is served as soon as it is read.
    replaying: bool,
    /// A later snapshot is being replayed before its swap.
    swapping: bool,
    shared: Arc<Shared>,
    live: Arc<Live>,
    on_swap: Box<dyn Fn(u64) + Send>,
    runtime: tokio::runtime::Runtime,
    client: Option<Client>,
    /// None until the first poll places the tail (from the base's anchor,
    /// else the database's positions then).
    positions: Option<BTreeMap<i64, Position>>,
    /// Positions up to which the base may hold events: an op at or below
    /// them is read again with its list's history, never appended twice.
    base_positions: BTreeMap<i64, Position>,
    applied: BTreeMap<i64, BTreeSet<Position>>,
    /// Which lists each storage location holds (read when first needed).
    locations: Option<ListLocations>,
    overlay: Overlay,
    base: Option<Origin>,
    /// The base's graph (no live index): what live indexes lie over.
    base_graph: Option<Graph>,
    /// A compaction running off this thread.
    compacting: Option<Compaction>,
    base_name: String,
    /// The first poll whose entities are not yet served, and when (they
    /// wait for a compaction: the live index cannot hold them).
    unserved_since: Option<Instant>,
    /// Since when entities are held on top of the base.
    held_since: Option<Instant>,
    last_poll: Option<(u64, i64)>,
    next_poll: Instant,
    backoff: Option<Duration>,
    compactions: u64,
    /// After a failed compaction, the next waits until then.
    compact_not_before: Instant,
    /// When the last build (load or compaction) ended and how long it
    /// took: the next compaction may start once as long has passed.
    last_build: (Instant, Duration),
    /// When the base's files were last loaded (a snapshot or a fold):
    /// compactions refresh in memory until `--fold-interval` has passed.
    folded_at: Instant,
    /// Live index builds since the last compaction started: how many,
    /// and their total time.
    live_builds: (u32, Duration),
}

pub(super) fn run(shared: Arc<Shared>, live: Arc<Live>, on_swap: Box<dyn Fn(u64) + Send>) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            tracing::error!("the tail cannot start its runtime: {e}");
            return;
        }
    };
    let mut state = State {
        pending_base: None,
        replaying: false,
        swapping: false,
        shared,
        live,
        on_swap,
        runtime,
        client: None,
        positions: None,
        base_positions: BTreeMap::new(),
        applied: BTreeMap::new(),
        locations: None,
        overlay: Overlay::default(),
        base: None,
        base_graph: None,
        compacting: None,
        base_name: String::new(),
        unserved_since: None,
        held_since: None,
        last_poll: None,
        next_poll: Instant::now(),
        backoff: None,
        compactions: 0,
        compact_not_before: Instant::now(),
        last_build: (Instant::now(), Duration::ZERO),
        folded_at: Instant::now(),
        live_builds: (0, Duration::ZERO),
    };
    state.run();
}

impl State {
    fn run(&mut self) {
        loop {
            let (new_base, fresh) = self.wait();
            if let Some((graph, origin, took)) = new_base {
                self.take_base(graph, origin, took);
            }
            // Nothing to tail before the first snapshot is served.
            if self.base.is_none() {
                continue;
            }
            if Instant::now() >= self.next_poll {
                if let Some((graph, origin, took)) = self.pending_base.take() {
                    self.take_base(graph, origin, took);
                    continue;
                }
            }
            if Instant::now() >= self.next_poll || (fresh && self.backoff.is_none()) {
                self.poll();
            }
            if self.compacting.as_ref().is_some_and(Compaction::is_done) {
                self.finish_compaction();
            }
            if self.compacting.is_none()
                && (self.compaction_due()
                    || (self.replaying
                        && self.unserved_since.is_some()
                        && Instant::now() >= self.compact_not_before))
            {
                self.start_compaction();
            }
            if self.last_poll.is_some() {
                self.replaying = false;
            }
        }
    }

    /// Sleeps until a poll or compaction is due, a snapshot arrives, or a
    /// `cache=fresh` request asks for a poll (at most every 100 ms).
    fn wait(&mut self) -> (Option<(Graph, Origin, Duration)>, bool) {
        let shared = self.shared.clone();
        let mut control = lock(&shared.control);
        loop {
            if let Some(base) = control.new_base.take() {
                return (Some(base), false);
            }
            let now = Instant::now();
            let fresh = control.fresh_waiting > 0 && self.backoff.is_none();
            let mut due = self.next_poll;
            if fresh {
                let spaced = self
                    .last_poll_started()
                    .map_or(now, |t| t + FRESH_POLL_SPACING);
                due = due.min(spaced);
            }
            match &self.compacting {
                Some(c) if c.is_done() => return (None, fresh),
                Some(_) => {}
                None => {
                    if let Some(at) = self.next_compaction() {
                        due = due.min(at);
                    }
                }
            }
            if self.base.is_some() && now >= due {
                return (None, fresh);
            }
            let sleep = if self.base.is_some() {
                due - now
            } else {
                Duration::from_secs(3600)
            };
            control = crate::sync::wait_timeout(&shared.wake, control, sleep);
        }
    }

    fn last_poll_started(&self) -> Option<Instant> {
        self.next_poll.checked_sub(self.shared.options.interval)
    }

    /// When the held entities are compacted: `--compact-interval` after
    /// they were first held; sooner when the live index cannot serve
    /// them, once the last build has rested as long as it ran (a cheap
    /// build runs at once, an expensive one keeps at most half a core
    /// busy).
    fn next_compaction(&self) -> Option<Instant> {
        let interval = self.shared.options.compact_interval;
        let at = match (self.unserved_since, self.held_since) {
            (Some(since), _) => {
                let (ended, took) = self.last_build;
                (since + interval).min((ended + took).max(since))
            }
            (None, Some(since)) => since + interval,
            (None, None) => return None,
        };
        Some(at.max(self.compact_not_before))
    }

    fn compaction_due(&self) -> bool {
        let Some(at) = self.next_compaction() else {
            return false;
        };
        let now = Instant::now();
        if now < self.compact_not_before {
            return false;
        }
        now >= at || (self.unserved_since.is_some() && lock(&self.shared.control).fresh_waiting > 0)
    }

    /// A snapshot from the reloader: the first is served at once (and the
    /// tail starts from its anchor); a later one is replayed from its
    /// anchor first, so no answer loses an event it already showed.
    fn take_base(&mut self, graph: Graph, origin: Origin, took: Duration) {
        let first = self.base.is_none();
        if let Some(running) = self.compacting.take() {
            // Its base is on its way out: the new snapshot is replayed
            // with every held entity instead.
            let _ = running.finish();
        }
        self.last_build = (Instant::now(), took);
        self.folded_at = Instant::now();
        self.live_builds = (0, Duration::ZERO);
        let saved = (!first).then(|| Saved {
            base: self.base.take(),
            base_graph: self.base_graph.take(),
            base_name: self.base_name.clone(),
            overlay: std::mem::take(&mut self.overlay),
            positions: self.positions.clone(),
            base_positions: self.base_positions.clone(),
            applied: self.applied.clone(),
            unserved_since: self.unserved_since,
            held_since: self.held_since,
        });
        let anchor = graph.anchor.clone();
        if anchor.is_none() {
            tracing::warn!(
                snapshot = %graph.name,
                "the snapshot has no source anchor: the tail goes on from the database's \
                 positions, and changes between the snapshot and then stay missing until \
                 the next snapshot"
            );
        }
        self.base_name = graph.name.clone();
        self.base = Some(origin.clone());
        match anchor {
            Some(anchor) => {
                // Replay from the anchor: entities held for the old base
                // are re-read if they changed after the anchor.
                self.overlay = Overlay::default();
                self.applied.clear();
                self.base_positions = anchor.positions.clone();
                // Chains the anchor does not name are read from their
                // first event.
                self.positions = Some(anchor.positions);
            }
            None if first => {
                self.positions = None;
            }
            None => {
                // Keep the held entities and positions: they are the
                // newest the server has shown.
            }
        }
        let Some(saved) = saved else {
            self.base_graph = Some(graph.base_only());
            self.publish(graph, took);
            self.next_poll = Instant::now();
            self.replaying = true;
            return;
        };
        // Replay now, then swap in with the replayed entities. Without the
        // database the new snapshot waits: swapping it in unreplayed could
        // undo what was shown.
        let failures = self.shared.counters.polls_error.load(Ordering::Relaxed);
        self.swapping = true;
        self.poll();
        self.swapping = false;
        let replayed = self.shared.counters.polls_error.load(Ordering::Relaxed) == failures;
        let next = if replayed {
            let db_time = self.last_poll.map_or(graph.created_at_ms, |(_, t)| t);
            match self.job(db_time, false) {
                Some(job) => {
                    let threads = self.shared.options.compact_threads;
                    compaction::build_with(job, threads).map(Some)
                }
                None => Ok(None),
            }
        } else {
            Err(SnapshotError::new(
                SnapshotErrorKind::StoreUnreachable,
                "database",
                "the replay from the snapshot's anchor failed",
            ))
        };
        match next {
            Ok(Some(next)) => {
                self.unserved_since = None;
                self.publish_compacted(next);
            }
            Ok(None) => {
                self.unserved_since = None;
                self.base_graph = Some(graph.base_only());
                self.publish(graph, took);
                if let Some((number, _)) = self.last_poll {
                    self.shared.served.send_replace(number);
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, snapshot = %graph.name, "the new snapshot waits: the previous state stays until it can be replayed");
                saved.restore(self);
                self.pending_base = Some((graph, origin, took));
            }
        }
    }

    fn publish(&mut self, graph: Graph, took: Duration) {
        let (generation, old) = self.live.publish(graph, took);
        (self.on_swap)(generation);
        retire(old);
    }

    /// Serves the held entities on top of the served base (a live index),
    /// unless they need a compaction first.
    fn serve_live(&mut self) -> bool {
        self.serve_live_after(None)
    }

    /// `serve_live`, sharing what `prev` built over the same base and
    /// compacted values (else what the served graph did).
    fn serve_live_after(&mut self, prev: Option<&Graph>) -> bool {
        let Some(base) = self.base_graph.as_ref() else {
            return false;
        };
        let started = Instant::now();
        let changes = self.overlay.changes();
        let served = self.live.current();
        let prev = prev.or(served.as_ref().map(|s| &s.graph));
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            base.with_live(&changes, prev)
        }));
        drop(served);
        drop(changes);
        self.live_builds.0 += 1;
        self.live_builds.1 += started.elapsed();
        self.shared
            .counters
            .live_build_us
            .fetch_add(elapsed_us(started), Ordering::Relaxed);
        match built {
            Ok(Ok(graph)) => {
                self.shared.counters.live_ok.fetch_add(1, Ordering::Relaxed);
                let (generation, old) = self.live.publish_live(graph);
                (self.on_swap)(generation);
                retire(old);
                true
            }
            Ok(Err(why)) => {
                tracing::info!(reason = %why, "the live entities wait for a compaction");
                false
            }
            Err(_) => {
                tracing::error!(
                    "the live index build panicked; the entities wait for a compaction"
                );
                false
            }
        }
    }

    /// One poll; applies nothing unless all of it succeeds.
    fn poll(&mut self) {
        let number = self.shared.polls_started.fetch_add(1, Ordering::SeqCst) + 1;
        self.next_poll = Instant::now() + self.shared.options.interval;
        let started_ms = now_ms();
        let started = Instant::now();
        let result = self.runtime.block_on(super::poll::poll_once(
            &mut self.client,
            &self.shared.options,
            self.positions.as_ref(),
            &self.base_positions,
            &self.applied,
            &mut self.locations,
        ));
        self.shared
            .counters
            .poll_us
            .fetch_add(elapsed_us(started), Ordering::Relaxed);
        let mut status = lock(&self.shared.status);
        status.last_poll_at_ms = Some(started_ms);
        match result {
            Err(e) => {
                drop(status);
                self.failed(e);
            }
            Ok(done) => {
                self.backoff = None;
                self.shared.backing_off.store(false, Ordering::SeqCst);
                *lock(&self.shared.last_success) = Some(Instant::now());
                self.shared
                    .counters
                    .polls_ok
                    .fetch_add(1, Ordering::Relaxed);
                self.shared
                    .counters
                    .events
                    .fetch_add(done.new_events as u64, Ordering::Relaxed);
                self.shared
                    .counters
                    .skipped_rows
                    .fetch_add(done.skips.total(), Ordering::Relaxed);
                for (chain, keys) in done.applied {
                    self.applied.entry(chain).or_default().extend(keys);
                }
                let lookback = self.shared.options.lookback;
                for (chain, keys) in self.applied.iter_mut() {
                    if let Some(p) = done.positions.get(chain) {
                        let floor = p[0].saturating_sub(lookback);
                        keys.retain(|k| k[0] >= floor);
                    }
                }
                if self.positions.is_none() {
                    self.base_positions = done.positions.clone();
                }
                self.positions = Some(done.positions.clone());
                status.positions = done.positions;
                status.db_time_ms = Some(done.db_time_ms);
                status.last_error = None;
                status.events_applied += done.new_events as u64;
                self.last_poll = Some((number, done.db_time_ms));
                let changed = done.reread.is_some();
                if let Some(reread) = done.reread {
                    self.overlay.apply(reread, number);
                    self.held_since.get_or_insert_with(Instant::now);
                }
                status.entities_live = self.overlay.entities();
                drop(status);
                // While a new snapshot is replayed, `take_base` serves
                // the result.
                if !self.swapping {
                    // `--compact-interval 0`: every answer is a full
                    // load's, so changes wait for their compaction.
                    let compact_only = self.shared.options.compact_interval.is_zero();
                    if changed
                        && self.unserved_since.is_none()
                        && (compact_only || !self.serve_live())
                    {
                        self.unserved_since = Some(Instant::now());
                    }
                    if self.unserved_since.is_none() {
                        self.shared.served.send_replace(number);
                    }
                }
            }
        }
    }

    fn failed(&mut self, error: String) {
        self.client = None;
        let wait = self
            .backoff
            .map_or(FIRST_BACKOFF, |b| (b * 2).min(MAX_BACKOFF));
        self.backoff = Some(wait);
        self.shared.backing_off.store(true, Ordering::SeqCst);
        self.next_poll = Instant::now() + wait.max(self.shared.options.interval);
        self.shared
            .counters
            .polls_error
            .fetch_add(1, Ordering::Relaxed);
        tracing::warn!(error = %error, retry_ms = wait.as_millis() as u64, "tail poll failed; serving the last state");
        lock(&self.shared.status).last_error = Some(error);
    }

    /// What a compaction of the held entities builds from (`None` when
    /// none are held); `refresh`: whether it may refresh in memory.
    fn job(&mut self, created_at_ms: i64, refresh: bool) -> Option<Job> {
        if self.overlay.is_empty() {
            return None;
        }
        self.compactions += 1;
        let refresh = self
            .base_graph
            .clone()
            .filter(|_| refresh)
            .map(|base| Refresh {
                base,
                served: self.live.current().map(|s| s.graph.clone()),
            });
        Some(Job {
            refresh,
            origin: self.base.clone().expect("a base is served"),
            dir: self.shared.options.compact_dir.clone(),
            overlay: self.overlay.clone(),
            name: compaction::name(&self.base_name, self.compactions),
            created_at_ms,
            positions: self.positions.clone().unwrap_or_default(),
        })
    }

    /// Makes a compaction's graph the tail's base: the entities held
    /// beyond it are `left`.
    fn adopt_base(
        &mut self,
        graph: &Graph,
        rows: Origin,
        positions: BTreeMap<i64, Position>,
        left: Overlay,
    ) {
        self.base = Some(rows);
        self.base_name = graph.name.clone();
        self.base_graph = Some(graph.base_only());
        self.base_positions = positions;
        self.overlay = left;
        self.folded_at = Instant::now();
        self.live_builds = (0, Duration::ZERO);
        lock(&self.shared.status).entities_live = self.overlay.entities();
    }

    fn publish_compacted(&mut self, built: Built) {
        self.held_since = None;
        let positions = self.positions.clone().unwrap_or_default();
        let (graph, rows) = (built.graph, built.origin);
        self.adopt_base(&graph, rows, positions, Overlay::default());
        self.publish(graph, Duration::ZERO);
        if let Some((number, _)) = self.last_poll {
            self.shared.served.send_replace(number);
        }
    }

    /// Starts building the next base from the held entities on a thread
    /// of its own (the reload rule: the old one serves meanwhile, a
    /// failure keeps it).
    fn start_compaction(&mut self) {
        let Some((through, db_time_ms)) = self.last_poll else {
            return;
        };
        // A refresh keeps the entities live: fold once the live index
        // costs half a poll interval to build on average since the last
        // compaction (it grows with them), or after `--fold-interval`.
        let fold_interval = self.shared.options.fold_interval;
        let (builds, took) = std::mem::take(&mut self.live_builds);
        let refresh = !fold_interval.is_zero()
            && self.folded_at.elapsed() < fold_interval
            && took < self.shared.options.interval / 2 * builds.max(1);
        let Some(job) = self.job(db_time_ms, refresh) else {
            self.unserved_since = None;
            self.held_since = None;
            return;
        };
        match Compaction::start(job, through, self.shared.clone()) {
            Ok(c) => self.compacting = Some(c),
            Err(e) => self.compaction_failed(&format!("cannot start its thread: {e}")),
        }
    }

    /// Takes a finished compaction's base: swapped in with what later
    /// polls held laid over it, unless that needs a compaction of its own
    /// (then the old state serves until it lands: answers never go
    /// backwards).
    fn finish_compaction(&mut self) {
        let Some(c) = self.compacting.take() else {
            return;
        };
        let (through, positions) = (c.through, c.positions.clone());
        let (built, took) = c.finish();
        self.last_build = (Instant::now(), took);
        let us = took.as_micros().min(u64::MAX as u128) as u64;
        let counters = &self.shared.counters;
        counters.compaction_us.fetch_add(us, Ordering::Relaxed);
        let built = match built {
            Ok(built) => built,
            Err(e) => return self.compaction_failed(&e.to_string()),
        };
        counters.compactions_ok.fetch_add(1, Ordering::Relaxed);
        if !built.folded {
            tracing::info!(
                ms = took.as_millis() as u64,
                "refreshed the compacted values over the held entities"
            );
            return self.take_refresh(built.graph, through);
        }
        counters.folds.fetch_add(1, Ordering::Relaxed);
        counters.fold_us.fetch_add(us, Ordering::Relaxed);
        tracing::info!(
            ms = took.as_millis() as u64,
            "folded the live entities into a new base"
        );
        let (graph, rows) = (built.graph, built.origin);
        let left = self.overlay.after(through);
        self.adopt_base(&graph, rows, positions, left);
        let compact_only = self.shared.options.compact_interval.is_zero();
        if self.overlay.is_empty() || compact_only {
            // Everything up to `through` is in the new base; what later
            // polls read waits for the next compaction (due at once).
            self.publish(graph, Duration::ZERO);
            self.shared.served.send_replace(through);
            let left = (!self.overlay.is_empty()).then(Instant::now);
            self.held_since = left;
            self.unserved_since = left;
            return;
        }
        // What later polls read, laid over the new base.
        drop(graph);
        self.held_since = Some(Instant::now());
        self.unserved_since = None;
        if !self.serve_live() {
            self.unserved_since = Some(Instant::now());
        } else if let Some((number, _)) = self.last_poll {
            self.shared.served.send_replace(number);
        }
    }

    /// Takes a refresh: the same base files and entities, its compacted
    /// values as of poll `through` (served so in `--compact-interval 0`,
    /// where later polls wait for the next compaction; otherwise with
    /// what later polls read laid over it).
    fn take_refresh(&mut self, graph: Graph, through: u64) {
        self.base_name = graph.name.clone();
        self.base_graph = Some(graph.base_only());
        let later = self.overlay.changed_after(through);
        if self.shared.options.compact_interval.is_zero() || !later {
            self.publish(graph, Duration::ZERO);
            let served = match self.last_poll {
                Some((number, _)) if !later => number,
                _ => through,
            };
            self.shared.served.send_replace(served);
            let left = later.then(Instant::now);
            self.held_since = left;
            self.unserved_since = left;
            return;
        }
        // What later polls read, over the refreshed values: the refresh's
        // own live index shares its rows (the served one orders followers
        // by the old counts).
        self.held_since = Some(Instant::now());
        self.unserved_since = None;
        if !self.serve_live_after(Some(&graph)) {
            self.unserved_since = Some(Instant::now());
        } else if let Some((number, _)) = self.last_poll {
            self.shared.served.send_replace(number);
        }
    }

    fn compaction_failed(&mut self, error: &str) {
        // Tried again after a pause (not in a loop).
        self.compact_not_before = Instant::now() + COMPACT_RETRY;
        self.shared
            .counters
            .compactions_error
            .fetch_add(1, Ordering::Relaxed);
        tracing::error!(error = %error, "compaction failed; the previous base stays");
    }
}

fn elapsed_us(since: Instant) -> u64 {
    since.elapsed().as_micros().min(u64::MAX as u128) as u64
}
