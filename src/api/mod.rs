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
//! Files: `request.rs` holds steps 2 and 3 (parse, body, resolve);
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
//! (23-26, 29), `openapi.rs` (42).
//!
//! An endpoint is a row of the table, a [`Call`] variant holding its path
//! subjects and parameters, and an arm in each `match` on `Call` below
//! (the compiler lists them).

mod account;
mod badges;
mod details;
pub mod endpoints;
mod followers;
mod following;
mod leaderboard;
mod notifications;
pub mod openapi;
pub mod query_string;
mod request;
pub mod rows;
mod search;
mod states;
mod stats;
pub mod subject;
mod tags;

pub use crate::graph::query::{Exclude, FollowerSort};
pub use endpoints::{route, Endpoint, Family, Method, Operation, Route};
pub use followers::{FollowerParams, LatestParams};
pub use following::FollowingParams;
pub use leaderboard::{RankedParams, SearchParams};
pub use notifications::{Interval, NotificationParams};
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

/// What a request asks: one variant per endpoint, holding its path
/// subjects (`A` for an `{addressOrENS}`, `L` for a `{token_id}`, in path
/// order) and its typed parameters. As parsed the subjects are references
/// (`Call`); resolved, they are accounts and list users ([`Resolved`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Call<A = AccountRef, L = TokenId> {
    ListDetails(L),
    UserBadges(A),
    ListBadges(L),
    LeaderboardSearch(SearchParams),
    UserNotifications(A, NotificationParams),
    UserFollowers(A, FollowerParams),
    ListFollowers(L, FollowerParams),
    UserAccount(A),
    ListAccount(L),
    UserDetails(A),
    UserStats(A),
    ListStats(L),
    UserLists(A),
    UserPrimaryList(A),
    LeaderboardRanked(RankedParams),
    LeaderboardCount,
    LeaderboardAll,
    GlobalStats,
    UserFollowing(A, FollowingParams),
    UserAllFollowing(A, FollowingParams),
    ListFollowing(L, FollowingParams),
    ListAllFollowing(L, FollowingParams),
    UserAllFollowers(A, FollowerParams),
    ListAllFollowers(L, FollowerParams),
    UserLatestFollowers(A, LatestParams),
    ListLatestFollowers(L, LatestParams),
    UserSearchFollowers(A, SearchParams),
    ListSearchFollowers(L, SearchParams),
    UserSearchFollowing(A, SearchParams),
    ListSearchFollowing(L, SearchParams),
    ListFollowingAddresses(L),
    ExportState(L),
    /// 29: A, then `leader` (`None` as parsed: A itself; resolved, always
    /// `Some`, so that both spellings share a cache entry).
    UserCommonFollowers(A, Option<A>, CommonParams),
    FollowerState(A, A),
    ButtonState(L, A),
    ListFollowerState(L, A),
    /// 32: the body's items stay as parsed (each resolves, or not, when
    /// rendered); never cached.
    ButtonStateBatch(L, Batch),
    UserTags(A),
    ListTags(L, TagSearch),
    UserTaggedAs(A),
    ListTaggedAs(L),
    /// 42: the OpenAPI document, the same for every snapshot.
    OpenApi,
}

/// A call whose subjects are resolved in one graph: what `render` answers
/// and the response cache keys on.
pub type Resolved = Call<Account, ListUser>;

