//! The reverse direction: each account's followers, in the two orders
//! the followers endpoint pages through, so a page costs
//! O(offset + limit) instead of a sort of a hub's whole row.
//!
//! Layout (n accounts, e visible records): a CSR of its own, one offsets
//! array (8 bytes per account) shared by three column arrays of follower
//! ids (4 bytes each per record): `latest` (`updated_at` descending, then
//! address ascending), `by_count` (follower count descending, then
//! address ascending) and `by_address` (ids ascending, which is address
//! order). `earliest` walks `latest` backwards. A search within a hub's
//! followers walks `by_address`: the accounts' addresses and names are
//! then read in ascending order (a stream, not a cache and TLB miss per
//! follower), and the first `offset +
//! limit` matches are the page. Not a second petgraph `Csr` for the two
//! other orders: that one requires each row's columns ascending.
//!
//! Built from the forward CSR by a counting sort, which also yields each
//! account's mutual follows on the way.

use rayon::prelude::*;

use super::ranks::Counts;
use super::records::ForwardCsr;
use super::scatter::scatter_row_pairs;
use super::AccountId;

/// The reverse direction: T's followers in two precomputed orders.
#[derive(Debug, Default)]
pub struct FollowerIndex {
    offsets: Vec<usize>,
    /// `updated_at` descending, then address ascending.
    latest: Vec<AccountId>,
    /// followers count descending, then address ascending.
    by_count: Vec<AccountId>,
    /// Address (id) ascending.
    by_address: Vec<AccountId>,
}

impl FollowerIndex {
    /// T's followers, `updated_at` descending then address ascending.
    #[inline]
    pub(super) fn latest(&self, t: AccountId) -> &[AccountId] {
        let (a, b) = self.range(t);
        &self.latest[a..b]
    }
    /// T's followers, follower count descending then address ascending.
    #[inline]
    pub(super) fn by_count(&self, t: AccountId) -> &[AccountId] {
        let (a, b) = self.range(t);
        &self.by_count[a..b]
    }
    /// T's followers, address (id) ascending.
    #[inline]
    pub(super) fn by_address(&self, t: AccountId) -> &[AccountId] {
        let (a, b) = self.range(t);
        &self.by_address[a..b]
    }
    #[inline]
    fn range(&self, t: AccountId) -> (usize, usize) {
        let o = &self.offsets;
        (o[t as usize], o[t as usize + 1])
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.offsets.capacity() * std::mem::size_of::<usize>()
            + (self.latest.capacity() + self.by_count.capacity() + self.by_address.capacity()) * 4
    }
}

