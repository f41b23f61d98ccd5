//! The visible follow records F -> T: the forward direction of the graph.
//!
//! Layout (n accounts, e visible records, r of them tagged): a petgraph
//! `Csr<(), i64, Directed, u32>` whose row F holds the accounts F's
//! primary list follows, ascending, each edge weighted with the record's
//! `updated_at` (4 + 8 bytes per record, plus 8 bytes of row offset per
//! account). Few records carry tags, so their tag sets sit in a side
//! table in edge order (4 bytes per tagged record), found by rank: one bit
//! per edge says whether a record is tagged, and a count of the tagged
//! edges before each 64-bit word of those bits (4 bytes per 64 edges)
//! plus a popcount gives its place in the table. A tag set is two or three
//! cache lines away, not a binary search of millions of entries.
//!
//! A record lookup is a binary search in F's row; at a million accounts
//! that is a few dependent cache misses, so a page's records are looked up
//! together (`Records::records`) with prefetches that overlap the misses.
//!
//! Built from `list_records` streamed in row groups as 16-byte edges in
//! provisional ids (`scan_records`), renumbered to final ids and sorted
//! in place once every address is known (`forward_csr`).

use petgraph::csr::Csr;
use petgraph::visit::EdgeRef;
use petgraph::Directed;
use rayon::prelude::*;

use super::intern::Interner;
use super::lookup::TokenMap;
use super::stop::{duplicate, limit, Stop};
use super::{prefetch, AccountId};
use super::{FLAG_BLOCK, FLAG_MUTE};
use crate::snapshot::{scan_list_records, Address, SnapshotFiles, TableEntry};

/// The forward CSR: edge weight = the record's `updated_at`.
pub(super) type ForwardCsr = Csr<(), i64, Directed, u32>;

/// One visible follow record F -> T: when it was (last) added and the id of
/// its set of visible tags (0 = no tags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub updated_at: i64,
    pub tagset: u32,
}

/// The forward CSR and the tag sets of its tagged records.
pub(super) struct Records {
    csr: ForwardCsr,
    /// One bit per edge (global CSR edge index): does the record carry
    /// visible tags?
    tagged: Vec<u64>,
    /// Tagged edges before each word of `tagged`.
    ranks: Vec<u32>,
    /// The tag set of every tagged record, in edge order.
    sets: Vec<u32>,
}

impl Records {
    /// `tagsets`: (edge index, tag set) of the tagged records, sorted.
    pub(super) fn new(csr: ForwardCsr, tagsets: Vec<(u32, u32)>) -> Records {
        let mut tagged = vec![0u64; csr.edge_count().div_ceil(64)];
        for &(edge, _) in &tagsets {
            tagged[edge as usize / 64] |= 1 << (edge % 64);
        }
        let mut ranks = Vec::with_capacity(tagged.len());
        let mut before = 0u32;
        for word in &tagged {
            ranks.push(before);
            before += word.count_ones();
        }
        let sets = tagsets.into_iter().map(|(_, set)| set).collect();
        Records {
            csr,
            tagged,
            ranks,
            sets,
        }
    }

    pub(super) fn csr(&self) -> &ForwardCsr {
        &self.csr
    }
    /// (edge index, tag set) of every tagged record, by edge.
    pub(super) fn tagged_edges(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.tagged_between(0, self.csr.edge_count())
    }
    /// How many records carry tags.
    pub(super) fn tagged_count(&self) -> usize {
        self.sets.len()
    }

    /// Tagged edges before global edge index `edge`.
    #[inline]
    fn rank(&self, edge: usize) -> usize {
        let (w, bit) = (edge / 64, edge % 64);
        match self.tagged.get(w) {
            Some(word) => {
                self.ranks[w] as usize + (word & ((1u64 << bit) - 1)).count_ones() as usize
            }
            None => self.sets.len(),
        }
    }

