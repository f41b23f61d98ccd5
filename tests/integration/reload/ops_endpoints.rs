//! The operations endpoints: `/snapshot` describes the served snapshot
//! (outside `/api/v1`), `/metrics` counts requests, cache and loads, and
//! `/health`, `/ready`, `/metrics`, `/snapshot` answer GET and HEAD with
//! CORS.

use std::collections::BTreeMap;

use followgraph::snapshot::Tables;
use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

use super::graph_with_ops;
use super::probes::metrics;

fn table_rows(t: &Tables) -> Value {
    json!({
        "lists": t.lists.len(),
        "primary_lists": t.primary_lists.len(),
        "list_records": t.list_records.len(),
        "list_record_tags": t.list_record_tags.len(),
        "list_ops": t.list_ops.len(),
        "ens": t.ens.len(),
        "badge_events": t.badge_events.len(),
        "badges": t.badges.len(),
        "recommended": t.recommended.len(),
    })
}

#[test]
fn snapshot_endpoint_reports_the_served_snapshot() {
    let t = graph_with_ops();
    let t0 = now_ms();
    let srv = TestServer::start_args(&t, &["--poll-interval", "0"]);
    let t1 = now_ms();
    let resp = srv.get("/snapshot");
    assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));
    assert_eq!(resp.header("access-control-allow-origin"), Some("*"));
    let v = resp.json();
    let loaded_at = v["loaded_at"]
        .as_str()
        .unwrap_or_else(|| panic!("loaded_at is not a string: {v}"));
    let ms = followgraph::time::parse_iso_ms(loaded_at)
        .unwrap_or_else(|| panic!("loaded_at {loaded_at:?} is not ISO 8601"));
    assert_eq!(
        followgraph::time::format_iso_ms(ms),
        loaded_at,
        "loaded_at is not in the canonical millisecond form"
    );
    assert!(
        t0 - 1000 <= ms && ms <= t1 + 1000,
        "loaded_at {loaded_at} is not between the start ({t0}) and ready ({t1})"
    );
    let took = v["load_duration_ms"]
        .as_f64()
        .unwrap_or_else(|| panic!("load_duration_ms is not a number: {v}"));
    assert!(
        took >= 0.0 && took <= (t1 - t0) as f64 + 1000.0,
        "load_duration_ms {took}, start to ready took {} ms",
        t1 - t0
    );
    // The graph's heap by index: estimates, so only their names, order
    // and kind are fixed.
    let memory = v["memory_bytes"]
        .as_object()
        .unwrap_or_else(|| panic!("memory_bytes is not an object: {v}"));
    let parts: Vec<&str> = memory.keys().map(String::as_str).collect();
    assert_eq!(
        parts,
        [
            "accounts",
            "following",
            "followers",
            "tags",
            "stats",
            "ranked",
            "lists",
            "search",
            "profiles",
            "notifications",
            "badges",
            "recommended",
            "latest_follows",
            "compacted",
            "live"
        ]
    );
    assert_eq!(memory["live"], 0, "no tail, no live index: {v}");
    assert_eq!(memory["compacted"], 0, "no tail, no refresh: {v}");
    assert!(memory.values().all(|b| b.is_u64()), "{v}");
    assert!(memory["accounts"].as_u64() > Some(0), "{v}");
    let expected = json!({
        "name": "snap-1",
        "generation": 1,
        "created_at": CREATED_AT,
        "loaded_at": v["loaded_at"],
        "load_duration_ms": v["load_duration_ms"],
        "tables": table_rows(&t),
        "memory_bytes": v["memory_bytes"],
        "last_error": null,
    });
    assert_json(&resp, 200, expected);
    let head = srv.head("/snapshot");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
}

/// Only the seven endpoints live under `/api/v1`: the snapshot info is at
/// `/snapshot`, and `/api/v1/snapshot` is an ordinary unknown path.
#[test]
fn snapshot_endpoint_is_outside_the_api_namespace() {
    let srv = TestServer::start_args(&graph(), &["--poll-interval", "0"]);
    let resp = srv.get("/snapshot");
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["name"], "snap-1", "{}", resp.text());
    assert_eq!(resp.json()["generation"], 1, "{}", resp.text());
    let old = r#"{"error":"/api/v1/snapshot is not a valid path"}"#;
    assert_text(&srv.get("/api/v1/snapshot"), 404, old);
    assert_text(&srv.get("/api/v1/snapshot?cache=fresh"), 404, old);
    for method in ["HEAD", "OPTIONS", "POST"] {
        let resp = srv.request(method, "/api/v1/snapshot", &[]);
        assert_eq!(resp.status, 404, "{}", resp.request);
        assert_eq!(resp.header("access-control-allow-origin"), Some("*"));
    }
}

