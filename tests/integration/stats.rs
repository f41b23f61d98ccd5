//! GET /users/{a}/stats (11), /lists/{id}/stats (12) and /stats (41)
//! (see fixtures::accounts for the counts).

use followgraph::snapshot::Tables;

use crate::fixtures::*;
use crate::support::*;

fn counts(followers: u64, following: u64) -> String {
    format!(r#"{{"followers_count":{followers},"following_count":{following}}}"#)
}

// ------------------------------------------------------------------ 11

#[test]
fn user_stats_exact_text() {
    let srv = TestService::start(&accounts());
    // K1: followers K2, K3 and K4 (K4's record mutes K1: still counted);
    // following: K2 and K8 (its records of K3 and K4 carry block).
    assert_text(
        &srv.get(&format!("/api/v1/users/{K1}/stats")),
        200,
        r#"{"followers_count":3,"following_count":2}"#,
    );
}

#[test]
fn user_stats_block_and_mute_on_both_sides() {
    let srv = TestService::start(&accounts());
    for (who, followers, following) in [
        // K2: followers K1 and K3 (K3's record mutes K2); own records K1,
        // K3 [block], K8 [mute, top8] -> 1.
        (K2, 2, 1),
        // K3: followers K1 and K2, both blocking it; follows K1, K2 [mute].
        ("three.eth", 2, 1),
        // K4: followed by K1 [block]; its records K1 [mute], K5 [block].
        (K4, 1, 0),
        // K5: followed by K4 [block]; no primary list (its list 20's
        // records do not count here).
        (K5, 1, 0),
        (K8, 2, 0),
        // Only in lists that are not primary.
        (K6, 0, 0),
        (K9, 0, 0),
        (ZERO, 0, 0),
        ("0x0123456789abcdef0123456789abcdef01234567", 0, 0),
    ] {
        assert_text(
            &srv.get(&format!("/api/v1/users/{who}/stats")),
            200,
            &counts(followers, following),
        );
    }
}

#[test]
fn user_stats_live_and_cache_change_nothing() {
    let srv = TestService::start(&accounts());
    let want = counts(2, 1);
    for q in [
        "",
        "?live=true",
        "?live=false",
        "?cache=fresh",
        "?live=true&cache=fresh",
        "?live",
    ] {
        assert_text(
            &srv.get(&format!("/api/v1/users/{K2}/stats{q}")),
            200,
            &want,
        );
    }
    assert_bad_ens(&srv.get("/api/v1/users/nobody.eth/stats?live=true"));
    assert_bad_ens(&srv.get("/api/v1/users/0x123/stats"));
}

/// An invariant of the API reference (docs/openapi.yaml): 11 followers_count =
/// entries of 6 (blocked and muted followers included). (15, for
/// following_count, is not served yet.)
#[test]
fn user_stats_followers_match_followers() {
    let srv = TestService::start(&accounts());
    for who in [K1, K2, K3, K4, K5, K6, K8] {
        let stats = srv.get(&format!("/api/v1/users/{who}/stats")).json();
        let six = srv.get(&format!("/api/v1/users/{who}/followers?limit=1000"));
        assert_eq!(
            stats["followers_count"].as_u64().unwrap() as usize,
            six.json()["followers"].as_array().unwrap().len(),
            "{who}: {}",
            six.text()
        );
    }
}

// ------------------------------------------------------------------ 12

#[test]
fn list_stats_exact_text() {
    let srv = TestService::start(&accounts());
    // List 1 (K1's primary): own records K2, K8 shown (K3, K4 blocked);
    // followers of K1 whose record carries neither block nor mute: K2, K3
    // (K4's record mutes K1).
    assert_text(
        &srv.get("/api/v1/lists/1/stats"),
        200,
        r#"{"followers_count":2,"following_count":2}"#,
    );
}

#[test]
fn list_stats_of_lists_that_are_not_primary() {
    let srv = TestService::start(&accounts());
    for (id, followers, following) in [
        // 10 (K1's other list): its OWN records K2, K5, K6 [block],
        // K7 [mute] -> 2; followers are K1's -> 2.
        ("10", 2, 2),
        ("010", 2, 2),
        // 20 (K5, no primary list): own records K1, K3 [block] -> 1; K5's
        // only follower K4 blocks it -> 0.
        ("20", 0, 1),
        // Primary lists: 2 (K2): K1 follows K2, K3's record mutes it -> 1;
        // own records K1 (K3 block, K8 mute left out). 3 (K3): both
        // followers (K1, K2) block K3 -> 0; own records K1, K2 [mute] -> 1.
        // 4 (K4): K1's record of K4 carries block; K4's records all carry
        // block or mute.
        ("2", 1, 1),
        ("3", 0, 1),
        ("4", 0, 0),
    ] {
        assert_text(
            &srv.get(&format!("/api/v1/lists/{id}/stats")),
            200,
            &counts(followers, following),
        );
    }
}

#[test]
fn list_stats_without_user() {
    let srv = TestService::start(&accounts());
    // 300's user is the zero address; 5 and 999 are not in lists.
    for id in ["300", "5", "999"] {
        assert_no_user_found(&srv.get(&format!("/api/v1/lists/{id}/stats")));
        assert_no_user_found(&srv.get(&format!("/api/v1/lists/{id}/stats?cache=fresh")));
    }
    for id in ["0", "x", "+1", "18446744073709551616"] {
        assert_invalid_list_id(&srv.get(&format!("/api/v1/lists/{id}/stats")));
    }
}

/// An invariant of the API reference (docs/openapi.yaml): 12 followers_count =
/// entries of 7. (17, for following_count, is not served yet.)
#[test]
fn list_stats_followers_match_list_followers() {
    let srv = TestService::start(&accounts());
    for id in ["1", "2", "3", "4", "10", "20"] {
        let stats = srv.get(&format!("/api/v1/lists/{id}/stats")).json();
        let seven = srv.get(&format!("/api/v1/lists/{id}/followers?limit=1000"));
        assert_eq!(
            stats["followers_count"].as_u64().unwrap() as usize,
            seven.json()["followers"].as_array().unwrap().len(),
            "list {id}: {}",
            seven.text()
        );
    }
}

// ------------------------------------------------------------------ 41

#[test]
fn global_stats_exact_text() {
    let srv = TestService::start(&accounts());
    // address_count: K1..K9 (records in lists 1-4, 10, 20 and the
    // user-less 300; not list 999's K10 nor the tag row on K10).
    // list_op_count: seqs 1-4 (lists 1, 1, 10, 300), not 5 (list 999).
    // user_count: owners K1, K6, K3, K4, K5 (K2 owns nothing).
    let want =
        r#"{"stats":{"address_count":"9","list_count":"7","list_op_count":"4","user_count":"5"}}"#;
    assert_text(&srv.get("/api/v1/stats"), 200, want);
    for q in ["?cache=fresh", "", "?limit=x&offset=-1"] {
        assert_text(&srv.get(&format!("/api/v1/stats{q}")), 200, want);
    }
    let head = srv.head("/api/v1/stats");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
}

#[test]
fn global_stats_of_an_empty_snapshot() {
    let srv = TestService::start(&Tables::default());
    assert_text(
        &srv.get("/api/v1/stats"),
        200,
        r#"{"stats":{"address_count":"0","list_count":"0","list_op_count":"0","user_count":"0"}}"#,
    );
}

#[test]
fn global_stats_count_every_list() {
    // fixtures::graph: lists 1-8 (owners A, B, C, D, A, E, F, G: 7
    // distinct; list 8's user is the zero address, its owner G). Records
    // in lists 1-6 target A, B, C, D, E (list 5's E counts even though
    // list 5 is not primary); list 99 (not in lists) is left out. No ops.
    let srv = TestService::start(&graph());
    assert_text(
        &srv.get("/api/v1/stats"),
        200,
        r#"{"stats":{"address_count":"5","list_count":"8","list_op_count":"0","user_count":"7"}}"#,
    );
}
