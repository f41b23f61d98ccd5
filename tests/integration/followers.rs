//! GET /users/{addressOrENS}/followers and /lists/{token_id}/followers
//! (see fixtures::followers).

use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

// Followers of T6.
fn e_f1() -> Value {
    json!({"svc_list_nft_token_id": "31", "address": F1, "tags": ["Zed", "apple", "top8"],
           "is_following": true, "is_blocked": false, "is_muted": false,
           "updated_at": "2024-10-14T00:00:03.123Z"})
}
fn e_f2() -> Value {
    json!({"svc_list_nft_token_id": "32", "address": F2, "tags": ["block"],
           "is_following": false, "is_blocked": false, "is_muted": true,
           "updated_at": "2024-10-14T00:00:05.000Z"})
}
fn e_f3() -> Value {
    json!({"svc_list_nft_token_id": "33", "address": F3, "tags": ["mute", "top8"],
           "is_following": false, "is_blocked": true, "is_muted": false,
           "updated_at": "2024-10-14T00:00:01.000Z"})
}
fn e_f4() -> Value {
    json!({"svc_list_nft_token_id": "34", "address": F4, "tags": [],
           "is_following": false, "is_blocked": false, "is_muted": false,
           "updated_at": "2024-10-14T00:00:03.123Z"})
}
fn e_f5() -> Value {
    json!({"svc_list_nft_token_id": "35", "address": F5, "tags": ["friend"],
           "is_following": false, "is_blocked": true, "is_muted": true,
           "updated_at": "2024-10-14T00:00:04.000Z"})
}
fn e_t6() -> Value {
    json!({"svc_list_nft_token_id": "30", "address": T6, "tags": [],
           "is_following": true, "is_blocked": false, "is_muted": false,
           "updated_at": "2024-10-14T00:00:02.000Z"})
}

fn followers_of(items: Vec<Value>) -> Value {
    json!({ "followers": items })
}

fn users(query: &str) -> String {
    format!("/api/v1/users/{T6}/followers?{query}")
}

fn lists(query: &str) -> String {
    format!("/api/v1/lists/30/followers?{query}")
}

const EMPTY: &str = r#"{"followers":[]}"#;

#[test]
fn user_followers_exact_text_first_page() {
    let srv = TestService::start(&followers());
    let resp = srv.get(&users("limit=2"));
    assert_text(
        &resp,
        200,
        concat!(
            r#"{"followers":["#,
            r#"{"svc_list_nft_token_id":"32","address":"0x2222222222222222222222222222222222222222","tags":["block"],"#,
            r#""is_following":false,"is_blocked":false,"is_muted":true,"updated_at":"2024-10-14T00:00:05.000Z"},"#,
            r#"{"svc_list_nft_token_id":"35","address":"0x5555555555555555555555555555555555555555","tags":["friend"],"#,
            r#""is_following":false,"is_blocked":true,"is_muted":true,"updated_at":"2024-10-14T00:00:04.000Z"}"#,
            r#"]}"#
        ),
    );
}

#[test]
fn user_followers_include_blocking_and_muting_followers() {
    let srv = TestService::start(&followers());
    // Default sort latest: updated_at desc, F1/F4 tie broken by address.
    // F7 (tag row only), F8 (non-primary list), F1's list 36 are not seen.
    assert_json(
        &srv.get(&format!("/api/v1/users/{T6}/followers")),
        200,
        followers_of(vec![e_f2(), e_f5(), e_f1(), e_f4(), e_t6(), e_f3()]),
    );
}

#[test]
fn list_followers_exclude_blocking_and_muting_followers() {
    let srv = TestService::start(&followers());
    // F2 blocks T6, F3 mutes T6: excluded. F5 is blocked/muted BY T6: kept.
    assert_json(
        &srv.get("/api/v1/lists/30/followers"),
        200,
        followers_of(vec![e_f5(), e_f1(), e_f4(), e_t6()]),
    );
    assert_text(
        &srv.get("/api/v1/lists/30/followers?limit=1"),
        200,
        concat!(
            r#"{"followers":[{"svc_list_nft_token_id":"35","address":"0x5555555555555555555555555555555555555555","#,
            r#""tags":["friend"],"is_following":false,"is_blocked":true,"is_muted":true,"#,
            r#""updated_at":"2024-10-14T00:00:04.000Z"}]}"#
        ),
    );
}

