//! GET /lists/{token_id}/details (1, see fixtures::graph for the numbers)
//! and /users/{addressOrENS}/details (10, fixtures::accounts).

use followgraph::snapshot::EnsRow;
use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

const NULL_ENS: &str = r#"{"name":null,"avatar":null,"header":null,"display":null,"records":{},"chains":{},"fresh":null,"resolver":null,"errors":{}}"#;

fn null_ens() -> serde_json::Value {
    serde_json::from_str(NULL_ENS).unwrap()
}

#[test]
fn details_with_ens_row_exact_text() {
    let srv = TestService::start(&graph());
    let resp = srv.get("/api/v1/lists/1/details");
    assert_text(
        &resp,
        200,
        concat!(
            r#"{"address":"0x1111111111111111111111111111111111111111","#,
            r#""ens":{"name":"alice.eth","avatar":"https://example.com/alice.png","header":null,"display":"Alice.eth","#,
            r#""records":{"com.twitter":"alice","avatar":"https://example.com/alice.png"},"#,
            r#""chains":{"eth":"0x1111111111111111111111111111111111111111","btc":"bc1qalice"},"#,
            r#""fresh":1726680254493,"resolver":"0x4976fb03c32e5b8cfe2b6ccb31c09ba78ebaba41","#,
            r#""errors":{"header":"not found","avatar":"timeout"}},"#,
            r#""ranks":{"mutuals_rank":"1","followers_rank":"2","following_rank":"1","top8_rank":"2","blocks_rank":"0"},"#,
            r#""primary_list":"1"}"#
        ),
    );
}

#[test]
fn details_without_ens_row_is_all_null_object() {
    let srv = TestService::start(&graph());
    // B: followers 3 (rank 2, tied with A), following 2 (rank 4 after the
    // three-way tie at 1), mutuals 2 (rank 3), top8 0, blocks 2 (rank 1).
    let resp = srv.get("/api/v1/lists/2/details");
    assert_text(
        &resp,
        200,
        &format!(
            concat!(
                r#"{{"address":"0x2222222222222222222222222222222222222222","ens":{},"#,
                r#""ranks":{{"mutuals_rank":"3","followers_rank":"2","following_rank":"4","top8_rank":"0","blocks_rank":"1"}},"#,
                r#""primary_list":"2"}}"#
            ),
            NULL_ENS
        ),
    );
}

#[test]
fn details_ens_row_with_nulls_gives_empty_objects() {
    let srv = TestService::start(&graph());
    // C: followers 1 (rank 4: D 1, A 2, B 2, C 4), following 3 (rank 1),
    // mutuals 1 (rank 4), top8 0, blocks 1 (rank 2).
    let resp = srv.get("/api/v1/lists/3/details");
    assert_json(
        &resp,
        200,
        json!({
            "address": C,
            "ens": {"name": "Çarol.eth", "avatar": null, "header": null, "display": null,
                    "records": {}, "chains": {}, "fresh": null, "resolver": null, "errors": {}},
            "ranks": {"mutuals_rank": "4", "followers_rank": "4", "following_rank": "1",
                      "top8_rank": "0", "blocks_rank": "2"},
            "primary_list": "3"
        }),
    );
}

#[test]
fn details_self_follow_counts_and_partial_ens() {
    let srv = TestService::start(&graph());
    // D follows itself: followers 4 (rank 1), mutuals 3 incl. itself (rank 1,
    // tied with A), following 3 (rank 1), top8 3 (rank 1), blocks 0.
    let resp = srv.get("/api/v1/lists/4/details");
    assert_json(
        &resp,
        200,
        json!({
            "address": D,
            "ens": {"name": "Dave.eth", "avatar": "https://example.com/dave.png",
                    "header": "https://example.com/dave-header.png", "display": "dave.eth",
                    "records": {},
                    "chains": {"eth": "0x4444444444444444444444444444444444444444", "btc": "bc1qdave"},
                    "fresh": 0, "resolver": null,
                    "errors": {"z": {"code": 500, "detail": "timeout"}, "a": [1, "x", null]}},
            "ranks": {"mutuals_rank": "1", "followers_rank": "1", "following_rank": "1",
                      "top8_rank": "1", "blocks_rank": "0"},
            "primary_list": "4"
        }),
    );
}

