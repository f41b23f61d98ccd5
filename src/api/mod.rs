//! The engine's request layer: from a request target to a JSON body, with
//! no HTTP types. One pipeline, run in this order (the HTTP layer runs the
//! steps apart: it parses before it reads the live snapshot, and its cache
//! sits between resolving and rendering):
//!
//! 1. [`route`]: the raw path to an endpoint and its decoded path
//!    parameters (`None`: an unknown path, the caller's 404);
//! 2. [`parse`]: path parameters and query to a typed [`Request`], the
//!    400s in the API reference's order (docs/openapi.yaml);
//! 3. [`Request::resolve`]: accounts and lists looked up in one graph, the
//!    404s; the [`Resolved`] call is what the response cache keys on;
//! 4. [`render`]: the body.
//!
//! [`answer`] runs all four ([`answer_with_body`] with a POST's body).
//!
//! Files: `request.rs` holds steps 2 and 3 (parse, body, resolve) over
//! `call.rs`;
//! `endpoints.rs` is the table of endpoints (names, methods, paths,
//! query parameters) and the routing derived from it; `query_string.rs`
//! decodes and reads parameters; `subject.rs` parses and resolves
//! `{addressOrENS}` and `{token_id}`; `rows.rs` writes the JSON pieces
//! several endpoints share. Then one file per family of endpoints, each
//! with its parameters, their parsing and its rendering: `details.rs` (1,
//! 10), `badges.rs` (2, 3), `leaderboard.rs` (4, 38-40),
//! `notifications.rs` (5), `followers.rs` (6, 7, 19-22),
//! `account.rs` (8, 9, 13, 14), `stats.rs` (11, 12, 41), `following.rs`
//! (15-18, 27, 28), `states.rs` (30-33), `tags.rs` (34-37), `search.rs`
//! (23-26, 29), `openapi.rs` (42), `recommended.rs` (43-47), `qr.rs` (48).
//!
//! An endpoint is a row of the table (`endpoints.rs`: name, method, path,
//! query parameters, family, payload). Its [`Call`] is derived from the
//! row (`call.rs`: the path's subjects, the payload's parameters, their
//! parsing, resolving, paging and cache accounting); [`render_into`]
//! dispatches by family, and within a family by what the call holds.

mod account;
mod badges;
mod call;
mod details;
pub mod endpoints;
mod followers;
mod following;
mod leaderboard;
mod notifications;
pub mod openapi;
pub mod openapi_rule;
mod qr;
pub mod query_string;
mod recommended;
mod request;
pub mod rows;
mod search;
mod states;
mod stats;
pub mod subject;
mod tags;

pub use crate::graph::query::{Exclude, FollowerSort};
pub use call::{Call, Params, Resolved, Subjects};
pub use endpoints::{route, Endpoint, Family, Method, Operation, Payload, Route};
pub use followers::{FollowerParams, LatestParams};
pub use following::FollowingParams;
pub use leaderboard::{RankedParams, SearchParams};
pub use notifications::{Interval, NotificationParams};
pub use qr::{
    check_url_prefix as check_qr_url_prefix, DEFAULT_URL_PREFIX as DEFAULT_QR_URL_PREFIX,
};
pub use query_string::{percent_decode, Query};
pub use request::{parse, Request};
pub use search::CommonParams;
pub use states::{Batch, MAX_BATCH_ITEMS};
pub use subject::{parse_token_id, resolve_list, Account, AccountRef, ListUser, TokenId};
pub use tags::TagSearch;

use crate::error::ApiError;
use crate::graph::Graph;

/// The offset from which a page counts as possibly slow to render
/// (`Call::may_render_long`): below it, even a filtered page's skipped
/// items take too little time to hold up the requests queued behind it.
pub const DEEP_OFFSET: usize = 10_000;

/// What an answer depends on besides the graph and the call: the clock
/// and the server's settings.
#[derive(Clone, Copy, Debug)]
pub struct RenderEnv<'a> {
    /// The default end of the notifications window (epoch milliseconds).
    pub now_ms: i64,
    /// 48's payload prefix (`--qr-url-prefix`).
    pub qr_url_prefix: &'a str,
}

impl RenderEnv<'static> {
    /// At `now_ms`, with the default settings.
    pub fn at(now_ms: i64) -> RenderEnv<'static> {
        RenderEnv {
            now_ms,
            qr_url_prefix: DEFAULT_QR_URL_PREFIX,
        }
    }
}

/// The body answering `call`.
pub fn render(g: &Graph, call: &Resolved, env: RenderEnv<'_>) -> String {
    let mut body = String::new();
    render_into(g, call, env, &mut body);
    body
}

/// Who of a set an endpoint leaves out: the list variants of followers
/// (7) and search within followers (24), and the following of 15 and 17,
/// leave out members whose record carries block or mute.
fn exclude(e: Endpoint) -> Exclude {
    match e {
        Endpoint::ListFollowers
        | Endpoint::ListSearchFollowers
        | Endpoint::UserFollowing
        | Endpoint::ListFollowing => Exclude::BlockedOrMuted,
        _ => Exclude::Nobody,
    }
}

