//! Case-insensitive literal substring search over the leaderboard's
//! addresses and names, without scanning every account per request.
//!
//! A gram index maps each gram to the leaderboard positions (ascending,
//! i.e. already in result order) whose text holds it. A name's grams are
//! its byte trigrams. An address's are 4 hex digits at any place (37 an
//! address) and its first 1 and 2 digits: a hex
//! digit is 4 bits, so 4 of them make a 16-bit gram where 4 bytes of
//! text would not fit a table. A term of 3+ bytes is looked for both
//! ways (`sides`): in names, the lists of all its trigrams; in addresses
//! (a term of `0-9a-f`, or `0x…`/`x…` for an address's start), the
//! lists of all its 4-digit windows, or for 3 digits the 32 grams they
//! start or end. Each way is a leapfrog over its lists, the
//! two merged; each position is then verified, until `offset + limit`
//! matches are found. Shorter terms match so much of the board that an
//! ordered scan with the same early stop is as fast.
//!
//! Cost model, at a million accounts: 4 hex digits (the search box's
//! typical query of an address) read one list of ~570 postings for the
//! addresses and two digit trigrams of ~3,200 for the names, where
//! address trigrams made two lists of ~12,000 (a hex trigram is in ~1%
//! of addresses). The index holds 127 MB in all, 22 MB more than with
//! address trigrams: as many postings, but longer gaps between them.
//!
//! The lower-cased names are kept by account id, with one aligned 32-byte
//! entry per account (a copy of its address, where its name starts, its
//! length, a mask of the bytes it holds), so that a search within a set
//! of accounts (followers, following: [`SearchIndex::matches`]) tests
//! each member with no lower-casing per request and one cache line read:
//! a name is read only if its mask holds every byte of the term (most
//! names do not, for a term of 3-4 letters and digits), ~20 ns a member
//! at a million accounts. How a name or an address is tested: `term.rs`;
//! how posting lists are stored and intersected: `postings.rs`.
//!
//! Within a hub's followers (tens of thousands), a walk in address order
//! stops after `offset + limit` matches, so its cost is the number of
//! followers before the page's last match; the index path costs its
//! lists' postings and its candidates (decoded, mapped to ids, sorted,
//! merged with the followers). Neither can be told from the term alone
//! (a list does not say how rare a longer term is), so the walk gets
//! half of the index path's expected cost ([`SearchIndex::plan`])
//! as a budget and the index path runs only when the budget did not find
//! the page: at most 1.5 times the cheaper way.

use rayon::prelude::*;

use super::postings::{
    block_bytes, gap_width, intersect_all, leapfrog, write_block_head, write_packed, Cursor,
    BLOCK_LEN,
};
use super::term::{byte_mask, Term};
use super::AccountId;
use crate::snapshot::Address;

/// What testing one account reads, in one aligned half cache line: a
/// walk over a hub's followers was bound by the lines it touched per
/// member (address, name mask, name bounds: ~30 ns a member), not by the
/// compares.
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    /// A copy of the account's address.
    address: Address,
    /// Where its lower-cased name starts in `names_lower`.
    name_start: u32,
    /// The name's `byte_mask` (48 bits), and its length in bytes above
    /// them (`LONG_NAME`: look it up in `long_name_ends`).
    mask_and_len: u64,
}

const LEN_SHIFT: u32 = 48;
const LONG_NAME: u64 = 0xffff;

impl Entry {
    fn mask(&self) -> u64 {
        self.mask_and_len & ((1 << LEN_SHIFT) - 1)
    }
}

#[derive(Debug, Default)]
pub struct SearchIndex {
    /// Lower-cased names of every account, id after id ("" for an account
    /// without a profile).
    names_lower: String,
    /// By account id.
    entries: Vec<Entry>,
    /// (id, end of its name) of names of `LONG_NAME` bytes or more, by id.
    long_name_ends: Vec<(AccountId, u32)>,
    /// Distinct trigrams, ascending, with CSR offsets into `postings`.
    grams: Vec<u32>,
    offsets: Vec<usize>,
    /// Postings per gram.
    counts: Vec<u32>,
    /// Each posting list as blocks of bit-packed gaps between ascending
    /// positions (`postings.rs`): gaps are small, so ~1.15 bytes a
    /// posting instead of 4.
    postings: Vec<u8>,
    /// Skip entries of the lists longer than `BLOCK_LEN` postings, list
    /// after list (`skip_offsets` per gram, CSR): for each block after the
    /// first, (position of the posting before it, byte offset of the block
    /// within the list). An intersection jumps over the blocks of a long
    /// list instead of decoding them.
    skips: Vec<(u32, u32)>,
    skip_offsets: Vec<u32>,
    /// The rank in `grams` of each address gram (`NO_GRAM` when no
    /// address holds it), by key - `QUAD`: a term of 3 hex digits looks
    /// up 32 of them, a binary search each took ~1.8 µs of 17 of them.
    address_ranks: Vec<u32>,
}

