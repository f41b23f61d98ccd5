//! HTTP load benchmark of the `followgraph` server (`harness = false`).
//!
//! ```sh
//! cargo bench --bench http                 # full run: 1,000,000 accounts, 12 s per scenario
//! cargo bench --bench http -- --quick      # smoke run: 20,000 accounts, 3 s per scenario
//! cargo bench --bench http -- --live --accounts 57000   # live data (live.rs)
//! ```
//!
//! What it does, in one process and one run:
//!
//! 1. Generates (with the binary's `generate` subcommand) or reuses a
//!    snapshot root under `bench-data/` (`bench-data/m1` for 1,000,000
//!    accounts, `bench-data/n<N>` otherwise).
//! 2. Starts the release binary (or `--binary`) on 127.0.0.1 (port 0),
//!    measures the load (spawn to `/ready` 200, and the server's own
//!    `load_duration_ms`) and the resident memory after load (`/proc/<pid>/status` VmRSS), then
//!    sends SIGHUP and samples VmRSS / VmHWM until the generation changes
//!    (peak memory during a reload).
//! 3. Collects real subjects through the API itself (random list ids for
//!    accounts, the leaderboard top for hubs, names from the answers) and
//!    writes, per scenario, a file of a few thousand request paths drawn at
//!    random (hubs included) and a wrk Lua script cycling through them.
//! 4. Per scenario: a closed-loop wrk run (fixed connections, fixed time)
//!    against the server; the same script against the *static-body
//!    baseline* (the same binary with `--bench-static-body-bytes <the
//!    scenario's mean body size>`: same stack, routing and method check, a
//!    pre-serialised body, no snapshot); the ratio of the two; then a paced
//!    run at 50% of the scenario's throughput for the latency target, on the
//!    server and at the same rate on the baseline
//!    (pacing: a Lua `delay()` holding a per-thread schedule on
//!    CLOCK_MONOTONIC through LuaJIT's ffi; latency is measured by wrk from
//!    the send, i.e. not corrected for coordinated omission).
//! 5. The burst (`burst.rs`): 2,000 connections at once on the profile
//!    calls, for connection errors, non-200 answers and memory growth.
//! 6. Prints a markdown table and writes JSON + markdown + an SVG latency
//!    plot (full runs: `benches/results/`; quick runs:
//!    `target/followgraph-bench/` unless `--save`). BENCHMARKS.md is kept
//!    by hand.
//!
//! Flags and environment variables: `cargo bench --bench http -- --help`
//! (`options.rs`; BENCHMARKS.md's "HTTP bench: options"). `--binary PATH`
//! measures another build of the server under this same harness.
//!
//! Files: `options` (the flags), `snapshot` (the root served), `server`
//! (the server process), `client` (setup requests), `load` (load and
//! reload measurement), `subjects` and `scenarios` (what requests name and
//! the scenario table), `wrk` (the load generator and its Lua script),
//! `measure` (one scenario against its baseline), `report`, `markdown` and
//! `svg` (the results); `live`, `indexer_db` and `writer` for the
//! live-data bench.

mod beside;
mod burst;
mod client;
mod indexer_db;
mod live;
mod load;
mod markdown;
mod measure;
mod options;
mod report;
mod scenarios;
mod server;
mod snapshot;
mod subjects;
mod svg;
mod writer;
mod wrk;

use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use crate::beside::run_beside;
use crate::burst::run_burst;
use crate::load::{measure_load, measure_reload};
use crate::measure::run_scenario;
use crate::options::Opts;
use crate::report::{now_ms, write_report, Run};
use crate::scenarios::{Kind, PathDraws, SCENARIOS};
use crate::snapshot::ensure_snapshot;
use crate::subjects::collect_subjects;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const API: &str = "/api/v1";

/// `x` to one decimal (reports).
fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// `x` to three decimals (reports).
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Stops the bench with a reason (exit status 2).
fn die(msg: &str) -> ! {
    eprintln!("http bench: {msg}");
    std::process::exit(2);
}

fn main() {
    let mut o = Opts::parse();
    wrk::ensure_wrk(&mut o);
    let started = Instant::now();
    let date = followgraph::time::format_iso_ms(now_ms());
    let work = Path::new(ROOT).join("target").join("followgraph-bench");
    std::fs::create_dir_all(&work).unwrap_or_else(|e| die(&format!("{}: {e}", work.display())));
    if o.live {
        live::run_live(&o, &work);
        return;
    }
    let (root, generated_s) = ensure_snapshot(&o);
    // The paths bench (benches/paths.rs) answers these paths from this
    // snapshot.
    let _ = std::fs::write(work.join("snapshot"), root.display().to_string());

    let (mut server, load) = measure_load(&o, &root, &work);
    let reload = if o.reload {
        measure_reload(&server)
    } else {
        Value::Null
    };
    if o.pinned {
        wrk::pin_server(server.pid);
    }

    let subjects = collect_subjects(&o, &server.addr, &load.tables, &load.created_at);
    let mut draws = PathDraws::new(o.seed);
    let results = SCENARIOS
        .iter()
        .filter(|sc| o.runs(sc.name))
        .map(|sc| {
            // A batch line carries its body: fewer of them.
            let n = sc.items.map_or(o.paths, |_| o.paths.min(200));
            let paths = draws.paths(sc, &subjects, n);
            run_scenario(&o, &server, sc, paths, &work)
        })
        .collect();
    let burst = o.runs("burst").then(|| {
        let paths = draws.fresh_paths(Kind::Profile, &subjects, o.paths);
        run_burst(&o, &server, &paths, &work)
    });
    let beside = o.runs("beside_slow").then(|| {
        let paths = draws.fresh_paths(Kind::UserStats, &subjects, o.paths);
        let top = subjects.hubs.first().map_or("", |h| h.address.as_str());
        run_beside(&o, &server, &paths, top, &work)
    });
    let rss_after_run = server.rss();
    server.stop();

    let run = Run {
        started,
        date,
        root,
        generated_s,
        load,
        reload,
        results,
        burst,
        beside,
        rss_after_run,
    };
    write_report(&o, &run, &work);
}