    /// (edge index, tag set) of the tagged edges in `start..end`.
    fn tagged_between(&self, start: usize, end: usize) -> impl Iterator<Item = (usize, u32)> + '_ {
        (start / 64..end.div_ceil(64)).flat_map(move |w| {
            let mut word = self.tagged[w];
            // Only the bits of start..end.
            if w == start / 64 {
                word &= !((1u64 << (start % 64)) - 1);
            }
            if w == end / 64 {
                word &= (1u64 << (end % 64)) - 1;
            }
            std::iter::from_fn(move || {
                if word == 0 {
                    return None;
                }
                let edge = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                Some((edge, self.sets[self.rank(edge)]))
            })
        })
    }
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.csr.edge_count()
    }

    /// F's primary-list records: targets ascending with their `updated_at`.
    #[inline]
    pub(super) fn following_of(&self, f: AccountId) -> (&[AccountId], &[i64]) {
        if (f as usize) < self.csr.node_count() {
            (self.csr.neighbors_slice(f), self.csr.edges_slice(f))
        } else {
            (&[], &[])
        }
    }

    /// The records of many (follower, target) pairs at once, into `out`
    /// (cleared first). Each lookup is a few dependent cache misses at a
    /// million accounts; done in passes with prefetches, the misses of
    /// the different pairs overlap instead of queueing. Pairs go
    /// `LOOKUP_CHUNK` at a time, so the passes' state is on the stack
    /// (these lookups run on most requests: no allocation).
    pub(super) fn records(&self, pairs: &[(AccountId, AccountId)], out: &mut Vec<Option<Record>>) {
        out.clear();
        out.resize(pairs.len(), None);
        self.records_into(pairs, out);
    }

    /// `records` into a slice of `pairs.len()` (e.g. on the caller's stack).
    pub(super) fn records_into(
        &self,
        pairs: &[(AccountId, AccountId)],
        out: &mut [Option<Record>],
    ) {
        debug_assert_eq!(pairs.len(), out.len());
        out.fill(None);
        if self.csr.node_count() == 0 {
            return;
        }
        // Row starts come from slice positions: row 0 starts at edge 0.
        let base = self.csr.neighbors_slice(0).as_ptr() as usize;
        for (pairs, out) in pairs.chunks(LOOKUP_CHUNK).zip(out.chunks_mut(LOOKUP_CHUNK)) {
            let mut starts = [0usize; LOOKUP_CHUNK];
            for (start, &(f, _)) in starts.iter_mut().zip(pairs) {
                let targets = self.following_of(f).0;
                // An empty row's slice may point anywhere: it has no edges.
                if !targets.is_empty() {
                    *start = (targets.as_ptr() as usize - base) / 4;
                    prefetch(&targets[targets.len() / 2]);
                }
            }
            let mut found = [NOT_FOUND; LOOKUP_CHUNK];
            for ((i, &(f, t)), &start) in found.iter_mut().zip(pairs).zip(&starts) {
                let (targets, times) = self.following_of(f);
                if let Ok(at) = targets.binary_search(&t) {
                    prefetch(&times[at]);
                    prefetch(&self.tagged[(start + at) / 64]);
                    *i = at;
                }
            }
            for (((record, &(f, _)), &start), &i) in
                out.iter_mut().zip(pairs).zip(&starts).zip(&found)
            {
                if i != NOT_FOUND {
                    *record = Some(Record {
                        updated_at: self.following_of(f).1[i],
                        tagset: self.edge_tagset(start + i),
                    });
                }
            }
        }
    }

    /// Row F: its targets ascending, their `updated_at`, and each one's
    /// tag set.
    pub(super) fn row(&self, f: AccountId) -> RecordRow<'_> {
        let (targets, times) = self.following_of(f);
        let first_edge = if targets.is_empty() {
            0
        } else {
            self.csr.edges(f).next().map_or(0, |e| e.id())
        };
        RecordRow {
            tags: RowTags::Edges {
                records: self,
                first: first_edge,
            },
            targets,
            times,
        }
    }

    /// The tag set of the record at global edge index `edge`.
    #[inline]
    fn edge_tagset(&self, edge: usize) -> u32 {
        if self.tagged[edge / 64] & (1 << (edge % 64)) == 0 {
            0
        } else {
            self.sets[self.rank(edge)]
        }
    }

    /// F's record of T, if F's primary list holds one.
    #[inline]
    pub(super) fn record(&self, f: AccountId, t: AccountId) -> Option<Record> {
        let (targets, times) = self.following_of(f);
        let i = targets.binary_search(&t).ok()?;
        // The row is not empty (it holds t), so it has a first edge id.
        let edge = self.csr.edges(f).next().map_or(0, |e| e.id()) + i;
        Some(Record {
            updated_at: times[i],
            tagset: self.edge_tagset(edge),
        })
    }

    /// How many of row F's records carry neither `block` nor `mute`
    /// (`flags` gives a tag set's flags): the row's length less its tagged
    /// records that carry one, found by a search of the side table.
    pub(super) fn shown_in_row(&self, f: AccountId, flags: impl Fn(u32) -> u8) -> usize {
        let len = self.following_of(f).0.len();
        if len == 0 {
            return 0;
        }
        let start = self.csr.edges(f).next().map_or(0, |e| e.id());
        let hidden = self.sets[self.rank(start)..self.rank(start + len)]
            .iter()
            .filter(|&&set| flags(set) & (FLAG_BLOCK | FLAG_MUTE) != 0)
            .count();
        len - hidden
    }

    /// Approximate heap bytes (the CSR's column, weight and offset arrays
    /// at their lengths: petgraph does not expose its capacities).
    pub(super) fn heap_bytes(&self) -> usize {
        self.csr.edge_count() * (4 + 8)
            + (self.csr.node_count() + 1) * std::mem::size_of::<usize>()
            + self.tagged.capacity() * 8
            + self.ranks.capacity() * 4
            + self.sets.capacity() * 4
    }
}

