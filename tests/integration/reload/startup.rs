//! The loading phase: `/ready` answers 503 until the first snapshot is
//! live (flags or their environment variables), and a first snapshot the
//! loader rejects ends the process with status 1 naming file and reason.

use std::time::{Duration, Instant};

use followgraph::snapshot::publish;
use serde_json::json;

use crate::fixtures::*;
use crate::support::*;

use super::damage::{break_address, check_mentions, edit_manifest};
use super::probes::{info, wait_generation};
use super::renamed;

#[test]
fn ready_is_503_until_the_first_snapshot_is_loaded() {
    let root = tempfile::tempdir().unwrap();
    write_and_publish(root.path(), "snap-1", CREATED_AT_MS, &graph());
    let args = serve_args_with(
        root.path(),
        &["--debug-load-delay-ms", "1500", "--poll-interval", "0"],
    );
    let started = Instant::now();
    let mut srv = TestServer::spawn_unready(root, &args, &[]);

    // The listening line is out; the load sleeps 1.5 s first.
    let health = srv.get("/health");
    assert_text(&health, 200, r#"{"status":"ok"}"#);
    let ready = srv.get("/ready");
    assert_text(&ready, 503, r#"{"status":"loading"}"#);
    assert_eq!(ready.header("access-control-allow-origin"), Some("*"));
    for target in [
        "/api/v1/lists/1/details",
        "/api/v1/leaderboard/search?term=alice",
        "/api/v1/users/alice.eth/followers",
    ] {
        let resp = srv.get(target);
        assert_text(&resp, 503, r#"{"error":"no snapshot is loaded yet"}"#);
        assert_eq!(
            resp.header("access-control-allow-origin"),
            Some("*"),
            "{}",
            resp.request
        );
    }
    assert!(
        started.elapsed() < Duration::from_millis(1400),
        "the loading-phase checks took {:?}: too slow to be meaningful",
        started.elapsed()
    );

    srv.wait_ready(Duration::from_secs(30));
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(1500),
        "/ready was 200 after {waited:?}, before --debug-load-delay-ms 1500 passed"
    );
    assert_text(&srv.get("/ready"), 200, r#"{"status":"ready"}"#);
    assert_text(&srv.get("/health"), 200, r#"{"status":"ok"}"#);
    let details = srv.get("/api/v1/lists/1/details");
    assert_eq!(details.status, 200, "{}", details.text());
    assert_eq!(details.json()["ens"]["name"], "alice.eth");
    assert_eq!(info(&srv)["generation"], 1);
}

#[test]
fn reload_flags_have_environment_variables() {
    let root = tempfile::tempdir().unwrap();
    write_and_publish(root.path(), "snap-1", CREATED_AT_MS, &graph());
    let path = root.path().as_os_str().to_owned();
    let mut srv = TestServer::spawn_unready(
        root,
        &["serve".into()],
        &[
            ("FOLLOWGRAPH_SNAPSHOT", path),
            ("FOLLOWGRAPH_LISTEN", "127.0.0.1:0".into()),
            ("FOLLOWGRAPH_POLL_INTERVAL", "1".into()),
            ("FOLLOWGRAPH_LOAD_THREADS", "1".into()),
            ("FOLLOWGRAPH_DEBUG_LOAD_DELAY_MS", "1000".into()),
        ],
    );
    assert_text(&srv.get("/ready"), 503, r#"{"status":"loading"}"#);
    srv.wait_ready(Duration::from_secs(30));
    // Polling every second, no signal.
    let t = renamed(graph(), "alice2.eth", "Alice 2");
    write_and_publish(srv.root.path(), "snap-2", CREATED_AT_MS + 2000, &t);
    let v = wait_generation(&mut srv, 2, Duration::from_secs(10));
    assert_eq!(v["name"], "snap-2", "{v}");
    assert_eq!(
        srv.get("/api/v1/lists/1/details").json()["ens"]["name"],
        "alice2.eth"
    );
}

#[test]
fn broken_first_snapshot_exits_with_code_1_naming_file_and_reason() {
    // A row-level error.
    let root = tempfile::tempdir().unwrap();
    let t = graph();
    let dir = write_unpublished(root.path(), "snap-1", CREATED_AT_MS, &t, false);
    break_address(&dir, &t);
    publish(root.path(), "snap-1").unwrap();
    let (status, stdout, stderr) =
        run_to_exit(&serve_args(root.path()), &[], Duration::from_secs(30));
    let status = status.unwrap_or_else(|| {
        panic!("still running 30 s after start on a broken snapshot; stdout {stdout:?}; stderr:\n{stderr}")
    });
    assert_eq!(
        status.code(),
        Some(1),
        "exit status {status}; stderr:\n{stderr}"
    );
    check_mentions(
        &stderr,
        &["list_records.parquet", "row 2", "address", "0x12"],
    )
    .unwrap_or_else(|e| panic!("stderr: {e}"));

    // A file-level error: checksum mismatch.
    let root = tempfile::tempdir().unwrap();
    let dir = write_unpublished(root.path(), "snap-1", CREATED_AT_MS, &graph(), true);
    edit_manifest(&dir, |m| {
        m["tables"]["ens"]["sha256"] = json!("0".repeat(64))
    });
    publish(root.path(), "snap-1").unwrap();
    let (status, _, stderr) = run_to_exit(&serve_args(root.path()), &[], Duration::from_secs(30));
    let status = status.expect("still running 30 s after start on a bad checksum");
    assert_eq!(
        status.code(),
        Some(1),
        "exit status {status}; stderr:\n{stderr}"
    );
    check_mentions(&stderr, &["ens.parquet", "checksum|sha256"])
        .unwrap_or_else(|e| panic!("stderr: {e}"));

    // CURRENT naming a directory that does not exist.
    let root = tempfile::tempdir().unwrap();
    write_unpublished(root.path(), "snap-1", CREATED_AT_MS, &graph(), true);
    publish(root.path(), "snap-gone").unwrap();
    let (status, _, stderr) = run_to_exit(&serve_args(root.path()), &[], Duration::from_secs(30));
    let status = status.expect("still running 30 s after start on a dangling CURRENT");
    assert_eq!(
        status.code(),
        Some(1),
        "exit status {status}; stderr:\n{stderr}"
    );
    check_mentions(&stderr, &["CURRENT", "snap-gone"]).unwrap_or_else(|e| panic!("stderr: {e}"));
}