/// T's followers in both orders, from the forward CSR: a counting sort of
/// (follower, time) by target (followers ascending within each row, the
/// CSR being scanned in follower order), then each row sorted; and each
/// account's mutual follows, counted on the way.
pub(super) fn build_follower_index(
    n: usize,
    following: &ForwardCsr,
    stats: &[Counts],
) -> (FollowerIndex, Vec<u32>) {
    // Row lengths are the follower counts, counted already.
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0usize);
    for s in &stats[..n] {
        offsets.push(offsets.last().unwrap() + s.followers as usize);
    }
    // Edges in follower order, as (target, follower, time).
    let each_edge = |put: &mut dyn FnMut(u32, AccountId, i64)| {
        for f in 0..following.node_count() as u32 {
            for (&t, &at) in following
                .neighbors_slice(f)
                .iter()
                .zip(following.edges_slice(f))
            {
                put(t, f, at);
            }
        }
    };
    let (mut latest, mut at): (Vec<AccountId>, Vec<i64>) = scatter_row_pairs(&offsets, |put| {
        each_edge(&mut |t, f, at| {
            put(t, f, at);
        })
    });
    // Rows hold followers ascending now: each account's mutuals are a
    // merge of its two sorted lists (not a binary search per edge).
    let mutuals: Vec<u32> = (0..n)
        .into_par_iter()
        .map(|x| {
            if x >= following.node_count() {
                return 0;
            }
            sorted_common(
                following.neighbors_slice(x as u32),
                &latest[offsets[x]..offsets[x + 1]],
            )
        })
        .collect();
    let by_address = latest.clone();
    // Both other orders of each row in one parallel pass; sort keys are made
    // once per follower (not looked up in every comparison).
    let mut by_count = vec![0 as AccountId; latest.len()];
    {
        type Row<'a> = (&'a mut [AccountId], &'a mut [i64], &'a mut [AccountId]);
        let mut rows: Vec<Row<'_>> = Vec::with_capacity(n);
        let (mut ids, mut ts, mut by) = (
            latest.as_mut_slice(),
            at.as_mut_slice(),
            by_count.as_mut_slice(),
        );
        for w in offsets.windows(2) {
            let len = w[1] - w[0];
            let (a, ids_rest) = std::mem::take(&mut ids).split_at_mut(len);
            let (b, ts_rest) = std::mem::take(&mut ts).split_at_mut(len);
            let (c, by_rest) = std::mem::take(&mut by).split_at_mut(len);
            rows.push((a, b, c));
            (ids, ts, by) = (ids_rest, ts_rest, by_rest);
        }
        // Sort keys packed into integers: one compare per step.
        rows.into_par_iter().for_each_init(
            || (Vec::new(), Vec::new()),
            |(by_time, by_followers): &mut (Vec<u128>, Vec<u64>), (ids, ts, by)| {
                if ids.len() <= 1 {
                    by.copy_from_slice(ids);
                    return;
                }
                // Most followed first, then ascending ids.
                by_followers.clear();
                by_followers.extend(
                    ids.iter()
                        .map(|&f| (u64::from(!stats[f as usize].followers) << 32) | u64::from(f)),
                );
                by_followers.sort_unstable();
                for (slot, &key) in by.iter_mut().zip(by_followers.iter()) {
                    *slot = key as AccountId;
                }
                // Newest first; equal times keep ascending follower ids.
                by_time.clear();
                by_time.extend(ts.iter().zip(ids.iter()).map(|(&t, &f)| {
                    let newest_first = !((t as u64) ^ (1 << 63));
                    (u128::from(newest_first) << 32) | u128::from(f)
                }));
                by_time.sort_unstable();
                for (slot, &key) in ids.iter_mut().zip(by_time.iter()) {
                    *slot = key as AccountId;
                }
            },
        );
    }
    drop(at);
    (
        FollowerIndex {
            offsets,
            latest,
            by_count,
            by_address,
        },
        mutuals,
    )
}

/// How many values two ascending lists share.
fn sorted_common(a: &[u32], b: &[u32]) -> u32 {
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common
}

#[cfg(test)]
mod tests {
    use super::*;
    use petgraph::csr::Csr;

    #[test]
    fn followers_in_both_orders_and_mutuals() {
        // 0 -> 2 at 5; 1 -> 2 at 9; 3 -> 2 at 9; 2 -> 1 at 1; 1 -> 0 at 4.
        let edges = [(0, 2, 5), (1, 0, 4), (1, 2, 9), (2, 1, 1), (3, 2, 9)];
        let csr: ForwardCsr = Csr::from_sorted_edges(&edges).unwrap();
        let followers = [1, 1, 3, 0];
        let counts: Vec<Counts> = followers
            .iter()
            .map(|&followers| Counts {
                followers,
                ..Counts::default()
            })
            .collect();
        let (index, mutuals) = build_follower_index(4, &csr, &counts);
        // Newest first, ties (1 and 3 at 9) address ascending.
        assert_eq!(index.latest(2), &[1, 3, 0]);
        // Most followed first (0 and 1 have 1 each, 3 none).
        assert_eq!(index.by_count(2), &[0, 1, 3]);
        assert_eq!(index.latest(0), &[1]);
        assert!(index.latest(3).is_empty());
        // 1 <-> 2 follow each other.
        assert_eq!(mutuals, vec![0, 1, 1, 0]);
        assert_eq!(sorted_common(&[1, 3, 5, 7], &[0, 3, 7, 8]), 2);
    }
}
