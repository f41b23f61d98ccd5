//! The report of a run: the JSON of every figure (`http-<date>.json`),
//! the markdown tables (`http-<date>.md`, also printed) and the SVG
//! latency plot, written to
//! `benches/results/` when saving, else to `target/followgraph-bench/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::beside::BesideResult;
use crate::burst::BurstResult;
use crate::die;
use crate::load::Load;
use crate::markdown::markdown;
use crate::measure::ScenarioResult;
use crate::options::Opts;
use crate::svg::svg;
use crate::wrk::wrk_version;
use crate::{round1, round3, ROOT};

/// Everything one run measured.
pub struct Run {
    pub started: Instant,
    /// ISO 8601 start of the run.
    pub date: String,
    pub root: PathBuf,
    /// Seconds spent generating the snapshot, when it was.
    pub generated_s: Option<f64>,
    pub load: Load,
    pub reload: Value,
    pub results: Vec<ScenarioResult>,
    pub burst: Option<BurstResult>,
    pub beside: Option<BesideResult>,
    pub rss_after_run: u64,
}

/// The run as the JSON report (`http-<date>.json`).
fn report_json(o: &Opts, run: &Run) -> Value {
    let (load, results) = (&run.load, &run.results);
    let records = load.records;
    let command = {
        let mut c = "cargo bench --bench http".to_owned();
        let extra: Vec<String> = std::env::args()
            .skip(1)
            .filter(|a| a != "--bench")
            .collect();
        if !extra.is_empty() {
            c.push_str(" -- ");
            c.push_str(&extra.join(" "));
        }
        c
    };
    let at_1m = o.accounts == 1_000_000 && o.snapshot.is_none();
    let load_s = load.to_ready.as_secs_f64();
    let bpr = load.rss_after_load as f64 / records.max(1) as f64;
    let bpro = load.rss_after_load as f64 / (records + load.ops).max(1) as f64;
    let mut targets: Vec<Value> = Vec::new();
    for r in results {
        if let (Some(m), Some(pass)) = (r.min_ratio, r.ratio_pass()) {
            targets.push(json!({"target": format!("{} {} >= {m}x baseline", r.name,
                    if r.pinned { "server CPU per request" } else { "throughput" }),
                "measured": format!("{:.2}x", r.judged_ratio()), "pass": pass}));
        }
        if let Some(per_core) = r.items_per_cpu_second() {
            targets.push(json!({"target": format!("{} >= 10,000 items/s per core", r.name),
                "measured": format!("{per_core:.0} items per CPU-second"), "pass": per_core >= 10_000.0}));
        }
        if let (Some(m), Some(pass)) = (r.max_p99_us, r.p99_pass()) {
            targets.push(json!({"target": format!("{} p99 < {} ms at 50% of its throughput", r.name, m / 1000.0),
                "measured": format!("{:.2} ms at {:.0} rps", r.paced.p99_us / 1000.0, r.paced.rps), "pass": pass}));
        }
    }
    if let Some(b) = &run.burst {
        targets.push(json!({"target": format!("burst of {} connections: no connection errors", b.connections),
            "measured": format!("{} socket errors", b.wrk.errors), "pass": b.wrk.errors == 0}));
        targets.push(json!({"target": "burst: every answer 200",
            "measured": format!("{} non-2xx of {} requests", b.wrk.non_2xx, b.wrk.requests),
            "pass": b.wrk.non_2xx == 0 && b.wrk.requests > 0}));
    }
    targets.push(json!({"target": "load <= 14 s wall (spawn to /ready)",
        "measured": format!("{load_s:.1} s"), "pass": load_s <= 14.0}));
    targets.push(
        json!({"target": "RSS after load <= 72 B per list_records row",
        "measured": format!("{bpr:.1} B"), "pass": bpr <= 72.0}),
    );

    json!({
        "date": run.date,
        "command": command,
        "machine": machine(),
        "git": {
            "commit": cmd_out("git", &["rev-parse", "HEAD"]),
            "dirty": !cmd_out("git", &["status", "--porcelain", "--untracked-files=no"]).is_empty(),
        },
        "config": {
            "accounts": o.accounts,
            "snapshot": run.root.display().to_string(),
            "duration_s": o.duration,
            "paced_s": o.paced,
            "rounds": o.rounds,
            "warmup_s": o.warmup,
            "connections": o.connections,
            "wrk_threads": o.threads,
            "paths_per_scenario": o.paths,
            "load_generator": wrk_version(&o.wrk),
            "client_scheduling": if o.pinned { "pinned: server and baseline on core 0, one request worker; wrk on core 1" } else if o.client_batch { "SCHED_BATCH (chrt -b 0)" } else { "SCHED_OTHER (the default)" },
            "ruler": if o.pinned { "pinned" } else { "shared" },
            "pacing": "wrk Lua delay() with a per-thread CLOCK_MONOTONIC schedule at 50% of the scenario's measured rps; latency from the send (not corrected for coordinated omission)",
            "baseline": "same binary, --bench-static-body-bytes <scenario mean body>, same script and paths",
            "targets_apply": at_1m,
        },
        "snapshot": {"name": load.snapshot["name"], "created_at": load.created_at, "tables": load.tables,
                      "generated_in_s": run.generated_s},
        "load": {
            "wall_to_ready_s": round3(load_s),
            "server_load_duration_ms": load.load_ms,
            "s_per_million_list_records": round3(load_s / (records.max(1) as f64 / 1e6)),
            "s_per_million_rows": round3(load_s / (load.all_rows.max(1) as f64 / 1e6)),
            "rss_after_load_bytes": load.rss_after_load,
            "vmhwm_first_load_bytes": load.hwm_first_load,
            "rss_bytes_per_list_record": round1(bpr),
            "rss_bytes_per_record_and_op": round1(bpro),
            "rss_after_run_bytes": run.rss_after_run,
            "graph_heap_bytes_by_index": load.snapshot["memory_bytes"],
            "reload": run.reload,
        },
        "scenarios": results.iter().map(|r| json!({
            "name": r.name,
            "request": r.describe,
            "cached": r.cached,
            "paths": r.paths,
            "mean_body_bytes": r.mean_body,
            "cache_hit_ratio": r.cache_hit_ratio.map(round3),
            "server": r.main.to_json(),
            "baseline": r.baseline.to_json(),
            "ratio_to_baseline": round3(r.ratio),
            "paced": {"target_rps": round1(r.paced_target), "result": r.paced.to_json(),
                       "baseline": r.paced_baseline.to_json()},
            "target_min_ratio": r.min_ratio,
            "target_p99_us_at_half_load": r.max_p99_us,
            "server_cpu_us_per_request": round1(r.cpu_us_per_request),
            "baseline_cpu_us_per_request": round1(r.baseline_cpu_us_per_request),
            "rounds": {
                "ratio": r.round_ratios.iter().copied().map(round3).collect::<Vec<_>>(),
                "cpu_ratio": r.round_cpu_ratios.iter().copied().map(round3).collect::<Vec<_>>(),
            },
            "judged_ratio": round3(r.judged_ratio()),
            "items_per_request": r.items,
            "items_per_cpu_second": r.items_per_cpu_second().map(round1),
            "pass_ratio": r.ratio_pass(),
            "pass_p99": r.p99_pass(),
        })).collect::<Vec<_>>(),
        "burst": run.burst.as_ref().map(BurstResult::to_json),
        "beside_slow": run.beside.as_ref().map(BesideResult::to_json),
        "targets": targets,
        "elapsed_s": round1(run.started.elapsed().as_secs_f64()),
    })
}

