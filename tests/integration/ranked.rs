//! GET /leaderboard/ranked (38), /leaderboard/count (39) and
//! /leaderboard/all (40) (see fixtures::accounts for the counts).
//!
//! Orders worked out from the fixture (ties by address ascending in both
//! directions; only counts above 0):
//!   mutuals   desc K1 3, K2 2, K3 2, K4 1          asc K4, K2, K3, K1
//!   followers desc K1 3, K2 2, K3 2, K8 2, K4 1, K5 1
//!             asc  K4, K5, K2, K3, K8, K1
//!   following desc K1 4, K2 3, K3 2, K4 2          asc K3, K4, K2, K1
//!   blocked   desc K3 2, K4 1, K5 1                asc K4, K5, K3
//!   top8      desc K1 2, K8 2, K2 1                asc K2, K1, K8

use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

fn row(address: &str, ens: [Option<&str>; 3], ranks: [&str; 5], counts: [&str; 5]) -> Value {
    // ranks and counts: mutuals, followers, following, blocks, top8.
    json!({"address": address, "name": ens[0], "avatar": ens[1], "header": ens[2],
           "mutuals_rank": ranks[0], "followers_rank": ranks[1], "following_rank": ranks[2],
           "blocks_rank": ranks[3], "top8_rank": ranks[4],
           "mutuals": counts[0], "following": counts[2], "followers": counts[1],
           "blocks": counts[3], "top8": counts[4], "updated_at": CREATED_AT})
}

fn k1() -> Value {
    row(
        K1,
        [
            Some("kay.eth"),
            Some("https://example.com/kay.png"),
            Some("https://example.com/kay-h.png"),
        ],
        ["1", "1", "1", "0", "1"],
        ["3", "3", "4", "0", "2"],
    )
}
fn k2() -> Value {
    row(
        K2,
        [None, None, None],
        ["2", "2", "2", "0", "3"],
        ["2", "2", "3", "0", "1"],
    )
}
fn k3() -> Value {
    row(
        K3,
        [
            Some("three.eth"),
            Some("https://example.com/three.png"),
            None,
        ],
        ["2", "2", "3", "1", "0"],
        ["2", "2", "2", "2", "0"],
    )
}
fn k4() -> Value {
    row(
        K4,
        [None, None, None],
        ["4", "5", "3", "2", "0"],
        ["1", "1", "2", "1", "0"],
    )
}
fn k5() -> Value {
    row(
        K5,
        [Some("five.eth"), None, None],
        ["0", "5", "0", "2", "0"],
        ["0", "1", "0", "1", "0"],
    )
}
fn k8() -> Value {
    row(
        K8,
        [Some("Eight.eth"), None, None],
        ["0", "2", "0", "0", "1"],
        ["0", "2", "0", "0", "2"],
    )
}

fn results(rows: Vec<Value>) -> Value {
    json!({"last_updated": CREATED_AT, "results": rows})
}

const EMPTY: &str = r#"{"last_updated":"2026-11-20T12:00:00.000Z","results":[]}"#;

fn ranked(query: &str) -> String {
    format!("/api/v1/leaderboard/ranked?{query}")
}

// ------------------------------------------------------------------ 38

#[test]
fn ranked_exact_text_first_row() {
    let srv = TestService::start(&accounts());
    assert_text(
        &srv.get(&ranked("limit=1")),
        200,
        concat!(
            r#"{"last_updated":"2026-11-20T12:00:00.000Z","results":[{"#,
            r#""address":"0x1010101010101010101010101010101010101010","name":"kay.eth","#,
            r#""avatar":"https://example.com/kay.png","header":"https://example.com/kay-h.png","#,
            r#""mutuals_rank":"1","followers_rank":"1","following_rank":"1","blocks_rank":"0","#,
            r#""top8_rank":"1","mutuals":"3","following":"4","followers":"3","blocks":"0","#,
            r#""top8":"2","updated_at":"2026-11-20T12:00:00.000Z"}]}"#
        ),
    );
}

