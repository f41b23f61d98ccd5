//! Connection and request limits, and panic safety.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::fixtures::*;
use crate::support::*;

#[test]
fn a_uri_over_the_limit_is_414_json() {
    let srv = TestServer::start_args(&graph(), &["--max-uri-bytes", "1000"]);
    let long = format!("/api/v1/leaderboard/search?term={}", "a".repeat(1000));
    assert_json(
        &srv.get(&long),
        414,
        serde_json::json!({"error": "the request URI is longer than 1000 bytes"}),
    );
    // Just under the limit is answered as usual.
    let fits = format!("/api/v1/leaderboard/search?term={}", "a".repeat(900));
    assert_eq!(srv.get(&fits).status, 200);
    // Also on unknown paths: the limit comes before routing.
    assert_eq!(srv.get(&format!("/{}", "x".repeat(1200))).status, 414);
}

#[test]
fn an_oversized_request_head_is_431() {
    let srv = TestServer::start_args(&graph(), &["--max-header-bytes", "8192"]);
    let big = "b".repeat(20_000);
    let resp = srv.request("GET", "/health", &[("X-Big", big.as_str())]);
    assert_eq!(resp.status, 431, "{}", resp.text());
    assert_eq!(srv.get("/health").status, 200);
}

#[test]
fn a_slow_client_is_disconnected_after_the_header_read_timeout() {
    let srv = TestServer::start_args(&graph(), &["--header-read-timeout", "1"]);
    let mut stream = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    // The server gives up on the unfinished head and closes.
    let _ = stream.read_to_end(&mut rest);
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(5), "held for {waited:?}");
    assert!(
        waited >= Duration::from_millis(500),
        "closed after {waited:?}"
    );
    assert_eq!(srv.get("/health").status, 200);
}

#[test]
fn connections_over_the_cap_wait_for_a_free_slot() {
    let srv = TestServer::start_args(
        &graph(),
        &["--max-connections", "2", "--header-read-timeout", "30"],
    );
    // Two connections that never finish their request hold both slots.
    let mut holders: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
            s.write_all(b"GET /health HTTP/1.1\r\n").unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let port = srv.port;
    let (sent, request_sent) = std::sync::mpsc::channel();
    let waiting = std::thread::spawn(move || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        sent.send(()).unwrap();
        let mut body = Vec::new();
        s.read_to_end(&mut body).unwrap();
        String::from_utf8_lossy(&body).into_owned()
    });
    // The third request is in the kernel's hands; at the cap it waits.
    request_sent.recv().unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        !waiting.is_finished(),
        "a third connection was served at the cap of 2"
    );
    holders.pop();
    let answer = waiting.join().unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[test]
fn a_panicking_handler_answers_500_json_and_the_server_carries_on() {
    let srv = TestServer::start_args(&graph(), &["--debug-panic-route"]);
    let mut conn = Conn::new(srv.port);
    for _ in 0..20 {
        let resp = conn.get("/debug/panic").unwrap();
        assert_json(&resp, 500, serde_json::json!({"error": "internal error"}));
        assert_eq!(resp.header("access-control-allow-origin"), Some("*"));
        // The same keep-alive connection still answers.
        assert_eq!(conn.get("/health").unwrap().status, 200);
    }
    assert_eq!(conn.connects, 1, "the connection was dropped by a panic");
    assert!(srv.stderr_log().contains("handler panicked"));
    assert_eq!(srv.get("/api/v1/lists/1/details").status, 200);
}

#[test]
fn the_panic_route_is_an_unknown_path_unless_enabled() {
    let srv = TestServer::start(&graph());
    assert_unknown_path(&srv.get("/debug/panic"), "/debug/panic");
    for method in ["POST", "PROPFIND", "OPTIONS", "HEAD"] {
        let resp = srv.request(method, "/debug/panic", &[]);
        assert_eq!(resp.status, 404, "{method}");
    }
}

#[test]
fn the_header_limit_is_exact() {
    // Default 64 KiB: a 70 KB header is over it (hyper's buffer alone
    // would let up to about twice through).
    let srv = TestServer::start(&graph());
    let big = "b".repeat(70_000);
    assert_eq!(
        srv.request("GET", "/health", &[("X-Big", big.as_str())])
            .status,
        431
    );
    let fits = "b".repeat(60_000);
    assert_eq!(
        srv.request("GET", "/health", &[("X-Big", fits.as_str())])
            .status,
        200
    );
}

#[test]
fn operations_endpoints_answer_preflights() {
    let srv = TestServer::start(&graph());
    for path in ["/health", "/ready", "/metrics", "/snapshot"] {
        let resp = srv.request("OPTIONS", path, &[]);
        assert_eq!(resp.status, 204, "{path}");
        assert_eq!(
            resp.header("access-control-allow-methods"),
            Some("GET, HEAD, OPTIONS")
        );
        assert_eq!(srv.request("DELETE", path, &[]).status, 405, "{path}");
    }
}

#[test]
fn serve_raises_its_open_files_limit_to_the_hard_limit() {
    let root = tempfile::tempdir().expect("tempdir");
    write_and_publish(root.path(), "snap-1", CREATED_AT_MS, &graph());
    // Started with a soft limit of 256, as many systems start services
    // with 1,024.
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(r#"ulimit -Sn 256 && exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_followgraph"))
        .args(serve_args(root.path()))
        .env("NO_COLOR", "1");
    let mut srv = TestServer::spawn_command(root, command);
    srv.wait_ready(Duration::from_secs(60));
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", srv.pid())).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("Max open files");
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (soft, hard) = (fields[3], fields[4]);
    assert_eq!(soft, hard, "{line}");
    assert_ne!(soft, "256", "{line}");
    let log = srv.stderr_log();
    assert!(
        log.contains("open-files limit raised to the hard limit") && log.contains("from=256"),
        "{log}"
    );
    assert_eq!(srv.get("/health").status, 200);
}
