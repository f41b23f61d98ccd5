//! GET /users/{addressOrENS}/notifications (see fixtures::notifications).

use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

const TH: &str = "abcdefabcdefabcdefabcdefabcdefabcdefabcd"; // T without 0x

fn n1() -> Value {
    json!({"address": U1, "name": "ulysses.eth", "avatar": "https://example.com/u1.png",
           "token_id": "21", "action": "follow", "opcode": 1, "op": format!("0x01010101{TH}"),
           "tag": "", "updated_at": "2024-09-13T23:59:59.999Z"})
}
fn n2() -> Value {
    json!({"address": U1, "name": "ulysses.eth", "avatar": "https://example.com/u1.png",
           "token_id": "21", "action": "unfollow", "opcode": 2, "op": format!("0x01020101{TH}"),
           "tag": "", "updated_at": "2024-09-14T00:00:00.000Z"})
}
fn n3() -> Value {
    json!({"address": U2, "name": null, "avatar": null,
           "token_id": "22", "action": "follow", "opcode": 1, "op": format!("0x01010101{TH}"),
           "tag": "", "updated_at": "2024-10-07T00:00:00.000Z"})
}
fn n4() -> Value {
    json!({"address": U2, "name": null, "avatar": null,
           "token_id": "22", "action": "tag", "opcode": 3, "op": format!("0x01030101{TH}746f7038"),
           "tag": "top8", "updated_at": "2024-10-13T00:00:00.000Z"})
}
fn n5() -> Value {
    json!({"address": T, "name": "target.eth", "avatar": null,
           "token_id": "24", "action": "follow", "opcode": 1, "op": format!("0x01010101{TH}"),
           "tag": "", "updated_at": "2024-10-13T23:00:00.000Z"})
}
fn n6() -> Value {
    json!({"address": U1, "name": "ulysses.eth", "avatar": "https://example.com/u1.png",
           "token_id": "21", "action": "tag", "opcode": 3, "op": format!("0x01030101{TH}446576"),
           "tag": "Dev", "updated_at": "2024-10-14T00:00:00.000Z"})
}
fn n7() -> Value {
    json!({"address": U1, "name": "ulysses.eth", "avatar": "https://example.com/u1.png",
           "token_id": "21", "action": "untag", "opcode": 4, "op": format!("0x01040101{TH}646576"),
           "tag": "dev", "updated_at": "2024-10-14T00:00:00.000Z"})
}
fn n8() -> Value {
    json!({"address": U2, "name": null, "avatar": null,
           "token_id": "22", "action": "follow", "opcode": 1, "op": format!("0x01010101{TH}"),
           "tag": "", "updated_at": "2024-10-14T00:00:00.001Z"})
}

/// `[interval, opcode]` and the totals `[total, follows, unfollows, tags, untags]`.
fn answer(interval: &str, opcode: &str, totals: [u64; 5], items: Vec<Value>) -> Value {
    json!({"summary": {"interval": interval, "opcode": opcode, "total": totals[0],
                       "total_follows": totals[1], "total_unfollows": totals[2],
                       "total_tags": totals[3], "total_untags": totals[4]},
           "notifications": items})
}

const WEEK: &str = "168:00:00(hrs)";
const ALL: &str = "999:00:00(hrs)";

fn url(query: &str) -> String {
    format!("/api/v1/users/{T}/notifications?{query}")
}

fn all_answer() -> Value {
    answer(
        ALL,
        "all",
        [8, 4, 1, 2, 1],
        vec![n8(), n6(), n7(), n5(), n4(), n3(), n2(), n1()],
    )
}

