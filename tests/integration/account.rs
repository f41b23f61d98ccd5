//! GET /users/{a}/account (8), /lists/{id}/account (9), /users/{a}/lists
//! (13) and /users/{a}/primary-list (14) (see fixtures::accounts).

use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

const NULL_ENS: &str = r#"{"name":null,"avatar":null,"header":null,"display":null,"records":{},"chains":{},"fresh":null,"resolver":null,"errors":{}}"#;

/// K1's ens row: chains and errors null -> {}.
fn kay_ens() -> Value {
    json!({"name": "kay.eth", "avatar": "https://example.com/kay.png",
           "header": "https://example.com/kay-h.png", "display": "Kay.eth",
           "records": {"com.twitter": "kay"}, "chains": {}, "fresh": 5, "resolver": null,
           "errors": {}})
}

fn name_only_ens(name: &str) -> Value {
    json!({"name": name, "avatar": null, "header": null, "display": null,
           "records": {}, "chains": {}, "fresh": null, "resolver": null, "errors": {}})
}

// ------------------------------------------------------------------- 8

#[test]
fn user_account_exact_text() {
    let srv = TestService::start(&accounts());
    assert_text(
        &srv.get(&format!("/api/v1/users/{K1}/account")),
        200,
        concat!(
            r#"{"address":"0x1010101010101010101010101010101010101010","#,
            r#""ens":{"name":"kay.eth","avatar":"https://example.com/kay.png","#,
            r#""header":"https://example.com/kay-h.png","display":"Kay.eth","#,
            r#""records":{"com.twitter":"kay"},"chains":{},"fresh":5,"resolver":null,"errors":{}}}"#
        ),
    );
}