#[test]
fn sort_orders() {
    let srv = TestService::start(&followers());
    let latest = followers_of(vec![e_f2(), e_f5(), e_f1(), e_f4(), e_t6(), e_f3()]);
    for s in ["latest", "LATEST", "Latest", "bogus", "", "%20latest"] {
        assert_json(&srv.get(&users(&format!("sort={s}"))), 200, latest.clone());
    }
    let earliest = followers_of(vec![e_f3(), e_t6(), e_f1(), e_f4(), e_f5(), e_f2()]);
    for s in ["earliest", "EARLIEST", "Earliest"] {
        assert_json(
            &srv.get(&users(&format!("sort={s}"))),
            200,
            earliest.clone(),
        );
    }
    // Followers counts: T6 6, F5 4, F2 2, F1 1, F3 1, F4 1.
    let by_followers = followers_of(vec![e_t6(), e_f5(), e_f2(), e_f1(), e_f3(), e_f4()]);
    for s in ["followers", "FOLLOWERS", "Followers"] {
        assert_json(
            &srv.get(&users(&format!("sort={s}"))),
            200,
            by_followers.clone(),
        );
    }
}

#[test]
fn list_sort_orders() {
    let srv = TestService::start(&followers());
    assert_json(
        &srv.get(&lists("sort=earliest")),
        200,
        followers_of(vec![e_t6(), e_f1(), e_f4(), e_f5()]),
    );
    assert_json(
        &srv.get(&lists("sort=followers")),
        200,
        followers_of(vec![e_t6(), e_f5(), e_f1(), e_f4()]),
    );
    assert_json(
        &srv.get(&lists("sort=nope")),
        200,
        followers_of(vec![e_f5(), e_f1(), e_f4(), e_t6()]),
    );
}

#[test]
fn tags_filter() {
    let srv = TestService::start(&followers());
    assert_json(
        &srv.get(&users("tags=top8")),
        200,
        followers_of(vec![e_f1(), e_f3()]),
    );
    assert_json(
        &srv.get(&lists("tags=top8")),
        200,
        followers_of(vec![e_f1()]),
    );
    // Segments trimmed, empty ones dropped.
    assert_json(
        &srv.get(&users("tags=%20apple%20,%20friend,,")),
        200,
        followers_of(vec![e_f5(), e_f1()]),
    );
    assert_json(
        &srv.get(&users("tags=mute,+top8,,")),
        200,
        followers_of(vec![e_f1(), e_f3()]),
    );
    assert_json(
        &srv.get(&users("tags=Zed")),
        200,
        followers_of(vec![e_f1()]),
    );
    assert_json(
        &srv.get(&users("tags=block")),
        200,
        followers_of(vec![e_f2()]),
    );
    assert_text(&srv.get(&lists("tags=block")), 200, EMPTY);
    assert_json(
        &srv.get(&users("tags=apple&sort=earliest&tags=friend")),
        200,
        followers_of(vec![e_f1()]),
    );
    // Exact and case-sensitive; invisible tags do not match.
    for t in ["TOP8", "top", "zed", "secret", "top8x", "apple%20friend"] {
        assert_text(&srv.get(&users(&format!("tags={t}"))), 200, EMPTY);
    }
    // No segment left: no filter.
    let all = followers_of(vec![e_f2(), e_f5(), e_f1(), e_f4(), e_t6(), e_f3()]);
    for t in ["", ",", "%20,%20,", "+"] {
        assert_json(&srv.get(&users(&format!("tags={t}"))), 200, all.clone());
    }
}

