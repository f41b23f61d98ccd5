//! The trigram index's posting lists: ascending leaderboard positions
//! stored as gaps in LEB128 varints (~1.3 bytes a posting), with a skip
//! entry every `SKIP_EVERY` postings, and the two ways they are
//! intersected. Cost model, at a million accounts: a leapfrog seek per
//! posting costs ~6 ns, and jumps over whole blocks of a list much longer
//! than the driving one, so an intersection that stops early (a
//! leaderboard page) costs about the rarest list's prefix; decoding two
//! lists whole, one into a bitmap and the other against it, costs ~2.4
//! ns a posting, which is cheaper when every position is wanted and the
//! lists are of a size (a hex term's two trigrams: ~12,000 postings
//! each, ~60 µs).

/// Postings per skip block.
pub(super) const SKIP_EVERY: usize = 128;

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

/// A read position in one posting list, moving forward only.
pub(super) struct Cursor<'a> {
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
    pub(super) fn new(bytes: &'a [u8], skips: &'a [(u32, u32)]) -> Self {
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

    /// The list's size in bytes (about its postings).
    pub(super) fn byte_len(&self) -> usize {
        self.bytes.len()
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

/// How much longer than the shortest list the second may be for both to
/// be decoded whole and intersected in a bitmap, rather than the second
/// sought in.
const MERGE_WITHIN: usize = 8;

/// Calls `visit` with every position of a delta-varint posting list,
/// ascending. A list long enough to be decoded whole has gaps of one or
/// two bytes nearly everywhere: those are read without a branch on which
/// (a mispredicted one on every fifth posting was most of the loop's
/// time).
#[inline(always)]
fn for_each_position(bytes: &[u8], mut visit: impl FnMut(u32)) {
    let (mut i, mut last) = (0, 0u32);
    while i < bytes.len() {
        let gap = match bytes.get(i..i + 2) {
            Some(&[b0, b1]) if b0 & b1 & 0x80 == 0 => {
                let two = u32::from(b0 >> 7);
                i += 1 + two as usize;
                u32::from(b0 & 0x7f) | (u32::from(b1 & 0x7f) << 7) & two.wrapping_neg()
            }
            _ => {
                let (mut gap, mut shift) = (0u32, 0);
                while let Some(&b) = bytes.get(i) {
                    i += 1;
                    gap |= u32::from(b & 0x7f).wrapping_shl(shift);
                    shift += 7;
                    if b & 0x80 == 0 {
                        break;
                    }
                }
                gap
            }
        };
        last = last.wrapping_add(gap);
        visit(last);
    }
}

/// Every position of a delta-varint posting list, ascending.
fn decode_all(bytes: &[u8]) -> Vec<u32> {
    let mut out = Vec::with_capacity(bytes.len());
    for_each_position(bytes, |p| out.push(p));
    out
}

thread_local! {
    /// Zeroed between uses: one bit a position, grown to the largest
    /// position intersected on this thread (a million: 128 KiB).
    static POSITION_BITS: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The positions in both delta-varint lists: `a`'s marked in a bitmap as
/// they are decoded, `b`'s looked up in it. Every step is independent of
/// the last, where a merge of the decoded lists waits on each compare to
/// know which side moves (~2.5 ns a step). The bitmap is then cleared
/// whole up to `a`'s last word, unless `a` is so short that decoding it
/// again is cheaper (a word costs ~0.3 ns to clear, a posting ~1.5 ns to
/// decode).
fn bitmap_intersection(a: &[u8], b: &[u8]) -> Vec<u32> {
    POSITION_BITS.with(|cell| {
        let mut bits = cell.borrow_mut();
        let mut used = 0;
        for_each_position(a, |p| {
            let word = p as usize / 64;
            if word >= bits.len() {
                bits.resize(word + 1, 0);
            }
            bits[word] |= 1 << (p % 64);
            used = word + 1;
        });
        let mut out = Vec::new();
        for_each_position(b, |p| {
            if bits
                .get(p as usize / 64)
                .is_some_and(|w| w >> (p % 64) & 1 != 0)
            {
                out.push(p);
            }
        });
        if a.len() * 8 < used {
            for_each_position(a, |p| bits[p as usize / 64] = 0);
        } else {
            bits[..used].fill(0);
        }
        out
    })
}

/// The positions in every one of `lists` (sorted shortest first, at
/// least one), ascending, until `visit` returns true: a leapfrog
/// intersection driven by the shortest list, the longer ones jumping over
/// whole blocks, so a rare term costs about its rarest trigram's list,
/// not its commonest's.
pub(super) fn leapfrog(lists: &mut [Cursor<'_>], mut visit: impl FnMut(usize) -> bool) {
    let Some((first, rest)) = lists.split_first_mut() else {
        return;
    };
    let mut target = 0;
    'walk: while let Some(candidate) = first.seek(target) {
        for list in rest.iter_mut() {
            match list.seek(candidate) {
                None => break 'walk,
                Some(p) if p > candidate => {
                    target = p;
                    continue 'walk;
                }
                Some(_) => {}
            }
        }
        if visit(candidate) {
            break;
        }
        target = candidate + 1;
    }
}

/// Every position in all of `lists` (sorted shortest first), ascending.
/// All of them are wanted, so the two shortest lists are decoded whole
/// and intersected in a bitmap (~2.4 ns a posting, where a leapfrog seek
/// per posting cost ~6), unless the second is much longer than the
/// first: then, as for any further list, the positions seek in it.
pub(super) fn intersect_all(lists: &mut [Cursor<'_>]) -> Vec<u32> {
    let merged = match lists {
        [a, b, ..] if b.byte_len() <= a.byte_len() * MERGE_WITHIN => 2,
        _ => 1,
    };
    let mut out = match &lists[..] {
        [] => return Vec::new(),
        [a, b, ..] if merged == 2 => bitmap_intersection(a.bytes, b.bytes),
        [a, ..] => decode_all(a.bytes),
    };
    for list in &mut lists[merged..] {
        out.retain(|&p| list.seek(p as usize) == Some(p as usize));
    }
    out
}

/// Decodes a delta-varint posting list into ascending positions.
#[cfg(test)]
fn positions(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut cursor = Cursor::new(bytes, &[]);
    std::iter::from_fn(move || cursor.decode_next())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersected_lists() {
        let varints = |list: &[u32]| {
            let mut bytes = vec![0u8; 5 * list.len()];
            let (mut at, mut last) = (0, 0);
            for &p in list {
                write_varint(&mut bytes, &mut at, p - last);
                last = p;
            }
            bytes.truncate(at);
            bytes
        };
        let both = |a: &[u32], b: &[u32]| bitmap_intersection(&varints(a), &varints(b));
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
    fn mixed_gap_lengths_decode_as_the_cursor_does() {
        // Gaps of 1 to 5 bytes in any order, and lists ending on each.
        let mut state = 7u64;
        let mut gaps = Vec::new();
        for _ in 0..5_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let bits = [7, 7, 7, 7, 14, 14, 14, 21][(state >> 60) as usize % 8];
            gaps.push(((state >> 20) as u32) & ((1u32 << bits) - 1));
        }
        // Five and four bytes; the positions stay within u32.
        gaps[0] = 300_000_000;
        gaps[7] = (1 << 27) + 5;
        for n in [0, 1, 2, 3, 4, 5, 1_000, 5_000] {
            let gaps = &gaps[..n];
            let mut bytes = vec![0u8; gaps.iter().map(|&g| varint_len(g)).sum()];
            let mut at = 0;
            for &gap in gaps {
                write_varint(&mut bytes, &mut at, gap);
            }
            let want: Vec<usize> = positions(&bytes).collect();
            assert_eq!(want.len(), n);
            let all: Vec<usize> = decode_all(&bytes).iter().map(|&p| p as usize).collect();
            assert_eq!(all, want, "{n} gaps");
        }
    }

    #[test]
    fn varint_postings_round_trip() {
        let list = [0u32, 1, 2, 200, 201, 70_000, 5_000_000, u32::MAX - 1];
        let gaps: Vec<u32> = list
            .iter()
            .enumerate()
            .map(|(i, &p)| if i == 0 { p } else { p - list[i - 1] })
            .collect();
        let mut bytes = vec![0u8; gaps.iter().map(|&g| varint_len(g)).sum()];
        let mut at = 0;
        for &gap in &gaps {
            write_varint(&mut bytes, &mut at, gap);
        }
        assert_eq!(at, bytes.len());
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(127), 1);
        assert_eq!(varint_len(128), 2);
        assert_eq!(varint_len(u32::MAX), 5);
        let back: Vec<usize> = positions(&bytes).collect();
        assert_eq!(back, list.iter().map(|&p| p as usize).collect::<Vec<_>>());
        let all: Vec<usize> = decode_all(&bytes).iter().map(|&p| p as usize).collect();
        assert_eq!(all, back);
        assert_eq!(positions(&[]).count(), 0);
    }
}