/// A name's trigram: its three bytes (24 bits).
fn gram_key(w: &[u8]) -> u32 {
    (u32::from(w[0]) << 16) | (u32::from(w[1]) << 8) | u32::from(w[2])
}

// An address's grams, above every name trigram: its hex digits are 4
// bits each, so four of them make a 16-bit gram, where four bytes of
// text would not fit a table.
/// Any 4 consecutive hex digits of the address (37 an address).
const QUAD: u32 = 1 << 24;
/// Its first digit, and its first two (`0x` + 1 or 2 digits).
const FIRST1: u32 = QUAD + (1 << 16);
const FIRST2: u32 = FIRST1 + 16;
/// Gram keys are below this.
const GRAM_KEYS: usize = (FIRST2 + 256) as usize;

/// The 40 hex digits of an address, as values 0-15.
fn nibbles(address: &Address) -> [u32; 40] {
    std::array::from_fn(|k| u32::from(address[k / 2] >> (4 * (1 - k % 2)) & 0xf))
}

/// Packs up to 4 hex digit values, most significant first.
fn pack(digits: &[u32]) -> u32 {
    digits.iter().fold(0, |acc, &d| acc << 4 | d)
}

/// The distinct grams of an entry's texts, sorted: its address's (see
/// `QUAD`) and its name's trigrams.
fn entry_grams(address: &Address, name_lower: &str, out: &mut Vec<u32>) {
    out.clear();
    let digits = nibbles(address);
    out.extend(digits.windows(4).map(|w| QUAD + pack(w)));
    out.push(FIRST1 + digits[0]);
    out.push(FIRST2 + pack(&digits[..2]));
    out.extend(name_lower.as_bytes().windows(3).map(gram_key));
    out.sort_unstable();
    out.dedup();
}

/// The grams an address holding `term` (trimmed, lower-cased, 3+ bytes)
/// must have, as clauses: each clause's grams are alternatives, every
/// clause must hold. `None` when no address holds it (a byte other than
/// `0-9a-f`, or an `x` other than the one of `0x`).
fn address_clauses(term: &[u8]) -> Option<Vec<Vec<u32>>> {
    let hex_from = match term {
        [b'x', ..] => 1,
        [b'0', b'x', ..] => 2,
        _ => 0,
    };
    let digits: Vec<u32> = term[hex_from..]
        .iter()
        .map(|&b| {
            char::from(b)
                .to_digit(16)
                .filter(|_| !b.is_ascii_uppercase())
        })
        .collect::<Option<_>>()?;
    let mut clauses: Vec<Vec<u32>> = digits.windows(4).map(|w| vec![QUAD + pack(w)]).collect();
    match (hex_from, digits.as_slice()) {
        // The address starts with the digits after `x`.
        (1.., [a, b, ..]) => clauses.push(vec![FIRST2 + pack(&[*a, *b])]),
        (1.., [a]) => clauses.push(vec![FIRST1 + a]),
        // 3 digits anywhere: a `QUAD` they start, or one they end (the
        // last three of an address). A gram of every address's last 3
        // digits took 1.9 MB at a million accounts.
        (0, [_, _, _]) => {
            let mut grams: Vec<u32> = (0..16)
                .flat_map(|d| {
                    [
                        QUAD + (pack(&digits) << 4 | d),
                        QUAD + (d << 12 | pack(&digits)),
                    ]
                })
                .collect();
            grams.sort_unstable();
            grams.dedup();
            clauses.push(grams);
        }
        (0, [_, _, _, ..]) => {}
        // Under 3 bytes: no gram bounds it.
        _ => return None,
    }
    clauses.sort_unstable();
    clauses.dedup();
    Some(clauses)
}

