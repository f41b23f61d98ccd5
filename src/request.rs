//! Turning a request target (raw path + raw query) into a typed request:
//! routing, percent-decoding, parameter validation and defaults, in the
//! order API.md fixes for errors. Knows nothing of HTTP servers.

use crate::error::ApiError;
use crate::snapshot::{parse_address, Address};
use std::borrow::Cow;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    ListDetails,
    UserBadges,
    ListBadges,
    LeaderboardSearch,
    UserNotifications,
    UserFollowers,
    ListFollowers,
}

impl Endpoint {
    pub const ALL: [Endpoint; 7] = [
        Endpoint::ListDetails,
        Endpoint::UserBadges,
        Endpoint::ListBadges,
        Endpoint::LeaderboardSearch,
        Endpoint::UserNotifications,
        Endpoint::UserFollowers,
        Endpoint::ListFollowers,
    ];

    /// A short stable name (metrics labels, cache keys).
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::ListDetails => "list_details",
            Endpoint::UserBadges => "user_badges",
            Endpoint::ListBadges => "list_badges",
            Endpoint::LeaderboardSearch => "leaderboard_search",
            Endpoint::UserNotifications => "user_notifications",
            Endpoint::UserFollowers => "user_followers",
            Endpoint::ListFollowers => "list_followers",
        }
    }
}

/// A matched path: the endpoint and its percent-decoded path parameter
/// (bytes: whether they are UTF-8 is checked after the method).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub endpoint: Endpoint,
    /// `token_id` or `addressOrENS`, decoded ("" for search).
    pub param: Vec<u8>,
}

/// Percent-decodes `%XX` sequences (others kept as they are); `plus` also
/// turns `+` into a space, as form encoding does. Text with nothing to
/// decode (the usual case) is borrowed, not copied.
pub fn percent_decode(raw: &[u8], plus: bool) -> Cow<'_, [u8]> {
    if !raw.iter().any(|&c| c == b'%' || (plus && c == b'+')) {
        return Cow::Borrowed(raw);
    }
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'%' if i + 2 < raw.len() => match (hex(raw[i + 1]), hex(raw[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    Cow::Owned(out)
}

/// Decodes the raw request path segment by segment and matches it against
/// the seven endpoints. Returns the decoded path (for messages; bytes that
/// are not UTF-8 shown as U+FFFD) and the route, `None` for unknown paths.
pub fn route(raw_path: &str) -> (String, Option<Route>) {
    let body = raw_path.strip_prefix('/').unwrap_or(raw_path);
    let segments: Vec<Cow<'_, [u8]>> = body
        .split('/')
        .map(|raw| percent_decode(raw.as_bytes(), false))
        .collect();
    let mut decoded = Vec::with_capacity(raw_path.len());
    for segment in &segments {
        decoded.push(b'/');
        decoded.extend_from_slice(segment);
    }
    let decoded = String::from_utf8_lossy(&decoded).into_owned();
    let s: Vec<&[u8]> = segments.iter().map(|c| &**c).collect();
    let found: Option<(Endpoint, &[u8])> = match s.as_slice() {
        [b"api", b"v1", rest @ ..] => match rest {
            [b"lists", id, b"details"] => Some((Endpoint::ListDetails, id)),
            [b"users", who, b"badges"] => Some((Endpoint::UserBadges, who)),
            [b"lists", id, b"badges"] => Some((Endpoint::ListBadges, id)),
            [b"leaderboard", b"search"] => Some((Endpoint::LeaderboardSearch, b"")),
            [b"users", who, b"notifications"] => Some((Endpoint::UserNotifications, who)),
            [b"users", who, b"followers"] => Some((Endpoint::UserFollowers, who)),
            [b"lists", id, b"followers"] => Some((Endpoint::ListFollowers, id)),
            _ => None,
        },
        _ => None,
    };
    let route = found
        .filter(|(ep, p)| *ep == Endpoint::LeaderboardSearch || !p.is_empty())
        .map(|(endpoint, p)| Route {
            endpoint,
            param: p.to_vec(),
        });
    (decoded, route)
}

impl Endpoint {
    /// The literal segments of the endpoint's path (`None`: the parameter).
    fn shape(self) -> &'static [Option<&'static str>] {
        const P: Option<&str> = None;
        match self {
            Endpoint::ListDetails => &[Some("api"), Some("v1"), Some("lists"), P, Some("details")],
            Endpoint::UserBadges => &[Some("api"), Some("v1"), Some("users"), P, Some("badges")],
            Endpoint::ListBadges => &[Some("api"), Some("v1"), Some("lists"), P, Some("badges")],
            Endpoint::LeaderboardSearch => {
                &[Some("api"), Some("v1"), Some("leaderboard"), Some("search")]
            }
            Endpoint::UserNotifications => &[
                Some("api"),
                Some("v1"),
                Some("users"),
                P,
                Some("notifications"),
            ],
            Endpoint::UserFollowers => {
                &[Some("api"), Some("v1"), Some("users"), P, Some("followers")]
            }
            Endpoint::ListFollowers => {
                &[Some("api"), Some("v1"), Some("lists"), P, Some("followers")]
            }
        }
    }

    /// Whether the raw path can be this endpoint's, without decoding or
    /// allocating: each endpoint's filter asks this first, so only the
    /// matching one pays for `route`. A path with `%` escapes may hide a
    /// literal segment, so it always answers yes.
    pub fn may_match(self, raw_path: &str) -> bool {
        if raw_path.contains('%') {
            return true;
        }
        let Some(body) = raw_path.strip_prefix('/') else {
            return false;
        };
        let shape = self.shape();
        let mut segments = body.split('/');
        shape.iter().all(|want| match (want, segments.next()) {
            (Some(lit), Some(seg)) => *lit == seg,
            (None, Some(_)) => true,
            (_, None) => false,
        }) && segments.next().is_none()
    }
}

/// Decoded query pairs in request order (`application/x-www-form-urlencoded`).
#[derive(Clone, Debug, Default)]
pub struct Query<'a> {
    pairs: Vec<(Decoded<'a>, Decoded<'a>)>,
}

