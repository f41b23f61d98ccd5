//! Uniqueness rules without a per-row allocation or a global sort: each
//! row's key is hashed, rows are bucketed by hash and each bucket sorted
//! and scanned on its own, in parallel; rows are compared only where their
//! hashes collide.
use std::borrow::Cow;

use rayon::prelude::*;

use super::tables::Address;
use super::{SnapshotError, SnapshotErrorKind};

/// FxHash-style word mixing with a final avalanche (only the top 32 bits
/// are used).
#[derive(Clone, Copy)]
pub(super) struct Mix(u64);

impl Mix {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    pub fn new() -> Self {
        Mix(0)
    }

    #[inline]
    pub fn word(self, w: u64) -> Self {
        Mix((self.0.rotate_left(5) ^ w).wrapping_mul(Self::K))
    }

    #[inline]
    pub fn bytes(mut self, b: &[u8]) -> Self {
        let mut chunks = b.chunks_exact(8);
        for c in &mut chunks {
            self = self.word(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.word(u64::from_le_bytes(tail)).word(b.len() as u64)
    }

    #[inline]
    pub fn address(self, a: &Address) -> Self {
        self.bytes(a)
    }

    #[inline]
    pub fn finish(self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// Rows per hash bucket `first_duplicate` aims at (a bucket's words then
/// sort inside the L1/L2 cache).
const BUCKET_ROWS: usize = 2048;

/// The earliest row whose key equals an earlier row's key, as
/// `(first, duplicate)`, or `None` when all keys are distinct.
///
/// Each row's 64-bit key hash is split: its top bits pick a bucket, its
/// next 32 bits are packed with the row number into one word. One
/// counting pass scatters the words into their buckets (rows ascending in
/// each), then every bucket is sorted and scanned on its own, in parallel;
/// rows are compared (`eq`) only where hashes collide. No per-row
/// allocation, and no global sort.
pub(super) fn first_duplicate<T, H, E>(items: &[T], hash: H, eq: E) -> Option<(usize, usize)>
where
    T: Sync,
    H: Fn(&T) -> u64 + Sync,
    E: Fn(&T, &T) -> bool + Sync,
{
    let n = items.len();
    if n < 2 {
        return None;
    }
    assert!(n <= u32::MAX as usize, "row numbers are packed in 32 bits");
    let bucket_bits = (usize::BITS - (n / BUCKET_ROWS).leading_zeros()).min(24);
    let buckets = 1usize << bucket_bits;
    let bucket_of = |h: u64| {
        if bucket_bits == 0 {
            0
        } else {
            (h >> (64 - bucket_bits)) as usize
        }
    };
    let hashes: Vec<u64> = items.par_iter().map(&hash).collect();
    let mut starts = vec![0usize; buckets + 1];
    for &h in &hashes {
        starts[bucket_of(h) + 1] += 1;
    }
    for b in 0..buckets {
        starts[b + 1] += starts[b];
    }
    let mut words = vec![0u64; n];
    let mut next = starts[..buckets].to_vec();
    for (row, &h) in hashes.iter().enumerate() {
        let b = bucket_of(h);
        words[next[b]] = ((h << bucket_bits) >> 32 << 32) | row as u64;
        next[b] += 1;
    }
    drop(hashes);
    let mut slices = Vec::with_capacity(buckets);
    let mut rest = words.as_mut_slice();
    for b in 0..buckets {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(starts[b + 1] - starts[b]);
        slices.push(head);
        rest = tail;
    }
    slices
        .into_par_iter()
        .with_min_len(16)
        .filter_map(|bucket| {
            bucket.sort_unstable();
            first_duplicate_in_bucket(bucket, items, &eq)
        })
        .min_by_key(|&(_, dup)| dup)
}

/// The earliest duplicate among sorted `(hash32, row32)` words.
fn first_duplicate_in_bucket<T>(
    words: &[u64],
    items: &[T],
    eq: &impl Fn(&T, &T) -> bool,
) -> Option<(usize, usize)> {
    let row = |w: u64| (w & 0xffff_ffff) as usize;
    let mut best: Option<(usize, usize)> = None;
    let mut start = 0;
    while start < words.len() {
        let h = words[start] >> 32;
        let mut end = start + 1;
        while end < words.len() && words[end] >> 32 == h {
            end += 1;
        }
        // Within a run rows ascend: the first j equal to an earlier i is
        // the run's earliest duplicate.
        'run: for j in start + 1..end {
            let rj = row(words[j]);
            if best.is_some_and(|(_, b)| rj >= b) {
                break;
            }
            for &w in &words[start..j] {
                let ri = row(w);
                if eq(&items[ri], &items[rj]) {
                    best = Some((ri, rj));
                    break 'run;
                }
            }
        }
        start = end;
    }
    best
}

/// Applies `first_duplicate` and turns a hit into the error for the later
/// row.
pub(super) fn unique<T, H, E, D>(
    file: &str,
    items: &[T],
    hash: H,
    eq: E,
    describe: D,
) -> Result<(), SnapshotError>
where
    T: Sync,
    H: Fn(&T) -> u64 + Sync,
    E: Fn(&T, &T) -> bool + Sync,
    D: Fn(&T) -> String,
{
    match first_duplicate(items, hash, eq) {
        None => Ok(()),
        Some((first, dup)) => Err(SnapshotError::at_row(
            SnapshotErrorKind::Duplicate,
            file,
            dup as u64,
            format!("duplicate {}, first at row {first}", describe(&items[dup])),
        )),
    }
}

/// Unicode lower case, borrowing when there is nothing to change: the
/// case folding of the `ens` name uniqueness rule.
pub fn fold_case(name: &str) -> Cow<'_, str> {
    if name
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
    {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(name.to_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The naive answer: the earliest row equal to some earlier row.
    fn naive_first_duplicate(keys: &[u64]) -> Option<(usize, usize)> {
        (1..keys.len()).find_map(|j| (0..j).find(|&i| keys[i] == keys[j]).map(|i| (i, j)))
    }

    #[test]
    fn first_duplicate_matches_the_naive_answer() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for n in [0usize, 1, 2, 3, 10, 100, 2049, 5000, 20_000] {
            for range in [n as u64 * 50 + 1, n as u64 + 1, 3] {
                let keys: Vec<u64> = (0..n).map(|_| rand() % range).collect();
                let want = naive_first_duplicate(&keys);
                // A good hash, a hash that collides a lot, and a constant one.
                let good = first_duplicate(
                    &keys,
                    |k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    |a, b| a == b,
                );
                let weak = first_duplicate(&keys, |k| (k % 7) << 61 | (k % 5), |a, b| a == b);
                assert_eq!(good, want, "n {n} range {range}");
                assert_eq!(weak, want, "n {n} range {range}");
                if n <= 5000 {
                    assert_eq!(first_duplicate(&keys, |_| 42, |a, b| a == b), want);
                }
            }
        }
    }
}
