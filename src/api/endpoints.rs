//! The table of endpoints, one row each, and what is derived from it: the
//! `Endpoint` and `Operation` enums, names (metrics labels, cache keys),
//! methods (the `Allow` text), path shapes and routing, query parameter names
//! in the API reference's order (docs/openapi.yaml; the order their 400s are
//! checked in).
//!
//! API rows' paths are the API reference's, under `/api/v1`. Operations rows
//! (health, readiness, metrics, snapshot facts, the test panic) are whole
//! paths outside the API: they count as `other` in metrics, take no parameters
//! and are matched on the raw path, not decoded (`/%68ealth` is an unknown
//! path).

use crate::error::ApiError;

use super::query_string::percent_decode_into;
use super::subject::{token_id_from_segment, AccountRef, TokenId};

/// Builds the enums and the row data from the table below; see there.
macro_rules! endpoints {
    (
        api {
            $( $variant:ident $name:literal $method:ident $path:literal
               [$($param:ident),*] $family:ident $payload:ident; )*
        }
        operations {
            $( $op:ident $op_method:ident $op_path:literal; )*
        }
    ) => {
        /// An endpoint of the API (a row of the table's `api` part).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Endpoint {
            $($variant),*
        }

        impl Endpoint {
            pub const COUNT: usize = [$(Endpoint::$variant),*].len();
            /// In table order, which is also each endpoint's `index`.
            pub const ALL: [Endpoint; Endpoint::COUNT] = [$(Endpoint::$variant),*];
        }

        static ROWS: [Row; Endpoint::COUNT] = [$(
            Row {
                name: $name,
                method: endpoints!(@method $method),
                path: $path,
                shape: Shape::parse($path),
                query: &[$(stringify!($param)),*],
                family: Family::$family,
                payload: Payload::$payload,
            }
        ),*];

        /// An operations endpoint (a row of the table's `operations` part).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Operation {
            $($op),*
        }

        impl Operation {
            pub const ALL: [Operation; [$(Operation::$op),*].len()] = [$(Operation::$op),*];

            pub const fn method(self) -> Method {
                match self {
                    $(Operation::$op => endpoints!(@method $op_method)),*
                }
            }

            pub const fn path(self) -> &'static str {
                match self {
                    $(Operation::$op => $op_path),*
                }
            }
        }
    };
    (@method GET) => { Method::Get };
    (@method POST) => { Method::Post };
}

