//! The live-data bench (`cargo bench --bench http -- --live`; docs/live.md,
//! BENCHMARKS.md "Live data"): the generator's graph in the indexer's
//! tables of a PostgreSQL of its own, exported, then served
//!
//! 1. without the tail: the `mix` scenario against its baseline, and a
//!    reload's peak memory;
//! 2. with the tail (`--database-url`, a SELECT-only role, the defaults)
//!    while the writer commits `--live-rate` events a second:
//!    - *visible*: for `--live-seconds`, a prober asks each event's
//!      request (without `cache=fresh`) over and over until the answer
//!      shows it: commit → visible;
//!    - *barrier*: for `--live-seconds`, one `cache=fresh` request right
//!      after each commit: its latency, and whether it showed the commit;
//!    - *mix*: the `mix` scenario again, the writer still running.
//!
//! Both servers run with the response cache off (`--cache-ttl 0`) and the
//! mix's paths without `cache=fresh`: with a tail `cache=fresh` is a read
//! barrier (each request waits for a poll), so the mix would measure the
//! barrier, not what the tail costs the other requests.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::client::{get_ok, http_get};
use crate::die;
use crate::indexer_db::IndexerDb;
use crate::load::measure_reload;
use crate::measure::run_scenario;
use crate::options::Opts;
use crate::scenarios::{PathDraws, SCENARIOS};
use crate::server::{serve_args, Server};
use crate::subjects::collect_subjects;
use crate::writer::{Change, Pace, Writer};

/// The p-th percentile (0–100) of sorted `v`, in ms.
fn pct(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() - 1) as f64 * p / 100.0).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn start_server(o: &Opts, root: &Path, tail: Option<String>, log: &Path) -> Server {
    let mut args = serve_args(root);
    args.extend(["--cache-ttl".into(), "0".into()]);
    if let Some(url) = tail {
        args.extend(["--database-url".into(), url]);
    }
    let mut server = Server::start(&o.binary, &args, log);
    server.wait_ready(Duration::from_secs(1800));
    server
}

/// Runs the writer on its own thread until `stop`; each commit goes to
/// `changes`.
fn spawn_writer(
    url: String,
    rate: u64,
    seed: u64,
    stop: Arc<AtomicBool>,
    changes: mpsc::Sender<Change>,
) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut w = Writer::connect(&url, seed);
        let mut pace = Pace::new(rate);
        while !stop.load(Ordering::Relaxed) {
            let c = w.next_event();
            if changes.send(c).is_err() {
                break;
            }
            pace.wait();
        }
        w.retries
    })
}

