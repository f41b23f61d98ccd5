//! How the search index is built: the names lower-cased and the
//! per-account entries in parallel, then two ordered passes over every
//! entry's grams (sizes, then the bit-packed lists in place).

use rayon::prelude::*;

use super::grams::{entry_grams, GRAM_KEYS, NO_GRAM, QUAD};
use super::{Entry, SearchIndex, LEN_SHIFT, LONG_NAME};
use crate::graph::postings::{block_bytes, gap_width, write_block_head, write_packed, BLOCK_LEN};
use crate::graph::term::byte_mask;
use crate::graph::AccountId;
use crate::snapshot::Address;

/// Leaderboard positions per block in [`for_each_entry_grams`].
pub(super) const BLOCK: usize = 1 << 15;
/// Ends an entry's grams in a block's buffer (not a 24-bit gram key).
const END: u32 = u32::MAX;

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
    pub(in crate::graph) fn build<'a>(
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
        let mut hex_ranks = vec![NO_GRAM; GRAM_KEYS - QUAD as usize];
        let first_hex = grams.partition_point(|&g| g < QUAD);
        for (rank, &g) in grams.iter().enumerate().skip(first_hex) {
            hex_ranks[(g - QUAD) as usize] = rank as u32;
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
        // their bytes one entry ahead, so the misses overlap (asking for
        // the grams' ranks too, a step earlier, gained nothing).
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
                crate::graph::prefetch(&writes[rank as usize]);
            }
            for &rank in &previous.1 {
                if let Some(byte) = postings.get(writes[rank as usize].bit / 8) {
                    crate::graph::prefetch(byte);
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
            hex_ranks,
        }
    }
}
