//! GET /leaderboard/search (numbers from fixtures::graph).

use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

fn row_a() -> Value {
    json!({"address": A, "name": "alice.eth", "avatar": "https://example.com/alice.png", "header": null,
           "mutuals_rank": "1", "followers_rank": "2", "following_rank": "1", "blocks_rank": "0",
           "mutuals": "3", "following": "3", "followers": "3", "blocks": "0",
           "updated_at": CREATED_AT})
}
fn row_b() -> Value {
    json!({"address": B, "name": null, "avatar": null, "header": null,
           "mutuals_rank": "3", "followers_rank": "2", "following_rank": "4", "blocks_rank": "1",
           "mutuals": "2", "following": "2", "followers": "3", "blocks": "2",
           "updated_at": CREATED_AT})
}
fn row_c() -> Value {
    json!({"address": C, "name": "Çarol.eth", "avatar": null, "header": null,
           "mutuals_rank": "4", "followers_rank": "4", "following_rank": "1", "blocks_rank": "2",
           "mutuals": "1", "following": "3", "followers": "1", "blocks": "1",
           "updated_at": CREATED_AT})
}
fn row_d() -> Value {
    json!({"address": D, "name": "Dave.eth", "avatar": "https://example.com/dave.png",
           "header": "https://example.com/dave-header.png",
           "mutuals_rank": "1", "followers_rank": "1", "following_rank": "1", "blocks_rank": "0",
           "mutuals": "3", "following": "3", "followers": "4", "blocks": "0",
           "updated_at": CREATED_AT})
}
fn row_f() -> Value {
    json!({"address": F, "name": null, "avatar": null, "header": null,
           "mutuals_rank": "0", "followers_rank": "0", "following_rank": "0", "blocks_rank": "0",
           "mutuals": "0", "following": "0", "followers": "0", "blocks": "0",
           "updated_at": CREATED_AT})
}

fn results(rows: Vec<Value>) -> Value {
    json!({"last_updated": CREATED_AT, "results": rows})
}

const EMPTY: &str = r#"{"last_updated":"2026-11-20T12:00:00.000Z","results":[]}"#;

#[test]
fn search_exact_text_one_row() {
    let srv = TestService::start(&graph());
    let resp = srv.get("/api/v1/leaderboard/search?term=alice");
    assert_text(
        &resp,
        200,
        concat!(
            r#"{"last_updated":"2026-11-20T12:00:00.000Z","results":[{"#,
            r#""address":"0x1111111111111111111111111111111111111111","name":"alice.eth","#,
            r#""avatar":"https://example.com/alice.png","header":null,"#,
            r#""mutuals_rank":"1","followers_rank":"2","following_rank":"1","blocks_rank":"0","#,
            r#""mutuals":"3","following":"3","followers":"3","blocks":"0","#,
            r#""updated_at":"2026-11-20T12:00:00.000Z"}]}"#
        ),
    );
}

#[test]
fn search_all_addresses_ordered_by_followers_then_address() {
    let srv = TestService::start(&graph());
    // "0x" matches every address; E (no primary list, only invisible data),
    // G (ens only) and H (primary row naming a missing list) are not on the
    // leaderboard. D 4, then A 3 and B 3 (address asc), C 1, F 0.
    let resp = srv.get("/api/v1/leaderboard/search?term=0x");
    assert_json(
        &resp,
        200,
        results(vec![row_d(), row_a(), row_b(), row_c(), row_f()]),
    );
}

#[test]
fn search_by_address_substring_case_insensitive() {
    let srv = TestService::start(&graph());
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=2222"),
        200,
        results(vec![row_b()]),
    );
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=0X44444444444444444444444444444444444444"),
        200,
        results(vec![row_d()]),
    );
    assert_json(
        &srv.get(&format!("/api/v1/leaderboard/search?term={C}")),
        200,
        results(vec![row_c()]),
    );
}

#[test]
fn search_by_name_substring_case_insensitive() {
    let srv = TestService::start(&graph());
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=ALICE"),
        200,
        results(vec![row_a()]),
    );
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=aVe.E"),
        200,
        results(vec![row_d()]),
    );
    // ".eth" is in alice.eth, Çarol.eth, Dave.eth (ghost.eth is not on the
    // leaderboard).
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=.eth"),
        200,
        results(vec![row_d(), row_a(), row_c()]),
    );
    // Unicode lower-casing: "ÇAROL" matches "Çarol.eth".
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=%C3%87AROL"),
        200,
        results(vec![row_c()]),
    );
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=%C3%A7arol"),
        200,
        results(vec![row_c()]),
    );
}

