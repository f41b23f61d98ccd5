//! HEAD, OPTIONS, CORS and the response cache (reloads: reload/).

use std::time::{Duration, Instant};

use crate::errors::KNOWN;
use crate::fixtures::*;
use crate::support::*;

#[test]
fn cors_header_on_every_response() {
    let srv = TestService::start(&graph());
    let mut targets: Vec<(&str, String, u16)> =
        KNOWN.iter().map(|p| ("GET", p.to_string(), 200)).collect();
    targets.extend([
        ("GET", "/api/v1/lists/0/details".to_owned(), 400),
        ("GET", "/api/v1/lists/99/details".to_owned(), 404),
        ("GET", "/api/v1/lists/8/account".to_owned(), 404),
        ("GET", "/api/v1/users/0x123/badges".to_owned(), 404),
        ("GET", "/api/v1/leaderboard/search?limit=x".to_owned(), 400),
        ("GET", "/api/v1/users/%FF/badges".to_owned(), 400),
        ("GET", "/api/v1/nope".to_owned(), 404),
        ("POST", "/api/v1/lists/1/details".to_owned(), 405),
        ("HEAD", "/api/v1/lists/1/details".to_owned(), 200),
        ("HEAD", "/api/v1/nope".to_owned(), 404),
        ("OPTIONS", "/api/v1/lists/1/details".to_owned(), 204),
        ("OPTIONS", "/api/v1/nope".to_owned(), 404),
    ]);
    for (method, target, status) in targets {
        let resp = srv.request(method, &target, &[("Origin", "https://example.org")]);
        assert_eq!(
            resp.status,
            status,
            "{}: {}",
            resp.request,
            String::from_utf8_lossy(&resp.body)
        );
        assert_eq!(
            resp.header("access-control-allow-origin"),
            Some("*"),
            "{}: headers {:?}",
            resp.request,
            resp.headers
        );
    }
}

#[test]
fn options_preflight_on_every_endpoint_validates_nothing() {
    let srv = TestService::start(&graph());
    let mut targets: Vec<String> = KNOWN.iter().map(|p| p.to_string()).collect();
    targets.extend(
        [
            "/api/v1/lists/abc/details",
            "/api/v1/lists/0/badges?cache=%FF",
            "/api/v1/lists/18446744073709551616/followers?limit=x",
            "/api/v1/lists/5/details",
            "/api/v1/users/0x123/badges",
            "/api/v1/users/nobody.eth/notifications?opcode=x&limit=1001",
            "/api/v1/leaderboard/search?term=%FF&limit=-1",
            // Not UTF-8 once decoded: still a known endpoint's path shape.
            "/api/v1/users/%FF/followers",
            "/api/v1/lists/%C3%28/details",
        ]
        .map(String::from),
    );
    for target in targets {
        for headers in [
            &[][..],
            &[
                ("Origin", "https://example.org"),
                ("Access-Control-Request-Method", "GET"),
                ("Access-Control-Request-Headers", "content-type"),
            ][..],
        ] {
            let resp = srv.request("OPTIONS", &target, headers);
            assert_eq!(
                resp.status,
                204,
                "{}: {}",
                resp.request,
                String::from_utf8_lossy(&resp.body)
            );
            assert_eq!(
                resp.header("access-control-allow-methods"),
                Some("GET, HEAD, OPTIONS"),
                "{}: {:?}",
                resp.request,
                resp.headers
            );
            assert_eq!(
                resp.header("access-control-allow-origin"),
                Some("*"),
                "{}",
                resp.request
            );
            assert!(resp.body.is_empty(), "{}", resp.request);
            // The requested headers are echoed; none asked, none allowed.
            let asked = headers
                .iter()
                .find(|(k, _)| *k == "Access-Control-Request-Headers")
                .map(|(_, v)| *v);
            assert_eq!(
                resp.header("access-control-allow-headers"),
                asked,
                "{}: {:?}",
                resp.request,
                resp.headers
            );
        }
    }
}

