//! Huge parameters: with the URI and head limits raised, the engine
//! itself gets 10,000 tags, a 60 KB search term and 5,000 repeated
//! parameters, and answers them normally.

use crate::fixtures::*;
use crate::support::*;

/// With the URI and head limits raised, the engine itself gets 10,000
/// tags, a 60 KB search term and 5,000 repeated parameters, and answers
/// them normally.
#[test]
fn huge_parameters_reach_the_engine_when_limits_allow() {
    let srv = TestServer::start_args(
        &graph(),
        &[
            "--max-uri-bytes",
            "4194304",
            "--max-header-bytes",
            "4194304",
        ],
    );
    let tags: Vec<String> = (0..10_000).map(|i| format!("t{i}")).collect();
    let mut tags = tags.join(",");
    tags.push_str(",top8");
    let resp = srv.get(&format!("/api/v1/users/{D}/followers?tags={tags}"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_json_content_type(&resp);
    let followers = addresses(&resp.json(), "followers");
    assert_eq!(followers.len(), 3, "{followers:?}");

    // hyper itself refuses request targets over 65,534 bytes (414), so
    // ~60 KB is the most that can reach the engine.
    let resp = srv.get(&format!(
        "/api/v1/leaderboard/search?term={}",
        "a".repeat(60_000)
    ));
    assert_json(
        &resp,
        200,
        serde_json::json!({"last_updated": CREATED_AT, "results": []}),
    );

    let resp = srv.get(&format!(
        "/api/v1/leaderboard/search?term={}",
        "%C3%A9".repeat(10_000)
    ));
    assert_eq!(resp.status, 200, "{}", resp.text());

    let repeated = "limit=1&".repeat(5_000);
    let resp = srv.get(&format!("/api/v1/lists/1/followers?{repeated}limit=x"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(addresses(&resp.json(), "followers").len(), 1);

    let resp = srv.get(&format!("/api/v1/users/{}/badges", "%FF".repeat(20_000)));
    assert_400(&resp, "path is not valid UTF-8");
    assert_eq!(srv.get("/health").status, 200);
}