#[test]
fn limit_and_offset() {
    let srv = TestService::start(&followers());
    assert_json(
        &srv.get(&users("limit=2&offset=1")),
        200,
        followers_of(vec![e_f5(), e_f1()]),
    );
    assert_json(
        &srv.get(&users("offset=4")),
        200,
        followers_of(vec![e_t6(), e_f3()]),
    );
    assert_json(
        &srv.get(&lists("offset=3&limit=1000")),
        200,
        followers_of(vec![e_t6()]),
    );
    assert_text(&srv.get(&users("limit=0")), 200, EMPTY);
    assert_text(&srv.get(&users("offset=6")), 200, EMPTY);
    assert_text(&srv.get(&users("offset=18446744073709551615")), 200, EMPTY);
    assert_json(
        &srv.get(&users("limit&offset&sort&tags")),
        200,
        followers_of(vec![e_f2(), e_f5(), e_f1(), e_f4(), e_t6(), e_f3()]),
    );
    assert_json(
        &srv.get(&users("limit=&offset=&sort=&tags=")),
        200,
        followers_of(vec![e_f2(), e_f5(), e_f1(), e_f4(), e_t6(), e_f3()]),
    );
    assert_json(
        &srv.get(&users("sort=followers&limit=2&offset=2")),
        200,
        followers_of(vec![e_f2(), e_f1()]),
    );
}

