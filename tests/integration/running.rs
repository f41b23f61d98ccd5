//! `followgraph serve`: what it serves (root, CURRENT, snapshot directory),
//! flags and their environment variables, signals.

use std::time::Duration;

use followgraph::snapshot::EnsRow;

use crate::fixtures::*;
use crate::protocol::wait_for;
use crate::support::*;

fn last_updated(srv: &TestServer) -> String {
    let resp = srv.get("/api/v1/leaderboard/search?term=alice&limit=1");
    assert_eq!(resp.status, 200, "{}", resp.text());
    resp.json()["last_updated"]
        .as_str()
        .expect("last_updated")
        .to_owned()
}

#[test]
fn serves_one_snapshot_directory() {
    let root = tempfile::tempdir().unwrap();
    write_and_publish(root.path(), "snap-a", CREATED_AT_MS, &graph());
    // A second snapshot that CURRENT does not name.
    write_and_publish(root.path(), "snap-b", CREATED_AT_MS + 2000, &graph());
    let dir = root.path().join("snap-a");
    let srv = TestServer::spawn(root, &serve_args(&dir), &[]);
    assert_eq!(last_updated(&srv), CREATED_AT);
}

#[test]
fn serves_the_snapshot_current_names() {
    let root = tempfile::tempdir().unwrap();
    write_and_publish(root.path(), "snap-b", CREATED_AT_MS + 2000, &graph());
    write_and_publish(root.path(), "snap-a", CREATED_AT_MS, &graph());
    // CURRENT names snap-a although snap-b has the greater name.
    let path = root.path().to_path_buf();
    let srv = TestServer::spawn(root, &serve_args(&path), &[]);
    assert_eq!(last_updated(&srv), CREATED_AT);
}

#[test]
fn root_without_current_serves_greatest_name_with_manifest() {
    let root = tempfile::tempdir().unwrap();
    write_and_publish(root.path(), "snap-1", CREATED_AT_MS, &graph());
    write_and_publish(root.path(), "snap-2", CREATED_AT_MS + 2000, &graph());
    std::fs::remove_file(root.path().join("CURRENT")).unwrap();
    // Greater names without a manifest are skipped.
    std::fs::create_dir(root.path().join("snap-3")).unwrap();
    let path = root.path().to_path_buf();
    let srv = TestServer::spawn(root, &serve_args(&path), &[]);
    assert_eq!(last_updated(&srv), "2026-11-20T12:00:02.000Z");
}

#[test]
fn flags_have_environment_variables() {
    let root = tempfile::tempdir().unwrap();
    write_and_publish(root.path(), "snap-1", CREATED_AT_MS, &graph());
    let path = root.path().as_os_str().to_owned();
    let srv = TestServer::spawn(
        root,
        &["serve".into()],
        &[
            ("FOLLOWGRAPH_SNAPSHOT", path),
            ("FOLLOWGRAPH_LISTEN", "127.0.0.1:0".into()),
            ("FOLLOWGRAPH_MAX_LIMIT", "3".into()),
        ],
    );
    assert_eq!(last_updated(&srv), CREATED_AT);
    assert_400(
        &srv.get("/api/v1/leaderboard/search?term=0x&limit=4"),
        "limit must be at most 3",
    );
    let resp = srv.get("/api/v1/leaderboard/search?term=0x&limit=3");
    assert_eq!(
        addresses(&resp.json(), "results"),
        vec![D.to_owned(), A.to_owned(), B.to_owned()]
    );
}

#[test]
fn max_limit_flag() {
    let root = tempfile::tempdir().unwrap();
    write_and_publish(root.path(), "snap-1", CREATED_AT_MS, &graph());
    let args = serve_args_with(root.path(), &["--max-limit", "2"]);
    let srv = TestServer::spawn(root, &args, &[]);
    assert_400(
        &srv.get("/api/v1/users/dave.eth/followers?limit=3"),
        "limit must be at most 2",
    );
    assert_400(
        &srv.get("/api/v1/users/dave.eth/notifications?limit=3"),
        "limit must be at most 2",
    );
    let resp = srv.get("/api/v1/users/dave.eth/followers?limit=2");
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(addresses(&resp.json(), "followers").len(), 2);
    // A default limit above the maximum is lowered to it, not an error.
    let resp = srv.get("/api/v1/users/dave.eth/followers");
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(addresses(&resp.json(), "followers").len(), 2);
    let resp = srv.get("/api/v1/leaderboard/search?term=0x");
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(addresses(&resp.json(), "results").len(), 2);
}

