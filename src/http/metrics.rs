//! Request metrics (lock-free counters) and the Prometheus text exposition
//! of them plus the live snapshot's facts.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use crate::api::Endpoint;
use crate::live::Live;

/// Endpoint labels: the API endpoints in table order, then `other`
/// (unknown paths and the operations endpoints).
const LABELS: usize = Endpoint::COUNT + 1;
const OTHER: usize = Endpoint::COUNT;
const STATUSES: [u16; 10] = [200, 204, 400, 404, 405, 413, 414, 431, 500, 503];
/// Histogram bucket upper bounds in seconds.
const BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
];

fn label(i: usize) -> &'static str {
    Endpoint::ALL.get(i).map_or("other", |e| e.name())
}

/// A counter every request writes: one slot per thread, each on its own
/// cache line, summed when read, so that two cores counting do not pass
/// one line back and forth on every request.
#[derive(Default)]
pub struct StripedCounter {
    slots: [PaddedCounter; STRIPES],
}

#[repr(align(128))]
#[derive(Default)]
struct PaddedCounter(AtomicU64);

const STRIPES: usize = 16;

thread_local! {
    /// This thread's slot of every `StripedCounter`.
    static STRIPE: usize = {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES
    };
}

impl StripedCounter {
    pub fn add(&self, n: u64) {
        let i = STRIPE.with(|i| *i);
        self.slots[i].0.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.slots.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
    }
}

#[derive(Default)]
struct Histogram {
    /// Per bucket (non-cumulative), the last slot is +Inf.
    counts: [AtomicU64; BUCKETS.len() + 1],
    sum_nanos: AtomicU64,
}

pub struct Metrics {
    /// `[endpoint][status index]`; the last status slot counts the rest.
    requests: [[AtomicU64; STATUSES.len() + 1]; LABELS],
    latency: [Histogram; LABELS],
    pub cache_hits: StripedCounter,
    pub cache_misses: StripedCounter,
}

impl Default for Metrics {
    // By hand: `Default` is derived for arrays of at most 32 elements.
    fn default() -> Self {
        Metrics {
            requests: std::array::from_fn(|_| Default::default()),
            latency: std::array::from_fn(|_| Default::default()),
            cache_hits: StripedCounter::default(),
            cache_misses: StripedCounter::default(),
        }
    }
}