#[test]
fn hour_window_exact_text() {
    let srv = TestService::start(&notifications());
    // [S - 1h, S]: n6 and n7 at S (seq 16 before seq 15), n5 at S - 1h.
    let resp = srv.get(&url("interval=hour&start=1728864000"));
    let t = TH;
    assert_text(
        &resp,
        200,
        &format!(
            concat!(
                r#"{{"summary":{{"interval":"1:00:00(hrs)","opcode":"all","total":3,"total_follows":1,"#,
                r#""total_unfollows":0,"total_tags":1,"total_untags":1}},"notifications":["#,
                r#"{{"address":"0x1111111111111111111111111111111111111111","name":"ulysses.eth","#,
                r#""avatar":"https://example.com/u1.png","token_id":"21","action":"tag","opcode":3,"#,
                r#""op":"0x01030101{t}446576","tag":"Dev","updated_at":"2024-10-14T00:00:00.000Z"}},"#,
                r#"{{"address":"0x1111111111111111111111111111111111111111","name":"ulysses.eth","#,
                r#""avatar":"https://example.com/u1.png","token_id":"21","action":"untag","opcode":4,"#,
                r#""op":"0x01040101{t}646576","tag":"dev","updated_at":"2024-10-14T00:00:00.000Z"}},"#,
                r#"{{"address":"0xabcdefabcdefabcdefabcdefabcdefabcdefabcd","name":"target.eth","#,
                r#""avatar":null,"token_id":"24","action":"follow","opcode":1,"#,
                r#""op":"0x01010101{t}","tag":"","updated_at":"2024-10-13T23:00:00.000Z"}}]}}"#
            ),
            t = t
        ),
    );
}

#[test]
fn windows_are_inclusive_at_both_ends() {
    let srv = TestService::start(&notifications());
    assert_json(
        &srv.get(&url("interval=day&start=1728864000")),
        200,
        answer(
            "24:00:00(hrs)",
            "all",
            [4, 1, 0, 2, 1],
            vec![n6(), n7(), n5(), n4()],
        ),
    );
    assert_json(
        &srv.get(&url("interval=week&start=1728864000")),
        200,
        answer(
            WEEK,
            "all",
            [5, 2, 0, 2, 1],
            vec![n6(), n7(), n5(), n4(), n3()],
        ),
    );
    assert_json(
        &srv.get(&url("interval=month&start=1728864000")),
        200,
        answer(
            "720:00:00(hrs)",
            "all",
            [6, 2, 1, 2, 1],
            vec![n6(), n7(), n5(), n4(), n3(), n2()],
        ),
    );
}

#[test]
fn window_moves_with_start() {
    let srv = TestService::start(&notifications());
    // start = S - 1 s: [S - 1h - 1s, S - 1s] holds only n5.
    assert_json(
        &srv.get(&url("interval=hour&start=1728863999")),
        200,
        answer("1:00:00(hrs)", "all", [1, 1, 0, 0, 0], vec![n5()]),
    );
    // start = S + 1 s: [S - 1h + 1s, S + 1s] holds n8, n6, n7 but not n5.
    assert_json(
        &srv.get(&url("interval=hour&start=1728864001")),
        200,
        answer(
            "1:00:00(hrs)",
            "all",
            [3, 1, 0, 1, 1],
            vec![n8(), n6(), n7()],
        ),
    );
    // Leading zeros are fine.
    assert_json(
        &srv.get(&url("interval=hour&start=0001728863999")),
        200,
        answer("1:00:00(hrs)", "all", [1, 1, 0, 0, 0], vec![n5()]),
    );
}

#[test]
fn interval_all_ignores_start() {
    let srv = TestService::start(&notifications());
    for q in [
        "interval=all",
        "interval=all&start=1728864000",
        "interval=all&start=0",
        "interval=all&start=",
        "interval=ALL&start=18446744073709551615",
        "start=5&interval=All",
    ] {
        assert_json(&srv.get(&url(q)), 200, all_answer());
    }
}

#[test]
fn interval_is_case_insensitive_and_unknown_means_week() {
    let srv = TestService::start(&notifications());
    let week = answer(
        WEEK,
        "all",
        [5, 2, 0, 2, 1],
        vec![n6(), n7(), n5(), n4(), n3()],
    );
    for q in [
        "start=1728864000",
        "interval=WEEK&start=1728864000",
        "interval=Week&start=1728864000",
        "interval=fortnight&start=1728864000",
        "interval=&start=1728864000",
        "interval=hours&start=1728864000",
        "interval=%20hour&start=1728864000",
    ] {
        assert_json(&srv.get(&url(q)), 200, week.clone());
    }
    assert_json(
        &srv.get(&url("interval=HOUR&start=1728864000")),
        200,
        answer(
            "1:00:00(hrs)",
            "all",
            [3, 1, 0, 1, 1],
            vec![n6(), n7(), n5()],
        ),
    );
    assert_json(
        &srv.get(&url("interval=Day&start=1728864000")),
        200,
        answer(
            "24:00:00(hrs)",
            "all",
            [4, 1, 0, 2, 1],
            vec![n6(), n7(), n5(), n4()],
        ),
    );
    assert_json(
        &srv.get(&url("interval=MONTH&start=1728864000")),
        200,
        answer(
            "720:00:00(hrs)",
            "all",
            [6, 2, 1, 2, 1],
            vec![n6(), n7(), n5(), n4(), n3(), n2()],
        ),
    );
}