endpoints! {
    api {
        // variant        name                 method path                               query parameters                                       family  payload
        ListDetails       "list_details"       GET "/lists/{token_id}/details"           [cache]                                                Details Plain;
        UserBadges        "user_badges"        GET "/users/{addressOrENS}/badges"        [cache]                                                Badges Plain;
        ListBadges        "list_badges"        GET "/lists/{token_id}/badges"            [cache]                                                Badges Plain;
        LeaderboardSearch "leaderboard_search" GET "/leaderboard/search"                 [term, limit, offset, cache]                           Leaderboard BoardSearch;
        UserNotifications "user_notifications" GET "/users/{addressOrENS}/notifications" [opcode, interval, start, tag, limit, offset, cache]   Notifications Notifications;
        UserFollowers     "user_followers"     GET "/users/{addressOrENS}/followers"     [limit, offset, tags, sort, cache]                     Followers Followers;
        ListFollowers     "list_followers"     GET "/lists/{token_id}/followers"         [limit, offset, tags, sort, cache]                     Followers Followers;
        UserAccount       "user_account"       GET "/users/{addressOrENS}/account"       [cache]                                                Account Plain;
        ListAccount       "list_account"       GET "/lists/{token_id}/account"           [cache]                                                Account Plain;
        UserDetails       "user_details"       GET "/users/{addressOrENS}/details"       [cache]                                                Details Plain;
        UserStats         "user_stats"         GET "/users/{addressOrENS}/stats"         [live, cache]                                          Stats Live;
        ListStats         "list_stats"         GET "/lists/{token_id}/stats"             [cache]                                                Stats Plain;
        UserLists         "user_lists"         GET "/users/{addressOrENS}/lists"         [cache]                                                Account Plain;
        UserPrimaryList   "user_primary_list"  GET "/users/{addressOrENS}/primary-list"  [cache]                                                Account Plain;
        LeaderboardRanked "leaderboard_ranked" GET "/leaderboard/ranked"                 [limit, offset, sort, direction, cache]                Leaderboard Ranked;
        LeaderboardCount  "leaderboard_count"  GET "/leaderboard/count"                  [cache]                                                Leaderboard Plain;
        LeaderboardAll    "leaderboard_all"    GET "/leaderboard/all"                    [cache]                                                Leaderboard Plain;
        GlobalStats       "stats"              GET "/stats"                              [cache]                                                Stats Plain;
        UserFollowing     "user_following"     GET "/users/{addressOrENS}/following"     [limit, offset, tags, sort, include, cache]            Following Following;
        UserAllFollowing  "user_all_following" GET "/users/{addressOrENS}/allFollowing"  [limit, offset, tags, sort, include, cache]            Following Following;
        ListFollowing     "list_following"     GET "/lists/{token_id}/following"         [limit, offset, tags, sort, include, cache]            Following Following;
        ListAllFollowing  "list_all_following" GET "/lists/{token_id}/allFollowing"      [limit, offset, tags, sort, include, cache]            Following Following;
        UserAllFollowers  "user_all_followers" GET "/users/{addressOrENS}/allFollowers"  [limit, offset, tags, sort, cache]                     Followers Followers;
        ListAllFollowers  "list_all_followers" GET "/lists/{token_id}/allFollowers"      [limit, offset, tags, sort, cache]                     Followers Followers;
        UserLatestFollowers "user_latest_followers" GET "/users/{addressOrENS}/latestFollowers" [limit, offset, cache]                          Followers Latest;
        ListLatestFollowers "list_latest_followers" GET "/lists/{token_id}/latestFollowers" [limit, offset, cache]                              Followers Latest;
        UserSearchFollowers "user_search_followers" GET "/users/{addressOrENS}/searchFollowers" [term, limit, offset, cache]                    Search Search;
        ListSearchFollowers "list_search_followers" GET "/lists/{token_id}/searchFollowers" [term, limit, offset, cache]                        Search Search;
        UserSearchFollowing "user_search_following" GET "/users/{addressOrENS}/searchFollowing" [term, limit, offset, cache]                    Search Search;
        ListSearchFollowing "list_search_following" GET "/lists/{token_id}/searchFollowing" [term, limit, offset, cache]                        Search Search;
        ListFollowingAddresses "list_all_following_addresses" GET "/lists/{token_id}/allFollowingAddresses" [cache]                        Following Plain;
        ExportState       "export_state"       GET "/exportState/{token_id}"             [cache]                                                Following Plain;
        UserCommonFollowers "user_common_followers" GET "/users/{addressOrENS}/commonFollowers" [leader, term, limit, offset, cache]            Search Common;
        FollowerState     "follower_state"     GET "/users/{addressOrENS}/{addressOrENS2}/followerState" [cache]                                States Plain;
        ButtonState       "button_state"       GET "/lists/{token_id}/{addressOrENS}/buttonState" [cache]                                       States Plain;
        ListFollowerState "list_follower_state" GET "/lists/{token_id}/{addressOrENS}/followerState" [cache]                                    States Plain;
        ButtonStateBatch  "button_state_batch" POST "/lists/{token_id}/buttonStateBatch" []                                                    States Batch;
        UserTags          "user_tags"          GET "/users/{addressOrENS}/tags"          [cache]                                                Tags Plain;
        ListTags          "list_tags"          GET "/lists/{token_id}/tags"              [include, cache]                                       Tags Tags;
        UserTaggedAs      "user_tagged_as"     GET "/users/{addressOrENS}/taggedAs"      [cache]                                                Tags Plain;
        ListTaggedAs      "list_tagged_as"     GET "/lists/{token_id}/taggedAs"          [cache]                                                Tags Plain;
        OpenApi           "openapi"            GET "/openapi.json"                       [cache]                                                OpenApi Plain;
        UserRecommended   "user_recommended"   GET "/users/{addressOrENS}/recommended"   [limit, offset, cache]                                 Recommended Page;
        ListRecommended   "list_recommended"   GET "/lists/{token_id}/recommended"       [limit, offset, cache]                                 Recommended Page;
        UserRecommendedDetails "user_recommended_details" GET "/users/{addressOrENS}/recommended/details" [limit, offset, cache]                Recommended Page;
        ListRecommendedDetails "list_recommended_details" GET "/lists/{token_id}/recommended/details" [limit, offset, cache]                    Recommended Page;
        Discover          "discover"           GET "/discover"                           [limit, offset, cache]                                 Recommended Page;
        UserQr            "user_qr"            GET "/users/{addressOrENS}/qr"            [cache]                                                Qr Plain;
    }
    operations {
        // variant  method path
        Health      GET "/health";
        Ready       GET "/ready";
        Metrics     GET "/metrics";
        Snapshot    GET "/snapshot";
        Version     GET "/version";
        DebugPanic  GET "/debug/panic";
    }
}