impl Metrics {
    /// Records one answered request (`endpoint` None: `other`).
    pub fn observe(&self, endpoint: Option<Endpoint>, status: u16, took: Duration) {
        let e = endpoint.map_or(OTHER, Endpoint::index);
        let s = STATUSES
            .iter()
            .position(|&x| x == status)
            .unwrap_or(STATUSES.len());
        self.requests[e][s].fetch_add(1, Ordering::Relaxed);
        let secs = took.as_secs_f64();
        let b = BUCKETS
            .iter()
            .position(|&le| secs <= le)
            .unwrap_or(BUCKETS.len());
        let h = &self.latency[e];
        h.counts[b].fetch_add(1, Ordering::Relaxed);
        h.sum_nanos.fetch_add(
            u64::try_from(took.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// The Prometheus text format (version 0.0.4).
    pub fn render(&self, live: &Live, cache_entries: usize, cache_bytes: usize) -> String {
        let mut out = String::with_capacity(8192);
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "# HELP followgraph_build_info The build: version, git commit, build day (always 1).\n\
             # TYPE followgraph_build_info gauge\n\
             followgraph_build_info{{version=\"{}\",commit=\"{}\",build_date=\"{}\"}} 1",
            crate::version::VERSION,
            crate::version::COMMIT,
            crate::version::BUILD_DATE
        );
        render_process(&mut out);
        out.push_str(
            "# HELP followgraph_requests_total Requests answered, by endpoint and status.\n",
        );
        out.push_str("# TYPE followgraph_requests_total counter\n");
        for (e, row) in self.requests.iter().enumerate() {
            for (s, count) in row.iter().enumerate() {
                let n = load(count);
                if n > 0 {
                    let status = STATUSES.get(s).map_or("other".to_owned(), u16::to_string);
                    let _ = writeln!(
                        out,
                        "followgraph_requests_total{{endpoint=\"{}\",status=\"{status}\"}} {n}",
                        label(e)
                    );
                }
            }
        }
        out.push_str(
            "# HELP followgraph_request_duration_seconds Time to answer a request, by endpoint.\n",
        );
        out.push_str("# TYPE followgraph_request_duration_seconds histogram\n");
        for (e, h) in self.latency.iter().enumerate() {
            let mut cumulative = 0;
            for (b, count) in h.counts.iter().enumerate() {
                cumulative += load(count);
                let le = BUCKETS.get(b).map_or("+Inf".to_owned(), f64::to_string);
                let _ = writeln!(
                    out,
                    "followgraph_request_duration_seconds_bucket{{endpoint=\"{}\",le=\"{le}\"}} {cumulative}",
                    label(e)
                );
            }
            let _ = writeln!(
                out,
                "followgraph_request_duration_seconds_sum{{endpoint=\"{}\"}} {}",
                label(e),
                load(&h.sum_nanos) as f64 / 1e9
            );
            let _ = writeln!(
                out,
                "followgraph_request_duration_seconds_count{{endpoint=\"{}\"}} {cumulative}",
                label(e)
            );
        }
        let mut metric = |name: &str, kind: &str, help: &str, value: String| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        };
        metric(
            "followgraph_cache_hits_total",
            "counter",
            "Responses served from the cache.",
            self.cache_hits.get().to_string(),
        );
        metric(
            "followgraph_cache_misses_total",
            "counter",
            "Responses rendered (cache miss or cache=fresh).",
            self.cache_misses.get().to_string(),
        );
        metric(
            "followgraph_cache_entries",
            "gauge",
            "Entries in the response cache.",
            cache_entries.to_string(),
        );
        metric(
            "followgraph_cache_bytes",
            "gauge",
            "Approximate bytes held by the response cache.",
            cache_bytes.to_string(),
        );
        metric(
            "followgraph_snapshot_loads_total",
            "counter",
            "Snapshots loaded and swapped in.",
            load(&live.loads_total).to_string(),
        );
        metric(
            "followgraph_snapshot_load_failures_total",
            "counter",
            "Snapshot loads rejected (the previous snapshot stayed live).",
            load(&live.load_failures_total).to_string(),
        );
        let Some(served) = live.current() else {
            return out;
        };
        let g = &served.graph;
        metric(
            "followgraph_snapshot_generation",
            "gauge",
            "Generation of the live snapshot (1 = first).",
            served.generation.to_string(),
        );
        metric(
            "followgraph_snapshot_created_at_seconds",
            "gauge",
            "created_at of the live snapshot (unix seconds).",
            (g.created_at_ms as f64 / 1e3).to_string(),
        );
        metric(
            "followgraph_snapshot_loaded_at_seconds",
            "gauge",
            "When the live snapshot was swapped in (unix seconds).",
            (served.loaded_at_ms as f64 / 1e3).to_string(),
        );
        metric(
            "followgraph_snapshot_load_duration_seconds",
            "gauge",
            "Time the live snapshot took to read, validate and index.",
            served.load_duration.as_secs_f64().to_string(),
        );
        metric(
            "followgraph_accounts",
            "gauge",
            "Accounts interned in the live snapshot.",
            g.account_count().to_string(),
        );
        metric(
            "followgraph_records",
            "gauge",
            "Visible records (in primary lists).",
            g.record_count().to_string(),
        );
        metric(
            "followgraph_ops",
            "gauge",
            "Visible ops (on primary lists), i.e. notifications.",
            g.notification_count().to_string(),
        );
        out.push_str("# HELP followgraph_snapshot_rows Rows of each table of the live snapshot.\n");
        out.push_str("# TYPE followgraph_snapshot_rows gauge\n");
        for (table, rows) in g.table_counts.iter() {
            let table = table.name();
            let _ = writeln!(out, "followgraph_snapshot_rows{{table=\"{table}\"}} {rows}");
        }
        out
    }
}

/// The process's own figures, under the names Prometheus clients use
/// (`process_*`), from `/proc/self`: resident memory now and at its peak
/// (a reload peaks well above the steady state), CPU, descriptors against
/// their limit, threads. A figure `/proc` does not give is left out.
fn render_process(out: &mut String) {
    use crate::process;
    let figures: [(&str, &str, &str, Option<f64>); 6] = [
        (
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory now.",
            process::rss_bytes().map(|b| b as f64),
        ),
        (
            "process_resident_memory_peak_bytes",
            "gauge",
            "The most resident memory so far (a reload's peak).",
            process::peak_rss_bytes().map(|b| b as f64),
        ),
        (
            "process_cpu_seconds_total",
            "counter",
            "User and system CPU time.",
            process::cpu_seconds(),
        ),
        (
            "process_open_fds",
            "gauge",
            "Open file descriptors.",
            process::open_fds().map(|n| n as f64),
        ),
        (
            "process_max_fds",
            "gauge",
            "The open-files limit.",
            process::open_files().map(|(soft, _)| soft as f64),
        ),
        (
            "process_threads",
            "gauge",
            "Threads.",
            process::threads().map(|n| n as f64),
        ),
    ];
    for (name, kind, help, value) in figures {
        if let Some(v) = value {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}"
            );
        }
    }
}

