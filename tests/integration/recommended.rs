//! GET /users/{a}/recommended (43), /lists/{id}/recommended (44), their
//! `/details` (45, 46) and /discover (47), over fixtures::graph with a
//! `recommended` table written below (see fixtures::graph for the records
//! and counts).

use followgraph::snapshot::{RecommendedRow, Tables};

use crate::fixtures::*;
use crate::support::*;

/// An address no other row names.
const X: &str = "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

fn rec(position: i64, address: &str, name: &str) -> RecommendedRow {
    RecommendedRow {
        position,
        address: addr(address),
        name: name.into(),
        ..RecommendedRow::default()
    }
}

/// fixtures::graph with eight recommended rows, written out of order.
/// Answer order: G (-1), X (0), C and D (1, the address breaks the tie),
/// B (2), A (3), E and F (5).
fn with_recommended() -> Tables {
    let mut t = graph();
    t.recommended = vec![
        RecommendedRow {
            class: s("A"),
            ..rec(2, B, "bee")
        },
        rec(5, F, "frank"),
        RecommendedRow {
            header: s("https://d/h.png"),
            created_at: Some(S + 1),
            ..rec(1, D, "dave pick")
        },
        rec(3, A, "alice"),
        RecommendedRow {
            avatar: s("https://c/a.png"),
            ..rec(1, C, "carol pick")
        },
        rec(5, E, "eve"),
        rec(0, X, "Quote \"q\" & <x>\\\n"),
        RecommendedRow {
            class: s("B"),
            created_at: Some(S),
            ..rec(-1, G, "ghost pick")
        },
    ];
    t
}