#[test]
fn search_term_is_trimmed_and_plus_is_space() {
    let srv = TestService::start(&graph());
    for term in ["%20dave%20", "+dave+", "%09dave%0A", "+%20dave"] {
        assert_json(
            &srv.get(&format!("/api/v1/leaderboard/search?term={term}")),
            200,
            results(vec![row_d()]),
        );
    }
    // A space inside the term is kept: nothing contains "da ve".
    assert_text(
        &srv.get("/api/v1/leaderboard/search?term=da+ve"),
        200,
        EMPTY,
    );
}

#[test]
fn search_missing_or_empty_term_is_empty() {
    let srv = TestService::start(&graph());
    for q in [
        "",
        "?",
        "?term",
        "?term=",
        "?term=+++",
        "?term=%20%09",
        "?limit=5",
    ] {
        assert_text(
            &srv.get(&format!("/api/v1/leaderboard/search{q}")),
            200,
            EMPTY,
        );
    }
}

#[test]
fn search_is_a_literal_substring() {
    let srv = TestService::start(&graph());
    for term in [
        "%25", "_", "a_i", "a%25e", "*", "al.*", "ghost", "5555", "7777", "9999", "bob",
    ] {
        assert_text(
            &srv.get(&format!("/api/v1/leaderboard/search?term={term}")),
            200,
            EMPTY,
        );
    }
}

#[test]
fn search_limit_and_offset() {
    let srv = TestService::start(&graph());
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=0x&limit=2&offset=1"),
        200,
        results(vec![row_a(), row_b()]),
    );
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=0x&offset=3"),
        200,
        results(vec![row_c(), row_f()]),
    );
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=0x&limit=1"),
        200,
        results(vec![row_d()]),
    );
    assert_text(
        &srv.get("/api/v1/leaderboard/search?term=0x&limit=0"),
        200,
        EMPTY,
    );
    assert_text(
        &srv.get("/api/v1/leaderboard/search?term=0x&offset=5"),
        200,
        EMPTY,
    );
    assert_text(
        &srv.get("/api/v1/leaderboard/search?term=0x&offset=18446744073709551615"),
        200,
        EMPTY,
    );
    // Empty values mean the defaults.
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=0x&limit=&offset="),
        200,
        results(vec![row_d(), row_a(), row_b(), row_c(), row_f()]),
    );
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=0x&limit=1000&offset=0004"),
        200,
        results(vec![row_f()]),
    );
}

#[test]
fn search_default_limit_is_50() {
    let srv = TestService::start(&bulk());
    // Z has 60 followers, the 60 followers have 0 and come by address.
    let resp = srv.get("/api/v1/leaderboard/search?term=0x");
    assert_eq!(resp.status, 200, "{}", resp.text());
    let got = addresses(&resp.json(), "results");
    let mut want = vec![Z.to_owned()];
    want.extend((1..=49u8).map(n));
    assert_eq!(got, want);
    let first = &resp.json()["results"][0];
    assert_eq!(first["followers"], "60");
    assert_eq!(first["followers_rank"], "1");
    assert_eq!(first["mutuals_rank"], "0");
    assert_eq!(resp.json()["results"][1]["following"], "1");
    assert_eq!(resp.json()["results"][1]["following_rank"], "1");

    let all = srv.get("/api/v1/leaderboard/search?term=0x&limit=1000");
    assert_eq!(addresses(&all.json(), "results").len(), 61);
    let tail = srv.get("/api/v1/leaderboard/search?term=0x&offset=59");
    assert_eq!(addresses(&tail.json(), "results"), vec![n(59), n(60)]);
}

#[test]
fn search_limit_above_maximum() {
    let srv = TestService::start(&graph());
    for limit in ["1001", "18446744073709551615", "000001001"] {
        assert_400(
            &srv.get(&format!("/api/v1/leaderboard/search?term=0x&limit={limit}")),
            "limit must be at most 1000",
        );
    }
}

#[test]
fn search_bad_parameters() {
    let srv = TestService::start(&graph());
    for v in [
        "-1",
        "1e3",
        "%201",
        "1%20",
        "+1",
        "%2B1",
        "abc",
        "1.5",
        "18446744073709551616",
        "0x10",
    ] {
        assert_400(
            &srv.get(&format!("/api/v1/leaderboard/search?term=0x&limit={v}")),
            "limit must be a non-negative integer",
        );
        assert_400(
            &srv.get(&format!("/api/v1/leaderboard/search?term=0x&offset={v}")),
            "offset must be a non-negative integer",
        );
    }
    assert_400(
        &srv.get("/api/v1/leaderboard/search?term=%FF"),
        "term is not valid UTF-8",
    );
    assert_400(
        &srv.get("/api/v1/leaderboard/search?term=a%C3"),
        "term is not valid UTF-8",
    );
}