impl<A, L> Call<A, L> {
    pub fn endpoint(&self) -> Endpoint {
        match self {
            Call::ListDetails(..) => Endpoint::ListDetails,
            Call::UserBadges(..) => Endpoint::UserBadges,
            Call::ListBadges(..) => Endpoint::ListBadges,
            Call::LeaderboardSearch(..) => Endpoint::LeaderboardSearch,
            Call::UserNotifications(..) => Endpoint::UserNotifications,
            Call::UserFollowers(..) => Endpoint::UserFollowers,
            Call::ListFollowers(..) => Endpoint::ListFollowers,
            Call::UserAccount(..) => Endpoint::UserAccount,
            Call::ListAccount(..) => Endpoint::ListAccount,
            Call::UserDetails(..) => Endpoint::UserDetails,
            Call::UserStats(..) => Endpoint::UserStats,
            Call::ListStats(..) => Endpoint::ListStats,
            Call::UserLists(..) => Endpoint::UserLists,
            Call::UserPrimaryList(..) => Endpoint::UserPrimaryList,
            Call::LeaderboardRanked(..) => Endpoint::LeaderboardRanked,
            Call::LeaderboardCount => Endpoint::LeaderboardCount,
            Call::LeaderboardAll => Endpoint::LeaderboardAll,
            Call::GlobalStats => Endpoint::GlobalStats,
            Call::UserFollowing(..) => Endpoint::UserFollowing,
            Call::UserAllFollowing(..) => Endpoint::UserAllFollowing,
            Call::ListFollowing(..) => Endpoint::ListFollowing,
            Call::ListAllFollowing(..) => Endpoint::ListAllFollowing,
            Call::UserAllFollowers(..) => Endpoint::UserAllFollowers,
            Call::ListAllFollowers(..) => Endpoint::ListAllFollowers,
            Call::UserLatestFollowers(..) => Endpoint::UserLatestFollowers,
            Call::ListLatestFollowers(..) => Endpoint::ListLatestFollowers,
            Call::UserSearchFollowers(..) => Endpoint::UserSearchFollowers,
            Call::ListSearchFollowers(..) => Endpoint::ListSearchFollowers,
            Call::UserSearchFollowing(..) => Endpoint::UserSearchFollowing,
            Call::ListSearchFollowing(..) => Endpoint::ListSearchFollowing,
            Call::UserCommonFollowers(..) => Endpoint::UserCommonFollowers,
            Call::ListFollowingAddresses(..) => Endpoint::ListFollowingAddresses,
            Call::ExportState(..) => Endpoint::ExportState,
            Call::FollowerState(..) => Endpoint::FollowerState,
            Call::ButtonState(..) => Endpoint::ButtonState,
            Call::ListFollowerState(..) => Endpoint::ListFollowerState,
            Call::ButtonStateBatch(..) => Endpoint::ButtonStateBatch,
            Call::UserTags(..) => Endpoint::UserTags,
            Call::ListTags(..) => Endpoint::ListTags,
            Call::UserTaggedAs(..) => Endpoint::UserTaggedAs,
            Call::ListTaggedAs(..) => Endpoint::ListTaggedAs,
            Call::OpenApi => Endpoint::OpenApi,
        }
    }

    /// Whether rendering may hold a thread for many milliseconds:
    /// `/leaderboard/all`, which grows with the whole graph (tens of MB at
    /// a million accounts), and any page from `DEEP_OFFSET` on. A filtered
    /// page or a search reads every item it skips, so its cost grows with
    /// the offset; other answers are bounded by one account's or list's
    /// sets and their largest pages.
    pub fn may_render_long(&self) -> bool {
        matches!(self, Call::LeaderboardAll)
            || self.page().is_some_and(|(_, offset)| offset >= DEEP_OFFSET)
    }

    /// `limit` (`None`: no limit) and `offset`, for endpoints that page.
    pub fn page(&self) -> Option<(Option<usize>, usize)> {
        match self {
            Call::LeaderboardSearch(p) => Some((Some(p.limit), p.offset)),
            Call::UserNotifications(_, p) => Some((Some(p.limit), p.offset)),
            Call::UserFollowers(_, p)
            | Call::ListFollowers(_, p)
            | Call::UserAllFollowers(_, p)
            | Call::ListAllFollowers(_, p) => Some((Some(p.limit), p.offset)),
            Call::UserLatestFollowers(_, p) | Call::ListLatestFollowers(_, p) => {
                Some((Some(p.limit), p.offset))
            }
            Call::UserSearchFollowers(_, p)
            | Call::ListSearchFollowers(_, p)
            | Call::UserSearchFollowing(_, p)
            | Call::ListSearchFollowing(_, p) => Some((Some(p.limit), p.offset)),
            Call::UserCommonFollowers(_, _, p) => Some((p.limit, p.offset)),
            Call::LeaderboardRanked(p) => Some((Some(p.limit), p.offset)),
            Call::UserFollowing(_, p)
            | Call::UserAllFollowing(_, p)
            | Call::ListFollowing(_, p)
            | Call::ListAllFollowing(_, p) => Some((Some(p.page.limit), p.page.offset)),
            Call::ListFollowingAddresses(..)
            | Call::ExportState(..)
            | Call::FollowerState(..)
            | Call::ButtonState(..)
            | Call::ListFollowerState(..)
            | Call::ButtonStateBatch(..)
            | Call::UserTags(..)
            | Call::ListTags(..)
            | Call::UserTaggedAs(..)
            | Call::ListTaggedAs(..) => None,
            Call::ListDetails(..)
            | Call::UserBadges(..)
            | Call::ListBadges(..)
            | Call::UserAccount(..)
            | Call::ListAccount(..)
            | Call::UserDetails(..)
            | Call::UserStats(..)
            | Call::ListStats(..)
            | Call::UserLists(..)
            | Call::UserPrimaryList(..)
            | Call::LeaderboardCount
            | Call::LeaderboardAll
            | Call::GlobalStats
            | Call::OpenApi => None,
        }
    }