/// One of two iterators of one item type (a row's two tag layouts, a
/// live or a base list of taggers): no box per call on the request path.
pub(super) enum Either<A, B> {
    Left(A),
    Right(B),
}

impl<T, A: Iterator<Item = T>, B: Iterator<Item = T>> Iterator for Either<A, B> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        match self {
            Either::Left(a) => a.next(),
            Either::Right(b) => b.next(),
        }
    }
}

/// Pairs looked up together by `Records::records`.
const LOOKUP_CHUNK: usize = 32;
const NOT_FOUND: usize = usize::MAX;

/// One row of records: what a list holds.
#[derive(Clone, Copy)]
pub struct RecordRow<'a> {
    tags: RowTags<'a>,
    /// The followed accounts, ascending.
    pub targets: &'a [AccountId],
    /// Each record's `updated_at`.
    pub times: &'a [i64],
}

/// Where a row's tag sets are: the tag bits of its CSR edges, or one set
/// per record (a live row, `live/`, with its (target, index) pairs by id
/// when its targets are not in id order).
#[derive(Clone, Copy)]
enum RowTags<'a> {
    Edges {
        records: &'a Records,
        first: usize,
    },
    Sets {
        sets: &'a [u32],
        by_id: &'a [(AccountId, u32)],
    },
}

impl<'a> RecordRow<'a> {
    /// A row whose records' tag sets are given one per record; `by_id`:
    /// (target, index) sorted by id when the targets are not in id order,
    /// else empty.
    pub(super) fn with_sets(
        targets: &'a [AccountId],
        times: &'a [i64],
        sets: &'a [u32],
        by_id: &'a [(AccountId, u32)],
    ) -> Self {
        RecordRow {
            tags: RowTags::Sets { sets, by_id },
            targets,
            times,
        }
    }
    pub fn len(&self) -> usize {
        self.targets.len()
    }
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }
    /// The tag set of the `i`th record.
    #[inline]
    pub fn tagset(&self, i: usize) -> u32 {
        match self.tags {
            RowTags::Edges { records, first } => records.edge_tagset(first + i),
            RowTags::Sets { sets, .. } => sets[i],
        }
    }
    /// The `i`th record.
    #[inline]
    pub fn record(&self, i: usize) -> Record {
        Record {
            updated_at: self.times[i],
            tagset: self.tagset(i),
        }
    }
    /// (index in the row, tag set) of the row's records that carry tags,
    /// from the tag bits of the row's edges.
    pub fn tagged(&self) -> impl Iterator<Item = (usize, u32)> + 'a {
        match self.tags {
            RowTags::Edges { records, first } => {
                let end = if self.is_empty() {
                    first
                } else {
                    first + self.len()
                };
                Either::Left(
                    records
                        .tagged_between(first, end)
                        .map(move |(e, set)| (e - first, set)),
                )
            }
            RowTags::Sets { sets, .. } => Either::Right(
                sets.iter()
                    .enumerate()
                    .filter(|&(_, &set)| set != 0)
                    .map(|(i, &set)| (i, set)),
            ),
        }
    }

    /// The record of `t`, if the row holds one (a binary search).
    pub fn find(&self, t: AccountId) -> Option<Record> {
        let i = match self.tags {
            RowTags::Sets { by_id, .. } if !by_id.is_empty() => {
                let k = by_id.binary_search_by_key(&t, |p| p.0).ok()?;
                by_id[k].1 as usize
            }
            _ => self.targets.binary_search(&t).ok()?,
        };
        Some(self.record(i))
    }
}

