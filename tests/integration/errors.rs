//! Unknown paths, methods, path decoding and error precedence.

use crate::fixtures::*;
use crate::support::*;

/// One valid request path per endpoint (fixtures::graph).
/// One path of every GET endpoint served (fixtures::graph answers 200).
pub const KNOWN: [&str; 40] = [
    "/api/v1/lists/1/details",
    "/api/v1/users/alice.eth/badges",
    "/api/v1/lists/1/badges",
    "/api/v1/leaderboard/search",
    "/api/v1/users/0x1111111111111111111111111111111111111111/notifications",
    "/api/v1/users/alice.eth/followers",
    "/api/v1/lists/1/followers",
    "/api/v1/users/alice.eth/account",
    "/api/v1/lists/5/account",
    "/api/v1/users/alice.eth/details",
    "/api/v1/users/alice.eth/stats",
    "/api/v1/lists/5/stats",
    "/api/v1/users/alice.eth/lists",
    "/api/v1/users/alice.eth/primary-list",
    "/api/v1/leaderboard/ranked",
    "/api/v1/leaderboard/count",
    "/api/v1/leaderboard/all",
    "/api/v1/stats",
    "/api/v1/users/alice.eth/following",
    "/api/v1/users/alice.eth/allFollowing",
    "/api/v1/lists/5/following",
    "/api/v1/lists/6/allFollowing",
    "/api/v1/lists/1/allFollowingAddresses",
    "/api/v1/exportState/1",
    "/api/v1/users/alice.eth/Dave.eth/followerState",
    "/api/v1/lists/1/alice.eth/buttonState",
    "/api/v1/lists/5/alice.eth/followerState",
    "/api/v1/users/alice.eth/tags",
    "/api/v1/lists/1/tags",
    "/api/v1/users/alice.eth/taggedAs",
    "/api/v1/lists/5/taggedAs",
    "/api/v1/users/alice.eth/allFollowers",
    "/api/v1/lists/5/allFollowers",
    "/api/v1/users/alice.eth/latestFollowers",
    "/api/v1/lists/5/latestFollowers",
    "/api/v1/users/alice.eth/searchFollowers",
    "/api/v1/lists/5/searchFollowers",
    "/api/v1/users/alice.eth/searchFollowing",
    "/api/v1/lists/5/searchFollowing",
    "/api/v1/users/alice.eth/commonFollowers",
];

#[test]
fn unknown_paths_are_404_with_decoded_path() {
    let srv = TestService::start(&graph());
    for (target, shown) in [
        ("/", "/"),
        ("/api", "/api"),
        ("/api/v1", "/api/v1"),
        ("/api/v1/", "/api/v1/"),
        ("/api/v2/lists/1/details", "/api/v2/lists/1/details"),
        ("/lists/1/details", "/lists/1/details"),
        ("/api/v1/lists/1/details/", "/api/v1/lists/1/details/"),
        ("/api/v1//lists/1/details", "/api/v1//lists/1/details"),
        ("/api/v1/lists//details", "/api/v1/lists//details"),
        ("/api/v1/users//badges", "/api/v1/users//badges"),
        ("/api/v1/lists/1/detail", "/api/v1/lists/1/detail"),
        ("/api/v1/lists/1", "/api/v1/lists/1"),
        ("/api/v1/lists/1/details/x", "/api/v1/lists/1/details/x"),
        (
            "/api/v1/users/alice.eth/followers/",
            "/api/v1/users/alice.eth/followers/",
        ),
        ("/api/v1/leaderboard/search/", "/api/v1/leaderboard/search/"),
        ("/api/v1/leaderboard", "/api/v1/leaderboard"),
        // v1 endpoints that are not served (the API reference,
        // docs/openapi.yaml, does not list them).
        ("/api/v1/minters", "/api/v1/minters"),
        (
            "/api/v1/users/alice.eth/recommended/",
            "/api/v1/users/alice.eth/recommended/",
        ),
        ("/api/v1/discover/", "/api/v1/discover/"),
        ("/api/v1/users/a/poap", "/api/v1/users/a/poap"),
        (
            "/api/v1/leaderboard/followers",
            "/api/v1/leaderboard/followers",
        ),
        ("/api/v1/stats/", "/api/v1/stats/"),
        (
            "/api/v1/lists/1/notifications",
            "/api/v1/lists/1/notifications",
        ),
        ("/api/v1/nope?term=x&limit=y", "/api/v1/nope"),
        (
            "/api/v1/leaderboard/search/?term=x",
            "/api/v1/leaderboard/search/",
        ),
        ("/api/v1/foo%20bar", "/api/v1/foo bar"),
        ("/api/v1/%6Eope", "/api/v1/nope"),
        // %2F does not split a segment: "lists/1/details" is one segment.
        ("/api/v1/lists%2F1%2Fdetails", "/api/v1/lists/1/details"),
        ("/api/v1/leaderboard%2Fsearch", "/api/v1/leaderboard/search"),
        // Unknown path first, even when it does not decode to UTF-8.
        ("/api/v1/%FF", "/api/v1/\u{fffd}"),
        ("/api/v1/users/%FF/nope", "/api/v1/users/\u{fffd}/nope"),
        // The operations endpoints are outside /api/v1.
        ("/api/v1/snapshot", "/api/v1/snapshot"),
        ("/api/v1/health", "/api/v1/health"),
    ] {
        assert_unknown_path(&srv.get(target), shown);
    }
}