/// The trigrams a name holding `term` (3+ bytes) must have, a clause
/// each.
fn name_clauses(term: &[u8]) -> Vec<Vec<u32>> {
    let mut grams: Vec<u32> = term.windows(3).map(gram_key).collect();
    grams.sort_unstable();
    grams.dedup();
    grams.into_iter().map(|g| vec![g]).collect()
}

/// Leaderboard positions per block in [`for_each_entry_grams`].
const BLOCK: usize = 1 << 15;
/// Ends an entry's grams in a block's buffer (not a 24-bit gram key).
const END: u32 = u32::MAX;
/// A gram key with no dense index.
const NO_GRAM: u32 = u32::MAX;

/// Calls `visit(p, grams)` for every leaderboard position `p` in order,
/// with its distinct trigrams: computed in parallel a block at a time,
/// the next block's while `visit` runs on this one.
fn for_each_entry_grams(
    n: usize,
    grams_of: &(impl Fn(usize, &mut Vec<u32>) + Sync),
    mut visit: impl FnMut(u32, &[u32]) + Send,
) {
    const PART: usize = 1 << 10;
    let block = |start: usize| -> Vec<Vec<u32>> {
        let end = (start + BLOCK).min(n);
        (start..end)
            .step_by(PART)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map_init(Vec::new, |buf, a| {
                let mut out = Vec::with_capacity(PART * 48);
                for p in a..(a + PART).min(end) {
                    grams_of(p, buf);
                    out.extend_from_slice(buf);
                    out.push(END);
                }
                out
            })
            .collect()
    };
    let mut visit_block = |start: usize, parts: &[Vec<u32>]| {
        let mut p = start as u32;
        for part in parts {
            // Every part ends with an END: split before it.
            let Some((_, entries)) = part.split_last() else {
                continue;
            };
            for grams in entries.split(|&g| g == END) {
                visit(p, grams);
                p += 1;
            }
        }
    };
    let mut start = 0;
    let mut current = block(0);
    while start + BLOCK < n {
        let (next, ()) = rayon::join(|| block(start + BLOCK), || visit_block(start, &current));
        current = next;
        start += BLOCK;
    }
    if n > 0 {
        visit_block(start, &current);
    }
}

/// The lower-cased names of accounts 0..n ("" without a profile),
/// concatenated, and where each ends.
fn lowered_names<'a>(
    n: usize,
    name_of: &(impl Fn(AccountId) -> Option<&'a str> + Sync),
) -> (String, Vec<u32>) {
    let parts: Vec<(String, Vec<usize>)> = (0..n as AccountId)
        .collect::<Vec<_>>()
        .par_chunks(1 << 12)
        .map(|ids| {
            let mut text = String::new();
            let mut ends = Vec::with_capacity(ids.len());
            for &id in ids {
                match name_of(id) {
                    Some(name) if name.is_ascii() => {
                        text.extend(name.bytes().map(|b| char::from(b.to_ascii_lowercase())))
                    }
                    Some(name) => text.push_str(&name.to_lowercase()),
                    None => {}
                }
                ends.push(text.len());
            }
            (text, ends)
        })
        .collect();
    let mut names_lower = String::with_capacity(parts.iter().map(|p| p.0.len()).sum());
    let mut name_ends = Vec::with_capacity(n);
    for (text, ends) in parts {
        let base = names_lower.len();
        names_lower.push_str(&text);
        name_ends.extend(
            ends.iter()
                .map(|&e| u32::try_from(base + e).unwrap_or(u32::MAX)),
        );
    }
    (names_lower, name_ends)
}

/// Pass 1's running size of one posting list.
#[derive(Debug, Default)]
struct ListSize {
    count: u32,
    /// Bytes of its blocks so far, the one open not included.
    bytes: usize,
    last: u32,
    /// The open block's first gap and largest other gap.
    first_gap: u32,
    max_gap: u32,
}

impl ListSize {
    /// Adds position `p`; returns the width of the block it closed, if
    /// `p` opens a new one.
    fn add(&mut self, p: u32) -> Option<u8> {
        let gap = p - self.last;
        let closed = if (self.count as usize).is_multiple_of(BLOCK_LEN) {
            let closed = (self.count > 0).then(|| self.end_block());
            self.first_gap = gap;
            self.max_gap = 0;
            closed
        } else {
            self.max_gap = self.max_gap.max(gap);
            None
        };
        self.count += 1;
        self.last = p;
        closed
    }

