//! Answers validated requests from a `Graph`: resolution of the subject
//! (the 404s), then rendering of the JSON body. Pure functions of
//! (graph, request, now); no HTTP, no cache.

use crate::error::ApiError;
use crate::graph::{
    AccountId, Graph, Notification, Notifications, Profile, Record, FLAG_BLOCK, FLAG_MUTE,
};
use crate::json::{push_key, push_num, push_num_str, push_opt_str, push_str};
use crate::request::{
    AccountRef, FollowerParams, FollowerSort, NotificationParams, Params, Request, Subject,
};
use crate::snapshot::{push_hex, Address};

/// The resolved subject of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    None,
    /// An account by address; `id` is `None` when the snapshot has no data
    /// for it (not an error: it has no followers, badges or notifications).
    Account {
        address: Address,
        id: Option<AccountId>,
    },
    /// A primary list and its user.
    List {
        token_id: u64,
        user: AccountId,
    },
}

/// Resolves the request's subject: unknown names give 404 "ENS name not
/// valid or does not exist", lists that are not a primary list 404 "No
/// User Found".
pub fn resolve(g: &Graph, subject: &Subject) -> Result<Target, ApiError> {
    match subject {
        Subject::None => Ok(Target::None),
        Subject::Account(AccountRef::Address(address)) => Ok(Target::Account {
            address: *address,
            id: g.account_id(address),
        }),
        Subject::Account(AccountRef::Name(lower)) => {
            let id = g
                .account_by_lower_name(lower)
                .ok_or(ApiError::UnknownName)?;
            Ok(Target::Account {
                address: *g.address(id),
                id: Some(id),
            })
        }
        Subject::List(token_id) => {
            let user = g
                .primary_list_user(*token_id)
                .ok_or(ApiError::NoUserFound)?;
            Ok(Target::List {
                token_id: *token_id,
                user,
            })
        }
    }
}

impl Target {
    /// The account the endpoint reports on, when the snapshot knows it.
    fn account(&self) -> Option<AccountId> {
        match *self {
            Target::None => None,
            Target::Account { id, .. } => id,
            Target::List { user, .. } => Some(user),
        }
    }
}

/// Renders the body of a request whose subject resolved to `target`.
/// `now_ms` is the default end of the notifications window.
pub fn render(g: &Graph, req: &Request, target: &Target, now_ms: i64) -> String {
    let mut out = String::with_capacity(1024);
    match &req.params {
        Params::None => match target {
            Target::List { user, .. } if req.endpoint == crate::request::Endpoint::ListDetails => {
                details(g, *user, &mut out)
            }
            _ => badges(g, target.account(), &mut out),
        },
        Params::Search {
            term,
            limit,
            offset,
        } => search(g, term, *offset, *limit, &mut out),
        Params::Notifications(p) => notifications(g, target, p, now_ms, &mut out),
        Params::Followers(p) => followers(
            g,
            target.account(),
            p,
            matches!(target, Target::List { .. }),
            &mut out,
        ),
    }
    out
}

fn push_address(out: &mut String, a: &Address) {
    out.push_str("\"0x");
    push_hex(out, a);
    out.push('"');
}

fn push_time(out: &mut String, ms: i64) {
    out.push('"');
    crate::time::write_iso_ms(out, ms);
    out.push('"');
}

/// `"name":…,"avatar":…,"header":…` from a profile (nulls without one).
fn push_name_avatar_header(out: &mut String, p: Option<Profile<'_>>) {
    push_key(out, "name");
    push_opt_str(out, p.map(|p| p.name()));
    out.push(',');
    push_key(out, "avatar");
    push_opt_str(out, p.and_then(|p| p.avatar()));
    out.push(',');
    push_key(out, "header");
    push_opt_str(out, p.and_then(|p| p.header()));
}

