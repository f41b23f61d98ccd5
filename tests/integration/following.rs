//! GET /users/{a}/following (15), /users/{a}/allFollowing (16),
//! /lists/{id}/following (17), /lists/{id}/allFollowing (18),
//! /lists/{id}/allFollowingAddresses (27), /exportState/{id} (28), on
//! fixtures::graph:
//!
//! A's primary list 1 holds D (S, top8), B (S+1), C (S+2, block).
//! List 5 (A's, not primary) holds E (S+11, block); list 6 (E's, not
//! primary) holds A (S+12, top8). List 8's user is the zero address.
//! Followers counts: A 3, B 3, C 1, D 4.

use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

/// A following entry (`tags` as given), without ens.
fn entry(who: &str, tags: &[&str]) -> Value {
    json!({"version": 1, "record_type": "address", "data": who, "address": who, "tags": tags})
}

fn following(entries: Vec<Value>) -> Value {
    json!({ "following": entries })
}

#[test]
fn user_following_leaves_out_block_and_mute_newest_first_exact_text() {
    let srv = TestService::start(&graph());
    assert_text(
        &srv.get(&format!("/api/v1/users/{A}/following")),
        200,
        concat!(
            r#"{"following":[{"version":1,"record_type":"address","#,
            r#""data":"0x2222222222222222222222222222222222222222","#,
            r#""address":"0x2222222222222222222222222222222222222222","tags":[]},"#,
            r#"{"version":1,"record_type":"address","#,
            r#""data":"0x4444444444444444444444444444444444444444","#,
            r#""address":"0x4444444444444444444444444444444444444444","tags":["top8"]}]}"#
        ),
    );
}

#[test]
fn user_all_following_keeps_block_in_every_sort_and_pages() {
    let srv = TestService::start(&graph());
    let all = |q: &str| srv.get(&format!("/api/v1/users/alice.eth/allFollowing?{q}"));
    let (c, b, d) = (entry(C, &["block"]), entry(B, &[]), entry(D, &["top8"]));
    assert_json(
        &all(""),
        200,
        following(vec![c.clone(), b.clone(), d.clone()]),
    );
    assert_json(
        &all("sort=EARLIEST"),
        200,
        following(vec![d.clone(), b.clone(), c.clone()]),
    );
    // Followers: D 4, B 3, C 1.
    assert_json(
        &all("sort=followers"),
        200,
        following(vec![d.clone(), b.clone(), c.clone()]),
    );
    assert_json(&all("limit=1&offset=1"), 200, following(vec![b.clone()]));
    assert_json(&all("offset=3"), 200, following(vec![]));
    assert_json(&all("limit=0"), 200, following(vec![]));
    assert_json(
        &all("tags=+top8+,,block"),
        200,
        following(vec![c, d.clone()]),
    );
    assert_json(&all("tags=top8&sort=nonsense"), 200, following(vec![d]));
    assert_json(&all("tags=unknown"), 200, following(vec![]));
}

#[test]
fn followers_sort_ties_by_address() {
    // A follows B and D with two followers each (B: A, D; D: A, B) and C
    // with one.
    let tables = Builder::new()
        .primary_list(1, A)
        .primary_list(2, B)
        .primary_list(4, D)
        .record(1, D, S)
        .record(1, C, S + 1)
        .record(1, B, S)
        .record(2, D, S)
        .record(4, B, S)
        .record(2, C, S)
        .build();
    let srv = TestService::start(&tables);
    let get = |q: &str| srv.get(&format!("/api/v1/users/{A}/following?{q}"));
    let (b, c, d) = (entry(B, &[]), entry(C, &[]), entry(D, &[]));
    // C has 2 followers (A, B) too: B, C, D tie at 2, address ascending.
    assert_json(
        &get("sort=followers"),
        200,
        following(vec![b.clone(), c.clone(), d.clone()]),
    );
    // Latest: C (S+1), then B and D at S by address.
    assert_json(
        &get(""),
        200,
        following(vec![c.clone(), b.clone(), d.clone()]),
    );
    // Earliest: B and D at S by address, then C.
    assert_json(&get("sort=earliest"), 200, following(vec![b, d, c]));
}

