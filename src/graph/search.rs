//! Case-insensitive literal substring search over the leaderboard's
//! addresses and names, without scanning every account per request.
//!
//! A byte-trigram index maps each trigram of the lower-cased texts to the
//! leaderboard positions (ascending, i.e. already in result order) whose
//! address or name contains it. A term of 3+ bytes intersects the posting
//! lists of its trigrams (driven by the shortest, the others skipping
//! blocks), verifies each common position, and stops once `offset + limit`
//! matches are found. Shorter terms match so much of the board that an
//! ordered scan with the same early stop is as fast.

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
    /// Skip entries of the lists longer than `SKIP_EVERY` postings, list
    /// after list (`skip_offsets` per gram, CSR): for each block after the
    /// first, (position of the posting before it, byte offset of its first
    /// posting within the list). An intersection jumps over the blocks of
    /// a long list instead of decoding them.
    skips: Vec<(u32, u32)>,
    skip_offsets: Vec<u32>,
}

/// Postings per skip block.
const SKIP_EVERY: usize = 128;

fn push_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A read position in one posting list, moving forward only.
struct Cursor<'a> {
    bytes: &'a [u8],
    skips: &'a [(u32, u32)],
    /// Byte offset of the next varint.
    at: usize,
    /// The position decoded last (0 before the first: gaps count from 0).
    last: usize,
    /// The current position (`None` before the first `seek`).
    current: Option<usize>,
    /// The first skip entry ahead of `at`.
    next_skip: usize,
}

impl<'a> Cursor<'a> {
    fn new(bytes: &'a [u8], skips: &'a [(u32, u32)]) -> Self {
        Cursor {
            bytes,
            skips,
            at: 0,
            last: 0,
            current: None,
            next_skip: 0,
        }
    }

    fn decode_next(&mut self) -> Option<usize> {
        if self.at >= self.bytes.len() {
            self.current = None;
            return None;
        }
        let (mut v, mut shift) = (0usize, 0);
        loop {
            let b = self.bytes[self.at];
            self.at += 1;
            v |= usize::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        self.last += v;
        self.current = Some(self.last);
        self.current
    }

    /// The first position >= `target` at or after the current one.
    fn seek(&mut self, target: usize) -> Option<usize> {
        if let Some(p) = self.current {
            if p >= target {
                return Some(p);
            }
        }
        while self
            .skips
            .get(self.next_skip)
            .is_some_and(|&(_, offset)| offset as usize <= self.at)
        {
            self.next_skip += 1;
        }
        // Most seeks land in the current block: decode on. Otherwise jump
        // to the last block whose preceding posting is < target.
        let ahead = &self.skips[self.next_skip..];
        if ahead
            .first()
            .is_some_and(|&(before, _)| (before as usize) < target)
        {
            let k = ahead.partition_point(|&(before, _)| (before as usize) < target);
            let (before, offset) = ahead[k - 1];
            self.at = offset as usize;
            self.last = before as usize;
            self.next_skip += k;
        }
        loop {
            match self.decode_next() {
                Some(p) if p < target => continue,
                other => return other,
            }
        }
    }
}

/// Decodes a delta-varint posting list into ascending positions.
#[cfg(test)]
fn positions(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut cursor = Cursor::new(bytes, &[]);
    std::iter::from_fn(move || cursor.decode_next())
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
        let mut skips = Vec::new();
        let mut skip_offsets = Vec::with_capacity(offsets.len());
        skip_offsets.push(0);
        for w in offsets.windows(2) {
            let list_start = postings.len();
            let mut last = 0;
            for (i, &p) in flat[w[0]..w[1]].iter().enumerate() {
                if i > 0 && i % SKIP_EVERY == 0 {
                    skips.push((last, (postings.len() - list_start) as u32));
                }
                // The first position is its own gap from 0 (0 is valid).
                push_varint(&mut postings, if i == 0 { p } else { p - last });
                last = p;
            }
            byte_offsets.push(postings.len());
            skip_offsets.push(skips.len() as u32);
        }
        postings.shrink_to_fit();
        skips.shrink_to_fit();
        SearchIndex {
            names_lower,
            name_ends,
            grams,
            offsets: byte_offsets,
            postings,
            skips,
            skip_offsets,
        }
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.names_lower.capacity()
            + self.name_ends.capacity() * 4
            + self.grams.capacity() * 4
            + self.offsets.capacity() * std::mem::size_of::<usize>()
            + self.postings.capacity()
            + self.skips.capacity() * 8
            + self.skip_offsets.capacity() * 4
    }

