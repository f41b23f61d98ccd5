//! GET /users/{addressOrENS}/badges and /lists/{token_id}/badges
//! (see fixtures::badges).

use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

/// P's answer: 178064 (pos 10, not held), 177709 (pos 20, held, owner as
/// stored checksummed), 200000 (pos 30, held).
const P_BADGES: &str = concat!(
    r#"{"badges":["#,
    r#"{"eventId":"178064","participated":false,"collection":null},"#,
    r#"{"eventId":"177709","participated":true,"collection":{"event":{"id":177709,"fancy_id":"devcon-7-2024","#,
    r#""name":"Devcon 7","event_url":"https://devcon.org","image_url":"https://assets.example/177709.png","#,
    r#""country":"","city":"","description":"Devcon \"7\" attendee\nBangkok","year":2024,"#,
    r#""start_date":"06-Sep-2024","end_date":"21-Sep-2024","expiry_date":"21-Sep-2025"},"#,
    r#""tokenId":"7189762","owner":"0xC9C3A4337a1bBa75D0860A1A81f7B990dc607334"}},"#,
    r#"{"eventId":"200000","participated":true,"collection":{"event":{"id":200000,"fancy_id":"x","#,
    r#""name":"X","event_url":"","image_url":"","country":"","city":"","description":"","year":2025,"#,
    r#""start_date":"31-Dec-2025","end_date":"31-Dec-2025","expiry_date":"31-Dec-2026"},"#,
    r#""tokenId":"99","owner":"0xc9c3a4337a1bba75d0860a1a81f7b990dc607334"}}"#,
    r#"]}"#
);

fn q_badges() -> Value {
    json!({"badges": [
        {"eventId": "178064", "participated": true, "collection": {
            "event": {"id": 178064, "fancy_id": "efp-beta", "name": "EFP Beta",
                      "event_url": "https://efp.app", "image_url": "https://assets.example/178064.png",
                      "country": "Thailand", "city": "Bangkok", "description": "Early tester",
                      "year": 2023, "start_date": "01-Jan-2023", "end_date": "02-Jan-2023",
                      "expiry_date": "01-Jan-2024"},
            "tokenId": "1", "owner": "0x00000000000000000000000000000000000000AA"}},
        {"eventId": "177709", "participated": false, "collection": null},
        {"eventId": "200000", "participated": false, "collection": null}
    ]})
}

const NONE_HELD: &str = concat!(
    r#"{"badges":["#,
    r#"{"eventId":"178064","participated":false,"collection":null},"#,
    r#"{"eventId":"177709","participated":false,"collection":null},"#,
    r#"{"eventId":"200000","participated":false,"collection":null}]}"#
);

#[test]
fn user_badges_by_address_exact_text() {
    let srv = TestService::start(&badges());
    assert_text(
        &srv.get(&format!("/api/v1/users/{P}/badges")),
        200,
        P_BADGES,
    );
}

#[test]
fn user_badges_by_mixed_case_address() {
    let srv = TestService::start(&badges());
    assert_text(
        &srv.get(&format!("/api/v1/users/{P_MIXED}/badges")),
        200,
        P_BADGES,
    );
}

#[test]
fn user_badges_by_name_case_insensitive() {
    let srv = TestService::start(&badges());
    for name in [
        "Bob12.eth",
        "bob12.eth",
        "BOB12.ETH",
        "Bob12%2Eeth",
        "%42ob12.eth",
    ] {
        assert_text(
            &srv.get(&format!("/api/v1/users/{name}/badges")),
            200,
            P_BADGES,
        );
    }
}

#[test]
fn user_badges_by_unicode_name_case_insensitive() {
    let srv = TestService::start(&badges());
    // Stored "Über.eth"; "über.ETH" and "ÜBER.eth" match by Unicode lower-casing.
    for name in ["%C3%9Cber.eth", "%C3%BCber.ETH", "%C3%9CBER.eth"] {
        assert_json(
            &srv.get(&format!("/api/v1/users/{name}/badges")),
            200,
            q_badges(),
        );
    }
}

#[test]
fn list_badges_reports_on_the_lists_user() {
    let srv = TestService::start(&badges());
    assert_text(&srv.get("/api/v1/lists/10/badges"), 200, P_BADGES);
    assert_text(&srv.get("/api/v1/lists/010/badges"), 200, P_BADGES);
    assert_json(&srv.get("/api/v1/lists/11/badges"), 200, q_badges());
}

#[test]
fn list_badges_of_a_list_that_is_not_primary() {
    let srv = TestService::start(&badges());
    // 12 is P's second list: P's badges.
    assert_text(&srv.get("/api/v1/lists/12/badges"), 200, P_BADGES);
    assert_text(
        &srv.get("/api/v1/lists/0012/badges?cache=fresh"),
        200,
        P_BADGES,
    );
}

#[test]
fn list_badges_without_user() {
    let srv = TestService::start(&badges());
    // 14: user is the zero address (owner P); 13, u64::MAX: not in lists.
    for id in ["14", "13", "18446744073709551615"] {
        assert_no_user_found(&srv.get(&format!("/api/v1/lists/{id}/badges")));
    }
}

#[test]
fn list_badges_invalid_token_id() {
    let srv = TestService::start(&badges());
    for id in ["0", "-1", "abc", "1.5", "%2B1", "18446744073709551616"] {
        assert_invalid_list_id(&srv.get(&format!("/api/v1/lists/{id}/badges")));
    }
}

#[test]
fn badges_of_valid_unknown_address_is_every_event_not_held() {
    let srv = TestService::start(&badges());
    let resp = srv.get("/api/v1/users/0x0123456789012345678901234567890123456789/badges");
    assert_text(&resp, 200, NONE_HELD);
}

#[test]
fn badges_without_badge_events_is_empty_list() {
    let srv = TestService::start(&graph());
    assert_text(
        &srv.get(&format!("/api/v1/users/{A}/badges")),
        200,
        r#"{"badges":[]}"#,
    );
    assert_text(&srv.get("/api/v1/lists/1/badges"), 200, r#"{"badges":[]}"#);
    // Valid name with no data at all.
    assert_text(
        &srv.get("/api/v1/users/ghost.eth/badges"),
        200,
        r#"{"badges":[]}"#,
    );
}

#[test]
fn badges_unknown_or_invalid_account() {
    let srv = TestService::start(&badges());
    for who in [
        "0x123",
        "0XC9C3A4337a1bBa75D0860A1A81f7B990dc607334", // upper-case X: not an address
        "0xg9c3a4337a1bba75d0860a1a81f7b990dc607334",
        "0xc9c3a4337a1bba75d0860a1a81f7b990dc60733", // 39 hex digits
        "0xc9c3a4337a1bba75d0860a1a81f7b990dc6073344", // 41 hex digits
        "nobody.eth",
        "Bob12",
        "bob12.eth%20",
        "a%2Fb", // %2F stays inside the segment
    ] {
        assert_bad_ens(&srv.get(&format!("/api/v1/users/{who}/badges")));
    }
}