#[test]
fn user_account_by_name_and_for_any_address() {
    let srv = TestService::start(&accounts());
    for who in [
        "kay.eth",
        "KAY.ETH",
        "0x1010101010101010101010101010101010101010",
    ] {
        assert_json(
            &srv.get(&format!("/api/v1/users/{who}/account")),
            200,
            json!({"address": K1, "ens": kay_ens()}),
        );
    }
    // Name printed as stored; K6 is only an owner; K2 has no ens row.
    assert_json(
        &srv.get("/api/v1/users/eight.eth/account"),
        200,
        json!({"address": K8, "ens": name_only_ens("Eight.eth")}),
    );
    assert_json(
        &srv.get(&format!("/api/v1/users/{K6}/account")),
        200,
        json!({"address": K6, "ens": name_only_ens("six.eth")}),
    );
    // Addresses without an ens row, known or not, the zero address too:
    // the all-null ens; the address printed lower-case.
    for (who, shown) in [
        (K2, K2),
        (ZERO, ZERO),
        (
            "0xABCDEF0123456789ABCDEF0123456789ABCDEF01",
            "0xabcdef0123456789abcdef0123456789abcdef01",
        ),
    ] {
        assert_text(
            &srv.get(&format!("/api/v1/users/{who}/account")),
            200,
            &format!(r#"{{"address":"{shown}","ens":{NULL_ENS}}}"#),
        );
    }
}

#[test]
fn unknown_names_are_404() {
    let srv = TestService::start(&accounts());
    for endpoint in ["account", "lists", "primary-list"] {
        for who in [
            "nobody.eth",
            "0x123",
            "kay",
            "0X1010101010101010101010101010101010101010",
        ] {
            assert_bad_ens(&srv.get(&format!("/api/v1/users/{who}/{endpoint}")));
        }
    }
}

// ------------------------------------------------------------------- 9

#[test]
fn list_account_of_a_primary_list_exact_text() {
    let srv = TestService::start(&accounts());
    assert_text(
        &srv.get("/api/v1/lists/2/account"),
        200,
        &format!(
            concat!(
                r#"{{"address":"0x2020202020202020202020202020202020202020","ens":{},"#,
                r#""is_primary_list":true,"primary_list":"2"}}"#
            ),
            NULL_ENS
        ),
    );
    assert_json(
        &srv.get("/api/v1/lists/001/account"),
        200,
        json!({"address": K1, "ens": kay_ens(), "is_primary_list": true, "primary_list": "1"}),
    );
}

#[test]
fn list_account_of_a_list_that_is_not_primary() {
    let srv = TestService::start(&accounts());
    // 10 is K1's second list: K1's primary list is 1.
    assert_json(
        &srv.get("/api/v1/lists/10/account"),
        200,
        json!({"address": K1, "ens": kay_ens(), "is_primary_list": false, "primary_list": "1"}),
    );
    // 20 is K5's only list; K5's primary_lists row names K1's list 1, so
    // K5 has no primary list.
    assert_json(
        &srv.get("/api/v1/lists/20/account"),
        200,
        json!({"address": K5, "ens": name_only_ens("five.eth"),
               "is_primary_list": false, "primary_list": null}),
    );
}

#[test]
fn list_account_without_user_is_404() {
    let srv = TestService::start(&accounts());
    // 300: user is the zero address; 5, 999 and u64::MAX: not in lists
    // (999 holds records all the same).
    for id in ["300", "5", "999", "18446744073709551615"] {
        assert_no_user_found(&srv.get(&format!("/api/v1/lists/{id}/account")));
    }
    for id in ["0", "abc", "-1", "18446744073709551616"] {
        assert_invalid_list_id(&srv.get(&format!("/api/v1/lists/{id}/account")));
    }
}

// ------------------------------------------------------------------ 13

#[test]
fn user_lists_exact_text() {
    let srv = TestService::start(&accounts());
    // K1: user, owner and manager of 1, user and owner of 10: each once.
    assert_text(
        &srv.get("/api/v1/users/kay.eth/lists"),
        200,
        r#"{"primary_list":"1","lists":["1","10"]}"#,
    );
}

#[test]
fn user_lists_by_role() {
    let srv = TestService::start(&accounts());
    for (who, want) in [
        // K2 is user (not owner) of 2.
        (K2, json!({"primary_list": "2", "lists": ["2"]})),
        (K3, json!({"primary_list": "3", "lists": ["3"]})),
        // K5: its list 20 is not primary (its row names list 1).
        (K5, json!({"primary_list": null, "lists": ["20"]})),
        // K6: only owner (of 2 and of the user-less 300).
        (K6, json!({"primary_list": null, "lists": ["2", "300"]})),
        // K7: only manager, of 3, 10 and 300: numeric order, not text.
        (
            K7,
            json!({"primary_list": null, "lists": ["3", "10", "300"]}),
        ),
        // K8 and K9 are only record targets; 300's zero-address user is no
        // user, so the zero address has no lists.
        (K8, json!({"primary_list": null, "lists": []})),
        (K9, json!({"primary_list": null, "lists": []})),
        (ZERO, json!({"primary_list": null, "lists": []})),
        (
            "0x0123456789abcdef0123456789abcdef01234567",
            json!({"primary_list": null, "lists": []}),
        ),
    ] {
        assert_json(&srv.get(&format!("/api/v1/users/{who}/lists")), 200, want);
    }
}

// ------------------------------------------------------------------ 14

#[test]
fn user_primary_list() {
    let srv = TestService::start(&accounts());
    assert_text(
        &srv.get(&format!("/api/v1/users/{K4}/primary-list")),
        200,
        r#"{"primary_list":"4"}"#,
    );
    assert_text(
        &srv.get("/api/v1/users/Kay.eth/primary-list"),
        200,
        r#"{"primary_list":"1"}"#,
    );
    for who in [
        K5,
        K6,
        K8,
        ZERO,
        "0x0123456789abcdef0123456789abcdef01234567",
    ] {
        assert_text(
            &srv.get(&format!("/api/v1/users/{who}/primary-list")),
            200,
            r#"{"primary_list":null}"#,
        );
    }
}

// ------------------------------------------------------------ together

/// An invariant of the API reference (docs/openapi.yaml): X's primary_list is
/// the same in 9 (any list of X), 10, 13 and 14.
#[test]
fn primary_list_agrees_across_endpoints() {
    let srv = TestService::start(&accounts());
    for (who, lists, want) in [
        (K1, &["1", "10"][..], json!("1")),
        (K2, &["2"][..], json!("2")),
        (K5, &["20"][..], Value::Null),
    ] {
        for list in lists {
            let nine = srv.get(&format!("/api/v1/lists/{list}/account")).json();
            assert_eq!(nine["primary_list"], want, "9 of list {list}");
        }
        for endpoint in ["details", "lists", "primary-list"] {
            let resp = srv.get(&format!("/api/v1/users/{who}/{endpoint}"));
            assert_eq!(resp.json()["primary_list"], want, "{}", resp.request);
        }
    }
}

#[test]
fn head_cache_and_ignored_parameters() {
    let srv = TestService::start(&accounts());
    for target in [
        format!("/api/v1/users/{K1}/account"),
        "/api/v1/lists/10/account".to_owned(),
        format!("/api/v1/users/{K7}/lists"),
        format!("/api/v1/users/{K5}/primary-list"),
    ] {
        let first = srv.get(&target);
        assert_eq!(first.status, 200, "{}: {}", first.request, first.text());
        for again in [
            format!("{target}?cache=fresh"),
            target.clone(),
            format!("{target}?limit=x&offset=-1&cache=stale"),
        ] {
            assert_text(&srv.get(&again), 200, &first.text());
        }
        let head = srv.head(&target);
        assert_eq!(head.status, 200, "{}", head.request);
        assert!(head.body.is_empty(), "{}", head.request);
        assert_eq!(
            head.header("content-length"),
            first.header("content-length")
        );
    }
}

/// A `primary_lists` row for the zero address naming the list whose user
/// is the zero address: that list has no user, so it is nobody's primary
/// list (10 would otherwise name a list that answers 404).
#[test]
fn the_zero_address_has_no_primary_list() {
    const Z: &str = "0x0000000000000000000000000000000000000000";
    const O: &str = "0x0101010101010101010101010101010101010101";
    let srv = TestService::start(
        &Builder::new()
            .list_roles(5, Z, O, O)
            .primary(Z, 5)
            .record(5, O, S)
            .build(),
    );
    assert_text(
        &srv.get(&format!("/api/v1/users/{Z}/primary-list")),
        200,
        r#"{"primary_list":null}"#,
    );
    assert_json(
        &srv.get(&format!("/api/v1/users/{Z}/lists")),
        200,
        json!({"primary_list": null, "lists": []}),
    );
    assert_eq!(
        srv.get(&format!("/api/v1/users/{Z}/details")).json()["primary_list"],
        Value::Null
    );
    assert_no_user_found(&srv.get("/api/v1/lists/5/details"));
    // The list's record still counts for /stats.
    assert_json(
        &srv.get("/api/v1/stats"),
        200,
        json!({"stats": {"address_count": "1", "list_count": "1", "list_op_count": "0", "user_count": "1"}}),
    );
}
