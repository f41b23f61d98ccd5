//! The live entities held on top of the base (docs/live.md): each list,
//! account and op history the tail re-read since the base, whole. The
//! newest re-read of an entity replaces the older one (LSM read rule: the
//! newest layer wins, an absent row masks the base's), so applying a poll
//! twice, or polls' re-reads of one entity in any order, gives one state.
//!
//! `merge` lays the entities over the base's rows and gives the rows an
//! export at the last poll would have written; a compaction does the
//! same table by table with the pieces `merge` is made of, streamed
//! (`rewrite.rs`), and builds the next base from them. Each entity remembers the poll that re-read it,
//! so what arrived while a compaction ran stays held over the new base
//! (`after`).
//!
//! Cost: memory is the re-read rows (a list's records, tags, new ops);
//! `merge` is O(rows of the base) plus a sort of the ops, once per
//! compaction, never on the request path.

use std::collections::BTreeMap;

use crate::export::reread::{OpKey, Reread};
use crate::graph::live::{Changes, ListOps};
use crate::snapshot::{Address, ListRow, ListState, OpRow, PrimaryListRow, RecordRow, TagRow};

/// A list's ops beyond the base: appended to the base's, or (once its
/// whole history was read again) all of them; each op with the poll that
/// applied it.
#[derive(Clone, Debug, Default)]
struct HeldOps {
    /// The poll that read the list's whole history last, if one did.
    replaced_at: Option<u64>,
    ops: Vec<(OpRow, OpKey, u64)>,
}

#[derive(Clone, Debug, Default)]
pub struct Overlay {
    lists: BTreeMap<u64, ListState>,
    primary: BTreeMap<Address, Option<u64>>,
    ops: BTreeMap<u64, HeldOps>,
    /// The poll that last re-read each list and account.
    list_polls: BTreeMap<u64, u64>,
    primary_polls: BTreeMap<Address, u64>,
}

impl Overlay {
    /// Entities held on top of the base (lists and accounts).
    pub fn entities(&self) -> usize {
        self.lists.len() + self.primary.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lists.is_empty() && self.primary.is_empty() && self.ops.is_empty()
    }

    /// Whether a poll after `poll` re-read something held: `after(poll)`
    /// would hold anything.
    pub fn changed_after(&self, poll: u64) -> bool {
        self.list_polls.values().any(|&p| p > poll)
            || self.primary_polls.values().any(|&p| p > poll)
            || self.ops.values().any(|held| {
                held.replaced_at.is_some_and(|p| p > poll) || held.ops.iter().any(|o| o.2 > poll)
            })
    }

    /// Lays poll `poll`'s re-reads over the entities held so far.
    pub fn apply(&mut self, reread: Reread, poll: u64) {
        for (token, state) in reread.lists {
            self.list_polls.insert(token, poll);
            self.lists.insert(token, state);
        }
        for (address, primary) in reread.primary {
            self.primary_polls.insert(address, poll);
            self.primary.insert(address, primary);
        }
        for (token, history) in reread.rescanned {
            let ops = history.into_iter().map(|(o, k)| (o, k, poll)).collect();
            self.ops.insert(
                token,
                HeldOps {
                    replaced_at: Some(poll),
                    ops,
                },
            );
        }
        for (row, key) in reread.ops {
            let held = self.ops.entry(row.token_id).or_default();
            // A re-applied poll adds no op twice.
            if !held.ops.iter().any(|(_, k, _)| *k == key) {
                held.ops.push((row, key, poll));
            }
        }
    }

