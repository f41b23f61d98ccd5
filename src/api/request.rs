//! Steps 2 and 3 of the pipeline: [`parse`] a routed request into a
//! typed [`Request`] (the 400s, in the API reference's order), read a
//! POST's body into it, and [`Request::resolve`] its subjects in one graph
//! (the 404s).

use crate::error::ApiError;
use crate::graph::Graph;

use super::{
    resolve_list, Batch, Call, CommonParams, Endpoint, FollowerParams, FollowingParams,
    LatestParams, NotificationParams, Query, RankedParams, Resolved, Route, SearchParams,
    TagSearch,
};

/// A fully validated request, ready to resolve.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    pub call: Call,
    /// `cache=fresh`: skip the cache lookup (the answer is still stored).
    pub fresh: bool,
}

/// Validates path parameters and query for `route`, in the API reference's
/// error order: path parameters in path order, then query parameters in the
/// order of the endpoint's row.
pub fn parse(route: &Route, raw_query: &str, max_limit: u64) -> Result<Request, ApiError> {
    let q = Query::parse(raw_query);
    // Arguments are evaluated left to right: path parameters first.
    let call = match route.endpoint {
        Endpoint::ListDetails => Call::ListDetails(route.token_id(0)?),
        Endpoint::UserBadges => Call::UserBadges(route.account(0)?),
        Endpoint::ListBadges => Call::ListBadges(route.token_id(0)?),
        Endpoint::LeaderboardSearch => {
            Call::LeaderboardSearch(SearchParams::parse(&q, 50, max_limit)?)
        }
        Endpoint::UserNotifications => {
            Call::UserNotifications(route.account(0)?, NotificationParams::parse(&q, max_limit)?)
        }
        Endpoint::UserFollowers => {
            Call::UserFollowers(route.account(0)?, FollowerParams::parse(&q, max_limit)?)
        }
        Endpoint::ListFollowers => {
            Call::ListFollowers(route.token_id(0)?, FollowerParams::parse(&q, max_limit)?)
        }
        Endpoint::UserAccount => Call::UserAccount(route.account(0)?),
        Endpoint::ListAccount => Call::ListAccount(route.token_id(0)?),
        Endpoint::UserDetails => Call::UserDetails(route.account(0)?),
        Endpoint::UserStats => {
            let account = route.account(0)?;
            // `live` is taken (a value that is not UTF-8 is a 400) but
            // changes nothing.
            q.text("live")?;
            Call::UserStats(account)
        }
        Endpoint::ListStats => Call::ListStats(route.token_id(0)?),
        Endpoint::UserLists => Call::UserLists(route.account(0)?),
        Endpoint::UserPrimaryList => Call::UserPrimaryList(route.account(0)?),
        Endpoint::LeaderboardRanked => Call::LeaderboardRanked(RankedParams::parse(&q, max_limit)?),
        Endpoint::LeaderboardCount => Call::LeaderboardCount,
        Endpoint::LeaderboardAll => Call::LeaderboardAll,
        Endpoint::GlobalStats => Call::GlobalStats,
        Endpoint::UserFollowing => {
            Call::UserFollowing(route.account(0)?, FollowingParams::parse(&q, max_limit)?)
        }
        Endpoint::UserAllFollowing => {
            Call::UserAllFollowing(route.account(0)?, FollowingParams::parse(&q, max_limit)?)
        }
        Endpoint::ListFollowing => {
            Call::ListFollowing(route.token_id(0)?, FollowingParams::parse(&q, max_limit)?)
        }
        Endpoint::ListAllFollowing => {
            Call::ListAllFollowing(route.token_id(0)?, FollowingParams::parse(&q, max_limit)?)
        }
        Endpoint::UserAllFollowers => {
            Call::UserAllFollowers(route.account(0)?, FollowerParams::parse(&q, max_limit)?)
        }
        Endpoint::ListAllFollowers => {
            Call::ListAllFollowers(route.token_id(0)?, FollowerParams::parse(&q, max_limit)?)
        }
        Endpoint::UserLatestFollowers => {
            Call::UserLatestFollowers(route.account(0)?, LatestParams::parse(&q, max_limit)?)
        }
        Endpoint::ListLatestFollowers => {
            Call::ListLatestFollowers(route.token_id(0)?, LatestParams::parse(&q, max_limit)?)
        }
        Endpoint::UserSearchFollowers => {
            Call::UserSearchFollowers(route.account(0)?, SearchParams::parse(&q, 10, max_limit)?)
        }
        Endpoint::ListSearchFollowers => {
            Call::ListSearchFollowers(route.token_id(0)?, SearchParams::parse(&q, 10, max_limit)?)
        }
        Endpoint::UserSearchFollowing => {
            Call::UserSearchFollowing(route.account(0)?, SearchParams::parse(&q, 10, max_limit)?)
        }
        Endpoint::ListSearchFollowing => {
            Call::ListSearchFollowing(route.token_id(0)?, SearchParams::parse(&q, 10, max_limit)?)
        }
        Endpoint::UserCommonFollowers => {
            let account = route.account(0)?;
            let (leader, p) = CommonParams::parse(&q, max_limit)?;
            Call::UserCommonFollowers(account, leader, p)
        }
        Endpoint::ListFollowingAddresses => Call::ListFollowingAddresses(route.token_id(0)?),
        Endpoint::ExportState => Call::ExportState(route.token_id(0)?),
        Endpoint::FollowerState => Call::FollowerState(route.account(0)?, route.account(1)?),
        Endpoint::ButtonState => Call::ButtonState(route.token_id(0)?, route.account(1)?),
        Endpoint::ListFollowerState => {
            Call::ListFollowerState(route.token_id(0)?, route.account(1)?)
        }
        // Its query, `cache` included, is ignored; the body comes next
        // (`Request::with_body`).
        Endpoint::UserTags => Call::UserTags(route.account(0)?),
        Endpoint::ListTags => Call::ListTags(route.token_id(0)?, TagSearch::parse(&q)?),
        Endpoint::UserTaggedAs => Call::UserTaggedAs(route.account(0)?),
        Endpoint::ListTaggedAs => Call::ListTaggedAs(route.token_id(0)?),
        Endpoint::OpenApi => Call::OpenApi,
        Endpoint::ButtonStateBatch => {
            let call = Call::ButtonStateBatch(route.token_id(0)?, Batch::default());
            return Ok(Request { call, fresh: true });
        }
    };
    Ok(Request {
        call,
        fresh: q.fresh()?,
    })
}

