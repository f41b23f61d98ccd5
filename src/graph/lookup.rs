//! Point lookups that touch a few cache lines instead of binary-searching a
//! 16-20 MB array (about 20 dependent cache misses at a million accounts,
//! the largest single cost of resolving a request's subject).

use std::ops::Range;

use super::AccountId;

const BUCKET_BITS: u32 = 16;

/// Start offsets of 2^16 buckets over a sorted array whose keys' bucket
/// (their top 16 bits) never decreases. Uniform keys (addresses, hashes)
/// leave ~15 entries per bucket at a million accounts; skewed keys only
/// make the final search longer, never wrong. 256 KiB.
pub struct Buckets {
    starts: Box<[u32]>,
}

impl Buckets {
    /// `bucket_of(i)` is the bucket of the i-th key of a sorted array of
    /// `len` keys (`len` < 2^32).
    pub fn new(len: usize, bucket_of: impl Fn(usize) -> usize) -> Self {
        let n = 1usize << BUCKET_BITS;
        let mut starts = vec![0u32; n + 1];
        let mut i = 0;
        for (b, start) in starts.iter_mut().enumerate() {
            while i < len && bucket_of(i) < b {
                i += 1;
            }
            *start = i as u32;
        }
        Buckets {
            starts: starts.into_boxed_slice(),
        }
    }

    /// The index range of the keys in `bucket`.
    pub fn range(&self, bucket: usize) -> Range<usize> {
        self.starts[bucket] as usize..self.starts[bucket + 1] as usize
    }

    pub fn heap_bytes(&self) -> usize {
        self.starts.len() * 4
    }

    pub fn of_address(address: &[u8; 20]) -> usize {
        u16::from_be_bytes([address[0], address[1]]) as usize
    }

    pub fn of_hash(hash: u64) -> usize {
        (hash >> (64 - BUCKET_BITS)) as usize
    }
}

/// The id (index) of `address` in the sorted `addresses`, `buckets` being
/// their [`Buckets`] by [`Buckets::of_address`].
pub fn find_address(
    addresses: &[[u8; 20]],
    buckets: &Buckets,
    address: &[u8; 20],
) -> Option<AccountId> {
    let range = buckets.range(Buckets::of_address(address));
    let start = range.start;
    let bucket = &addresses[range];
    super::prefetch_lines(bucket);
    bucket
        .binary_search(address)
        .ok()
        .map(|i| (start + i) as AccountId)
}

/// Token id -> a `u32` (a primary list's user, a list's ordinal). Token
/// ids are minted in sequence, so they are usually dense: then a direct
/// table (4 bytes per id, one cache miss); otherwise the sorted pairs.
pub enum TokenMap {
    /// `users[token_id]`, `NO_USER` where the id has no value.
    Dense(Box<[AccountId]>),
    Sorted(Box<[(u64, AccountId)]>),
}

/// The one value a [`TokenMap`] cannot hold (its dense form's "none").
pub const NO_USER: AccountId = AccountId::MAX;

impl TokenMap {
    /// `pairs`: (token id, user), sorted by token id and unique.
    pub fn new(pairs: Vec<(u64, AccountId)>) -> Self {
        let max = pairs.last().map_or(0, |&(t, _)| t);
        // Dense costs 4 bytes per id up to `max`; sorted pairs 16 per list.
        let dense_fits = max
            < (pairs.len() as u64)
                .saturating_mul(4)
                .saturating_add(1 << 16);
        let users_fit = pairs.iter().all(|&(_, u)| u != NO_USER);
        if dense_fits && users_fit {
            let mut users = vec![NO_USER; max as usize + 1];
            for (t, u) in pairs {
                users[t as usize] = u;
            }
            TokenMap::Dense(users.into_boxed_slice())
        } else {
            TokenMap::Sorted(pairs.into_boxed_slice())
        }
    }

    pub fn get(&self, token_id: u64) -> Option<AccountId> {
        match self {
            TokenMap::Dense(users) => usize::try_from(token_id)
                .ok()
                .and_then(|t| users.get(t))
                .copied()
                .filter(|&u| u != NO_USER),
            TokenMap::Sorted(pairs) => pairs
                .binary_search_by_key(&token_id, |&(t, _)| t)
                .ok()
                .map(|i| pairs[i].1),
        }
    }

    pub fn heap_bytes(&self) -> usize {
        match self {
            TokenMap::Dense(users) => users.len() * 4,
            TokenMap::Sorted(pairs) => pairs.len() * 16,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_key_once() {
        let keys: Vec<u64> = vec![0, 5, 1 << 48, (1 << 48) + 1, 3 << 48, u64::MAX];
        let b = Buckets::new(keys.len(), |i| Buckets::of_hash(keys[i]));
        assert_eq!(b.range(0), 0..2);
        assert_eq!(b.range(1), 2..4);
        assert_eq!(b.range(2), 4..4);
        assert_eq!(b.range(3), 4..5);
        assert_eq!(b.range(0xffff), 5..6);
        let total: usize = (0..1 << 16).map(|k| b.range(k).len()).sum();
        assert_eq!(total, keys.len());
    }

    #[test]
    fn list_users_dense_and_sorted_agree() {
        let dense = TokenMap::new(vec![(1, 7), (3, 0), (4, 2)]);
        assert!(matches!(dense, TokenMap::Dense(_)));
        let sorted = TokenMap::new(vec![(1, 7), (3, 0), (4, 2), (u64::MAX, 9)]);
        assert!(matches!(sorted, TokenMap::Sorted(_)));
        for l in [&dense, &sorted] {
            assert_eq!(l.get(1), Some(7));
            assert_eq!(l.get(3), Some(0));
            assert_eq!(l.get(4), Some(2));
            assert_eq!(l.get(0), None);
            assert_eq!(l.get(2), None);
            assert_eq!(l.get(5), None);
            assert_eq!(l.get(1 << 40), None);
        }
        assert_eq!(sorted.get(u64::MAX), Some(9));
        assert_eq!(TokenMap::new(Vec::new()).get(0), None);
    }
}
