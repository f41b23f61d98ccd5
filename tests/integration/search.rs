//! GET /users/{a}/searchFollowers (23), /lists/{id}/searchFollowers (24),
//! /users/{a}/searchFollowing (25), /lists/{id}/searchFollowing (26),
//! /users/{a}/commonFollowers (29), on the fixture below.
//!
//! Accounts (primary list): T 0xf0..0f target.eth (1), Y 0xee.. Leader.eth
//! (20), X1 0x10..01 Bobby.eth with avatar and header (11), X2 0x20..02
//! alice.eth (12), X3 0xabc0..03 no ens (13), X4 0x40..04 bobcat.eth (14),
//! X5 0x50..05 mutebob.eth (15). List 9 is T's, not primary; list 8's user
//! is the zero address.
//!
//! Records (at S + n ms):
//!   1 (T): X1 [top8] +1, X2 [block] +2, X3 +3, X4 +4
//!   11 (X1): T +10       12 (X2): T +20, Y +21     13 (X3): T +30, Y +31
//!   14 (X4): T [block] +40, Y [mute] +41           15 (X5): T [mute, top8] +50
//!   20 (Y): X3 +60
//!   9 (T, not primary): X3 +70, X5 +71, X1 [mute] +72
//!
//! Followers of T: X1..X5. Of Y: X2, X3, X4. Address order: X1, X2, X4,
//! X5, X3, Y, T.
//! Mutuals: T 4 (X1..X4), X3 2 (T, Y), X1 1, X2 1, X4 1, Y 1, X5 0;
//! mutuals_rank: T 1, X3 2, X1/X2/X4/Y 3, X5 0.

use followgraph::snapshot::{EnsRow, Tables};
use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

const T: &str = "0xf00000000000000000000000000000000000000f";
const Y: &str = "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
const X1: &str = "0x1000000000000000000000000000000000000001";
const X2: &str = "0x2000000000000000000000000000000000000002";
const X3: &str = "0xabc0000000000000000000000000000000000003";
const X4: &str = "0x4000000000000000000000000000000000000004";
const X5: &str = "0x5000000000000000000000000000000000000005";

fn tables() -> Tables {
    let mut b = Builder::new();
    b.primary_list(1, T)
        .primary_list(20, Y)
        .primary_list(11, X1)
        .primary_list(12, X2)
        .primary_list(13, X3)
        .primary_list(14, X4)
        .primary_list(15, X5)
        .list(9, T)
        .list_roles(8, ZERO, T, T);
    b.ens_name(T, "target.eth")
        .ens_name(Y, "Leader.eth")
        .ens(EnsRow {
            address: addr(X1),
            name: "Bobby.eth".into(),
            avatar: s("https://a/bob.png"),
            header: s("https://a/bob-h.png"),
            ..Default::default()
        })
        .ens_name(X2, "alice.eth")
        .ens_name(X4, "bobcat.eth")
        .ens_name(X5, "mutebob.eth");
    b.record(1, X1, S + 1)
        .tag(1, X1, "top8", S)
        .record(1, X2, S + 2)
        .tag(1, X2, "block", S)
        .record(1, X3, S + 3)
        .record(1, X4, S + 4)
        .record(11, T, S + 10)
        .record(12, T, S + 20)
        .record(12, Y, S + 21)
        .record(13, T, S + 30)
        .record(13, Y, S + 31)
        .record(14, T, S + 40)
        .tag(14, T, "block", S)
        .record(14, Y, S + 41)
        .tag(14, Y, "mute", S)
        .record(15, T, S + 50)
        .tag(15, T, "mute", S)
        .tag(15, T, "top8", S)
        .record(20, X3, S + 60)
        .record(9, X3, S + 70)
        .record(9, X5, S + 71)
        .record(9, X1, S + 72)
        .tag(9, X1, "mute", S);
    b.build()
}

