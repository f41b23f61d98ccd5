//! Engine time per request over the HTTP bench's own request paths: the
//! share of a request's cost that is the engine's (resolve + render, as the
//! HTTP layer calls them, no HTTP), at the HTTP bench's snapshot size.
//!
//! `cargo bench --bench paths [-- SNAPSHOT [PATHS_DIR]]`
//! (defaults: `target/followgraph-bench/` and the snapshot named in its
//! `snapshot` file, both left by the last `cargo bench --bench http`;
//! without them it says so and exits 0).
//! Each scenario's paths are answered twice over (the first pass warms
//! the caches the way a server's steady state does); the second pass is
//! reported: mean, median, p90, p99 and the share of time taken by the
//! slowest 10% of paths. `--slowest=N` also lists each scenario's N
//! slowest paths.

use std::path::{Path, PathBuf};
use std::time::Instant;

use followgraph::api;
use followgraph::graph::Graph;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn main() {
    let slowest_listed: usize = std::env::args()
        .find_map(|a| a.strip_prefix("--slowest=").and_then(|n| n.parse().ok()))
        .unwrap_or(0);
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let dir = args
        .get(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(ROOT).join("target/followgraph-bench"));
    // By default, the snapshot the HTTP bench last served these paths from.
    let snapshot = args.first().map(PathBuf::from).unwrap_or_else(|| {
        std::fs::read_to_string(dir.join("snapshot"))
            .map(|s| PathBuf::from(s.trim()))
            .unwrap_or_else(|_| Path::new(ROOT).join("bench-data/m1"))
    });
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "paths"))
                .collect()
        })
        .unwrap_or_default();
    scenarios.sort();
    if !snapshot.exists() || scenarios.is_empty() {
        eprintln!(
            "paths bench: skipped (needs {} and *.paths in {}; run `cargo bench --bench http` first)",
            snapshot.display(),
            dir.display()
        );
        return;
    }
    let started = Instant::now();
    let loaded = followgraph::snapshot::load(&snapshot).expect("the snapshot loads");
    let g = Graph::build(loaded).expect("the graph builds");
    let parts: Vec<String> = g
        .memory_by_part()
        .iter()
        .map(|(part, bytes)| format!("{part} {:.1}", *bytes as f64 / 1e6))
        .collect();
    eprintln!(
        "loaded {} in {:.1} s; heap MB by part: {}",
        snapshot.display(),
        started.elapsed().as_secs_f64(),
        parts.join(", ")
    );
    println!("| scenario | paths | mean µs | p50 µs | p90 µs | p99 µs | slowest 10% share |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for file in scenarios {
        let text = std::fs::read_to_string(&file).expect("a paths file");
        let paths: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
        let mut micros = Vec::with_capacity(paths.len());
        let mut timed: Vec<(f64, &str)> = Vec::new();
        for pass in 0..2 {
            micros.clear();
            for p in &paths {
                let (path, q) = p.split_once('?').unwrap_or((p, ""));
                let Some(r) = api::route(path).1 else {
                    continue;
                };
                let Ok(req) = api::parse(&r, q, 1000) else {
                    continue;
                };
                let t0 = Instant::now();
                let body = req
                    .resolve(&g)
                    .map(|call| api::render(&g, &call, api::RenderEnv::at(g.created_at_ms)));
                let us = t0.elapsed().as_secs_f64() * 1e6;
                std::hint::black_box(body.map(|b| b.len()).unwrap_or(0));
                if pass == 1 {
                    micros.push(us);
                    timed.push((us, p));
                }
            }
        }
        if micros.is_empty() {
            continue;
        }
        micros.sort_by(f64::total_cmp);
        let total: f64 = micros.iter().sum();
        let at = |q: f64| micros[((micros.len() as f64 * q) as usize).min(micros.len() - 1)];
        let slowest: f64 = micros[micros.len() - micros.len() / 10..].iter().sum();
        let name = file.file_stem().unwrap_or_default().to_string_lossy();
        println!(
            "| {name} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0}% |",
            micros.len(),
            total / micros.len() as f64,
            at(0.5),
            at(0.9),
            at(0.99),
            100.0 * slowest / total
        );
        timed.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (us, path) in timed.iter().take(slowest_listed) {
            eprintln!("  {us:9.1} µs  {path}");
        }
    }
}
