//! The search index's posting lists: ascending leaderboard positions in
//! blocks of `BLOCK_LEN`, each block its gaps bit-packed at the width of
//! its largest (~1.15 bytes a posting for a common trigram's list, more
//! for a 4-hex-digit gram's, whose gaps are longer), with a
//! skip entry per block after the first, and the two ways lists are
//! intersected.
//!
//! A block is a byte holding the width `w` of its gaps (bits), its first
//! gap as a LEB128 varint (from the position before the block, or from
//! 0), then its other gaps, `w` bits each, least significant bit first.
//! A list's posting count says how long its last block is. Gaps in
//! varints were a chain of dependent reads (each varint's length decides
//! where the next starts); a packed gap's place is known in advance, so
//! a block's gaps decode independently, at a fraction of the cost
//! (docs/performance.md, "LEB128 varint posting lists").
//!
//! Cost model: a leapfrog seek decodes one gap a
//! step within a block and jumps over whole blocks of a list much longer
//! than the driving one, so an intersection that stops early (a
//! leaderboard page) costs about the rarest list's prefix; decoding two
//! lists whole, one into a bitmap and the other against it, costs a
//! small constant a posting, which is cheaper when every position is
//! wanted and the lists are of a size (the two trigrams of a 4-letter
//! term).

/// Postings per block (and per skip entry).
pub(super) const BLOCK_LEN: usize = 128;

/// Writes `v` as a LEB128 varint at `*at`, moving `*at` past it.
pub(super) fn write_varint(out: &mut [u8], at: &mut usize, mut v: u32) {
    while v >= 0x80 {
        out[*at] = (v as u8) | 0x80;
        *at += 1;
        v >>= 7;
    }
    out[*at] = v as u8;
    *at += 1;
}