/// The global edge index of F's record of T in `csr`, if there is one.
pub(super) fn edge_index(csr: &ForwardCsr, f: AccountId, t: AccountId) -> Option<usize> {
    if f as usize >= csr.node_count() {
        return None;
    }
    let i = csr.neighbors_slice(f).binary_search(&t).ok()?;
    Some(csr.edges(f).next().map_or(0, |e| e.id()) + i)
}

/// Visible records as (follower, target, updated_at) in provisional ids;
/// a list's own records as (list ordinal, target, updated_at).
pub(super) type Edge = (u32, u32, i64);

/// The records of `list_records` that anything reads: those of primary
/// lists as edges of their users, and those of the other lists in `lists`
/// as edges of their ordinals (`listed`); targets in provisional ids. The
/// uniqueness of the other rows' keys is checked here, the edges' by
/// their CSRs.
pub(super) fn scan_records(
    src: &dyn SnapshotFiles,
    e: &TableEntry,
    primary: &TokenMap,
    listed: &TokenMap,
    interner: &Interner,
) -> Result<(Vec<Edge>, Vec<Edge>), Stop> {
    #[derive(Default)]
    struct RecordGroup {
        invisible: Vec<(u64, Address)>,
        /// The kept records' targets; an edge's target is its index here
        /// until the group is read.
        targets: Vec<Address>,
        /// Records of lists that are not their user's primary list.
        others: Vec<Edge>,
    }
    let (edges, groups) = scan_list_records(
        src,
        e,
        RecordGroup::default,
        |g: &mut RecordGroup, r| {
            if let Some(f) = primary.get(r.token_id) {
                g.targets.push(r.address);
                return Some((f, g.targets.len() as u32 - 1, r.updated_at));
            }
            match listed.get(r.token_id) {
                Some(ordinal) => {
                    g.targets.push(r.address);
                    let target = g.targets.len() as u32 - 1;
                    g.others.push((ordinal, target, r.updated_at));
                }
                None => g.invisible.push((r.token_id, r.address)),
            }
            None
        },
        |g, edges| {
            let ids = interner.take_ids(&mut g.targets);
            for edge in edges.iter_mut().chain(g.others.iter_mut()) {
                edge.1 = ids[edge.1 as usize];
            }
        },
    )?;
    // (token_id, address) unique: the edges' keys map one to one to
    // (follower or ordinal, target), checked once sorted; the others here.
    let mut invisible = Vec::new();
    let mut others = Vec::new();
    for g in groups {
        invisible.extend(g.invisible);
        others.extend(g.others);
    }
    invisible.par_sort_unstable();
    if invisible.windows(2).any(|w| w[0] == w[1]) {
        return Err(duplicate(&e.file, "duplicate (token_id, address)"));
    }
    Ok((edges, others))
}

/// Renumbers the edges to final ids, sorts them in place and builds the
/// forward CSR from them.
pub(super) fn forward_csr(
    mut edges: Vec<Edge>,
    perm: &[u32],
    file: &str,
) -> Result<ForwardCsr, Stop> {
    edges.par_iter_mut().for_each(|e| {
        e.0 = perm[e.0 as usize];
        e.1 = perm[e.1 as usize];
    });
    sorted_csr(edges, file)
}

/// The CSR of the lists' own records by ordinal (`edges` from
/// `scan_records`): targets renumbered to final ids.
pub(super) fn list_csr(mut edges: Vec<Edge>, perm: &[u32], file: &str) -> Result<ForwardCsr, Stop> {
    edges.par_iter_mut().for_each(|e| e.1 = perm[e.1 as usize]);
    sorted_csr(edges, file)
}

