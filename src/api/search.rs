//! Searches within one account's sets: 23, 24 (`searchFollowers`: the
//! entries of 6 or 7 whose address or name holds `term`), 25, 26
//! (`searchFollowing`: the entries of 15 or 17) and 29
//! (`commonFollowers`: whom A follows that follow L).
//!
//! Cost is bounded by the sets, never by the graph. Each member is tested
//! against the search index's lower-cased name (by account id) and its
//! hex address on the stack ([`SearchIndex::matches`]), tens of
//! nanoseconds a member: 100k followers take a few milliseconds. A
//! following row is already in address order, so its search stops after
//! `offset + limit` matches; followers are collected and sorted. 29 probes
//! the smaller of A's following and L's followers into the larger (a
//! binary search of a record row), then orders the members.
//!
//! [`SearchIndex::matches`]: crate::graph::SearchIndex::matches

use std::cmp::Reverse;

use crate::error::ApiError;
use crate::graph::{AccountId, Graph, Record, RecordRow, Term, FLAG_BLOCK, FLAG_MUTE};
use crate::json::{push_key, push_num_str};

use super::followers::Exclude;
use super::following::{push_entry, EntryEns};
use super::query_string::{trim, Query};
use super::rows::{
    push_address, push_follower_flags, push_follower_head, push_name_avatar_header, push_short_ens,
    push_tagset,
};
use super::subject::AccountRef;

/// 29's parameters after `leader`: `term` (trimmed, lower-cased; empty:
/// no filter), `limit` (`None`: all) and `offset`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CommonParams {
    pub term: String,
    pub limit: Option<usize>,
    pub offset: usize,
}

impl CommonParams {
    /// `leader` (missing or empty: `None`, A itself), then term, limit,
    /// offset, in table order.
    pub fn parse(
        q: &Query<'_>,
        max_limit: u64,
    ) -> Result<(Option<AccountRef>, CommonParams), ApiError> {
        let leader = q
            .text("leader")?
            .filter(|l| !l.is_empty())
            .map(AccountRef::parse);
        let term = trim(q.text("term")?.unwrap_or("")).to_lowercase();
        let limit = match q.number("limit")? {
            Some(n) if n > max_limit => {
                return Err(ApiError::BadParameter(format!(
                    "limit must be at most {max_limit}"
                )))
            }
            n => n.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        };
        let offset = q.offset()?;
        Ok((
            leader,
            CommonParams {
                term,
                limit,
                offset,
            },
        ))
    }

    pub fn heap_bytes(&self) -> usize {
        self.term.len()
    }
}

fn shown(g: &Graph, tagset: u32) -> bool {
    g.tagset_flags(tagset) & (FLAG_BLOCK | FLAG_MUTE) == 0
}

/// 23, 24: T's followers (all of them, or without those whose record of T
/// carries block or mute) whose address or name holds `term`, address
/// ascending, paged.
pub fn render_followers(
    g: &Graph,
    t: Option<AccountId>,
    term: &str,
    limit: usize,
    offset: usize,
    exclude: Exclude,
    out: &mut String,
) {
    out.push_str("{\"followers\":[");
    let Some(t) = t.filter(|_| !term.is_empty() && limit > 0) else {
        out.push_str("]}");
        return;
    };
    let term = Term::new(term);
    let index = g.search_index();
    let mut matched: Vec<AccountId> = g
        .followers_latest(t)
        .iter()
        .copied()
        .filter(|&f| index.matches(&term, f, g.address(f)))
        .collect();
    // Ids ascend with addresses.
    matched.sort_unstable();
    // The page's followers and their records of T: in address order, a
    // batch at a time, the excluded ones skipped before counting.
    let mut page: Vec<(AccountId, Record)> = Vec::with_capacity(limit.min(64));
    let mut skip = offset;
    let mut records = Vec::new();
    for chunk in matched.chunks(64) {
        if exclude == Exclude::Nobody && skip >= chunk.len() {
            skip -= chunk.len();
            continue;
        }
        let pairs: Vec<(AccountId, AccountId)> = chunk.iter().map(|&f| (f, t)).collect();
        g.records(&pairs, &mut records);
        for (&f, record) in chunk.iter().zip(&records) {
            let Some(record) = *record else { continue };
            if exclude == Exclude::BlockedOrMuted && !shown(g, record.tagset) {
                continue;
            }
            if skip > 0 {
                skip -= 1;
                continue;
            }
            page.push((f, record));
            if page.len() == limit {
                break;
            }
        }
        if page.len() == limit {
            break;
        }
    }
    let back_pairs: Vec<(AccountId, AccountId)> = page.iter().map(|&(f, _)| (t, f)).collect();
    g.records(&back_pairs, &mut records);
    for (i, ((f, record), back)) in page.iter().zip(&records).enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        push_follower_head(out, g, *f);
        out.push(',');
        push_key(out, "ens");
        push_short_ens(out, g.profile(*f));
        out.push(',');
        push_key(out, "tags");
        push_tagset(out, g, record.tagset);
        out.push(',');
        push_follower_flags(out, g, back.as_ref());
        out.push('}');
    }
    out.push_str("]}");
}