#[test]
fn search_parameter_precedence_follows_table_order() {
    let srv = TestService::start(&graph());
    // term, limit, offset
    assert_400(
        &srv.get("/api/v1/leaderboard/search?offset=x&limit=y&term=%FF"),
        "term is not valid UTF-8",
    );
    assert_400(
        &srv.get("/api/v1/leaderboard/search?offset=x&limit=y&term=a"),
        "limit must be a non-negative integer",
    );
    assert_400(
        &srv.get("/api/v1/leaderboard/search?offset=x&limit=1001"),
        "limit must be at most 1000",
    );
    assert_400(
        &srv.get("/api/v1/leaderboard/search?offset=x&limit=2"),
        "offset must be a non-negative integer",
    );
}

#[test]
fn search_repeated_and_unknown_parameters() {
    let srv = TestService::start(&graph());
    // The first occurrence counts.
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=alice&term=dave"),
        200,
        results(vec![row_a()]),
    );
    assert_json(
        &srv.get("/api/v1/leaderboard/search?term=0x&limit=1&limit=x"),
        200,
        results(vec![row_d()]),
    );
    assert_400(
        &srv.get("/api/v1/leaderboard/search?term=0x&limit=x&limit=1"),
        "limit must be a non-negative integer",
    );
    // Parameter names are percent-decoded too.
    assert_json(
        &srv.get("/api/v1/leaderboard/search?te%72m=dave&%6Cimit=x"),
        400,
        json!({"response": "limit must be a non-negative integer"}),
    );
    assert_json(
        &srv.get("/api/v1/leaderboard/search?te%72m=dave"),
        200,
        results(vec![row_d()]),
    );
    // Names are case-sensitive; unknown ones are ignored.
    assert_json(
        &srv.get("/api/v1/leaderboard/search?Term=zzz&term=dave&LIMIT=x&foo=%FF&tags=q"),
        200,
        results(vec![row_d()]),
    );
}

/// fixtures::followers, worked out by hand:
///   following: T6 5, F1 4, F2 2, F3 2, F4 2, F5 1, F7 0, W 0
///   followers: T6 6, F5 4, F2 2, F1 1, F3 1, F4 1, W 1, F7 0
///   mutuals:   T6 5 (itself, F1, F2, F3, F5), F1 1, F2 1, F3 1, F5 1, others 0
///   blocks:    T6 1 (by F2), F3 1 (by T6), F5 1 (by T6), others 0
/// F8 (only a non-primary list) is not on the leaderboard.
#[test]
fn search_counts_block_and_mute_records() {
    let srv = TestService::start(&followers());
    let row = |address: &str, name: Value, ranks: [&str; 4], counts: [&str; 4]| {
        json!({"address": address, "name": name, "avatar": null, "header": null,
               "mutuals_rank": ranks[0], "followers_rank": ranks[1],
               "following_rank": ranks[2], "blocks_rank": ranks[3],
               "mutuals": counts[0], "following": counts[1], "followers": counts[2],
               "blocks": counts[3], "updated_at": CREATED_AT})
    };
    let want = results(vec![
        row(
            T6,
            json!("Target.eth"),
            ["1", "1", "1", "1"],
            ["5", "5", "6", "1"],
        ),
        row(F5, Value::Null, ["2", "2", "6", "1"], ["1", "1", "4", "1"]),
        row(F2, Value::Null, ["2", "3", "3", "0"], ["1", "2", "2", "0"]),
        row(F1, Value::Null, ["2", "4", "2", "0"], ["1", "4", "1", "0"]),
        row(F3, Value::Null, ["2", "4", "3", "1"], ["1", "2", "1", "1"]),
        row(F4, Value::Null, ["0", "4", "3", "0"], ["0", "2", "1", "0"]),
        row(W, Value::Null, ["0", "4", "0", "0"], ["0", "0", "1", "0"]),
        row(F7, Value::Null, ["0", "0", "0", "0"], ["0", "0", "0", "0"]),
    ]);
    assert_json(&srv.get("/api/v1/leaderboard/search?term=0x"), 200, want);
    assert_text(&srv.get("/api/v1/leaderboard/search?term=8888"), 200, EMPTY);
}