#[test]
fn percent_encoded_known_segments_are_decoded() {
    let srv = TestService::start(&graph());
    let plain = srv.get("/api/v1/lists/1/details");
    assert_eq!(plain.status, 200);
    for target in [
        "/api/v1/lists/%31/details",
        "/api/v1/%6Cists/1/details",
        "/api/%76%31/lists/1/details",
        "/api/v1/lists/1/d%65tails",
    ] {
        assert_text(&srv.get(target), 200, &plain.text());
    }
    let resp = srv.get("/api/v1/leaderboard/%73earch?term=alice");
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["results"][0]["address"], A);
}

#[test]
fn other_methods_on_known_paths_are_405() {
    let srv = TestService::start(&graph());
    for method in ["POST", "PUT", "DELETE", "PATCH", "TRACE", "FOO"] {
        for path in KNOWN {
            let resp = srv.request(method, path, &[]);
            assert_json(
                &resp,
                405,
                serde_json::json!({
                    "error": format!("{method} is not allowed on {path}; use GET or HEAD")
                }),
            );
            assert_eq!(
                resp.header("allow"),
                Some("GET, HEAD, OPTIONS"),
                "{}",
                resp.request
            );
            assert_eq!(
                resp.header("access-control-allow-origin"),
                Some("*"),
                "{}",
                resp.request
            );
        }
    }
}

#[test]
fn method_405_shows_decoded_path_without_query() {
    let srv = TestService::start(&graph());
    assert_text(
        &srv.request("POST", "/api/v1/leaderboard/search?term=x&limit=y", &[]),
        405,
        r#"{"error":"POST is not allowed on /api/v1/leaderboard/search; use GET or HEAD"}"#,
    );
    assert_text(
        &srv.request("DELETE", "/api/v1/users/Bob%2Eeth/badges", &[]),
        405,
        r#"{"error":"DELETE is not allowed on /api/v1/users/Bob.eth/badges; use GET or HEAD"}"#,
    );
}

#[test]
fn unknown_path_for_any_method_is_404() {
    let srv = TestService::start(&graph());
    for method in ["GET", "POST", "PUT", "DELETE", "OPTIONS", "FOO"] {
        let resp = srv.request(method, "/api/v1/nope", &[]);
        assert_unknown_path(&resp, "/api/v1/nope");
        assert_eq!(
            resp.header("access-control-allow-origin"),
            Some("*"),
            "{}",
            resp.request
        );
        let resp = srv.request(method, "/api/v1/lists/1/details/", &[]);
        assert_unknown_path(&resp, "/api/v1/lists/1/details/");
    }
    let head = srv.head("/api/v1/nope");
    assert_eq!(head.status, 404);
    assert!(head.body.is_empty());
}