    /// Counts the open block's bytes; returns its width.
    fn end_block(&mut self) -> u8 {
        let in_block = (self.count as usize - 1) % BLOCK_LEN + 1;
        let width = gap_width(self.max_gap);
        self.bytes += block_bytes(self.first_gap, in_block, width);
        width
    }
}

/// Pass 2's write position in one posting list.
#[derive(Debug, Default)]
struct ListWrite {
    /// Where the next gap goes (bits from the start of `postings`).
    bit: usize,
    count: u32,
    last: u32,
    /// The open block's width.
    width: u8,
}

impl SearchIndex {
    /// Two ordered passes over the entries' trigrams (computed twice rather
    /// than held: they are ~50 per entry): the first sizes every posting
    /// list in bytes and notes each block's width, the second writes each
    /// gap in place. Scratch space is a 64 MiB gram table, a few bytes per
    /// distinct gram and 8 per block.
    pub(super) fn build<'a>(
        leaderboard: &[AccountId],
        addresses: &[Address],
        name_of: impl Fn(AccountId) -> Option<&'a str> + Sync,
    ) -> SearchIndex {
        let (names_lower, name_ends) = lowered_names(addresses.len(), &name_of);
        let name = |id: usize| {
            let start = if id == 0 {
                0
            } else {
                name_ends[id - 1] as usize
            };
            &names_lower[start..name_ends[id] as usize]
        };
        let entries: Vec<Entry> = (0..addresses.len())
            .into_par_iter()
            .map(|id| {
                let text = name(id);
                let len = (text.len() as u64).min(LONG_NAME);
                Entry {
                    address: addresses[id],
                    name_start: if id == 0 { 0 } else { name_ends[id - 1] },
                    mask_and_len: byte_mask(text.as_bytes()) | len << LEN_SHIFT,
                }
            })
            .collect();
        let long_name_ends: Vec<(AccountId, u32)> = (0..addresses.len())
            .filter(|&id| name(id).len() as u64 >= LONG_NAME)
            .map(|id| (id as AccountId, name_ends[id]))
            .collect();
        let grams_of = |p: usize, out: &mut Vec<u32>| {
            let id = leaderboard[p] as usize;
            entry_grams(&addresses[id], name(id), out)
        };
        let n = leaderboard.len();

        // Pass 1: each gram's postings and bytes, grams indexed densely in
        // the order first met.
        let mut index_of = vec![NO_GRAM; GRAM_KEYS];
        let mut found: Vec<u32> = Vec::new();
        let mut sizes: Vec<ListSize> = Vec::new();
        // (dense gram, width) of each block, in the order blocks end.
        let mut widths_met: Vec<(u32, u8)> = Vec::new();
        for_each_entry_grams(n, &grams_of, |p, grams| {
            for &g in grams {
                let slot = &mut index_of[g as usize];
                if *slot == NO_GRAM {
                    *slot = found.len() as u32;
                    found.push(g);
                    sizes.push(ListSize::default());
                }
                if let Some(width) = sizes[*slot as usize].add(p) {
                    widths_met.push((*slot, width));
                }
            }
        });
        for (dense, size) in sizes.iter_mut().enumerate() {
            widths_met.push((dense as u32, size.end_block()));
        }

        // Grams ascending; the table now maps a gram to its rank.
        let mut grams = found;
        grams.par_sort_unstable();
        let mut address_ranks = vec![NO_GRAM; GRAM_KEYS - QUAD as usize];
        let first_address = grams.partition_point(|&g| g < QUAD);
        for (rank, &g) in grams.iter().enumerate().skip(first_address) {
            address_ranks[(g - QUAD) as usize] = rank as u32;
        }
        let mut offsets = Vec::with_capacity(grams.len() + 1);
        let mut skip_offsets = Vec::with_capacity(grams.len() + 1);
        let mut counts = Vec::with_capacity(grams.len());
        let mut rank_of_dense = vec![0u32; grams.len()];
        offsets.push(0usize);
        skip_offsets.push(0u32);
        for (rank, &g) in grams.iter().enumerate() {
            let dense = index_of[g as usize] as usize;
            let size = &sizes[dense];
            rank_of_dense[dense] = rank as u32;
            index_of[g as usize] = rank as u32;
            counts.push(size.count);
            offsets.push(offsets.last().unwrap() + size.bytes);
            let skips = (size.count as usize).saturating_sub(1) / BLOCK_LEN;
            skip_offsets.push(skip_offsets.last().unwrap() + skips as u32);
        }
        drop(sizes);
        // A list's blocks are its skip entries and one: the widths of rank
        // r's blocks start at skip_offsets[r] + r.
        let width_slot = |rank: usize, block: usize| skip_offsets[rank] as usize + rank + block;
        let mut widths = vec![0u8; widths_met.len()];
        let mut blocks_placed = vec![0u32; grams.len()];
        for (dense, width) in widths_met {
            let rank = rank_of_dense[dense as usize] as usize;
            widths[width_slot(rank, blocks_placed[rank] as usize)] = width;
            blocks_placed[rank] += 1;
        }
        drop(blocks_placed);
        drop(rank_of_dense);

        // Pass 2: the blocks and skip entries, in place.
        let mut postings = vec![0u8; *offsets.last().unwrap()];
        let mut skips = vec![(0u32, 0u32); *skip_offsets.last().unwrap() as usize];
        let mut writes: Vec<ListWrite> = offsets[..grams.len()]
            .iter()
            .map(|&start| ListWrite {
                bit: start * 8,
                ..ListWrite::default()
            })
            .collect();
        let write = |p: u32,
                     ranks: &[u32],
                     writes: &mut [ListWrite],
                     postings: &mut [u8],
                     skips: &mut [(u32, u32)]| {
            for &rank in ranks {
                let rank = rank as usize;
                let w = &mut writes[rank];
                let gap = p - w.last;
                let block = w.count as usize / BLOCK_LEN;
                if (w.count as usize).is_multiple_of(BLOCK_LEN) {
                    let mut at = w.bit.div_ceil(8);
                    if block > 0 {
                        let skip = skip_offsets[rank] as usize + block - 1;
                        skips[skip] = (w.last, (at - offsets[rank]) as u32);
                    }
                    w.width = widths[width_slot(rank, block)];
                    w.bit = write_block_head(postings, &mut at, w.width, gap);
                } else {
                    write_packed(postings, w.bit, gap);
                    w.bit += usize::from(w.width);
                }
                w.count += 1;
                w.last = p;
            }
        };
        // An entry's ~40 grams write to as many lists spread over the
        // postings (65,536 of 4 hex digits): each write missed the cache
        // twice (the list's write state, then its bytes). So an entry's
        // write states are asked for two entries ahead of its writes, and
        // their bytes one entry ahead: this pass took 1.3 s at a million
        // accounts, now 1.0 s (asking for the grams' ranks too, a step
        // earlier, gained nothing).
        let mut ring: [(u32, Vec<u32>); 3] = Default::default();
        let mut arrived = 0usize;
        for_each_entry_grams(n, &grams_of, |p, entry| {
            let [oldest, previous, newest] = &mut ring;
            std::mem::swap(oldest, previous);
            std::mem::swap(previous, newest);
            // Now: `oldest` two entries back, `previous` one, `newest` free.
            newest.0 = p;
            newest.1.clear();
            newest.1.extend(entry.iter().map(|&g| index_of[g as usize]));
            for &rank in &newest.1 {
                super::prefetch(&writes[rank as usize]);
            }
            for &rank in &previous.1 {
                if let Some(byte) = postings.get(writes[rank as usize].bit / 8) {
                    super::prefetch(byte);
                }
            }
            if arrived >= 2 {
                write(oldest.0, &oldest.1, &mut writes, &mut postings, &mut skips);
            }
            arrived += 1;
        });
        let [oldest, previous, newest] = &ring;
        for (p, ranks) in [oldest, previous, newest]
            .into_iter()
            .skip(3 - arrived.min(2))
        {
            write(*p, ranks, &mut writes, &mut postings, &mut skips);
        }
        SearchIndex {
            names_lower,
            entries,
            long_name_ends,
            grams,
            offsets,
            counts,
            postings,
            skips,
            skip_offsets,
            address_ranks,
        }
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.names_lower.capacity()
            + self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.long_name_ends.capacity() * 8
            + self.grams.capacity() * 4
            + self.offsets.capacity() * std::mem::size_of::<usize>()
            + self.counts.capacity() * 4
            + self.postings.capacity()
            + self.skips.capacity() * 8
            + self.skip_offsets.capacity() * 4
            + self.address_ranks.capacity() * 4
    }

    /// The posting list of `gram` (empty when no entry holds it).
    fn cursor(&self, gram: u32) -> Cursor<'_> {
        let rank = match gram.checked_sub(QUAD) {
            Some(key) => self
                .address_ranks
                .get(key as usize)
                .filter(|&&r| r != NO_GRAM)
                .map(|&r| r as usize)
                .ok_or(()),
            None => self.grams.binary_search(&gram).map_err(drop),
        };
        match rank {
            Ok(i) => Cursor::new(
                &self.postings[self.offsets[i]..self.offsets[i + 1]],
                &self.skips[self.skip_offsets[i] as usize..self.skip_offsets[i + 1] as usize],
                self.counts[i] as usize,
            ),
            Err(_) => Cursor::new(&[], &[], 0),
        }
    }

    /// Account `id`'s lower-cased name ("" without one).
    fn name(&self, id: AccountId) -> &str {
        let Some(e) = self.entries.get(id as usize) else {
            return "";
        };
        let start = e.name_start as usize;
        let len = e.mask_and_len >> LEN_SHIFT;
        let end = if len < LONG_NAME {
            start + len as usize
        } else {
            self.long_name_ends
                .binary_search_by_key(&id, |&(i, _)| i)
                .map_or(start, |k| self.long_name_ends[k].1 as usize)
        };
        &self.names_lower[start..end]
    }

    /// Starts loading account `id`'s entry: the first step of asking for
    /// a member's data some members ahead of its test
    /// ([`SearchIndex::prefetch_name`] follows).
    #[inline(always)]
    pub fn prefetch_entry(&self, id: AccountId) {
        if let Some(e) = self.entries.get(id as usize) {
            super::prefetch(e);
        }
    }

    /// Starts loading account `id`'s name if its mask lets it hold `term`
    /// (best once its entry arrived).
    #[inline(always)]
    pub fn prefetch_name(&self, term: &Term<'_>, id: AccountId) {
        if let Some(e) = self.entries.get(id as usize) {
            if term.may_be_in(e.mask()) {
                if let Some(first) = self.names_lower.as_bytes().get(e.name_start as usize) {
                    super::prefetch(first);
                }
            }
        }
    }

    /// The ways of `term_lower` (3+ bytes) through the index and what
    /// taking them costs, from their lists' sizes; `None` under 3 bytes
    /// (no gram bounds it).
    pub fn plan(&self, term_lower: &str) -> Option<IndexPlan<'_>> {
        let term = term_lower.as_bytes();
        if term.len() < 3 {
            return None;
        }
        let sides = self.sides(term);
        let mut cost = IndexCost::default();
        for (side, per_gram) in &sides {
            // Shortest first.
            let rarest: usize = side[0].iter().map(Cursor::byte_len).sum();
            cost.list_bytes += rarest.saturating_mul(side.len());
            let rarer = per_gram.saturating_pow(side.len().saturating_sub(1) as u32);
            cost.candidates += rarest / rarer;
        }
        Some(IndexPlan { sides, cost })
    }

    /// Whether account `id` matches `term`: its address or its name
    /// contains the term. The name's bytes are read only if its mask
    /// holds the term's.
    #[inline]
    pub fn matches(&self, term: &Term<'_>, id: AccountId) -> bool {
        let Some(e) = self.entries.get(id as usize) else {
            return false;
        };
        term.in_address(&e.address)
            || term.may_be_in(e.mask()) && term.holds(self.name(id).as_bytes())
    }

    /// The clauses (see `address_clauses`) of each way an account can
    /// hold `term` (3+ bytes), as posting lists, shortest first: in its
    /// name, in its address. A way with an empty clause is left out.
    /// Each comes with how much rarer a clause makes the candidates (a
    /// trigram of a name ~10 times, 4 more hex digits ~16 times).
    fn sides(&self, term: &[u8]) -> Vec<Side<'_>> {
        let ways = [(Some(name_clauses(term)), 10), (address_clauses(term), 16)];
        ways.into_iter()
            .filter_map(|(clauses, per_gram)| {
                let mut side: Vec<Vec<Cursor<'_>>> = clauses?
                    .iter()
                    .map(|grams| {
                        grams
                            .iter()
                            .map(|&g| self.cursor(g))
                            .filter(|c| c.count() > 0)
                            .collect()
                    })
                    .collect();
                if side.is_empty() || side.iter().any(Vec::is_empty) {
                    return None;
                }
                side.sort_by_key(|c: &Vec<Cursor<'_>>| {
                    c.iter().map(Cursor::byte_len).sum::<usize>()
                });
                Some((side, per_gram))
            })
            .collect()
    }

    /// Leaderboard positions that may hold `term` (3+ bytes, see
    /// `sides`), ascending, until `visit` returns true: each side a
    /// leapfrog over its clauses, the sides merged.
    /// Candidates only: the text may still not hold the term.
    fn each_candidate(&self, term: &[u8], mut visit: impl FnMut(usize) -> bool) {
        let mut sides: Vec<Vec<Vec<Cursor<'_>>>> =
            self.sides(term).into_iter().map(|(s, _)| s).collect();
        if let [side] = sides.as_mut_slice() {
            if side.iter().all(|c| c.len() == 1) {
                let mut lists: Vec<Cursor<'_>> = side.drain(..).flatten().collect();
                return leapfrog(&mut lists, visit);
            }
        }
        let mut target = 0;
        while let Some(p) = sides
            .iter_mut()
            .filter_map(|side| seek_all(side, target))
            .min()
        {
            if visit(p) {
                return;
            }
            target = p + 1;
        }
    }

    /// The leaderboard positions that may hold `term_lower` (3+ bytes),
    /// ascending (see [`IndexPlan::candidates`]).
    pub fn candidates(&self, term_lower: &str) -> Vec<u32> {
        self.plan(term_lower)
            .map_or_else(Vec::new, IndexPlan::candidates)
    }

    /// Leaderboard positions whose address or name contains `term_lower`
    /// (already trimmed and lower-cased, non-empty), in leaderboard order,
    /// after skipping `offset` matches, at most `limit`. `id_at(p)` is the
    /// account at leaderboard position p.
    pub fn find(
        &self,
        term_lower: &str,
        offset: usize,
        limit: usize,
        leaderboard_len: usize,
        id_at: impl Fn(usize) -> AccountId,
    ) -> Vec<usize> {
        let wanted = offset.saturating_add(limit);
        let term = Term::new(term_lower);
        let mut found = Vec::new();
        let mut keep = |p: usize| {
            let id = id_at(p);
            if self.matches(&term, id) {
                found.push(p);
            }
            found.len() >= wanted
        };
        let term = term_lower.as_bytes();
        if term.len() < 3 {
            for p in 0..leaderboard_len {
                if keep(p) {
                    break;
                }
            }
        } else {
            self.each_candidate(term, keep);
        }
        found.drain(..offset.min(found.len()));
        found
    }
}