#[test]
fn default_limit_is_10() {
    let srv = TestService::start(&bulk());
    let resp = srv.get(&format!("/api/v1/users/{Z}/followers"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let want: Vec<String> = (51..=60u8).rev().map(n).collect();
    assert_eq!(addresses(&resp.json(), "followers"), want);
    let first = &resp.json()["followers"][0];
    assert_eq!(first["svc_list_nft_token_id"], "1060");
    assert_eq!(first["updated_at"], "2024-10-14T00:01:00.000Z");
    let resp = srv.get(&format!("/api/v1/users/{Z}/followers?offset=10"));
    let want: Vec<String> = (41..=50u8).rev().map(n).collect();
    assert_eq!(addresses(&resp.json(), "followers"), want);
    // Nobody follows N(i): ties broken by address ascending.
    let resp = srv.get(&format!("/api/v1/users/{Z}/followers?sort=followers"));
    let want: Vec<String> = (1..=10u8).map(n).collect();
    assert_eq!(addresses(&resp.json(), "followers"), want);
    let resp = srv.get(&format!(
        "/api/v1/users/{Z}/followers?sort=earliest&limit=3"
    ));
    let want: Vec<String> = (1..=3u8).map(n).collect();
    assert_eq!(addresses(&resp.json(), "followers"), want);
}

#[test]
fn is_blocked_is_about_the_targets_record() {
    let srv = TestService::start(&followers());
    // Followers of F2: T6 (record tagged mute) and F3, both at S + 100 ms:
    // address order. F2's own record of T6 carries block.
    let t6 = json!({"svc_list_nft_token_id": "30", "address": T6, "tags": ["mute"],
                    "is_following": false, "is_blocked": true, "is_muted": false,
                    "updated_at": "2024-10-14T00:00:00.100Z"});
    let f3 = json!({"svc_list_nft_token_id": "33", "address": F3, "tags": [],
                    "is_following": false, "is_blocked": false, "is_muted": false,
                    "updated_at": "2024-10-14T00:00:00.100Z"});
    assert_json(
        &srv.get(&format!("/api/v1/users/{F2}/followers")),
        200,
        followers_of(vec![f3.clone(), t6]),
    );
    // Variant 7 drops T6 (its record of F2 carries mute).
    assert_json(
        &srv.get("/api/v1/lists/32/followers"),
        200,
        followers_of(vec![f3]),
    );
}

#[test]
fn followers_of_f5() {
    let srv = TestService::start(&followers());
    let at = "2024-10-14T00:00:00.100Z";
    let f1 = json!({"svc_list_nft_token_id": "31", "address": F1, "tags": [],
                    "is_following": false, "is_blocked": false, "is_muted": false, "updated_at": at});
    let f2 = json!({"svc_list_nft_token_id": "32", "address": F2, "tags": [],
                    "is_following": false, "is_blocked": false, "is_muted": false, "updated_at": at});
    let f4 = json!({"svc_list_nft_token_id": "34", "address": F4, "tags": [],
                    "is_following": false, "is_blocked": false, "is_muted": false, "updated_at": at});
    // T6 tagged F5 "mute" then "block": sorted by bytes. F5 follows T6
    // (tag friend): is_following.
    let t6 = json!({"svc_list_nft_token_id": "30", "address": T6, "tags": ["block", "mute"],
                    "is_following": true, "is_blocked": false, "is_muted": false, "updated_at": at});
    assert_json(
        &srv.get(&format!("/api/v1/users/{F5}/followers")),
        200,
        followers_of(vec![f1.clone(), f2.clone(), f4.clone(), t6.clone()]),
    );
    assert_json(
        &srv.get(&format!("/api/v1/users/{F5}/followers?sort=followers")),
        200,
        followers_of(vec![t6, f2.clone(), f1.clone(), f4.clone()]),
    );
    assert_json(
        &srv.get("/api/v1/lists/35/followers"),
        200,
        followers_of(vec![f1, f2, f4]),
    );
}

#[test]
fn list_followers_of_f1() {
    let srv = TestService::start(&followers());
    // Only T6 follows F1 (W's list 39 is not primary). F1 follows T6 with
    // tags top8/apple/Zed (no block/mute): is_following.
    assert_json(
        &srv.get("/api/v1/lists/31/followers"),
        200,
        followers_of(vec![
            json!({"svc_list_nft_token_id": "30", "address": T6, "tags": [],
                                 "is_following": true, "is_blocked": false, "is_muted": false,
                                 "updated_at": "2024-10-14T00:00:00.100Z"}),
        ]),
    );
}

#[test]
fn target_without_primary_list_is_all_false() {
    let srv = TestService::start(&followers());
    // W has no primary list (its row names F1's list 31); its own list 39
    // holds a record of F1 but does not count.
    let want = followers_of(vec![
        json!({"svc_list_nft_token_id": "31", "address": F1, "tags": [],
        "is_following": false, "is_blocked": false, "is_muted": false,
        "updated_at": "2024-10-14T00:00:07.000Z"}),
    ]);
    assert_json(
        &srv.get(&format!("/api/v1/users/{W}/followers")),
        200,
        want.clone(),
    );
    assert_json(
        &srv.get(&format!("/api/v1/users/{W_UPPER}/followers")),
        200,
        want,
    );
}

#[test]
fn by_name_and_mixed_case() {
    let srv = TestService::start(&followers());
    let want = followers_of(vec![e_f2(), e_f5(), e_f1(), e_f4(), e_t6(), e_f3()]);
    for who in [
        "Target.eth",
        "target.eth",
        "TARGET.ETH",
        "0x6666666666666666666666666666666666666666",
    ] {
        assert_json(
            &srv.get(&format!("/api/v1/users/{who}/followers")),
            200,
            want.clone(),
        );
    }
}

#[test]
fn no_followers_and_unknown_accounts() {
    let srv = TestService::start(&followers());
    for who in [
        "0x0123456789abcdef0123456789abcdef01234567",
        F7, // nobody follows F7
        F8,
    ] {
        assert_text(
            &srv.get(&format!("/api/v1/users/{who}/followers")),
            200,
            EMPTY,
        );
    }
    assert_text(&srv.get("/api/v1/lists/37/followers"), 200, EMPTY);
    for who in [
        "0x123",
        "nobody.eth",
        "0X6666666666666666666666666666666666666666",
    ] {
        assert_bad_ens(&srv.get(&format!("/api/v1/users/{who}/followers")));
    }
}

#[test]
fn list_followers_of_lists_that_are_not_primary() {
    let srv = TestService::start(&followers());
    // 36 is F1's second list: F1's followers, as list 31 (T6 only).
    let f1s = followers_of(vec![
        json!({"svc_list_nft_token_id": "30", "address": T6, "tags": [],
               "is_following": true, "is_blocked": false, "is_muted": false,
               "updated_at": "2024-10-14T00:00:00.100Z"}),
    ]);
    assert_json(&srv.get("/api/v1/lists/36/followers"), 200, f1s.clone());
    assert_json(&srv.get("/api/v1/lists/31/followers"), 200, f1s);
    // 39 is W's list and W has no primary list: F1 follows W (no tags);
    // is_following is about W's primary list, so false although W's own
    // list 39 holds a record of F1.
    assert_json(
        &srv.get("/api/v1/lists/39/followers?sort=earliest"),
        200,
        followers_of(vec![
            json!({"svc_list_nft_token_id": "31", "address": F1, "tags": [],
                   "is_following": false, "is_blocked": false, "is_muted": false,
                   "updated_at": "2024-10-14T00:00:07.000Z"}),
        ]),
    );
    // 38 is F8's list (F8's primary_lists row names missing 40): nobody
    // follows F8.
    assert_text(&srv.get("/api/v1/lists/38/followers"), 200, EMPTY);
}

#[test]
fn list_followers_without_user_or_invalid() {
    let srv = TestService::start(&followers());
    // 41: user is the zero address; 40, 99, u64::MAX: not in lists.
    for id in ["41", "40", "99", "18446744073709551615"] {
        assert_no_user_found(&srv.get(&format!("/api/v1/lists/{id}/followers")));
    }
    for id in [
        "0",
        "-1",
        "abc",
        "1.5",
        "+30",
        "%2B30",
        "30.0",
        "18446744073709551616",
    ] {
        assert_invalid_list_id(&srv.get(&format!("/api/v1/lists/{id}/followers")));
    }
    assert_json(
        &srv.get("/api/v1/lists/0030/followers"),
        200,
        followers_of(vec![e_f5(), e_f1(), e_f4(), e_t6()]),
    );
}

#[test]
fn bad_parameters() {
    let srv = TestService::start(&followers());
    for v in [
        "-1",
        "1e3",
        "%201",
        "+1",
        "abc",
        "1.5",
        "18446744073709551616",
    ] {
        for (name, base) in [
            ("limit", users("")),
            ("offset", users("")),
            ("limit", lists("")),
            ("offset", lists("")),
        ] {
            assert_400(
                &srv.get(&format!("{base}{name}={v}")),
                &format!("{name} must be a non-negative integer"),
            );
        }
    }
    assert_400(&srv.get(&users("limit=1001")), "limit must be at most 1000");
    assert_400(&srv.get(&lists("limit=1001")), "limit must be at most 1000");
    assert_400(&srv.get(&users("tags=%FF")), "tags is not valid UTF-8");
    assert_400(&srv.get(&users("sort=%FF")), "sort is not valid UTF-8");
}

#[test]
fn parameter_precedence() {
    let srv = TestService::start(&followers());
    // Table order: limit, offset, tags, sort; then unknown account/list.
    let mut q = vec!["sort=%FF", "tags=%FE", "offset=x", "limit=y"];
    for text in [
        "limit must be a non-negative integer",
        "offset must be a non-negative integer",
        "tags is not valid UTF-8",
        "sort is not valid UTF-8",
    ] {
        let qs = q.join("&");
        assert_400(
            &srv.get(&format!("/api/v1/users/nobody.eth/followers?{qs}")),
            text,
        );
        assert_400(&srv.get(&format!("/api/v1/lists/999/followers?{qs}")), text);
        assert_invalid_list_id(&srv.get(&format!("/api/v1/lists/abc/followers?{qs}")));
        q.pop();
    }
    assert_bad_ens(&srv.get("/api/v1/users/nobody.eth/followers?sort=x&tags=y"));
    assert_no_user_found(&srv.get("/api/v1/lists/999/followers?sort=x&tags=y"));
}

#[test]
fn repeated_and_unknown_parameters() {
    let srv = TestService::start(&followers());
    assert_json(
        &srv.get(&users("limit=1&limit=x")),
        200,
        followers_of(vec![e_f2()]),
    );
    assert_json(
        &srv.get(&users(
            "sort=earliest&sort=latest&Sort=followers&Limit=x&term=q",
        )),
        200,
        followers_of(vec![e_f3(), e_t6(), e_f1(), e_f4(), e_f5(), e_f2()]),
    );
}

/// Z followed by N(1)..N(40) in runs of equal `updated_at` that straddle
/// the engine's lookup batches: run k (k = 0..=5) holds the i with
/// (40 - i) / 7 == k, at S + k s. Records of N(i) with 5 | i carry `mute`.
/// Z's primary list 999 holds nothing.
fn runs() -> followgraph::snapshot::Tables {
    let mut b = Builder::new();
    b.primary_list(999, Z);
    for i in 1..=40u8 {
        let who = n(i);
        let list = 2000 + u64::from(i);
        let at = S + i64::from((40 - i) / 7) * 1000;
        b.primary_list(list, &who).record(list, Z, at);
        if i % 5 == 0 {
            b.tag(list, Z, "mute", at);
        }
    }
    b.build()
}

/// The i of `runs()` in `earliest` order: runs by time, then address.
const EARLIEST: [u8; 40] = [
    34, 35, 36, 37, 38, 39, 40, 27, 28, 29, 30, 31, 32, 33, 20, 21, 22, 23, 24, 25, 26, 13, 14, 15,
    16, 17, 18, 19, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5,
];

fn ns(ids: &[u8]) -> Vec<String> {
    ids.iter().map(|&i| n(i)).collect()
}

/// The follower addresses of a 200 answer to `path`.
fn page(srv: &TestService, path: &str) -> Vec<String> {
    let resp = srv.get(path);
    assert_eq!(resp.status, 200, "{}", resp.text());
    addresses(&resp.json(), "followers")
}

#[test]
fn earliest_orders_runs_of_equal_times_across_pages() {
    let srv = TestService::start(&runs());
    let users = |q: &str| page(&srv, &format!("/api/v1/users/{Z}/followers?{q}"));
    assert_eq!(users("sort=earliest&limit=40"), ns(&EARLIEST));
    assert_eq!(
        users("sort=earliest&offset=5&limit=10"),
        ns(&[39, 40, 27, 28, 29, 30, 31, 32, 33, 20])
    );
    assert_eq!(users("sort=earliest&offset=38"), ns(&[4, 5]));
    // Unfiltered, `earliest` skips whole runs and the first members of the
    // run it ends in without reading them: every offset, ending at a run's
    // edge or inside it, gives the rest of the same order.
    for offset in 0..=41 {
        let rest = &EARLIEST[offset.min(40)..];
        assert_eq!(
            users(&format!("sort=earliest&offset={offset}&limit=40")),
            ns(rest),
            "offset {offset}"
        );
        assert_eq!(
            users(&format!("sort=earliest&offset={offset}&limit=2")),
            ns(&rest[..rest.len().min(2)]),
            "offset {offset}, limit 2"
        );
    }
    // latest: run 5 first (i = 1..=5), ..., run 0 last; unfiltered pages
    // are skipped without lookups.
    assert_eq!(users("offset=17&limit=5"), ns(&[18, 19, 20, 21, 22]));
    assert_eq!(users("sort=followers&offset=38&limit=5"), ns(&[39, 40]));
    assert_eq!(users("offset=40"), Vec::<String>::new());
}

#[test]
fn list_followers_exclusion_applies_before_the_page() {
    let srv = TestService::start(&runs());
    let lists = |q: &str| page(&srv, &format!("/api/v1/lists/999/followers?{q}"));
    let unmuted: Vec<u8> = EARLIEST.iter().copied().filter(|i| i % 5 != 0).collect();
    assert_eq!(lists("sort=earliest&limit=40"), ns(&unmuted));
    assert_eq!(
        lists("sort=earliest&offset=3&limit=5"),
        ns(&[38, 39, 27, 28, 29])
    );
    assert_eq!(lists("offset=17&limit=4"), ns(&[22, 23, 24, 26]));
    // The first muted follower of each variant, seen on the users side.
    let resp = srv.get(&format!("/api/v1/users/{Z}/followers?tags=mute&limit=2"));
    assert_json(
        &resp,
        200,
        json!({"followers": [
            {"svc_list_nft_token_id": "2005", "address": n(5), "tags": ["mute"],
             "is_following": false, "is_blocked": false, "is_muted": false,
             "updated_at": "2024-10-14T00:00:05.000Z"},
            {"svc_list_nft_token_id": "2010", "address": n(10), "tags": ["mute"],
             "is_following": false, "is_blocked": false, "is_muted": false,
             "updated_at": "2024-10-14T00:00:04.000Z"}
        ]}),
    );
}