/// The path every API row's path is under.
pub const API_PREFIX: &str = "/api/v1";
const PREFIX_SEGMENTS: [&[u8]; 2] = [b"api", b"v1"];

/// Most segments of an API row's path (`/lists/{token_id}/{addressOrENS}/buttonState`).
pub const MAX_SEGMENTS: usize = 4;
/// Most path parameters of an API row.
pub const MAX_PARAMS: usize = 2;

/// The methods an endpoint answers, besides OPTIONS (a CORS preflight on
/// any endpoint's path answers 204).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// GET and HEAD.
    Get,
    /// POST alone.
    Post,
}

impl Method {
    /// The `Allow` and `Access-Control-Allow-Methods` value.
    pub const fn allowed(self) -> &'static str {
        match self {
            Method::Get => "GET, HEAD, OPTIONS",
            Method::Post => "POST, OPTIONS",
        }
    }

    /// The methods a 405's text suggests.
    pub const fn usable(self) -> &'static str {
        match self {
            Method::Get => "GET or HEAD",
            Method::Post => "POST",
        }
    }

    /// The 405 of a request with `method` on `path`, which takes `self`.
    pub fn not_allowed(self, method: &str, path: String) -> crate::error::ApiError {
        crate::error::ApiError::MethodNotAllowed {
            method: method.to_owned(),
            path,
            allow: self.allowed(),
            usable: self.usable(),
        }
    }

    /// Whether a request with this method is answered (OPTIONS aside).
    pub fn accepts(self, method: &str) -> bool {
        match self {
            Method::Get => method == "GET" || method == "HEAD",
            Method::Post => method == "POST",
        }
    }
}

/// The module (`api/<family>.rs`) that parses and renders an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    Details,
    Badges,
    Leaderboard,
    Notifications,
    Followers,
    Account,
    Stats,
    Following,
    States,
    Tags,
    Search,
    OpenApi,
    Recommended,
    Qr,
}

impl Family {
    /// The `Content-Type` of its 200 answers (errors are JSON).
    pub fn content_type(self) -> &'static str {
        match self {
            Family::Qr => "image/svg+xml; charset=utf-8",
            _ => "application/json",
        }
    }
}

