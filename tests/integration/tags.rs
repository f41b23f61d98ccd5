//! GET /users/{a}/tags (34), /lists/{id}/tags (35), /users/{a}/taggedAs
//! (36), /lists/{id}/taggedAs (37), on fixtures::graph:
//!
//! primary lists: 1 (A): D top8, B, C block; 2 (B): D top8, A;
//! 3 (C): D top8, A top8, B block; 4 (D): D, A top8, B block.
//! List 5 (A's, not primary): E block. E has no primary list.

use serde_json::json;

use crate::fixtures::*;
use crate::support::*;

#[test]
fn user_tags_are_the_primary_lists_pairs_exact_text() {
    let srv = TestService::start(&graph());
    assert_text(
        &srv.get("/api/v1/users/alice.eth/tags"),
        200,
        concat!(
            r#"{"address":"0x1111111111111111111111111111111111111111","#,
            r#""tags":["block","top8"],"#,
            r#""tagCounts":[{"tag":"block","count":1},{"tag":"top8","count":1}],"#,
            r#""taggedAddresses":[{"address":"0x3333333333333333333333333333333333333333","tag":"block"},"#,
            r#"{"address":"0x4444444444444444444444444444444444444444","tag":"top8"}]}"#
        ),
    );
    for who in [E, "0x0000000000000000000000000000000000000001"] {
        assert_json(
            &srv.get(&format!("/api/v1/users/{who}/tags")),
            200,
            json!({"address": who, "tags": [], "tagCounts": [], "taggedAddresses": []}),
        );
    }
    assert_bad_ens(&srv.get("/api/v1/users/nobody.eth/tags"));
}

#[test]
fn list_tags_read_the_lists_own_records_and_filter_by_include() {
    let srv = TestService::start(&graph());
    assert_json(
        &srv.get("/api/v1/lists/5/tags"),
        200,
        json!({"token_id": "5", "tags": ["block"], "tagCounts": [{"tag": "block", "count": 1}],
               "taggedAddresses": [{"address": E, "tag": "block"}]}),
    );
    // An empty include is no filter.
    assert_json(
        &srv.get("/api/v1/lists/001/tags?include=+,"),
        200,
        json!({"token_id": "1", "tags": ["block", "top8"],
               "tagCounts": [{"tag": "block", "count": 1}, {"tag": "top8", "count": 1}],
               "taggedAddresses": [{"address": C, "tag": "block"}, {"address": D, "tag": "top8"}]}),
    );
    assert_json(
        &srv.get("/api/v1/lists/1/tags?include=top8,+block+,top8&include=friend"),
        200,
        json!({"token_id": "1", "tagsToSearch": ["top8", "block"],
               "taggedAddresses": [{"address": C, "tags": ["block"]},
                                   {"address": D, "tags": ["top8"]}]}),
    );
    assert_json(
        &srv.get("/api/v1/lists/1/tags?include=friend"),
        200,
        json!({"token_id": "1", "tagsToSearch": ["friend"], "taggedAddresses": []}),
    );
    assert_no_user_found(&srv.get("/api/v1/lists/8/tags"));
    assert_invalid_list_id(&srv.get("/api/v1/lists/x/tags?include=%FF"));
    assert_400(
        &srv.get("/api/v1/lists/1/tags?include=%FF"),
        "include is not valid UTF-8",
    );
}

#[test]
fn tagged_as_is_what_followers_put_on_the_account() {
    let srv = TestService::start(&graph());
    // D: top8 from A, B and C (D's own record of D has no tag).
    assert_json(
        &srv.get("/api/v1/users/Dave.eth/taggedAs"),
        200,
        json!({"address": D, "tags": ["top8"], "tagCounts": [{"tag": "top8", "count": 3}],
               "taggedAddresses": [{"address": A, "tag": "top8"}, {"address": B, "tag": "top8"},
                                   {"address": C, "tag": "top8"}]}),
    );
    // B: blocked by C and D (blocked followers included).
    assert_json(
        &srv.get(&format!("/api/v1/users/{B}/taggedAs")),
        200,
        json!({"address": B, "tags": ["block"], "tagCounts": [{"tag": "block", "count": 2}],
               "taggedAddresses": [{"address": C, "tag": "block"}, {"address": D, "tag": "block"}]}),
    );
    // Lists 1 and 5 both stand for A: top8 from C and D; list 5's own
    // record of E does not count (it is not a primary list's).
    for list in ["1", "5"] {
        assert_json(
            &srv.get(&format!("/api/v1/lists/{list}/taggedAs")),
            200,
            json!({"token_id": list, "tags": ["top8"], "tagCounts": [{"tag": "top8", "count": 2}],
                   "taggedAddresses": [{"address": C, "tag": "top8"}, {"address": D, "tag": "top8"}]}),
        );
    }
    assert_json(
        &srv.get(&format!("/api/v1/users/{E}/taggedAs")),
        200,
        json!({"address": E, "tags": [], "tagCounts": [], "taggedAddresses": []}),
    );
    assert_no_user_found(&srv.get("/api/v1/lists/99/taggedAs"));
}