#[test]
fn sigterm_stops_the_server() {
    let mut srv = TestServer::start(&graph());
    assert_eq!(srv.get("/api/v1/lists/1/details").status, 200);
    srv.signal("TERM");
    let status = srv.wait_exit(Duration::from_secs(10));
    assert!(status.is_some(), "still running 10 s after SIGTERM");
    assert!(
        status.unwrap().success(),
        "exit status after SIGTERM: {:?}",
        status
    );
}

#[test]
fn sigint_stops_the_server() {
    let mut srv = TestServer::start(&graph());
    assert_eq!(srv.get("/api/v1/lists/1/details").status, 200);
    srv.signal("INT");
    let status = srv.wait_exit(Duration::from_secs(10));
    assert!(status.is_some(), "still running 10 s after SIGINT");
    assert!(
        status.unwrap().success(),
        "exit status after SIGINT: {:?}",
        status
    );
}

#[test]
fn rejected_snapshot_never_replaces_the_served_one() {
    let mut srv = TestServer::start(&graph());
    let before = srv.get("/api/v1/lists/1/details");
    assert_eq!(before.status, 200);

    // snap-2: valid tables but a manifest with an unknown format.
    let mut renamed = graph();
    renamed.ens[0] = EnsRow {
        address: addr(A),
        name: "alice2.eth".into(),
        ..Default::default()
    };
    write_and_publish(srv.root.path(), "snap-2", CREATED_AT_MS + 1000, &renamed);
    let manifest = srv.root.path().join("snap-2/manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains("graph-snapshot/1"), "{text}");
    std::fs::write(
        &manifest,
        text.replace("graph-snapshot/1", "graph-snapshot/9"),
    )
    .unwrap();
    srv.signal("HUP");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        srv.exited().is_none(),
        "server exited after SIGHUP; stderr:\n{}",
        srv.stderr_log()
    );
    assert_text(&srv.get("/api/v1/lists/1/details"), 200, &before.text());
    assert_text(
        &srv.get("/api/v1/lists/1/details?cache=fresh"),
        200,
        &before.text(),
    );
    assert_eq!(last_updated(&srv), CREATED_AT);

    // snap-3: the same tables, valid: it is served.
    write_and_publish(srv.root.path(), "snap-3", CREATED_AT_MS + 3000, &renamed);
    srv.signal("HUP");
    let after = wait_for(&mut srv, "/api/v1/lists/1/details", |r| {
        r.status == 200 && r.json()["ens"]["name"] == "alice2.eth"
    });
    assert_eq!(after.json()["address"], A);
    assert_eq!(last_updated(&srv), "2026-11-20T12:00:03.000Z");
}

/// A render that may be long (`/leaderboard/all`, 800 ms at a million
/// accounts; a page from offset 10,000 on, which a filter or a search
/// walks item by item) does not hold up the worker thread's other
/// requests. With one worker thread and such renders held for 3 s,
/// requests on other connections, sent once the render has started, must
/// all be answered before it ends; rendered in place, the first of them
/// would wait for it. A page at offset 9,999 is among them: it renders in
/// place, undelayed.
#[test]
fn a_long_render_does_not_hold_up_other_requests() {
    let srv = TestServer::start_args(
        &graph(),
        &["--worker-threads", "1", "--debug-render-delay-ms", "3000"],
    );
    let expected_details = srv.get("/api/v1/lists/1/details").text();
    let deep = "/api/v1/users/alice.eth/followers?tags=top8&offset=10000&cache=fresh";
    for slow_path in ["/api/v1/leaderboard/all?cache=fresh", deep] {
        let rendered = std::sync::atomic::AtomicBool::new(false);
        let slow = std::thread::scope(|scope| {
            let slow = scope.spawn(|| {
                let resp = srv.get(slow_path);
                rendered.store(true, std::sync::atomic::Ordering::SeqCst);
                resp
            });
            // Gives the slow request time to reach its render.
            std::thread::sleep(Duration::from_millis(500));
            for path in [
                "/api/v1/lists/1/details?cache=fresh",
                "/api/v1/users/alice.eth/stats?cache=fresh",
                "/api/v1/leaderboard/count",
                "/api/v1/users/alice.eth/followers?tags=top8&offset=9999&cache=fresh",
            ] {
                let resp = srv.get(path);
                assert_eq!(resp.status, 200, "{path}: {}", resp.text());
                assert!(
                    !rendered.load(std::sync::atomic::Ordering::SeqCst),
                    "{path} was answered only after {slow_path}"
                );
            }
            assert_text(&srv.get("/api/v1/lists/1/details"), 200, &expected_details);
            slow.join().expect("the slow request's thread")
        });
        assert_eq!(slow.status, 200, "{slow_path}: {}", slow.text());
        if slow_path == deep {
            assert_eq!(slow.text(), r#"{"followers":[]}"#);
        } else {
            assert_eq!(addresses(&slow.json(), "results"), [A, B, C, D, F]);
        }
    }
}

/// `YYYY-MM-DD` with a plausible year.
fn is_day(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && text
            .split('-')
            .all(|part| part.bytes().all(|c| c.is_ascii_digit()))
        && text[..4] >= *"2026"
}

#[test]
fn the_build_names_itself_in_version_metrics_and_the_command_line() {
    let srv = TestServer::start(&graph());
    let resp = srv.get("/version");
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_json_content_type(&resp);
    let v = resp.json();
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    let (commit, day) = (
        v["commit"].as_str().expect("commit"),
        v["build_date"].as_str().expect("build_date"),
    );
    // The build script names the checkout's HEAD (cargo runs it again when
    // HEAD moves), or `unknown` outside a git checkout.
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    assert_eq!(commit, head.as_deref().unwrap_or("unknown"));
    assert!(is_day(day), "build_date {day:?}");
    assert_eq!(v.as_object().map(|o| o.len()), Some(3), "{v}");

    let metrics = srv.get("/metrics").text();
    let line = format!(
        "followgraph_build_info{{version=\"{}\",commit=\"{commit}\",build_date=\"{day}\"}} 1",
        env!("CARGO_PKG_VERSION")
    );
    assert!(
        metrics.lines().any(|l| l == line),
        "no {line} in\n{metrics}"
    );

    let out = followgraph_command(&["--version".into()], &[])
        .output()
        .expect("runs");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "followgraph {} (commit {commit}, built {day})\n",
            env!("CARGO_PKG_VERSION")
        )
    );
    // Like the other operations endpoints: HEAD, OPTIONS, and 405 else.
    assert_eq!(srv.head("/version").status, 200);
    assert_eq!(srv.request("POST", "/version", &[]).status, 405);
}