/// A term's ways through the index (see `SearchIndex::sides`), with
/// what taking them costs, so that a search that weighs the cost before
/// taking them looks its lists up once.
pub struct IndexPlan<'a> {
    sides: Vec<Side<'a>>,
    pub cost: IndexCost,
}

/// One way through the index: clauses of alternative lists, shortest
/// first, and how much rarer each clause makes the candidates.
type Side<'a> = (Vec<Vec<Cursor<'a>>>, usize);

impl IndexPlan<'_> {
    /// The leaderboard positions that may hold the term, ascending: a
    /// superset of its matches, to intersect with a set before testing
    /// the members left ([`SearchIndex::matches`]). All of them are
    /// wanted: a side of single lists is intersected whole
    /// ([`intersect_all`]), a side of one clause of alternatives (3 hex
    /// digits) is their postings sorted, the sides are merged.
    pub fn candidates(self) -> Vec<u32> {
        let mut all: Vec<u32> = Vec::new();
        for (mut side, _) in self.sides {
            let found = if side.iter().all(|c| c.len() == 1) {
                let mut lists: Vec<Cursor<'_>> = side.drain(..).flatten().collect();
                intersect_all(&mut lists)
            } else if let [alternatives] = side.as_slice() {
                let mut found: Vec<u32> = alternatives.iter().flat_map(Cursor::positions).collect();
                found.sort_unstable();
                found.dedup();
                found
            } else {
                let mut found = Vec::new();
                let mut target = 0;
                while let Some(p) = seek_all(&mut side, target) {
                    found.push(p as u32);
                    target = p + 1;
                }
                found
            };
            all = if all.is_empty() {
                found
            } else {
                union(&all, &found)
            };
        }
        all
    }
}