    /// Heap bytes held by the parameters, for the response cache's bound.
    pub fn heap_bytes(&self) -> usize {
        match self {
            Call::LeaderboardSearch(p) => p.heap_bytes(),
            Call::UserNotifications(_, p) => p.heap_bytes(),
            Call::UserFollowers(_, p)
            | Call::ListFollowers(_, p)
            | Call::UserAllFollowers(_, p)
            | Call::ListAllFollowers(_, p) => p.heap_bytes(),
            Call::UserLatestFollowers(..) | Call::ListLatestFollowers(..) => 0,
            Call::UserSearchFollowers(_, p)
            | Call::ListSearchFollowers(_, p)
            | Call::UserSearchFollowing(_, p)
            | Call::ListSearchFollowing(_, p) => p.heap_bytes(),
            Call::UserCommonFollowers(_, _, p) => p.heap_bytes(),
            Call::UserFollowing(_, p)
            | Call::UserAllFollowing(_, p)
            | Call::ListFollowing(_, p)
            | Call::ListAllFollowing(_, p) => p.heap_bytes(),
            Call::ListFollowingAddresses(..)
            | Call::ExportState(..)
            | Call::FollowerState(..)
            | Call::ButtonState(..)
            | Call::ListFollowerState(..) => 0,
            Call::ButtonStateBatch(_, batch) => batch.heap_bytes(),
            Call::ListTags(_, search) => search.heap_bytes(),
            Call::UserTags(..) | Call::UserTaggedAs(..) | Call::ListTaggedAs(..) => 0,
            Call::ListDetails(..)
            | Call::UserBadges(..)
            | Call::ListBadges(..)
            | Call::UserAccount(..)
            | Call::ListAccount(..)
            | Call::UserDetails(..)
            | Call::UserStats(..)
            | Call::ListStats(..)
            | Call::UserLists(..)
            | Call::UserPrimaryList(..)
            | Call::LeaderboardRanked(..)
            | Call::LeaderboardCount
            | Call::LeaderboardAll
            | Call::GlobalStats
            | Call::OpenApi => 0,
        }
    }
}

/// The body answering `call`. `now_ms` is the default end of the
/// notifications window.
pub fn render(g: &Graph, call: &Resolved, now_ms: i64) -> String {
    let mut body = String::new();
    render_into(g, call, now_ms, &mut body);
    body
}

