//! The leaderboard's ranked orders (endpoint 38 of the API reference,
//! docs/openapi.yaml): for each of the five counts, the accounts whose count
//! is above 0, ordered by that count descending and ascending, ties by address
//! ascending in both. Prepared at load, so a page is a slice:
//! O(offset + limit) per request, never a sort.
//!
//! Layout (k_c accounts with count c > 0): two `u32` per member per count
//! (followers, following and mutuals hold most accounts; blocks and top8
//! few). The ascending order is the descending one with its runs of equal
//! counts reversed as wholes: one pass, no second sort.

use rayon::prelude::*;

use super::ranks::Counts;
use super::AccountId;

/// What `/leaderboard/ranked` sorts by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RankedSort {
    Mutuals,
    Followers,
    Following,
    /// The blocks count (`sort=blocked`).
    Blocks,
    Top8,
}

impl RankedSort {
    pub const ALL: [RankedSort; 5] = [
        RankedSort::Mutuals,
        RankedSort::Followers,
        RankedSort::Following,
        RankedSort::Blocks,
        RankedSort::Top8,
    ];

    fn index(self) -> usize {
        self as usize
    }

    fn count(self, c: &Counts) -> u32 {
        match self {
            RankedSort::Mutuals => c.mutuals,
            RankedSort::Followers => c.followers,
            RankedSort::Following => c.following,
            RankedSort::Blocks => c.blocks,
            RankedSort::Top8 => c.top8,
        }
    }
}

/// Both orders of every sort.
#[derive(Default)]
pub(super) struct RankedOrders {
    /// By `RankedSort` index: (descending, ascending).
    orders: Vec<(Vec<AccountId>, Vec<AccountId>)>,
}

impl RankedOrders {
    /// `counts`: every account's, complete (mutuals and tags included).
    pub(super) fn build(counts: &[Counts]) -> RankedOrders {
        // Sorted as packed keys (count inverted, then id): no lookup of a
        // count per comparison.
        Self::sorted_by(
            counts,
            |c, id| (u64::from(!c) << 32) | u64::from(id),
            |&k| k as u32,
        )
    }

    /// As `build`, ties by `key` (address order) where ids are not in
    /// address order (a refresh with accounts the base lacks).
    pub(super) fn build_keyed(
        counts: &[Counts],
        key: impl Fn(AccountId) -> u64 + Sync,
    ) -> RankedOrders {
        Self::sorted_by(counts, |c, id| (!c, key(id), id), |k| k.2)
    }

    /// Each order of the accounts whose count is above 0, descending by
    /// `pack(count, id)` (made to sort the count inverted, then the tie),
    /// and its ascending mirror.
    fn sorted_by<K: Ord + Send>(
        counts: &[Counts],
        pack: impl Fn(u32, AccountId) -> K + Sync,
        id_of: impl Fn(&K) -> AccountId + Sync,
    ) -> RankedOrders {
        let orders = RankedSort::ALL
            .par_iter()
            .map(|&sort| {
                let count = |id: AccountId| sort.count(&counts[id as usize]);
                let mut keys: Vec<K> = (0..counts.len() as u32)
                    .into_par_iter()
                    .filter_map(|id| {
                        let c = count(id);
                        (c > 0).then(|| pack(c, id))
                    })
                    .collect();
                keys.par_sort_unstable();
                let desc: Vec<AccountId> = keys.iter().map(&id_of).collect();
                drop(keys);
                let asc = ascending(&desc, count);
                (desc, asc)
            })
            .collect();
        RankedOrders { orders }
    }

    /// The members of `sort`, descending or ascending by their count,
    /// address ascending within a count.
    #[inline]
    pub(super) fn get(&self, sort: RankedSort, descending: bool) -> &[AccountId] {
        match self.orders.get(sort.index()) {
            Some((desc, _)) if descending => desc,
            Some((_, asc)) => asc,
            None => &[],
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.orders
            .iter()
            .map(|(d, a)| (d.capacity() + a.capacity()) * 4)
            .sum()
    }
}

/// `desc` (count descending, id ascending) turned into count ascending,
/// id ascending: the runs of equal counts in reverse order, each kept.
fn ascending(desc: &[AccountId], count: impl Fn(AccountId) -> u32) -> Vec<AccountId> {
    let mut asc = Vec::with_capacity(desc.len());
    let mut end = desc.len();
    while end > 0 {
        let c = count(desc[end - 1]);
        let start = desc[..end].partition_point(|&id| count(id) > c);
        asc.extend_from_slice(&desc[start..end]);
        end = start;
    }
    asc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_directions_tie_by_id() {
        let c = |followers, blocks| Counts {
            followers,
            blocks,
            ..Counts::default()
        };
        let counts = [c(2, 0), c(5, 1), c(0, 0), c(2, 0), c(5, 0), c(1, 3)];
        let r = RankedOrders::build(&counts);
        assert_eq!(r.get(RankedSort::Followers, true), &[1, 4, 0, 3, 5]);
        assert_eq!(r.get(RankedSort::Followers, false), &[5, 0, 3, 1, 4]);
        assert_eq!(r.get(RankedSort::Blocks, true), &[5, 1]);
        assert_eq!(r.get(RankedSort::Blocks, false), &[1, 5]);
        assert!(r.get(RankedSort::Top8, false).is_empty());
        assert!(RankedOrders::default()
            .get(RankedSort::Mutuals, true)
            .is_empty());
    }
}
