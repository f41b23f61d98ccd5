//! Per-account counts (followers, following, mutuals, blocks, top8),
//! their SQL `RANK()`s, and the leaderboard order.
//!
//! Layout (n accounts): five `u32` counts per account (20 bytes); a rank
//! depends only on its count, so each of the five ranks is a table of the
//! distinct counts (a few thousand), searched per request, rather than
//! five more `u32` per account. The leaderboard (accounts with a primary
//! list or a follower, followers descending then address ascending) is
//! one `u32` per entry; the search index is built over it.
//!
//! Follow counts come from the forward CSR, block and top8 counts from
//! the tagged records, mutuals from the follower index's build; the rank
//! tables are made last. The few accounts some follower blocked or muted
//! keep how many did, sorted (8 bytes each), for the counts that leave
//! those followers out.

use std::cmp::Reverse;

use rayon::prelude::*;

use super::records::ForwardCsr;
use super::{prefetch, AccountId};
use super::{FLAG_BLOCK, FLAG_MUTE, FLAG_TOP8};

/// The five counts of one account, as stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub(super) followers: u32,
    pub(super) following: u32,
    pub(super) mutuals: u32,
    pub(super) blocks: u32,
    pub(super) top8: u32,
}

/// SQL `RANK()` of one count, descending, among accounts whose count is >
/// 0, as (count, rank) for each distinct count > 0, count descending. A
/// rank depends only on the count, so the distinct counts (a few thousand)
/// replace a rank per account.
/// `RankTable` answers counts below this from a direct table: most
/// accounts' counts are small, and five binary searches a row showed in
/// the profile of a leaderboard page.
const DIRECT_COUNTS: usize = 4096;

#[derive(Debug, Default)]
struct RankTable {
    /// (count, rank), count descending.
    by_count: Vec<(u32, u32)>,
    /// The rank of every count below `DIRECT_COUNTS`.
    small: Vec<u32>,
}

impl RankTable {
    fn new(counts: impl Iterator<Item = u32>) -> RankTable {
        let mut sorted: Vec<u32> = counts.filter(|&c| c > 0).collect();
        sorted.par_sort_unstable_by(|a, b| b.cmp(a));
        let mut table = Vec::new();
        for (i, &c) in sorted.iter().enumerate() {
            if i == 0 || sorted[i - 1] != c {
                // Ties share the rank of their first; the next leaves a gap.
                table.push((c, i as u32 + 1));
            }
        }
        table.shrink_to_fit();
        let mut ranks = RankTable {
            by_count: table,
            small: Vec::new(),
        };
        ranks.small = (0..DIRECT_COUNTS as u32).map(|c| ranks.search(c)).collect();
        ranks
    }

    fn rank(&self, count: u32) -> u32 {
        match self.small.get(count as usize) {
            Some(&rank) => rank,
            None => self.search(count),
        }
    }

    fn search(&self, count: u32) -> u32 {
        if count == 0 {
            return 0;
        }
        self.by_count
            .binary_search_by(|&(c, _)| count.cmp(&c))
            .map_or(0, |i| self.by_count[i].1)
    }
}

/// Counts and ranks of one account (ranks are 0 when the count is 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccountStats {
    pub followers: u32,
    pub following: u32,
    pub mutuals: u32,
    pub blocks: u32,
    pub top8: u32,
    pub followers_rank: u32,
    pub following_rank: u32,
    pub mutuals_rank: u32,
    pub blocks_rank: u32,
    pub top8_rank: u32,
}

/// The counts, ranks and leaderboard of every account.
pub(super) struct Stats {
    counts: Vec<Counts>,
    /// followers, following, mutuals, blocks, top8.
    rank_tables: [RankTable; 5],
    leaderboard: Vec<AccountId>,
    /// (account, followers whose record of it carries `block` or `mute`),
    /// by account, for the accounts that have any (few).
    hidden_followers: Vec<(AccountId, u32)>,
}

impl Stats {
    /// `counts` complete but for the mutuals, which `mutuals` holds.
    pub(super) fn new(
        mut counts: Vec<Counts>,
        mutuals: Vec<u32>,
        leaderboard: Vec<AccountId>,
        hidden_followers: Vec<(AccountId, u32)>,
    ) -> Stats {
        for (s, m) in counts.iter_mut().zip(mutuals) {
            s.mutuals = m;
        }
        let rank_tables = [
            RankTable::new(counts.iter().map(|s| s.followers)),
            RankTable::new(counts.iter().map(|s| s.following)),
            RankTable::new(counts.iter().map(|s| s.mutuals)),
            RankTable::new(counts.iter().map(|s| s.blocks)),
            RankTable::new(counts.iter().map(|s| s.top8)),
        ];
        Stats {
            counts,
            rank_tables,
            leaderboard,
            hidden_followers,
        }
    }

    /// `counts` complete (mutuals included) and the leaderboard made
    /// (a refresh: hidden followers are read from the base).
    pub(super) fn from_counts(counts: Vec<Counts>, leaderboard: Vec<AccountId>) -> Stats {
        Stats::new(counts, Vec::new(), leaderboard, Vec::new())
    }