/// The bytes `write_varint` takes for `v`.
pub(super) fn varint_len(v: u32) -> usize {
    (32 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Reads a LEB128 varint at `*at`, moving `*at` past it.
#[inline]
fn read_varint(bytes: &[u8], at: &mut usize) -> u32 {
    let (mut v, mut shift) = (0u32, 0);
    while let Some(&b) = bytes.get(*at) {
        *at += 1;
        v |= u32::from(b & 0x7f).wrapping_shl(shift);
        shift += 7;
        if b & 0x80 == 0 {
            break;
        }
    }
    v
}

/// The bit width that holds every gap up to `max_gap`.
pub(super) fn gap_width(max_gap: u32) -> u8 {
    (32 - max_gap.leading_zeros()) as u8
}

/// The bytes of a block of `n` postings (at least one) whose first gap
/// is `first_gap` and other gaps are `width` bits.
pub(super) fn block_bytes(first_gap: u32, n: usize, width: u8) -> usize {
    1 + varint_len(first_gap) + ((n - 1) * usize::from(width)).div_ceil(8)
}

/// Starts a block at `*at`: its width and first gap. Returns the bit
/// where its second gap goes.
pub(super) fn write_block_head(out: &mut [u8], at: &mut usize, width: u8, first_gap: u32) -> usize {
    out[*at] = width;
    *at += 1;
    write_varint(out, at, first_gap);
    *at * 8
}

/// ORs `gap` (under 2^width) into `out` at bit `bit`: the bytes it spans
/// hold zeros there, and nothing past its top bit is touched.
pub(super) fn write_packed(out: &mut [u8], bit: usize, gap: u32) {
    let mut v = u64::from(gap) << (bit % 8);
    let mut at = bit / 8;
    while v != 0 {
        out[at] |= v as u8;
        v >>= 8;
        at += 1;
    }
}

/// Reads a block's head at `*at` (its width, then its first gap),
/// moving `*at` to its packed gaps.
#[inline(always)]
fn read_block_head(bytes: &[u8], at: &mut usize) -> (usize, u32) {
    let width = usize::from(bytes.get(*at).copied().unwrap_or(0));
    *at += 1;
    (width, read_varint(bytes, at))
}

/// The gap of `width` bits at bit `bit`.
#[inline(always)]
fn packed_gap(bytes: &[u8], bit: usize, width: usize) -> u32 {
    ((word_at(bytes, bit / 8) >> (bit % 8)) & ((1u64 << width) - 1)) as u32
}

/// The 8 bytes at `at` as a little-endian word, zeros past the end.
#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    match bytes.get(at..at + 8) {
        Some(b) => u64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
        None => {
            let mut b = [0u8; 8];
            let tail = bytes.get(at..).unwrap_or(&[]);
            b[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(b)
        }
    }
}

/// Decodes the block at `*at` of `n` postings (at least one) after
/// position `before`, calling `visit` with each position; moves `*at`
/// past the block.
#[inline(always)]
fn decode_block(bytes: &[u8], at: &mut usize, n: usize, before: u32, mut visit: impl FnMut(u32)) {
    let (width, first_gap) = read_block_head(bytes, at);
    let mut last = before.wrapping_add(first_gap);
    visit(last);
    let start = *at * 8;
    for k in 0..n - 1 {
        last = last.wrapping_add(packed_gap(bytes, start + k * width, width));
        visit(last);
    }
    *at = (start + (n - 1) * width).div_ceil(8);
}

/// Calls `visit` with every position of a list of `count` postings,
/// ascending.
#[inline(always)]
fn for_each_position(bytes: &[u8], count: usize, mut visit: impl FnMut(u32)) {
    let (mut at, mut last, mut left) = (0, 0u32, count);
    while left > 0 {
        let n = left.min(BLOCK_LEN);
        decode_block(bytes, &mut at, n, last, |p| {
            last = p;
            visit(p);
        });
        left -= n;
    }
}

/// Every position of a list of `count` postings, ascending.
fn decode_all(bytes: &[u8], count: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(count);
    for_each_position(bytes, count, |p| out.push(p));
    out
}

/// A read position in one posting list, moving forward only. Within a
/// block it decodes one gap a step, as far as a seek needs: a leapfrog
/// seek usually lands a few postings on, and decoding whole blocks on
/// entry cost the leaderboard's search a fifth more.
pub(super) struct Cursor<'a> {
    bytes: &'a [u8],
    /// (position of the posting before it, byte offset) of every block
    /// after the first.
    skips: &'a [(u32, u32)],
    count: usize,
    /// The block read (`None` before the first seek), its postings and
    /// gap width, the bit of its second gap, the index in it of the
    /// current posting, and the current position.
    block: Option<usize>,
    in_block: usize,
    width: usize,
    gaps_bit: usize,
    index: usize,
    current: u32,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(bytes: &'a [u8], skips: &'a [(u32, u32)], count: usize) -> Self {
        Cursor {
            bytes,
            skips,
            count,
            block: None,
            in_block: 0,
            width: 0,
            gaps_bit: 0,
            index: 0,
            current: 0,
        }
    }

    /// The list's size in bytes (about its postings).
    pub(super) fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// Its postings.
    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// Every position of the list, ascending (from its start, whatever
    /// was sought).
    pub(super) fn positions(&self) -> Vec<u32> {
        decode_all(self.bytes, self.count)
    }

    fn blocks(&self) -> usize {
        self.count.div_ceil(BLOCK_LEN)
    }

    /// Moves to the first posting of block `b`.
    fn enter(&mut self, b: usize) {
        let (before, offset) = match b.checked_sub(1) {
            Some(s) => self.skips[s],
            None => (0, 0),
        };
        let mut at = offset as usize;
        let (width, first_gap) = read_block_head(self.bytes, &mut at);
        self.width = width;
        self.current = before.wrapping_add(first_gap);
        self.gaps_bit = at * 8;
        self.block = Some(b);
        self.in_block = (self.count - b * BLOCK_LEN).min(BLOCK_LEN);
        self.index = 0;
    }

    /// The first position >= `target` at or after the current one.
    pub(super) fn seek(&mut self, target: usize) -> Option<usize> {
        let target = u32::try_from(target).unwrap_or(u32::MAX);
        loop {
            let Some(b) = self.block else {
                if self.count == 0 {
                    return None;
                }
                let first = self.skips.partition_point(|&(before, _)| before < target);
                self.enter(first.min(self.blocks() - 1));
                continue;
            };
            // Most seeks land in this block, a few postings on.
            while self.current < target && self.index + 1 < self.in_block {
                let bit = self.gaps_bit + self.index * self.width;
                self.current = self
                    .current
                    .wrapping_add(packed_gap(self.bytes, bit, self.width));
                self.index += 1;
            }
            if self.current >= target {
                return Some(self.current as usize);
            }
            // The first later block whose last position (the next block's
            // `before`) reaches the target.
            let ahead = self.skips.get(b + 1..).unwrap_or(&[]);
            let next = b + 1 + ahead.partition_point(|&(before, _)| before < target);
            if next >= self.blocks() {
                return None;
            }
            self.enter(next);
        }
    }
}

