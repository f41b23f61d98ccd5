//! The naive model: the API reference (docs/openapi.yaml) read literally, as
//! straight loops over the raw table rows. No indexes, no precomputation;
//! every count is recomputed by scanning every row each time it is needed.
//! Slow on purpose, obviously right on purpose.

use std::collections::{BTreeMap, BTreeSet};

use followgraph::api::Endpoint as E;
use followgraph::snapshot::{Address, EnsRow, OpRow, RecordRow, Tables};
use serde_json::{json, Value};

use super::gen_snap::NOW_MS;
use super::target::Req;

mod account;
mod followers;
mod following;
mod leaderboard;
mod qr;
mod recommended;
mod states;
mod tags;

const MAX_LIMIT: u64 = 1000;
const ZERO: Address = [0; 20];

pub struct Model<'a> {
    t: &'a Tables,
    created_at_ms: i64,
    /// Every address any row mentions, ascending.
    universe: Vec<Address>,
    /// Memo of the naive counts (followers, following, mutuals, blocks,
    /// top8) of every account in `universe`, so that ranks do not recount.
    counts: BTreeMap<Address, [usize; 5]>,
}

/// What the model expects: a status and the exact JSON body.
#[derive(Debug)]
pub struct Expected {
    pub status: u16,
    pub body: Value,
}