fn sorted_csr(mut edges: Vec<Edge>, file: &str) -> Result<ForwardCsr, Stop> {
    if edges.len() > u32::MAX as usize {
        return Err(limit(file, "more than 2^32 visible records"));
    }
    edges.par_sort_unstable_by_key(|e| (u64::from(e.0) << 32) | u64::from(e.1));
    if edges
        .par_windows(2)
        .any(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
    {
        return Err(duplicate(file, "duplicate (token_id, address)"));
    }
    Ok(Csr::from_sorted_edges(&edges).expect("edges are sorted by (row, target) and unique"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_find_times_and_tagsets_singly_and_batched() {
        // 0 -> {1, 2}, 2 -> {0}; the record 0 -> 2 (edge 1) is tagged.
        let csr = forward_csr(vec![(2, 0, 30), (0, 2, 20), (0, 1, 10)], &[0, 1, 2], "t")
            .unwrap_or_else(|_| panic!("valid edges"));
        assert_eq!(edge_index(&csr, 0, 2), Some(1));
        assert_eq!(edge_index(&csr, 1, 0), None);
        assert_eq!(edge_index(&csr, 7, 0), None);
        let records = Records::new(csr, vec![(1, 5)]);
        assert_eq!(records.len(), 3);
        assert_eq!(records.following_of(0), (&[1, 2][..], &[10, 20][..]));
        assert_eq!(records.following_of(9), (&[][..], &[][..]));
        let rec = |updated_at, tagset| Some(Record { updated_at, tagset });
        assert_eq!(records.record(0, 1), rec(10, 0));
        assert_eq!(records.record(0, 2), rec(20, 5));
        assert_eq!(records.record(2, 0), rec(30, 0));
        assert_eq!(records.record(1, 0), None);
        let pairs = [(0, 2), (1, 0), (2, 0), (0, 1)];
        let mut out = vec![None; 9];
        records.records(&pairs, &mut out);
        let single: Vec<_> = pairs.iter().map(|&(f, t)| records.record(f, t)).collect();
        assert_eq!(out, single);
        // Rows without records, past the CSR's rows too.
        records.records(&[(1, 0), (9, 0)], &mut out);
        assert_eq!(out, vec![None, None]);
        assert_eq!(
            records.shown_in_row(0, |set| (set == 5) as u8 * FLAG_MUTE),
            1
        );
        assert_eq!(records.shown_in_row(0, |_| 0), 2);
        assert_eq!(records.shown_in_row(2, |_| FLAG_BLOCK), 1);
        assert_eq!(records.shown_in_row(9, |_| FLAG_BLOCK), 0);
    }

    /// Tag sets found by rank agree with a plain list, across word
    /// boundaries and in rows that start and end mid-word.
    #[test]
    fn tag_sets_by_rank_match_a_scan() {
        // 40 accounts, account f follows the 3 * (f % 7) accounts after it.
        let mut edges = Vec::new();
        for f in 0..40u32 {
            for k in 1..=3 * (f % 7) {
                edges.push((f, (f + k) % 40, i64::from(f * 100 + k)));
            }
        }
        let ids: Vec<u32> = (0..40).collect();
        let csr = forward_csr(edges, &ids, "t").unwrap_or_else(|_| panic!("valid edges"));
        let n = csr.edge_count();
        assert!(n > 200);
        // Every third edge and a run of 70 tagged, set = edge + 1.
        let tagged: Vec<(u32, u32)> = (0..n as u32)
            .filter(|e| e % 3 == 0 || (100..170).contains(e))
            .map(|e| (e, e + 1))
            .collect();
        let records = Records::new(csr, tagged.clone());
        let set_of = |e: usize| tagged.iter().find(|t| t.0 as usize == e).map_or(0, |t| t.1);
        for e in 0..n {
            assert_eq!(records.edge_tagset(e), set_of(e), "edge {e}");
        }
        let all: Vec<(usize, u32)> = tagged.iter().map(|&(e, s)| (e as usize, s)).collect();
        assert_eq!(records.tagged_edges().collect::<Vec<_>>(), all);
        for f in 0..41u32 {
            let row = records.row(f);
            let want: Vec<(usize, u32)> = (0..row.len())
                .map(|i| (i, row.tagset(i)))
                .filter(|&(_, s)| s != 0)
                .collect();
            assert_eq!(row.tagged().collect::<Vec<_>>(), want, "row {f}");
            let hidden = |set: u32| u8::from(set != 0 && set.is_multiple_of(2)) * FLAG_BLOCK;
            let shown = (0..row.len())
                .filter(|&i| hidden(row.tagset(i)) == 0)
                .count();
            assert_eq!(records.shown_in_row(f, hidden), shown, "row {f}");
        }
    }

    #[test]
    fn edges_are_16_bytes() {
        assert_eq!(std::mem::size_of::<Edge>(), 16);
    }

    #[test]
    fn duplicate_records_are_invalid() {
        let twice = forward_csr(vec![(0, 1, 1), (0, 1, 2)], &[0, 1], "list_records");
        assert!(matches!(twice, Err(Stop::Invalid(_))));
    }
}
