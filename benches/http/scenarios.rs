//! The scenarios, as a table (one row each: name, the kind of request,
//! cached or not, the targets, a description), and how each kind's
//! request paths are drawn from the subjects. A scenario for a new
//! endpoint is a [`Kind`], its arm in [`make_path`] and a row of
//! [`SCENARIOS`].

use std::fmt::Write as _;

use followgraph::api::Endpoint as E;
use followgraph::rng::ModuloRng;

use crate::client::enc;
use crate::subjects::Subjects;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Details,
    UserBadges,
    ListBadges,
    Search,
    Notifications,
    UserFollowers(&'static str),
    ListFollowers(&'static str),
    UserAccount,
    UserDetails,
    UserStats,
    ListStats,
    UserLists,
    /// `/leaderboard/ranked` with this `sort`.
    Ranked(&'static str),
    LeaderboardCount,
    /// `/users/{a}/following` with these parameters.
    Following(&'static str),
    /// `/users/{a}/allFollowing?limit=10`.
    AllFollowing,
    ButtonState,
    /// `/users/{a}/{b}/followerState`.
    FollowerState,
    /// `/lists/{id}/{a}/followerState`.
    ListFollowerState,
    /// POST `/lists/{id}/buttonStateBatch` with this many items.
    Batch(usize),
    UserTags,
    TaggedAs,
    /// `/users/{a}/allFollowers` (followers parameters as 6).
    AllFollowers,
    /// `/users/{a}/latestFollowers?limit=10`.
    LatestFollowers,
    /// `/users/{hub}/searchFollowers?term=…`.
    SearchFollowers(Terms),
    /// `/users/{hub}/searchFollowing?term=…`.
    SearchFollowing(Terms),
    /// `/users/{a}/commonFollowers?leader={b}&limit=10`, between hubs
    /// (`true`) or ordinary accounts.
    CommonFollowers(bool),
    Mix,
    /// Account and users details, half each (the burst's requests).
    Profile,
    /// `/users/{a}/recommended?limit=10` (offset 10-40 20%).
    Recommended,
    /// `/users/{a}/recommended/details?limit=10` (offsets as above).
    RecommendedDetails,
    /// `/discover?limit=10` (offsets as above).
    Discover,
    /// `/users/{a}/qr`.
    Qr,
}

/// The terms of a search within followers or following.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terms {
    /// 2-4 letters (a-z) of a name: the "terms of 2-4 letters".
    Letters,
    /// 2-4 characters of a name, digits included, 70% of the time, else
    /// 2-4 hex digits of an address: harder (digit trigrams are common in
    /// addresses, so such a term has few matches spread over many
    /// candidates).
    Mixed,
}

pub struct Scenario {
    pub name: &'static str,
    pub kind: Kind,
    /// Requests without `cache=fresh`, measured after one pass over every
    /// path has filled the response cache.
    pub cached: bool,
    /// The targets for this scenario: minimum ratio to the baseline
    /// and the p99 bound at 50% load (µs).
    pub min_ratio: Option<f64>,
    pub max_p99_us: Option<f64>,
    pub describe: &'static str,
    /// Items per request (batches): throughput is also reported as items
    /// per second of server CPU.
    pub items: Option<usize>,
}

/// A scenario of `cache=fresh` requests.
const fn fresh(
    name: &'static str,
    kind: Kind,
    min_ratio: Option<f64>,
    max_p99_us: Option<f64>,
    describe: &'static str,
) -> Scenario {
    Scenario {
        name,
        kind,
        cached: false,
        min_ratio,
        max_p99_us,
        describe,
        items: None,
    }
}

/// Throughput at least 0.8x the static-body baseline's.
const RATIO: Option<f64> = Some(0.8);
/// p99 under 2 ms at half the scenario's throughput.
const P99: Option<f64> = Some(2000.0);
/// Throughput of a ranked page, a following page or a tags answer at
/// least 0.6x the baseline's.
const RANKED: Option<f64> = Some(0.6);
const PAGE: Option<f64> = Some(0.6);
/// Searches within a set and "followers you know": at least 0.3x the
/// baseline, p99 under 5 ms at half load.
const SET_SEARCH: Option<f64> = Some(0.3);
const P99_5MS: Option<f64> = Some(5000.0);

/// Every scenario, in the order they run.
#[rustfmt::skip]
pub const SCENARIOS: &[Scenario] = &[
    fresh("user_followers_latest", Kind::UserFollowers("latest"), RATIO, P99, "GET /users/{a}/followers?sort=latest&limit=10 (offset 0 mostly, pages 2-5 20%, tags filter 5%)"),
    fresh("user_followers_earliest", Kind::UserFollowers("earliest"), RATIO, P99, "same, sort=earliest"),
    fresh("user_followers_followers", Kind::UserFollowers("followers"), RATIO, P99, "same, sort=followers"),
    fresh("list_followers_latest", Kind::ListFollowers("latest"), RATIO, P99, "GET /lists/{id}/followers?sort=latest&limit=10 (same offsets/tags)"),
    fresh("list_followers_earliest", Kind::ListFollowers("earliest"), RATIO, P99, "same, sort=earliest"),
    fresh("list_followers_followers", Kind::ListFollowers("followers"), RATIO, P99, "same, sort=followers"),
    fresh("notifications", Kind::Notifications, RATIO, P99, "GET /users/{a}/notifications?interval=week|month|all|day&limit=10 (opcode 30%, start=created_at 50%)"),
    fresh("list_details", Kind::Details, RATIO, P99, "GET /lists/{id}/details"),
    fresh("user_badges", Kind::UserBadges, RATIO, P99, "GET /users/{a}/badges"),
    fresh("list_badges", Kind::ListBadges, RATIO, P99, "GET /lists/{id}/badges"),
    fresh("search", Kind::Search, Some(0.5), None, "GET /leaderboard/search?term=<3-6 chars of a name, or 0x+2-6 hex>&limit=10"),
    fresh("user_account", Kind::UserAccount, RATIO, P99, "GET /users/{a}/account"),
    fresh("user_details", Kind::UserDetails, RATIO, P99, "GET /users/{a}/details"),
    fresh("user_stats", Kind::UserStats, RATIO, P99, "GET /users/{a}/stats"),
    fresh("list_stats", Kind::ListStats, RATIO, P99, "GET /lists/{id}/stats"),
    fresh("user_lists", Kind::UserLists, RATIO, P99, "GET /users/{a}/lists"),
    fresh("ranked_mutuals", Kind::Ranked("mutuals"), RANKED, None, "GET /leaderboard/ranked?sort=mutuals&limit=10 (offset 0 70%, else up to 990; direction=asc 20%)"),
    fresh("ranked_followers", Kind::Ranked("followers"), RANKED, None, "same, sort=followers"),
    fresh("ranked_following", Kind::Ranked("following"), RANKED, None, "same, sort=following"),
    fresh("ranked_blocked", Kind::Ranked("blocked"), RANKED, None, "same, sort=blocked"),
    fresh("ranked_top8", Kind::Ranked("top8"), RANKED, None, "same, sort=top8"),
    fresh("leaderboard_count", Kind::LeaderboardCount, RATIO, P99, "GET /leaderboard/count"),
    fresh("following_latest", Kind::Following("limit=10"), PAGE, None, "GET /users/{a}/following?limit=10"),
    fresh("following_followers", Kind::Following("sort=followers&limit=10"), PAGE, None, "GET /users/{a}/following?sort=followers&limit=10"),
    fresh("following_top8_ens", Kind::Following("include=ens&limit=8&tags=top8"), PAGE, None, "GET /users/{a}/following?include=ens&limit=8&tags=top8 (the app's top-8 strip)"),
    fresh("all_following", Kind::AllFollowing, PAGE, None, "GET /users/{a}/allFollowing?limit=10"),
    fresh("button_state", Kind::ButtonState, RATIO, P99, "GET /lists/{id}/{a}/buttonState (a followed account half the time)"),
    fresh("follower_state", Kind::FollowerState, RATIO, P99, "GET /users/{a}/{b}/followerState (b a follower of a half the time)"),
    fresh("list_follower_state", Kind::ListFollowerState, RATIO, P99, "GET /lists/{id}/{a}/followerState"),
    Scenario { items: Some(50), ..fresh("batch_50", Kind::Batch(50), None, None, "POST /lists/{id}/buttonStateBatch, 50 accounts (names or addresses)") },
    Scenario { items: Some(1000), ..fresh("batch_1000", Kind::Batch(1000), None, None, "POST /lists/{id}/buttonStateBatch, 1,000 accounts") },
    fresh("user_tags", Kind::UserTags, PAGE, None, "GET /users/{a}/tags"),
    fresh("tagged_as", Kind::TaggedAs, PAGE, None, "GET /users/{a}/taggedAs"),
    fresh("all_followers", Kind::AllFollowers, PAGE, None, "GET /users/{a}/allFollowers?sort=latest&limit=10 (offsets and tags as user_followers)"),
    fresh("latest_followers", Kind::LatestFollowers, PAGE, None, "GET /users/{a}/latestFollowers?limit=10 (offset 10-40 20%)"),
    fresh("search_followers", Kind::SearchFollowers(Terms::Letters), SET_SEARCH, P99_5MS, "GET /users/{hub}/searchFollowers?term=<2-4 letters of a name>&limit=10 (the 100 most-followed accounts)"),
    fresh("search_following", Kind::SearchFollowing(Terms::Letters), SET_SEARCH, P99_5MS, "GET /users/{hub}/searchFollowing?term=<2-4 letters of a name>&limit=10"),
    fresh("search_followers_mixed", Kind::SearchFollowers(Terms::Mixed), None, None, "GET /users/{hub}/searchFollowers?term=<2-4 characters of a name, digits included, 70%; else 2-4 hex digits of an address>&limit=10"),
    fresh("common_followers_hubs", Kind::CommonFollowers(true), SET_SEARCH, P99_5MS, "GET /users/{hub}/commonFollowers?leader={hub}&limit=10"),
    fresh("common_followers", Kind::CommonFollowers(false), SET_SEARCH, P99_5MS, "GET /users/{a}/commonFollowers?leader={b}&limit=10 (random accounts)"),
    fresh("recommended", Kind::Recommended, PAGE, None, "GET /users/{a}/recommended?limit=10 (offset 10-40 20%)"),
    fresh("recommended_details", Kind::RecommendedDetails, PAGE, None, "GET /users/{a}/recommended/details?limit=10 (offset 10-40 20%)"),
    fresh("discover", Kind::Discover, PAGE, None, "GET /discover?limit=10 (offset 10-40 20%)"),
    fresh("qr", Kind::Qr, None, None, "GET /users/{a}/qr (its server CPU per request is the figure)"),
    fresh("mix", Kind::Mix, None, None, "weighted mix: user followers 25%, list followers 10%, notifications 20%, details 15%, user badges 10%, list badges 5%, search 15%"),
    Scenario { cached: true, ..fresh("mix_cached", Kind::Mix, None, None, "the mix's paths without cache=fresh, after a pass over every path") },
];

/// The request paths of the scenarios that run, drawn in table order from
/// one stream, so a seed gives the same paths.
pub struct PathDraws {
    rng: ModuloRng,
    /// The paths of each kind drawn so far (without `cache=fresh`).
    drawn: Vec<(Kind, Vec<String>)>,
}

impl PathDraws {
    pub fn new(seed: u64) -> PathDraws {
        PathDraws {
            rng: ModuloRng(seed),
            drawn: Vec::new(),
        }
    }

    /// `n` paths of `kind`, each with `cache=fresh`.
    pub fn fresh_paths(&mut self, kind: Kind, subjects: &Subjects, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| with_fresh(&make_path(kind, subjects, &mut self.rng)))
            .collect()
    }

    /// `n` paths of scenario `sc`, with `cache=fresh` unless it is cached;
    /// a cached scenario replays the paths of the kind's uncached run
    /// before it, when there was one.
    pub fn paths(&mut self, sc: &Scenario, subjects: &Subjects, n: usize) -> Vec<String> {
        let earlier = self.drawn.iter().find(|(kind, _)| *kind == sc.kind);
        let base: Vec<String> = match earlier {
            Some((_, paths)) if sc.cached => paths.clone(),
            _ => (0..n)
                .map(|_| make_path(sc.kind, subjects, &mut self.rng))
                .collect(),
        };
        self.drawn.retain(|(kind, _)| *kind != sc.kind);
        self.drawn.push((sc.kind, base.clone()));
        if sc.cached {
            base
        } else {
            base.iter().map(|p| with_fresh(p)).collect()
        }
    }
}

/// `limit=10`, with an offset of 10-40 20% of the time.
fn page(rng: &mut ModuloRng) -> String {
    let mut q = "limit=10".to_owned();
    if rng.with_probability(0.20) {
        let _ = write!(q, "&offset={}", 10 * (1 + rng.below(4)));
    }
    q
}

fn followers_params(rng: &mut ModuloRng, sort: &str) -> String {
    let mut q = format!("sort={sort}&limit=10");
    if rng.with_probability(0.20) {
        let _ = write!(q, "&offset={}", 10 * (1 + rng.below(4)));
    }
    if rng.with_probability(0.05) {
        q.push_str("&tags=top8%2Cfriend");
    }
    q
}

fn search_term(s: &Subjects, rng: &mut ModuloRng) -> String {
    if !s.names.is_empty() && rng.with_probability(0.8) {
        let stem: Vec<char> = stem(rng.pick_item(&s.names).as_str()).chars().collect();
        if stem.len() >= 3 {
            let len = (3 + rng.below(4)).min(stem.len());
            let start = rng.below(stem.len() - len + 1);
            return stem[start..start + len].iter().collect();
        }
    }
    let a = &rng.pick_item(&s.accounts).address;
    let len = 2 + rng.below(5);
    format!("0x{}", &a[2..2 + len])
}

/// A term of 2-4 letters (a-z) of a name, from a run of letters long
/// enough (names like `dave226542` hold digits); without names, as `Mixed`.
fn letters_term(s: &Subjects, rng: &mut ModuloRng) -> String {
    let len = 2 + rng.below(3);
    let tries = if s.names.is_empty() { 0 } else { 100 };
    for _ in 0..tries {
        let stem = stem(rng.pick_item(&s.names).as_str());
        let runs: Vec<&str> = stem
            .split(|c: char| !c.is_ascii_lowercase())
            .filter(|run| run.len() >= len)
            .collect();
        if !runs.is_empty() {
            let run = rng.pick_item(&runs);
            let start = rng.below(run.len() - len + 1);
            return run[start..start + len].to_owned();
        }
    }
    mixed_term(s, rng)
}

/// A name's first label, lower-cased (`Dave226542.eth` -> `dave226542`).
fn stem(name: &str) -> String {
    name.split('.').next().unwrap_or_default().to_lowercase()
}

/// A term of 2-4 characters of a name 70% of the time, else hex digits
/// of an address.
fn mixed_term(s: &Subjects, rng: &mut ModuloRng) -> String {
    let len = 2 + rng.below(3);
    if !s.names.is_empty() && rng.with_probability(0.7) {
        let stem: Vec<char> = stem(rng.pick_item(&s.names).as_str()).chars().collect();
        if stem.len() >= len {
            let start = rng.below(stem.len() - len + 1);
            return stem[start..start + len].iter().collect();
        }
    }
    let a = &rng.pick_item(&s.accounts).address;
    let start = 2 + rng.below(40 - len);
    a[start..start + len].to_owned()
}

/// One request path of `kind`: subjects named the way clients name them,
/// the parameters varied as the scenario table describes.
pub fn make_path(kind: Kind, s: &Subjects, rng: &mut ModuloRng) -> String {
    match kind {
        Kind::Details => E::ListDetails.target(&[&s.list(rng).to_string()]),
        Kind::ListBadges => E::ListBadges.target(&[&s.list(rng).to_string()]),
        Kind::UserBadges => E::UserBadges.target(&[&s.account(rng).ident(rng)]),
        Kind::Search => format!(
            "{}?term={}&limit=10",
            E::LeaderboardSearch.target(&[]),
            enc(&search_term(s, rng))
        ),
        Kind::Notifications => {
            let who = s.account(rng).ident(rng);
            let interval = match rng.below(10) {
                0..=3 => "week",
                4..=6 => "month",
                7..=8 => "all",
                _ => "day",
            };
            let mut q = format!("interval={interval}&limit=10");
            if rng.with_probability(0.3) {
                let _ = write!(q, "&opcode={}", 1 + rng.below(4));
            }
            if rng.with_probability(0.5) {
                let _ = write!(q, "&start={}", s.created_at_s);
            }
            format!("{}?{q}", E::UserNotifications.target(&[&who]))
        }
        Kind::UserFollowers(sort) => {
            let who = s.account(rng).ident(rng);
            let q = followers_params(rng, sort);
            format!("{}?{q}", E::UserFollowers.target(&[&who]))
        }
        Kind::ListFollowers(sort) => {
            let list = s.list(rng).to_string();
            let q = followers_params(rng, sort);
            format!("{}?{q}", E::ListFollowers.target(&[&list]))
        }
        Kind::UserAccount => E::UserAccount.target(&[&s.account(rng).ident(rng)]),
        Kind::UserDetails => E::UserDetails.target(&[&s.account(rng).ident(rng)]),
        Kind::UserStats => E::UserStats.target(&[&s.account(rng).ident(rng)]),
        Kind::ListStats => E::ListStats.target(&[&s.list(rng).to_string()]),
        Kind::UserLists => E::UserLists.target(&[&s.account(rng).ident(rng)]),
        Kind::Ranked(sort) => {
            let mut q = format!("sort={sort}&limit=10");
            if rng.with_probability(0.3) {
                let _ = write!(q, "&offset={}", 10 * (1 + rng.below(99)));
            }
            if rng.with_probability(0.2) {
                q.push_str("&direction=asc");
            }
            format!("{}?{q}", E::LeaderboardRanked.target(&[]))
        }
        Kind::LeaderboardCount => E::LeaderboardCount.target(&[]),
        Kind::Following(q) => {
            format!(
                "{}?{q}",
                E::UserFollowing.target(&[&s.account(rng).ident(rng)])
            )
        }
        Kind::AllFollowing => {
            let who = s.account(rng).ident(rng);
            format!("{}?limit=10", E::UserAllFollowing.target(&[&who]))
        }
        Kind::ButtonState => {
            let who = s.account(rng).ident(rng);
            E::ButtonState.target(&[&s.list(rng).to_string(), &who])
        }
        Kind::FollowerState => {
            let (a, b) = (s.account(rng).ident(rng), s.account(rng).ident(rng));
            E::FollowerState.target(&[&a, &b])
        }
        Kind::ListFollowerState => {
            let who = s.account(rng).ident(rng);
            E::ListFollowerState.target(&[&s.list(rng).to_string(), &who])
        }
        Kind::Batch(n) => {
            let items: Vec<String> = (0..n)
                .map(|_| {
                    let a = s.account(rng);
                    match &a.name {
                        Some(name) if rng.with_probability(0.5) => {
                            serde_json::to_string(name).unwrap_or_default()
                        }
                        _ => format!("\"{}\"", a.address),
                    }
                })
                .collect();
            let list = s.list(rng).to_string();
            format!(
                "POST {} [{}]",
                E::ButtonStateBatch.target(&[&list]),
                items.join(",")
            )
        }
        Kind::UserTags => E::UserTags.target(&[&s.account(rng).ident(rng)]),
        Kind::TaggedAs => E::UserTaggedAs.target(&[&s.account(rng).ident(rng)]),
        Kind::AllFollowers => {
            let who = s.account(rng).ident(rng);
            let q = followers_params(rng, "latest");
            format!("{}?{q}", E::UserAllFollowers.target(&[&who]))
        }
        Kind::LatestFollowers => {
            let who = s.account(rng).ident(rng);
            format!("{}?{}", E::UserLatestFollowers.target(&[&who]), page(rng))
        }
        Kind::Recommended | Kind::RecommendedDetails => {
            let e = match kind {
                Kind::Recommended => E::UserRecommended,
                _ => E::UserRecommendedDetails,
            };
            format!("{}?{}", e.target(&[&s.account(rng).ident(rng)]), page(rng))
        }
        Kind::Discover => format!("{}?{}", E::Discover.target(&[]), page(rng)),
        Kind::Qr => E::UserQr.target(&[&s.account(rng).ident(rng)]),
        Kind::SearchFollowers(terms) | Kind::SearchFollowing(terms) => {
            let who = rng.pick_item(&s.hubs).ident(rng);
            let endpoint = if matches!(kind, Kind::SearchFollowers(_)) {
                E::UserSearchFollowers
            } else {
                E::UserSearchFollowing
            };
            let term = match terms {
                Terms::Letters => letters_term(s, rng),
                Terms::Mixed => mixed_term(s, rng),
            };
            let term = enc(&term);
            format!("{}?term={term}&limit=10", endpoint.target(&[&who]))
        }
        Kind::CommonFollowers(hubs) => {
            let pool = if hubs { &s.hubs } else { &s.accounts };
            let a = rng.pick_item(pool).ident(rng);
            let leader = rng.pick_item(pool).ident(rng);
            format!(
                "{}?leader={leader}&limit=10",
                E::UserCommonFollowers.target(&[&a])
            )
        }
        Kind::Profile => {
            let k = if rng.with_probability(0.5) {
                Kind::UserAccount
            } else {
                Kind::UserDetails
            };
            make_path(k, s, rng)
        }
        Kind::Mix => {
            let sort = *rng.pick_item(&["latest", "latest", "earliest", "followers"]);
            let k = match rng.below(100) {
                0..=24 => Kind::UserFollowers(sort),
                25..=34 => Kind::ListFollowers(sort),
                35..=54 => Kind::Notifications,
                55..=69 => Kind::Details,
                70..=79 => Kind::UserBadges,
                80..=84 => Kind::ListBadges,
                _ => Kind::Search,
            };
            make_path(k, s, rng)
        }
    }
}

fn with_fresh(path: &str) -> String {
    // A POST's query is ignored: nothing to add.
    if path.starts_with("POST ") {
        return path.to_owned();
    }
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{path}{sep}cache=fresh")
}