fn details(g: &Graph, user: AccountId, out: &mut String) {
    let s = g.stats(user);
    out.push('{');
    push_key(out, "address");
    push_address(out, g.address(user));
    out.push(',');
    push_key(out, "ens");
    let p = g.profile(user);
    out.push('{');
    push_name_avatar_header(out, p);
    out.push(',');
    push_key(out, "display");
    push_opt_str(out, p.and_then(|p| p.display()));
    out.push(',');
    push_key(out, "records");
    out.push_str(p.and_then(|p| p.records()).unwrap_or("{}"));
    out.push(',');
    push_key(out, "chains");
    out.push_str(p.and_then(|p| p.chains()).unwrap_or("{}"));
    out.push(',');
    push_key(out, "fresh");
    match p.and_then(|p| p.fresh()) {
        Some(f) => out.push_str(&f.to_string()),
        None => out.push_str("null"),
    }
    out.push(',');
    push_key(out, "resolver");
    push_opt_str(out, p.and_then(|p| p.resolver()));
    out.push(',');
    push_key(out, "errors");
    out.push_str(p.and_then(|p| p.errors()).unwrap_or("{}"));
    out.push_str("},");
    push_key(out, "ranks");
    out.push('{');
    for (i, (key, rank)) in [
        ("mutuals_rank", s.mutuals_rank),
        ("followers_rank", s.followers_rank),
        ("following_rank", s.following_rank),
        ("top8_rank", s.top8_rank),
        ("blocks_rank", s.blocks_rank),
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            out.push(',');
        }
        push_key(out, key);
        push_num_str(out, u64::from(rank));
    }
    out.push_str("},");
    push_key(out, "primary_list");
    push_num_str(out, g.primary_list(user).unwrap_or(0));
    out.push('}');
}

fn badges(g: &Graph, account: Option<AccountId>, out: &mut String) {
    let held = account.map_or(&[][..], |id| g.holdings(id));
    let mut held = held.iter().peekable();
    out.push_str("{\"badges\":[");
    for (i, event) in g.badge_events().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"eventId\":");
        push_str(out, &event.event_id.to_string());
        let holding = held.next_if(|h| h.event as usize == i);
        match holding {
            Some(h) => {
                out.push_str(",\"participated\":true,\"collection\":{\"event\":");
                out.push_str(&event.event_json);
                out.push(',');
                push_key(out, "tokenId");
                push_str(out, &h.token_id);
                out.push(',');
                push_key(out, "owner");
                push_str(out, &h.owner);
                out.push_str("}}");
            }
            None => out.push_str(",\"participated\":false,\"collection\":null}"),
        }
    }
    out.push_str("]}");
}

fn search(g: &Graph, term: &str, offset: usize, limit: usize, out: &mut String) {
    out.push('{');
    push_key(out, "last_updated");
    push_str(out, &g.created_at);
    out.push_str(",\"results\":[");
    if !term.is_empty() && limit > 0 {
        let board = g.leaderboard();
        let address = |p: usize| g.address(board[p]);
        let ids: Vec<AccountId> = g
            .search_index()
            .find(term, offset, limit, address)
            .into_iter()
            .map(|pos| board[pos])
            .collect();
        g.prefetch_accounts(&ids);
        for (i, &id) in ids.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            leaderboard_row(g, id, out);
        }
    }
    out.push_str("]}");
}

fn leaderboard_row(g: &Graph, id: AccountId, out: &mut String) {
    let s = g.stats(id);
    let p = g.profile(id);
    out.push('{');
    push_key(out, "address");
    push_address(out, g.address(id));
    out.push(',');
    push_name_avatar_header(out, p);
    for (key, n) in [
        ("mutuals_rank", s.mutuals_rank),
        ("followers_rank", s.followers_rank),
        ("following_rank", s.following_rank),
        ("blocks_rank", s.blocks_rank),
        ("mutuals", s.mutuals),
        ("following", s.following),
        ("followers", s.followers),
        ("blocks", s.blocks),
    ] {
        out.push(',');
        push_key(out, key);
        push_num_str(out, u64::from(n));
    }
    out.push(',');
    push_key(out, "updated_at");
    push_str(out, &g.created_at);
    out.push('}');
}