/// `render`, appended to `out` (a server reuses one buffer per thread).
pub fn render_into(g: &Graph, call: &Resolved, now_ms: i64, out: &mut String) {
    match call {
        Call::ListDetails(list) => details::render(g, &Account::of(g, list.user), out),
        Call::UserBadges(account) => badges::render(g, account.id, out),
        Call::ListBadges(list) => badges::render(g, Some(list.user), out),
        Call::LeaderboardSearch(p) => leaderboard::render_search(g, p, out),
        Call::UserNotifications(account, p) => notifications::render(g, account.id, p, now_ms, out),
        Call::UserFollowers(account, p) => {
            followers::render(g, account.id, p, Exclude::Nobody, out)
        }
        Call::ListFollowers(list, p) => {
            followers::render(g, Some(list.user), p, Exclude::BlockedOrMuted, out)
        }
        Call::UserAccount(account) => account::render_user(g, account, out),
        Call::ListAccount(list) => account::render_list(g, list, out),
        Call::UserDetails(account) => details::render(g, account, out),
        Call::UserStats(account) => stats::render_user(g, account, out),
        Call::ListStats(list) => stats::render_list(g, list, out),
        Call::UserLists(account) => account::render_lists(g, account, out),
        Call::UserPrimaryList(account) => account::render_primary_list(g, account, out),
        Call::LeaderboardRanked(p) => leaderboard::render_ranked(g, p, out),
        Call::LeaderboardCount => leaderboard::render_count(g, out),
        Call::LeaderboardAll => leaderboard::render_all(g, out),
        Call::GlobalStats => stats::render_global(g, out),
        Call::UserFollowing(account, p) => following::render(
            g,
            g.following_row(account.id),
            p,
            Exclude::BlockedOrMuted,
            out,
        ),
        Call::UserAllFollowing(account, p) => {
            following::render(g, g.following_row(account.id), p, Exclude::Nobody, out)
        }
        Call::ListFollowing(list, p) => following::render(
            g,
            g.list_records_row(list.token_id),
            p,
            Exclude::BlockedOrMuted,
            out,
        ),
        Call::ListAllFollowing(list, p) => following::render(
            g,
            g.list_records_row(list.token_id),
            p,
            Exclude::Nobody,
            out,
        ),
        Call::UserAllFollowers(account, p) => {
            followers::render(g, account.id, p, Exclude::Nobody, out)
        }
        Call::ListAllFollowers(list, p) => {
            followers::render(g, Some(list.user), p, Exclude::Nobody, out)
        }
        Call::UserLatestFollowers(account, p) => followers::render_latest(g, account.id, p, out),
        Call::ListLatestFollowers(list, p) => followers::render_latest(g, Some(list.user), p, out),
        Call::UserSearchFollowers(account, p) => search::render_followers(
            g,
            account.id,
            &p.term,
            p.limit,
            p.offset,
            Exclude::Nobody,
            out,
        ),
        Call::ListSearchFollowers(list, p) => search::render_followers(
            g,
            Some(list.user),
            &p.term,
            p.limit,
            p.offset,
            Exclude::BlockedOrMuted,
            out,
        ),
        Call::UserSearchFollowing(account, p) => search::render_following(
            g,
            g.following_row(account.id),
            &p.term,
            p.limit,
            p.offset,
            out,
        ),
        Call::ListSearchFollowing(list, p) => search::render_following(
            g,
            g.list_records_row(list.token_id),
            &p.term,
            p.limit,
            p.offset,
            out,
        ),
        Call::UserCommonFollowers(account, leader, p) => {
            search::render_common(g, account.id, leader.as_ref().and_then(|l| l.id), p, out)
        }
        Call::ListFollowingAddresses(list) => {
            following::render_addresses(g, g.list_records_row(list.token_id), out)
        }
        Call::ExportState(list) => {
            following::render_export(g, g.list_records_row(list.token_id), out)
        }
        Call::FollowerState(a, b) => states::render_follower_state(g, a, b, out),
        Call::ButtonState(list, a) => states::render_button_state(g, list, a, out),
        Call::ListFollowerState(list, a) => states::render_list_follower_state(g, list, a, out),
        Call::ButtonStateBatch(list, batch) => states::render_batch(g, list, batch, out),
        Call::UserTags(account) => {
            let row = g.following_row(account.id);
            tags::render_tags(g, tags::Subject::Account(account), row, out)
        }
        Call::ListTags(list, search) if search.tags.is_empty() => tags::render_tags(
            g,
            tags::Subject::List(list.token_id),
            g.list_records_row(list.token_id),
            out,
        ),
        Call::ListTags(list, search) => tags::render_tag_search(
            g,
            list.token_id,
            g.list_records_row(list.token_id),
            search,
            out,
        ),
        Call::UserTaggedAs(account) => {
            tags::render_tagged_as(g, tags::Subject::Account(account), account.id, out)
        }
        Call::ListTaggedAs(list) => {
            tags::render_tagged_as(g, tags::Subject::List(list.token_id), Some(list.user), out)
        }
        Call::OpenApi => openapi::render(out),
    }
}

/// The whole pipeline for one request target: the body, or the error
/// answering it (an unknown path is 404 with the decoded path).
pub fn answer(
    g: &Graph,
    raw_path: &str,
    raw_query: &str,
    max_limit: u64,
    now_ms: i64,
) -> Result<String, ApiError> {
    let (decoded, route) = route(raw_path);
    let route = route.ok_or(ApiError::UnknownPath(decoded))?;
    let call = parse(&route, raw_query, max_limit)?.resolve(g)?;
    Ok(render(g, &call, now_ms))
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
    now_ms: i64,
) -> Result<String, ApiError> {
    let (decoded, route) = route(raw_path);
    let route = route.ok_or(ApiError::UnknownPath(decoded))?;
    let call = (parse(&route, raw_query, max_limit)?.with_body(body)?).resolve(g)?;
    Ok(render(g, &call, now_ms))
}