/// The first position >= `target` in every one of `lists` (sorted
/// shortest first, at least one): a leapfrog step driven by the shortest
/// list, the longer ones jumping over whole blocks, so a rare term costs
/// about its rarest gram's list, not its commonest's.
pub(super) fn seek_all(lists: &mut [Cursor<'_>], mut target: usize) -> Option<usize> {
    let (first, rest) = lists.split_first_mut()?;
    'walk: loop {
        let candidate = first.seek(target)?;
        for list in rest.iter_mut() {
            let p = list.seek(candidate)?;
            if p > candidate {
                target = p;
                continue 'walk;
            }
        }
        return Some(candidate);
    }
}

/// How much longer than the shortest list the second may be for both to
/// be decoded whole and intersected in a bitmap, rather than the second
/// sought in.
const MERGE_WITHIN: usize = 8;

thread_local! {
    /// Zeroed between uses: one bit a position, grown to the largest
    /// position intersected on this thread (a million: 128 KiB).
    static POSITION_BITS: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The positions in both lists: `a`'s marked in a bitmap as they are
/// decoded, `b`'s looked up in it. Every step is independent of the last,
/// where a merge of the decoded lists waits on each compare to know which
/// side moves. The bitmap is then cleared whole up to `a`'s last word,
/// unless `a` is so short that decoding it again is cheaper (a word
/// clears several times faster than a posting decodes).
fn bitmap_intersection(a: &Cursor<'_>, b: &Cursor<'_>) -> Vec<u32> {
    POSITION_BITS.with(|cell| {
        let mut bits = cell.borrow_mut();
        let mut used = 0;
        for_each_position(a.bytes, a.count, |p| {
            let word = p as usize / 64;
            if word >= bits.len() {
                bits.resize(word + 1, 0);
            }
            bits[word] |= 1 << (p % 64);
            used = word + 1;
        });
        let mut out = Vec::new();
        for_each_position(b.bytes, b.count, |p| {
            if bits
                .get(p as usize / 64)
                .is_some_and(|w| w >> (p % 64) & 1 != 0)
            {
                out.push(p);
            }
        });
        if a.count * 4 < used {
            for_each_position(a.bytes, a.count, |p| bits[p as usize / 64] = 0);
        } else {
            bits[..used].fill(0);
        }
        out
    })
}

/// Every position in all of `lists` (sorted shortest first), ascending.
/// All of them are wanted, so the two shortest lists are decoded whole
/// and intersected in a bitmap, unless the second is much longer than
/// the first: then, as for any further list, the positions seek in it.
pub(super) fn intersect_all(lists: &mut [Cursor<'_>]) -> Vec<u32> {
    let merged = match lists {
        [a, b, ..] if b.byte_len() <= a.byte_len() * MERGE_WITHIN => 2,
        _ => 1,
    };
    let mut out = match &lists[..] {
        [] => return Vec::new(),
        [a, b, ..] if merged == 2 => bitmap_intersection(a, b),
        [a, ..] => decode_all(a.bytes, a.count),
    };
    for list in &mut lists[merged..] {
        out.retain(|&p| list.seek(p as usize) == Some(p as usize));
    }
    out
}

/// A list encoded as the index builds one, for tests: (bytes, skips).
#[cfg(test)]
pub(super) fn encode(positions: &[u32]) -> (Vec<u8>, Vec<(u32, u32)>) {
    let mut bytes = vec![0u8; 5 * positions.len() + 8];
    let (mut skips, mut at, mut last) = (Vec::new(), 0, 0u32);
    for block in positions.chunks(BLOCK_LEN) {
        if at > 0 {
            skips.push((last, at as u32));
        }
        let gaps: Vec<u32> = block
            .iter()
            .scan(last, |prev, &p| Some(p - std::mem::replace(prev, p)))
            .collect();
        let width = gap_width(gaps[1..].iter().copied().max().unwrap_or(0));
        let mut bit = write_block_head(&mut bytes, &mut at, width, gaps[0]);
        for &gap in &gaps[1..] {
            write_packed(&mut bytes, bit, gap);
            bit += usize::from(width);
        }
        at = bit.div_ceil(8);
        assert_eq!(
            at - skips.last().map_or(0, |s| s.1 as usize),
            block_bytes(gaps[0], block.len(), width)
        );
        last = *block.last().unwrap();
    }
    bytes.truncate(at);
    (bytes, skips)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seek_all(bytes: &[u8], skips: &[(u32, u32)], count: usize) -> Vec<u32> {
        let mut cursor = Cursor::new(bytes, skips, count);
        let mut out = Vec::new();
        let mut target = 0;
        while let Some(p) = cursor.seek(target) {
            out.push(p as u32);
            target = p + 1;
        }
        out
    }

    #[test]
    fn intersected_lists() {
        let both = |a: &[u32], b: &[u32]| {
            let ((ab, askips), (bb, bskips)) = (encode(a), encode(b));
            bitmap_intersection(
                &Cursor::new(&ab, &askips, a.len()),
                &Cursor::new(&bb, &bskips, b.len()),
            )
        };
        assert_eq!(both(&[1, 3, 5, 7], &[0, 3, 4, 7, 9]), [3, 7]);
        assert_eq!(both(&[], &[1]), Vec::<u32>::new());
        assert_eq!(both(&[2, 4], &[2, 4]), [2, 4]);
        assert_eq!(both(&[5], &[1, 2, 3]), Vec::<u32>::new());
        // Gaps of 3 and 5 bytes; positions past those marked before, and
        // the bits of the earlier calls gone.
        let far = [64, 6400, 70_000, 5_000_000, 5_000_001];
        assert_eq!(
            both(&far, &[63, 64, 6400, 9000, 5_000_001]),
            [64, 6400, 5_000_001]
        );
        assert_eq!(both(&[1], &far), Vec::<u32>::new());
        // A short list far out is cleared posting by posting.
        assert_eq!(both(&[4_000_000], &[4_000_000]), [4_000_000]);
        assert_eq!(both(&[1], &[4_000_000]), Vec::<u32>::new());
        POSITION_BITS.with(|bits| assert!(bits.borrow().iter().all(|&w| w == 0)));
    }

    #[test]
    fn blocks_of_every_width_decode_and_seek() {
        // Gaps of 1 bit to 22 bits, in blocks full and partial, each list
        // decoded whole, and sought position by position and in jumps.
        let mut rng = crate::rng::SplitMix64::new(7);
        for n in [0, 1, 2, 127, 128, 129, 300, 1_000] {
            for max_bits in [1, 7, 9, 16, 22] {
                let mut list = Vec::with_capacity(n);
                let mut p = rng.below(1000) as u32;
                for _ in 0..n {
                    list.push(p);
                    p += 1 + (rng.next_u64() as u32 & ((1u32 << max_bits) - 1));
                }
                let (bytes, skips) = encode(&list);
                assert_eq!(skips.len(), n.saturating_sub(1) / BLOCK_LEN);
                assert_eq!(decode_all(&bytes, n), list, "{n} postings, {max_bits} bits");
                assert_eq!(
                    seek_all(&bytes, &skips, n),
                    list,
                    "{n} postings, {max_bits} bits"
                );
                let mut cursor = Cursor::new(&bytes, &skips, n);
                for (i, &p) in list.iter().enumerate().step_by(37) {
                    // Just past the previous posting, and exactly.
                    if i > 0 {
                        assert_eq!(cursor.seek(list[i - 1] as usize + 1), Some(p as usize));
                    }
                    assert_eq!(cursor.seek(p as usize), Some(p as usize));
                }
                assert_eq!(cursor.seek(p as usize + 1), None);
            }
        }
    }

    #[test]
    fn varint_round_trip() {
        for v in [
            0u32,
            1,
            127,
            128,
            16_383,
            16_384,
            70_000,
            5_000_000,
            u32::MAX,
        ] {
            let mut bytes = [0u8; 5];
            let mut at = 0;
            write_varint(&mut bytes, &mut at, v);
            assert_eq!(at, varint_len(v));
            let mut back = 0;
            assert_eq!(read_varint(&bytes, &mut back), v);
            assert_eq!(back, at);
        }
        assert_eq!(varint_len(127), 1);
        assert_eq!(varint_len(128), 2);
        assert_eq!(varint_len(u32::MAX), 5);
        assert_eq!(gap_width(0), 0);
        assert_eq!(gap_width(1), 1);
        assert_eq!(gap_width(255), 8);
        assert_eq!(gap_width(256), 9);
    }
}
