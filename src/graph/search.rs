//! Case-insensitive literal substring search over the leaderboard's
//! addresses and names, without scanning every account per request.
//!
//! A byte-trigram index maps each trigram of the lower-cased texts to the
//! leaderboard positions (ascending, i.e. already in result order) whose
//! address or name contains it. A term of 3+ bytes walks the shortest
//! posting list of its trigrams in order, verifies each candidate, and stops
//! once `offset + limit` matches are found. Shorter terms match so much of
//! the board that an ordered scan with the same early stop is as fast.

use rayon::prelude::*;

use super::AccountId;
use crate::snapshot::Address;

#[derive(Debug, Default)]
pub struct SearchIndex {
    /// Lower-cased names of the leaderboard, position after position ("" for
    /// an account without a profile); `name_ends[p]` is where p's ends.
    names_lower: String,
    name_ends: Vec<u32>,
    /// Distinct trigrams, ascending, with CSR offsets into `postings`.
    grams: Vec<u32>,
    offsets: Vec<usize>,
    /// Each posting list as gaps between ascending positions in LEB128
    /// varints: gaps are small, so ~1.3 bytes a posting instead of 4.
    postings: Vec<u8>,
}

fn push_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Decodes a delta-varint posting list into ascending positions.
fn positions(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut i = 0;
    let mut last = 0usize;
    std::iter::from_fn(move || {
        if i >= bytes.len() {
            return None;
        }
        let (mut v, mut shift) = (0usize, 0);
        loop {
            let b = bytes[i];
            i += 1;
            v |= usize::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        last += v;
        Some(last)
    })
}

fn gram_key(w: &[u8]) -> u32 {
    (u32::from(w[0]) << 16) | (u32::from(w[1]) << 8) | u32::from(w[2])
}

/// `0x` + 40 lower-case hex digits in a stack buffer (no allocation on the
/// search hot path).
fn address_bytes(a: &Address) -> [u8; 42] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0u8; 42];
    out[0] = b'0';
    out[1] = b'x';
    for (i, b) in a.iter().enumerate() {
        out[2 + 2 * i] = HEX[usize::from(b >> 4)];
        out[3 + 2 * i] = HEX[usize::from(b & 15)];
    }
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.len() <= haystack.len() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// The distinct trigrams of an entry's texts, sorted.
fn entry_grams(address: &Address, name_lower: &str, out: &mut Vec<u32>) {
    out.clear();
    out.extend(address_bytes(address).windows(3).map(gram_key));
    out.extend(name_lower.as_bytes().windows(3).map(gram_key));
    out.sort_unstable();
    out.dedup();
}