/// What an endpoint's query (or body) parses into beside its path
/// subjects: the kind of its `Params` (`call.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Payload {
    /// Nothing but `cache`.
    Plain,
    /// `live`, read (a value that is not UTF-8 is a 400) but changing
    /// nothing.
    Live,
    /// The leaderboard's search: `term`, `limit` (default 50), `offset`.
    BoardSearch,
    /// A search within a set: `term`, `limit` (default 10), `offset`.
    Search,
    Notifications,
    Followers,
    Latest,
    /// `limit` (default 10) and `offset` alone.
    Page,
    Ranked,
    Following,
    /// `leader` (a subject), `term`, `limit`, `offset`.
    Common,
    /// `include`: the tags to search.
    Tags,
    /// The POST body's items.
    Batch,
}

/// One segment of an endpoint path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment {
    Literal(&'static str),
    /// `{token_id}`.
    TokenId,
    /// `{addressOrENS}` or `{addressOrENS2}`.
    Account,
}

/// An endpoint path split into segments (parsed at compile time).
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    segments: [Segment; MAX_SEGMENTS],
    len: usize,
}

impl Shape {
    /// Splits `/a/{token_id}/b`; a row's path that is malformed, too long
    /// or has too many parameters fails the build.
    const fn parse(path: &'static str) -> Shape {
        assert!(
            !path.is_empty() && path.as_bytes()[0] == b'/',
            "an endpoint path starts with /"
        );
        let mut segments = [Segment::Literal(""); MAX_SEGMENTS];
        let mut len = 0;
        let mut params = 0;
        let mut rest = path.split_at(1).1;
        loop {
            let bytes = rest.as_bytes();
            let mut end = 0;
            while end < bytes.len() && bytes[end] != b'/' {
                end += 1;
            }
            let (segment, tail) = rest.split_at(end);
            assert!(len < MAX_SEGMENTS, "an endpoint path has too many segments");
            segments[len] = if str_eq(segment, "{token_id}") {
                params += 1;
                Segment::TokenId
            } else if str_eq(segment, "{addressOrENS}") || str_eq(segment, "{addressOrENS2}") {
                params += 1;
                Segment::Account
            } else {
                assert!(
                    !segment.is_empty() && segment.as_bytes()[0] != b'{',
                    "an empty segment or an unknown path parameter"
                );
                Segment::Literal(segment)
            };
            len += 1;
            if end == bytes.len() {
                break;
            }
            rest = tail.split_at(1).1;
        }
        assert!(
            params <= MAX_PARAMS,
            "an endpoint path has too many parameters"
        );
        Shape { segments, len }
    }

    pub fn segments(&self) -> &[Segment] {
        &self.segments[..self.len]
    }

    /// Whether decoded path segments (after `/api/v1`) have this shape: the
    /// literals equal, the parameters not empty.
    fn matches(&self, path: &[&[u8]]) -> bool {
        path.len() == self.len
            // The last segment tells most endpoints apart.
            && self.segments().iter().zip(path).rev().all(|(want, got)| match want {
                Segment::Literal(text) => text.as_bytes() == *got,
                Segment::TokenId | Segment::Account => !got.is_empty(),
            })
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

struct Row {
    name: &'static str,
    method: Method,
    path: &'static str,
    shape: Shape,
    query: &'static [&'static str],
    family: Family,
    payload: Payload,
}

impl Endpoint {
    fn row(self) -> &'static Row {
        &ROWS[self.index()]
    }

    /// The position in `ALL`.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// A short stable name (metrics labels, cache keys).
    pub fn name(self) -> &'static str {
        self.row().name
    }

    pub fn method(self) -> Method {
        self.row().method
    }

    /// The API reference's path, without `/api/v1`.
    pub fn path(self) -> &'static str {
        self.row().path
    }

    pub fn shape(self) -> &'static Shape {
        &self.row().shape
    }

    /// The query parameters taken, in the API reference's order: when several
    /// are bad, the first of them answers.
    pub fn query_params(self) -> &'static [&'static str] {
        self.row().query
    }

    pub fn family(self) -> Family {
        self.row().family
    }

    pub fn payload(self) -> Payload {
        self.row().payload
    }

    /// The request path of this endpoint with `params` (already encoded)
    /// as its path parameters, in path order: how benches and tests name
    /// an endpoint rather than copying its path.
    pub fn target(self, params: &[&str]) -> String {
        let mut path = API_PREFIX.to_owned();
        let mut params = params.iter();
        for s in self.shape().segments() {
            path.push('/');
            match s {
                Segment::Literal(text) => path.push_str(text),
                Segment::TokenId | Segment::Account => {
                    path.push_str(params.next().copied().unwrap_or_default())
                }
            }
        }
        path
    }
}