fn err(status: u16, text: &str) -> Expected {
    Expected {
        status,
        body: json!({ "response": text }),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn addr_text(a: &Address) -> String {
    format!("0x{}", hex(a))
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// ISO 8601 with milliseconds, by counting days year by year and month by
/// month from 1970 (backwards for instants before it).
pub fn iso(ms: i64) -> String {
    let mut days = ms.div_euclid(86_400_000);
    let rest = ms.rem_euclid(86_400_000);
    let mut year = 1970;
    while days < 0 {
        year -= 1;
        days += if is_leap(year) { 366 } else { 365 };
    }
    loop {
        let len = if is_leap(year) { 366 } else { 365 };
        if days < len {
            break;
        }
        days -= len;
        year += 1;
    }
    let month_days = [
        31,
        if is_leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut month = 0;
    while days >= month_days[month] {
        days -= month_days[month];
        month += 1;
    }
    format!(
        "{year:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        month + 1,
        days + 1,
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000
    )
}

/// The first occurrence of a query parameter (names are case-sensitive).
fn first<'p>(pairs: &'p [(String, String)], name: &str) -> Option<&'p str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// `limit`/`offset`/`start`/`opcode`: digits only, fits in u64; empty or
/// missing means the default (None).
fn number(pairs: &[(String, String)], name: &str) -> Result<Option<u64>, Expected> {
    match first(pairs, name) {
        None | Some("") => Ok(None),
        Some(v) => {
            if v.chars().all(|c| c.is_ascii_digit()) {
                if let Ok(n) = v.parse::<u64>() {
                    return Ok(Some(n));
                }
            }
            Err(err(400, &format!("{name} must be a non-negative integer")))
        }
    }
}

fn limit(pairs: &[(String, String)], default: u64) -> Result<u64, Expected> {
    let n = number(pairs, "limit")?.unwrap_or(default);
    if n > MAX_LIMIT {
        return Err(err(400, &format!("limit must be at most {MAX_LIMIT}")));
    }
    Ok(n)
}

fn trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii_whitespace())
}

/// `limit` (default 10) and `offset` (default 0), in that order of checks.
fn limit_offset(pairs: &[(String, String)]) -> Result<(u64, u64), Expected> {
    let limit = limit(pairs, 10)?;
    Ok((limit, number(pairs, "offset")?.unwrap_or(0)))
}

/// The `tags` filter of the followers and following lists: its
/// comma-separated names, trimmed, without empty ones.
fn wanted_tags(pairs: &[(String, String)]) -> Vec<&str> {
    first(pairs, "tags")
        .unwrap_or("")
        .split(',')
        .map(trim)
        .filter(|s| !s.is_empty())
        .collect()
}

fn page<T>(items: Vec<T>, offset: u64, limit: u64) -> Vec<T> {
    items
        .into_iter()
        .enumerate()
        .filter(|(i, _)| (*i as u64) >= offset && (*i as u64) - offset < limit)
        .map(|(_, x)| x)
        .collect()
}

fn object_or_empty(text: &Option<String>) -> Value {
    match text {
        Some(t) => serde_json::from_str(t).expect("stored JSON object"),
        None => json!({}),
    }
}

impl<'a> Model<'a> {
    pub fn new(t: &'a Tables, created_at_ms: i64) -> Model<'a> {
        let mut all = BTreeSet::new();
        for l in &t.lists {
            all.insert(l.user);
            all.insert(l.owner);
            all.insert(l.manager);
        }
        for p in &t.primary_lists {
            all.insert(p.address);
        }
        for r in &t.list_records {
            all.insert(r.address);
        }
        for r in &t.list_record_tags {
            all.insert(r.address);
        }
        for o in &t.list_ops {
            all.insert(o.op.target);
        }
        for e in &t.ens {
            all.insert(e.address);
        }
        for b in &t.badges {
            all.insert(b.address);
        }
        let mut m = Model {
            t,
            created_at_ms,
            universe: all.into_iter().collect(),
            counts: BTreeMap::new(),
        };
        let counts = m
            .universe
            .iter()
            .map(|a| {
                let c = [
                    m.count_followers(a),
                    m.count_following(a),
                    m.count_mutuals(a),
                    m.tagged_by(a, "block"),
                    m.tagged_by(a, "top8"),
                ];
                (*a, c)
            })
            .collect();
        m.counts = counts;
        m
    }

    fn memo(&self, a: &Address, i: usize) -> usize {
        self.counts.get(a).map_or(0, |c| c[i])
    }
    fn followers(&self, x: &Address) -> usize {
        self.memo(x, 0)
    }
    fn following(&self, x: &Address) -> usize {
        self.memo(x, 1)
    }
    fn mutuals(&self, x: &Address) -> usize {
        self.memo(x, 2)
    }
    fn blocks(&self, x: &Address) -> usize {
        self.memo(x, 3)
    }
    fn top8(&self, x: &Address) -> usize {
        self.memo(x, 4)
    }

    // ------------------------------------------------------ the raw rules

    /// docs/snapshot.md: L is A's primary list iff primary_lists[A] == L and
    /// lists[L].user == A.
    fn primary_of(&self, a: &Address) -> Option<u64> {
        // A list whose user is the zero address has no user, so it is no
        // one's primary list (the zero address has none).
        if *a == ZERO {
            return None;
        }
        for p in &self.t.primary_lists {
            if p.address == *a {
                for l in &self.t.lists {
                    if l.token_id == p.token_id && l.user == *a {
                        return Some(l.token_id);
                    }
                }
            }
        }
        None
    }

    /// The user of list `token` if it is that user's primary list.
    fn primary_user(&self, token: u64) -> Option<Address> {
        for l in &self.t.lists {
            if l.token_id == token && self.primary_of(&l.user) == Some(token) {
                return Some(l.user);
            }
        }
        None
    }

    /// U's record of X, if U's primary list holds one.
    fn record(&self, u: &Address, x: &Address) -> Option<&'a RecordRow> {
        let list = self.primary_of(u)?;
        self.t
            .list_records
            .iter()
            .find(|r| r.token_id == list && r.address == *x)
    }

    /// The visible tags U put on X, sorted by bytes.
    fn tags(&self, u: &Address, x: &Address) -> Vec<String> {
        if self.record(u, x).is_none() {
            return Vec::new();
        }
        let list = self.primary_of(u).unwrap();
        let mut tags: Vec<String> = self
            .t
            .list_record_tags
            .iter()
            .filter(|g| g.token_id == list && g.address == *x)
            .map(|g| g.tag.clone())
            .collect();
        tags.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        tags
    }

    fn has_tag(&self, u: &Address, x: &Address, tag: &str) -> bool {
        self.tags(u, x).iter().any(|t| t == tag)
    }

    /// followers(X): distinct accounts U whose primary list has X.
    fn count_followers(&self, x: &Address) -> usize {
        self.universe
            .iter()
            .filter(|u| self.record(u, x).is_some())
            .count()
    }

    /// following(U): records in U's primary list.
    fn count_following(&self, u: &Address) -> usize {
        match self.primary_of(u) {
            None => 0,
            Some(list) => self
                .t
                .list_records
                .iter()
                .filter(|r| r.token_id == list)
                .count(),
        }
    }

    /// mutuals(X): U has X and X has U.
    fn count_mutuals(&self, x: &Address) -> usize {
        self.universe
            .iter()
            .filter(|u| self.record(u, x).is_some() && self.record(x, u).is_some())
            .count()
    }

    fn tagged_by(&self, x: &Address, tag: &str) -> usize {
        self.universe
            .iter()
            .filter(|u| self.has_tag(u, x, tag))
            .count()
    }

    /// SQL RANK() descending among counts > 0; 0 for a zero count.
    fn rank(&self, count: impl Fn(&Address) -> usize, x: &Address) -> String {
        let c = count(x);
        if c == 0 {
            return "0".into();
        }
        let greater = self.universe.iter().filter(|y| count(y) > c).count();
        (greater + 1).to_string()
    }

    fn ens(&self, a: &Address) -> Option<&'a EnsRow> {
        self.t.ens.iter().find(|e| e.address == *a)
    }

    fn on_leaderboard(&self, a: &Address) -> bool {
        self.primary_of(a).is_some() || self.universe.iter().any(|u| self.record(u, a).is_some())
    }

    // ---------------------------------------------------------- subjects

    /// `addressOrENS`: an address, or a known name (404 otherwise).
    fn account(&self, text: &str) -> Result<Address, Expected> {
        let hex = text.strip_prefix("0x").unwrap_or("");
        if hex.len() == 40 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
            let mut a = [0u8; 20];
            for (i, byte) in a.iter_mut().enumerate() {
                *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
            }
            return Ok(a);
        }
        let lower = text.to_lowercase();
        for e in &self.t.ens {
            if e.name.to_lowercase() == lower {
                return Ok(e.address);
            }
        }
        Err(err(404, "ENS name not valid or does not exist"))
    }

    fn token_id(text: &str) -> Result<u64, Expected> {
        if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) {
            if let Ok(n) = text.parse::<u64>() {
                if n > 0 {
                    return Ok(n);
                }
            }
        }
        Err(err(400, "Invalid list id"))
    }

    /// A list stands for its user, primary list or not; a list missing
    /// from `lists` or whose user is the zero address has no user.
    fn list_user(&self, token: u64) -> Result<Address, Expected> {
        self.t
            .lists
            .iter()
            .find(|l| l.token_id == token && l.user != ZERO)
            .map(|l| l.user)
            .ok_or_else(|| err(404, "No User Found"))
    }

    // --------------------------------------------------------- endpoints

    /// The expected answer to `req`, by its endpoint (a row of the
    /// endpoint table), path parameters, decoded query `pairs` and body.
    pub fn answer(&self, req: &Req) -> Expected {
        let (endpoint, param, pairs) = (req.endpoint, req.param.as_str(), &req.pairs[..]);
        let result = match endpoint {
            E::ListDetails => Self::token_id(param)
                .and_then(|t| self.list_user(t))
                .map(|u| self.details(&u)),
            E::UserBadges => self.account(param).map(|a| self.badges(&a)),
            E::ListBadges => Self::token_id(param)
                .and_then(|t| self.list_user(t))
                .map(|u| self.badges(&u)),
            E::LeaderboardSearch => self.search(pairs),
            E::UserNotifications => self.notifications(param, pairs),
            E::UserFollowers => self.followers_endpoint(false, false, param, pairs),
            E::ListFollowers => self.followers_endpoint(true, true, param, pairs),
            E::UserAllFollowers => self.followers_endpoint(false, false, param, pairs),
            E::ListAllFollowers => self.followers_endpoint(true, false, param, pairs),
            E::UserAccount
            | E::ListAccount
            | E::UserDetails
            | E::UserStats
            | E::ListStats
            | E::UserLists
            | E::UserPrimaryList => self.account_family(endpoint, param, pairs),
            E::LeaderboardRanked | E::LeaderboardCount | E::LeaderboardAll | E::GlobalStats => {
                self.leaderboard_family(endpoint, pairs)
            }
            E::UserFollowing
            | E::UserAllFollowing
            | E::ListFollowing
            | E::ListAllFollowing
            | E::ListFollowingAddresses
            | E::ExportState => self.following_family(endpoint, param, pairs),
            E::FollowerState | E::ButtonState | E::ButtonStateBatch | E::ListFollowerState => {
                self.states_family(endpoint, param, &req.param2, req.body.as_deref())
            }
            E::UserTags | E::ListTags | E::UserTaggedAs | E::ListTaggedAs => {
                self.tags_family(endpoint, param, pairs)
            }
            E::UserLatestFollowers
            | E::ListLatestFollowers
            | E::UserSearchFollowers
            | E::ListSearchFollowers
            | E::UserSearchFollowing
            | E::ListSearchFollowing
            | E::UserCommonFollowers => self.followers_family(endpoint, param, pairs),
            E::UserRecommended
            | E::ListRecommended
            | E::UserRecommendedDetails
            | E::ListRecommendedDetails
            | E::Discover => self.recommended_family(endpoint, param, pairs),
            E::UserQr => self.qr(param),
            E::OpenApi => unreachable!("the model has no OpenAPI document"),
        };
        match result {
            Ok(body) => Expected { status: 200, body },
            Err(e) => e,
        }
    }

    /// 1 (for the list's user) and 10.
    fn details(&self, user: &Address) -> Value {
        json!({
            "address": addr_text(user),
            "ens": self.ens_object(user),
            "ranks": {
                "mutuals_rank": self.rank(|a| self.mutuals(a), user),
                "followers_rank": self.rank(|a| self.followers(a), user),
                "following_rank": self.rank(|a| self.following(a), user),
                "top8_rank": self.rank(|a| self.top8(a), user),
                "blocks_rank": self.rank(|a| self.blocks(a), user),
            },
            "primary_list": self.primary_of(user).map(|t| t.to_string()),
        })
    }

    fn badges(&self, a: &Address) -> Value {
        let mut events: Vec<_> = self.t.badge_events.iter().collect();
        events.sort_by_key(|e| e.position);
        let mut out = Vec::new();
        for e in events {
            let held = self
                .t
                .badges
                .iter()
                .find(|b| b.address == *a && b.event_id == e.event_id);
            out.push(match held {
                None => json!({
                    "eventId": e.event_id.to_string(),
                    "participated": false,
                    "collection": null,
                }),
                Some(b) => json!({
                    "eventId": e.event_id.to_string(),
                    "participated": true,
                    "collection": {
                        "event": {
                            "id": e.event_id,
                            "fancy_id": e.fancy_id,
                            "name": e.name,
                            "event_url": e.event_url,
                            "image_url": e.image_url,
                            "country": e.country,
                            "city": e.city,
                            "description": e.description,
                            "year": e.year,
                            "start_date": e.start_date,
                            "end_date": e.end_date,
                            "expiry_date": e.expiry_date,
                        },
                        "tokenId": b.token_id,
                        "owner": b.owner,
                    },
                }),
            });
        }
        json!({ "badges": out })
    }

    fn search(&self, pairs: &[(String, String)]) -> Result<Value, Expected> {
        let term = trim(first(pairs, "term").unwrap_or("")).to_lowercase();
        let limit = limit(pairs, 50)?;
        let offset = number(pairs, "offset")?.unwrap_or(0);
        let created = iso(self.created_at_ms);
        let mut matches: Vec<Address> = Vec::new();
        if !term.is_empty() {
            for a in &self.universe {
                if !self.on_leaderboard(a) {
                    continue;
                }
                let name = self.ens(a).map(|e| e.name.to_lowercase());
                if addr_text(a).contains(&term) || name.is_some_and(|n| n.contains(&term)) {
                    matches.push(*a);
                }
            }
        }
        // Followers descending, then address ascending.
        matches.sort_by(|x, y| {
            self.followers(y)
                .cmp(&self.followers(x))
                .then_with(|| x.cmp(y))
        });
        let results: Vec<Value> = page(matches, offset, limit)
            .iter()
            .map(|a| self.board_row(a, false))
            .collect();
        Ok(json!({ "last_updated": created, "results": results }))
    }

    fn notifications(&self, param: &str, pairs: &[(String, String)]) -> Result<Value, Expected> {
        // Parameters in the order of the endpoint's table, then the account.
        let opcode = match number(pairs, "opcode")? {
            Some(op @ 1..=4) => Some(op as u8),
            _ => None,
        };
        let interval = first(pairs, "interval").unwrap_or("").to_lowercase();
        let (hours, label): (Option<i128>, &str) = match interval.as_str() {
            "hour" => (Some(1), "1:00:00(hrs)"),
            "day" => (Some(24), "24:00:00(hrs)"),
            "month" => (Some(720), "720:00:00(hrs)"),
            "all" => (None, "999:00:00(hrs)"),
            _ => (Some(168), "168:00:00(hrs)"),
        };
        let start = number(pairs, "start")?;
        let tag = first(pairs, "tag").filter(|t| !t.is_empty());
        let (limit, offset) = limit_offset(pairs)?;
        let x = self.account(param)?;

        let mut items: Vec<(&OpRow, Address)> = Vec::new();
        for o in &self.t.list_ops {
            if o.op.target != x {
                continue;
            }
            let Some(actor) = self.primary_user(o.token_id) else {
                continue;
            };
            if let Some(h) = hours {
                // start - interval <= updated_at <= start, in ms (exact
                // arithmetic: no overflow in i128).
                let end: i128 = match start {
                    Some(s) => i128::from(s) * 1000,
                    None => i128::from(NOW_MS),
                };
                let begin = end - h * 3_600_000;
                let at = i128::from(o.updated_at);
                if !(begin <= at && at <= end) {
                    continue;
                }
            }
            if opcode.is_some_and(|op| o.op.opcode != op) {
                continue;
            }
            if tag.is_some_and(|t| o.op.tag != t) {
                continue;
            }
            items.push((o, actor));
        }
        items.sort_by(|(a, _), (b, _)| {
            b.updated_at
                .cmp(&a.updated_at)
                .then_with(|| b.seq.cmp(&a.seq))
        });
        let items = page(items, offset, limit);
        let count = |op: u8| items.iter().filter(|(o, _)| o.op.opcode == op).count();
        let summary = json!({
            "interval": label,
            "opcode": match opcode { None => "all".to_owned(), Some(op) => op.to_string() },
            "total": items.len(),
            "total_follows": count(1),
            "total_unfollows": count(2),
            "total_tags": count(3),
            "total_untags": count(4),
        });
        let mut list = Vec::new();
        for (o, actor) in &items {
            let e = self.ens(actor);
            let action = ["", "follow", "unfollow", "tag", "untag"][o.op.opcode as usize];
            let mut bytes = vec![1u8, o.op.opcode, 1, 1];
            bytes.extend_from_slice(&o.op.target);
            bytes.extend_from_slice(o.op.tag.as_bytes());
            list.push(json!({
                "address": addr_text(actor),
                "name": e.map(|e| e.name.clone()),
                "avatar": e.and_then(|e| e.avatar.clone()),
                "token_id": self.primary_of(actor).unwrap().to_string(),
                "action": action,
                "opcode": o.op.opcode,
                "op": format!("0x{}", hex(&bytes)),
                "tag": o.op.tag,
                "updated_at": iso(o.updated_at),
            }));
        }
        Ok(json!({ "summary": summary, "notifications": list }))
    }

    /// 6 (`by_list` false), 7 (`by_list`, `hide`), 19 and 20 (`by_list`
    /// without `hide`): `hide` leaves out followers whose record carries
    /// block or mute.
    fn followers_endpoint(
        &self,
        by_list: bool,
        hide: bool,
        param: &str,
        pairs: &[(String, String)],
    ) -> Result<Value, Expected> {
        let token = by_list.then(|| Self::token_id(param)).transpose()?;
        let (limit, offset) = limit_offset(pairs)?;
        let wanted = wanted_tags(pairs);
        let sort = first(pairs, "sort").unwrap_or("").to_lowercase();
        let t = match token {
            Some(token) => self.list_user(token)?,
            None => self.account(param)?,
        };

        let mut rows = self.follower_rows(&t, hide);
        rows.retain(|(f, _)| {
            let tags = self.tags(f, &t);
            wanted.is_empty() || tags.iter().any(|g| wanted.contains(&g.as_str()))
        });
        rows.sort_by(|(fa, ra), (fb, rb)| {
            let primary = match sort.as_str() {
                "earliest" => ra.updated_at.cmp(&rb.updated_at),
                "followers" => self.followers(fb).cmp(&self.followers(fa)),
                _ => rb.updated_at.cmp(&ra.updated_at),
            };
            primary.then_with(|| fa.cmp(fb))
        });
        let out: Vec<Value> = (page(rows, offset, limit).into_iter())
            .map(|(f, r)| self.follower_entry(&t, &f, Some(r)))
            .collect();
        Ok(json!({ "followers": out }))
    }
}
