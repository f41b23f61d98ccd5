//! The CURRENT poller: new snapshots are picked up without a signal, a
//! broken one is reported once and not retried while unchanged, a changed
//! manifest is reloaded, and `--poll-interval 0` turns it off.

use std::time::{Duration, Instant};

use followgraph::snapshot::publish;
use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

use super::damage::{break_address, check_mentions, edit_manifest};
use super::probes::{failures, info, wait_failures, wait_generation};
use super::renamed;

#[test]
fn poller_picks_up_new_snapshots_and_reports_a_broken_one_once() {
    let mut srv =
        TestServer::start_args(&graph(), &["--poll-interval", "1", "--load-threads", "1"]);
    assert_eq!(info(&srv)["generation"], 1);

    // A new snapshot, no signal.
    let t2 = renamed(graph(), "alice2.eth", "Alice 2");
    write_and_publish(srv.root.path(), "snap-2", CREATED_AT_MS + 2000, &t2);
    let published = Instant::now();
    let v = wait_generation(&mut srv, 2, Duration::from_secs(10));
    assert!(
        published.elapsed() < Duration::from_secs(5),
        "the poller took {:?} with --poll-interval 1",
        published.elapsed()
    );
    assert_eq!(v["name"], "snap-2", "{v}");
    assert_eq!(v["last_error"], Value::Null, "{v}");
    let served = srv.get("/api/v1/lists/1/details");
    assert_eq!(
        served.json()["ens"]["name"],
        "alice2.eth",
        "{}",
        served.text()
    );

    // A broken one: reported once, not retried while unchanged.
    let t3 = renamed(graph(), "alice3.eth", "Alice 3");
    let dir = write_unpublished(srv.root.path(), "snap-3", CREATED_AT_MS + 3000, &t3, false);
    break_address(&dir, &t3);
    publish(srv.root.path(), "snap-3").unwrap();
    wait_failures(&mut srv, 1, Duration::from_secs(10));
    let v = info(&srv);
    assert_eq!(v["generation"], 2, "{v}");
    assert_eq!(v["name"], "snap-2", "{v}");
    let err = v["last_error"].as_str().unwrap_or_else(|| panic!("{v}"));
    check_mentions(err, &["list_records.parquet", "address"]).unwrap();
    std::thread::sleep(Duration::from_millis(3000));
    assert_eq!(
        failures(&srv).unwrap(),
        1.0,
        "the poller retried an unchanged broken snapshot; /snapshot {}",
        info(&srv)
    );
    assert_eq!(info(&srv)["generation"], 2);
    assert_text(&srv.get("/api/v1/lists/1/details"), 200, &served.text());

    // SIGHUP does retry it.
    srv.signal("HUP");
    wait_failures(&mut srv, 2, Duration::from_secs(10));
    assert_eq!(info(&srv)["generation"], 2);

    // Fixed by publishing a new good snapshot.
    let t4 = renamed(graph(), "alice4.eth", "Alice 4");
    write_and_publish(srv.root.path(), "snap-4", CREATED_AT_MS + 4000, &t4);
    let v = wait_generation(&mut srv, 3, Duration::from_secs(10));
    assert_eq!(v["name"], "snap-4", "{v}");
    assert_eq!(v["last_error"], Value::Null, "{v}");
    assert_eq!(failures(&srv).unwrap(), 2.0);
    assert_eq!(
        srv.get("/api/v1/lists/1/details").json()["ens"]["name"],
        "alice4.eth"
    );
}

#[test]
fn poller_reloads_when_the_manifest_of_the_current_snapshot_changes() {
    let mut srv = TestServer::start_args(&graph(), &["--poll-interval", "1"]);
    // snap-2 is published with a wrong row count in its manifest...
    let t2 = renamed(graph(), "alice2.eth", "Alice 2");
    let dir = write_unpublished(srv.root.path(), "snap-2", CREATED_AT_MS + 2000, &t2, true);
    let rows = t2.lists.len() as u64;
    edit_manifest(&dir, |m| m["tables"]["lists"]["rows"] = json!(rows + 1000));
    publish(srv.root.path(), "snap-2").unwrap();
    wait_failures(&mut srv, 1, Duration::from_secs(10));
    assert_eq!(info(&srv)["generation"], 1);
    // ...then repaired in place: CURRENT is unchanged, manifest.json changed.
    edit_manifest(&dir, |m| m["tables"]["lists"]["rows"] = json!(rows));
    let v = wait_generation(&mut srv, 2, Duration::from_secs(10));
    assert_eq!(v["name"], "snap-2", "{v}");
    assert_eq!(v["last_error"], Value::Null, "{v}");
    assert_eq!(
        srv.get("/api/v1/lists/1/details").json()["ens"]["name"],
        "alice2.eth"
    );
}

#[test]
fn poll_interval_0_disables_polling() {
    let mut srv = TestServer::start_args(&graph(), &["--poll-interval", "0"]);
    let before = srv.get("/api/v1/lists/1/details");
    let t2 = renamed(graph(), "alice2.eth", "Alice 2");
    write_and_publish(srv.root.path(), "snap-2", CREATED_AT_MS + 2000, &t2);
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(info(&srv)["generation"], 1);
    assert_text(&srv.get("/api/v1/lists/1/details"), 200, &before.text());
    srv.signal("HUP");
    let v = wait_generation(&mut srv, 2, Duration::from_secs(20));
    assert_eq!(v["name"], "snap-2", "{v}");
}
