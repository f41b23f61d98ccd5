//! Which lists each storage location holds, kept by the tail between
//! polls. `efp_lists` has no index by storage location (its key is the
//! NFT's), so finding the lists at a touched location in SQL scans the
//! whole table: a quarter of a second at a million lists, every poll.
//! The tail reads the table's locations once instead, inside a poll's
//! transaction, and keeps them current from its re-reads: every change
//! of a list's location is an event (`Transfer` or
//! `UpdateListStorageLocation`) that touches the list, and every list a
//! poll re-reads reports where it is now ([`ListLocations::set`]). The
//! lists are then read by their key.
//!
//! A location is kept as a 64-bit hash: a collision only adds a list to
//! a re-read, which changes nothing (a re-read replaces its entity
//! whole with what the database holds).
//!
//! Cost: one scan of `efp_lists` (the export's mapping) when the tail
//! first needs it; 16 bytes a list, sorted, plus the lists moved since
//! in two small maps; a lookup is a binary search.

use std::collections::BTreeSet;
use std::hash::BuildHasher;

use tokio_postgres::Client;

use super::error::ExportError;
use super::source::{self, Lsl, Only};
use super::Skips;
use crate::graph::{FastMap, FastState};

#[derive(Default)]
pub struct ListLocations {
    hasher: FastState,
    /// (location hash, token), ascending: the table as first read.
    read: Vec<(u64, u64)>,
    /// Lists re-read since, by token: where each is now (`None`: no
    /// location, or no such list).
    moved: FastMap<u64, Option<u64>>,
    /// The same by location hash.
    moved_to: FastMap<u64, Vec<u64>>,
}

impl ListLocations {
    /// Every list's location, in the caller's transaction.
    pub async fn read(client: &Client) -> Result<ListLocations, ExportError> {
        let mut ignored = Skips::default();
        let index = source::lists(client, None, &mut ignored, Only::ALL, Only::ALL).await?;
        let mut out = ListLocations::default();
        for (lsl, tokens) in index.iter() {
            let h = out.hash(&lsl);
            out.read.extend(tokens.into_iter().map(|t| (h, t)));
        }
        out.read.sort_unstable();
        Ok(out)
    }

    fn hash(&self, lsl: &Lsl) -> u64 {
        self.hasher.hash_one(lsl)
    }

    /// Adds the lists at `lsl` (and any whose location hashes alike) to
    /// `out`.
    pub fn tokens_at(&self, lsl: &Lsl, out: &mut BTreeSet<u64>) {
        let h = self.hash(lsl);
        let from = self.read.partition_point(|e| e.0 < h);
        out.extend(
            self.read[from..]
                .iter()
                .take_while(|e| e.0 == h)
                .map(|e| e.1)
                .filter(|t| !self.moved.contains_key(t)),
        );
        if let Some(moved) = self.moved_to.get(&h) {
            out.extend(moved);
        }
    }

    /// List `token` is at `lsl` now (`None`: nowhere, or no such list).
    pub fn set(&mut self, token: u64, lsl: Option<&Lsl>) {
        let now = lsl.map(|l| self.hash(l));
        if let Some(Some(was)) = self.moved.insert(token, now) {
            if let Some(v) = self.moved_to.get_mut(&was) {
                v.retain(|&t| t != token);
                if v.is_empty() {
                    self.moved_to.remove(&was);
                }
            }
        }
        if let Some(h) = now {
            self.moved_to.entry(h).or_default().push(token);
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.read.capacity() * 16
            + self.moved.capacity() * 17
            + self
                .moved_to
                .values()
                .map(|v| 40 + v.capacity() * 8)
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lsl(slot: u8) -> Lsl {
        Lsl {
            chain_id: 8453,
            contract: [7; 20],
            slot: [slot; 32],
        }
    }

    #[test]
    fn lists_move_and_leave() {
        let mut l = ListLocations::default();
        let (a, b) = (l.hash(&lsl(1)), l.hash(&lsl(2)));
        l.read = vec![(a, 10), (a, 11), (b, 12)];
        l.read.sort_unstable();
        let at = |l: &ListLocations, s: u8| {
            let mut out = BTreeSet::new();
            l.tokens_at(&lsl(s), &mut out);
            out.into_iter().collect::<Vec<_>>()
        };
        assert_eq!(at(&l, 1), [10, 11]);
        assert_eq!(at(&l, 3), Vec::<u64>::new());
        l.set(11, Some(&lsl(2)));
        l.set(13, Some(&lsl(3)));
        assert_eq!(
            (at(&l, 1), at(&l, 2), at(&l, 3)),
            (vec![10], vec![11, 12], vec![13])
        );
        l.set(11, Some(&lsl(3)));
        l.set(12, None);
        assert_eq!((at(&l, 2), at(&l, 3)), (vec![], vec![11, 13]));
        assert!(!l.moved_to.contains_key(&b));
    }
}