#[test]
fn opcode_filters() {
    let srv = TestService::start(&notifications());
    assert_json(
        &srv.get(&url("interval=all&opcode=1")),
        200,
        answer(ALL, "1", [4, 4, 0, 0, 0], vec![n8(), n5(), n3(), n1()]),
    );
    assert_json(
        &srv.get(&url("interval=all&opcode=2")),
        200,
        answer(ALL, "2", [1, 0, 1, 0, 0], vec![n2()]),
    );
    assert_json(
        &srv.get(&url("interval=all&opcode=3")),
        200,
        answer(ALL, "3", [2, 0, 0, 2, 0], vec![n6(), n4()]),
    );
    assert_json(
        &srv.get(&url("interval=all&opcode=4")),
        200,
        answer(ALL, "4", [1, 0, 0, 0, 1], vec![n7()]),
    );
    assert_json(
        &srv.get(&url("interval=all&opcode=03")),
        200,
        answer(ALL, "3", [2, 0, 0, 2, 0], vec![n6(), n4()]),
    );
    // Week window and an opcode together.
    assert_json(
        &srv.get(&url("opcode=1&start=1728864000")),
        200,
        answer(WEEK, "1", [2, 2, 0, 0, 0], vec![n5(), n3()]),
    );
}

#[test]
fn opcode_outside_one_to_four_means_any() {
    let srv = TestService::start(&notifications());
    for op in ["0", "5", "000", "255", "256", "18446744073709551615", ""] {
        assert_json(
            &srv.get(&url(&format!("interval=all&opcode={op}"))),
            200,
            all_answer(),
        );
    }
}

#[test]
fn tag_filter() {
    let srv = TestService::start(&notifications());
    assert_json(
        &srv.get(&url("interval=all&opcode=3&tag=top8")),
        200,
        answer(ALL, "3", [1, 0, 0, 1, 0], vec![n4()]),
    );
    assert_json(
        &srv.get(&url("interval=all&tag=Dev")),
        200,
        answer(ALL, "all", [1, 0, 0, 1, 0], vec![n6()]),
    );
    assert_json(
        &srv.get(&url("interval=all&tag=dev")),
        200,
        answer(ALL, "all", [1, 0, 0, 0, 1], vec![n7()]),
    );
    assert_json(
        &srv.get(&url("interval=all&opcode=4&tag=dev")),
        200,
        answer(ALL, "4", [1, 0, 0, 0, 1], vec![n7()]),
    );
    // Exact and case-sensitive.
    for q in ["tag=DEV", "tag=De", "tag=%20Dev", "opcode=3&tag=dev"] {
        let opcode = if q.starts_with("opcode=3") {
            "3"
        } else {
            "all"
        };
        assert_json(
            &srv.get(&url(&format!("interval=all&{q}"))),
            200,
            answer(ALL, opcode, [0, 0, 0, 0, 0], vec![]),
        );
    }
    // Follow and un-follow ops carry no tag.
    assert_json(
        &srv.get(&url("interval=all&opcode=1&tag=top8")),
        200,
        answer(ALL, "1", [0, 0, 0, 0, 0], vec![]),
    );
    assert_json(
        &srv.get(&url("interval=all&opcode=2&tag=dev")),
        200,
        answer(ALL, "2", [0, 0, 0, 0, 0], vec![]),
    );
    // An empty tag is no filter.
    assert_json(&srv.get(&url("interval=all&tag=")), 200, all_answer());
    assert_json(&srv.get(&url("interval=all&tag")), 200, all_answer());
}

