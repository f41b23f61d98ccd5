//! GET /users/{a}/{b}/followerState (30), /lists/{id}/{a}/buttonState
//! (31), /lists/{id}/{a}/followerState (33), on fixtures::graph:
//!
//! primary lists: 1 (A): D top8, B, C block; 2 (B): D top8, A;
//! 3 (C): D top8, A top8, B block; 4 (D): D, A top8, B block.
//! List 5 (A's, not primary): E block. List 6 (E's, not primary): A top8.
//! E has no primary list; list 8's user is the zero address.

use serde_json::json;

use crate::fixtures::*;
use crate::support::*;

fn state(follow: bool, block: bool, mute: bool) -> serde_json::Value {
    json!({"follow": follow, "block": block, "mute": mute})
}

#[test]
fn follower_state_is_b_primary_lists_record_of_a() {
    let srv = TestService::start(&graph());
    let get = |a: &str, b: &str| srv.get(&format!("/api/v1/users/{a}/{b}/followerState"));
    assert_text(
        &get(A, "Dave.eth"),
        200,
        concat!(
            r#"{"addressUser":"0x1111111111111111111111111111111111111111","#,
            r#""addressFollower":"0x4444444444444444444444444444444444444444","#,
            r#""state":{"follow":true,"block":false,"mute":false}}"#
        ),
    );
    let cases = [
        (B, C, state(false, true, false)),
        // E has no primary list; A's list 1 has no record of E.
        (A, E, state(false, false, false)),
        (E, A, state(false, false, false)),
        (D, D, state(true, false, false)),
        (
            A,
            "0x0000000000000000000000000000000000000001",
            state(false, false, false),
        ),
    ];
    for (a, b, want) in cases {
        assert_json(
            &get(a, b),
            200,
            json!({"addressUser": a, "addressFollower": b, "state": want}),
        );
    }
    // A resolves before B.
    assert_bad_ens(&get("nobody.eth", "0x123"));
    assert_bad_ens(&get(A, "nobody.eth"));
}

#[test]
fn button_state_reads_the_lists_own_record() {
    let srv = TestService::start(&graph());
    let get = |list: &str, a: &str| srv.get(&format!("/api/v1/lists/{list}/{a}/buttonState"));
    assert_text(
        &get("001", "0x3333333333333333333333333333333333333333"),
        200,
        concat!(
            r#"{"token_id":"1","address":"0x3333333333333333333333333333333333333333","#,
            r#""state":{"follow":false,"block":true,"mute":false}}"#
        ),
    );
    for (list, a, want) in [
        ("1", D, state(true, false, false)),
        ("1", A, state(false, false, false)),
        // Lists that are not their user's primary list: their own records.
        ("5", E, state(false, true, false)),
        ("6", A, state(true, false, false)),
    ] {
        assert_json(
            &get(list, a),
            200,
            json!({"token_id": list, "address": a, "state": want}),
        );
    }
    assert_json(
        &get("6", "alice.eth"),
        200,
        json!({"token_id": "6", "address": A, "state": state(true, false, false)}),
    );
    // The list answers before the account.
    assert_no_user_found(&get("8", "nobody.eth"));
    assert_no_user_found(&get("99", A));
    assert_invalid_list_id(&get("x", "nobody.eth"));
    assert_bad_ens(&get("1", "nobody.eth"));
}

#[test]
fn list_follower_state_is_the_accounts_record_of_the_lists_user() {
    let srv = TestService::start(&graph());
    let get = |list: &str, a: &str| srv.get(&format!("/api/v1/lists/{list}/{a}/followerState"));
    for (list, a, want) in [
        // List 1 stands for A: B's list 2 holds A.
        ("1", B, state(true, false, false)),
        // List 5 stands for A too (not primary): C's list 3 holds A (top8).
        ("5", C, state(true, false, false)),
        // List 2 stands for B: C's record of B carries block.
        ("2", C, state(false, true, false)),
        // List 6 stands for E: nobody follows E.
        ("6", A, state(false, false, false)),
        // E has no primary list.
        ("1", E, state(false, false, false)),
    ] {
        assert_json(
            &get(list, a),
            200,
            json!({"token_id": list, "address": a, "state": want}),
        );
    }
    assert_no_user_found(&get("8", A));
    assert_invalid_list_id(&get("0", A));
}

#[test]
fn block_and_mute_together() {
    let tables = Builder::new()
        .primary_list(1, A)
        .record(1, B, S)
        .tag(1, B, "mute", S)
        .tag(1, B, "block", S)
        .record(1, C, S)
        .tag(1, C, "mute", S)
        .build();
    let srv = TestService::start(&tables);
    assert_json(
        &srv.get(&format!("/api/v1/lists/1/{B}/buttonState")),
        200,
        json!({"token_id": "1", "address": B, "state": state(false, true, true)}),
    );
    assert_json(
        &srv.get(&format!("/api/v1/users/{C}/{A}/followerState?cache=fresh")),
        200,
        json!({"addressUser": C, "addressFollower": A, "state": state(false, false, true)}),
    );
}