#[test]
fn several_tags_on_a_record_order_by_bytes() {
    // "Zeta" < "friend" < "top8" by bytes.
    let tables = Builder::new()
        .primary_list(1, A)
        .record(1, B, S)
        .tag(1, B, "top8", S)
        .tag(1, B, "friend", S)
        .tag(1, B, "Zeta", S)
        .record(1, C, S)
        .tag(1, C, "friend", S)
        .build();
    let srv = TestService::start(&tables);
    assert_json(
        &srv.get(&format!("/api/v1/users/{A}/tags")),
        200,
        json!({"address": A, "tags": ["Zeta", "friend", "top8"],
               "tagCounts": [{"tag": "Zeta", "count": 1}, {"tag": "friend", "count": 2},
                             {"tag": "top8", "count": 1}],
               "taggedAddresses": [{"address": B, "tag": "Zeta"}, {"address": B, "tag": "friend"},
                                   {"address": B, "tag": "top8"}, {"address": C, "tag": "friend"}]}),
    );
    assert_json(
        &srv.get("/api/v1/lists/1/tags?include=friend"),
        200,
        json!({"token_id": "1", "tagsToSearch": ["friend"],
               "taggedAddresses": [{"address": B, "tags": ["Zeta", "friend", "top8"]},
                                   {"address": C, "tags": ["friend"]}]}),
    );
    assert_json(
        &srv.get(&format!("/api/v1/users/{B}/taggedAs")),
        200,
        json!({"address": B, "tags": ["Zeta", "friend", "top8"],
               "tagCounts": [{"tag": "Zeta", "count": 1}, {"tag": "friend", "count": 1},
                             {"tag": "top8", "count": 1}],
               "taggedAddresses": [{"address": A, "tag": "Zeta"}, {"address": A, "tag": "friend"},
                                   {"address": A, "tag": "top8"}]}),
    );
}

/// A hub-like answer: more distinct tag sets and tags than are scanned
/// before a map is used (16), sets changing on every follower, and a tag
/// whose `,"tag":…},` is longer than the fixed-size copy of the others
/// (with a quote and a backslash to escape).
#[test]
fn many_tag_sets_and_a_long_tag() {
    const LONG: &str = "a tag of forty bytes, \"quoted\" \\ 012345";
    let follower = |i: usize| format!("0x{:040x}", 0x100 + i);
    let short = |i: usize| format!("t{i:02}");
    let mut builder = Builder::new();
    builder.primary_list(1, A);
    for i in 0..20 {
        let f = follower(i);
        builder
            .primary_list(10 + i as u64, &f)
            .record(10 + i as u64, A, S)
            .tag(10 + i as u64, A, &short(i), S);
        if i % 2 == 0 {
            builder.tag(10 + i as u64, A, LONG, S);
        }
    }
    let srv = TestService::start(&builder.build());
    // Tag bytes: "a tag…" < "t00" < … < "t19"; a follower's tags in that
    // order too.
    let mut tags = vec![json!(LONG)];
    let mut counts = vec![json!({"tag": LONG, "count": 10})];
    let mut pairs = Vec::new();
    for i in 0..20 {
        tags.push(json!(short(i)));
        counts.push(json!({"tag": short(i), "count": 1}));
        if i % 2 == 0 {
            pairs.push(json!({"address": follower(i), "tag": LONG}));
        }
        pairs.push(json!({"address": follower(i), "tag": short(i)}));
    }
    assert_json(
        &srv.get(&format!("/api/v1/users/{A}/taggedAs")),
        200,
        json!({"address": A, "tags": tags, "tagCounts": counts, "taggedAddresses": pairs}),
    );
}