/// Writes the JSON, SVG and markdown reports (`benches/results/` when
/// saving, else `work`) and prints the markdown. BENCHMARKS.md is a
/// record kept by hand: a run never rewrites it.
pub fn write_report(o: &Opts, run: &Run, work: &Path) {
    let report = report_json(o, run);
    let day = &run.date[..10];
    let stem = format!("http-{day}");
    let (dir, json_name, svg_name) = if o.save {
        (
            Path::new(ROOT).join("benches").join("results"),
            format!("{stem}.json"),
            format!("{stem}.svg"),
        )
    } else {
        (
            work.to_path_buf(),
            format!("{stem}.json"),
            format!("{stem}.svg"),
        )
    };
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| die(&format!("{}: {e}", dir.display())));
    let md = markdown(&report, &run.results, &json_name, &svg_name);
    let text = serde_json::to_string_pretty(&report).expect("json") + "\n";
    std::fs::write(dir.join(&json_name), text).expect("write json");
    std::fs::write(dir.join(&svg_name), svg(&run.results, &report)).expect("write svg");
    // Beside the JSON and SVG, links are relative to benches/results/.
    std::fs::write(
        dir.join(format!("{stem}.md")),
        md.replace("](benches/results/", "]("),
    )
    .expect("write md");
    println!("{md}");
    eprintln!(
        "wrote {} ({}, {}, {stem}.md)",
        dir.display(),
        json_name,
        svg_name
    );
}

/// Wall-clock time, epoch milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn cmd_out(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .current_dir(ROOT)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// The machine's cores, CPU model, memory and kernel.
fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .unwrap_or("")
        .trim()
        .to_owned();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kib: u64 = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    json!({
        "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "cpu_model": model,
        "mem_total_bytes": mem_kib * 1024,
        "kernel": cmd_out("uname", &["-sr"]),
        "note": "shared, noisy machine: compare ratios to the baseline, not absolute figures",
    })
}
