//! Engine benchmarks (no HTTP): snapshot load per table and whole, graph
//! build, and each endpoint's query (validation, resolution, rendering) for
//! a hub (most-followed), a median and an empty account, with every
//! followers sort mode. Peak heap memory is reported beside the time.
//!
//! ```sh
//! cargo bench --bench engine                    # 50,000 accounts
//! cargo bench --bench engine -- --quick         # criterion's quick mode
//! cargo bench --bench engine -- query/          # a filter, as usual
//! FOLLOWGRAPH_BENCH_ACCOUNTS=200000 cargo bench --bench engine
//! ```
//!
//! The snapshot is generated in memory and written once with
//! `write_snapshot` to a temporary directory, which the load benches read.
//!
//! Memory: a counting `#[global_allocator]` (over the system allocator)
//! measures, for one extra run of every benchmark's routine outside the
//! timed loop, the peak of heap bytes live above the level at its start,
//! the bytes still held by its result, and the number of allocations.
//! Counting is off during the timed iterations (one relaxed load per
//! allocation). After criterion's summary a table of median time and
//! memory is printed and written to `benches/results/engine-memory.json`
//! (unfiltered, non-quick runs) or `target/followgraph-bench/` otherwise.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
use std::sync::Mutex;

use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, Criterion};
use followgraph::api;
use followgraph::api::Endpoint as E;
use followgraph::generate::{default_created_at_ms, generate_tables, GenerateOptions};
use followgraph::graph::Graph;
use followgraph::snapshot::{
    format_address, read_snapshot, write_snapshot, LoadedSnapshot, Table, WriteOptions,
};

// ---------------------------------------------------------------------------
// Counting allocator

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static CURRENT: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

#[inline]
fn grew(n: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        let now = CURRENT.fetch_add(n as isize, Ordering::Relaxed) + n as isize;
        PEAK.fetch_max(now, Ordering::Relaxed);
        ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
}