impl SearchIndex {
    pub(super) fn build<'a>(
        leaderboard: &[AccountId],
        addresses: &[Address],
        name_of: impl Fn(AccountId) -> Option<&'a str> + Sync,
    ) -> SearchIndex {
        let lowered: Vec<String> = leaderboard
            .par_iter()
            .map(|&id| name_of(id).map_or(String::new(), str::to_lowercase))
            .collect();
        let mut names_lower = String::with_capacity(lowered.iter().map(String::len).sum());
        let mut name_ends = Vec::with_capacity(lowered.len());
        for name in &lowered {
            names_lower.push_str(name);
            name_ends.push(u32::try_from(names_lower.len()).unwrap_or(u32::MAX));
        }
        let board_addresses = |p: usize| &addresses[leaderboard[p] as usize];

        // Counting sort of (gram, position) pairs by gram: positions are
        // visited in order, so every posting list comes out ascending.
        let per_entry: Vec<Vec<u32>> = (0..leaderboard.len())
            .into_par_iter()
            .map_init(Vec::new, |buf, p| {
                entry_grams(board_addresses(p), &lowered[p], buf);
                buf.clone()
            })
            .collect();
        let mut counts: Vec<(u32, usize)> = {
            let mut all: Vec<u32> = per_entry.par_iter().flatten().copied().collect();
            all.par_sort_unstable();
            all.chunk_by(|a, b| a == b)
                .map(|c| (c[0], c.len()))
                .collect()
        };
        counts.shrink_to_fit();
        let grams: Vec<u32> = counts.iter().map(|c| c.0).collect();
        let mut offsets = Vec::with_capacity(grams.len() + 1);
        offsets.push(0usize);
        for &(_, c) in &counts {
            offsets.push(offsets.last().unwrap() + c);
        }
        drop(counts);
        // Dense gram -> write cursor table (2^24 slots, load time only):
        // a binary search per pair would cost ~17 probes x 50M pairs.
        let mut cursor = vec![0usize; 1 << 24];
        for (i, &g) in grams.iter().enumerate() {
            cursor[g as usize] = offsets[i];
        }
        let mut flat = vec![0u32; *offsets.last().unwrap()];
        for (p, entry) in per_entry.iter().enumerate() {
            for &g in entry {
                let c = &mut cursor[g as usize];
                flat[*c] = p as u32;
                *c += 1;
            }
        }
        drop((per_entry, cursor, lowered));
        let mut postings = Vec::with_capacity(flat.len() * 3 / 2);
        let mut byte_offsets = Vec::with_capacity(offsets.len());
        byte_offsets.push(0);
        for w in offsets.windows(2) {
            let mut last = 0;
            for (i, &p) in flat[w[0]..w[1]].iter().enumerate() {
                // The first position is its own gap from 0 (0 is valid).
                push_varint(&mut postings, if i == 0 { p } else { p - last });
                last = p;
            }
            byte_offsets.push(postings.len());
        }
        postings.shrink_to_fit();
        SearchIndex {
            names_lower,
            name_ends,
            grams,
            offsets: byte_offsets,
            postings,
        }
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.names_lower.capacity()
            + self.name_ends.capacity() * 4
            + self.grams.capacity() * 4
            + self.offsets.capacity() * std::mem::size_of::<usize>()
            + self.postings.capacity()
    }

    fn posting(&self, gram: u32) -> &[u8] {
        match self.grams.binary_search(&gram) {
            Ok(i) => &self.postings[self.offsets[i]..self.offsets[i + 1]],
            Err(_) => &[],
        }
    }

    fn name(&self, p: usize) -> &str {
        let start = if p == 0 {
            0
        } else {
            self.name_ends[p - 1] as usize
        };
        &self.names_lower[start..self.name_ends[p] as usize]
    }

    /// Leaderboard positions whose address or name contains `term_lower`
    /// (already trimmed and lower-cased, non-empty), in leaderboard order,
    /// after skipping `offset` matches, at most `limit`. `address(p)` is
    /// the address at leaderboard position p.
    pub fn find<'a>(
        &self,
        term_lower: &str,
        offset: usize,
        limit: usize,
        address: impl Fn(usize) -> &'a Address,
    ) -> Vec<usize> {
        let wanted = offset.saturating_add(limit);
        let term = term_lower.as_bytes();
        let mut found = Vec::new();
        let mut keep = |p: usize| {
            if self.name(p).contains(term_lower) || contains(&address_bytes(address(p)), term) {
                found.push(p);
            }
            found.len() >= wanted
        };
        if term.len() < 3 {
            for p in 0..self.name_ends.len() {
                if keep(p) {
                    break;
                }
            }
        } else {
            // Positions holding every trigram of the term: a merge-walk of
            // the (ascending) posting lists, so a rare term verifies a few
            // candidates instead of the whole of its rarest trigram's list.
            let mut grams: Vec<u32> = term.windows(3).map(gram_key).collect();
            grams.sort_unstable();
            grams.dedup();
            let mut lists: Vec<_> = grams
                .iter()
                .map(|&g| positions(self.posting(g)).peekable())
                .collect();
            'walk: loop {
                let mut candidate = 0;
                for list in &mut lists {
                    match list.peek() {
                        Some(&p) => candidate = candidate.max(p),
                        None => break 'walk,
                    }
                }
                let mut all_equal = true;
                for list in &mut lists {
                    while list.next_if(|&p| p < candidate).is_some() {}
                    match list.peek() {
                        Some(&p) if p == candidate => {}
                        Some(_) => all_equal = false,
                        None => break 'walk,
                    }
                }
                if all_equal {
                    if keep(candidate) {
                        break;
                    }
                    for list in &mut lists {
                        list.next();
                    }
                }
            }
        }
        found.drain(..offset.min(found.len()));
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_postings_round_trip() {
        let list = [0u32, 1, 2, 200, 201, 70_000, 5_000_000, u32::MAX - 1];
        let mut bytes = Vec::new();
        let mut last = 0;
        for (i, &p) in list.iter().enumerate() {
            push_varint(&mut bytes, if i == 0 { p } else { p - last });
            last = p;
        }
        let back: Vec<usize> = positions(&bytes).collect();
        assert_eq!(back, list.iter().map(|&p| p as usize).collect::<Vec<_>>());
        assert_eq!(positions(&[]).count(), 0);
    }
}