    /// What is held beyond poll `poll`: the entities re-read after it,
    /// over a base that holds everything up to it (a compaction's).
    pub fn after(&self, poll: u64) -> Overlay {
        let newer = |p: &u64| *p > poll;
        let lists: BTreeMap<u64, ListState> = self
            .lists
            .iter()
            .filter(|(t, _)| self.list_polls.get(*t).is_some_and(newer))
            .map(|(t, l)| (*t, l.clone()))
            .collect();
        let primary: BTreeMap<Address, Option<u64>> = self
            .primary
            .iter()
            .filter(|(a, _)| self.primary_polls.get(*a).is_some_and(newer))
            .map(|(a, p)| (*a, *p))
            .collect();
        let ops = self
            .ops
            .iter()
            .filter_map(|(&token, held)| {
                let kept = if held.replaced_at.is_some_and(|p| p > poll) {
                    held.clone()
                } else {
                    HeldOps {
                        replaced_at: None,
                        ops: held.ops.iter().filter(|o| o.2 > poll).cloned().collect(),
                    }
                };
                (!kept.ops.is_empty() || kept.replaced_at.is_some()).then_some((token, kept))
            })
            .collect();
        Overlay {
            list_polls: lists.keys().map(|t| (*t, self.list_polls[t])).collect(),
            primary_polls: primary
                .keys()
                .map(|a| (*a, self.primary_polls[a]))
                .collect(),
            lists,
            primary,
            ops,
        }
    }