const ACTIONS: [&str; 5] = ["", "follow", "unfollow", "tag", "untag"];

fn notifications(
    g: &Graph,
    target: &Target,
    p: &NotificationParams,
    now_ms: i64,
    out: &mut String,
) {
    let (address, all) = match *target {
        Target::Account { address, id } => (
            address,
            id.map_or(Notifications::empty(), |id| g.notifications_of(id)),
        ),
        _ => unreachable!("notifications are asked of an account"),
    };
    // Window `start - interval <= updated_at <= start`, in milliseconds.
    let window = match p.interval.hours() {
        None => 0..all.len(),
        Some(hours) => {
            let end = match p.start {
                Some(secs) => i64::try_from(secs.saturating_mul(1000)).unwrap_or(i64::MAX),
                None => now_ms,
            };
            let begin = end.saturating_sub(hours * 3_600_000);
            let first = all.partition_point(|at| at > end);
            let last = all.partition_point(|at| at >= begin);
            first..last.max(first)
        }
    };
    // A tag filter: ops 1 and 2 carry no tag; an unknown tag matches nothing.
    let tag_filter: Option<Option<u32>> = p.tag.as_deref().map(|t| g.tag_id(t));
    let keep = |i: &usize| {
        let opcode = all.opcode(*i);
        p.opcode.is_none_or(|op| opcode == op)
            && match tag_filter {
                None => true,
                Some(None) => false,
                Some(Some(tag)) => opcode >= 3 && all.get(*i).tag_id == tag,
            }
    };
    let page: Vec<Notification> = window
        .filter(keep)
        .skip(p.offset)
        .take(p.limit)
        .map(|i| all.get(i))
        .collect();
    g.prefetch_accounts(&page.iter().map(|n| n.actor).collect::<Vec<_>>());
    let mut totals = [0u64; 5];
    for n in &page {
        totals[usize::from(n.opcode)] += 1;
    }
    out.push_str("{\"summary\":{");
    push_key(out, "interval");
    push_str(out, p.interval.summary());
    out.push(',');
    push_key(out, "opcode");
    match p.opcode {
        None => push_str(out, "all"),
        Some(op) => push_num_str(out, u64::from(op)),
    }
    out.push(',');
    push_key(out, "total");
    push_num(out, page.len() as u64);
    for (key, i) in [
        ("total_follows", 1),
        ("total_unfollows", 2),
        ("total_tags", 3),
        ("total_untags", 4),
    ] {
        out.push(',');
        push_key(out, key);
        push_num(out, totals[i]);
    }
    out.push_str("},\"notifications\":[");
    for (i, n) in page.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let profile = g.profile(n.actor);
        let opcode = n.opcode;
        let tag = g.tag_text(n.tag_id);
        out.push('{');
        push_key(out, "address");
        push_address(out, g.address(n.actor));
        out.push(',');
        push_key(out, "name");
        push_opt_str(out, profile.map(|p| p.name()));
        out.push(',');
        push_key(out, "avatar");
        push_opt_str(out, profile.and_then(|p| p.avatar()));
        out.push(',');
        push_key(out, "token_id");
        push_num_str(out, g.primary_list(n.actor).unwrap_or(0));
        out.push(',');
        push_key(out, "action");
        push_str(out, ACTIONS[usize::from(opcode)]);
        out.push(',');
        push_key(out, "opcode");
        push_num(out, u64::from(opcode));
        out.push(',');
        push_key(out, "op");
        out.push_str("\"0x01");
        push_hex(out, &[opcode, 1, 1]);
        push_hex(out, &address);
        push_hex(out, tag.as_bytes());
        out.push_str("\",");
        push_key(out, "tag");
        push_str(out, tag);
        out.push(',');
        push_key(out, "updated_at");
        push_time(out, n.updated_at);
        out.push('}');
    }
    out.push_str("]}");
}