    /// The posting list of `gram` (empty when no entry holds it).
    fn cursor(&self, gram: u32) -> Cursor<'_> {
        match self.grams.binary_search(&gram) {
            Ok(i) => Cursor::new(
                &self.postings[self.offsets[i]..self.offsets[i + 1]],
                &self.skips[self.skip_offsets[i] as usize..self.skip_offsets[i + 1] as usize],
            ),
            Err(_) => Cursor::new(&[], &[]),
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
            // Positions holding every trigram of the term: a leapfrog
            // intersection driven by the shortest list, the longer ones
            // jumping over whole blocks, so a rare term costs about its
            // rarest trigram's list, not its commonest's.
            let mut grams: Vec<u32> = term.windows(3).map(gram_key).collect();
            grams.sort_unstable();
            grams.dedup();
            let mut lists: Vec<Cursor<'_>> = grams.iter().map(|&g| self.cursor(g)).collect();
            lists.sort_by_key(|c| c.bytes.len());
            let mut target = 0;
            'walk: while let Some(candidate) = lists[0].seek(target) {
                for list in &mut lists[1..] {
                    match list.seek(candidate) {
                        None => break 'walk,
                        Some(p) if p > candidate => {
                            target = p;
                            continue 'walk;
                        }
                        Some(_) => {}
                    }
                }
                if keep(candidate) {
                    break;
                }
                target = candidate + 1;
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

    /// Long posting lists (skips used) agree with a plain scan.
    #[test]
    fn intersection_with_skips_matches_a_scan() {
        let n = 6000usize;
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            state >> 33
        };
        let addresses: Vec<Address> = (0..n)
            .map(|_| std::array::from_fn(|_| next() as u8))
            .collect();
        // A 4-letter alphabet: every trigram is in hundreds of names.
        let names: Vec<String> = (0..n)
            .map(|_| {
                let len = 4 + next() as usize % 8;
                (0..len)
                    .map(|_| b"abcd"[next() as usize % 4] as char)
                    .collect()
            })
            .collect();
        let leaderboard: Vec<AccountId> = (0..n as AccountId).collect();
        let index = SearchIndex::build(&leaderboard, &addresses, |id| {
            Some(names[id as usize].as_str())
        });
        assert!(!index.skips.is_empty());
        let mut terms: Vec<String> =
            vec!["abc".into(), "dddd".into(), "abcdab".into(), "0x0".into()];
        for i in 0..60 {
            let name = &names[next() as usize % n];
            let len = 3 + i % 4;
            if name.len() >= len {
                terms.push(name[name.len() - len..].to_owned());
            }
            let hex = address_bytes(&addresses[next() as usize % n]);
            let from = next() as usize % 36;
            terms.push(String::from_utf8(hex[from..from + 3 + i % 5].to_vec()).unwrap());
        }
        for term in &terms {
            let all: Vec<usize> = (0..n)
                .filter(|&p| {
                    names[p].contains(term.as_str())
                        || contains(&address_bytes(&addresses[p]), term.as_bytes())
                })
                .collect();
            for (offset, limit) in [
                (0, usize::MAX),
                (0, 10),
                (7, 5),
                (all.len().saturating_sub(2), 10),
            ] {
                let want: Vec<usize> = all.iter().copied().skip(offset).take(limit).collect();
                let got = index.find(term, offset, limit, |p| &addresses[p]);
                assert_eq!(got, want, "term {term:?} offset {offset} limit {limit}");
            }
        }
    }
}
