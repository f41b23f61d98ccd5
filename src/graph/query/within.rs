//! The searches within one account's sets: its followers (23, 24) and a
//! record row (25, 26) whose members' address or name holds a term.
//!
//! Cost is bounded by the sets, never by the graph. Each member is tested
//! against the search index's lower-cased name (by account id) and its
//! hex address on the stack ([`SearchIndex::matches`]). Followers (their
//! address-ordered column of the follower index) and a following row are
//! both in address order, so a search reads members in ascending order
//! (a stream through the address and name tables) and stops after
//! `offset + limit` matches: a frequent term costs a few members, a rare
//! one the whole set, unless the search index's candidates for the term
//! are fewer than the walk would test (`scan_budget`).
//!
//! [`SearchIndex::matches`]: crate::graph::SearchIndex::matches

use std::ops::Range;

use super::followers::{RecordBatch, BATCH};
use super::intersect::sorted_intersection_by;
use super::{shown, Exclude, PageFill};
use crate::graph::{AccountId, Graph, IndexCost, Record, RecordRow, Term};

/// 23, 24: T's followers (all of them, or without those whose record of T
/// carries block or mute) whose address or name holds `term` (not
/// empty), address ascending, paged; each with its record of T.
pub fn search_followers(
    g: &Graph,
    t: AccountId,
    term: &str,
    offset: usize,
    limit: usize,
    exclude: Exclude,
) -> Vec<(AccountId, Record)> {
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
        let key = |id| g.order_key(id);
        ids.sort_unstable_by_key(|&id| key(id));
        // Found among the followers lazily: the page's ten are usually
        // in the first seventh of them.
        Box::new(sorted_intersection_by(&ids, followers, key).filter(|&id| g.holds_term(&term, id)))
    } else {
        let resume = match first.last() {
            Some(&last) if first.len() == wanted => last + 1,
            _ => scan_end,
        };
        let rest = matching(g, &term, resume..followers.len(), |i| followers[i]);
        Box::new(first.into_iter().chain(rest).map(|i| followers[i]))
    };
    let mut skip = offset;
    if exclude == Exclude::Nobody {
        // Every candidate follows T and is shown: the skipped ones need
        // no records.
        matches.by_ref().take(skip).for_each(drop);
        skip = 0;
    }
    let mut page = PageFill::new(skip, limit, 64);
    while !page.is_full() {
        // No more than the page can still take: the matches after it
        // would extend a rare term's walk over the followers for nothing.
        let batch = RecordBatch::look_up(
            g,
            matches
                .by_ref()
                .take(page.wanted().min(BATCH))
                .map(|f| (f, t)),
        );
        if batch.is_empty() {
            break;
        }
        for (&(f, _), record) in batch.pairs().zip(batch.records()) {
            let Some(record) = *record else { continue };
            if exclude == Exclude::BlockedOrMuted && !shown(g, record.tagset) {
                continue;
            }
            if page.offer((f, record)) {
                break;
            }
        }
    }
    page.rows
}

/// 25, 26: the indexes into `row` of its records that carry neither block
/// nor mute and whose account's address or name holds `term` (not
/// empty), address ascending (the row's order), paged.
pub fn search_following(
    g: &Graph,
    row: &RecordRow<'_>,
    term: &str,
    offset: usize,
    limit: usize,
) -> Vec<usize> {
    let term = Term::new(term);
    matching(g, &term, 0..row.len(), |i| row.targets[i])
        .filter(|&i| shown(g, row.tagset(i)))
        .skip(offset)
        .take(limit)
        .collect()
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
pub(super) fn matching<'a>(
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
        g.holds_term(term, member(i))
    })
}

#[cfg(test)]
mod tests {
    use super::scan_budget;
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
}
