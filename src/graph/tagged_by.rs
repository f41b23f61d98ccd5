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

use super::records::Records;
use super::AccountId;

pub(super) struct TaggedBy {
    /// (target, follower, tag set), sorted.
    entries: Vec<(AccountId, AccountId, u32)>,
}

impl TaggedBy {
    /// From the primary lists' records: every tagged record, by target.
    pub(super) fn build(records: &Records) -> TaggedBy {
        let rows = records.csr().node_count() as AccountId;
        let mut entries: Vec<(AccountId, AccountId, u32)> = (0..rows)
            .into_par_iter()
            .flat_map_iter(|f| {
                let row = records.row(f);
                let tagged: Vec<(AccountId, AccountId, u32)> = row
                    .tagged()
                    .map(|(i, set)| (row.targets[i], f, set))
                    .collect();
                tagged
            })
            .collect();
        entries.par_sort_unstable();
        entries.shrink_to_fit();
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