#[test]
fn include_ens_adds_the_ens_object_and_is_validated() {
    let srv = TestService::start(&graph());
    let null_ens = json!({"name": null, "avatar": null, "header": null, "display": null,
        "records": {}, "chains": {}, "fresh": null, "resolver": null, "errors": {}});
    let dave = json!({"name": "Dave.eth", "avatar": "https://example.com/dave.png",
        "header": "https://example.com/dave-header.png", "display": "dave.eth", "records": {},
        "chains": {"eth": "0x4444444444444444444444444444444444444444", "btc": "bc1qdave"},
        "fresh": 0, "resolver": null,
        "errors": {"z": {"code": 500, "detail": "timeout"}, "a": [1, "x", null]}});
    let mut b = entry(B, &[]);
    b["ens"] = null_ens;
    let mut d = entry(D, &["top8"]);
    d["ens"] = dave;
    for q in [
        "include=ens",
        "include=mutuals&include=ens",
        "include=+ens+,blocked,,muted",
    ] {
        let resp = srv.get(&format!("/api/v1/users/{A}/following?{q}"));
        assert_json(&resp, 200, following(vec![b.clone(), d.clone()]));
    }
    // The others change nothing.
    assert_json(
        &srv.get(&format!(
            "/api/v1/users/{A}/following?include=mutuals,blocked,muted"
        )),
        200,
        following(vec![entry(B, &[]), entry(D, &["top8"])]),
    );
    for bad in ["include=ens,ENS", "include=ens&include=friends"] {
        let resp = srv.get(&format!("/api/v1/users/{A}/following?{bad}"));
        assert_eq!(resp.status, 400, "{bad}");
        assert!(resp.json()["response"]
            .as_str()
            .unwrap()
            .contains("include"));
    }
    // Parameters in table order: limit before include.
    assert_400(
        &srv.get(&format!("/api/v1/users/{A}/following?include=x&limit=y")),
        "limit must be a non-negative integer",
    );
}

#[test]
fn list_following_reads_the_lists_own_records_primary_or_not() {
    let srv = TestService::start(&graph());
    let get = |p: &str| srv.get(&format!("/api/v1/lists/{p}"));
    // List 1 is A's primary list: the same records as A's.
    assert_json(
        &get("1/following"),
        200,
        following(vec![entry(B, &[]), entry(D, &["top8"])]),
    );
    // List 5 is not A's primary list; its one record carries block.
    assert_json(&get("5/following"), 200, following(vec![]));
    assert_json(
        &get("5/allFollowing"),
        200,
        following(vec![entry(E, &["block"])]),
    );
    // List 6 (E's, not primary).
    assert_json(&get("6/following?include=ens"), 200, {
        let mut a = entry(A, &["top8"]);
        a["ens"] = srv.get(&format!("/api/v1/users/{A}/account")).json()["ens"].clone();
        following(vec![a])
    });
    // The counts of 12 agree.
    assert_text(
        &get("5/stats"),
        200,
        r#"{"followers_count":3,"following_count":0}"#,
    );
    assert_eq!(get("6/stats").json()["following_count"], 1);
    for missing in ["8", "99"] {
        for what in ["following", "allFollowing", "allFollowingAddresses"] {
            assert_no_user_found(&get(&format!("{missing}/{what}")));
        }
        assert_no_user_found(&srv.get(&format!("/api/v1/exportState/{missing}")));
    }
    assert_invalid_list_id(&get("0/following?limit=x"));
    assert_invalid_list_id(&srv.get("/api/v1/exportState/x"));
}

#[test]
fn all_following_addresses_and_export_state_newest_first() {
    let srv = TestService::start(&graph());
    assert_text(
        &srv.get("/api/v1/lists/1/allFollowingAddresses"),
        200,
        concat!(
            r#"["0x3333333333333333333333333333333333333333","#,
            r#""0x2222222222222222222222222222222222222222","#,
            r#""0x4444444444444444444444444444444444444444"]"#
        ),
    );
    assert_json(
        &srv.get("/api/v1/exportState/001?limit=1"),
        200,
        following(vec![
            entry(C, &["block"]),
            entry(B, &[]),
            entry(D, &["top8"]),
        ]),
    );
    assert_text(&srv.get("/api/v1/lists/7/allFollowingAddresses"), 200, "[]");
    // A cached top-level array is the same array.
    let first = srv.get("/api/v1/lists/5/allFollowingAddresses");
    assert_text(
        &first,
        200,
        r#"["0x5555555555555555555555555555555555555555"]"#,
    );
    assert_text(
        &srv.get("/api/v1/lists/5/allFollowingAddresses"),
        200,
        &first.text(),
    );
}

#[test]
fn accounts_without_a_list_or_data_follow_nobody() {
    let srv = TestService::start(&graph());
    for who in [E, "0x0000000000000000000000000000000000000001", "ghost.eth"] {
        for what in ["following", "allFollowing"] {
            assert_text(
                &srv.get(&format!("/api/v1/users/{who}/{what}?include=ens")),
                200,
                r#"{"following":[]}"#,
            );
        }
    }
    assert_bad_ens(&srv.get("/api/v1/users/nobody.eth/following"));
    // 11's following_count is the entries of 15.
    assert_text(
        &srv.get(&format!("/api/v1/users/{A}/stats")),
        200,
        r#"{"followers_count":3,"following_count":2}"#,
    );
}
