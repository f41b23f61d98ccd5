//! Steps 2 and 3 of the pipeline: [`parse`] a routed request into a
//! typed [`Request`] (the 400s, in the API reference's order), read a
//! POST's body into it, and [`Request::resolve`] its subjects in one graph
//! (the 404s).

use crate::error::ApiError;
use crate::graph::Graph;

use super::{Batch, Call, Params, Query, Resolved, Route};

/// A fully validated request, ready to resolve.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    pub call: Call,
    /// `cache=fresh`: skip the cache lookup (the answer is still stored).
    pub fresh: bool,
}

/// Validates path parameters and query for `route`, in the API reference's
/// error order: path parameters in path order, then query parameters in the
/// order of the endpoint's row, then `cache` (32 ignores its query, `cache`
/// included: its body comes next, `Request::with_body`).
pub fn parse(route: &Route, raw_query: &str, max_limit: u64) -> Result<Request, ApiError> {
    let q = Query::parse(raw_query);
    let call = Call::parse(route, &q, max_limit)?;
    let fresh = match call.params {
        Params::Batch(_) => true,
        _ => q.fresh()?,
    };
    Ok(Request { call, fresh })
}

impl Request {
    /// Whether the answer may be cached (32's may not).
    pub fn cacheable(&self) -> bool {
        !matches!(self.call.params, Params::Batch(_))
    }

    /// Reads a request body into the call that takes one (32): 400 when
    /// it is not a JSON array of at most 1,000 items. Others ignore it.
    pub fn with_body(mut self, body: &[u8]) -> Result<Request, ApiError> {
        if let Params::Batch(batch) = &mut self.call.params {
            *batch = Batch::parse(body)?;
        }
        Ok(self)
    }

    /// Looks the subjects up in `g` (`Call::resolve`).
    pub fn resolve(self, g: &Graph) -> Result<Resolved, ApiError> {
        self.call.resolve(g)
    }
}

#[cfg(test)]
mod tests {
    use super::super::endpoints::tests::{example_path, path_with};
    use super::super::endpoints::Segment;
    use super::super::{route, AccountRef, Endpoint, FollowerSort, Subjects};
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
        let (Subjects::Account(AccountRef::Name(name)), Params::Followers(p)) =
            (r.call.subjects, r.call.params)
        else {
            panic!("not a name and followers' parameters")
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