#[inline]
fn shrank(n: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        CURRENT.fetch_sub(n as isize, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        shrank(layout.size());
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

#[derive(Clone, Debug)]
struct Mem {
    id: String,
    /// Peak heap bytes live above the level at the routine's start.
    peak: i64,
    /// Net heap change when the routine returned (its result held; negative
    /// when it consumed and freed its input, as the graph build does).
    retained: i64,
    allocs: usize,
}

static MEMORY: Mutex<Vec<Mem>> = Mutex::new(Vec::new());

/// Runs `f` once with the allocator counting and records its memory.
fn measure<R>(id: &str, f: impl FnOnce() -> R) {
    CURRENT.store(0, Ordering::SeqCst);
    PEAK.store(0, Ordering::SeqCst);
    ALLOCS.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    let out = f();
    let retained = CURRENT.load(Ordering::SeqCst) as i64;
    COUNTING.store(false, Ordering::SeqCst);
    drop(out);
    MEMORY.lock().unwrap().push(Mem {
        id: id.to_owned(),
        peak: PEAK.load(Ordering::SeqCst) as i64,
        retained,
        allocs: ALLOCS.load(Ordering::SeqCst),
    });
}

// ---------------------------------------------------------------------------
// Options

fn accounts() -> u64 {
    std::env::var("FOLLOWGRAPH_BENCH_ACCOUNTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000)
}

fn options(accounts: u64) -> GenerateOptions {
    GenerateOptions {
        accounts,
        seed: 1,
        out: std::path::PathBuf::new(),
        created_at_ms: default_created_at_ms(),
        progress: false,
    }
}

/// Criterion's filter (the first positional argument), so that memory is
/// measured only for the benchmarks that run.
fn filter() -> Option<String> {
    const WITH_VALUE: [&str; 16] = [
        "--save-baseline",
        "-s",
        "--baseline",
        "-b",
        "--baseline-lenient",
        "--load-baseline",
        "--measurement-time",
        "--warm-up-time",
        "--sample-size",
        "--profile-time",
        "--output-format",
        "--color",
        "-c",
        "--plotting-backend",
        "--noise-threshold",
        "--nresamples",
    ];
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if WITH_VALUE.contains(&a.as_str())
            || a == "--confidence-level"
            || a == "--significance-level"
        {
            args.next();
        } else if !a.starts_with('-') {
            return Some(a);
        }
    }
    None
}

fn quick() -> bool {
    std::env::args().any(|a| a == "--quick")
}

struct Bench<'a, 'c> {
    group: BenchmarkGroup<'c, WallTime>,
    name: &'a str,
    filter: Option<String>,
}

impl Bench<'_, '_> {
    fn wants(&self, id: &str) -> bool {
        self.filter
            .as_deref()
            .is_none_or(|f| format!("{}/{id}", self.name).contains(f))
    }

    /// A benchmark of `f`, plus one counted run of it for memory.
    fn run<R>(&mut self, id: &str, mut f: impl FnMut() -> R) {
        if self.wants(id) {
            measure(&format!("{}/{id}", self.name), &mut f);
        }
        self.group.bench_function(id, |b| b.iter(&mut f));
    }
}

/// Answers `target` (path?query) the way the HTTP layer does, minus HTTP:
/// route, parse, resolve, render.
fn answer(g: &Graph, target: &str) -> String {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    api::answer(g, path, query, 1000, api::RenderEnv::at(g.created_at_ms)).expect("a valid request")
}

fn benches(c: &mut Criterion, dir: &Path) {
    let n = accounts();
    let filter = filter();
    let tables = generate_tables(&options(n), &mut |_, _| {});

    // --- load: each table, the whole snapshot, the graph build ------------
    write_snapshot(
        dir,
        default_created_at_ms(),
        &tables,
        &WriteOptions::default(),
    )
    .expect("write the bench snapshot");
    {
        let mut b = Bench {
            group: c.benchmark_group("load"),
            name: "load",
            filter: filter.clone(),
        };
        b.group.sample_size(10);
        for table in Table::ALL {
            let name = table.name();
            b.run(&format!("table_{name}"), || {
                LoadedSnapshot::read_table_rows(dir, name).expect("a valid table")
            });
        }
        b.run("read_snapshot", || {
            read_snapshot(dir).expect("a valid snapshot")
        });
        b.run("read_and_build", || {
            let s = read_snapshot(dir).expect("a valid snapshot");
            Graph::from_tables(s.name, s.created_at_ms, s.tables).expect("a valid graph")
        });
        if b.wants("build_graph") {
            let t = tables.clone();
            measure("load/build_graph", move || {
                Graph::from_tables("bench".into(), default_created_at_ms(), t).unwrap()
            });
        }
        b.group.bench_function("build_graph", |bch| {
            bch.iter_batched(
                || tables.clone(),
                |t| Graph::from_tables("bench".into(), default_created_at_ms(), t).unwrap(),
                BatchSize::LargeInput,
            )
        });
        b.group.finish();
    }

    // --- queries -------------------------------------------------------------
    let g = Graph::from_tables("bench".into(), default_created_at_ms(), tables).unwrap();
    let board = g.leaderboard();
    let listed = |from: &[u32]| -> Option<(String, u64)> {
        from.iter().find_map(|&id| {
            g.primary_list(id)
                .map(|l| (format_address(g.address(id)), l))
        })
    };
    let hub = listed(board).expect("a hub with a primary list");
    let median = listed(&board[board.len() / 2..]).expect("a median account with a list");
    // A primary-list user nobody follows (the leaderboard ends with them).
    let empty_list = board
        .iter()
        .rev()
        .find(|&&id| g.stats(id).followers == 0 && g.primary_list(id).is_some())
        .map(|&id| g.primary_list(id).unwrap());
    let who = [
        ("hub", format_address(g.address(board[0])), Some(hub.1)),
        ("median", median.0.clone(), Some(median.1)),
        ("empty", format!("0x{}", "0".repeat(39) + "1"), empty_list),
    ];
    let mut b = Bench {
        group: c.benchmark_group("query"),
        name: "query",
        filter,
    };
    b.group
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    let sorts = ["latest", "earliest", "followers"];
    for (kind, address, list) in &who {
        for sort in sorts {
            let t = format!(
                "{}?sort={sort}&offset=20",
                E::UserFollowers.target(&[address])
            );
            b.run(&format!("user_followers_{sort}/{kind}"), || answer(&g, &t));
        }
        let t = format!("{}?interval=all", E::UserNotifications.target(&[address]));
        b.run(&format!("notifications_all/{kind}"), || answer(&g, &t));
        let t = format!(
            "{}?interval=month&start={}",
            E::UserNotifications.target(&[address]),
            g.created_at_ms / 1000
        );
        b.run(&format!("notifications_month/{kind}"), || answer(&g, &t));
        let t = E::UserBadges.target(&[address]);
        b.run(&format!("user_badges/{kind}"), || answer(&g, &t));
        let Some(list) = list else { continue };
        let t = E::ListDetails.target(&[&list.to_string()]);
        b.run(&format!("list_details/{kind}"), || answer(&g, &t));
        let t = E::ListBadges.target(&[&list.to_string()]);
        b.run(&format!("list_badges/{kind}"), || answer(&g, &t));
        for sort in sorts {
            let t = format!(
                "{}?sort={sort}",
                E::ListFollowers.target(&[&list.to_string()])
            );
            b.run(&format!("list_followers_{sort}/{kind}"), || answer(&g, &t));
        }
    }
    // The hub's page nine tenths of the way in: `earliest` skips an
    // unfiltered offset by binary searches, the others by slicing.
    let deep = g.stats(board[0]).followers * 9 / 10;
    for sort in sorts {
        let t = format!(
            "{}?sort={sort}&offset={deep}",
            E::UserFollowers.target(&[&who[0].1])
        );
        b.run(&format!("user_followers_{sort}_deep/hub"), || {
            answer(&g, &t)
        });
    }
    let search = E::LeaderboardSearch.target(&[]);
    for (name, query) in [
        ("search_3_chars", "term=abc"),
        ("search_name", "term=ape1"),
        ("search_1_char", "term=a"),
        ("search_address_prefix", "term=0xc2f&limit=10"),
    ] {
        let t = format!("{search}?{query}");
        b.run(name, || answer(&g, &t));
    }
    b.group.finish();
}

/// Criterion's median estimate of `id` in nanoseconds, from its output.
/// (Criterion keeps `group/function` and makes the function part one
/// directory: `/` becomes `_`.)
fn median_ns(criterion_dir: &Path, id: &str) -> Option<f64> {
    let (group, function) = id.split_once('/')?;
    let path = criterion_dir
        .join(group)
        .join(function.replace('/', "_"))
        .join("new")
        .join("estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["median"]["point_estimate"].as_f64()
}

fn human_ns(ns: f64) -> String {
    match ns {
        x if x >= 1e9 => format!("{:.2} s", x / 1e9),
        x if x >= 1e6 => format!("{:.2} ms", x / 1e6),
        x if x >= 1e3 => format!("{:.2} µs", x / 1e3),
        x => format!("{x:.0} ns"),
    }
}

fn human_bytes(b: i64) -> String {
    let a = b.unsigned_abs() as f64;
    let s = if a >= 1048576.0 {
        format!("{:.1} MiB", a / 1048576.0)
    } else if a >= 1024.0 {
        format!("{:.1} KiB", a / 1024.0)
    } else {
        format!("{a:.0} B")
    };
    if b < 0 {
        format!("-{s}")
    } else {
        s
    }
}

fn report_memory() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let criterion_dir = target.join("criterion");
    let rows = MEMORY.lock().unwrap().clone();
    if rows.is_empty() {
        return;
    }
    let mut md = String::from(
        "| benchmark | median time | peak heap | net heap after (result held) | allocations |\n|---|---:|---:|---:|---:|\n",
    );
    let mut json_rows = Vec::new();
    for m in &rows {
        let t = median_ns(&criterion_dir, &m.id);
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            m.id,
            t.map_or("-".into(), human_ns),
            human_bytes(m.peak),
            human_bytes(m.retained),
            m.allocs
        ));
        json_rows.push(serde_json::json!({
            "id": m.id, "median_ns": t, "peak_heap_bytes": m.peak,
            "result_heap_bytes": m.retained, "allocations": m.allocs,
        }));
    }
    let save = filter().is_none() && !quick();
    let dir = if save {
        root.join("benches").join("results")
    } else {
        target.join("followgraph-bench")
    };
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let report = serde_json::json!({
        "date": followgraph::time::format_iso_ms(now_ms),
        "command": "cargo bench --bench engine",
        "accounts": accounts(),
        "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "memory": "counting global allocator, one extra run per benchmark outside the timed loop: peak heap bytes above the start level, bytes held by the result, allocation count",
        "benchmarks": json_rows,
    });
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("engine-memory.json");
    let _ = std::fs::write(
        &path,
        serde_json::to_string_pretty(&report).unwrap_or_default() + "\n",
    );
    println!(
        "\nEngine benchmarks, {} accounts: median time (criterion) and heap memory\n\n{md}\nwritten to {}",
        accounts(),
        path.display()
    );
}

fn main() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let dir = tmp.path().join("gen");
    let mut c = Criterion::default().configure_from_args();
    benches(&mut c, &dir);
    c.final_summary();
    report_memory();
}