#[test]
fn limit_offset_and_page_totals() {
    let srv = TestService::start(&notifications());
    // Totals count the returned page only.
    assert_json(
        &srv.get(&url("interval=all&limit=2&offset=1")),
        200,
        answer(ALL, "all", [2, 0, 0, 1, 1], vec![n6(), n7()]),
    );
    assert_json(
        &srv.get(&url("interval=all&offset=7")),
        200,
        answer(ALL, "all", [1, 1, 0, 0, 0], vec![n1()]),
    );
    assert_json(
        &srv.get(&url("interval=all&limit=0")),
        200,
        answer(ALL, "all", [0, 0, 0, 0, 0], vec![]),
    );
    assert_json(
        &srv.get(&url("interval=all&offset=8")),
        200,
        answer(ALL, "all", [0, 0, 0, 0, 0], vec![]),
    );
    assert_json(
        &srv.get(&url("interval=all&offset=18446744073709551615&limit=1000")),
        200,
        answer(ALL, "all", [0, 0, 0, 0, 0], vec![]),
    );
    assert_json(
        &srv.get(&url("interval=all&limit=&offset=")),
        200,
        all_answer(),
    );
}

#[test]
fn default_limit_is_10() {
    let srv = TestService::start(&bulk());
    let resp = srv.get(&format!("/api/v1/users/{Z}/notifications?interval=all"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let v = resp.json();
    let want: Vec<String> = (51..=60u8).rev().map(n).collect();
    assert_eq!(addresses(&v, "notifications"), want);
    assert_eq!(
        v["summary"].to_string(),
        r#"{"interval":"999:00:00(hrs)","opcode":"all","total":10,"total_follows":10,"total_unfollows":0,"total_tags":0,"total_untags":0}"#
    );
    assert_eq!(v["notifications"][0]["token_id"], "1060");
    assert_eq!(
        v["notifications"][0]["updated_at"],
        "2024-10-14T00:01:00.000Z"
    );
    let resp = srv.get(&format!(
        "/api/v1/users/{Z}/notifications?interval=all&offset=55"
    ));
    let want: Vec<String> = (1..=5u8).rev().map(n).collect();
    assert_eq!(addresses(&resp.json(), "notifications"), want);
}

#[test]
fn account_by_mixed_case_address_or_name() {
    let srv = TestService::start(&notifications());
    for who in [
        T_UPPER,
        "target.eth",
        "TARGET.ETH",
        "0xAbCdEfabcdefabcdefabcdefabcdefabcdefabcd",
    ] {
        assert_json(
            &srv.get(&format!("/api/v1/users/{who}/notifications?interval=all")),
            200,
            all_answer(),
        );
    }
}

#[test]
fn ops_on_other_targets_and_invisible_lists() {
    let srv = TestService::start(&notifications());
    // O only gets U1's follow (seq 19) at S - 10 ms.
    assert_json(
        &srv.get(&format!("/api/v1/users/{O}/notifications?interval=all")),
        200,
        answer(
            ALL,
            "all",
            [1, 1, 0, 0, 0],
            vec![
                json!({"address": U1, "name": "ulysses.eth", "avatar": "https://example.com/u1.png",
                        "token_id": "21", "action": "follow", "opcode": 1,
                        "op": "0x010101015555555555555555555555555555555555555555",
                        "tag": "", "updated_at": "2024-10-13T23:59:59.990Z"}),
            ],
        ),
    );
    // U3's list is not primary and list 99 does not exist: in the window
    // [S - 1h, S] only n6, n7, n5 are seen (not seq 18 at S - 10 ms nor
    // seq 20 at S - 5 ms).
    let resp = srv.get(&url("interval=hour&start=1728864000"));
    assert_eq!(
        resp.json()["notifications"].as_array().map(|a| a.len()),
        Some(3),
        "{}",
        resp.text()
    );
}

#[test]
fn valid_unknown_address_has_no_notifications() {
    let srv = TestService::start(&notifications());
    let empty = r#"{"summary":{"interval":"999:00:00(hrs)","opcode":"all","total":0,"total_follows":0,"total_unfollows":0,"total_tags":0,"total_untags":0},"notifications":[]}"#;
    assert_text(
        &srv.get(
            "/api/v1/users/0x0000000000000000000000000000000000000001/notifications?interval=all",
        ),
        200,
        empty,
    );
    // U3 (only a non-primary list) is nobody's target.
    assert_text(
        &srv.get(&format!("/api/v1/users/{U3}/notifications?interval=all")),
        200,
        empty,
    );
}

#[test]
fn unknown_account() {
    let srv = TestService::start(&notifications());
    for who in [
        "0x123",
        "nobody.eth",
        "0XABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCD",
    ] {
        assert_bad_ens(&srv.get(&format!("/api/v1/users/{who}/notifications")));
    }
}

#[test]
fn time_arithmetic_saturates() {
    let srv = TestService::start(&notifications());
    for (interval, hrs) in [("hour", "1:00:00(hrs)"), ("month", "720:00:00(hrs)")] {
        for start in [
            "0",
            "18446744073709551615",
            "9223372036854775807",
            "9223372036854776",
        ] {
            assert_json(
                &srv.get(&url(&format!("interval={interval}&start={start}"))),
                200,
                answer(hrs, "all", [0, 0, 0, 0, 0], vec![]),
            );
        }
    }
}

#[test]
fn bad_parameter_values() {
    let srv = TestService::start(&notifications());
    let bad = [
        "-1",
        "1e3",
        "%201",
        "1%20",
        "+1",
        "%2B1",
        "abc",
        "1.5",
        "18446744073709551616",
        "%FF",
    ];
    for name in ["opcode", "start", "limit", "offset"] {
        for v in bad {
            let resp = srv.get(&url(&format!("{name}={v}")));
            if v == "%FF" {
                // Invalid UTF-8 is reported as such or as a bad integer.
                assert_eq!(resp.status, 400, "{}: {}", resp.request, resp.text());
                continue;
            }
            assert_400(&resp, &format!("{name} must be a non-negative integer"));
        }
    }
    assert_400(&srv.get(&url("limit=1001")), "limit must be at most 1000");
    assert_400(&srv.get(&url("tag=%FF")), "tag is not valid UTF-8");
    assert_400(
        &srv.get(&url("interval=%FF")),
        "interval is not valid UTF-8",
    );
}

#[test]
fn parameter_precedence_follows_table_order() {
    let srv = TestService::start(&notifications());
    let mut q = vec![
        "offset=x",
        "limit=y",
        "tag=%FF",
        "start=z",
        "interval=%C3",
        "opcode=w",
    ];
    let expected = [
        "opcode must be a non-negative integer",
        "interval is not valid UTF-8",
        "start must be a non-negative integer",
        "tag is not valid UTF-8",
        "limit must be a non-negative integer",
        "offset must be a non-negative integer",
    ];
    for text in expected {
        // Unknown account comes after every parameter error.
        let resp = srv.get(&format!(
            "/api/v1/users/nobody.eth/notifications?{}",
            q.join("&")
        ));
        assert_400(&resp, text);
        q.pop();
    }
    assert!(q.is_empty());
    assert_bad_ens(&srv.get("/api/v1/users/nobody.eth/notifications?interval=bogus&tag=x"));
}

#[test]
fn repeated_parameters_first_wins() {
    let srv = TestService::start(&notifications());
    assert_json(
        &srv.get(&url("interval=all&opcode=2&opcode=x")),
        200,
        answer(ALL, "2", [1, 0, 1, 0, 0], vec![n2()]),
    );
    assert_json(
        &srv.get(&url("interval=all&interval=hour&start=1728864000")),
        200,
        all_answer(),
    );
    assert_json(
        &srv.get(&url("interval=all&tag=dev&tag=Dev&Tag=top8&OPCODE=3")),
        200,
        answer(ALL, "all", [1, 0, 0, 0, 1], vec![n7()]),
    );
}

#[test]
fn missing_or_empty_start_means_now() {
    let now = now_ms();
    let mut b = Builder::new();
    b.primary_list(21, U1);
    b.op(21, 1, 1, T, "", now - 60_000) // a minute ago: in the last hour
        .op(21, 2, 3, T, "soon", now + 2 * HOUR) // in the future
        .op(21, 3, 3, T, "old", now - 2 * HOUR); // two hours ago
    let srv = TestService::start(&b.build());
    for q in ["interval=hour", "interval=hour&start="] {
        let resp = srv.get(&url(q));
        assert_eq!(resp.status, 200, "{}", resp.text());
        let v = resp.json();
        let items = v["notifications"].as_array().expect("array");
        assert_eq!(items.len(), 1, "{q}: {v}");
        assert_eq!(items[0]["op"], format!("0x01010101{TH}"), "{q}: {v}");
        assert_eq!(v["summary"]["interval"], "1:00:00(hrs)");
    }
    // The default week window from now holds the two past ops.
    let resp = srv.get(&format!("/api/v1/users/{T}/notifications"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let v = resp.json();
    let tags: Vec<&str> = v["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["tag"].as_str().unwrap())
        .collect();
    assert_eq!(tags, vec!["", "old"], "{v}");
    assert_eq!(v["summary"]["interval"], WEEK);
}
