//! The intersection of two ascending id lists, lazily, as the searches
//! within a set use it: O(short × log(long / short)) probes at most, a
//! stream over the longer list when the two are of a size.

use crate::graph::AccountId;

/// The ids in both lists ascending by `key`, in order, as they are asked for (a
/// page stops early). Each id of the shorter list is found in the longer
/// one by stepping over blocks of `SCAN_BLOCK`, then counting within
/// one: a stream the prefetcher follows. Galloping
/// (exponential, then binary search) only pays when the longer list is
/// far sparser in matches: its probes were one cache miss and one
/// mispredicted branch after another, for a hub's followers against a
/// few hundred candidates.
/// `key` orders both lists (address order: `Graph::order_key`, the id
/// itself unless a live index holds new accounts).
pub fn sorted_intersection_by<'a, K: Fn(AccountId) -> u64 + Copy>(
    a: &'a [AccountId],
    b: &'a [AccountId],
    key: K,
) -> SortedIntersection<'a, K> {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    SortedIntersection {
        short,
        long,
        gallop: long.len() / short.len().max(1) > GALLOP_RATIO,
        key,
    }
}

/// See [`sorted_intersection_by`]: the rest of both lists.
pub struct SortedIntersection<'a, K> {
    short: &'a [AccountId],
    long: &'a [AccountId],
    gallop: bool,
    key: K,
}

impl<K: Fn(AccountId) -> u64 + Copy> Iterator for SortedIntersection<'_, K> {
    type Item = AccountId;

    fn next(&mut self) -> Option<AccountId> {
        let key = self.key;
        while let Some((&x, rest)) = self.short.split_first() {
            self.short = rest;
            let long = self.long;
            let kx = key(x);
            let i = if self.gallop {
                let mut step = 1;
                while step < long.len() && key(long[step - 1]) < kx {
                    step *= 2;
                }
                long[..step.min(long.len())].partition_point(|&y| key(y) < kx)
            } else {
                let mut skipped = 0;
                while long.len() - skipped > SCAN_BLOCK && key(long[skipped + SCAN_BLOCK - 1]) < kx
                {
                    skipped += SCAN_BLOCK;
                }
                let block = &long[skipped..long.len().min(skipped + SCAN_BLOCK)];
                skipped
                    + block
                        .iter()
                        .map(|&y| usize::from(key(y) < kx))
                        .sum::<usize>()
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
    use super::sorted_intersection_by;

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
                let both = |a, b| sorted_intersection_by(a, b, u64::from).collect::<Vec<_>>();
                assert_eq!(both(&short, &long), want, "{short:?}");
                assert_eq!(both(&long, &short), want, "{short:?}");
            }
        }
    }
}