/// The tail's metrics (docs/live.md, "Faults").
pub fn render_tail(tail: &crate::tail::Tail, out: &mut String) {
    let c = tail.counters();
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let lag = tail.lag_ms();
    let _ = writeln!(
        out,
        "# HELP followgraph_tail_lag_seconds Seconds since the tail's last successful poll.\n\
         # TYPE followgraph_tail_lag_seconds gauge\nfollowgraph_tail_lag_seconds {}",
        lag as f64 / 1000.0
    );

    let mut family = |name: &str, kind: &str, help: &str, rows: &[(&str, u64)]| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, value) in rows {
            let _ = writeln!(out, "{name}{labels} {value}");
        }
    };
    family(
        "followgraph_tail_polls_total",
        "counter",
        "Polls of the indexer's database, by result.",
        &[
            ("{result=\"ok\"}", load(&c.polls_ok)),
            ("{result=\"error\"}", load(&c.polls_error)),
        ],
    );
    family(
        "followgraph_tail_events_total",
        "counter",
        "Events the tail applied.",
        &[("", load(&c.events))],
    );
    family(
        "followgraph_tail_skipped_rows_total",
        "counter",
        "Rows the tail's re-reads skipped, as the export skips them.",
        &[("", load(&c.skipped_rows))],
    );
    family(
        "followgraph_fresh_waits_total",
        "counter",
        "cache=fresh requests that waited for a poll, by result.",
        &[
            ("{result=\"ok\"}", load(&c.fresh_ok)),
            ("{result=\"timeout\"}", load(&c.fresh_timeout)),
        ],
    );
    family(
        "followgraph_compactions_total",
        "counter",
        "Compactions of the live entities into a new base, by result.",
        &[
            ("{result=\"ok\"}", load(&c.compactions_ok)),
            ("{result=\"error\"}", load(&c.compactions_error)),
        ],
    );
    family(
        "followgraph_compaction_folds_total",
        "counter",
        "Compactions that folded the live entities into files (the others refreshed the compacted values in memory).",
        &[("", load(&c.folds))],
    );
    family(
        "followgraph_live_index_builds_total",
        "counter",
        "Changing polls served by a live index, or deferred to a compaction.",
        &[
            ("{result=\"ok\"}", load(&c.live_ok)),
            ("{result=\"deferred\"}", load(&c.live_deferred)),
        ],
    );
    for (name, help, us) in [
        (
            "followgraph_live_index_seconds_total",
            "Wall time spent building live indexes.",
            &c.live_build_us,
        ),
        (
            "followgraph_tail_poll_seconds_total",
            "Wall time spent in polls of the indexer's database.",
            &c.poll_us,
        ),
        (
            "followgraph_compaction_seconds_total",
            "Wall time spent in compactions.",
            &c.compaction_us,
        ),
        (
            "followgraph_compaction_fold_seconds_total",
            "Wall time spent in compactions that folded into files.",
            &c.fold_us,
        ),
    ] {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}",
            load(us) as f64 / 1e6
        );
    }
}

#[cfg(test)]
mod tests {
    use super::StripedCounter;

    #[test]
    fn striped_counter_sums_every_thread() {
        let counter = StripedCounter::default();
        std::thread::scope(|s| {
            for _ in 0..20 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        counter.add(1);
                    }
                });
            }
        });
        counter.add(5);
        assert_eq!(counter.get(), 20_005);
    }
}
