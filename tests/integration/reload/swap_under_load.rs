//! Swaps under load: clients on keep-alive connections keep asking while
//! 39 snapshots are published one after another; every answer is the
//! whole answer of one snapshot, never older than one seen before.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use followgraph::snapshot::{EnsRow, Tables};
use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

use super::probes::{info, wait_generation};

/// The account the swap test asks about (no `N(i)` address collides).
const ALICE: &str = "0xf0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0";
const SWAPS: u64 = 40;

/// Snapshot k of the swap test: ALICE (list 1, primary, ens `alice.eth`
/// displayed `Alice {k}`) is followed by N(1)..N(k) (list 100+i, record
/// of ALICE at S + i s); created at CREATED_AT + k s.
fn swap_tables(k: u64) -> Tables {
    let mut b = Builder::new();
    b.primary_list(1, ALICE);
    b.ens(EnsRow {
        address: addr(ALICE),
        name: "alice.eth".into(),
        display: Some(format!("Alice {k}")),
        ..Default::default()
    });
    for i in 1..=k {
        b.primary_list(100 + i, &n(i as u8))
            .record(100 + i, ALICE, S + i as i64 * 1000);
    }
    b.build()
}

// ALICE has k followers (rank 1, the only account with any), follows no
// one, and has no mutuals, blocks or top8.
fn expected_details(k: u64) -> String {
    format!(
        r#"{{"address":"{ALICE}","ens":{{"name":"alice.eth","avatar":null,"header":null,"display":"Alice {k}","records":{{}},"chains":{{}},"fresh":null,"resolver":null,"errors":{{}}}},"ranks":{{"mutuals_rank":"0","followers_rank":"1","following_rank":"0","top8_rank":"0","blocks_rank":"0"}},"primary_list":"1"}}"#
    )
}

