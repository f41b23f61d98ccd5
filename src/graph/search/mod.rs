//! Case-insensitive literal substring search over the leaderboard's
//! addresses and names, without scanning every account per request.
//!
//! A gram index maps each gram to the leaderboard positions (ascending,
//! i.e. already in result order) whose text holds it. A name's grams are
//! its byte trigrams and its runs of 4 hex digits. An address's are 4 hex
//! digits at any place (37 an address) and its first 1 and 2 digits: a
//! hex digit is 4 bits, so 4 of them make a 16-bit gram where 4 bytes of
//! text would not fit a table. A term of 3+ bytes is looked for both
//! ways (`sides`): in names, the lists of its runs of 4 hex digits and
//! of its trigrams outside them; in addresses (a term of `0-9a-f`, or
//! `0x…`/`x…` for an address's start), the lists of all its 4-digit
//! windows, or for 3 digits the 32 grams they start or end. Each way is
//! a leapfrog over its lists, the two merged; each position is then
//! verified, until `offset + limit` matches are found. Shorter terms
//! match so much of the board that an ordered scan with the same early
//! stop is as fast.
//!
//! Cost model, at a million accounts: 4 hex digits (the search box's
//! typical query of an address) read one list of ~570 postings for the
//! addresses and one of ~230 for the names' runs of 4 hex digits, where
//! address trigrams made two lists of ~12,000 (a hex trigram is in ~1%
//! of addresses) and the names' two trigrams two of ~3,200 (names hold
//! digits). The price is memory: as many postings as address trigrams,
//! but longer gaps between them, plus the lists of the names' runs.
//!
//! The lower-cased names are kept by account id, with one aligned 32-byte
//! entry per account (a copy of its address, where its name starts, its
//! length, a mask of the bytes it holds), so that a search within a set
//! of accounts (followers, following: [`SearchIndex::matches`]) tests
//! each member with no lower-casing per request and one cache line read:
//! a name is read only if its mask holds every byte of the term (most
//! names do not, for a term of 3-4 letters and digits). Which grams a text has and a term needs:
//! `grams.rs`; how the index is built: `build.rs`; how a name or an
//! address is tested: `../term.rs`; how posting lists are stored and
//! intersected: `../postings.rs`.
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

mod build;
mod grams;
#[cfg(test)]
mod tests;

use grams::{address_grams, name_grams, Needed, NO_GRAM, QUAD};

use super::postings::{intersect_all, seek_all, Cursor};
use super::term::Term;
use super::AccountId;
use crate::snapshot::Address;

/// What testing one account reads, in one aligned half cache line: a
/// walk over a hub's followers was bound by the lines it touched per
/// member (address, name mask, name bounds), not by the compares.
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
    /// The rank in `grams` of each gram of hex digits, an address's or a
    /// name's (`NO_GRAM` when no text holds it), by key - `QUAD`: a term
    /// of 3 hex digits looks up 32 of them, too many for a binary search
    /// each.
    hex_ranks: Vec<u32>,
}

impl SearchIndex {
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
            + self.hex_ranks.capacity() * 4
    }

    /// The posting list of `gram` (empty when no entry holds it).
    fn cursor(&self, gram: u32) -> Cursor<'_> {
        let rank = match gram.checked_sub(QUAD) {
            Some(key) => self
                .hex_ranks
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
        for side in &sides {
            match side {
                // Shortest first; each list past it makes the candidates
                // rarer.
                Side::All(lists, per_list) => {
                    let rarest = lists[0].byte_len();
                    cost.list_bytes += rarest.saturating_mul(lists.len());
                    let rarer = per_list.saturating_pow(lists.len() as u32 - 1);
                    cost.candidates += rarest / rarer;
                }
                Side::Any(lists) => {
                    let bytes: usize = lists.iter().map(Cursor::byte_len).sum();
                    cost.list_bytes += bytes;
                    cost.candidates += bytes;
                }
            }
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

    /// Each way an account can hold `term` (3+ bytes) as its posting
    /// lists: in its name, in its address (see `grams.rs`). A way that
    /// needs all of its lists, one of them empty, or any of them, all
    /// empty, is left out.
    fn sides(&self, term: &[u8]) -> Vec<Side<'_>> {
        // How much rarer each list past the first makes the candidates:
        // a trigram of a name ~10 times, 4 more hex digits ~16 times.
        let ways = [(Some(name_grams(term)), 10), (address_grams(term), 16)];
        ways.into_iter()
            .filter_map(|(needed, per_list)| match needed? {
                Needed::All(grams) => {
                    let mut lists: Vec<Cursor<'_>> =
                        grams.iter().map(|&g| self.cursor(g)).collect();
                    if lists.is_empty() || lists.iter().any(|c| c.count() == 0) {
                        return None;
                    }
                    lists.sort_by_key(Cursor::byte_len);
                    Some(Side::All(lists, per_list))
                }
                Needed::Any(grams) => {
                    let lists: Vec<Cursor<'_>> = grams
                        .iter()
                        .map(|&g| self.cursor(g))
                        .filter(|c| c.count() > 0)
                        .collect();
                    (!lists.is_empty()).then_some(Side::Any(lists))
                }
            })
            .collect()
    }

    /// Leaderboard positions that may hold `term` (3+ bytes, see
    /// `sides`), ascending, until `visit` returns true: each side a
    /// leapfrog over its clauses, the sides merged.
    /// Candidates only: the text may still not hold the term.
    fn each_candidate(&self, term: &[u8], mut visit: impl FnMut(usize) -> bool) {
        let mut sides = self.sides(term);
        let mut target = 0;
        while let Some(p) = sides.iter_mut().filter_map(|side| side.seek(target)).min() {
            if visit(p) {
                return;
            }
            target = p + 1;
        }
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

/// One way through the index: lists a candidate is in all of (shortest
/// first, with how much rarer each list past the first makes the
/// candidates), or in any one of.
enum Side<'a> {
    All(Vec<Cursor<'a>>, usize),
    Any(Vec<Cursor<'a>>),
}

impl Side<'_> {
    /// The first position >= `target` this way yields: a leapfrog over
    /// all of its lists, or the least of any.
    fn seek(&mut self, target: usize) -> Option<usize> {
        match self {
            Side::Any(lists) => lists.iter_mut().filter_map(|c| c.seek(target)).min(),
            Side::All(lists, _) => seek_all(lists, target),
        }
    }
}

impl IndexPlan<'_> {
    /// The leaderboard positions that may hold the term, ascending: a
    /// superset of its matches, to intersect with a set before testing
    /// the members left ([`SearchIndex::matches`]). All of them are
    /// wanted: the lists a way needs all of are intersected whole
    /// ([`intersect_all`]), those it needs any of (3 hex digits) have
    /// their postings sorted, and the ways are merged.
    pub fn candidates(self) -> Vec<u32> {
        let mut all: Vec<u32> = Vec::new();
        for side in self.sides {
            let found = match side {
                Side::All(mut lists, _) => intersect_all(&mut lists),
                Side::Any(lists) => {
                    let mut found: Vec<u32> = lists.iter().flat_map(Cursor::positions).collect();
                    found.sort_unstable();
                    found.dedup();
                    found
                }
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
