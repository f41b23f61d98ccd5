//! Assertions on responses: exact status and body (text or JSON with its
//! key order), the API's fixed error answers, and the addresses of a
//! result array.

use super::http::Response;

/// Asserts the status and the exact body text.
#[track_caller]
pub fn assert_text(resp: &Response, status: u16, body: &str) {
    let text = String::from_utf8_lossy(&resp.body);
    assert!(
        resp.status == status && text == body,
        "{}\n  expected: {status} {body}\n  actual:   {} {text}",
        resp.request,
        resp.status
    );
    if !body.is_empty() {
        assert_json_content_type(resp);
    }
}

/// Asserts the status and that the body is exactly the compact
/// serialisation of `expected` (keys in the order written: serde_json is
/// built with `preserve_order`), so key order is checked too.
#[track_caller]
pub fn assert_json(resp: &Response, status: u16, expected: serde_json::Value) {
    let want = expected.to_string();
    let text = String::from_utf8_lossy(&resp.body).into_owned();
    if resp.status == status && text == want {
        assert_json_content_type(resp);
        return;
    }
    let same_value = serde_json::from_str::<serde_json::Value>(&text)
        .map(|v| v == expected)
        .unwrap_or(false);
    panic!(
        "{}\n  expected: {status} {want}\n  actual:   {} {text}{}",
        resp.request,
        resp.status,
        if same_value && resp.status == status {
            "\n  (same JSON value: key order or formatting differs)"
        } else {
            ""
        }
    );
}

#[track_caller]
pub fn assert_json_content_type(resp: &Response) {
    let ct = resp.header("content-type").unwrap_or("");
    assert!(
        ct.starts_with("application/json"),
        "{}: Content-Type is {ct:?}, expected application/json",
        resp.request
    );
}

/// 400 with `{"response":"<text>"}`.
#[track_caller]
pub fn assert_400(resp: &Response, text: &str) {
    assert_json(resp, 400, serde_json::json!({ "response": text }));
}

#[track_caller]
pub fn assert_invalid_list_id(resp: &Response) {
    assert_text(resp, 400, r#"{"response":"Invalid list id"}"#);
}

#[track_caller]
pub fn assert_no_user_found(resp: &Response) {
    assert_text(resp, 404, r#"{"response":"No User Found"}"#);
}

#[track_caller]
pub fn assert_bad_ens(resp: &Response) {
    assert_text(
        resp,
        404,
        r#"{"response":"ENS name not valid or does not exist"}"#,
    );
}

/// 404 `{"error":"<path> is not a valid path"}`.
#[track_caller]
pub fn assert_unknown_path(resp: &Response, decoded_path: &str) {
    assert_json(
        resp,
        404,
        serde_json::json!({ "error": format!("{decoded_path} is not a valid path") }),
    );
}

/// The addresses of a followers / leaderboard / notifications array, in order.
pub fn addresses(value: &serde_json::Value, array: &str) -> Vec<String> {
    value[array]
        .as_array()
        .unwrap_or_else(|| panic!("no array {array:?} in {value}"))
        .iter()
        .map(|e| e["address"].as_str().expect("address").to_owned())
        .collect()
}