#[test]
fn ranked_defaults_to_mutuals_descending() {
    let srv = TestService::start(&accounts());
    let want = results(vec![k1(), k2(), k3(), k4()]);
    for q in [
        "",
        "sort=mutuals",
        "sort=MUTUALS&direction=DESC",
        "sort=Mutuals&direction=desc",
        // Unknown values (not trimmed) mean the defaults.
        "sort=bogus",
        "sort=blocks",
        "sort=%20followers",
        "direction=down",
        "direction=%20asc",
        "sort=&direction=",
        "sort&direction",
        "cache=fresh",
    ] {
        assert_json(&srv.get(&ranked(q)), 200, want.clone());
    }
    assert_json(&srv.get("/api/v1/leaderboard/ranked"), 200, want);
}

#[test]
fn ranked_every_sort_both_directions() {
    let srv = TestService::start(&accounts());
    for (sort, desc, asc) in [
        (
            "mutuals",
            vec![k1(), k2(), k3(), k4()],
            vec![k4(), k2(), k3(), k1()],
        ),
        (
            "followers",
            vec![k1(), k2(), k3(), k8(), k4(), k5()],
            vec![k4(), k5(), k2(), k3(), k8(), k1()],
        ),
        (
            "following",
            vec![k1(), k2(), k3(), k4()],
            vec![k3(), k4(), k2(), k1()],
        ),
        ("blocked", vec![k3(), k4(), k5()], vec![k4(), k5(), k3()]),
        ("top8", vec![k1(), k8(), k2()], vec![k2(), k1(), k8()]),
    ] {
        let upper = sort.to_uppercase();
        for s in [sort, upper.as_str()] {
            for d in ["desc", "DESC", "x"] {
                assert_json(
                    &srv.get(&ranked(&format!("sort={s}&direction={d}"))),
                    200,
                    results(desc.clone()),
                );
            }
            for d in ["asc", "ASC", "Asc"] {
                assert_json(
                    &srv.get(&ranked(&format!("direction={d}&sort={s}"))),
                    200,
                    results(asc.clone()),
                );
            }
        }
    }
}

#[test]
fn ranked_paging() {
    let srv = TestService::start(&accounts());
    assert_json(
        &srv.get(&ranked("sort=followers&limit=2&offset=1")),
        200,
        results(vec![k2(), k3()]),
    );
    assert_json(
        &srv.get(&ranked("sort=followers&direction=asc&offset=4")),
        200,
        results(vec![k8(), k1()]),
    );
    assert_json(
        &srv.get(&ranked("sort=top8&offset=2&limit=1000")),
        200,
        results(vec![k2()]),
    );
    // Past the end, or no room: last_updated all the same.
    for q in [
        "offset=4",
        "sort=blocked&offset=3",
        "sort=blocked&direction=asc&offset=99",
        "offset=18446744073709551615",
        "limit=0",
        "limit=000&sort=followers",
    ] {
        assert_text(&srv.get(&ranked(q)), 200, EMPTY);
    }
}

#[test]
fn ranked_empty_snapshot_still_has_last_updated() {
    let srv = TestService::start(&followgraph::snapshot::Tables::default());
    for q in ["", "sort=top8", "sort=blocked&direction=asc"] {
        assert_text(&srv.get(&ranked(q)), 200, EMPTY);
    }
}

#[test]
fn ranked_default_limit_is_50() {
    // fixtures::bulk: N(1)..N(60) follow Z and nobody else: 60 accounts
    // with following 1, tied; Z alone has followers (60).
    let srv = TestService::start(&bulk());
    for q in ["sort=following", "sort=following&direction=asc"] {
        let resp = srv.get(&ranked(q));
        assert_eq!(resp.status, 200, "{}", resp.text());
        let want: Vec<String> = (1..=50u8).map(n).collect();
        assert_eq!(addresses(&resp.json(), "results"), want, "{q}");
        let resp = srv.get(&ranked(&format!("{q}&offset=50")));
        let want: Vec<String> = (51..=60u8).map(n).collect();
        assert_eq!(addresses(&resp.json(), "results"), want, "{q}");
    }
    let resp = srv.get(&ranked("sort=following&limit=1000"));
    assert_eq!(resp.json()["results"].as_array().unwrap().len(), 60);
    assert_eq!(resp.json()["results"][59]["following_rank"], "1");
    // Z: nobody follows back, so no mutuals at all.
    assert_text(&srv.get(&ranked("")), 200, EMPTY);
    let resp = srv.get(&ranked("sort=followers"));
    assert_eq!(addresses(&resp.json(), "results"), vec![Z.to_owned()]);
}

