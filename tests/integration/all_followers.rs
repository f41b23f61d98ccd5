//! GET /users/{a}/allFollowers (19), /lists/{id}/allFollowers (20),
//! /users/{a}/latestFollowers (21), /lists/{id}/latestFollowers (22), on
//! fixtures::followers: T6's followers, newest first, are F2 (+5000,
//! its record tagged block), F5 (+4000, friend), F1 and F4 (+3123 each),
//! T6 itself (+2000) and F3 (+1000, mute and top8).

use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

/// 19 is 6 in every respect: the same bytes for every query.
#[test]
fn user_all_followers_is_user_followers() {
    let srv = TestService::start(&followers());
    for q in [
        "",
        "limit=2",
        "limit=2&offset=3",
        "sort=earliest",
        "sort=FOLLOWERS",
        "tags=top8,block",
        "tags=nothing",
        "offset=99",
        "limit=0",
    ] {
        let all = srv.get(&format!("/api/v1/users/{T6}/allFollowers?{q}"));
        let six = srv.get(&format!("/api/v1/users/{T6}/followers?{q}"));
        assert_eq!(all.status, 200, "{q}");
        assert_eq!(all.text(), six.text(), "{q}");
    }
    // One written out: F2 blocks T6 and is kept.
    assert_text(
        &srv.get(&format!("/api/v1/users/{T6}/allFollowers?limit=1")),
        200,
        concat!(
            r#"{"followers":[{"svc_list_nft_token_id":"32","#,
            r#""address":"0x2222222222222222222222222222222222222222","tags":["block"],"#,
            r#""is_following":false,"is_blocked":false,"is_muted":true,"#,
            r#""updated_at":"2024-10-14T00:00:05.000Z"}]}"#
        ),
    );
    assert_bad_ens(&srv.get("/api/v1/users/nobody.eth/allFollowers"));
    assert_400(
        &srv.get(&format!("/api/v1/users/{T6}/allFollowers?limit=x")),
        "limit must be a non-negative integer",
    );
}

/// 20 keeps the followers 7 leaves out (F2 blocks T6, F3 mutes T6).
#[test]
fn list_all_followers_keeps_blocking_and_muting_followers() {
    let srv = TestService::start(&followers());
    let addresses_of = |path: &str| addresses(&srv.get(path).json(), "followers");
    assert_eq!(
        addresses_of("/api/v1/lists/30/allFollowers"),
        [F2, F5, F1, F4, T6, F3]
    );
    assert_eq!(addresses_of("/api/v1/lists/30/followers"), [F5, F1, F4, T6]);
    // The membership and order of 6, whatever the parameters.
    for q in [
        "sort=earliest&limit=3",
        "sort=followers",
        "tags=top8",
        "offset=2",
    ] {
        assert_eq!(
            srv.get(&format!("/api/v1/lists/30/allFollowers?{q}"))
                .text(),
            srv.get(&format!("/api/v1/users/{T6}/followers?{q}")).text(),
            "{q}"
        );
    }
    // List 36 is F1's, not primary: it stands for F1, whose one follower is
    // T6 (W's record of F1 is in a list that is not primary).
    assert_json(
        &srv.get("/api/v1/lists/36/allFollowers"),
        200,
        json!({"followers": [{"svc_list_nft_token_id": "30", "address": T6, "tags": [],
            "is_following": true, "is_blocked": false, "is_muted": false,
            "updated_at": "2024-10-14T00:00:00.100Z"}]}),
    );
    assert_no_user_found(&srv.get("/api/v1/lists/41/allFollowers"));
    assert_no_user_found(&srv.get("/api/v1/lists/40/allFollowers"));
    assert_invalid_list_id(&srv.get("/api/v1/lists/0/allFollowers"));
}

fn latest(address: &str, list: &str, at: &str) -> Value {
    json!({"address": address, "svc_list_nft_token_id": list, "updated_at": at})
}

#[test]
fn latest_followers_newest_first_ties_by_address_exact_text() {
    let srv = TestService::start(&followers());
    assert_text(
        &srv.get("/api/v1/users/target.ETH/latestFollowers?limit=2"),
        200,
        concat!(
            r#"{"followers":[{"address":"0x2222222222222222222222222222222222222222","#,
            r#""svc_list_nft_token_id":"32","updated_at":"2024-10-14T00:00:05.000Z"},"#,
            r#"{"address":"0x5555555555555555555555555555555555555555","#,
            r#""svc_list_nft_token_id":"35","updated_at":"2024-10-14T00:00:04.000Z"}]}"#
        ),
    );
    let all = json!({"followers": [
        latest(F2, "32", "2024-10-14T00:00:05.000Z"),
        latest(F5, "35", "2024-10-14T00:00:04.000Z"),
        latest(F1, "31", "2024-10-14T00:00:03.123Z"),
        latest(F4, "34", "2024-10-14T00:00:03.123Z"),
        latest(T6, "30", "2024-10-14T00:00:02.000Z"),
        latest(F3, "33", "2024-10-14T00:00:01.000Z"),
    ]});
    assert_json(
        &srv.get(&format!("/api/v1/users/{T6}/latestFollowers")),
        200,
        all.clone(),
    );
    // 22 stands for the list's user; sort and tags are not taken.
    assert_json(
        &srv.get("/api/v1/lists/30/latestFollowers?sort=earliest&tags=top8"),
        200,
        all,
    );
    assert_json(
        &srv.get(&format!(
            "/api/v1/users/{T6}/latestFollowers?offset=4&limit=5"
        )),
        200,
        json!({"followers": [
            latest(T6, "30", "2024-10-14T00:00:02.000Z"),
            latest(F3, "33", "2024-10-14T00:00:01.000Z"),
        ]}),
    );
}

#[test]
fn latest_followers_edges_and_errors() {
    let srv = TestService::start(&followers());
    let empty = r#"{"followers":[]}"#;
    for path in [
        format!("/api/v1/users/{T6}/latestFollowers?offset=6"),
        format!("/api/v1/users/{T6}/latestFollowers?limit=0"),
        format!("/api/v1/users/{T6}/latestFollowers?offset=18446744073709551615"),
        // No data at all, and no followers.
        "/api/v1/users/0x00000000000000000000000000000000000000ff/latestFollowers".into(),
        format!("/api/v1/users/{F7}/latestFollowers"),
    ] {
        assert_text(&srv.get(&path), 200, empty);
    }
    // Ten by default.
    let bulk_srv = TestService::start(&bulk());
    let page = bulk_srv
        .get(&format!("/api/v1/users/{Z}/latestFollowers"))
        .json();
    let expected: Vec<String> = (51..=60).rev().map(n).collect();
    assert_eq!(addresses(&page, "followers"), expected);
    assert_bad_ens(&srv.get("/api/v1/users/0x123/latestFollowers"));
    assert_no_user_found(&srv.get("/api/v1/lists/41/latestFollowers"));
    assert_invalid_list_id(&srv.get("/api/v1/lists/x/latestFollowers?limit=x"));
    assert_400(
        &srv.get(&format!(
            "/api/v1/users/{T6}/latestFollowers?offset=-1&limit=1001"
        )),
        "limit must be at most 1000",
    );
    assert_400(
        &srv.get(&format!("/api/v1/users/{T6}/latestFollowers?offset=-1")),
        "offset must be a non-negative integer",
    );
}