#[test]
fn details_zero_counts_rank_zero() {
    let srv = TestService::start(&graph());
    let resp = srv.get("/api/v1/lists/7/details");
    assert_text(
        &resp,
        200,
        &format!(
            concat!(
                r#"{{"address":"0x6666666666666666666666666666666666666666","ens":{},"#,
                r#""ranks":{{"mutuals_rank":"0","followers_rank":"0","following_rank":"0","top8_rank":"0","blocks_rank":"0"}},"#,
                r#""primary_list":"7"}}"#
            ),
            NULL_ENS
        ),
    );
}

#[test]
fn details_token_id_leading_zeros() {
    let srv = TestService::start(&graph());
    let plain = srv.get("/api/v1/lists/7/details");
    assert_eq!(plain.status, 200);
    for id in ["007", "0000000000000000000000000000007"] {
        let resp = srv.get(&format!("/api/v1/lists/{id}/details"));
        assert_text(&resp, 200, &plain.text());
    }
    // Percent-encoded digits are decoded first.
    assert_text(&srv.get("/api/v1/lists/%37/details"), 200, &plain.text());
}

#[test]
fn details_of_a_list_that_is_not_primary_is_its_users() {
    let srv = TestService::start(&graph());
    // 5 is A's second list: A's details, primary_list "1", byte for byte
    // the answer of A's primary list 1.
    let one = srv.get("/api/v1/lists/1/details");
    assert_eq!(one.status, 200, "{}", one.text());
    assert_text(&srv.get("/api/v1/lists/5/details"), 200, &one.text());
    // 6 is E's list; E's primary_lists row names list 1 (A's) and is
    // ignored, so E has no primary list; E's only data is invisible (a
    // record in A's list 5): every count 0.
    assert_text(
        &srv.get("/api/v1/lists/6/details"),
        200,
        &format!(
            concat!(
                r#"{{"address":"0x5555555555555555555555555555555555555555","ens":{},"#,
                r#""ranks":{{"mutuals_rank":"0","followers_rank":"0","following_rank":"0","top8_rank":"0","blocks_rank":"0"}},"#,
                r#""primary_list":null}}"#
            ),
            NULL_ENS
        ),
    );
}

#[test]
fn details_of_a_list_without_user_is_no_user_found() {
    let srv = TestService::start(&graph());
    // 8: user is the zero address; 99 (records but no lists row), 9 and
    // u64::MAX: not in lists.
    for id in ["8", "99", "9", "18446744073709551615"] {
        assert_no_user_found(&srv.get(&format!("/api/v1/lists/{id}/details")));
    }
}

#[test]
fn details_primary_lists_row_naming_someone_elses_list_is_ignored() {
    let srv = TestService::start(&graph());
    // E names list 1 (user A) as primary: list 1 still stands for A.
    let resp = srv.get("/api/v1/lists/1/details");
    assert_eq!(resp.json()["address"], A, "{}", resp.text());
    assert_eq!(resp.json()["primary_list"], "1", "{}", resp.text());
}

#[test]
fn details_invalid_token_ids() {
    let srv = TestService::start(&graph());
    for id in [
        "0",
        "00",
        "-1",
        "abc",
        "1.5",
        "+1",
        "%2B1",
        "1e3",
        "%201",
        "1%20",
        "0x1",
        "18446744073709551616",
        "99999999999999999999999",
        "%EF%BC%91", // fullwidth digit one
    ] {
        assert_invalid_list_id(&srv.get(&format!("/api/v1/lists/{id}/details")));
    }
}