#[test]
fn log_format_json_writes_one_object_per_line() {
    let srv = TestServer::start_args(&graph(), &["--log-format", "json"]);
    assert_eq!(srv.get("/health").status, 200);
    let log = srv.stderr_log();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect();
    assert!(!lines.is_empty(), "no log lines");
    for line in &lines {
        for key in ["timestamp", "level", "target", "message"] {
            assert!(line.get(key).is_some(), "no {key} in {line}");
        }
    }
    // An event's fields sit beside its message.
    assert!(
        lines
            .iter()
            .any(|l| l["message"] == "open-files limit" || l["to"].is_u64() || l["limit"].is_u64()),
        "{log}"
    );
}

#[test]
fn metrics_carry_the_process_figures() {
    let srv = TestServer::start(&graph());
    let m = parse_metrics(&srv.get("/metrics").text());
    let value = |name: &str| metric(&m, name, &[]).unwrap_or_else(|| panic!("no {name}"));
    assert!(value("process_resident_memory_bytes") > 1e6);
    assert!(value("process_resident_memory_peak_bytes") >= value("process_resident_memory_bytes"));
    assert!(value("process_cpu_seconds_total") >= 0.0);
    // The listener, the snapshot's files, stdio at least.
    assert!(value("process_open_fds") >= 3.0);
    assert!(value("process_max_fds") >= value("process_open_fds"));
    assert!(value("process_threads") >= 2.0);
}

#[test]
fn admin_listen_takes_the_operations_endpoints_off_the_public_port() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let admin_port = free.local_addr().unwrap().port();
    drop(free);
    let admin_at = format!("127.0.0.1:{admin_port}");
    let mut srv = TestServer::start_args(&graph(), &["--admin-listen", &admin_at]);
    // The public port: the API and the probes only.
    assert_eq!(srv.get("/api/v1/lists/1/details").status, 200);
    assert_eq!(srv.get("/health").status, 200);
    assert_eq!(srv.get("/ready").status, 200);
    for path in ["/metrics", "/snapshot", "/version"] {
        assert_unknown_path(&srv.get(path), path);
    }
    // The admin port: every operations endpoint, no API.
    let mut admin = Conn::new(admin_port);
    for path in ["/metrics", "/snapshot", "/version", "/health", "/ready"] {
        assert_eq!(admin.get(path).unwrap().status, 200, "{path}");
    }
    let mut admin = Conn::new(admin_port);
    let api = admin.get("/api/v1/lists/1/details").unwrap();
    assert_unknown_path(&api, "/api/v1/lists/1/details");
    // The public port's requests are counted where the admin port shows
    // them.
    let mut admin = Conn::new(admin_port);
    let metrics = admin.get("/metrics").unwrap().text();
    assert!(
        metrics.contains("followgraph_requests_total{endpoint=\"list_details\",status=\"200\"} 1"),
        "{metrics}"
    );
    srv.signal("TERM");
    let status = srv.wait_exit(Duration::from_secs(35)).expect("exits");
    assert!(status.success(), "{status:?}");
}