/// Commit → visible, for each event of `seconds` of writing: one prober
/// asks every pending change's request in turns until it shows.
fn visible(o: &Opts, db: &IndexerDb, addr: &str) -> Value {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let writer = spawn_writer(db.url(), o.live_rate, o.seed, stop.clone(), tx);
    let end = Instant::now() + Duration::from_secs(o.live_seconds);
    let mut pending: Vec<Change> = Vec::new();
    let mut lags: Vec<(&'static str, f64)> = Vec::new();
    let mut rounds = Vec::new();
    let (mut never, mut superseded) = (0, 0);
    loop {
        if Instant::now() >= end {
            stop.store(true, Ordering::Relaxed);
        }
        for c in rx.try_iter() {
            // A later event on the same request (an unfollow of what was
            // just followed) can hide an earlier one for good.
            let before = pending.len();
            pending.retain(|p| !p.same_subject(&c));
            superseded += before - pending.len();
            pending.push(c);
        }
        if stop.load(Ordering::Relaxed) && pending.is_empty() {
            break;
        }
        let round = Instant::now();
        pending.retain(|c| {
            let shown = http_get(addr, &c.path)
                .ok()
                .filter(|a| a.status == 200)
                .is_some_and(|a| c.shown_in(&a.json()));
            if shown {
                lags.push((c.kind, ms(c.committed.elapsed())));
            } else if c.committed.elapsed() > Duration::from_secs(120) {
                never += 1;
                return false;
            }
            !shown
        });
        rounds.push(ms(round.elapsed()));
        std::thread::sleep(Duration::from_millis(10));
    }
    let retries = writer.join().unwrap_or(0);
    let mut all: Vec<f64> = lags.iter().map(|l| l.1).collect();
    all.sort_by(f64::total_cmp);
    rounds.sort_by(f64::total_cmp);
    let mut by_kind = serde_json::Map::new();
    for kind in ["follow", "unfollow", "tag", "untag", "primary", "mint"] {
        let mut v: Vec<f64> = lags.iter().filter(|l| l.0 == kind).map(|l| l.1).collect();
        v.sort_by(f64::total_cmp);
        by_kind.insert(
            kind.into(),
            json!({"events": v.len(), "p50_ms": pct(&v, 50.0), "p99_ms": pct(&v, 99.0)}),
        );
    }
    json!({
        "events": all.len(), "never_visible": never, "superseded": superseded,
        "writer_retries": retries,
        "p50_ms": pct(&all, 50.0), "p99_ms": pct(&all, 99.0),
        "max_ms": all.last().copied().unwrap_or(f64::NAN),
        "probe_round_p50_ms": pct(&rounds, 50.0), "by_kind": by_kind,
    })
}

/// One `cache=fresh` request right after each commit of `seconds` of
/// writing: latency, and whether the answer showed the commit. An answer
/// that does not, because a later commit of the same subject (an unfollow
/// of what was just followed) came before it, counts as superseded, not
/// as a miss.
fn barrier(o: &Opts, db: &IndexerDb, addr: &str) -> Value {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let writer = spawn_writer(db.url(), o.live_rate, o.seed ^ 1, stop.clone(), tx);
    let end = Instant::now() + Duration::from_secs(o.live_seconds);
    let results = Arc::new(Mutex::new(Vec::new()));
    let mut seen: Vec<Arc<Change>> = Vec::new();
    let mut askers = Vec::new();
    while Instant::now() < end {
        let Ok(c) = rx.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        let c = Arc::new(c);
        seen.push(c.clone());
        let (addr, results) = (addr.to_owned(), results.clone());
        askers.push(std::thread::spawn(move || {
            let sep = if c.path.contains('?') { '&' } else { '?' };
            let sent = Instant::now();
            let answer = http_get(&addr, &format!("{}{sep}cache=fresh", c.path));
            let took = ms(sent.elapsed());
            let (shown, lag_header) = answer.map_or((false, false), |a| {
                let lag = a.head.to_ascii_lowercase().contains("x-followgraph-lag-ms");
                (a.status == 200 && c.shown_in(&a.json()), lag)
            });
            results
                .lock()
                .unwrap()
                .push((took, shown, lag_header, c, Instant::now()));
        }));
    }
    stop.store(true, Ordering::Relaxed);
    let retries = writer.join().unwrap_or(0);
    for a in askers {
        let _ = a.join();
    }
    let r = results.lock().unwrap();
    let mut took: Vec<f64> = r.iter().map(|x| x.0).collect();
    took.sort_by(f64::total_cmp);
    let shown = r.iter().filter(|x| x.1).count();
    let timed_out = r.iter().filter(|x| x.2).count();
    let superseded = r
        .iter()
        .filter(|(_, shown, _, c, answered)| {
            !shown
                && seen.iter().any(|later| {
                    later.same_subject(c)
                        && later.committed > c.committed
                        && later.committed < *answered
                })
        })
        .count();
    json!({
        "requests": r.len(), "showed_the_commit": shown, "superseded": superseded,
        "hit_rate": shown as f64 / (r.len() - superseded).max(1) as f64, "lag_header": timed_out,
        "p50_ms": pct(&took, 50.0), "p99_ms": pct(&took, 99.0),
        "max_ms": took.last().copied().unwrap_or(f64::NAN), "writer_retries": retries,
    })
}

/// Reads `/metrics` counters of the tail.
fn tail_counters(server: &Server) -> Value {
    json!({
        "polls": server.metric("followgraph_tail_polls_total"),
        "poll_s": server.metric("followgraph_tail_poll_seconds_total"),
        "live_s": server.metric("followgraph_live_index_seconds_total"),
        "compactions": server.metric("followgraph_compactions_total"),
        "compaction_s": server.metric("followgraph_compaction_seconds_total"),
        "folds": server.metric("followgraph_compaction_folds_total"),
        "fold_s": server.metric("followgraph_compaction_fold_seconds_total"),
        "events": server.metric("followgraph_tail_events_total"),
    })
}

fn delta(after: &Value, before: &Value, key: &str) -> f64 {
    after[key].as_f64().unwrap_or(0.0) - before[key].as_f64().unwrap_or(0.0)
}

pub fn run_live(o: &Opts, work: &Path) {
    let db = IndexerDb::start(o);
    let root = db.export(o);
    let mix = SCENARIOS
        .iter()
        .find(|s| s.name == "mix")
        .unwrap_or_else(|| die("no mix scenario"));

    // 1. Without the tail.
    let mut server = start_server(o, &root, None, &work.join("live-static.log"));
    let snapshot = get_ok(&server.addr, "/snapshot");
    let created_at = snapshot["created_at"].as_str().unwrap_or("").to_owned();
    let subjects = collect_subjects(o, &server.addr, &snapshot["tables"], &created_at);
    let paths: Vec<String> = PathDraws::new(o.seed)
        .paths(mix, &subjects, o.paths)
        .into_iter()
        .map(|p| {
            p.replace("?cache=fresh&", "?")
                .replace("?cache=fresh", "")
                .replace("&cache=fresh", "")
        })
        .collect();
    eprintln!("live: mix without the tail");
    let mix_without = run_scenario(o, &server, mix, paths.clone(), work);
    let reload = measure_reload(&server);
    server.stop();

    // 2. With the tail.
    let mut server = start_server(o, &root, Some(db.tail_url()), &work.join("live-tail.log"));
    let t0 = Instant::now();
    while get_ok(&server.addr, "/snapshot")["tail"]["last_poll_at"].is_null() {
        if t0.elapsed() > Duration::from_secs(600) {
            die("the tail never polled");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let rss_before = server.rss();
    let _ = std::fs::write(format!("/proc/{}/clear_refs", server.pid), "5");
    db.reset_statements();
    let (calls0, db_ms0) = db.tail_statements();
    let counters0 = tail_counters(&server);
    let started = Instant::now();
    eprintln!("live: commit → visible, {} s", o.live_seconds);
    let visible = visible(o, &db, &server.addr);
    eprintln!("live: cache=fresh after each commit, {} s", o.live_seconds);
    let barrier = barrier(o, &db, &server.addr);
    let elapsed = started.elapsed().as_secs_f64();
    let (calls1, db_ms1) = db.tail_statements();
    let counters1 = tail_counters(&server);
    let peak = server.hwm();

    eprintln!("live: mix with the tail, the writer running");
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let writer = spawn_writer(db.url(), o.live_rate, o.seed ^ 2, stop.clone(), tx);
    let drain = std::thread::spawn(move || rx.iter().count());
    let mix_with = run_scenario(o, &server, mix, paths, work);
    stop.store(true, Ordering::Relaxed);
    let _ = writer.join();
    let _ = drain.join();
    let snapshot_after = get_ok(&server.addr, "/snapshot");
    server.stop();

    let compactions = delta(&counters1, &counters0, "compactions");
    let folds = delta(&counters1, &counters0, "folds");
    let (compaction_s, fold_s) = (
        delta(&counters1, &counters0, "compaction_s"),
        delta(&counters1, &counters0, "fold_s"),
    );
    let report = json!({
        "accounts": o.accounts, "rate": o.live_rate, "seconds": o.live_seconds,
        "tables": snapshot["tables"],
        "visible": visible, "barrier": barrier,
        "tail": {
            "polls_per_s": delta(&counters1, &counters0, "polls") / elapsed,
            "poll_s_per_s": delta(&counters1, &counters0, "poll_s") / elapsed,
            "live_index_s_per_s": delta(&counters1, &counters0, "live_s") / elapsed,
            "db_statements_per_s": (calls1 - calls0) as f64 / elapsed,
            "db_exec_ms_per_s": (db_ms1 - db_ms0) / elapsed,
            "events_per_s": delta(&counters1, &counters0, "events") / elapsed,
        },
        "compaction": {
            "count": compactions,
            "mean_s": compaction_s / compactions.max(1.0),
            // Refreshes in memory, and folds into files among them.
            "refresh_mean_s": (compaction_s - fold_s) / (compactions - folds).max(1.0),
            "folds": folds,
            "fold_mean_s": fold_s / folds.max(1.0),
            "rss_before_mib": rss_before >> 20, "peak_rss_mib": peak >> 20,
        },
        "reload": reload,
        "mix_ratio_without_tail": mix_without.ratio, "mix_ratio_with_tail": mix_with.ratio,
        "mix_with_over_without": mix_with.ratio / mix_without.ratio,
        "snapshot_after": snapshot_after["name"],
    });
    let out = work.join(format!("live-{}.json", o.accounts));
    let _ = std::fs::write(
        &out,
        serde_json::to_string_pretty(&report).unwrap_or_default(),
    );
    println!(
        "{}",
        serde_json::to_string_pretty(&report).unwrap_or_default()
    );
    eprintln!("live: written to {}", out.display());
}
