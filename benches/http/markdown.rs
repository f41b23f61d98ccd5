//! The markdown of a run: what ran where, one table row per scenario
//! (throughput, ratio to the baseline, latency percentiles, the paced run,
//! targets), then load and memory, then the targets.

use std::fmt::Write as _;

use serde_json::Value;

use crate::measure::ScenarioResult;

/// p50, p99, p99.9 and max of a run's `latency_us`, in ms.
fn latencies(l: &Value) -> String {
    let at = |k: &str| ms(l[k].as_f64().unwrap_or(0.0));
    format!(
        "p50 {} ms, p99 {} ms, p99.9 {} ms, max {} ms",
        at("p50"),
        at("p99"),
        at("p99.9"),
        at("max")
    )
}

fn ms(us: f64) -> String {
    if us >= 100_000.0 {
        format!("{:.0}", us / 1000.0)
    } else if us >= 10_000.0 {
        format!("{:.1}", us / 1000.0)
    } else {
        format!("{:.2}", us / 1000.0)
    }
}

fn mib(b: u64) -> String {
    format!("{:.0} MiB", b as f64 / 1048576.0)
}

fn mark(p: Option<bool>) -> &'static str {
    match p {
        Some(true) => "pass",
        Some(false) => "**FAIL**",
        None => "-",
    }
}