/// A decoded name or value, borrowed from the query when nothing needed
/// decoding.
type Decoded<'a> = Cow<'a, [u8]>;

impl<'a> Query<'a> {
    pub fn parse(raw: &'a str) -> Query<'a> {
        let pairs = raw
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|pair| {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                (
                    percent_decode(k.as_bytes(), true),
                    percent_decode(v.as_bytes(), true),
                )
            })
            .collect();
        Query { pairs }
    }

    /// The first occurrence's value, as UTF-8 text.
    fn text(&self, name: &str) -> Result<Option<&str>, ApiError> {
        match self.pairs.iter().find(|(k, _)| **k == *name.as_bytes()) {
            None => Ok(None),
            Some((_, v)) => std::str::from_utf8(v)
                .map(Some)
                .map_err(|_| ApiError::BadParameter(format!("{name} is not valid UTF-8"))),
        }
    }

    /// A non-negative decimal integer; missing or empty gives `None`.
    fn number(&self, name: &str) -> Result<Option<u64>, ApiError> {
        let Some(text) = self.text(name)? else {
            return Ok(None);
        };
        if text.is_empty() {
            return Ok(None);
        }
        let bad = || ApiError::BadParameter(format!("{name} must be a non-negative integer"));
        if !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        text.parse::<u64>().map(Some).map_err(|_| bad())
    }
}

fn trim_ascii(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii_whitespace())
}

/// An `addressOrENS` path parameter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AccountRef {
    Address(Address),
    /// A name, lower-cased.
    Name(String),
}

impl AccountRef {
    pub fn parse(text: &str) -> AccountRef {
        match parse_address(text) {
            Some(a) => AccountRef::Address(a),
            None => AccountRef::Name(text.to_lowercase()),
        }
    }
}

/// The subject of a request: an account, a list, or nothing (search).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Subject {
    None,
    Account(AccountRef),
    List(u64),
}

