//! Searches within one account's sets: 23, 24 (`searchFollowers`: the
//! entries of 6 or 7 whose address or name holds `term`), 25, 26
//! (`searchFollowing`: the entries of 15 or 17) and 29
//! (`commonFollowers`: whom A follows that follow L).
//!
//! Cost is bounded by the sets, never by the graph. Each member is tested
//! against the search index's lower-cased name (by account id) and its
//! hex address on the stack ([`SearchIndex::matches`]). Followers (their
//! address-ordered column of the follower index) and a following row are
//! both in address order, so a search reads members in ascending order
//! (a stream through the address and name tables) and stops after
//! `offset + limit` matches: a frequent term costs a few members, a rare
//! one the whole set. 29 probes the smaller of A's following and L's
//! followers into the larger (a binary search of a record row), then
//! orders the members.
//!
//! [`SearchIndex::matches`]: crate::graph::SearchIndex::matches

use std::cmp::Reverse;
use std::ops::Range;

use crate::error::ApiError;
use crate::graph::{AccountId, Graph, IndexCost, Record, RecordRow, Term, FLAG_BLOCK, FLAG_MUTE};
use crate::json::{push_key, push_num_str};

use super::followers::{push_page, Exclude, RecordBatch, BATCH};
use super::following::{push_entry, EntryEns};
use super::query_string::{trim, Query};
use super::rows::{
    push_address, push_follower_head, push_follower_tags_and_flags, push_name_avatar_header,
    push_short_ens,
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
    let index = g.search_index();
    let followers = g.followers_by_address(t);
    // Candidates in address order, so the first `offset + limit` kept are
    // the page; they are checked against their records a batch at a time.
    // The followers are walked, unless `scan_budget` of them does not hold
    // the page: then the search index's candidates (every follower is on
    // the leaderboard) merged with the followers are the ones tested.
    // A walk that found the page goes on from there, not from the start.
    let term = Term::new(term);
    let wanted = offset.saturating_add(limit);
    let plan = index.plan(term.text());
    let scan_end = plan
        .as_ref()
        .map_or(usize::MAX, |plan| {
            scan_budget(plan.cost, wanted, g.leaderboard_len())
        })
        .min(followers.len());
    let first: Vec<usize> = matching(g, &term, 0..scan_end, |i| followers[i])
        .take(wanted)
        .collect();
    let mut ids: Vec<AccountId> = Vec::new();
    let walked = first.len() == wanted || scan_end == followers.len();
    let mut matches: Box<dyn Iterator<Item = AccountId>> = if !walked {
        let board = g.leaderboard();
        ids.extend(
            plan.map_or_else(Vec::new, |plan| plan.candidates())
                .into_iter()
                .map(|p| board[p as usize]),
        );
        ids.sort_unstable();
        // Found among the followers lazily: the page's ten are usually
        // in the first seventh of them.
        Box::new(sorted_intersection(&ids, followers).filter(|&id| index.matches(&term, id)))
    } else {
        let resume = match first.last() {
            Some(&last) if first.len() == wanted => last + 1,
            _ => scan_end,
        };
        let rest = matching(g, &term, resume..followers.len(), |i| followers[i]);
        Box::new(first.into_iter().chain(rest).map(|i| followers[i]))
    };
    let mut page: Vec<(AccountId, Record)> = Vec::with_capacity(limit.min(64));
    let mut skip = offset;
    if exclude == Exclude::Nobody {
        // Every candidate follows T and is shown: the skipped ones need
        // no records.
        matches.by_ref().take(skip).for_each(drop);
        skip = 0;
    }
    while page.len() < limit {
        // No more than the page can still take: the matches after it
        // would extend a rare term's walk over the followers for nothing.
        let unfilled = skip.saturating_add(limit - page.len());
        let batch = RecordBatch::look_up(
            g,
            matches.by_ref().take(unfilled.min(BATCH)).map(|f| (f, t)),
        );
        if batch.is_empty() {
            break;
        }
        for (&(f, _), record) in batch.pairs().zip(batch.records()) {
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
    }
    push_page(g, t, &page, out, |out, f, record, back| {
        out.push('{');
        push_follower_head(out, g, f);
        out.push(',');
        push_key(out, "ens");
        push_short_ens(out, g.profile(f));
        out.push(',');
        push_follower_tags_and_flags(out, g, record, back);
        out.push('}');
    });
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
        let page = matching(g, &term, 0..row.len(), |i| row.targets[i])
            .filter(|&i| shown(g, row.tagset(i)))
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

/// Measured at 1M accounts, in ns: testing a follower in a scan (a
/// cache miss or two, overlapped), decoding a byte of a list, and
/// taking a candidate through the index path (map to an id, sort,
/// merge).
const SCAN_NS: usize = 25;
const DECODE_NS: usize = 5;
const CANDIDATE_NS: usize = 25;

/// How many followers a search tests in address order before it takes
/// the index's candidates instead: half of what the index path is
/// expected to cost, so that whichever way is cheaper for this term and
/// set, the search costs at most 1.5 times it. Which way is cheaper
/// cannot be told from the term alone: "tren" (in every "trent…" name)
/// is found in the first few hundred of a hub's followers, "7875" needs
/// thousands. A walk expected to need more than twice its budget to find
/// `wanted` matches (a follower matching as often as any of the `board`
/// accounts) is not started.
fn scan_budget(cost: IndexCost, wanted: usize, board: usize) -> usize {
    let index_ns = cost
        .list_bytes
        .saturating_mul(DECODE_NS)
        .saturating_add(cost.candidates.saturating_mul(CANDIDATE_NS));
    let budget = index_ns / SCAN_NS / 2;
    let expected_walk = wanted.saturating_mul(board) / cost.candidates.max(1);
    if expected_walk > budget.saturating_mul(2) {
        0
    } else {
        budget
    }
}

/// Members ahead of the one tested whose search entry (address, name
/// mask and bounds), then (if the mask lets it hold the term) name, are
/// asked for (see `matching`).
const ENTRY_AHEAD: usize = 32;
const NAME_AHEAD: usize = 16;

/// The `positions` whose member (`member(i)`) holds `term` in its
/// address or name, in order. Members are scattered over the search
/// index's entries and names, so a test is a cache miss or two: each
/// member's loads are asked for some members ahead of its test, which
/// overlaps them (a scan of a hub's followers was one miss after
/// another).
fn matching<'a>(
    g: &'a Graph,
    term: &'a Term<'a>,
    positions: Range<usize>,
    member: impl Fn(usize) -> AccountId + 'a,
) -> impl Iterator<Item = usize> + 'a {
    let index = g.search_index();
    let end = positions.end;
    for i in positions.clone().take(ENTRY_AHEAD) {
        index.prefetch_entry(member(i));
    }
    positions.filter(move |&i| {
        if i + ENTRY_AHEAD < end {
            index.prefetch_entry(member(i + ENTRY_AHEAD));
        }
        if i + NAME_AHEAD < end {
            index.prefetch_name(term, member(i + NAME_AHEAD));
        }
        index.matches(term, member(i))
    })
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
        members.retain(|&c| index.matches(&term, c));
    }
    let length = members.len();
    members.sort_unstable_by_key(|&c| (Reverse(g.stats(c).mutuals), c));
    let start = p.offset.min(length);
    let end = p
        .limit
        .map_or(length, |n| start.saturating_add(n).min(length));
    let page = &members[start..end];
    g.prefetch_accounts(page.iter().copied());
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
    crate::json::push_num(out, length as u64);
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