/// The markdown tables of report `r`, linking the JSON and SVG files.
pub fn markdown(r: &Value, results: &[ScenarioResult], json_name: &str, svg_name: &str) -> String {
    let mut m = String::new();
    let c = &r["config"];
    let l = &r["load"];
    let _ = writeln!(
        m,
        "Run of {} on {} ({} cores, {} GiB; {}), commit `{}`{}.\n",
        r["date"].as_str().unwrap_or(""),
        r["machine"]["cpu_model"].as_str().unwrap_or("?"),
        r["machine"]["cpus"],
        r["machine"]["mem_total_bytes"].as_u64().unwrap_or(0) >> 30,
        r["machine"]["kernel"].as_str().unwrap_or(""),
        &r["git"]["commit"].as_str().unwrap_or("")
            [..r["git"]["commit"].as_str().map_or(0, |s| s.len().min(10))],
        if r["git"]["dirty"].as_bool() == Some(true) {
            " + uncommitted changes"
        } else {
            ""
        },
    );
    let _ = writeln!(m, "```sh\n{}\n```\n", r["command"].as_str().unwrap_or(""));
    let t = &r["snapshot"]["tables"];
    let _ = writeln!(
        m,
        "Snapshot `{}`: {} accounts, {} lists, {} list_records, {} list_ops. \
         wrk ({}, {}): {} threads, {} connections, {} request paths per scenario; per scenario \
         {} s warm-up of each server, then {} alternating rounds of {} s on the server and {} s on \
         its static-body baseline (req/s over all rounds, percentiles the median of the rounds), \
         then {} s paced at 50% of the scenario's req/s on the server and as long at the same rate on \
         the baseline (\"at 50%\" columns). \
         Machine-readable: [`{json_name}`](benches/results/{json_name}).\n",
        r["snapshot"]["name"].as_str().unwrap_or(""),
        c["accounts"],
        t["lists"],
        t["list_records"],
        t["list_ops"],
        c["load_generator"].as_str().unwrap_or("wrk"),
        c["client_scheduling"].as_str().unwrap_or("SCHED_OTHER"),
        c["wrk_threads"],
        c["connections"],
        c["paths_per_scenario"],
        c["warmup_s"],
        c["rounds"],
        c["duration_s"].as_u64().unwrap_or(0) / c["rounds"].as_u64().unwrap_or(1).max(1),
        c["duration_s"].as_u64().unwrap_or(0) / c["rounds"].as_u64().unwrap_or(1).max(1),
        c.get("paced_s").unwrap_or(&c["duration_s"]),
    );
    if c["targets_apply"].as_bool() != Some(true) {
        let _ = writeln!(
            m,
            "*Not a 1,000,000-account run: pass/fail marks are indicative only.*\n"
        );
    }
    let _ = writeln!(
        m,
        "Ratios per round: median (min–max) of the rounds, req/s over the baseline's and the \
         baseline's server CPU per request over the server's; a target is judged on the {}.\n",
        if c["ruler"] == "pinned" {
            "CPU ratio (pinned ruler)"
        } else {
            "req/s over all rounds (shared ruler)"
        }
    );
    let _ = writeln!(m, "| scenario | req/s | baseline req/s | ratio | rounds: ratio | rounds: CPU ratio | p50 ms | p90 ms | p99 ms | p99.9 ms | body B | at 50%: req/s | p50 ms | p99 ms | baseline p99 ms | ratio target | p99 target | server CPU µs/req |");
    let _ = writeln!(
        m,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|"
    );
    for s in results {
        let _ = writeln!(
            m,
            "| {}{} | {:.0} | {:.0} | **{:.2}** | {} | {} | {} | {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {} | {:.1}{} |",
            s.name,
            match s.cache_hit_ratio {
                Some(h) if s.cached => format!(" (hits {:.0}%)", h * 100.0),
                _ => String::new(),
            },
            s.main.rps,
            s.baseline.rps,
            s.ratio,
            spread(s.round_spread()[0]),
            spread(s.round_spread()[1]),
            ms(s.main.p50_us),
            ms(s.main.p90_us),
            ms(s.main.p99_us),
            ms(s.main.p999_us),
            s.mean_body,
            s.paced.rps,
            ms(s.paced.p50_us),
            ms(s.paced.p99_us),
            ms(s.paced_baseline.p99_us),
            match s.min_ratio {
                Some(x) => format!("≥ {x}x: {}", mark(s.ratio_pass())),
                None => "-".into(),
            },
            match s.max_p99_us {
                Some(x) => format!("< {} ms: {}", x / 1000.0, mark(s.p99_pass())),
                None => "-".into(),
            },
            s.cpu_us_per_request,
            match s.items_per_cpu_second() {
                Some(per_core) => format!(" ({per_core:.0} items per CPU-second)"),
                None => String::new(),
            },
        );
    }
    let bad: Vec<String> = results
        .iter()
        .filter(|s| s.main.non_2xx + s.main.errors + s.baseline.errors > 0)
        .map(|s| {
            format!(
                "{}: {} non-2xx, {} socket errors (baseline {})",
                s.name, s.main.non_2xx, s.main.errors, s.baseline.errors
            )
        })
        .collect();
    if !bad.is_empty() {
        let _ = writeln!(m, "\nErrors during the runs: {}.", bad.join("; "));
    }
    let _ = writeln!(
        m,
        "\nLatency percentiles of every scenario (closed loop) beside its baseline: \
         [`{svg_name}`](benches/results/{svg_name})\n\n![latency](benches/results/{svg_name})\n"
    );
    let b = &r["burst"];
    if !b.is_null() {
        let w = &b["server"];
        let _ = writeln!(
            m,
            "Burst: {} connections opened at once, {} s of {}: {:.0} req/s, p50 {} ms, p99 {} ms, p99.9 {} ms; \
             {} socket errors, {} non-2xx answers of {} requests; RSS {} before, {} at peak (+{}), {} after.\n",
            b["connections"],
            b["duration_s"],
            b["requests"].as_str().unwrap_or(""),
            w["rps"].as_f64().unwrap_or(0.0),
            ms(w["latency_us"]["p50"].as_f64().unwrap_or(0.0)),
            ms(w["latency_us"]["p99"].as_f64().unwrap_or(0.0)),
            ms(w["latency_us"]["p99.9"].as_f64().unwrap_or(0.0)),
            w["socket_errors"],
            w["non_2xx"],
            w["requests"],
            mib(b["rss_before_bytes"].as_u64().unwrap_or(0)),
            mib(b["rss_peak_bytes"].as_u64().unwrap_or(0)),
            mib(b["rss_growth_bytes"].as_u64().unwrap_or(0)),
            mib(b["rss_after_bytes"].as_u64().unwrap_or(0)),
        );
    }
    let b = &r["beside_slow"];
    if !b.is_null() {
        let _ = writeln!(
            m,
            "Beside a slow answer: `{}` paced at {:.0} req/s for {} s, alone: {}; \
             while another client sent `{}` {} times, one after another ({} ms each on average): {}.\n",
            b["requests"].as_str().unwrap_or(""),
            b["target_rps"].as_f64().unwrap_or(0.0),
            b["duration_s"],
            latencies(&b["alone"]["latency_us"]),
            b["slow_request"].as_str().unwrap_or(""),
            b["slow_answers"],
            b["slow_mean_ms"],
            latencies(&b["beside_slow"]["latency_us"]),
        );
    }
    let rl = &l["reload"];
    let _ = writeln!(m, "| load and memory | measured |\n|---|---:|");
    let _ = writeln!(
        m,
        "| load, spawn to `/ready` 200 (wall) | {:.1} s |",
        l["wall_to_ready_s"].as_f64().unwrap_or(0.0)
    );
    let _ = writeln!(
        m,
        "| load, server's `load_duration_ms` | {:.1} s |",
        l["server_load_duration_ms"].as_f64().unwrap_or(0.0) / 1000.0
    );
    let _ = writeln!(
        m,
        "| load per million list_records / per million rows (all tables) | {:.2} s / {:.2} s |",
        l["s_per_million_list_records"].as_f64().unwrap_or(0.0),
        l["s_per_million_rows"].as_f64().unwrap_or(0.0)
    );
    let _ = writeln!(
        m,
        "| RSS after load | {} |",
        mib(l["rss_after_load_bytes"].as_u64().unwrap_or(0))
    );
    let _ = writeln!(
        m,
        "| RSS after load / list_records rows | {:.1} B |",
        l["rss_bytes_per_list_record"].as_f64().unwrap_or(0.0)
    );
    let _ = writeln!(
        m,
        "| RSS after load / (list_records + list_ops rows) | {:.1} B |",
        l["rss_bytes_per_record_and_op"].as_f64().unwrap_or(0.0)
    );
    let _ = writeln!(
        m,
        "| peak RSS during the first load (VmHWM) | {} |",
        mib(l["vmhwm_first_load_bytes"].as_u64().unwrap_or(0))
    );
    if !rl.is_null() {
        let _ = writeln!(
            m,
            "| reload (SIGHUP to new generation live) | {:.1} s |",
            rl["wall_s"].as_f64().unwrap_or(0.0)
        );
        let _ = writeln!(
            m,
            "| peak RSS during the reload | {} ({:.2}x the steady RSS) |",
            mib(rl["peak_rss_bytes"].as_u64().unwrap_or(0)),
            rl["peak_over_steady"].as_f64().unwrap_or(0.0)
        );
        let _ = writeln!(
            m,
            "| RSS after the reload | {} |",
            mib(rl["rss_after_bytes"].as_u64().unwrap_or(0))
        );
    }
    let _ = writeln!(
        m,
        "| RSS after all scenarios (response cache filled) | {} |",
        mib(l["rss_after_run_bytes"].as_u64().unwrap_or(0))
    );
    if let Some(parts) = l["graph_heap_bytes_by_index"].as_object() {
        let list: Vec<String> = parts
            .iter()
            .map(|(part, b)| format!("{part} {}", mib(b.as_u64().unwrap_or(0))))
            .collect();
        let _ = writeln!(
            m,
            "\nGraph heap by index (`/snapshot`'s `memory_bytes`): {}.",
            list.join(", ")
        );
    }
    let _ = writeln!(m, "\n| target | measured | result |\n|---|---|---|");
    for t in r["targets"].as_array().into_iter().flatten() {
        let _ = writeln!(
            m,
            "| {} | {} | {} |",
            t["target"].as_str().unwrap_or(""),
            t["measured"].as_str().unwrap_or(""),
            mark(t["pass"].as_bool())
        );
    }
    m
}

/// A rounds' (median, min, max) as `0.85 (0.80–0.90)`.
fn spread((median, min, max): (f64, f64, f64)) -> String {
    format!("{median:.2} ({min:.2}–{max:.2})")
}