/// Parses a `token_id`: digits only, > 0, fits in u64.
pub fn parse_token_id(text: &str) -> Result<u64, ApiError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::InvalidListId);
    }
    match text.parse::<u64>() {
        Ok(id) if id > 0 => Ok(id),
        _ => Err(ApiError::InvalidListId),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interval {
    Hour,
    Day,
    Week,
    Month,
    All,
}

impl Interval {
    fn parse(text: &str) -> Interval {
        match text.to_ascii_lowercase().as_str() {
            "hour" => Interval::Hour,
            "day" => Interval::Day,
            "month" => Interval::Month,
            "all" => Interval::All,
            _ => Interval::Week,
        }
    }

    /// The window length in hours (`None` for `all`).
    pub fn hours(self) -> Option<i64> {
        match self {
            Interval::Hour => Some(1),
            Interval::Day => Some(24),
            Interval::Week => Some(168),
            Interval::Month => Some(720),
            Interval::All => None,
        }
    }

    pub fn summary(self) -> &'static str {
        match self {
            Interval::Hour => "1:00:00(hrs)",
            Interval::Day => "24:00:00(hrs)",
            Interval::Week => "168:00:00(hrs)",
            Interval::Month => "720:00:00(hrs)",
            Interval::All => "999:00:00(hrs)",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FollowerSort {
    Latest,
    Earliest,
    Followers,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NotificationParams {
    /// 1..=4, or `None` for any.
    pub opcode: Option<u8>,
    pub interval: Interval,
    /// End of the window in unix seconds; `None` is now. Ignored for `all`.
    pub start: Option<u64>,
    /// Exact tag; `None` for no filter.
    pub tag: Option<String>,
    pub limit: usize,
    pub offset: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FollowerParams {
    /// Tags to keep (any of them), sorted and de-duplicated; empty: no filter.
    pub tags: Vec<String>,
    pub sort: FollowerSort,
    pub limit: usize,
    pub offset: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Params {
    None,
    /// `term` trimmed and lower-cased; empty means no results.
    Search {
        term: String,
        limit: usize,
        offset: usize,
    },
    Notifications(NotificationParams),
    Followers(FollowerParams),
}

/// A fully validated request, ready for `query::resolve` and rendering.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    pub endpoint: Endpoint,
    pub subject: Subject,
    pub params: Params,
    /// `cache=fresh`: skip the cache lookup (the answer is still stored).
    #[doc(hidden)]
    pub fresh: bool,
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Validates path parameter and query for `route`, in API.md's error order:
/// `token_id`, then parameters in the order of the endpoint's table.
pub fn parse_request(route: &Route, raw_query: &str, max_limit: u64) -> Result<Request, ApiError> {
    use Endpoint::*;
    let subject = match route.endpoint {
        // A token_id is digits only: anything else, text that is not UTF-8
        // included, is an invalid list id.
        ListDetails | ListBadges | ListFollowers => Subject::List(parse_token_id(
            std::str::from_utf8(&route.param).map_err(|_| ApiError::InvalidListId)?,
        )?),
        UserBadges | UserNotifications | UserFollowers => Subject::Account(AccountRef::parse(
            std::str::from_utf8(&route.param).map_err(|_| ApiError::PathNotUtf8)?,
        )),
        LeaderboardSearch => Subject::None,
    };
    let q = Query::parse(raw_query);
    let limit = |default: u64| -> Result<usize, ApiError> {
        // A default above a lower configured maximum is lowered to it.
        let n = q.number("limit")?.unwrap_or(default.min(max_limit));
        if n > max_limit {
            return Err(ApiError::BadParameter(format!(
                "limit must be at most {max_limit}"
            )));
        }
        Ok(to_usize(n))
    };
    let offset = || -> Result<usize, ApiError> { Ok(to_usize(q.number("offset")?.unwrap_or(0))) };
    let params = match route.endpoint {
        ListDetails | UserBadges | ListBadges => Params::None,
        LeaderboardSearch => {
            let term = trim_ascii(q.text("term")?.unwrap_or("")).to_lowercase();
            let limit = limit(50)?;
            Params::Search {
                term,
                limit,
                offset: offset()?,
            }
        }
        UserNotifications => {
            let opcode = match q.number("opcode")? {
                Some(op @ 1..=4) => Some(op as u8),
                _ => None,
            };
            let interval = Interval::parse(q.text("interval")?.unwrap_or(""));
            let start = q.number("start")?;
            let tag = q.text("tag")?.filter(|t| !t.is_empty()).map(str::to_owned);
            let limit = limit(10)?;
            Params::Notifications(NotificationParams {
                opcode,
                interval,
                start: if interval == Interval::All {
                    None
                } else {
                    start
                },
                tag,
                limit,
                offset: offset()?,
            })
        }
        UserFollowers | ListFollowers => {
            let limit = limit(10)?;
            let offset = offset()?;
            let mut tags: Vec<String> = q
                .text("tags")?
                .unwrap_or("")
                .split(',')
                .map(trim_ascii)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
                .collect();
            tags.sort_unstable();
            tags.dedup();
            let sort = match q.text("sort")?.unwrap_or("").to_ascii_lowercase().as_str() {
                "earliest" => FollowerSort::Earliest,
                "followers" => FollowerSort::Followers,
                _ => FollowerSort::Latest,
            };
            Params::Followers(FollowerParams {
                tags,
                sort,
                limit,
                offset,
            })
        }
    };
    let fresh = q.text("cache")? == Some("fresh");
    Ok(Request {
        endpoint: route.endpoint,
        subject,
        params,
        fresh,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routed(path: &str) -> Option<Route> {
        route(path).1
    }

    #[test]
    fn routes_the_seven_paths_and_nothing_else() {
        assert_eq!(
            routed("/api/v1/lists/12/details").unwrap().endpoint,
            Endpoint::ListDetails
        );
        assert_eq!(
            routed("/api/v1/users/bob.eth/followers").unwrap().param,
            b"bob.eth"
        );
        assert_eq!(routed("/api/v1/users/a%2Fb/badges").unwrap().param, b"a/b");
        assert!(routed("/api/v1/leaderboard/search").is_some());
        for bad in [
            "/api/v1/lists/12/details/",
            "/api/v1//lists/12/details",
            "/api/v1/lists//details",
            "/api/v1/leaderboard/search/",
            "/api/v2/lists/1/details",
            "/",
        ] {
            assert!(routed(bad).is_none(), "{bad}");
        }
        let bad_utf8 = routed("/api/v1/users/%FF/badges").unwrap();
        assert_eq!(
            parse_request(&bad_utf8, "", 1000),
            Err(ApiError::PathNotUtf8)
        );
        assert_eq!(route("/a%20b/c").0, "/a b/c");
        assert_eq!(route("/api/v1/%FF").0, "/api/v1/\u{fffd}");
        assert!(route("/api/v1/%FF").1.is_none());
    }

    #[test]
    fn may_match_agrees_with_route() {
        for path in [
            "/api/v1/lists/12/details",
            "/api/v1/users/bob.eth/followers",
            "/api/v1/users//followers",
            "/api/v1/leaderboard/search",
            "/api/v1/leaderboard/search/",
            "/api/v1/lists/1/details/x",
            "/api/v1/lists/1",
            "/api/v1/%6Cists/1/details",
            "/",
            "",
        ] {
            let routed = route(path).1.map(|r| r.endpoint);
            for ep in Endpoint::ALL {
                if routed == Some(ep) {
                    assert!(ep.may_match(path), "{path} {ep:?}");
                }
            }
        }
        assert!(!Endpoint::ListDetails.may_match("/api/v1/lists/1/badges"));
        assert!(!Endpoint::UserFollowers.may_match("/api/v1/lists/1/followers"));
    }

    #[test]
    fn percent_decoding_keeps_broken_escapes() {
        assert_eq!(*percent_decode(b"a%2", false), *b"a%2");
        assert_eq!(*percent_decode(b"%zz%41", false), *b"%zzA");
        assert_eq!(*percent_decode(b"a+b%2B", true), *b"a b+");
        assert_eq!(*percent_decode(b"a+b", false), *b"a+b");
        assert_eq!(*percent_decode(b"%", true), *b"%");
        // Nothing to decode: borrowed, not copied.
        assert!(matches!(
            percent_decode(b"limit", true),
            Cow::Borrowed(b"limit")
        ));
        assert!(matches!(percent_decode(b"a+b", true), Cow::Owned(_)));
    }

    #[test]
    fn token_ids() {
        assert_eq!(parse_token_id("007"), Ok(7));
        assert_eq!(parse_token_id("18446744073709551615"), Ok(u64::MAX));
        for bad in [
            "0",
            "-1",
            "+1",
            "1.5",
            "abc",
            "18446744073709551616",
            "",
            " 1",
        ] {
            assert_eq!(parse_token_id(bad), Err(ApiError::InvalidListId), "{bad}");
        }
    }

    fn params(path: &str, query: &str) -> Result<Params, ApiError> {
        parse_request(&routed(path).unwrap(), query, 1000).map(|r| r.params)
    }

    #[test]
    fn numbers_defaults_and_errors() {
        let p = params("/api/v1/users/x/followers", "limit=&offset=007&limit=3").unwrap();
        assert_eq!(
            p,
            Params::Followers(FollowerParams {
                tags: vec![],
                sort: FollowerSort::Latest,
                limit: 10,
                offset: 7
            })
        );
        for (q, msg) in [
            ("limit=-1", "limit must be a non-negative integer"),
            ("limit=1e3", "limit must be a non-negative integer"),
            ("limit=%201", "limit must be a non-negative integer"),
            (
                "limit=18446744073709551616",
                "limit must be a non-negative integer",
            ),
            ("limit=1001", "limit must be at most 1000"),
            ("offset=x&limit=y", "limit must be a non-negative integer"),
            ("sort=%FF", "sort is not valid UTF-8"),
        ] {
            assert_eq!(
                params("/api/v1/users/x/followers", q),
                Err(ApiError::BadParameter(msg.into())),
                "{q}"
            );
        }
    }

    #[test]
    fn notification_parameters_in_table_order() {
        let err = params("/api/v1/users/x/notifications", "limit=a&start=b&opcode=c").unwrap_err();
        assert_eq!(
            err,
            ApiError::BadParameter("opcode must be a non-negative integer".into())
        );
        let p = params(
            "/api/v1/users/x/notifications",
            "opcode=9&interval=DAY&start=5&tag=",
        )
        .unwrap();
        assert_eq!(
            p,
            Params::Notifications(NotificationParams {
                opcode: None,
                interval: Interval::Day,
                start: Some(5),
                tag: None,
                limit: 10,
                offset: 0
            })
        );
    }

    #[test]
    fn followers_tags_and_search_term() {
        let p = params("/api/v1/lists/1/followers", "tags=b,+a+,,a&sort=EARLIEST").unwrap();
        let Params::Followers(f) = p else { panic!() };
        assert_eq!(f.tags, vec!["a".to_owned(), "b".to_owned()]);
        assert_eq!(f.sort, FollowerSort::Earliest);
        let p = params("/api/v1/leaderboard/search", "term=+Bob%20").unwrap();
        assert_eq!(
            p,
            Params::Search {
                term: "bob".into(),
                limit: 50,
                offset: 0
            }
        );
        assert_eq!(
            parse_request(
                &routed("/api/v1/lists/0/followers").unwrap(),
                "limit=x",
                1000
            ),
            Err(ApiError::InvalidListId)
        );
        let search = routed("/api/v1/leaderboard/search").unwrap();
        let p = parse_request(&search, "term=a", 3).unwrap().params;
        assert_eq!(
            p,
            Params::Search {
                term: "a".into(),
                limit: 3,
                offset: 0
            }
        );
    }
}
