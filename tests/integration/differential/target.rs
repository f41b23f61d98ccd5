//! Request targets: the target the engine parses beside the decoded path
//! parameter and query the model reads, and the random encodings (case,
//! percent-encoding, `+`, empty pairs) that must not change the answer.

use followgraph::api::Endpoint as E;
use followgraph::snapshot::Address;

/// The endpoints the generators draw from, by their index (`gen.rs`,
/// `gen_more.rs` and `gen_follow.rs` each take a range of it): rows of
/// the endpoint table. Every request path is built from its row, and the
/// engine must route it back to the same row (`differential.rs`).
pub const MODEL_ENDPOINTS: [E; 47] = [
    // gen.rs: 0..=6
    E::ListDetails,
    E::UserBadges,
    E::ListBadges,
    E::LeaderboardSearch,
    E::UserNotifications,
    E::UserFollowers,
    E::ListFollowers,
    // gen_more.rs: the account family, 7..=13, and the leaderboard's, 14..=17
    E::UserAccount,
    E::ListAccount,
    E::UserDetails,
    E::UserStats,
    E::ListStats,
    E::UserLists,
    E::UserPrimaryList,
    E::LeaderboardRanked,
    E::LeaderboardCount,
    E::LeaderboardAll,
    E::GlobalStats,
    // gen_follow.rs: following 18..=23, states 24..=27, tags 28..=31,
    // followers 32..=40
    E::UserFollowing,
    E::UserAllFollowing,
    E::ListFollowing,
    E::ListAllFollowing,
    E::ListFollowingAddresses,
    E::ExportState,
    E::FollowerState,
    E::ButtonState,
    E::ButtonStateBatch,
    E::ListFollowerState,
    E::UserTags,
    E::ListTags,
    E::UserTaggedAs,
    E::ListTaggedAs,
    E::UserAllFollowers,
    E::ListAllFollowers,
    E::UserLatestFollowers,
    E::ListLatestFollowers,
    E::UserSearchFollowers,
    E::ListSearchFollowers,
    E::UserSearchFollowing,
    E::ListSearchFollowing,
    E::UserCommonFollowers,
    // gen_rec.rs: 41..=46
    E::UserRecommended,
    E::ListRecommended,
    E::UserRecommendedDetails,
    E::ListRecommendedDetails,
    E::Discover,
    E::UserQr,
];

/// The request path of model endpoint `endpoint` with these (encoded)
/// path parameters.
pub fn model_path(endpoint: usize, params: &[&str]) -> String {
    MODEL_ENDPOINTS[endpoint].target(params)
}

/// A built request: the target the engine parses, and the decoded path
/// parameters and query pairs the model reads.
#[derive(Clone, Debug)]
pub struct Req {
    pub endpoint: E,
    pub path: String,
    pub query: String,
    pub param: String,
    /// The second path parameter (the account of 30, 31 and 33), else
    /// empty.
    pub param2: String,
    pub pairs: Vec<(String, String)>,
    /// The body of a POST (32), else None (a GET).
    pub body: Option<Vec<u8>>,
}

impl Req {
    pub fn target(&self) -> String {
        if self.query.is_empty() {
            self.path.clone()
        } else {
            format!("{}?{}", self.path, self.query)
        }
    }

    /// `GET <target>`, or `POST <target>` and its body.
    pub fn describe(&self) -> String {
        match &self.body {
            None => format!("GET {}", self.target()),
            Some(body) => format!(
                "POST {}\n  body {:?}",
                self.target(),
                String::from_utf8_lossy(body)
            ),
        }
    }
}

/// Changes the case of each character by the bits of `seed`.
pub fn random_case(text: &str, seed: u64) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if seed.rotate_right(i as u32 % 64) & 1 == 1 {
            out.extend(c.to_uppercase());
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

pub fn hex_random_case(a: &Address, seed: u64) -> String {
    let lower = followgraph::snapshot::format_address(a);
    let hex = random_case(&lower[2..], seed);
    format!("0x{hex}")
}

pub fn encode(text: &str, form: bool, seed: u64) -> String {
    let mut out = String::new();
    for (i, &b) in text.as_bytes().iter().enumerate() {
        let bit = seed.rotate_right(i as u32 % 64) & 1 == 1;
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~'
                if !bit || !form =>
            {
                out.push(b as char)
            }
            b',' | b'=' if form && bit => out.push(b as char),
            b' ' if form && bit => out.push('+'),
            // A path keeps `+` (not a space there) and a few sub-delims raw.
            b'+' | b'!' | b'@' | b':' if !form && bit => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The request for `path` whose query holds `params` (name, value or
/// `None` for a bare name, seed of the encoding).
pub fn with_query(
    endpoint: usize,
    path: String,
    param: String,
    params: Vec<(&str, Option<String>, u64)>,
    style: u64,
) -> Req {
    let mut pairs = Vec::new();
    let mut query = Vec::new();
    for (name, value, seed) in params {
        let Some(value) = value else {
            pairs.push((name.to_owned(), String::new()));
            query.push(name.to_owned());
            continue;
        };
        query.push(format!(
            "{}={}",
            encode(name, true, seed >> 32),
            encode(&value, true, seed.rotate_left(7))
        ));
        pairs.push((name.to_owned(), value));
    }
    Req {
        endpoint: MODEL_ENDPOINTS[endpoint],
        path,
        // Empty pairs (`&&`, a leading `&`) are nothing.
        query: match style & 7 {
            0 => query.join("&&"),
            1 if !query.is_empty() => format!("&{}", query.join("&")),
            _ => query.join("&"),
        },
        param,
        param2: String::new(),
        pairs,
        body: None,
    }
}