#[test]
fn preflight_echoes_request_headers_as_sent() {
    let srv = TestService::start(&graph());
    for (target, asked) in [
        ("/api/v1/lists/1/details", "Content-Type"),
        (
            "/api/v1/users/alice.eth/account",
            "content-type, x-requested-with",
        ),
        (
            "/api/v1/leaderboard/ranked?sort=x",
            "X-Custom,Authorization",
        ),
        ("/api/v1/stats", "content-type"),
        ("/api/v1/lists/8/stats", "Content-Type"),
    ] {
        let resp = srv.request(
            "OPTIONS",
            target,
            &[
                ("Origin", "https://app.example"),
                ("Access-Control-Request-Method", "GET"),
                ("Access-Control-Request-Headers", asked),
            ],
        );
        assert_eq!(resp.status, 204, "{}", resp.request);
        assert_eq!(
            resp.header("access-control-allow-headers"),
            Some(asked),
            "{}: {:?}",
            resp.request,
            resp.headers
        );
        assert_eq!(resp.header("access-control-allow-origin"), Some("*"));
        // Only preflights carry it.
        let get = srv.request("GET", target, &[("Access-Control-Request-Headers", asked)]);
        assert_eq!(
            get.header("access-control-allow-headers"),
            None,
            "{}: {:?}",
            get.request,
            get.headers
        );
    }
    // Without Access-Control-Request-Headers: no Access-Control-Allow-Headers.
    let resp = srv.request(
        "OPTIONS",
        "/api/v1/users/alice.eth/stats",
        &[("Access-Control-Request-Method", "GET")],
    );
    assert_eq!(resp.status, 204);
    assert_eq!(
        resp.header("access-control-allow-headers"),
        None,
        "{:?}",
        resp.headers
    );
}

#[test]
fn options_on_unknown_path_is_404() {
    let srv = TestService::start(&graph());
    for (target, shown) in [
        ("/api/v1/nope", "/api/v1/nope"),
        ("/api/v1/lists/1/details/", "/api/v1/lists/1/details/"),
        ("/api/v1//lists/1/details?x=1", "/api/v1//lists/1/details"),
        ("/", "/"),
    ] {
        let resp = srv.request("OPTIONS", target, &[("Origin", "https://example.org")]);
        assert_unknown_path(&resp, shown);
        assert_eq!(
            resp.header("access-control-allow-origin"),
            Some("*"),
            "{}",
            resp.request
        );
    }
}

#[test]
fn head_answers_like_get_without_body() {
    let srv = TestServer::start(&graph());
    let mut targets: Vec<String> = KNOWN.iter().map(|p| p.to_string()).collect();
    targets.extend(
        [
            "/api/v1/leaderboard/search?term=0x",
            "/api/v1/users/alice.eth/notifications?interval=all",
            "/api/v1/lists/0/details",
            "/api/v1/lists/5/followers",
            "/api/v1/users/0x123/badges",
            "/api/v1/leaderboard/search?limit=1001",
            "/api/v1/nope",
            "/api/v1/lists/1/details/",
            "/api/v1/users/%FF/badges",
        ]
        .map(String::from),
    );
    for target in targets {
        let get = srv.get(&target);
        let head = srv.head(&target);
        assert_eq!(head.status, get.status, "{}", head.request);
        assert!(
            head.body.is_empty(),
            "{}: body {:?}",
            head.request,
            head.body
        );
        let len = get.header("content-length");
        assert_eq!(
            len.map(|l| l.parse::<usize>().ok()),
            Some(Some(get.body.len())),
            "{}: GET must carry its Content-Length; headers {:?}",
            get.request,
            get.headers
        );
        for name in [
            "content-type",
            "content-length",
            "access-control-allow-origin",
        ] {
            assert_eq!(
                head.header(name),
                get.header(name),
                "{}: header {name}: HEAD {:?} vs GET {:?}",
                head.request,
                head.headers,
                get.headers
            );
        }
        assert_json_content_type(&head);
    }
}