/// A searchFollowers entry of a follower of T.
fn follower(who: &str, list: &str, ens: Value, tags: &[&str], flags: [bool; 3]) -> Value {
    json!({"svc_list_nft_token_id": list, "address": who, "ens": ens, "tags": tags,
           "is_following": flags[0], "is_blocked": flags[1], "is_muted": flags[2]})
}

fn ens(name: Option<&str>, avatar: Option<&str>) -> Value {
    json!({"name": name, "avatar": avatar})
}

fn f1() -> Value {
    let e = ens(Some("Bobby.eth"), Some("https://a/bob.png"));
    follower(X1, "11", e, &[], [true, false, false])
}
fn f2() -> Value {
    let e = ens(Some("alice.eth"), None);
    follower(X2, "12", e, &[], [false, true, false])
}
fn f3() -> Value {
    follower(X3, "13", ens(None, None), &[], [true, false, false])
}
fn f4() -> Value {
    let e = ens(Some("bobcat.eth"), None);
    follower(X4, "14", e, &["block"], [true, false, false])
}
fn f5() -> Value {
    let e = ens(Some("mutebob.eth"), None);
    follower(X5, "15", e, &["mute", "top8"], [false, false, false])
}

fn followers_of(items: Vec<Value>) -> Value {
    json!({ "followers": items })
}

#[test]
fn search_followers_exact_text() {
    let srv = TestService::start(&tables());
    assert_text(
        &srv.get("/api/v1/users/target.eth/searchFollowers?term=BOBBY"),
        200,
        concat!(
            r#"{"followers":[{"svc_list_nft_token_id":"11","#,
            r#""address":"0x1000000000000000000000000000000000000001","#,
            r#""ens":{"name":"Bobby.eth","avatar":"https://a/bob.png"},"tags":[],"#,
            r#""is_following":true,"is_blocked":false,"is_muted":false}]}"#
        ),
    );
}

