//! 29, whom A follows that follow L: the smaller of A's following and L's
//! followers probed into the larger (a binary search of a record row),
//! each candidate's record of L looked up in one batch, then the term's
//! filter and the order (mutuals descending, then address ascending):
//! O(min(|A's following|, |L's followers|) × log(max)).

use std::cmp::Reverse;

use super::shown;
use crate::graph::{AccountId, Graph, Term};

/// The accounts C that A's primary list holds and whose primary list
/// holds L, neither record carrying block or mute, whose address or name
/// holds `term` (empty: any), mutuals descending then address ascending.
pub fn common_followers(g: &Graph, a: AccountId, l: AccountId, term: &str) -> Vec<AccountId> {
    let mut members = candidates(g, a, l);
    if !term.is_empty() {
        let term = Term::new(term);
        members.retain(|&c| g.holds_term(&term, c));
    }
    members.sort_unstable_by_key(|&c| (Reverse(g.stats(c).mutuals), g.order_key(c)));
    members
}

/// A's shown records ∩ L's followers whose record of L is shown: the
/// smaller side probed into the larger.
fn candidates(g: &Graph, a: AccountId, l: AccountId) -> Vec<AccountId> {
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