impl Request {
    /// Whether the answer may be cached (32's may not).
    pub fn cacheable(&self) -> bool {
        !matches!(self.call, Call::ButtonStateBatch(..))
    }

    /// Reads a request body into the call that takes one (32): 400 when
    /// it is not a JSON array of at most 1,000 items. Others ignore it.
    pub fn with_body(mut self, body: &[u8]) -> Result<Request, ApiError> {
        if let Call::ButtonStateBatch(_, batch) = &mut self.call {
            *batch = Batch::parse(body)?;
        }
        Ok(self)
    }

    /// Looks the subjects up in `g`, in path order: unknown names give 404
    /// "ENS name not valid or does not exist", lists that do not exist or
    /// have no user 404 "No User Found".
    pub fn resolve(self, g: &Graph) -> Result<Resolved, ApiError> {
        let list = |token_id| resolve_list(g, token_id);
        Ok(match self.call {
            Call::ListDetails(l) => Call::ListDetails(list(l)?),
            Call::UserBadges(a) => Call::UserBadges(a.resolve(g)?),
            Call::ListBadges(l) => Call::ListBadges(list(l)?),
            Call::LeaderboardSearch(p) => Call::LeaderboardSearch(p),
            Call::UserNotifications(a, p) => Call::UserNotifications(a.resolve(g)?, p),
            Call::UserFollowers(a, p) => Call::UserFollowers(a.resolve(g)?, p),
            Call::ListFollowers(l, p) => Call::ListFollowers(list(l)?, p),
            Call::UserAccount(a) => Call::UserAccount(a.resolve(g)?),
            Call::ListAccount(l) => Call::ListAccount(list(l)?),
            Call::UserDetails(a) => Call::UserDetails(a.resolve(g)?),
            Call::UserStats(a) => Call::UserStats(a.resolve(g)?),
            Call::ListStats(l) => Call::ListStats(list(l)?),
            Call::UserLists(a) => Call::UserLists(a.resolve(g)?),
            Call::UserPrimaryList(a) => Call::UserPrimaryList(a.resolve(g)?),
            Call::LeaderboardRanked(p) => Call::LeaderboardRanked(p),
            Call::LeaderboardCount => Call::LeaderboardCount,
            Call::LeaderboardAll => Call::LeaderboardAll,
            Call::GlobalStats => Call::GlobalStats,
            Call::UserFollowing(a, p) => Call::UserFollowing(a.resolve(g)?, p),
            Call::UserAllFollowing(a, p) => Call::UserAllFollowing(a.resolve(g)?, p),
            Call::ListFollowing(l, p) => Call::ListFollowing(list(l)?, p),
            Call::ListAllFollowing(l, p) => Call::ListAllFollowing(list(l)?, p),
            Call::UserAllFollowers(a, p) => Call::UserAllFollowers(a.resolve(g)?, p),
            Call::ListAllFollowers(l, p) => Call::ListAllFollowers(list(l)?, p),
            Call::UserLatestFollowers(a, p) => Call::UserLatestFollowers(a.resolve(g)?, p),
            Call::ListLatestFollowers(l, p) => Call::ListLatestFollowers(list(l)?, p),
            Call::UserSearchFollowers(a, p) => Call::UserSearchFollowers(a.resolve(g)?, p),
            Call::ListSearchFollowers(l, p) => Call::ListSearchFollowers(list(l)?, p),
            Call::UserSearchFollowing(a, p) => Call::UserSearchFollowing(a.resolve(g)?, p),
            Call::ListSearchFollowing(l, p) => Call::ListSearchFollowing(list(l)?, p),
            Call::UserCommonFollowers(a, leader, p) => {
                let a = a.resolve(g)?;
                let leader = match leader {
                    Some(l) => l.resolve(g).map_err(|_| ApiError::InvalidQueryAddress)?,
                    None => a,
                };
                Call::UserCommonFollowers(a, Some(leader), p)
            }
            Call::ListFollowingAddresses(l) => Call::ListFollowingAddresses(list(l)?),
            Call::ExportState(l) => Call::ExportState(list(l)?),
            Call::FollowerState(a, b) => Call::FollowerState(a.resolve(g)?, b.resolve(g)?),
            Call::ButtonState(l, a) => Call::ButtonState(list(l)?, a.resolve(g)?),
            Call::ListFollowerState(l, a) => Call::ListFollowerState(list(l)?, a.resolve(g)?),
            Call::ButtonStateBatch(l, batch) => Call::ButtonStateBatch(list(l)?, batch),
            Call::UserTags(a) => Call::UserTags(a.resolve(g)?),
            Call::ListTags(l, search) => Call::ListTags(list(l)?, search),
            Call::UserTaggedAs(a) => Call::UserTaggedAs(a.resolve(g)?),
            Call::ListTaggedAs(l) => Call::ListTaggedAs(list(l)?),
            Call::OpenApi => Call::OpenApi,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::endpoints::tests::{example_path, path_with};
    use super::super::endpoints::Segment;
    use super::super::{route, AccountRef, FollowerSort};
    use super::*;

    fn parsed(path: &str, query: &str) -> Result<Request, ApiError> {
        parse(&route(path).1.expect("a known path"), query, 1000)
    }

    #[test]
    fn path_errors_come_before_query_errors() {
        assert_eq!(
            parsed("/api/v1/lists/0/followers", "limit=x"),
            Err(ApiError::InvalidListId)
        );
        assert_eq!(
            parsed("/api/v1/users/%FF/badges", "cache=%FF"),
            Err(ApiError::PathNotUtf8)
        );
        assert_eq!(
            parsed("/api/v1/lists/%FF/badges", ""),
            Err(ApiError::InvalidListId)
        );
        let r = parsed(
            "/api/v1/users/Bob.eth/followers",
            "cache=fresh&sort=followers",
        )
        .unwrap();
        assert!(r.fresh);
        assert_eq!(r.call.endpoint(), Endpoint::UserFollowers);
        let Call::UserFollowers(AccountRef::Name(name), p) = r.call else {
            panic!("{:?}", r.call)
        };
        assert_eq!(name, "bob.eth");
        assert_eq!(p.sort, FollowerSort::Followers);
    }

    /// Each row's query parameters are read, in the row's order; others
    /// are ignored whatever they hold.
    #[test]
    fn query_parameters_answer_in_table_order() {
        let bad = |name: &str| ApiError::BadParameter(format!("{name} is not valid UTF-8"));
        let every: Vec<&str> = Endpoint::ALL
            .iter()
            .flat_map(|e| e.query_params().iter().copied())
            .collect();
        for e in Endpoint::ALL {
            let path = example_path(e);
            let taken = e.query_params();
            for (i, first) in taken.iter().enumerate() {
                assert_eq!(
                    parsed(&path, &format!("{first}=%FF")).err(),
                    Some(bad(first))
                );
                for later in &taken[i + 1..] {
                    let q = format!("{later}=%FF&{first}=%FF");
                    assert_eq!(parsed(&path, &q).err(), Some(bad(first)), "{e:?} {q}");
                }
            }
            for other in every.iter().filter(|p| !taken.contains(p)) {
                let q = format!("{other}=%FF");
                assert_eq!(parsed(&path, &q).map(|r| r.call.endpoint()), Ok(e), "{q}");
            }
        }
    }

    /// Path parameters are parsed as the row's path says.
    #[test]
    fn path_parameters_as_the_table_says() {
        for e in Endpoint::ALL {
            let has = |kind: Segment| e.shape().segments().contains(&kind);
            let address = "0x0000000000000000000000000000000000000001";
            assert_eq!(
                parsed(&path_with(e, "x", address), "").err(),
                has(Segment::TokenId).then_some(ApiError::InvalidListId),
                "{e:?}"
            );
            assert_eq!(
                parsed(&path_with(e, "1", "%FF"), "").err(),
                has(Segment::Account).then_some(ApiError::PathNotUtf8),
                "{e:?}"
            );
        }
    }

    /// Every endpoint that takes `offset` counts as possibly long from
    /// `DEEP_OFFSET` on (its render is handed off), and none below it but
    /// `/leaderboard/all`.
    #[test]
    fn pages_from_the_deep_offset_on_may_render_long() {
        use super::super::DEEP_OFFSET;
        for e in Endpoint::ALL {
            let route = route(&example_path(e)).1.unwrap();
            let long = |query: &str| parse(&route, query, 1000).map(|r| r.call.may_render_long());
            assert_eq!(long(""), Ok(e == Endpoint::LeaderboardAll), "{e:?}");
            if e.query_params().contains(&"offset") {
                let below = format!("offset={}", DEEP_OFFSET - 1);
                assert_eq!(long(&below), Ok(false), "{e:?}");
                assert_eq!(long(&format!("offset={DEEP_OFFSET}")), Ok(true), "{e:?}");
            }
        }
    }

    #[test]
    fn limits_respect_the_maximum() {
        for e in Endpoint::ALL {
            let route = route(&example_path(e)).1.unwrap();
            for max in [0, 1, 3, 1000] {
                if let Ok(Some(limit)) =
                    parse(&route, "", max).map(|r| r.call.page().and_then(|(limit, _)| limit))
                {
                    assert!(limit as u64 <= max, "{e:?} {limit} > {max}");
                }
                let r = parse(&route, &format!("limit={}", max + 1), max);
                if e.query_params().contains(&"limit") {
                    let msg = format!("limit must be at most {max}");
                    assert_eq!(r, Err(ApiError::BadParameter(msg)));
                } else {
                    assert!(r.is_ok(), "{e:?}");
                }
            }
        }
    }
}
