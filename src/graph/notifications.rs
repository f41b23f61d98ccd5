//! Notifications: the visible ops grouped by target account, newest first
//! (`updated_at` descending, then `seq` descending), so a page of an
//! account's notifications is a slice and a time window two binary
//! searches.
//!
//! Layout (n accounts, o visible ops): a (start, end) row per account
//! (8 bytes) and one 12-byte `StoredOp` per op: `updated_at` and the actor
//! id with the opcode in its top 3 bits (so at most 2^29 accounts). The
//! tags of tag/untag ops sit in a side table of (op index, tag id) pairs,
//! sorted (8 bytes per tag op); the op bytes are rebuilt from these
//! exactly.
//!
//! Built from `list_ops` streamed in row groups (`scan_ops`) as 16-byte
//! items in provisional ids, grouped by target with a counting sort
//! (`group_ops`; the order of a target's ops does not depend on account
//! ids), and renumbered to final ids once they are known
//! (`NotificationsBuilder::finish`).

use std::cmp::Reverse;
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::hidden_ops::HiddenOp;
use super::intern::Interner;
use super::lookup::TokenMap;
use super::scatter::{row_offsets_par, scatter_row_pairs};
use super::stop::{limit, lock, Stop};
use super::tags::{LocalTags, SharedTags};
use super::AccountId;
use crate::snapshot::{scan_list_ops, Address, SnapshotFiles, TableEntry, OP_TAG};

/// One visible op as stored under its target account: 12 bytes (there
/// are ~26M at a million accounts). The opcode rides in the top 3 bits of
/// the actor id; the tags of tag/untag ops live in a side table.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, packed(4))]
struct StoredOp {
    updated_at: i64,
    actor_op: u32,
}

/// Bits of `StoredOp::actor_op` that hold the actor (the rest: opcode).
pub(super) const ACTOR_BITS: u32 = 29;

/// One visible op, unpacked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notification {
    pub updated_at: i64,
    pub actor: AccountId,
    pub opcode: u8,
    /// 0 (the empty tag) for follow and un-follow.
    pub tag_id: u32,
}

/// The ops targeting one account, newest first (`updated_at` descending,
/// then `seq` descending): a stored row, with a live index's new ops
/// (`added`, by their place in the merged row) between its ops.
#[derive(Clone, Copy, Debug)]
pub struct Notifications<'g> {
    /// Index of the first op in the graph-wide arrays.
    base: usize,
    ops: &'g [StoredOp],
    /// (graph-wide op index, tag id) of every tag/untag op, sorted.
    tags: &'g [(u32, u32)],
    /// (index in the merged row, op), ascending.
    added: &'g [(u32, Notification)],
}

