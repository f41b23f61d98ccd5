//! SIGHUP reloads: a new snapshot swaps in and the response cache is
//! dropped, an unchanged one is reloaded too, and signals during a load
//! queue at most one more while the old snapshot keeps serving.

use std::time::{Duration, Instant};

use followgraph::snapshot::{EnsRow, ListRow, PrimaryListRow};
use serde_json::Value;

use crate::fixtures::*;
use crate::support::*;

use super::probes::{info, wait_generation};
use super::renamed;

#[test]
fn sighup_reloads_snapshot_and_drops_cache() {
    let mut srv = TestServer::start_args(&graph(), &["--poll-interval", "0"]);
    let before = srv.get("/api/v1/lists/1/details");
    assert_eq!(before.json()["ens"]["name"], "alice.eth");
    assert_no_user_found(&srv.get("/api/v1/lists/50/details"));
    let lb = srv.get("/api/v1/leaderboard/search?term=alice");
    assert_eq!(lb.json()["last_updated"], CREATED_AT);
    // Cached now: asking again gives the same.
    assert_text(&srv.get("/api/v1/lists/1/details"), 200, &before.text());

    // Snapshot 2: A renamed, list 50 for a new account, one second later.
    let mut tables = graph();
    for row in tables.ens.iter_mut() {
        if row.name == "alice.eth" {
            *row = EnsRow {
                address: row.address,
                name: "alice2.eth".into(),
                ..Default::default()
            };
        }
    }
    let newcomer = "0x5050505050505050505050505050505050505050";
    tables.lists.push(ListRow {
        token_id: 50,
        user: addr(newcomer),
        owner: addr(newcomer),
        manager: addr(newcomer),
    });
    tables.primary_lists.push(PrimaryListRow {
        address: addr(newcomer),
        token_id: 50,
    });
    write_and_publish(srv.root.path(), "snap-2", CREATED_AT_MS + 1000, &tables);
    srv.signal("HUP");

    let v = wait_generation(&mut srv, 2, Duration::from_secs(20));
    assert_eq!(v["name"], "snap-2", "{v}");
    assert_eq!(v["created_at"], "2026-11-20T12:00:01.000Z", "{v}");
    assert_eq!(v["last_error"], Value::Null, "{v}");
    assert_eq!(srv.get("/api/v1/lists/50/details").status, 200);
    // The same request as before the swap: the cached answer is gone.
    let after = srv.get("/api/v1/lists/1/details");
    assert_eq!(after.status, 200, "{}", after.text());
    assert_eq!(
        after.json()["ens"]["name"],
        "alice2.eth",
        "{}",
        after.text()
    );
    assert_eq!(
        after.json()["ens"]["avatar"],
        Value::Null,
        "{}",
        after.text()
    );
    let lb = srv.get("/api/v1/leaderboard/search?term=alice");
    assert_eq!(
        lb.json()["last_updated"],
        "2026-11-20T12:00:01.000Z",
        "{}",
        lb.text()
    );
    assert_eq!(
        lb.json()["results"][0]["name"],
        "alice2.eth",
        "{}",
        lb.text()
    );
    assert_eq!(
        lb.json()["results"][0]["updated_at"],
        "2026-11-20T12:00:01.000Z"
    );
}

#[test]
fn sighup_reloads_even_when_nothing_changed() {
    let mut srv = TestServer::start_args(&graph(), &["--poll-interval", "0"]);
    let first = info(&srv);
    assert_eq!(first["generation"], 1, "{first}");
    let details = srv.get("/api/v1/lists/1/details");
    for generation in [2u64, 3] {
        std::thread::sleep(Duration::from_millis(20));
        srv.signal("HUP");
        let v = wait_generation(&mut srv, generation, Duration::from_secs(20));
        assert_eq!(v["name"], "snap-1", "{v}");
        assert_eq!(v["created_at"], CREATED_AT, "{v}");
        assert_eq!(v["last_error"], Value::Null, "{v}");
        let loaded = |v: &Value| {
            followgraph::time::parse_iso_ms(v["loaded_at"].as_str().unwrap_or(""))
                .unwrap_or_else(|| panic!("loaded_at is not ISO ms: {v}"))
        };
        assert!(loaded(&v) >= loaded(&first), "{first} then {v}");
        assert_text(&srv.get("/api/v1/lists/1/details"), 200, &details.text());
    }
}

#[test]
fn triggers_during_a_load_queue_at_most_one_more_and_the_old_snapshot_serves_meanwhile() {
    let mut srv = TestServer::start_args(
        &graph(),
        &["--poll-interval", "0", "--debug-load-delay-ms", "1000"],
    );
    let before = srv.get("/api/v1/lists/1/details");
    assert_eq!(before.status, 200);
    let t = renamed(graph(), "alice2.eth", "Alice 2");
    write_and_publish(srv.root.path(), "snap-2", CREATED_AT_MS + 2000, &t);

    let hup = Instant::now();
    srv.signal("HUP");
    std::thread::sleep(Duration::from_millis(300));
    // The load sleeps 1 s: these four arrive while it runs.
    for _ in 0..4 {
        srv.signal("HUP");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Still loading: the old snapshot answers, no 503.
    let during = srv.get("/api/v1/lists/1/details");
    let v = info(&srv);
    if hup.elapsed() < Duration::from_millis(950) {
        assert_text(&during, 200, &before.text());
        assert_eq!(v["generation"], 1, "{v}");
        assert_text(&srv.get("/ready"), 200, r#"{"status":"ready"}"#);
    }

    let v = wait_generation(&mut srv, 2, Duration::from_secs(20));
    assert_eq!(v["name"], "snap-2", "{v}");
    assert_eq!(
        srv.get("/api/v1/lists/1/details").json()["ens"]["name"],
        "alice2.eth"
    );
    // Exactly one more load was queued by the four signals.
    wait_generation(&mut srv, 3, Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(2500));
    let v = info(&srv);
    assert_eq!(
        v["generation"], 3,
        "more than one reload was queued during a load: {v}"
    );
}