/// The row of 43 for each of the eight, by address.
fn row(a: &str) -> String {
    let row = |name: &str, avatar: &str, header: &str, class: &str, created: &str| {
        format!(
            r#"{{"name":{name},"address":"{a}","avatar":{avatar},"header":{header},"class":{class},"created_at":{created}}}"#
        )
    };
    match a {
        G => row(
            r#""ghost pick""#,
            "null",
            "null",
            r#""B""#,
            r#""2024-10-14T00:00:00.000Z""#,
        ),
        X => row(r#""Quote \"q\" & <x>\\\n""#, "null", "null", "null", "null"),
        C => row(
            r#""carol pick""#,
            r#""https://c/a.png""#,
            "null",
            "null",
            "null",
        ),
        D => row(
            r#""dave pick""#,
            "null",
            r#""https://d/h.png""#,
            "null",
            r#""2024-10-14T00:00:00.001Z""#,
        ),
        B => row(r#""bee""#, "null", "null", r#""A""#, "null"),
        A => row(r#""alice""#, "null", "null", "null", "null"),
        E => row(r#""eve""#, "null", "null", "null", "null"),
        F => row(r#""frank""#, "null", "null", "null", "null"),
        _ => unreachable!(),
    }
}

fn rows(addresses: &[&str]) -> String {
    let rows: Vec<String> = addresses.iter().map(|a| row(a)).collect();
    format!(r#"{{"recommended":[{}]}}"#, rows.join(","))
}

#[test]
fn user_recommended_leaves_out_the_account_and_what_it_follows() {
    let srv = TestService::start(&with_recommended());
    // A's primary list holds D, B and C (C's record carries block: left
    // out too).
    assert_text(
        &srv.get(&format!("/api/v1/users/{A}/recommended")),
        200,
        &rows(&[G, X, E, F]),
    );
    // B holds D and A.
    assert_text(
        &srv.get("/api/v1/users/0x2222222222222222222222222222222222222222/recommended"),
        200,
        &rows(&[G, X, C, E, F]),
    );
    // By name, in any case: D (Dave.eth) holds itself, A and B.
    assert_text(
        &srv.get("/api/v1/users/DAVE.ETH/recommended"),
        200,
        &rows(&[G, X, C, E, F]),
    );
    // H has no primary list (its row names a missing list): only itself,
    // which is not on the list.
    assert_text(
        &srv.get(&format!("/api/v1/users/{H}/recommended")),
        200,
        &rows(&[G, X, C, D, B, A, E, F]),
    );
}

#[test]
fn list_recommended_reads_the_lists_own_records() {
    let srv = TestService::start(&with_recommended());
    // List 5: user A, not its primary list; its own records hold E.
    assert_text(
        &srv.get("/api/v1/lists/5/recommended"),
        200,
        &rows(&[G, X, C, D, B, F]),
    );
    // List 1, A's primary list: as 43 for A.
    assert_text(
        &srv.get("/api/v1/lists/1/recommended"),
        200,
        &rows(&[G, X, E, F]),
    );
    // List 6: user E (its primary_lists row is ignored), own record A.
    assert_text(
        &srv.get("/api/v1/lists/006/recommended"),
        200,
        &rows(&[G, X, C, D, B, F]),
    );
    assert_no_user_found(&srv.get("/api/v1/lists/8/recommended"));
    assert_no_user_found(&srv.get("/api/v1/lists/8/recommended/details"));
    assert_no_user_found(&srv.get("/api/v1/lists/42/recommended"));
    assert_invalid_list_id(&srv.get("/api/v1/lists/0/recommended"));
    assert_invalid_list_id(&srv.get("/api/v1/lists/x/recommended/details?limit=x"));
}

#[test]
fn paging_ties_and_deep_offsets() {
    let srv = TestService::start(&with_recommended());
    let h = |q: &str| srv.get(&format!("/api/v1/users/{H}/recommended{q}"));
    assert_text(&h("?offset=2&limit=3"), 200, &rows(&[C, D, B]));
    assert_text(&h("?limit=1&offset=6"), 200, &rows(&[E]));
    assert_text(&h("?offset=7"), 200, &rows(&[F]));
    assert_text(&h("?offset=8"), 200, &rows(&[]));
    assert_text(&h("?limit=0"), 200, &rows(&[]));
    assert_text(
        &h("?offset=18446744073709551615&limit=1000"),
        200,
        &rows(&[]),
    );
    assert_400(&h("?limit=1001"), "limit must be at most 1000");
    assert_400(&h("?offset=-1"), "offset must be a non-negative integer");
    // The query's 400 comes before the unknown name's 404.
    assert_400(
        &srv.get("/api/v1/users/nobody.eth/recommended?limit=abc"),
        "limit must be a non-negative integer",
    );
    assert_bad_ens(&srv.get("/api/v1/users/nobody.eth/recommended"));
    assert_bad_ens(&srv.get("/api/v1/users/0x123/recommended/details"));
}

#[test]
fn no_table_or_every_row_left_out_is_empty() {
    let srv = TestService::start(&graph());
    for path in [
        format!("/api/v1/users/{H}/recommended"),
        format!("/api/v1/users/{A}/recommended/details"),
        "/api/v1/lists/1/recommended".to_owned(),
        "/api/v1/lists/5/recommended/details".to_owned(),
    ] {
        assert_text(&srv.get(&path), 200, r#"{"recommended":[]}"#);
    }
    let mut t = graph();
    t.recommended = vec![
        rec(0, B, "b"),
        rec(0, C, "c"),
        rec(1, D, "d"),
        rec(2, A, "a"),
    ];
    let srv = TestService::start(&t);
    assert_text(
        &srv.get(&format!("/api/v1/users/{A}/recommended")),
        200,
        r#"{"recommended":[]}"#,
    );
    assert_text(
        &srv.get("/api/v1/lists/1/recommended/details"),
        200,
        r#"{"recommended":[]}"#,
    );
}

const NULL_CARD_ENS: &str = r#"{"name":null,"avatar":null,"records":{}}"#;
const ZERO_RANKS: &str = r#"{"mutuals_rank":"0","followers_rank":"0","following_rank":"0","top8_rank":"0","blocks_rank":"0"}"#;

fn card(a: &str, ens: &str, followers: u32, following: u32, ranks: &str) -> String {
    format!(
        r#"{{"address":"{a}","ens":{ens},"stats":{{"followers_count":"{followers}","following_count":"{following}"}},"ranks":{ranks}}}"#
    )
}

#[test]
fn details_cards_exact_text() {
    let srv = TestService::start(&with_recommended());
    // C: followed by A (the record carries block: counted); its own
    // records D, A and B [block]: 2 shown. D: followed by all four; its
    // records D, A and B [block]: 2 shown.
    assert_text(
        &srv.get(&format!(
            "/api/v1/users/{H}/recommended/details?offset=2&limit=2"
        )),
        200,
        &format!(
            r#"{{"recommended":[{},{}]}}"#,
            card(
                C,
                r#"{"name":"Çarol.eth","avatar":null,"records":{}}"#,
                1,
                2,
                r#"{"mutuals_rank":"4","followers_rank":"4","following_rank":"1","top8_rank":"0","blocks_rank":"2"}"#
            ),
            card(
                D,
                r#"{"name":"Dave.eth","avatar":"https://example.com/dave.png","records":{}}"#,
                4,
                2,
                r#"{"mutuals_rank":"1","followers_rank":"1","following_rank":"1","top8_rank":"1","blocks_rank":"0"}"#
            ),
        ),
    );
    // B: followed by A, C and D (two of them block it); its records D
    // and A.
    assert_text(
        &srv.get("/api/v1/lists/5/recommended/details?offset=4&limit=1"),
        200,
        &format!(
            r#"{{"recommended":[{}]}}"#,
            card(
                B,
                NULL_CARD_ENS,
                3,
                2,
                r#"{"mutuals_rank":"3","followers_rank":"2","following_rank":"4","top8_rank":"0","blocks_rank":"1"}"#
            )
        ),
    );
    // A's card keeps its records' stored key order.
    assert_text(
        &srv.get(&format!(
            "/api/v1/users/{H}/recommended/details?offset=5&limit=1"
        )),
        200,
        &format!(
            r#"{{"recommended":[{}]}}"#,
            card(
                A,
                r#"{"name":"alice.eth","avatar":"https://example.com/alice.png","records":{"com.twitter":"alice","avatar":"https://example.com/alice.png"}}"#,
                3,
                2,
                r#"{"mutuals_rank":"1","followers_rank":"2","following_rank":"1","top8_rank":"2","blocks_rank":"0"}"#
            )
        ),
    );
    // A ghost (an ens row, nothing else), an address nothing else names,
    // an account with lists that count nowhere and one with an empty
    // primary list.
    assert_text(
        &srv.get(&format!("/api/v1/users/{A}/recommended/details")),
        200,
        &format!(
            r#"{{"recommended":[{},{},{},{}]}}"#,
            card(
                G,
                r#"{"name":"ghost.eth","avatar":null,"records":{}}"#,
                0,
                0,
                ZERO_RANKS
            ),
            card(X, NULL_CARD_ENS, 0, 0, ZERO_RANKS),
            card(E, NULL_CARD_ENS, 0, 0, ZERO_RANKS),
            card(F, NULL_CARD_ENS, 0, 0, ZERO_RANKS),
        ),
    );
}

/// The API reference's invariants: 45's addresses are 43's for the same
/// page, its `stats` 11's and its `ranks` 10's.
#[test]
fn details_agree_with_43_11_and_10() {
    let srv = TestService::start(&with_recommended());
    let json = |path: &str| -> serde_json::Value {
        let resp = srv.get(path);
        assert_eq!(resp.status, 200, "{path}");
        serde_json::from_slice(&resp.body).unwrap()
    };
    for viewer in [A, B, C, D, E, F, G, H, X] {
        for page in ["", "?limit=3", "?offset=2&limit=2"] {
            let v43 = json(&format!("/api/v1/users/{viewer}/recommended{page}"));
            let v45 = json(&format!("/api/v1/users/{viewer}/recommended/details{page}"));
            let (r43, r45) = (
                v43["recommended"].as_array().unwrap(),
                v45["recommended"].as_array().unwrap(),
            );
            assert_eq!(r43.len(), r45.len(), "{viewer}{page}");
            for (a, b) in r43.iter().zip(r45) {
                assert_eq!(a["address"], b["address"]);
                let who = b["address"].as_str().unwrap();
                let v11 = json(&format!("/api/v1/users/{who}/stats"));
                let v10 = json(&format!("/api/v1/users/{who}/details"));
                assert_eq!(
                    b["stats"]["followers_count"],
                    v11["followers_count"].to_string()
                );
                assert_eq!(
                    b["stats"]["following_count"],
                    v11["following_count"].to_string()
                );
                assert_eq!(b["ranks"], v10["ranks"]);
            }
        }
    }
}

// ------------------------------------------------------------------ 47

fn latest(a: &str, profile: &str, followers: u32, following: u32) -> String {
    format!(r#"{{"address":"{a}",{profile},"followers":"{followers}","following":"{following}"}}"#)
}

const NO_PROFILE: &str = r#""name":null,"avatar":null,"header":null"#;

#[test]
fn discover_exact_text() {
    let srv = TestService::start(&graph());
    // Shown records' newest updated_at: A S+9 (by D), D S+8 (itself), B
    // S+1 (by A; C's and D's records of B carry block). C's only record
    // (by A) carries block: not a member.
    let a = latest(
        A,
        r#""name":"alice.eth","avatar":"https://example.com/alice.png","header":null"#,
        3,
        3,
    );
    let d = latest(
        D,
        r#""name":"Dave.eth","avatar":"https://example.com/dave.png","header":"https://example.com/dave-header.png""#,
        4,
        3,
    );
    let b = latest(B, NO_PROFILE, 3, 2);
    let page = |rows: &[&str]| format!(r#"{{"latestFollows":[{}]}}"#, rows.join(","));
    assert_text(&srv.get("/api/v1/discover"), 200, &page(&[&a, &d, &b]));
    assert_text(
        &srv.get("/api/v1/discover?offset=1&limit=1"),
        200,
        &page(&[&d]),
    );
    assert_text(&srv.get("/api/v1/discover?offset=3"), 200, &page(&[]));
    assert_text(
        &srv.get("/api/v1/discover?offset=18446744073709551615&limit=1000"),
        200,
        &page(&[]),
    );
    assert_400(
        &srv.get("/api/v1/discover?limit=x"),
        "limit must be a non-negative integer",
    );
    assert_text(
        &srv.get("/api/v1/discover?limit=0&cache=fresh"),
        200,
        &page(&[]),
    );
}

#[test]
fn discover_ties_self_follows_and_mute() {
    let mut b = Builder::new();
    b.primary_list(1, A)
        .primary_list(2, B)
        .primary_list(3, C)
        .record(1, B, S)
        .record(1, C, S)
        .record(2, A, S - 1)
        // A self-follow counts; a muted record does not.
        .record(3, C, S - 1)
        .record(3, D, S + 5)
        .tag(3, D, "mute", S);
    let srv = TestService::start(&b.build());
    // B and C tie at S (address ascending), then A at S - 1.
    let want = format!(
        r#"{{"latestFollows":[{},{},{}]}}"#,
        latest(B, NO_PROFILE, 1, 1),
        latest(C, NO_PROFILE, 2, 2),
        latest(A, NO_PROFILE, 1, 2),
    );
    assert_text(&srv.get("/api/v1/discover"), 200, &want);
    let empty = TestService::start(&Builder::new().build());
    assert_text(
        &empty.get("/api/v1/discover"),
        200,
        r#"{"latestFollows":[]}"#,
    );
}