/// The ids in both ascending lists, in order, as they are asked for (a
/// page stops early). Each id of the shorter list is found in the longer
/// one by stepping over blocks of `SCAN_BLOCK`, then counting within
/// one: a stream the prefetcher follows. Galloping
/// (exponential, then binary search) only pays when the longer list is
/// far sparser in matches: its probes were one cache miss and one
/// mispredicted branch after another, for a hub's followers against a
/// few hundred candidates.
fn sorted_intersection<'a>(a: &'a [AccountId], b: &'a [AccountId]) -> SortedIntersection<'a> {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    SortedIntersection {
        short,
        long,
        gallop: long.len() / short.len().max(1) > GALLOP_RATIO,
    }
}

/// See [`sorted_intersection`]: the rest of both lists.
struct SortedIntersection<'a> {
    short: &'a [AccountId],
    long: &'a [AccountId],
    gallop: bool,
}

impl Iterator for SortedIntersection<'_> {
    type Item = AccountId;

    fn next(&mut self) -> Option<AccountId> {
        while let Some((&x, rest)) = self.short.split_first() {
            self.short = rest;
            let long = self.long;
            let i = if self.gallop {
                let mut step = 1;
                while step < long.len() && long[step - 1] < x {
                    step *= 2;
                }
                long[..step.min(long.len())].partition_point(|&y| y < x)
            } else {
                let mut skipped = 0;
                while long.len() - skipped > SCAN_BLOCK && long[skipped + SCAN_BLOCK - 1] < x {
                    skipped += SCAN_BLOCK;
                }
                let block = &long[skipped..long.len().min(skipped + SCAN_BLOCK)];
                skipped + block.iter().map(|&y| usize::from(y < x)).sum::<usize>()
            };
            self.long = &long[i..];
            match self.long.split_first() {
                Some((&y, rest)) if y == x => {
                    self.long = rest;
                    return Some(x);
                }
                Some(_) => {}
                None => self.short = &[],
            }
        }
        None
    }
}

