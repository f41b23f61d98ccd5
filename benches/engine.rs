//! Engine benchmarks: graph build and each endpoint's query (validation,
//! resolution, rendering) for a hub (most-followed), a median and an empty
//! account, with every followers sort mode. No HTTP here.
//!
//! `cargo bench --bench engine`; size with FOLLOWGRAPH_BENCH_ACCOUNTS
//! (default 50,000 accounts, generated in memory).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use followgraph::generate::{default_created_at_ms, generate_tables, GenerateOptions};
use followgraph::graph::Graph;
use followgraph::query;
use followgraph::request::{parse_request, route};
use followgraph::snapshot::format_address;

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

/// Answers `target` (path?query) the way the HTTP layer does, minus HTTP.
fn answer(g: &Graph, target: &str) -> String {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let route = route(path).1.expect("a known path");
    let req = parse_request(&route, query, 1000).expect("a valid request");
    let resolved = query::resolve(g, &req.subject).expect("a known subject");
    query::render(g, &req, &resolved, g.created_at_ms)
}

fn benches(c: &mut Criterion) {
    let n = accounts();
    let tables = generate_tables(&options(n), &mut |_, _| {});
    let mut group = c.benchmark_group("build");
    group.sample_size(10);
    group.bench_function(format!("graph_{n}_accounts"), |b| {
        b.iter_batched(
            || tables.clone(),
            |t| Graph::from_tables("bench".into(), default_created_at_ms(), t).unwrap(),
            BatchSize::LargeInput,
        )
    });
    group.finish();

    let g = Graph::from_tables("bench".into(), default_created_at_ms(), tables).unwrap();
    let board = g.leaderboard();
    let who = [
        ("hub", format_address(g.address(board[0]))),
        ("median", format_address(g.address(board[board.len() / 2]))),
        ("empty", format!("0x{}", "0".repeat(39) + "1")),
    ];
    let mut group = c.benchmark_group("query");
    for (kind, address) in &who {
        for sort in ["latest", "earliest", "followers"] {
            let t = format!("/api/v1/users/{address}/followers?sort={sort}&offset=20");
            group.bench_function(format!("user_followers_{sort}/{kind}"), |b| {
                b.iter(|| answer(&g, &t))
            });
        }
        let t = format!("/api/v1/users/{address}/notifications?interval=all");
        group.bench_function(format!("notifications_all/{kind}"), |b| {
            b.iter(|| answer(&g, &t))
        });
        let t = format!("/api/v1/users/{address}/badges");
        group.bench_function(format!("user_badges/{kind}"), |b| b.iter(|| answer(&g, &t)));
    }
    let list = g
        .primary_list(board[0])
        .expect("the hub has a primary list");
    for (name, t) in [
        ("list_details/hub", format!("/api/v1/lists/{list}/details")),
        (
            "list_followers_latest/hub",
            format!("/api/v1/lists/{list}/followers"),
        ),
        (
            "search_3_chars",
            "/api/v1/leaderboard/search?term=abc".to_owned(),
        ),
        (
            "search_name",
            "/api/v1/leaderboard/search?term=ape1".to_owned(),
        ),
        (
            "search_1_char",
            "/api/v1/leaderboard/search?term=a".to_owned(),
        ),
    ] {
        group.bench_function(name, |b| b.iter(|| answer(&g, &t)));
    }
    group.finish();
}

criterion_group!(engine, benches);
criterion_main!(engine);
