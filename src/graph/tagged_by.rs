//! Who tagged an account: for each account T, the followers F whose
//! primary-list record of T carries tags, with the record's tag set, so
//! `taggedAs` reads the few tagged records of T instead of every
//! follower's record.
//!
//! Layout (r tagged records): (target, follower, tag set) sorted by target
//! then follower, 12 bytes per tagged record; an account's entries are
//! found by a binary search. Built from the forward index's tagged
//! records in one pass over the rows.

use rayon::prelude::*;

use petgraph::visit::EdgeRef;

use super::records::Records;
use super::AccountId;

pub(super) struct TaggedBy {
    /// (target, follower, tag set), sorted.
    entries: Vec<(AccountId, AccountId, u32)>,
}

impl TaggedBy {
    /// From the primary lists' records: every tagged record, by target.
    /// One merge of the rows (in edge order) with the side table (sorted
    /// by edge), then a sort of the tagged records alone.
    pub(super) fn build(records: &Records) -> TaggedBy {
        let csr = records.csr();
        let mut entries: Vec<(AccountId, AccountId, u32)> =
            Vec::with_capacity(records.tagged_count());
        let mut tagged = records.tagged_edges().peekable();
        for f in 0..csr.node_count() as AccountId {
            if tagged.peek().is_none() {
                break;
            }
            let targets = csr.neighbors_slice(f);
            if targets.is_empty() {
                continue;
            }
            let start = csr.edges(f).next().map_or(0, |e| e.id());
            let end = start + targets.len();
            while let Some(&(edge, set)) = tagged.peek() {
                if edge >= end {
                    break;
                }
                entries.push((targets[edge - start], f, set));
                tagged.next();
            }
        }
        entries.par_sort_unstable();
        TaggedBy { entries }
    }

    /// (follower, tag set) of the tagged records of `t`, followers
    /// ascending.
    pub(super) fn of(&self, t: AccountId) -> impl Iterator<Item = (AccountId, u32)> + '_ {
        let from = self.entries.partition_point(|e| e.0 < t);
        self.entries[from..]
            .iter()
            .take_while(move |e| e.0 == t)
            .map(|&(_, f, set)| (f, set))
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.entries.capacity() * 12
    }
}
