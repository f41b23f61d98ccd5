//! Who tagged an account: for each account T, the followers F whose
//! primary-list record of T carries tags, with the record's tag set and
//! F's address, so `taggedAs` reads the few tagged records of T instead
//! of every follower's record.
//!
//! Layout (n accounts, r tagged records): CSR offsets by target (4 bytes
//! per account, two reads find T's entries instead of a binary search of
//! all r), then per entry the tag set (4 bytes) and a copy of the
//! follower's address (20 bytes). The copy costs 20 bytes a tagged
//! record; without it a hub's taggedAs (~10k taggers) read each address
//! from a different cache line of the account table, which was most of
//! its time. Built from the forward index's tagged records in one pass
//! over the rows.

use rayon::prelude::*;

use petgraph::visit::EdgeRef;

use super::records::Records;
use super::AccountId;
use crate::snapshot::Address;

pub(super) struct TaggedBy {
    /// Target t's entries are `starts[t]..starts[t + 1]`.
    starts: Vec<u32>,
    /// Per entry, followers ascending within a target.
    sets: Vec<u32>,
    addresses: Vec<Address>,
}

impl TaggedBy {
    /// From the primary lists' records: every tagged record, by target.
    /// One merge of the rows (in edge order) with the side table (sorted
    /// by edge), then a sort of the tagged records alone.
    pub(super) fn build(records: &Records, addresses: &[Address]) -> TaggedBy {
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
        let mut starts = vec![0u32; addresses.len() + 1];
        for &(t, _, _) in &entries {
            starts[t as usize + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        TaggedBy {
            starts,
            sets: entries.iter().map(|e| e.2).collect(),
            addresses: entries.iter().map(|e| addresses[e.1 as usize]).collect(),
        }
    }

    /// (follower's address, tag set) of the tagged records of `t`,
    /// followers ascending.
    pub(super) fn of(&self, t: AccountId) -> impl Iterator<Item = (&Address, u32)> + '_ {
        let t = t as usize;
        let range = match (self.starts.get(t), self.starts.get(t + 1)) {
            (Some(&from), Some(&to)) => from as usize..to as usize,
            _ => 0..0,
        };
        self.addresses[range.clone()]
            .iter()
            .zip(self.sets[range].iter().copied())
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.starts.capacity() * 4 + self.sets.capacity() * 4 + self.addresses.capacity() * 20
    }
}