impl<'g> Notifications<'g> {
    pub fn empty() -> Self {
        Notifications {
            base: 0,
            ops: &[],
            tags: &[],
            added: &[],
        }
    }
    /// This row with `added` between its ops (see the field).
    pub(super) fn with_added(self, added: &'g [(u32, Notification)]) -> Self {
        Notifications { added, ..self }
    }
    pub fn len(&self) -> usize {
        self.ops.len() + self.added.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The added op at `i`, or the stored op's index.
    #[inline]
    fn locate(&self, i: usize) -> Result<&Notification, usize> {
        if self.added.is_empty() {
            return Err(i);
        }
        match self.added.binary_search_by_key(&(i as u32), |a| a.0) {
            Ok(k) => Ok(&self.added[k].1),
            Err(k) => Err(i - k),
        }
    }
    pub fn updated_at(&self, i: usize) -> i64 {
        match self.locate(i) {
            Ok(n) => n.updated_at,
            Err(j) => self.ops[j].updated_at,
        }
    }
    pub fn opcode(&self, i: usize) -> u8 {
        match self.locate(i) {
            Ok(n) => n.opcode,
            Err(j) => (self.ops[j].actor_op >> ACTOR_BITS) as u8,
        }
    }
    /// The first index whose op is not `newer` (ops are newest first).
    pub fn partition_point(&self, newer: impl Fn(i64) -> bool) -> usize {
        if self.added.is_empty() {
            return self.ops.partition_point(|o| newer(o.updated_at));
        }
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if newer(self.updated_at(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
    pub fn get(&self, i: usize) -> Notification {
        let i = match self.locate(i) {
            Ok(n) => return *n,
            Err(j) => j,
        };
        let op = self.ops[i];
        let opcode = (op.actor_op >> ACTOR_BITS) as u8;
        let tag_id = if opcode >= OP_TAG {
            let global = (self.base + i) as u32;
            self.tags
                .binary_search_by_key(&global, |&(at, _)| at)
                .map_or(0, |k| self.tags[k].1)
        } else {
            0
        };
        Notification {
            updated_at: op.updated_at,
            actor: op.actor_op & ((1 << ACTOR_BITS) - 1),
            opcode,
            tag_id,
        }
    }
}

/// Every account's notifications.
pub(super) struct NotificationIndex {
    /// Account -> its range of `ops` (start, end).
    rows: Vec<(u32, u32)>,
    ops: Vec<StoredOp>,
    /// (graph-wide op index, tag id) of every tag/untag op, sorted.
    tags: Vec<(u32, u32)>,
    /// [`NotificationIndex::targets_of`]'s answers by actor: while one
    /// base serves, each poll's live index asks again for every list
    /// switched since the base, and a scan reads every op.
    targets_memo: Mutex<super::FastMap<AccountId, Arc<[AccountId]>>>,
}

impl NotificationIndex {
    /// Ops targeting the account, `updated_at` descending then `seq`
    /// descending.
    #[inline]
    pub(super) fn of(&self, id: AccountId) -> Notifications<'_> {
        let (a, b) = self.rows[id as usize];
        let (a, b) = (a as usize, b as usize);
        Notifications {
            base: a,
            ops: &self.ops[a..b],
            tags: &self.tags,
            added: &[],
        }
    }

    pub(super) fn len(&self) -> usize {
        self.ops.len()
    }

    /// The accounts that some op of one of `actors` targets (the live
    /// index's case of a list that stops being a primary list or changes
    /// user): one scan of every op for the actors not asked about before,
    /// a bit test per op, then remembered.
    pub(super) fn targets_of(&self, actors: &[AccountId]) -> Vec<AccountId> {
        const ACTOR_MASK: u32 = (1 << ACTOR_BITS) - 1;
        let mut memo = lock(&self.targets_memo);
        let mut missing: Vec<AccountId> = actors
            .iter()
            .copied()
            .filter(|a| !memo.contains_key(a))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let mut bits = vec![0u64; self.rows.len().div_ceil(64)];
            for &a in &missing {
                if let Some(w) = bits.get_mut(a as usize / 64) {
                    *w |= 1 << (a % 64);
                }
            }
            let hit = |a: u32| {
                bits.get(a as usize / 64)
                    .is_some_and(|w| w >> (a % 64) & 1 == 1)
            };
            let mut pairs: Vec<(AccountId, AccountId)> = (0..self.rows.len() as AccountId)
                .into_par_iter()
                .flat_map_iter(|t| {
                    let (a, b) = self.rows[t as usize];
                    let mut actors: Vec<AccountId> = self.ops[a as usize..b as usize]
                        .iter()
                        .map(|op| op.actor_op & ACTOR_MASK)
                        .filter(|&a| hit(a))
                        .collect();
                    actors.sort_unstable();
                    actors.dedup();
                    actors.into_iter().map(move |a| (a, t))
                })
                .collect();
            pairs.sort_unstable();
            for a in missing {
                let from = pairs.partition_point(|p| p.0 < a);
                let to = pairs.partition_point(|p| p.0 <= a);
                memo.insert(a, pairs[from..to].iter().map(|p| p.1).collect());
            }
        }
        let mut out: Vec<AccountId> = actors
            .iter()
            .flat_map(|a| memo.get(a).map_or(&[][..], |t| &t[..]).iter().copied())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// How many ops each of `actors` (ascending, distinct) made: one scan
    /// of every op (a refresh's case of a primary list's ops read again).
    pub(super) fn count_by_actor(&self, actors: &[AccountId]) -> Vec<u64> {
        const ACTOR_MASK: u32 = (1 << ACTOR_BITS) - 1;
        self.ops
            .par_chunks(1 << 16)
            .map(|ops| {
                let mut counts = vec![0u64; actors.len()];
                for op in ops {
                    if let Ok(i) = actors.binary_search(&(op.actor_op & ACTOR_MASK)) {
                        counts[i] += 1;
                    }
                }
                counts
            })
            .reduce(
                || vec![0u64; actors.len()],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            )
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.rows.capacity() * 8
            + self.ops.capacity() * std::mem::size_of::<StoredOp>()
            + self.tags.capacity() * 8
    }
}

/// Whole notification rows of a few accounts, made outside a load (the
/// live index, `live/`): the same stored form as [`NotificationIndex`],
/// a row apiece, so that the next live index can share the rows it does
/// not change.
#[derive(Default)]
pub(super) struct NotificationRows {
    rows: super::FastMap<AccountId, Arc<NotificationRow>>,
}

/// One account's notifications, newest first.
pub(super) struct NotificationRow {
    ops: Vec<StoredOp>,
    /// (index in `ops`, tag id) of the tag and untag ops.
    tags: Vec<(u32, u32)>,
}

impl NotificationRow {
    pub(super) fn new(row: Vec<Notification>) -> Arc<Self> {
        let mut out = NotificationRow {
            ops: Vec::with_capacity(row.len()),
            tags: Vec::new(),
        };
        for n in row {
            if n.opcode >= OP_TAG {
                out.tags.push((out.ops.len() as u32, n.tag_id));
            }
            out.ops.push(StoredOp {
                updated_at: n.updated_at,
                actor_op: n.actor | (u32::from(n.opcode) << ACTOR_BITS),
            });
        }
        Arc::new(out)
    }

    fn heap_bytes(&self) -> usize {
        self.ops.capacity() * std::mem::size_of::<StoredOp>() + self.tags.capacity() * 8
    }
}

impl NotificationRows {
    pub(super) fn new(rows: impl Iterator<Item = (AccountId, Arc<NotificationRow>)>) -> Self {
        NotificationRows {
            rows: rows.collect(),
        }
    }

    /// The account's row, if this holds one.
    #[inline]
    pub(super) fn of(&self, id: AccountId) -> Option<Notifications<'_>> {
        let row = self.rows.get(&id)?;
        Some(Notifications {
            base: 0,
            ops: &row.ops,
            tags: &row.tags,
            added: &[],
        })
    }

    /// The account's row as stored, to share.
    pub(super) fn row(&self, id: AccountId) -> Option<&Arc<NotificationRow>> {
        self.rows.get(&id)
    }

    pub(super) fn len(&self) -> usize {
        self.rows.len()
    }

    /// Heap bytes, a shared row counted whole.
    pub(super) fn heap_bytes(&self) -> usize {
        self.rows.capacity() * 17
            + self
                .rows
                .values()
                .map(|r| 48 + r.heap_bytes())
                .sum::<usize>()
    }
}

/// One visible op as decoded: 16 bytes, grouped by `target` later.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct OpItem {
    updated_at: i64,
    actor_op: u32,
    target: u32,
}

/// The visible ops in file order, and (op index, tag id) of the tag and
/// untag ops among them.
pub(super) type ScannedOps = (Vec<OpItem>, Vec<(u32, u32)>);

/// What one row group of `list_ops` reports besides its ops.
struct OpGroup {
    /// The targets of the kept ops, interned once the group is read (an
    /// op's `target` is its index here until then).
    targets: Vec<Address>,
    /// The tags of `tagged`, local ids until the group is read.
    tags: LocalTags,
    kept: u32,
    /// (index among the group's kept ops, tag id) of tag/untag ops.
    tagged: Vec<(u32, u32)>,
    seqs: Option<(u64, u64)>,
    ordered: bool,
    /// Ops of lists in `lists` (for `/stats`).
    listed: u64,
    /// The ops of lists in `lists` that are not visible, by list.
    hidden: Vec<(u64, HiddenOp, Box<str>)>,
    /// The lists of the ops of lists not in `lists`.
    unlisted: Vec<u64>,
}

/// The notification index while account ids are provisional: rows by
/// provisional target, actors provisional.
pub(super) struct NotificationsBuilder {
    rows: Vec<(u32, u32)>,
    ops: Vec<StoredOp>,
    tags: Vec<(u32, u32)>,
}

impl NotificationsBuilder {
    /// The index in final ids: actors renumbered in place, rows indexed
    /// by final id.
    pub(super) fn finish(mut self, perm: &[u32]) -> NotificationIndex {
        const ACTOR_MASK: u32 = (1 << ACTOR_BITS) - 1;
        self.ops.par_iter_mut().for_each(|op| {
            let actor_op = op.actor_op;
            op.actor_op = (actor_op & !ACTOR_MASK) | perm[(actor_op & ACTOR_MASK) as usize];
        });
        let mut rows = vec![(0u32, 0u32); perm.len()];
        for (prov, &row) in self.rows.iter().enumerate() {
            rows[perm[prov] as usize] = row;
        }
        NotificationIndex {
            rows,
            ops: self.ops,
            tags: self.tags,
            targets_memo: Mutex::default(),
        }
    }
}

/// What the ops scan reports besides the ops: how many are of lists in
/// `lists` (for `/stats`), and the ops of lists in `lists` that are not
/// visible (not a primary list's), by token then `seq`.
pub(super) struct ListOpFacts {
    pub(super) listed: u64,
    pub(super) hidden: Vec<(u64, HiddenOp, Box<str>)>,
    /// (list, ops) of the lists not in `lists` that have ops.
    pub(super) unlisted: Vec<(u64, u64)>,
}

/// The visible ops of `list_ops` in file order, targets and actors in
/// provisional ids, and [`ListOpFacts`]; `Stop::OpsOutOfOrder` unless the
/// file is in `seq` order.
pub(super) fn scan_ops(
    src: &dyn SnapshotFiles,
    e: &TableEntry,
    primary: &TokenMap,
    listed: &TokenMap,
    interner: &Interner,
    tags: &SharedTags,
) -> Result<(ScannedOps, ListOpFacts), Stop> {
    let (items, mut groups) = scan_list_ops(
        src,
        e,
        || OpGroup {
            targets: Vec::new(),
            tags: LocalTags::default(),
            kept: 0,
            tagged: Vec::new(),
            seqs: None,
            ordered: true,
            listed: 0,
            hidden: Vec::new(),
            unlisted: Vec::new(),
        },
        |g: &mut OpGroup, o| {
            g.seqs = match g.seqs {
                None => Some((o.seq, o.seq)),
                Some((first, last)) => {
                    g.ordered &= last < o.seq;
                    Some((first, o.seq))
                }
            };
            let ordinal = listed.get(o.token_id);
            match ordinal {
                Some(_) => g.listed += 1,
                None => g.unlisted.push(o.token_id),
            }
            let Some(actor) = primary.get(o.token_id) else {
                if ordinal.is_some() {
                    g.hidden.push((
                        o.token_id,
                        HiddenOp {
                            seq: o.seq,
                            updated_at: o.updated_at,
                            target: o.target,
                            opcode: o.opcode,
                        },
                        o.tag.into(),
                    ));
                }
                return None;
            };
            if !o.tag.is_empty() {
                let tag = g.tags.tag(o.tag);
                g.tagged.push((g.kept, tag));
            }
            g.targets.push(o.target);
            g.kept += 1;
            Some(OpItem {
                updated_at: o.updated_at,
                actor_op: actor | (u32::from(o.opcode) << ACTOR_BITS),
                target: g.kept - 1,
            })
        },
        |g, ops| {
            let ids = interner.take_ids(&mut g.targets);
            for op in ops {
                op.target = ids[op.target as usize];
            }
            let mut shared = lock(tags);
            let tag_ids = g
                .tags
                .shared_ids(g.tagged.iter().map(|t| t.1), |text| shared.tag(text));
            for t in &mut g.tagged {
                t.1 = tag_ids[t.1 as usize];
            }
            g.tags = LocalTags::default();
        },
    )?;
    // Strictly increasing seqs in file order are unique and make file
    // order the tie-break order.
    let mut last: Option<u64> = None;
    for g in &groups {
        if let Some((first, end)) = g.seqs {
            if !g.ordered || last.is_some_and(|l| l >= first) {
                return Err(Stop::OpsOutOfOrder);
            }
            last = Some(end);
        }
    }
    if items.len() > u32::MAX as usize {
        return Err(limit(&e.file, "more than 2^32 visible ops"));
    }
    // (op index, tag) of tag/untag ops, op indexes ascending.
    let mut tagged: Vec<(u32, u32)> = Vec::new();
    let mut base = 0u32;
    let listed_ops = groups.iter().map(|g| g.listed).sum();
    let mut hidden: Vec<(u64, HiddenOp, Box<str>)> = groups
        .iter_mut()
        .flat_map(|g| std::mem::take(&mut g.hidden))
        .collect();
    hidden.sort_by_key(|(token, op, _)| (*token, op.seq));
    let mut unlisted: Vec<u64> = groups
        .iter_mut()
        .flat_map(|g| std::mem::take(&mut g.unlisted))
        .collect();
    unlisted.sort_unstable();
    let unlisted = unlisted
        .chunk_by(|a, b| a == b)
        .map(|run| (run[0], run.len() as u64))
        .collect();
    for g in groups {
        tagged.extend(g.tagged.iter().map(|&(i, tag)| (base + i, tag)));
        base += g.kept;
    }
    Ok((
        (items, tagged),
        ListOpFacts {
            listed: listed_ops,
            hidden,
            unlisted,
        },
    ))
}

/// Groups ops by target, each target's newest first (`updated_at`
/// descending, then `seq` descending: file order reversed). A counting
/// sort over the reversed ops, then a sort of the rows out of time order.
pub(super) fn group_ops(
    items: Vec<OpItem>,
    tagged: Vec<(u32, u32)>,
    n: usize,
) -> NotificationsBuilder {
    let offsets = row_offsets_par(n, &items, |o| o.target);
    // Newest first within a target: file order reversed (then a stable
    // sort by time). The tagged ops' positions are taken as they land.
    let found_tags: Mutex<Vec<(u32, u32)>> = Mutex::new(Vec::with_capacity(tagged.len()));
    let (mut ops, _): (Vec<StoredOp>, Vec<()>) = scatter_row_pairs(&offsets, |put| {
        let mut found = Vec::new();
        let mut next_tagged = tagged.len();
        for (item, op) in items.iter().enumerate().rev() {
            let stored = StoredOp {
                updated_at: op.updated_at,
                actor_op: op.actor_op,
            };
            let at = put(op.target, stored, ());
            if next_tagged > 0 && tagged[next_tagged - 1].0 as usize == item {
                next_tagged -= 1;
                if let Some(at) = at {
                    found.push((at as u32, tagged[next_tagged].1));
                }
            }
        }
        lock(&found_tags).append(&mut found);
    });
    let mut tags = crate::sync::into_inner(found_tags);
    tags.par_sort_unstable();
    drop(items);
    sort_rows_newest_first(&mut ops, &mut tags, &offsets);
    let rows = offsets
        .windows(2)
        .map(|w| (w[0] as u32, w[1] as u32))
        .collect();
    NotificationsBuilder { rows, ops, tags }
}

/// Sorts every row of `ops` by `updated_at` descending, stably (rows hold
/// `seq` descending already), moving the (position, tag) entries of
/// `tags` along.
fn sort_rows_newest_first(ops: &mut [StoredOp], tags: &mut [(u32, u32)], offsets: &[usize]) {
    let rows = offsets.len() - 1;
    let parts = (rayon::current_num_threads() * 16).min(rows.max(1));
    let mut work = Vec::with_capacity(parts);
    let (mut ops_rest, mut tags_rest) = (ops, tags);
    let mut row = 0;
    for k in 1..=parts {
        let end_row = rows * k / parts;
        let (o, ot) = std::mem::take(&mut ops_rest).split_at_mut(offsets[end_row] - offsets[row]);
        let split = tags_rest.partition_point(|&(p, _)| (p as usize) < offsets[end_row]);
        let (t, tt) = std::mem::take(&mut tags_rest).split_at_mut(split);
        work.push((row..end_row, o, t));
        (ops_rest, tags_rest, row) = (ot, tt, end_row);
    }
    work.into_par_iter().for_each(|(range, ops, tags)| {
        let base = offsets[range.start];
        let mut order: Vec<(Reverse<i64>, u32)> = Vec::new();
        let mut moved: Vec<StoredOp> = Vec::new();
        let mut new_pos: Vec<u32> = Vec::new();
        for r in range {
            let (a, b) = (offsets[r] - base, offsets[r + 1] - base);
            let row = &mut ops[a..b];
            if row.windows(2).all(|w| {
                let (x, y) = (w[0].updated_at, w[1].updated_at);
                x >= y
            }) {
                continue;
            }
            order.clear();
            order.extend(
                row.iter()
                    .enumerate()
                    .map(|(i, o)| (Reverse(o.updated_at), i as u32)),
            );
            order.sort_unstable();
            moved.clear();
            moved.extend(order.iter().map(|&(_, i)| row[i as usize]));
            row.copy_from_slice(&moved);
            let lo = tags.partition_point(|&(p, _)| (p as usize) < offsets[r]);
            let hi = tags.partition_point(|&(p, _)| (p as usize) < offsets[r + 1]);
            if lo < hi {
                new_pos.clear();
                new_pos.resize(row.len(), 0);
                for (j, &(_, i)) in order.iter().enumerate() {
                    new_pos[i as usize] = j as u32;
                }
                for t in &mut tags[lo..hi] {
                    t.0 = offsets[r] as u32 + new_pos[t.0 as usize - offsets[r]];
                }
                tags[lo..hi].sort_unstable();
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_are_stored_compactly() {
        assert_eq!(std::mem::size_of::<StoredOp>(), 12);
        assert_eq!(std::mem::size_of::<OpItem>(), 16);
    }

    #[test]
    fn ops_group_by_target_newest_first_with_their_tags() {
        let op = |target, updated_at, actor: u32, opcode: u32| OpItem {
            updated_at,
            actor_op: actor | (opcode << ACTOR_BITS),
            target,
        };
        // File (seq) order; item 1 is a tag op with tag 5.
        let items = vec![
            op(1, 10, 0, 1),
            op(1, 30, 2, 3),
            op(0, 20, 1, 1),
            op(1, 10, 2, 2),
        ];
        // Provisional ids 0, 1, 2 become 1, 2, 0.
        let index = group_ops(items, vec![(1, 5)], 3).finish(&[1, 2, 0]);
        assert_eq!(index.len(), 4);
        let row = |id| {
            let n = index.of(id);
            (0..n.len())
                .map(|i| {
                    let got = n.get(i);
                    assert_eq!((n.updated_at(i), n.opcode(i)), (got.updated_at, got.opcode));
                    (got.updated_at, got.actor, got.opcode, got.tag_id)
                })
                .collect::<Vec<_>>()
        };
        // Equal times: the later seq first.
        assert_eq!(row(2), vec![(30, 0, 3, 5), (10, 0, 2, 0), (10, 1, 1, 0)]);
        assert_eq!(row(1), vec![(20, 2, 1, 0)]);
        assert!(index.of(0).is_empty());
        assert_eq!(index.of(2).partition_point(|t| t > 10), 1);
    }
}