/// 25, 26: the records of `row` that carry neither block nor mute and
/// whose account's address or name holds `term`, address ascending (the
/// row's order), paged.
pub fn render_following(
    g: &Graph,
    row: RecordRow<'_>,
    term: &str,
    limit: usize,
    offset: usize,
    out: &mut String,
) {
    out.push_str("{\"following\":[");
    if !term.is_empty() && limit > 0 {
        let term = Term::new(term);
        let index = g.search_index();
        let page = (0..row.len())
            .filter(|&i| shown(g, row.tagset(i)))
            .filter(|&i| {
                let t = row.targets[i];
                index.matches(&term, t, g.address(t))
            })
            .skip(offset)
            .take(limit);
        for (n, i) in page.enumerate() {
            if n > 0 {
                out.push(',');
            }
            push_entry(g, &row, i, EntryEns::Short, out);
        }
    }
    out.push_str("]}");
}

/// 29: the accounts C that A's primary list holds and whose primary list
/// holds L, neither record carrying block or mute, that match `term`;
/// mutuals descending then address ascending; `length` before paging.
pub fn render_common(
    g: &Graph,
    a: Option<AccountId>,
    l: Option<AccountId>,
    p: &CommonParams,
    out: &mut String,
) {
    let mut members = match (a, l) {
        (Some(a), Some(l)) => common_followers(g, a, l),
        _ => Vec::new(),
    };
    if !p.term.is_empty() {
        let term = Term::new(&p.term);
        let index = g.search_index();
        members.retain(|&c| index.matches(&term, c, g.address(c)));
    }
    let length = members.len();
    members.sort_unstable_by_key(|&c| (Reverse(g.stats(c).mutuals), c));
    let start = p.offset.min(length);
    let end = p
        .limit
        .map_or(length, |n| start.saturating_add(n).min(length));
    let page = &members[start..end];
    g.prefetch_accounts(page);
    out.push_str("{\"results\":[");
    for (i, &c) in page.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        push_key(out, "address");
        push_address(out, g.address(c));
        out.push(',');
        push_name_avatar_header(out, g.profile(c));
        out.push(',');
        push_key(out, "mutuals_rank");
        push_num_str(out, u64::from(g.stats(c).mutuals_rank));
        out.push('}');
    }
    out.push_str("],\"length\":");
    out.push_str(&length.to_string());
    out.push('}');
}

/// A's shown records ∩ L's followers whose record of L is shown: the
/// smaller side probed into the larger.
fn common_followers(g: &Graph, a: AccountId, l: AccountId) -> Vec<AccountId> {
    let following = g.following_row(Some(a));
    let followers = g.followers_latest(l);
    let mut candidates: Vec<AccountId> = if following.len() <= followers.len() {
        (0..following.len())
            .filter(|&i| shown(g, following.tagset(i)))
            .map(|i| following.targets[i])
            .collect()
    } else {
        followers
            .iter()
            .copied()
            .filter(|&c| following.find(c).is_some_and(|r| shown(g, r.tagset)))
            .collect()
    };
    // Then each candidate's record of L, looked up together.
    let pairs: Vec<(AccountId, AccountId)> = candidates.iter().map(|&c| (c, l)).collect();
    let mut records = Vec::with_capacity(pairs.len());
    g.records(&pairs, &mut records);
    let mut kept = records.iter();
    candidates.retain(|_| {
        kept.next()
            .copied()
            .flatten()
            .is_some_and(|r| shown(g, r.tagset))
    });
    candidates
}