// Latest first: N(k), N(k-1), N(k-2).
fn expected_followers(k: u64) -> String {
    let entries: Vec<String> = (k.saturating_sub(2).max(1)..=k)
        .rev()
        .map(|i| {
            format!(
                r#"{{"svc_list_nft_token_id":"{}","address":"{}","tags":[],"is_following":false,"is_blocked":false,"is_muted":false,"updated_at":"2024-10-14T00:00:{:02}.000Z"}}"#,
                100 + i,
                n(i as u8),
                i
            )
        })
        .collect();
    format!(r#"{{"followers":[{}]}}"#, entries.join(","))
}

fn expected_search(k: u64) -> String {
    let at = format!("2026-11-20T12:00:{k:02}.000Z");
    format!(
        r#"{{"last_updated":"{at}","results":[{{"address":"{ALICE}","name":"alice.eth","avatar":null,"header":null,"mutuals_rank":"0","followers_rank":"1","following_rank":"0","blocks_rank":"0","mutuals":"0","following":"0","followers":"{k}","blocks":"0","updated_at":"{at}"}}]}}"#
    )
}

const SWAP_TARGETS: [&str; 3] = [
    "/api/v1/lists/1/details",
    "/api/v1/lists/1/followers?limit=3",
    "/api/v1/leaderboard/search?term=alice",
];

fn expected_swap(target: usize, k: u64) -> String {
    match target {
        0 => expected_details(k),
        1 => expected_followers(k),
        _ => expected_search(k),
    }
}

struct ClientReport {
    requests: u64,
    last_k: u64,
    connects: u64,
    seen: BTreeMap<u64, u64>,
}

#[test]
fn snapshots_swap_under_load_without_mixed_or_failed_answers() {
    let root = tempfile::tempdir().unwrap();
    write_and_publish(root.path(), "snap-1", CREATED_AT_MS + 1000, &swap_tables(1));
    let args = serve_args_with(root.path(), &["--poll-interval", "0"]);
    let mut srv = TestServer::spawn(root, &args, &[]);
    for (i, target) in SWAP_TARGETS.iter().enumerate() {
        assert_text(&srv.get(target), 200, &expected_swap(i, 1));
    }

    // body -> k, per target.
    let known: Arc<Vec<HashMap<String, u64>>> = Arc::new(
        (0..SWAP_TARGETS.len())
            .map(|i| (1..=SWAPS).map(|k| (expected_swap(i, k), k)).collect())
            .collect(),
    );
    let done = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let clients: Vec<_> = (0..4)
        .map(|t| {
            let known = known.clone();
            let done = done.clone();
            let port = srv.port;
            std::thread::spawn(move || -> Result<ClientReport, String> {
                let mut conn = Conn::new(port);
                let mut report = ClientReport {
                    requests: 0,
                    last_k: 0,
                    connects: 0,
                    seen: BTreeMap::new(),
                };
                let begun = Instant::now();
                // Until the publisher is done (a request cap let fast
                // release-mode clients stop before the last swaps).
                while !done.load(Ordering::SeqCst) && begun.elapsed() < Duration::from_secs(60) {
                    let which = (t + report.requests as usize) % SWAP_TARGETS.len();
                    let target = SWAP_TARGETS[which];
                    let resp = conn
                        .get(target)
                        .map_err(|e| format!("client {t}, request {}: {e}", report.requests))?;
                    let body = String::from_utf8_lossy(&resp.body).into_owned();
                    if resp.status != 200 {
                        return Err(format!(
                            "client {t}: GET {target}: {} {body} (after snapshot {})",
                            resp.status, report.last_k
                        ));
                    }
                    let k = *known[which].get(&body).ok_or_else(|| {
                        format!(
                            "client {t}: GET {target}: body matches no snapshot (after snapshot {}): {body}",
                            report.last_k
                        )
                    })?;
                    if k < report.last_k {
                        return Err(format!(
                            "client {t}: GET {target}: answer of snapshot {k} after one of snapshot {} (a stale answer after a swap)",
                            report.last_k
                        ));
                    }
                    report.last_k = k;
                    *report.seen.entry(k).or_default() += 1;
                    report.requests += 1;
                }
                report.connects = conn.connects;
                Ok(report)
            })
        })
        .collect();

    let mut publisher_error = None;
    for k in 2..=SWAPS {
        if clients.iter().all(|c| c.is_finished()) {
            break;
        }
        let name = format!("snap-{k}");
        write_and_publish(
            srv.root.path(),
            &name,
            CREATED_AT_MS + k as i64 * 1000,
            &swap_tables(k),
        );
        srv.signal("HUP");
        let v = wait_generation(&mut srv, k, Duration::from_secs(20));
        if v["name"] != json!(name) || v["last_error"] != Value::Null {
            publisher_error = Some(format!("after swap {k}: /snapshot {v}"));
            break;
        }
        // The same request as the clients': the answer of snapshot k.
        let resp = srv.get(SWAP_TARGETS[0]);
        if resp.status != 200 || resp.text() != expected_details(k) {
            publisher_error = Some(format!(
                "after swap {k}: GET {}: {} {} (expected {})",
                SWAP_TARGETS[0],
                resp.status,
                String::from_utf8_lossy(&resp.body),
                expected_details(k)
            ));
            break;
        }
    }
    done.store(true, Ordering::SeqCst);
    let publish_time = started.elapsed();
    let mut errors: Vec<String> = publisher_error.into_iter().collect();
    let mut total = 0;
    for (t, client) in clients.into_iter().enumerate() {
        match client.join() {
            Ok(Ok(r)) => {
                eprintln!(
                    "client {t}: {} requests on {} connection(s), last snapshot {}, per snapshot {:?}",
                    r.requests, r.connects, r.last_k, r.seen
                );
                total += r.requests;
                if r.requests == 0 {
                    errors.push(format!("client {t} sent no request"));
                }
            }
            Ok(Err(e)) => errors.push(e),
            Err(_) => errors.push(format!("client {t} panicked")),
        }
    }
    eprintln!("{} swaps in {publish_time:?}, {total} requests", SWAPS - 1);
    assert!(
        errors.is_empty(),
        "swaps under load:\n  {}\nserver stderr:\n{}",
        errors.join("\n  "),
        srv.stderr_log()
    );
    let v = info(&srv);
    assert_eq!(v["generation"], SWAPS, "{v}");
    for (i, target) in SWAP_TARGETS.iter().enumerate() {
        assert_text(&srv.get(target), 200, &expected_swap(i, SWAPS));
    }
}