#[test]
fn error_precedence() {
    let srv = TestService::start(&graph());
    // Unknown path before method.
    assert_unknown_path(
        &srv.request("POST", "/api/v1/lists/abc/details/?limit=x", &[]),
        "/api/v1/lists/abc/details/",
    );
    // Method before token_id and parameters.
    assert_text(
        &srv.request("POST", "/api/v1/lists/abc/followers?limit=x", &[]),
        405,
        r#"{"error":"POST is not allowed on /api/v1/lists/abc/followers; use GET or HEAD"}"#,
    );
    assert_eq!(
        srv.request("PUT", "/api/v1/users/0x123/notifications?opcode=x", &[])
            .status,
        405
    );
    // token_id before parameters.
    assert_invalid_list_id(&srv.get("/api/v1/lists/0/followers?limit=x&offset=y"));
    assert_invalid_list_id(&srv.get("/api/v1/lists/abc/details?cache=%FF"));
    // Parameters before unknown list / account.
    assert_400(
        &srv.get("/api/v1/lists/999/followers?limit=x"),
        "limit must be a non-negative integer",
    );
    assert_400(
        &srv.get("/api/v1/lists/5/followers?offset=-1"),
        "offset must be a non-negative integer",
    );
    assert_400(
        &srv.get("/api/v1/users/0x123/notifications?start=x"),
        "start must be a non-negative integer",
    );
    assert_400(
        &srv.get("/api/v1/users/nobody.eth/followers?limit=1001"),
        "limit must be at most 1000",
    );
    // And then the unknown account / list.
    assert_bad_ens(&srv.get("/api/v1/users/0x123/followers?limit=5"));
    assert_no_user_found(&srv.get("/api/v1/lists/99/followers?limit=5"));
    // List 8's user is the zero address.
    assert_no_user_found(&srv.get("/api/v1/lists/8/stats?cache=fresh"));
    // Parameters before a list without a user too.
    assert_400(
        &srv.get("/api/v1/lists/8/followers?limit=x"),
        "limit must be a non-negative integer",
    );
}

#[test]
fn invalid_utf8_in_path_is_400() {
    let srv = TestService::start(&graph());
    for target in [
        "/api/v1/users/%FF/badges",
        "/api/v1/users/%C3/followers",
        "/api/v1/users/abc%E2%82/notifications",
    ] {
        assert_text(
            &srv.get(target),
            400,
            r#"{"response":"path is not valid UTF-8"}"#,
        );
    }
}

/// A token_id must be digits only: one that is not even UTF-8 is an
/// invalid list id on each of the three list endpoints, before parameters.
#[test]
fn invalid_utf8_token_id_is_invalid_list_id() {
    let srv = TestService::start(&graph());
    for target in [
        "/api/v1/lists/%FF/details",
        "/api/v1/lists/1%C0%AF/details",
        "/api/v1/lists/%FF/badges",
        "/api/v1/lists/1%C0%AF/badges",
        "/api/v1/lists/%FF/followers",
        "/api/v1/lists/%E2%82/followers?limit=x&sort=%FF",
    ] {
        assert_invalid_list_id(&srv.get(target));
        // HEAD answers as GET, without a body.
        let head = srv.head(target);
        assert_eq!(head.status, 400, "{}", head.request);
        assert!(head.body.is_empty(), "{}", head.request);
    }
}

#[test]
fn valid_utf8_names_in_path() {
    let srv = TestService::start(&graph());
    // "ÇAROL.ETH" -> C by Unicode lower-casing.
    let resp = srv.get("/api/v1/users/%C3%87AROL.ETH/followers");
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(addresses(&resp.json(), "followers"), vec![A.to_owned()]);
    // "☃.eth" is valid UTF-8 but unknown.
    assert_bad_ens(&srv.get("/api/v1/users/%E2%98%83.eth/badges"));
}

#[test]
fn no_5xx_on_odd_input() {
    let srv = TestService::start(&graph());
    let long = "9".repeat(5000);
    for target in [
        format!("/api/v1/lists/{long}/details"),
        format!("/api/v1/users/{long}/badges"),
        format!("/api/v1/leaderboard/search?term={long}&limit={long}"),
        "/api/v1/users/%00/badges".to_owned(),
        "/api/v1/leaderboard/search?term=%00".to_owned(),
        "/api/v1/leaderboard/search?term=%".to_owned(),
        "/api/v1/leaderboard/search?term=%G1".to_owned(),
        "/api/v1/leaderboard/search?=&&&=x&term".to_owned(),
        "/api/v1/users/0x1111111111111111111111111111111111111111/notifications?start=99999999999999999999".to_owned(),
    ] {
        let resp = srv.get(&target);
        assert!(resp.status < 500, "{}: {} {}", resp.request, resp.status, resp.text());
        assert_json_content_type(&resp);
    }
}