#[test]
fn cache_does_not_change_answers() {
    let srv = TestService::start(&graph());
    let targets = [
        "/api/v1/lists/1/details",
        "/api/v1/users/alice.eth/badges",
        "/api/v1/lists/1/badges",
        "/api/v1/leaderboard/search?term=0x&limit=3",
        "/api/v1/users/alice.eth/notifications?interval=all",
        "/api/v1/users/dave.eth/followers?sort=earliest",
        "/api/v1/lists/4/followers?sort=followers&limit=2",
        "/api/v1/users/alice.eth/account",
        "/api/v1/lists/5/account",
        "/api/v1/users/dave.eth/details",
        "/api/v1/users/dave.eth/stats?live=true",
        "/api/v1/lists/5/stats",
        "/api/v1/users/alice.eth/lists",
        "/api/v1/users/alice.eth/primary-list",
        "/api/v1/leaderboard/ranked?sort=blocked&direction=asc",
        "/api/v1/leaderboard/count",
        "/api/v1/leaderboard/all",
        "/api/v1/stats",
    ];
    for target in targets {
        let first = srv.get(target);
        assert_eq!(first.status, 200, "{}: {}", first.request, first.text());
        let sep = if target.contains('?') { '&' } else { '?' };
        for again in [
            target.to_owned(),
            format!("{target}{sep}cache=fresh"),
            target.to_owned(),
            format!("{target}{sep}cache=stale"),
            format!("{target}{sep}cache="),
            format!("{target}{sep}cache=FRESH"),
        ] {
            let resp = srv.get(&again);
            assert_text(&resp, 200, &first.text());
        }
    }
    // Same answer whether the account is named by address or by name.
    let by_name = srv.get("/api/v1/users/DAVE.ETH/followers?sort=earliest");
    let by_addr = srv.get(&format!(
        "/api/v1/users/{D}/followers?sort=earliest&cache=fresh"
    ));
    assert_text(&by_addr, 200, &by_name.text());
    // Different parameters are not confused by the cache.
    let one = srv.get("/api/v1/leaderboard/search?term=0x&limit=1");
    assert_eq!(addresses(&one.json(), "results"), vec![D.to_owned()]);
    let two = srv.get("/api/v1/leaderboard/search?term=0x&limit=1&offset=1");
    assert_eq!(addresses(&two.json(), "results"), vec![A.to_owned()]);
}

#[test]
fn errors_are_not_cached_and_fresh_requests_work() {
    let srv = TestService::start(&graph());
    for _ in 0..2 {
        // 8: user is the zero address; 99: not in lists.
        assert_no_user_found(&srv.get("/api/v1/lists/8/details"));
        assert_no_user_found(&srv.get("/api/v1/lists/99/details?cache=fresh"));
        assert_no_user_found(&srv.get("/api/v1/lists/8/account?cache=fresh"));
        assert_400(
            &srv.get("/api/v1/leaderboard/search?term=0x&limit=x&cache=fresh"),
            "limit must be a non-negative integer",
        );
    }
    // A good request after the bad ones with the same path still answers.
    let resp = srv.get("/api/v1/leaderboard/search?term=0x&limit=1&cache=fresh");
    assert_eq!(addresses(&resp.json(), "results"), vec![D.to_owned()]);
}

pub fn wait_for(srv: &mut TestServer, target: &str, pred: impl Fn(&Response) -> bool) -> Response {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = srv.exited() {
            panic!(
                "the server exited after SIGHUP ({status}) instead of reloading; stderr:\n{}",
                srv.stderr_log()
            );
        }
        let last = srv.try_get(target);
        if let Ok(resp) = &last {
            if pred(resp) {
                return resp.clone();
            }
        }
        if Instant::now() > deadline {
            panic!(
                "{target}: still {:?} 20 s after SIGHUP; server stderr:\n{}",
                last.map(|r| format!("{} {}", r.status, String::from_utf8_lossy(&r.body))),
                srv.stderr_log()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