impl Operation {
    /// The operations endpoint at exactly this raw path.
    pub fn at(raw_path: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|op| op.path() == raw_path)
    }
}

/// A matched API path: the endpoint and its percent-decoded path
/// parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub endpoint: Endpoint,
    /// In path order; bytes, because whether they are UTF-8 is checked
    /// after the method.
    params: [Vec<u8>; MAX_PARAMS],
}

impl Route {
    /// The `i`th path parameter (empty past the endpoint's last).
    pub fn param(&self, i: usize) -> &[u8] {
        self.params.get(i).map_or(&[], Vec::as_slice)
    }

    /// The `i`th path parameter as a `{token_id}` (400 when malformed).
    pub fn token_id(&self, i: usize) -> Result<TokenId, ApiError> {
        token_id_from_segment(self.param(i))
    }

    /// The `i`th path parameter as an `{addressOrENS}` (400 when not UTF-8).
    pub fn account(&self, i: usize) -> Result<AccountRef, ApiError> {
        AccountRef::from_segment(self.param(i))
    }
}

/// Decodes the raw request path segment by segment (`%2F` does not split
/// a segment) and matches it against the API rows. Returns the decoded
/// path (for messages; bytes that are not UTF-8 shown as U+FFFD) and the
/// route, `None` for paths of no API endpoint.
pub fn route(raw_path: &str) -> (String, Option<Route>) {
    const MOST: usize = PREFIX_SEGMENTS.len() + MAX_SEGMENTS;
    let body = raw_path.strip_prefix('/').unwrap_or(raw_path);
    let mut decoded = Vec::with_capacity(raw_path.len() + 1);
    // Where each of the first MOST segments lies in `decoded`.
    let mut bounds = [(0, 0); MOST];
    let mut count = 0;
    for raw in body.split('/') {
        decoded.push(b'/');
        let start = decoded.len();
        percent_decode_into(raw.as_bytes(), false, &mut decoded);
        if let Some(slot) = bounds.get_mut(count) {
            *slot = (start, decoded.len());
        }
        count += 1;
    }
    let route = if count <= MOST {
        let segments: [&[u8]; MOST] = std::array::from_fn(|i| &decoded[bounds[i].0..bounds[i].1]);
        match_api(&segments[..count])
    } else {
        None
    };
    let decoded = String::from_utf8(decoded)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    (decoded, route)
}