/// What the index path of a term costs, estimated from its lists'
/// sizes: the bytes of the lists it reads (each side's rarest clause's,
/// as many times as it has clauses) and the candidates it yields (a
/// byte or more a posting).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IndexCost {
    pub list_bytes: usize,
    pub candidates: usize,
}

/// The first position >= `target` in some list of every clause of
/// `side` (a leapfrog over the clauses, the first the shortest).
fn seek_all(side: &mut [Vec<Cursor<'_>>], mut target: usize) -> Option<usize> {
    let seek = |clause: &mut Vec<Cursor<'_>>, target: usize| {
        clause.iter_mut().filter_map(|c| c.seek(target)).min()
    };
    let (first, rest) = side.split_first_mut()?;
    'walk: loop {
        let candidate = seek(first, target)?;
        for clause in rest.iter_mut() {
            let p = seek(clause, candidate)?;
            if p > candidate {
                target = p;
                continue 'walk;
            }
        }
        return Some(candidate);
    }
}

/// The positions in `a` or `b` (both ascending), ascending, once each.
fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        out.push(x.min(y));
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

#[cfg(test)]
mod tests {
    use super::super::term::{address_bytes, contains};
    use super::*;

    /// A name too long for its entry's length field is found through
    /// `long_name_ends`; the names after it still start where they do.
    #[test]
    fn names_past_the_entry_length_field() {
        let long = format!("{}needle", "x".repeat(70_000));
        let names = ["Ann", long.as_str(), "Bob"];
        let addresses: Vec<Address> = (0..3u8).map(|i| [i + 1; 20]).collect();
        let index = SearchIndex::build(&[0, 1, 2], &addresses, |id| Some(names[id as usize]));
        assert_eq!(index.name(0), "ann");
        assert_eq!(index.name(1), long);
        assert_eq!(index.name(2), "bob");
        let found = |term: &str| -> Vec<AccountId> {
            let t = Term::new(term);
            (0..3).filter(|&id| index.matches(&t, id)).collect()
        };
        assert_eq!(found("needle"), [1]);
        assert_eq!(found("bob"), [2]);
        assert_eq!(found("0x0303"), [2]);
        assert_eq!(found("an"), [0]);
        assert!(found("zz").is_empty());
        assert!(!index.matches(&Term::new("bob"), 3));
    }