const ENDPOINTS: [&str; 7] = [
    "list_details",
    "user_badges",
    "list_badges",
    "leaderboard_search",
    "user_notifications",
    "user_followers",
    "list_followers",
];

#[test]
fn metrics_count_requests_cache_and_snapshot() {
    let t = graph_with_ops();
    let srv = TestServer::start_args(&t, &["--poll-interval", "0"]);
    let sent: &[(&str, &str, u16, u64)] = &[
        ("/api/v1/lists/1/details", "list_details", 200, 3),
        // 99: not in lists.
        ("/api/v1/lists/99/details", "list_details", 404, 2),
        ("/api/v1/users/alice.eth/badges", "user_badges", 200, 2),
        ("/api/v1/lists/1/badges", "list_badges", 200, 1),
        (
            "/api/v1/leaderboard/search?term=alice",
            "leaderboard_search",
            200,
            1,
        ),
        (
            "/api/v1/leaderboard/search?limit=x",
            "leaderboard_search",
            400,
            1,
        ),
        (
            "/api/v1/users/dave.eth/notifications?interval=all",
            "user_notifications",
            200,
            1,
        ),
        ("/api/v1/users/dave.eth/followers", "user_followers", 200, 1),
        ("/api/v1/lists/4/followers", "list_followers", 200, 1),
        ("/api/v1/nope", "other", 404, 1),
    ];
    for &(target, _, status, times) in sent {
        for _ in 0..times {
            let resp = srv.get(target);
            assert_eq!(resp.status, status, "{}: {}", resp.request, resp.text());
        }
    }

    let resp = srv.get("/metrics");
    assert_eq!(resp.status, 200);
    let ct = resp.header("content-type").unwrap_or("");
    assert!(
        ct.starts_with("text/plain; version=0.0.4"),
        "/metrics Content-Type {ct:?}"
    );
    assert_eq!(resp.header("access-control-allow-origin"), Some("*"));
    let text = resp.text();
    let m = parse_metrics(&text);
    let mut problems = Vec::new();

    // Requests per endpoint and status.
    let mut per_endpoint: BTreeMap<&str, u64> = BTreeMap::new();
    for &(_, endpoint, status, times) in sent {
        *per_endpoint.entry(endpoint).or_default() += times;
        let have = metric(
            &m,
            "followgraph_requests_total",
            &[("endpoint", endpoint), ("status", &status.to_string())],
        );
        if have != Some(times as f64) {
            problems.push(format!(
                "followgraph_requests_total{{endpoint=\"{endpoint}\",status=\"{status}\"}}: {have:?}, expected {times}"
            ));
        }
    }
    for s in m.iter().filter(|s| s.name == "followgraph_requests_total") {
        let endpoint = s
            .labels
            .iter()
            .find(|(k, _)| k == "endpoint")
            .map(|(_, v)| v.as_str());
        if !endpoint.is_some_and(|e| e == "other" || ENDPOINTS.contains(&e)) {
            problems.push(format!("unexpected request sample {s:?}"));
        }
    }
    // Latency histogram per endpoint: cumulative buckets, +Inf = count.
    for endpoint in ENDPOINTS {
        let count = metric(
            &m,
            "followgraph_request_duration_seconds_count",
            &[("endpoint", endpoint)],
        );
        let want = per_endpoint[endpoint] as f64;
        if count != Some(want) {
            problems.push(format!(
                "followgraph_request_duration_seconds_count{{endpoint=\"{endpoint}\"}}: {count:?}, expected {want}"
            ));
        }
        let sum = metric(
            &m,
            "followgraph_request_duration_seconds_sum",
            &[("endpoint", endpoint)],
        );
        if !sum.is_some_and(|s| s >= 0.0) {
            problems.push(format!(
                "followgraph_request_duration_seconds_sum{{endpoint=\"{endpoint}\"}}: {sum:?}"
            ));
        }
        let mut buckets: Vec<(f64, f64)> = m
            .iter()
            .filter(|s| s.name == "followgraph_request_duration_seconds_bucket")
            .filter(|s| {
                s.labels
                    .iter()
                    .any(|(k, v)| k == "endpoint" && v == endpoint)
            })
            .filter_map(|s| {
                let le = s.labels.iter().find(|(k, _)| k == "le")?;
                let le = if le.1 == "+Inf" {
                    f64::INFINITY
                } else {
                    le.1.parse().ok()?
                };
                Some((le, s.value))
            })
            .collect();
        buckets.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        let cumulative = buckets.windows(2).all(|w| w[0].1 <= w[1].1);
        let inf = buckets.last().filter(|b| b.0.is_infinite()).map(|b| b.1);
        if buckets.len() < 2 || !cumulative || inf != Some(want) {
            problems.push(format!(
                "followgraph_request_duration_seconds_bucket{{endpoint=\"{endpoint}\"}}: {buckets:?} (expected cumulative, +Inf = {want})"
            ));
        }
    }
    // Cache: details asked 3 times and user badges twice -> 3 hits; seven
    // distinct successful answers stored; errors are not cached.
    let expect = |problems: &mut Vec<String>, name: &str, ok: &dyn Fn(f64) -> bool, want: &str| {
        let have = metric(&m, name, &[]);
        if !have.is_some_and(ok) {
            problems.push(format!("{name}: {have:?}, expected {want}"));
        }
    };
    expect(
        &mut problems,
        "followgraph_cache_hits_total",
        &|v| v == 3.0,
        "3",
    );
    expect(
        &mut problems,
        "followgraph_cache_misses_total",
        &|v| v >= 7.0,
        ">= 7",
    );
    expect(
        &mut problems,
        "followgraph_cache_entries",
        &|v| v == 7.0,
        "7",
    );
    expect(
        &mut problems,
        "followgraph_cache_bytes",
        &|v| v > 0.0,
        "> 0",
    );
    // Snapshot.
    expect(
        &mut problems,
        "followgraph_snapshot_generation",
        &|v| v == 1.0,
        "1",
    );
    expect(
        &mut problems,
        "followgraph_snapshot_created_at_seconds",
        &|v| v == (CREATED_AT_MS / 1000) as f64,
        "1795176000",
    );
    expect(
        &mut problems,
        "followgraph_snapshot_load_duration_seconds",
        &|v| (0.0..60.0).contains(&v),
        "0..60",
    );
    expect(
        &mut problems,
        "followgraph_snapshot_loads_total",
        &|v| v >= 1.0,
        ">= 1",
    );
    expect(
        &mut problems,
        "followgraph_snapshot_load_failures_total",
        &|v| v == 0.0,
        "0",
    );
    expect(&mut problems, "followgraph_accounts", &|v| v > 0.0, "> 0");
    expect(&mut problems, "followgraph_records", &|v| v > 0.0, "> 0");
    expect(&mut problems, "followgraph_ops", &|v| v >= 0.0, ">= 0");
    let rows = table_rows(&t);
    for (table, n) in rows.as_object().unwrap() {
        let have = metric(&m, "followgraph_snapshot_rows", &[("table", table)]);
        if have != n.as_f64() {
            problems.push(format!(
                "followgraph_snapshot_rows{{table=\"{table}\"}}: {have:?}, expected {n}"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "/metrics:\n  {}\n--- /metrics was:\n{text}",
        problems.join("\n  ")
    );
}

#[test]
fn ops_endpoints_answer_get_and_head_with_cors() {
    let srv = TestServer::start_args(&graph(), &["--poll-interval", "0"]);
    for path in ["/health", "/ready", "/metrics", "/snapshot"] {
        let get = srv.request("GET", path, &[("Origin", "https://example.org")]);
        assert_eq!(get.status, 200, "{}: {}", get.request, get.text());
        assert_eq!(
            get.header("access-control-allow-origin"),
            Some("*"),
            "{}: {:?}",
            get.request,
            get.headers
        );
        assert!(!get.body.is_empty(), "{}", get.request);
        let head = srv.request("HEAD", path, &[("Origin", "https://example.org")]);
        assert_eq!(head.status, 200, "{}", head.request);
        assert_eq!(
            head.header("access-control-allow-origin"),
            Some("*"),
            "{}: {:?}",
            head.request,
            head.headers
        );
        assert_eq!(
            head.header("content-type"),
            get.header("content-type"),
            "{}",
            head.request
        );
        assert!(head.body.is_empty(), "{}", head.request);
    }
    assert_text(&srv.get("/health"), 200, r#"{"status":"ok"}"#);
    assert_text(&srv.get("/ready"), 200, r#"{"status":"ready"}"#);
    // Ops endpoints are counted under endpoint="other".
    let m = metrics(&srv);
    let other = metric(
        &m,
        "followgraph_requests_total",
        &[("endpoint", "other"), ("status", "200")],
    );
    assert!(
        other.is_some_and(|v| v >= 6.0),
        "followgraph_requests_total{{endpoint=\"other\",status=\"200\"}}: {other:?}"
    );
}