const SCAN_BLOCK: usize = 32;
/// Ids of the longer list per id of the shorter beyond which galloping
/// is cheaper than stepping blocks of `SCAN_BLOCK`.
const GALLOP_RATIO: usize = 1024;

#[cfg(test)]
mod tests {
    use super::{scan_budget, sorted_intersection};
    use crate::graph::IndexCost;

    #[test]
    fn scan_budget_follows_the_index_cost() {
        let budget = |list_bytes, candidates| {
            scan_budget(
                IndexCost {
                    list_bytes,
                    candidates,
                },
                10,
                1_000_000,
            )
        };
        // A trigram of ~30k names: 18,000 followers tested at most.
        assert_eq!(budget(30_000, 30_000), 18_000);
        // 4 letters: fewer candidates, but two lists read.
        assert_eq!(budget(60_000, 3_000), 7_500);
        // 4 hex digits: ~900 candidates (the 4-digit grams of the
        // addresses and of the names), ~11,000 followers to find 10 in,
        // far past the budget: the index at once.
        assert_eq!(budget(9_000, 900), 0);
        // A rare trigram: the index at once.
        assert_eq!(budget(300, 300), 0);
        let unbounded = IndexCost {
            list_bytes: usize::MAX,
            candidates: usize::MAX,
        };
        assert!(scan_budget(unbounded, 10, 1) > 0);
    }

    #[test]
    fn intersection_of_sorted_lists() {
        // 1,000 ids: the short lists are stepped through in blocks;
        // 5,000: the single ids past `GALLOP_RATIO` gallop.
        for n in [1000, 5000] {
            let long: Vec<u32> = (0..n).map(|i| i * 3).collect();
            let shorts = [
                vec![],
                vec![0],
                vec![n * 3 - 3],
                vec![2997, n * 3 + 2000],
                vec![1, 3, 4, 6, 95, 96, 97, 98, 99, 300, 301, 2999],
                (0..700).map(|i| i * 7).collect(),
            ];
            for short in shorts {
                let want: Vec<u32> = short
                    .iter()
                    .copied()
                    .filter(|x| x % 3 == 0 && *x < n * 3)
                    .collect();
                let both = |a, b| sorted_intersection(a, b).collect::<Vec<_>>();
                assert_eq!(both(&short, &long), want, "{short:?}");
                assert_eq!(both(&long, &short), want, "{short:?}");
            }
        }
    }
}