#[test]
fn ranked_bad_parameters() {
    let srv = TestService::start(&accounts());
    for v in [
        "-1",
        "1e3",
        "%201",
        "+1",
        "abc",
        "1.5",
        "18446744073709551616",
    ] {
        for name in ["limit", "offset"] {
            assert_400(
                &srv.get(&ranked(&format!("{name}={v}"))),
                &format!("{name} must be a non-negative integer"),
            );
        }
    }
    assert_400(
        &srv.get(&ranked("limit=1001")),
        "limit must be at most 1000",
    );
    assert_400(
        &srv.get(&ranked("limit=18446744073709551615")),
        "limit must be at most 1000",
    );
    let resp = srv.get(&ranked("limit=1000&sort=followers"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    // Table order: limit, offset, sort, direction.
    let mut q = vec!["direction=%FE", "sort=%FF", "offset=x", "limit=y"];
    for text in [
        "limit must be a non-negative integer",
        "offset must be a non-negative integer",
        "sort is not valid UTF-8",
        "direction is not valid UTF-8",
    ] {
        assert_400(&srv.get(&ranked(&q.join("&"))), text);
        q.pop();
    }
    // Errors are not cached.
    assert_400(
        &srv.get(&ranked("limit=x&cache=fresh")),
        "limit must be a non-negative integer",
    );
    // A repeated parameter: the first counts.
    assert_json(
        &srv.get(&ranked("sort=top8&sort=followers&limit=1&limit=x")),
        200,
        results(vec![k1()]),
    );
}

// ------------------------------------------------------------- 39, 40

#[test]
fn count_and_all() {
    let srv = TestService::start(&accounts());
    // The leaderboard: users of primary lists K1-K4 and targets in primary
    // lists K5, K8. Not K6, K7 (list 10), K9 (list 300), K10 (list 999).
    assert_text(
        &srv.get("/api/v1/leaderboard/count"),
        200,
        r#"{"leaderboardCount":"6"}"#,
    );
    assert_text(
        &srv.get("/api/v1/leaderboard/all"),
        200,
        concat!(
            r#"{"results":["#,
            r#"{"address":"0x1010101010101010101010101010101010101010","name":"kay.eth"},"#,
            r#"{"address":"0x2020202020202020202020202020202020202020","name":null},"#,
            r#"{"address":"0x3030303030303030303030303030303030303030","name":"three.eth"},"#,
            r#"{"address":"0x4040404040404040404040404040404040404040","name":null},"#,
            r#"{"address":"0x5050505050505050505050505050505050505050","name":"five.eth"},"#,
            r#"{"address":"0x8080808080808080808080808080808080808080","name":"Eight.eth"}"#,
            r#"]}"#
        ),
    );
    // v1 ran limit validators here; this contract takes no such parameter.
    for q in ["limit=x", "offset=-1&cache=fresh", "include=%FF"] {
        assert_text(
            &srv.get(&format!("/api/v1/leaderboard/count?{q}")),
            200,
            r#"{"leaderboardCount":"6"}"#,
        );
        assert_eq!(srv.get(&format!("/api/v1/leaderboard/all?{q}")).status, 200);
    }
}

#[test]
fn count_and_all_of_graph() {
    // fixtures::graph: leaderboard A, B, C, D, F (E, G, H are not on it).
    let srv = TestService::start(&graph());
    assert_text(
        &srv.get("/api/v1/leaderboard/count"),
        200,
        r#"{"leaderboardCount":"5"}"#,
    );
    assert_json(
        &srv.get("/api/v1/leaderboard/all"),
        200,
        json!({"results": [
            {"address": A, "name": "alice.eth"},
            {"address": B, "name": null},
            {"address": C, "name": "Çarol.eth"},
            {"address": D, "name": "Dave.eth"},
            {"address": F, "name": null},
        ]}),
    );
}

#[test]
fn count_and_all_of_an_empty_snapshot() {
    let srv = TestService::start(&followgraph::snapshot::Tables::default());
    assert_text(
        &srv.get("/api/v1/leaderboard/count"),
        200,
        r#"{"leaderboardCount":"0"}"#,
    );
    assert_text(
        &srv.get("/api/v1/leaderboard/all"),
        200,
        r#"{"results":[]}"#,
    );
}

/// An invariant of the API reference (docs/openapi.yaml): 39 = the leaderboard
/// size = entries of 40 = the matches of 4 for a term every address holds
/// ("0x").
#[test]
fn count_equals_entries_of_all() {
    for tables in [accounts(), graph(), bulk()] {
        let srv = TestService::start(&tables);
        let count = srv.get("/api/v1/leaderboard/count").json();
        let all = srv.get("/api/v1/leaderboard/all").json();
        let search = srv
            .get("/api/v1/leaderboard/search?term=0x&limit=1000")
            .json();
        let n = all["results"].as_array().unwrap().len();
        assert_eq!(count["leaderboardCount"], n.to_string());
        assert_eq!(search["results"].as_array().unwrap().len(), n);
        let mut sorted = addresses(&all, "results");
        sorted.sort();
        assert_eq!(addresses(&all, "results"), sorted, "address ascending");
    }
}

#[test]
fn head_and_cache_equal_get() {
    let srv = TestService::start(&accounts());
    for target in [
        ranked("sort=top8&direction=asc"),
        "/api/v1/leaderboard/count".to_owned(),
        "/api/v1/leaderboard/all".to_owned(),
    ] {
        let first = srv.get(&target);
        assert_eq!(first.status, 200, "{}", first.text());
        let sep = if target.contains('?') { '&' } else { '?' };
        for again in [
            format!("{target}{sep}cache=fresh"),
            target.clone(),
            format!("{target}{sep}cache=x"),
        ] {
            assert_text(&srv.get(&again), 200, &first.text());
        }
        let head = srv.head(&target);
        assert_eq!(head.status, 200);
        assert!(head.body.is_empty());
        assert_eq!(
            head.header("content-length"),
            first.header("content-length")
        );
    }
}

/// A body past the server's 16 KiB render-buffer copy limit (400 entries
/// of 40) is handed over whole; answers before and after it, on the same
/// connection's worker, are whole too.
#[test]
fn bodies_past_the_render_buffer_and_after_it() {
    let mut b = Builder::new();
    for i in 1..=400u64 {
        b.primary_list(i, &format!("0x{i:040x}"));
    }
    let srv = TestService::start(&b.build());
    let count = r#"{"leaderboardCount":"400"}"#;
    assert_text(&srv.get("/api/v1/leaderboard/count"), 200, count);
    let all = srv.get("/api/v1/leaderboard/all?cache=fresh");
    assert_eq!(all.status, 200);
    let text = all.text();
    assert!(text.len() > 16 * 1024, "{} bytes", text.len());
    let expected: Vec<String> = (1..=400u64)
        .map(|i| format!(r#"{{"address":"0x{i:040x}","name":null}}"#))
        .collect();
    assert_eq!(text, format!(r#"{{"results":[{}]}}"#, expected.join(",")));
    assert_text(
        &srv.get("/api/v1/leaderboard/count?cache=fresh"),
        200,
        count,
    );
    assert_text(&srv.get("/api/v1/leaderboard/all?cache=fresh"), 200, &text);
    assert_text(&srv.get("/api/v1/leaderboard/all"), 200, &text);
}