#[test]
fn search_followers_by_name_or_address_address_order() {
    let srv = TestService::start(&tables());
    let users = |q: &str| srv.get(&format!("/api/v1/users/{T}/searchFollowers?{q}"));
    // A name in any case; X4 blocked T and X5 muted T: both kept by 23.
    assert_json(
        &users("term=bob"),
        200,
        followers_of(vec![f1(), f4(), f5()]),
    );
    assert_json(
        &users("term=+BoB+"),
        200,
        followers_of(vec![f1(), f4(), f5()]),
    );
    // Only a name (X2), only an address substring (X3).
    assert_json(&users("term=ICE"), 200, followers_of(vec![f2()]));
    assert_json(&users("term=ABC0"), 200, followers_of(vec![f3()]));
    assert_json(&users("term=0xabc"), 200, followers_of(vec![f3()]));
    // Every address holds "0x": paged in address order.
    assert_json(
        &users("term=0x&limit=2&offset=1"),
        200,
        followers_of(vec![f2(), f4()]),
    );
    assert_json(
        &users("term=0x"),
        200,
        followers_of(vec![f1(), f2(), f4(), f5(), f3()]),
    );
    // Literal: no wildcard, no regex.
    for q in [
        "term=b.b",
        "term=bob*",
        "term=.*",
        "term=zzz",
        "term=0x&offset=5",
        "term=0x&offset=18446744073709551615",
    ] {
        assert_text(&users(q), 200, r#"{"followers":[]}"#);
    }
    // Missing or empty term.
    for q in ["", "term=", "term=+++", "limit=3"] {
        assert_text(&users(q), 200, r#"{"followers":[]}"#);
    }
}

#[test]
fn list_search_followers_leaves_out_blocking_and_muting_followers() {
    let srv = TestService::start(&tables());
    // List 1 (primary) and list 9 (not primary) both stand for T.
    for list in [1, 9] {
        let get = |q: &str| srv.get(&format!("/api/v1/lists/{list}/searchFollowers?{q}"));
        assert_json(&get("term=bob"), 200, followers_of(vec![f1()]));
        assert_json(&get("term=0x"), 200, followers_of(vec![f1(), f2(), f3()]));
        assert_json(
            &get("term=0x&offset=1&limit=1"),
            200,
            followers_of(vec![f2()]),
        );
        // Past the last match, however far.
        for q in ["term=0x&offset=3", "term=0x&offset=18446744073709551615"] {
            assert_text(&get(q), 200, r#"{"followers":[]}"#);
        }
    }
    assert_no_user_found(&srv.get("/api/v1/lists/8/searchFollowers?term=bob"));
    assert_no_user_found(&srv.get("/api/v1/lists/77/searchFollowers?term=bob"));
    assert_invalid_list_id(&srv.get("/api/v1/lists/-1/searchFollowers?term=bob"));
}

/// A searchFollowing entry with the short ens.
fn following(who: &str, tags: &[&str], ens: Value) -> Value {
    json!({"version": 1, "record_type": "address", "data": who, "address": who,
           "tags": tags, "ens": ens})
}

#[test]
fn search_following_leaves_out_block_and_mute() {
    let srv = TestService::start(&tables());
    let bobby = ens(Some("Bobby.eth"), Some("https://a/bob.png"));
    assert_text(
        &srv.get(&format!("/api/v1/users/{T}/searchFollowing?term=bobb")),
        200,
        concat!(
            r#"{"following":[{"version":1,"record_type":"address","#,
            r#""data":"0x1000000000000000000000000000000000000001","#,
            r#""address":"0x1000000000000000000000000000000000000001","tags":["top8"],"#,
            r#""ens":{"name":"Bobby.eth","avatar":"https://a/bob.png"}}]}"#
        ),
    );
    let x1 = following(X1, &["top8"], bobby.clone());
    let x3 = following(X3, &[], ens(None, None));
    let x4 = following(X4, &[], ens(Some("bobcat.eth"), None));
    // 25 and 17 of list 1 (T's primary list): X2 is blocked by T.
    for path in [format!("/api/v1/users/{T}"), "/api/v1/lists/1".to_owned()] {
        let get = |q: &str| srv.get(&format!("{path}/searchFollowing?{q}"));
        assert_json(&get("term=BOB"), 200, json!({"following": [x1, x4]}));
        assert_json(&get("term=0x"), 200, json!({"following": [x1, x4, x3]}));
        assert_json(
            &get("term=0x&offset=1&limit=1"),
            200,
            json!({"following": [x4]}),
        );
        assert_json(&get("term=abc"), 200, json!({"following": [x3]}));
        for q in ["term=ali", "", "term=%20", "term=0x&limit=0"] {
            assert_text(&get(q), 200, r#"{"following":[]}"#);
        }
    }
    // List 9 (T's, not primary): its own records; X1 is muted there.
    let x5 = following(X5, &[], ens(Some("mutebob.eth"), None));
    let list9 = |q: &str| srv.get(&format!("/api/v1/lists/9/searchFollowing?{q}"));
    assert_json(&list9("term=0x"), 200, json!({"following": [x5, x3]}));
    assert_json(&list9("term=bob"), 200, json!({"following": [x5]}));
    // An account whose one record does not match, one without data.
    assert_text(
        &srv.get(&format!("/api/v1/users/{Y}/searchFollowing?term=target")),
        200,
        r#"{"following":[]}"#,
    );
    assert_text(
        &srv.get(
            "/api/v1/users/0x00000000000000000000000000000000000000ff/searchFollowing?term=0x",
        ),
        200,
        r#"{"following":[]}"#,
    );
    assert_no_user_found(&srv.get("/api/v1/lists/8/searchFollowing?term=0x"));
    assert_bad_ens(&srv.get("/api/v1/users/nobody.eth/searchFollowing?term=0x"));
}

fn member(
    who: &str,
    name: Option<&str>,
    avatar: Option<&str>,
    header: Option<&str>,
    rank: &str,
) -> Value {
    json!({"address": who, "name": name, "avatar": avatar, "header": header, "mutuals_rank": rank})
}

fn x1_member() -> Value {
    member(
        X1,
        Some("Bobby.eth"),
        Some("https://a/bob.png"),
        Some("https://a/bob-h.png"),
        "3",
    )
}
fn x3_member() -> Value {
    member(X3, None, None, None, "2")
}

#[test]
fn common_followers_exact_text_and_leader() {
    let srv = TestService::start(&tables());
    // Y's followers X2 (blocked by T) and X4 (mutes Y) are left out.
    assert_text(
        &srv.get(&format!("/api/v1/users/{T}/commonFollowers?leader={Y}")),
        200,
        concat!(
            r#"{"results":[{"address":"0xabc0000000000000000000000000000000000003","#,
            r#""name":null,"avatar":null,"header":null,"mutuals_rank":"2"}],"length":1}"#
        ),
    );
    let one = json!({"results": [x3_member()], "length": 1});
    for leader in ["leader.ETH", "0xEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE"] {
        let resp = srv.get(&format!(
            "/api/v1/users/target.eth/commonFollowers?leader={leader}"
        ));
        assert_json(&resp, 200, one.clone());
    }
    // Without a leader, or an empty one, L is A itself: T's followers X1
    // and X3 (X4 blocks T, X5 mutes T); X3 has more mutuals.
    let both = json!({"results": [x3_member(), x1_member()], "length": 2});
    for q in ["", "leader=", "leader=&term=", "term=%20"] {
        let resp = srv.get(&format!("/api/v1/users/{T}/commonFollowers?{q}"));
        assert_json(&resp, 200, both.clone());
    }
    let resp = srv.get(&format!("/api/v1/users/{T}/commonFollowers?leader={T}"));
    assert_json(&resp, 200, both);
}

#[test]
fn common_followers_term_paging_and_length() {
    let srv = TestService::start(&tables());
    let get = |q: &str| srv.get(&format!("/api/v1/users/{T}/commonFollowers?{q}"));
    // `length` counts the members after term, before paging.
    assert_json(
        &get("term=BOB"),
        200,
        json!({"results": [x1_member()], "length": 1}),
    );
    assert_json(
        &get("term=abc"),
        200,
        json!({"results": [x3_member()], "length": 1}),
    );
    assert_json(
        &get("limit=1"),
        200,
        json!({"results": [x3_member()], "length": 2}),
    );
    assert_json(
        &get("offset=1"),
        200,
        json!({"results": [x1_member()], "length": 2}),
    );
    assert_json(
        &get("offset=1&limit="),
        200,
        json!({"results": [x1_member()], "length": 2}),
    );
    assert_json(&get("offset=2"), 200, json!({"results": [], "length": 2}));
    assert_json(&get("limit=0"), 200, json!({"results": [], "length": 2}));
    assert_json(&get("term=zzz"), 200, json!({"results": [], "length": 0}));
    // A following nobody it shows (X5's one record mutes T), an account
    // without data, a leader without followers.
    let none = r#"{"results":[],"length":0}"#;
    assert_text(
        &srv.get(&format!("/api/v1/users/{X5}/commonFollowers?leader={T}")),
        200,
        none,
    );
    assert_text(
        &srv.get("/api/v1/users/0x00000000000000000000000000000000000000ff/commonFollowers"),
        200,
        none,
    );
    assert_text(&get(&format!("leader={X1}")), 200, none);
}

#[test]
fn common_followers_errors_in_order() {
    let srv = TestService::start(&tables());
    let invalid_leader = r#"{"response":"Invalid query address"}"#;
    for leader in ["nobody.eth", "0x123", "%20"] {
        let resp = srv.get(&format!(
            "/api/v1/users/{T}/commonFollowers?leader={leader}"
        ));
        assert_text(&resp, 404, invalid_leader);
    }
    // A's own 404 first, then the query's 400s before any 404.
    assert_bad_ens(&srv.get("/api/v1/users/nobody.eth/commonFollowers?leader=nobody.eth"));
    assert_400(
        &srv.get("/api/v1/users/nobody.eth/commonFollowers?leader=nobody.eth&limit=x"),
        "limit must be a non-negative integer",
    );
    assert_400(
        &srv.get(&format!("/api/v1/users/{T}/commonFollowers?limit=1001")),
        "limit must be at most 1000",
    );
    assert_400(
        &srv.get(&format!(
            "/api/v1/users/{T}/commonFollowers?leader=%FF&limit=x"
        )),
        "leader is not valid UTF-8",
    );
    assert_400(
        &srv.get(&format!("/api/v1/users/{T}/commonFollowers?offset=1.5")),
        "offset must be a non-negative integer",
    );
}

/// The cache keys on the resolved leader: two leaders, two answers; the
/// leader's two spellings, one.
#[test]
fn common_followers_cache_keys_on_the_leader() {
    let srv = TestService::start(&tables());
    let path = |leader: &str| format!("/api/v1/users/{T}/commonFollowers?leader={leader}");
    let with_y = srv.get(&path(Y)).text();
    let with_t = srv.get(&path(T)).text();
    assert_ne!(with_y, with_t);
    assert_eq!(srv.get(&path("leader.eth")).text(), with_y);
    assert_eq!(srv.get(&path(T)).text(), with_t);
    assert_eq!(
        srv.get(&format!("/api/v1/users/{T}/commonFollowers"))
            .text(),
        with_t
    );
}

/// Pages past the first batch of matches: Z's 60 followers N(1)..N(60)
/// (address = the byte i 20 times) all hold "0x", in address order; "3"
/// is in those whose byte has a hex digit 3.
#[test]
fn search_followers_pages_across_batches() {
    let srv = TestService::start(&bulk());
    let get = |q: &str| {
        srv.get(&format!("/api/v1/users/{Z}/searchFollowers?{q}"))
            .json()
    };
    let page = get("term=0x&offset=30&limit=10");
    let want: Vec<String> = (31..=40).map(n).collect();
    assert_eq!(addresses(&page, "followers"), want);
    let all = get("term=0x&limit=1000");
    assert_eq!(
        addresses(&all, "followers"),
        (1..=60).map(n).collect::<Vec<_>>()
    );
    let threes: Vec<String> = (1..=60u8)
        .filter(|&i| format!("{i:02x}").contains('3'))
        .map(n)
        .collect();
    assert_eq!(addresses(&get("term=3&limit=1000"), "followers"), threes);
    assert_eq!(
        addresses(&get("term=3&offset=2&limit=3"), "followers"),
        threes[2..5].to_vec()
    );
}

/// A rare term of 3+ bytes is looked up in the trigram index, then
/// checked against the followers: the same answers as a scan.
#[test]
fn search_followers_with_a_rare_term() {
    let srv = TestService::start(&bulk());
    let get = |q: &str| {
        srv.get(&format!("/api/v1/users/{Z}/searchFollowers?{q}"))
            .json()
    };
    // "0x3" starts the addresses of N(0x30)..N(0x3c) only.
    let want: Vec<String> = (0x30..=0x3c).map(n).collect();
    assert_eq!(addresses(&get("term=0x3&limit=100"), "followers"), want);
    assert_eq!(
        addresses(&get("term=0X3&offset=2&limit=3"), "followers"),
        want[2..5].to_vec()
    );
    assert_eq!(addresses(&get("term=3c3c3c"), "followers"), vec![n(0x3c)]);
    // Z holds "eee" but does not follow itself.
    assert_text(
        &srv.get(&format!("/api/v1/users/{Z}/searchFollowers?term=eee")),
        200,
        r#"{"followers":[]}"#,
    );
}
