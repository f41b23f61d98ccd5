//! The trigram index's posting lists: ascending leaderboard positions
//! stored as gaps in LEB128 varints (~1.3 bytes a posting), with a skip
//! entry every `SKIP_EVERY` postings, and the two ways they are
//! intersected. Cost model, at a million accounts: a leapfrog seek per
//! posting costs ~6 ns, and jumps over whole blocks of a list much longer
//! than the driving one, so an intersection that stops early (a
//! leaderboard page) costs about the rarest list's prefix; decoding a
//! list whole costs ~3 ns a posting and a branch-free merge ~2.5 ns a
//! step, which is cheaper when every position is wanted and two lists
//! are of a size (a hex term's two trigrams: ~12,000 postings each).

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
/// be decoded whole and merged, rather than the second sought in.
const MERGE_WITHIN: usize = 8;

/// Every position of a delta-varint posting list, ascending.
fn decode_all(bytes: &[u8]) -> Vec<usize> {
    let mut out = Vec::with_capacity(bytes.len());
    let (mut i, mut last) = (0, 0usize);
    while i < bytes.len() {
        let mut b = bytes[i];
        i += 1;
        let (mut gap, mut shift) = (usize::from(b & 0x7f), 7);
        while b & 0x80 != 0 && i < bytes.len() {
            b = bytes[i];
            i += 1;
            gap |= usize::from(b & 0x7f) << shift;
            shift += 7;
        }
        last += gap;
        out.push(last);
    }
    out
}

/// The values in both ascending lists, by a merge with no branch on which
/// side moves.
fn merge_intersection(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut out = vec![0; a.len().min(b.len())];
    let last = out.len().saturating_sub(1);
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        // Written always, kept only if equal: at most `last` + 1 are.
        out[n.min(last)] = x;
        n += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    out.truncate(n);
    out
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
/// and merged (a tight loop each, ~3 ns a posting, where a leapfrog seek
/// per posting cost ~6), unless the second is much longer than the
/// first: then, as for any further list, the positions seek in it.
pub(super) fn intersect_all(lists: &mut [Cursor<'_>]) -> Vec<usize> {
    let merged = match lists {
        [a, b, ..] if b.byte_len() <= a.byte_len() * MERGE_WITHIN => 2,
        _ => 1,
    };
    let mut out = match &lists[..] {
        [] => return Vec::new(),
        [a, b, ..] if merged == 2 => merge_intersection(&decode_all(a.bytes), &decode_all(b.bytes)),
        [a, ..] => decode_all(a.bytes),
    };
    for list in &mut lists[merged..] {
        out.retain(|&p| list.seek(p) == Some(p));
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
    fn merged_lists() {
        assert_eq!(merge_intersection(&[1, 3, 5, 7], &[0, 3, 4, 7, 9]), [3, 7]);
        assert_eq!(merge_intersection(&[], &[1]), Vec::<usize>::new());
        assert_eq!(merge_intersection(&[2, 4], &[2, 4]), [2, 4]);
        assert_eq!(merge_intersection(&[5], &[1, 2, 3]), Vec::<usize>::new());
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
        assert_eq!(decode_all(&bytes), back);
        assert_eq!(positions(&[]).count(), 0);
    }
}