/// `render`, appended to `out` (a server reuses one buffer per thread):
/// dispatched by the row's family, then by what the call holds; a family
/// branches on its endpoints only where two share subjects and payload.
pub fn render_into(g: &Graph, call: &Resolved, env: RenderEnv<'_>, out: &mut String) {
    let (e, s, p) = (call.endpoint, &call.subjects, &call.params);
    match (e.family(), s, p) {
        (Family::Details, Subjects::Account(a), _) => details::render(g, a, out),
        (Family::Details, Subjects::List(l), _) => details::render(g, &Account::of(g, l.user), out),
        (Family::Badges, _, _) => badges::render(g, s.target(), out),
        (Family::Leaderboard, _, Params::Search(p)) => leaderboard::render_search(g, p, out),
        (Family::Leaderboard, _, Params::Ranked(p)) => leaderboard::render_ranked(g, p, out),
        (Family::Leaderboard, _, _) if e == Endpoint::LeaderboardAll => {
            leaderboard::render_all(g, out)
        }
        (Family::Leaderboard, _, _) => leaderboard::render_count(g, out),
        (Family::Notifications, _, Params::Notifications(p)) => {
            notifications::render(g, s.target(), p, env.now_ms, out)
        }
        (Family::Followers, _, Params::Followers(p)) => {
            followers::render(g, s.target(), p, exclude(e), out)
        }
        (Family::Followers, _, Params::Latest(p)) => {
            followers::render_latest(g, s.target(), p, out)
        }
        (Family::Account, Subjects::List(l), _) => account::render_list(g, l, out),
        (Family::Account, Subjects::Account(a), _) => match e {
            Endpoint::UserLists => account::render_lists(g, a, out),
            Endpoint::UserPrimaryList => account::render_primary_list(g, a, out),
            _ => account::render_user(g, a, out),
        },
        (Family::Stats, Subjects::Account(a), _) => stats::render_user(g, a, out),
        (Family::Stats, Subjects::List(l), _) => stats::render_list(g, l, out),
        (Family::Stats, _, _) => stats::render_global(g, out),
        (Family::Following, _, Params::Following(p)) => {
            following::render(g, s.row(g), p, exclude(e), out)
        }
        (Family::Following, _, _) if e == Endpoint::ExportState => {
            following::render_export(g, s.row(g), out)
        }
        (Family::Following, _, _) => following::render_addresses(g, s.row(g), out),
        (Family::States, Subjects::Accounts(a, b), _) => {
            states::render_follower_state(g, a, b, out)
        }
        (Family::States, Subjects::List(l), Params::Batch(batch)) => {
            states::render_batch(g, l, batch, out)
        }
        (Family::States, Subjects::ListAccount(l, a), _) if e == Endpoint::ButtonState => {
            states::render_button_state(g, l, a, out)
        }
        (Family::States, Subjects::ListAccount(l, a), _) => {
            states::render_list_follower_state(g, l, a, out)
        }
        (Family::Tags, Subjects::List(l), Params::Tags(search)) if !search.tags.is_empty() => {
            tags::render_tag_search(g, l.token_id, s.row(g), search, out)
        }
        (Family::Tags, _, _) => {
            let subject = match s {
                Subjects::Account(a) => tags::Subject::Account(a),
                Subjects::List(l) => tags::Subject::List(l.token_id),
                _ => return,
            };
            if matches!(e, Endpoint::UserTaggedAs | Endpoint::ListTaggedAs) {
                tags::render_tagged_as(g, subject, s.target(), out)
            } else {
                tags::render_tags(g, subject, s.row(g), out)
            }
        }
        (Family::Search, Subjects::AccountLeader(a, leader), Params::Common(p)) => {
            search::render_common(g, a.id, leader.as_ref().and_then(|l| l.id), p, out)
        }
        (Family::Search, _, Params::Search(p))
            if matches!(
                e,
                Endpoint::UserSearchFollowers | Endpoint::ListSearchFollowers
            ) =>
        {
            search::render_followers(g, s.target(), &p.term, p.limit, p.offset, exclude(e), out)
        }
        (Family::Search, _, Params::Search(p)) => {
            search::render_following(g, s.row(g), &p.term, p.limit, p.offset, out)
        }
        (Family::OpenApi, _, _) => openapi::render(out),
        (Family::Recommended, Subjects::None, Params::Latest(p)) => {
            recommended::render_discover(g, p, out)
        }
        (Family::Recommended, _, Params::Latest(p)) => {
            let viewer = match s {
                Subjects::Account(a) => recommended::viewer(Some(a), None),
                Subjects::List(l) => recommended::viewer(None, Some(l)),
                _ => None,
            };
            let Some(viewer) = viewer else { return };
            if matches!(
                e,
                Endpoint::UserRecommendedDetails | Endpoint::ListRecommendedDetails
            ) {
                recommended::render_details(g, viewer, p, out)
            } else {
                recommended::render(g, viewer, p, out)
            }
        }
        (Family::Qr, Subjects::Account(a), _) => qr::render(g, a, env.qr_url_prefix, out),
        // Combinations the table never parses into.
        _ => debug_assert!(false, "no renderer for {e:?} with {s:?} and {p:?}"),
    }
}

/// The whole pipeline for one request target: the body, or the error
/// answering it (an unknown path is 404 with the decoded path).
pub fn answer(
    g: &Graph,
    raw_path: &str,
    raw_query: &str,
    max_limit: u64,
    env: RenderEnv<'_>,
) -> Result<String, ApiError> {
    let (decoded, route) = route(raw_path);
    let route = route.ok_or(ApiError::UnknownPath(decoded))?;
    let call = parse(&route, raw_query, max_limit)?.resolve(g)?;
    Ok(render(g, &call, env))
}

/// [`answer`] for a POST and its body (32): the body is read after the
/// path and query, before the subjects resolve, as the HTTP layer does
/// (its 413 for an oversized body aside). Other endpoints ignore it.
pub fn answer_with_body(
    g: &Graph,
    raw_path: &str,
    raw_query: &str,
    body: &[u8],
    max_limit: u64,
    env: RenderEnv<'_>,
) -> Result<String, ApiError> {
    let (decoded, route) = route(raw_path);
    let route = route.ok_or(ApiError::UnknownPath(decoded))?;
    let call = (parse(&route, raw_query, max_limit)?.with_body(body)?).resolve(g)?;
    Ok(render(g, &call, env))
}