    /// The held entities as the graph's live index takes them: each new
    /// op with its place in the order `merge` numbers the new ops in.
    pub fn changes(&self) -> Changes<'_> {
        let mut places: Vec<(OpKey, u64)> = self
            .ops
            .values()
            .flat_map(|held| held.ops.iter().map(|(o, key, _)| (*key, o.token_id)))
            .collect();
        places.sort_unstable();
        let place_of: BTreeMap<(OpKey, u64), u64> = places
            .into_iter()
            .enumerate()
            .map(|(i, k)| (k, i as u64))
            .collect();
        let ops = self
            .ops
            .iter()
            .map(|(&token, held)| ListOps {
                token,
                replace: held.replaced_at.is_some(),
                ops: held
                    .ops
                    .iter()
                    .map(|(o, key, _)| (o, place_of[&(*key, o.token_id)]))
                    .collect(),
            })
            .collect();
        Changes {
            lists: &self.lists,
            primary: &self.primary,
            ops,
        }
    }

    /// Lays `newer` (entities read after every one of these) over these:
    /// a re-read replaces, new ops append, a history read again replaces
    /// the ops (what `apply` does with each of its polls).
    pub fn absorb(&mut self, newer: Overlay) {
        self.lists.extend(newer.lists);
        self.list_polls.extend(newer.list_polls);
        self.primary.extend(newer.primary);
        self.primary_polls.extend(newer.primary_polls);
        for (token, held) in newer.ops {
            if held.replaced_at.is_some() {
                self.ops.insert(token, held);
                continue;
            }
            let mine = self.ops.entry(token).or_default();
            for op in held.ops {
                if !mine.ops.iter().any(|(_, k, _)| *k == op.1) {
                    mine.ops.push(op);
                }
            }
        }
    }

    /// The base's rows with every held entity in place of the base's:
    /// what an export at the last applied poll would have written (ens and
    /// badges are the base's). Ops are numbered again 1, 2, … in the
    /// export's order: the base's keep theirs among themselves, the new
    /// ones follow by `updated_at`, then by their event position. The
    /// rows are changed in place (no second copy of the base's). A
    /// compaction does the same table by table, streamed
    /// (`tail::rewrite`); this whole-table form is the tests' model of it.
    #[cfg(test)]
    pub fn merge(&self, mut base: crate::snapshot::Tables) -> crate::snapshot::Tables {
        base.lists = self.merge_lists(base.lists);
        base.primary_lists = self.merge_primary_lists(base.primary_lists);
        base.list_records.retain(|r| !self.holds_list(r.token_id));
        base.list_records.extend(self.held_records().cloned());
        base.list_record_tags
            .retain(|r| !self.holds_list(r.token_id));
        base.list_record_tags.extend(self.held_tags().cloned());
        self.merge_ops(&mut base.list_ops);
        base
    }

    /// Whether the list is held: its rows replace the base's.
    pub fn holds_list(&self, token: u64) -> bool {
        self.lists.contains_key(&token)
    }

    /// The base's `lists` with the held lists in place, by token.
    pub fn merge_lists(&self, mut rows: Vec<ListRow>) -> Vec<ListRow> {
        rows.retain(|r| !self.holds_list(r.token_id));
        rows.extend(self.lists.values().filter_map(|l| l.row.clone()));
        rows.sort_unstable_by_key(|r| r.token_id);
        rows
    }

    /// The base's `primary_lists` with the held accounts' in place, by
    /// address.
    pub fn merge_primary_lists(&self, mut rows: Vec<PrimaryListRow>) -> Vec<PrimaryListRow> {
        rows.retain(|r| !self.primary.contains_key(&r.address));
        rows.extend(self.primary.iter().filter_map(|(a, t)| {
            t.map(|token_id| PrimaryListRow {
                address: *a,
                token_id,
            })
        }));
        rows.sort_unstable_by_key(|r| r.address);
        rows
    }

    /// The held lists' records, which follow the base's.
    pub fn held_records(&self) -> impl Iterator<Item = &RecordRow> {
        self.lists.values().flat_map(|l| l.records.iter())
    }

    /// The held lists' tags, which follow the base's.
    pub fn held_tags(&self) -> impl Iterator<Item = &TagRow> {
        self.lists.values().flat_map(|l| l.tags.iter())
    }

    /// Whether the list's whole op history was read again: the base's
    /// ops of it go.
    pub fn replaces_ops(&self, token: u64) -> bool {
        self.ops
            .get(&token)
            .is_some_and(|h| h.replaced_at.is_some())
    }

    /// The new ops in their order: by `updated_at`, then event position
    /// (each after the base's ops of its `updated_at`).
    pub fn new_ops(&self) -> Vec<&OpRow> {
        let mut new: Vec<(&OpRow, OpKey)> = self
            .ops
            .values()
            .flat_map(|held| held.ops.iter().map(|(o, key, _)| (o, *key)))
            .collect();
        new.sort_unstable_by(|a, b| {
            (a.0.updated_at, a.1, a.0.token_id).cmp(&(b.0.updated_at, b.1, b.0.token_id))
        });
        new.into_iter().map(|(o, _)| o).collect()
    }

    /// `ops` (the base's) without the histories read again, with the new
    /// ops, in (`updated_at`, base by `seq` before new by event) order,
    /// numbered 1, 2, …
    pub fn merge_ops(&self, ops: &mut Vec<OpRow>) {
        ops.retain(|o| !self.replaces_ops(o.token_id));
        let new = self.new_ops();
        let in_order = ops
            .windows(2)
            .all(|w| (w[0].updated_at, w[0].seq) < (w[1].updated_at, w[1].seq));
        if !in_order {
            // Not in export order: sort the base's by (`updated_at`, `seq`)
            // first (stable, so equal keys keep their order).
            ops.sort_by_key(|o| (o.updated_at, o.seq));
        }
        // Merged from the back in place: each new op after the base's of
        // its `updated_at`.
        let (n, k) = (ops.len(), new.len());
        ops.resize_with(n + k, || OpRow {
            token_id: 0,
            seq: 0,
            op: Default::default(),
            updated_at: 0,
        });
        let (mut i, mut j, mut w) = (n, k, n + k);
        while j > 0 {
            w -= 1;
            if i > 0 && ops[i - 1].updated_at > new[j - 1].updated_at {
                ops.swap(i - 1, w);
                i -= 1;
            } else {
                ops[w] = new[j - 1].clone();
                j -= 1;
            }
        }
        for (i, op) in ops.iter_mut().enumerate() {
            op.seq = i as u64 + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{ListRow, Op, RecordRow, Tables};

    fn list(token_id: u64, user: u8) -> ListRow {
        ListRow {
            token_id,
            user: [user; 20],
            owner: [user; 20],
            manager: [user; 20],
        }
    }

    fn op(token_id: u64, seq: u64, updated_at: i64, target: u8) -> OpRow {
        OpRow {
            token_id,
            seq,
            op: Op {
                opcode: 1,
                target: [target; 20],
                tag: String::new(),
            },
            updated_at,
        }
    }

    #[test]
    fn the_newest_reread_replaces_the_base_and_ops_are_renumbered() {
        let base = Tables {
            lists: vec![list(1, 1), list(2, 2)],
            list_records: vec![
                RecordRow {
                    token_id: 1,
                    address: [9; 20],
                    updated_at: 5,
                },
                RecordRow {
                    token_id: 2,
                    address: [8; 20],
                    updated_at: 5,
                },
            ],
            list_ops: vec![op(1, 1, 10, 9), op(2, 2, 20, 8)],
            ..Tables::default()
        };
        let mut overlay = Overlay::default();
        let mut reread = Reread::default();
        reread.lists.insert(
            1,
            ListState {
                row: Some(list(1, 3)),
                records: vec![],
                tags: vec![],
            },
        );
        reread.lists.insert(
            5,
            ListState {
                row: Some(list(5, 5)),
                records: vec![RecordRow {
                    token_id: 5,
                    address: [7; 20],
                    updated_at: 30,
                }],
                tags: vec![],
            },
        );
        reread
            .ops
            .push((op(1, 1, 15, 7), (15_000, 8453, [9, 0, 0])));
        overlay.apply(reread, 1);
        // The same poll again changes nothing.
        let mut again = Reread::default();
        again.ops.push((op(1, 1, 15, 7), (15_000, 8453, [9, 0, 0])));
        overlay.apply(again, 2);
        let merged = overlay.merge(base);
        assert_eq!(merged.lists, vec![list(1, 3), list(2, 2), list(5, 5)]);
        let records: Vec<(u64, u8)> = merged
            .list_records
            .iter()
            .map(|r| (r.token_id, r.address[0]))
            .collect();
        assert_eq!(records, vec![(2, 8), (5, 7)]);
        let ops: Vec<(u64, u64, i64)> = merged
            .list_ops
            .iter()
            .map(|o| (o.seq, o.token_id, o.updated_at))
            .collect();
        assert_eq!(ops, vec![(1, 1, 10), (2, 1, 15), (3, 2, 20)]);
        assert_eq!(overlay.entities(), 2);
    }

    #[test]
    fn a_rescanned_history_replaces_the_base_ops_and_no_primary_list_masks_the_base() {
        let base = Tables {
            lists: vec![list(1, 1)],
            primary_lists: vec![crate::snapshot::PrimaryListRow {
                address: [1; 20],
                token_id: 1,
            }],
            list_ops: vec![op(1, 1, 10, 9), op(1, 2, 11, 8)],
            ..Tables::default()
        };
        let mut overlay = Overlay::default();
        let mut reread = Reread::default();
        reread
            .rescanned
            .insert(1, vec![(op(1, 7, 12, 6), (12_000, 1, [1, 0, 0]))]);
        reread.primary.insert([1; 20], None);
        overlay.apply(reread, 1);
        let merged = overlay.merge(base);
        assert!(merged.primary_lists.is_empty());
        let ops: Vec<(u64, u8)> = merged
            .list_ops
            .iter()
            .map(|o| (o.seq, o.op.target[0]))
            .collect();
        assert_eq!(ops, vec![(1, 6)]);
    }

    #[test]
    fn new_ops_merge_after_the_base_ops_of_their_time_in_any_base_order() {
        for base_ops in [
            vec![op(1, 1, 10, 1), op(1, 2, 15, 2), op(1, 3, 20, 3)],
            // Not in export order: sorted by (`updated_at`, `seq`) first.
            vec![op(1, 1, 20, 3), op(1, 2, 10, 1), op(1, 3, 15, 2)],
        ] {
            let base = Tables {
                list_ops: base_ops,
                ..Tables::default()
            };
            let mut overlay = Overlay::default();
            let mut reread = Reread::default();
            reread.ops.push((op(1, 0, 15, 9), (15_000, 2, [0, 0, 0])));
            reread.ops.push((op(1, 0, 5, 8), (5_000, 1, [0, 0, 0])));
            overlay.apply(reread, 1);
            let merged = overlay.merge(base);
            let ops: Vec<(u64, i64, u8)> = merged
                .list_ops
                .iter()
                .map(|o| (o.seq, o.updated_at, o.op.target[0]))
                .collect();
            assert_eq!(
                ops,
                vec![(1, 5, 8), (2, 10, 1), (3, 15, 2), (4, 15, 9), (5, 20, 3)]
            );
        }
    }

    #[test]
    fn absorbing_newer_entities_is_applying_their_polls() {
        let rereads = || {
            let mut first = Reread::default();
            first.lists.insert(1, ListState::default());
            first.ops.push((op(1, 0, 10, 9), (10_000, 1, [1, 0, 0])));
            first
                .rescanned
                .insert(2, vec![(op(2, 0, 11, 8), (11_000, 1, [2, 0, 0]))]);
            let mut second = Reread::default();
            second.lists.insert(
                1,
                ListState {
                    row: Some(list(1, 4)),
                    ..ListState::default()
                },
            );
            second.ops.push((op(1, 0, 10, 9), (10_000, 1, [1, 0, 0])));
            second.ops.push((op(1, 0, 12, 7), (12_000, 1, [3, 0, 0])));
            second
                .rescanned
                .insert(2, vec![(op(2, 0, 13, 6), (13_000, 1, [4, 0, 0]))]);
            (first, second)
        };
        let (first, second) = rereads();
        let mut both = Overlay::default();
        both.apply(first, 1);
        both.apply(second, 2);
        let (first, second) = rereads();
        let (mut older, mut newer) = (Overlay::default(), Overlay::default());
        older.apply(first, 1);
        newer.apply(second, 2);
        older.absorb(newer);
        let ops = |o: &Overlay, t: u64| -> Vec<[u64; 3]> {
            o.ops[&t].ops.iter().map(|x| x.1 .2).collect()
        };
        assert_eq!(older.lists[&1].row, both.lists[&1].row);
        assert_eq!(ops(&older, 1), vec![[1, 0, 0], [3, 0, 0]]);
        assert_eq!(ops(&older, 1), ops(&both, 1));
        assert_eq!(ops(&older, 2), vec![[4, 0, 0]]);
        assert_eq!(older.ops[&2].replaced_at, Some(2));
        assert_eq!(older.list_polls, both.list_polls);
    }

    #[test]
    fn after_a_poll_holds_what_later_polls_read() {
        let mut overlay = Overlay::default();
        let mut first = Reread::default();
        first.lists.insert(1, ListState::default());
        first.primary.insert([1; 20], Some(1));
        first.ops.push((op(1, 0, 10, 9), (10_000, 1, [1, 0, 0])));
        first
            .rescanned
            .insert(2, vec![(op(2, 0, 11, 8), (11_000, 1, [2, 0, 0]))]);
        overlay.apply(first, 1);
        let mut second = Reread::default();
        second.lists.insert(3, ListState::default());
        second.ops.push((op(1, 0, 12, 7), (12_000, 1, [3, 0, 0])));
        second.ops.push((op(2, 0, 13, 6), (13_000, 1, [4, 0, 0])));
        overlay.apply(second, 2);

        let after = overlay.after(1);
        assert_eq!(after.lists.keys().copied().collect::<Vec<_>>(), vec![3]);
        assert!(after.primary.is_empty());
        // List 1's later op is appended; list 2's history was read at
        // poll 1, so only its later op is beyond it.
        let ops = |t: u64| {
            let held = &after.ops[&t];
            let keys: Vec<[u64; 3]> = held.ops.iter().map(|o| o.1 .2).collect();
            (held.replaced_at, keys)
        };
        assert_eq!(ops(1), (None, vec![[3, 0, 0]]));
        assert_eq!(ops(2), (None, vec![[4, 0, 0]]));
        assert!(overlay.after(2).is_empty());
        // As `after` holds something or nothing.
        assert!(overlay.changed_after(0) && overlay.changed_after(1));
        assert!(!overlay.changed_after(2));
        // Before every poll, all of it (list 2 still replaced).
        let all = overlay.after(0);
        assert_eq!(all.entities(), overlay.entities());
        assert_eq!(all.ops[&2].replaced_at, Some(1));
        assert_eq!(all.ops[&2].ops.len(), 2);
    }
}