#[test]
fn details_ignores_parameters_it_does_not_take() {
    let srv = TestService::start(&graph());
    let plain = srv.get("/api/v1/lists/2/details");
    assert_eq!(plain.status, 200);
    for q in [
        "limit=abc",
        "offset=-1&term=x",
        "start=x&opcode=y",
        "foo=bar",
        "cache=fresh",
    ] {
        let resp = srv.get(&format!("/api/v1/lists/2/details?{q}"));
        assert_text(&resp, 200, &plain.text());
    }
}

#[test]
fn details_count_block_and_mute_records() {
    // fixtures::followers: see leaderboard::search_counts_block_and_mute_records;
    // top8: T6 2 (by F1, F3) -> rank 1, nobody else.
    let srv = TestService::start(&followers());
    let ens = json!({"name": "Target.eth", "avatar": null, "header": null, "display": null,
                     "records": {}, "chains": {}, "fresh": null, "resolver": null, "errors": {}});
    assert_json(
        &srv.get("/api/v1/lists/30/details"),
        200,
        json!({"address": T6, "ens": ens,
               "ranks": {"mutuals_rank": "1", "followers_rank": "1", "following_rank": "1",
                         "top8_rank": "1", "blocks_rank": "1"},
               "primary_list": "30"}),
    );
    assert_text(
        &srv.get("/api/v1/lists/35/details"),
        200,
        &format!(
            concat!(
                r#"{{"address":"0x5555555555555555555555555555555555555555","ens":{},"#,
                r#""ranks":{{"mutuals_rank":"2","followers_rank":"2","following_rank":"6","top8_rank":"0","blocks_rank":"1"}},"#,
                r#""primary_list":"35"}}"#
            ),
            NULL_ENS
        ),
    );
}

#[test]
fn details_of_lists_that_are_not_primary() {
    // fixtures::followers. 36 is F1's second list: F1's details (primary
    // list 31). F1: followers 1 (T6; W's list 39 is not primary) -> rank 4
    // after T6 6, F5 4, F2 2; following 4 (T6, F4, F5, W) -> rank 2 after
    // T6 5; mutuals 1 (T6) -> rank 2 after T6 5; no top8, no block.
    let srv = TestService::start(&followers());
    let f1 = format!(
        concat!(
            r#"{{"address":"0x1111111111111111111111111111111111111111","ens":{},"#,
            r#""ranks":{{"mutuals_rank":"2","followers_rank":"4","following_rank":"2","top8_rank":"0","blocks_rank":"0"}},"#,
            r#""primary_list":"31"}}"#
        ),
        NULL_ENS
    );
    assert_text(&srv.get("/api/v1/lists/36/details"), 200, &f1);
    assert_text(&srv.get("/api/v1/lists/31/details"), 200, &f1);
    // 39 is W's list and W has no primary list (its row names F1's 31):
    // W's followers 1 (F1) -> rank 4; nothing else.
    assert_json(
        &srv.get("/api/v1/lists/39/details"),
        200,
        json!({"address": W, "ens": null_ens(),
               "ranks": {"mutuals_rank": "0", "followers_rank": "4", "following_rank": "0",
                         "top8_rank": "0", "blocks_rank": "0"},
               "primary_list": null}),
    );
    // 38 is F8's list (F8's row names the missing list 40): no counts.
    assert_json(
        &srv.get("/api/v1/lists/38/details"),
        200,
        json!({"address": F8, "ens": null_ens(),
               "ranks": {"mutuals_rank": "0", "followers_rank": "0", "following_rank": "0",
                         "top8_rank": "0", "blocks_rank": "0"},
               "primary_list": null}),
    );
    // 41: user is the zero address (it holds a record of T6); 40: missing.
    assert_no_user_found(&srv.get("/api/v1/lists/41/details"));
    assert_no_user_found(&srv.get("/api/v1/lists/40/details"));
}