/// How many followers are looked up together (see `Graph::records`): a
/// page of 10 plus a little filtering in one batch.
const BATCH: usize = 16;

/// T's followers with F's record of T, in the requested order, produced
/// batch by batch.
struct FollowerCandidates<'a> {
    g: &'a Graph,
    t: AccountId,
    /// `latest` or `by_count`; `earliest` walks `latest` backwards.
    order: &'a [AccountId],
    earliest: bool,
    /// Next index into `order` (forwards), or end of the unread part
    /// (backwards).
    pos: usize,
    /// Earliest only: fetched but not yet emitted, in backward order; the
    /// last run of equal `updated_at` may continue in the next batch.
    pending: Vec<(AccountId, Record)>,
    pairs: Vec<(AccountId, AccountId)>,
    records: Vec<Option<Record>>,
}

impl<'a> FollowerCandidates<'a> {
    fn new(g: &'a Graph, t: AccountId, sort: FollowerSort) -> Self {
        let (order, earliest) = match sort {
            FollowerSort::Latest => (g.followers_latest(t), false),
            FollowerSort::Followers => (g.followers_by_count(t), false),
            FollowerSort::Earliest => (g.followers_latest(t), true),
        };
        FollowerCandidates {
            g,
            t,
            order,
            earliest,
            pos: if earliest { order.len() } else { 0 },
            pending: Vec::new(),
            pairs: Vec::with_capacity(BATCH),
            records: Vec::with_capacity(BATCH),
        }
    }

    /// Skips `n` followers without looking anything up, where the order
    /// allows it (`earliest` needs the times to order ties).
    fn skip_unfiltered(&mut self, n: usize) -> usize {
        if self.earliest {
            return n;
        }
        let skipped = n.min(self.order.len() - self.pos);
        self.pos += skipped;
        n - skipped
    }

    /// Appends the next at most `want` candidates (at least one while any
    /// are left) to `out`.
    fn next_batch(&mut self, want: usize, out: &mut Vec<(AccountId, Record)>) {
        let want = want.clamp(1, BATCH);
        if !self.earliest {
            let ids = &self.order[self.pos..(self.pos + want).min(self.order.len())];
            self.pos += ids.len();
            self.lookup(ids.iter().copied(), out);
            return;
        }
        // Backwards, `latest` is (time ascending, address descending);
        // each run of equal times is reversed into address order.
        loop {
            if self.pos == 0 && self.pending.is_empty() {
                return;
            }
            let ids = &self.order[self.pos.saturating_sub(BATCH)..self.pos];
            self.pos -= ids.len();
            let mut fetched = std::mem::take(&mut self.pending);
            self.lookup(ids.iter().rev().copied(), &mut fetched);
            let complete = if self.pos == 0 {
                fetched.len()
            } else {
                let last = fetched.last().map_or(0, |r| r.1.updated_at);
                fetched.len()
                    - fetched
                        .iter()
                        .rev()
                        .take_while(|r| r.1.updated_at == last)
                        .count()
            };
            self.pending = fetched.split_off(complete);
            let mut run_start = 0;
            for i in 1..=fetched.len() {
                if i == fetched.len() || fetched[i].1.updated_at != fetched[run_start].1.updated_at
                {
                    out.extend(fetched[run_start..i].iter().rev());
                    run_start = i;
                }
            }
            if complete > 0 {
                return;
            }
        }
    }

    fn lookup(&mut self, ids: impl Iterator<Item = AccountId>, out: &mut Vec<(AccountId, Record)>) {
        self.pairs.clear();
        self.pairs.extend(ids.map(|f| (f, self.t)));
        self.g.records(&self.pairs, &mut self.records);
        // Every follower in the index has a record of T.
        out.extend(
            self.pairs
                .iter()
                .zip(&self.records)
                .filter_map(|(&(f, _), r)| Some((f, (*r)?))),
        );
    }
}