    /// Every account's counts, by id.
    pub(super) fn counts(&self) -> &[Counts] {
        &self.counts
    }

    /// How many of the account's followers' records of it carry `block`
    /// or `mute`.
    #[inline]
    pub(super) fn hidden_followers(&self, id: AccountId) -> u32 {
        self.hidden_followers
            .binary_search_by_key(&id, |&(a, _)| a)
            .map_or(0, |i| self.hidden_followers[i].1)
    }

    /// Whether the account is on the leaderboard: it has a primary list
    /// (`primary_list`) or a follower.
    #[inline]
    pub(super) fn on_leaderboard(&self, id: AccountId, has_primary_list: bool) -> bool {
        has_primary_list
            || self
                .counts
                .get(id as usize)
                .is_some_and(|c| c.followers > 0)
    }

    #[inline]
    pub(super) fn get(&self, id: AccountId) -> AccountStats {
        let c = self.counts[id as usize];
        let [followers, following, mutuals, blocks, top8] = &self.rank_tables;
        AccountStats {
            followers: c.followers,
            following: c.following,
            mutuals: c.mutuals,
            blocks: c.blocks,
            top8: c.top8,
            followers_rank: followers.rank(c.followers),
            following_rank: following.rank(c.following),
            mutuals_rank: mutuals.rank(c.mutuals),
            blocks_rank: blocks.rank(c.blocks),
            top8_rank: top8.rank(c.top8),
        }
    }

    /// Starts loading the account's counts (see `Graph::prefetch_accounts`).
    #[inline(always)]
    pub(super) fn prefetch(&self, id: usize) {
        prefetch(&self.counts[id]);
    }

    /// Leaderboard accounts, followers descending then address ascending.
    #[inline]
    pub(super) fn leaderboard(&self) -> &[AccountId] {
        &self.leaderboard
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<Counts>()
            + self
                .rank_tables
                .iter()
                .map(|t| t.by_count.capacity() * 8 + t.small.capacity() * 4)
                .sum::<usize>()
            + self.leaderboard.capacity() * 4
            + self.hidden_followers.capacity() * 8
    }
}

/// Each account's following and followers counts (the rest 0 for now).
pub(super) fn count_follows(n: usize, following: &ForwardCsr) -> Vec<Counts> {
    let mut counts = vec![Counts::default(); n];
    for f in 0..following.node_count() as u32 {
        let targets = following.neighbors_slice(f);
        counts[f as usize].following = targets.len() as u32;
        for &t in targets {
            counts[t as usize].followers += 1;
        }
    }
    counts
}

/// The leaderboard: accounts with a primary list or a follower, followers
/// descending then address ascending.
pub(super) fn leaderboard_order(
    counts: &[Counts],
    has_primary_list: impl Fn(AccountId) -> bool,
) -> Vec<AccountId> {
    let mut leaderboard: Vec<AccountId> = (0..counts.len() as u32)
        .filter(|&id| has_primary_list(id) || counts[id as usize].followers > 0)
        .collect();
    leaderboard.par_sort_unstable_by_key(|&id| (Reverse(counts[id as usize].followers), id));
    leaderboard
}

/// Adds the blocks and top8 counts of the tagged records, given as the
/// flags of each one's tag set and its target; returns the hidden
/// followers (records carrying `block` or `mute`) per target that has any.
pub(super) fn count_tagged(
    counts: &mut [Counts],
    tagged: impl Iterator<Item = (u8, AccountId)>,
) -> Vec<(AccountId, u32)> {
    let mut hidden: Vec<AccountId> = Vec::new();
    for (flags, to) in tagged {
        if flags & FLAG_BLOCK != 0 {
            counts[to as usize].blocks += 1;
        }
        if flags & FLAG_TOP8 != 0 {
            counts[to as usize].top8 += 1;
        }
        if flags & (FLAG_BLOCK | FLAG_MUTE) != 0 {
            hidden.push(to);
        }
    }
    hidden.par_sort_unstable();
    let mut per_target: Vec<(AccountId, u32)> = Vec::new();
    for run in hidden.chunk_by(|a, b| a == b) {
        per_target.push((run[0], run.len() as u32));
    }
    per_target
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_table_is_sql_rank_over_positive_counts() {
        let table = RankTable::new([5, 3, 3, 0, 1, 5, 3].into_iter());
        let ranks: Vec<u32> = [5, 3, 0, 1, 2, 9].iter().map(|&c| table.rank(c)).collect();
        // 5,5 share 1; 3,3,3 share 3; 1 is 6th; 0 has rank 0; absent counts 0.
        assert_eq!(ranks, vec![1, 3, 0, 6, 0, 0]);
        assert_eq!(RankTable::new(std::iter::empty()).rank(4), 0);
        // Counts past the direct table are searched.
        let big = DIRECT_COUNTS as u32;
        let table = RankTable::new([big + 7, big + 7, 2, big - 1, big].into_iter());
        assert_eq!(table.rank(big + 7), 1);
        assert_eq!(table.rank(big), 3);
        assert_eq!(table.rank(big - 1), 4);
        assert_eq!(table.rank(2), 5);
        assert_eq!(table.rank(big + 1), 0);
    }
}
