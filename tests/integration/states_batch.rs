//! POST /lists/{id}/buttonStateBatch (32) on fixtures::graph: list 1 (A's
//! primary) holds D top8, B, C block; list 5 (A's, not primary) E block.

use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

fn item(token: &str, address: Value, state: Value) -> Value {
    json!({"token_id": token, "address": address, "state": state})
}

fn st(follow: bool, block: bool, mute: bool) -> Value {
    json!({"follow": follow, "block": block, "mute": mute})
}

#[test]
fn each_item_is_31s_answer_in_body_order() {
    let srv = TestService::start(&graph());
    let body = format!(
        r#"["{D}", "Dave.eth", null, 7, "nobody.eth", "0x123", "{C}", "{D}", {{"a": [1, 2]}}, 1e3, "{E}"]"#
    );
    let resp = srv.post(
        "/api/v1/lists/001/buttonStateBatch?cache=%FF",
        body.as_bytes(),
    );
    let known =
        |who: &str, state: &str| format!(r#"{{"token_id":"1","address":"{who}","state":{state}}}"#);
    let unknown = |sent: &str| format!(r#"{{"token_id":"1","address":{sent},"state":null}}"#);
    let (follows, blocked, none) = (
        r#"{"follow":true,"block":false,"mute":false}"#,
        r#"{"follow":false,"block":true,"mute":false}"#,
        r#"{"follow":false,"block":false,"mute":false}"#,
    );
    // Items that name no account come back exactly as sent.
    let expected = [
        known(D, follows),
        known(D, follows),
        unknown("null"),
        unknown("7"),
        unknown(r#""nobody.eth""#),
        unknown(r#""0x123""#),
        known(C, blocked),
        known(D, follows),
        unknown(r#"{"a": [1, 2]}"#),
        unknown("1e3"),
        known(E, none),
    ];
    assert_text(&resp, 200, &format!("[{}]", expected.join(",")));
    // Each item equals 31's answer for it.
    let one = srv.get(&format!("/api/v1/lists/1/{C}/buttonState"));
    assert_eq!(resp.json()[6], one.json());
    // A list that is not its user's primary list: its own records.
    assert_json(
        &srv.post(
            "/api/v1/lists/5/buttonStateBatch",
            format!(r#"["{E}"]"#).as_bytes(),
        ),
        200,
        json!([item("5", json!(E), st(false, true, false))]),
    );
    assert_text(
        &srv.post("/api/v1/lists/1/buttonStateBatch", b"[]"),
        200,
        "[]",
    );
    assert_text(
        &srv.post("/api/v1/lists/1/buttonStateBatch", b" [ ] "),
        200,
        "[]",
    );
}

#[test]
fn thousand_items_pass_and_more_do_not() {
    let srv = TestService::start(&graph());
    let items = |n: usize| {
        let one = format!("\"{D}\"");
        format!("[{}]", vec![one; n].join(","))
    };
    let ok = srv.post("/api/v1/lists/1/buttonStateBatch", items(1000).as_bytes());
    assert_eq!(ok.status, 200);
    assert_eq!(ok.json().as_array().map(Vec::len), Some(1000));
    assert_400(
        &srv.post("/api/v1/lists/1/buttonStateBatch", items(1001).as_bytes()),
        "the body holds 1001 items; at most 1000",
    );
}

#[test]
fn bad_bodies_are_400_and_large_ones_413() {
    let srv = TestService::start(&graph());
    let post = |target: &str, body: &[u8]| srv.post(target, body);
    let batch = "/api/v1/lists/1/buttonStateBatch";
    for body in [
        &b"not json"[..],
        b"",
        b"[1,",
        b"{\"a\": 1}",
        b"\"0x1\"",
        b"3",
        b"\xff\xfe",
    ] {
        let resp = post(batch, body);
        assert_eq!(resp.status, 400, "{:?}", String::from_utf8_lossy(body));
        assert!(resp.json()["response"].is_string());
    }
    // 70 KiB of valid JSON is over the 64 KiB limit.
    let big = format!("[{}]", vec!["\"vitalik.eth\""; 5500].join(","));
    assert!(big.len() > 70_000);
    assert_json(
        &post(batch, big.as_bytes()),
        413,
        json!({"response": "the body is larger than 65536 bytes"}),
    );
    // Order: the list id, then the body, then the list's user.
    assert_invalid_list_id(&post("/api/v1/lists/x/buttonStateBatch", big.as_bytes()));
    assert_eq!(
        post("/api/v1/lists/99/buttonStateBatch", b"nope").status,
        400
    );
    assert_no_user_found(&post("/api/v1/lists/99/buttonStateBatch", b"[]"));
    assert_no_user_found(&post("/api/v1/lists/8/buttonStateBatch", b"[]"));
    // The 413 is counted under its own status, not `other`.
    let metrics = srv.get("/metrics").text();
    assert!(
        metrics
            .lines()
            .any(|l| l
                == "followgraph_requests_total{endpoint=\"button_state_batch\",status=\"413\"} 1"),
        "{metrics}"
    );
}

#[test]
fn post_only_never_cached_and_preflight() {
    let srv = TestService::start(&graph());
    let path = "/api/v1/lists/1/buttonStateBatch";
    for method in ["GET", "HEAD"] {
        let resp = srv.request(method, path, &[]);
        assert_eq!(resp.status, 405, "{method}");
        assert_eq!(resp.header("allow"), Some("POST, OPTIONS"));
    }
    let pre = srv.request(
        "OPTIONS",
        path,
        &[("Access-Control-Request-Headers", "content-type")],
    );
    assert_eq!(pre.status, 204);
    assert_eq!(
        pre.header("access-control-allow-methods"),
        Some("POST, OPTIONS")
    );
    assert_eq!(
        pre.header("access-control-allow-headers"),
        Some("content-type")
    );
    // POST elsewhere is 405 for GET endpoints.
    assert_eq!(srv.post("/api/v1/lists/1/buttonState", b"[]").status, 404);
    assert_eq!(srv.post("/api/v1/lists/1/details", b"[]").status, 405);
    let body = format!(r#"["{D}"]"#);
    for _ in 0..2 {
        assert_eq!(srv.post(path, body.as_bytes()).status, 200);
    }
    // Never cached: nothing was stored (a GET stores its answer).
    let entries = || {
        let metrics = srv.get("/metrics").text();
        metrics
            .lines()
            .find_map(|l| l.strip_prefix("followgraph_cache_entries "))
            .map(str::to_owned)
    };
    assert_eq!(entries().as_deref(), Some("0"));
    srv.get(&format!("/api/v1/lists/1/{D}/buttonState"));
    assert_eq!(entries().as_deref(), Some("1"));
}