fn followers(
    g: &Graph,
    t: Option<AccountId>,
    p: &FollowerParams,
    exclude_blocked_muted: bool,
    out: &mut String,
) {
    out.push_str("{\"followers\":[");
    let Some(t) = t else {
        out.push_str("]}");
        return;
    };
    let wanted: Vec<u32> = p.tags.iter().filter_map(|tag| g.tag_id(tag)).collect();
    if !p.tags.is_empty() && wanted.is_empty() {
        out.push_str("]}");
        return;
    }
    let keep = |r: &Record| {
        let flags = g.tagset_flags(r.tagset);
        !(exclude_blocked_muted && flags & (FLAG_BLOCK | FLAG_MUTE) != 0)
            && (wanted.is_empty() || g.tagset(r.tagset).iter().any(|tag| wanted.contains(tag)))
    };
    let filtered = exclude_blocked_muted || !wanted.is_empty();
    let mut candidates = FollowerCandidates::new(g, t, p.sort);
    let mut skip = if filtered {
        p.offset
    } else {
        candidates.skip_unfiltered(p.offset)
    };
    let mut rows: Vec<(AccountId, Record)> = Vec::with_capacity(p.limit.min(BATCH));
    let mut batch = Vec::with_capacity(BATCH);
    while rows.len() < p.limit {
        batch.clear();
        // Unfiltered, exactly the rows still missing are fetched.
        let want = if filtered || skip > 0 {
            BATCH
        } else {
            p.limit - rows.len()
        };
        candidates.next_batch(want, &mut batch);
        if batch.is_empty() {
            break;
        }
        for &(f, r) in &batch {
            if !keep(&r) {
                continue;
            }
            if skip > 0 {
                skip -= 1;
                continue;
            }
            rows.push((f, r));
            if rows.len() == p.limit {
                break;
            }
        }
    }
    // T's records of the page's followers, for the is_* flags.
    let back_pairs: Vec<(AccountId, AccountId)> = rows.iter().map(|&(f, _)| (t, f)).collect();
    let mut back_records = Vec::with_capacity(rows.len());
    g.records(&back_pairs, &mut back_records);
    g.prefetch_accounts(&rows.iter().map(|&(f, _)| f).collect::<Vec<_>>());
    for (i, (&(f, record), back)) in rows.iter().zip(&back_records).enumerate() {
        if i > 0 {
            out.push(',');
        }
        let back = back.map_or(0, |r| g.tagset_flags(r.tagset) | 0x80);
        out.push('{');
        push_key(out, "svc_list_nft_token_id");
        push_num_str(out, g.primary_list(f).unwrap_or(0));
        out.push(',');
        push_key(out, "address");
        push_address(out, g.address(f));
        out.push(',');
        push_key(out, "tags");
        out.push('[');
        for (j, &tag) in g.tagset(record.tagset).iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            push_str(out, g.tag_text(tag));
        }
        out.push_str("],");
        // `back`: T's record of F (0x80 = exists) and its flags.
        let is_following = back & 0x80 != 0 && back & (FLAG_BLOCK | FLAG_MUTE) == 0;
        out.push_str(if is_following {
            "\"is_following\":true,"
        } else {
            "\"is_following\":false,"
        });
        out.push_str(if back & FLAG_BLOCK != 0 {
            "\"is_blocked\":true,"
        } else {
            "\"is_blocked\":false,"
        });
        out.push_str(if back & FLAG_MUTE != 0 {
            "\"is_muted\":true,"
        } else {
            "\"is_muted\":false,"
        });
        push_key(out, "updated_at");
        let at = record.updated_at;
        push_time(out, at);
        out.push('}');
    }
    out.push_str("]}");
}