/// The first API row whose shape the decoded segments have.
fn match_api(segments: &[&[u8]]) -> Option<Route> {
    let (prefix, path) = segments.split_at_checked(PREFIX_SEGMENTS.len())?;
    if prefix != PREFIX_SEGMENTS {
        return None;
    }
    let endpoint = Endpoint::ALL
        .into_iter()
        .find(|e| e.shape().matches(path))?;
    let mut params: [Vec<u8>; MAX_PARAMS] = Default::default();
    let values = endpoint
        .shape()
        .segments()
        .iter()
        .zip(path)
        .filter(|(s, _)| !matches!(s, Segment::Literal(_)));
    for (slot, (_, value)) in params.iter_mut().zip(values) {
        *slot = value.to_vec();
    }
    Some(Route { endpoint, params })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn routed(path: &str) -> Option<Route> {
        route(path).1
    }

    /// `e`'s path with `token` for a token id and `account` for an account.
    pub(crate) fn path_with(e: Endpoint, token: &str, account: &str) -> String {
        let params: Vec<&str> = e
            .shape()
            .segments()
            .iter()
            .filter_map(|s| match s {
                Segment::Literal(_) => None,
                Segment::TokenId => Some(token),
                Segment::Account => Some(account),
            })
            .collect();
        e.target(&params)
    }

    pub(crate) fn example_path(e: Endpoint) -> String {
        path_with(e, "1", "bob.eth")
    }

    #[test]
    fn every_row_routes_to_itself_and_nothing_shadows_it() {
        for e in Endpoint::ALL {
            let r = routed(&example_path(e)).unwrap_or_else(|| panic!("{e:?}"));
            assert_eq!(r.endpoint, e);
            assert_eq!(
                path_with(e, "{token_id}", "{addressOrENS}"),
                format!("{API_PREFIX}{}", e.path().replace("ENS2}", "ENS}"))
            );
            // Every GET endpoint takes `cache`; 32 (POST) takes nothing.
            let cache = (e.method() == Method::Get).then_some(&"cache");
            assert_eq!(e.query_params().last(), cache, "{e:?}");
            assert!(!e.name().is_empty());
        }
        for op in Operation::ALL {
            assert_eq!(Operation::at(op.path()), Some(op));
            assert!(routed(op.path()).is_none());
        }
        assert_eq!(Operation::at("/%68ealth"), None);
        assert_eq!(Operation::at("/health/"), None);
    }

    #[test]
    fn routes_paths_and_nothing_else() {
        assert_eq!(
            routed("/api/v1/lists/12/details").unwrap().endpoint,
            Endpoint::ListDetails
        );
        assert_eq!(
            routed("/api/v1/users/bob.eth/followers").unwrap().param(0),
            b"bob.eth"
        );
        assert_eq!(
            routed("/api/v1/users/a%2Fb/badges").unwrap().param(0),
            b"a/b"
        );
        assert_eq!(routed("/api/v1/%6Cists/1/details").unwrap().param(0), b"1");
        assert!(routed("/api/v1/leaderboard/search").is_some());
        assert_eq!(
            routed("/api/v1/stats").unwrap().endpoint,
            Endpoint::GlobalStats
        );
        assert_eq!(
            routed("/api/v1/users/stats/stats").unwrap().endpoint,
            Endpoint::UserStats
        );
        assert_eq!(
            routed("/api/v1/users/a/primary-list").unwrap().endpoint,
            Endpoint::UserPrimaryList
        );
        for bad in [
            "/api/v1/lists/12/details/",
            "/api/v1//lists/12/details",
            "/api/v1/lists//details",
            "/api/v1/leaderboard/search/",
            "/api/v2/lists/1/details",
            "/api/v1/lists/1/details/x/y/z",
            "/",
            "",
        ] {
            assert!(routed(bad).is_none(), "{bad}");
        }
        let bad_utf8 = routed("/api/v1/users/%FF/badges").unwrap();
        assert_eq!(bad_utf8.account(0), Err(ApiError::PathNotUtf8));
        assert_eq!(route("/a%20b/c").0, "/a b/c");
        assert_eq!(route("").0, "/");
        assert_eq!(route("*").0, "/*");
        assert_eq!(route("/a/b/c/d/e/f/g/h").0, "/a/b/c/d/e/f/g/h");
        assert_eq!(route("/api/v1/%FF").0, "/api/v1/\u{fffd}");
        assert!(route("/api/v1/%FF").1.is_none());
    }

    #[test]
    fn methods() {
        assert_eq!(
            Endpoint::ListDetails.method().allowed(),
            "GET, HEAD, OPTIONS"
        );
        assert!(Method::Get.accepts("HEAD"));
        assert!(!Method::Get.accepts("POST"));
        assert!(!Method::Get.accepts("OPTIONS"));
        assert!(Method::Post.accepts("POST"));
        assert_eq!(Operation::Health.method(), Method::Get);
    }
}