    /// Long posting lists (skips used) agree with a plain scan.
    #[test]
    fn intersection_with_skips_matches_a_scan() {
        // More than two blocks of the two-pass build.
        let n = 2 * BLOCK + 3000;
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
        // Names, addresses and hex across names: lists of equal and of
        // very different lengths (both ways of `candidates`).
        terms.extend(["abcd0", "0xab", "a0", "dab1", "x00"].map(String::from));
        // An address's last digits (3 of them are in no 4-digit gram),
        // its first, and an `x` where no address has one.
        for _ in 0..20 {
            let hex = address_bytes(&addresses[next() as usize % n]);
            let hex = std::str::from_utf8(&hex).unwrap();
            terms.extend(
                [&hex[39..], &hex[38..], &hex[..3], &hex[1..4], &hex[..7]].map(String::from),
            );
        }
        terms.extend(["0x0x", "ax1", "1x2", "xx1", "0xg"].map(String::from));
        for term in &terms {
            if term.len() >= 3 {
                let mut leapfrog = Vec::new();
                index.each_candidate(term.as_bytes(), |p| {
                    leapfrog.push(p as u32);
                    false
                });
                assert_eq!(index.candidates(term), leapfrog, "{term}");
            }
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
                let got = index.find(term, offset, limit, n, |p| p as AccountId);
                assert_eq!(got, want, "term {term:?} offset {offset} limit {limit}");
            }
        }
    }
}
