//! The live entities held on top of the base (docs/live.md): each list,
//! account and op history the tail re-read since the base, whole. The
//! newest re-read of an entity replaces the older one (LSM read rule: the
//! newest layer wins, an absent row masks the base's), so applying a poll
//! twice, or polls' re-reads of one entity in any order, gives one state.
//!
//! `merge` lays the entities over the base's rows and gives the rows an
//! export at the last poll would have written: the compaction builds the
//! next base from them.
//!
//! Cost: memory is the re-read rows (a list's records, tags, new ops);
//! `merge` is O(rows of the base) plus a sort of the ops, once per
//! compaction, never on the request path.

use std::collections::BTreeMap;

use crate::export::reread::{OpKey, Reread};
use crate::graph::live::{Changes, ListOps};
use crate::snapshot::{Address, ListState, OpRow, Tables};

/// A list's ops beyond the base: appended to the base's, or its whole
/// history (read again after a storage-location change or a late op).
#[derive(Clone, Debug)]
enum LiveOps {
    Append(Vec<(OpRow, OpKey)>),
    Replace(Vec<(OpRow, OpKey)>),
}

#[derive(Debug, Default)]
pub struct Overlay {
    lists: BTreeMap<u64, ListState>,
    primary: BTreeMap<Address, Option<u64>>,
    ops: BTreeMap<u64, LiveOps>,
}

impl Overlay {
    /// Entities held on top of the base (lists and accounts).
    pub fn entities(&self) -> usize {
        self.lists.len() + self.primary.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lists.is_empty() && self.primary.is_empty() && self.ops.is_empty()
    }

    /// Lays one poll's re-reads over the entities held so far.
    pub fn apply(&mut self, reread: Reread) {
        self.lists.extend(reread.lists);
        self.primary.extend(reread.primary);
        for (token, history) in reread.rescanned {
            self.ops.insert(token, LiveOps::Replace(history));
        }
        for (row, key) in reread.ops {
            let entry = self
                .ops
                .entry(row.token_id)
                .or_insert_with(|| LiveOps::Append(Vec::new()));
            match entry {
                LiveOps::Append(v) | LiveOps::Replace(v) => {
                    // A re-applied poll adds no op twice.
                    if !v
                        .iter()
                        .any(|(r, k)| *k == key && r.token_id == row.token_id)
                    {
                        v.push((row, key));
                    }
                }
            }
        }
    }

    /// The held entities as the graph's live index takes them: each new
    /// op with its place in the order `merge` numbers the new ops in.
    pub fn changes(&self) -> Changes<'_> {
        let mut places: Vec<(OpKey, u64)> = self
            .ops
            .values()
            .flat_map(|ops| {
                let (LiveOps::Append(v) | LiveOps::Replace(v)) = ops;
                v.iter().map(|(o, key)| (*key, o.token_id))
            })
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
            .map(|(&token, ops)| {
                let (replace, v) = match ops {
                    LiveOps::Append(v) => (false, v),
                    LiveOps::Replace(v) => (true, v),
                };
                ListOps {
                    token,
                    replace,
                    ops: v
                        .iter()
                        .map(|(o, key)| (o, place_of[&(*key, o.token_id)]))
                        .collect(),
                }
            })
            .collect();
        Changes {
            lists: &self.lists,
            primary: &self.primary,
            ops,
        }
    }

    /// The base's rows with every held entity in place of the base's:
    /// what an export at the last applied poll would have written (ens and
    /// badges are the base's). Ops are numbered again 1, 2, … in the
    /// export's order: the base's keep theirs among themselves, the new
    /// ones follow by `updated_at`, then by their event position.
    pub fn merge(&self, base: &Tables) -> Tables {
        let lists_live = |t: &u64| self.lists.contains_key(t);
        let mut out = Tables {
            ens: base.ens.clone(),
            badge_events: base.badge_events.clone(),
            badges: base.badges.clone(),
            ..Tables::default()
        };
        out.lists = base
            .lists
            .iter()
            .filter(|r| !lists_live(&r.token_id))
            .cloned()
            .chain(self.lists.values().filter_map(|l| l.row.clone()))
            .collect();
        out.lists.sort_unstable_by_key(|r| r.token_id);
        out.primary_lists = base
            .primary_lists
            .iter()
            .filter(|r| !self.primary.contains_key(&r.address))
            .cloned()
            .chain(self.primary.iter().filter_map(|(a, t)| {
                t.map(|token_id| crate::snapshot::PrimaryListRow {
                    address: *a,
                    token_id,
                })
            }))
            .collect();
        out.primary_lists.sort_unstable_by_key(|r| r.address);
        out.list_records = base
            .list_records
            .iter()
            .filter(|r| !lists_live(&r.token_id))
            .cloned()
            .chain(self.lists.values().flat_map(|l| l.records.iter().cloned()))
            .collect();
        out.list_record_tags = base
            .list_record_tags
            .iter()
            .filter(|r| !lists_live(&r.token_id))
            .cloned()
            .chain(self.lists.values().flat_map(|l| l.tags.iter().cloned()))
            .collect();
        out.list_ops = self.merged_ops(&base.list_ops);
        out
    }

    fn merged_ops(&self, base: &[OpRow]) -> Vec<OpRow> {
        /// Base ops order by their seq, new ones by their event.
        #[derive(PartialEq, Eq, PartialOrd, Ord)]
        enum Order {
            Base(u64),
            New(OpKey, u64),
        }
        let replaced = |t: &u64| matches!(self.ops.get(t), Some(LiveOps::Replace(_)));
        let mut all: Vec<(i64, Order, &OpRow)> = base
            .iter()
            .filter(|o| !replaced(&o.token_id))
            .map(|o| (o.updated_at, Order::Base(o.seq), o))
            .collect();
        for ops in self.ops.values() {
            let (LiveOps::Append(v) | LiveOps::Replace(v)) = ops;
            all.extend(
                v.iter()
                    .map(|(o, key)| (o.updated_at, Order::New(*key, o.token_id), o)),
            );
        }
        all.sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        all.into_iter()
            .enumerate()
            .map(|(i, (_, _, o))| OpRow {
                seq: i as u64 + 1,
                ..o.clone()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{ListRow, Op, RecordRow};

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
        overlay.apply(reread);
        // The same poll again changes nothing.
        let mut again = Reread::default();
        again.ops.push((op(1, 1, 15, 7), (15_000, 8453, [9, 0, 0])));
        overlay.apply(again);
        let merged = overlay.merge(&base);
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
        overlay.apply(reread);
        let merged = overlay.merge(&base);
        assert!(merged.primary_lists.is_empty());
        let ops: Vec<(u64, u8)> = merged
            .list_ops
            .iter()
            .map(|o| (o.seq, o.op.target[0]))
            .collect();
        assert_eq!(ops, vec![(1, 6)]);
    }
}