#[test]
fn details_ens_json_printed_as_stored() {
    // records, chains and errors keep their stored text (duplicate keys,
    // number spellings, escapes), only whitespace outside strings removed.
    let tables = Builder::new()
        .primary_list(1, A)
        .ens(EnsRow {
            address: addr(A),
            name: "json.eth".into(),
            records: s(
                r#"{ "z": 1, "n": 12345678901234567890123, "f": 1.50, "e": 1e2, "u": "\u00e9", "z": 2 }"#,
            ),
            chains: s("{\n  \"eth\" : \"0xAbC\",\n\t\"btc\": \"bc1q\"\r\n}"),
            errors: s(r#"{"a b" : "x \" y\\ \/ \n" , "e": [ ] , "o": { } }"#),
            ..Default::default()
        })
        .build();
    let srv = TestService::start(&tables);
    assert_text(
        &srv.get("/api/v1/lists/1/details"),
        200,
        concat!(
            r#"{"address":"0x1111111111111111111111111111111111111111","#,
            r#""ens":{"name":"json.eth","avatar":null,"header":null,"display":null,"#,
            r#""records":{"z":1,"n":12345678901234567890123,"f":1.50,"e":1e2,"u":"\u00e9","z":2},"#,
            r#""chains":{"eth":"0xAbC","btc":"bc1q"},"#,
            r#""fresh":null,"resolver":null,"#,
            r#""errors":{"a b":"x \" y\\ \/ \n","e":[],"o":{}}},"#,
            r#""ranks":{"mutuals_rank":"0","followers_rank":"0","following_rank":"0","top8_rank":"0","blocks_rank":"0"},"#,
            r#""primary_list":"1"}"#
        ),
    );
}

// ------------------------------------------ 10: /users/{addressOrENS}/details
// (fixtures::accounts for the counts)

fn ranks(mutuals: &str, followers: &str, following: &str, top8: &str, blocks: &str) -> Value {
    json!({"mutuals_rank": mutuals, "followers_rank": followers, "following_rank": following,
           "top8_rank": top8, "blocks_rank": blocks})
}

fn name_only_ens(name: &str) -> Value {
    json!({"name": name, "avatar": null, "header": null, "display": null,
           "records": {}, "chains": {}, "fresh": null, "resolver": null, "errors": {}})
}

#[test]
fn user_details_is_list_details_of_the_primary_list() {
    let srv = TestService::start(&accounts());
    // K1: mutuals 3, followers 3, following 4, top8 2 (tied with K8):
    // rank 1 each; never blocked.
    let want = concat!(
        r#"{"address":"0x1010101010101010101010101010101010101010","#,
        r#""ens":{"name":"kay.eth","avatar":"https://example.com/kay.png","#,
        r#""header":"https://example.com/kay-h.png","display":"Kay.eth","#,
        r#""records":{"com.twitter":"kay"},"chains":{},"fresh":5,"resolver":null,"errors":{}},"#,
        r#""ranks":{"mutuals_rank":"1","followers_rank":"1","following_rank":"1","top8_rank":"1","blocks_rank":"0"},"#,
        r#""primary_list":"1"}"#
    );
    for target in [
        format!("/api/v1/users/{K1}/details"),
        "/api/v1/users/KAY.eth/details".to_owned(),
        "/api/v1/lists/1/details".to_owned(),
        // K1's other list stands for K1 too.
        "/api/v1/lists/10/details".to_owned(),
    ] {
        assert_text(&srv.get(&target), 200, want);
    }
    // K3: mutuals 2 (rank 2, tied with K2), followers 2 (rank 2 with K2,
    // K8), following 2 (rank 3 with K4), no top8, blocks 2 (rank 1).
    let k3 = json!({"address": K3,
        "ens": {"name": "three.eth", "avatar": "https://example.com/three.png", "header": null,
                "display": null, "records": {}, "chains": {}, "fresh": null, "resolver": null,
                "errors": {}},
        "ranks": ranks("2", "2", "3", "0", "1"), "primary_list": "3"});
    assert_json(
        &srv.get(&format!("/api/v1/users/{K3}/details")),
        200,
        k3.clone(),
    );
    assert_json(&srv.get("/api/v1/lists/3/details"), 200, k3);
}

#[test]
fn user_details_without_primary_list() {
    let srv = TestService::start(&accounts());
    // K5: followed by K4 (rank 5 after 3, 2, 2, 2), blocked by K4 (rank
    // 2 with K4); no primary list, so nothing else. Its list 20 answers
    // the same.
    let k5 = json!({"address": K5, "ens": name_only_ens("five.eth"),
                    "ranks": ranks("0", "5", "0", "0", "2"), "primary_list": null});
    assert_json(&srv.get("/api/v1/users/five.eth/details"), 200, k5.clone());
    assert_json(&srv.get("/api/v1/lists/20/details"), 200, k5);
    // K8: a target only: followers 2 (rank 2), top8 2 (rank 1).
    assert_json(
        &srv.get("/api/v1/users/eight.eth/details"),
        200,
        json!({"address": K8, "ens": name_only_ens("Eight.eth"),
               "ranks": ranks("0", "2", "0", "1", "0"), "primary_list": null}),
    );
    // K6 is only an owner and a target in list 10 (not primary): not on
    // the leaderboard.
    assert_json(
        &srv.get(&format!("/api/v1/users/{K6}/details")),
        200,
        json!({"address": K6, "ens": name_only_ens("six.eth"),
               "ranks": ranks("0", "0", "0", "0", "0"), "primary_list": null}),
    );
    // No data at all, the zero address included (list 300's user).
    for (who, shown) in [
        (ZERO, ZERO),
        (
            "0xFEDCBA9876543210FEDCBA9876543210FEDCBA98",
            "0xfedcba9876543210fedcba9876543210fedcba98",
        ),
    ] {
        assert_text(
            &srv.get(&format!("/api/v1/users/{who}/details")),
            200,
            &format!(
                concat!(
                    r#"{{"address":"{}","ens":{},"#,
                    r#""ranks":{{"mutuals_rank":"0","followers_rank":"0","following_rank":"0","top8_rank":"0","blocks_rank":"0"}},"#,
                    r#""primary_list":null}}"#
                ),
                shown, NULL_ENS
            ),
        );
    }
    assert_no_user_found(&srv.get("/api/v1/lists/300/details"));
}

#[test]
fn user_details_unknown_names() {
    let srv = TestService::start(&accounts());
    for who in ["nobody.eth", "0x123", "0x", "%E2%98%83"] {
        assert_bad_ens(&srv.get(&format!("/api/v1/users/{who}/details")));
        assert_bad_ens(&srv.get(&format!("/api/v1/users/{who}/details?cache=fresh")));
    }
}

/// An invariant of the API reference (docs/openapi.yaml): 10 = 1 of the
/// primary list byte for byte, for every account with a primary list
/// (fixtures::graph).
#[test]
fn user_details_equal_primary_list_details() {
    let srv = TestService::start(&graph());
    for (who, list) in [(A, 1), (B, 2), (C, 3), (D, 4), (F, 7)] {
        let one = srv.get(&format!("/api/v1/lists/{list}/details"));
        assert_eq!(one.status, 200, "{}", one.text());
        assert_text(
            &srv.get(&format!("/api/v1/users/{who}/details")),
            200,
            &one.text(),
        );
        let cached = srv.get(&format!("/api/v1/users/{who}/details"));
        assert_text(&cached, 200, &one.text());
        let head = srv.head(&format!("/api/v1/users/{who}/details"));
        assert_eq!(head.status, 200);
        assert!(head.body.is_empty());
    }
}
