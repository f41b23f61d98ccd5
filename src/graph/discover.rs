//! "Latest follows" (`/discover`, API section 47): every account some
//! primary list holds a record of that carries neither `block` nor
//! `mute`, by t(X), the greatest `updated_at` of those records,
//! descending, then address ascending.
//!
//! Layout (m such accounts): the order prepared at load, with each
//! member's t(X) beside it (4 + 8 bytes per member), so a page of the
//! base is a slice: O(offset + limit). Built in one pass over the
//! forward records (O(e)) and one sort of the members.
//!
//! With a live index (docs/live.md) the members and their order are live:
//! the accounts whose records the tail changed (the live index's touched
//! targets, L of them) get their t(X) again from their live followers
//! (latest first, so the first shown record is the greatest), and a page
//! merges the base's order, those accounts skipped, with theirs:
//! O(L log L + offset + limit) per page. Counts stay compacted.

use std::cmp::Reverse;

use rayon::prelude::*;

use super::records::Records;
use super::{AccountId, Graph, FLAG_BLOCK, FLAG_MUTE};

/// The accounts followed most recently, newest first.
#[derive(Default)]
pub(super) struct LatestFollows {
    order: Vec<AccountId>,
    /// t(X) of `order[i]`.
    times: Vec<i64>,
}

impl LatestFollows {
    /// From the forward records of `n` accounts; `flags` gives a tag
    /// set's flags.
    pub(super) fn build(n: usize, records: &Records, flags: impl Fn(u32) -> u8) -> LatestFollows {
        let mut latest = vec![i64::MIN; n];
        for f in 0..records.csr().node_count() as AccountId {
            let row = records.row(f);
            let mut hidden = row
                .tagged()
                .filter(|&(_, set)| flags(set) & (FLAG_BLOCK | FLAG_MUTE) != 0)
                .map(|(i, _)| i)
                .peekable();
            for (i, (&t, &time)) in row.targets.iter().zip(row.times).enumerate() {
                if hidden.next_if_eq(&i).is_some() {
                    continue;
                }
                let slot = &mut latest[t as usize];
                *slot = (*slot).max(time);
            }
        }
        let mut order: Vec<AccountId> = (0..n as AccountId)
            .filter(|&id| latest[id as usize] != i64::MIN)
            .collect();
        // Ids are in address order: the tie-break is the id.
        order.par_sort_unstable_by_key(|&id| (Reverse(latest[id as usize]), id));
        let times = order.iter().map(|&id| latest[id as usize]).collect();
        LatestFollows { order, times }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.order.capacity() * std::mem::size_of::<AccountId>()
            + self.times.capacity() * std::mem::size_of::<i64>()
    }
}

impl Graph {
    /// A page of `/discover`'s accounts: from the `offset`th, at most
    /// `limit`.
    pub fn latest_follows(&self, offset: usize, limit: usize) -> Vec<AccountId> {
        let base = &self.base.latest_follows;
        let Some(live) = self.live().filter(|l| l.has_following()) else {
            let end = offset.saturating_add(limit).min(base.order.len());
            return base.order.get(offset..end).unwrap_or_default().to_vec();
        };
        let mut touched: Vec<AccountId> = live.touched_targets().collect();
        touched.sort_unstable();
        // (t(X), key, X) of the touched accounts that are still members.
        let mut changed: Vec<(i64, u64, AccountId)> = touched
            .iter()
            .filter_map(|&t| Some((self.shown_latest(t)?, self.order_key(t), t)))
            .collect();
        changed.sort_unstable_by_key(|&(time, key, _)| (Reverse(time), key));
        let kept = base
            .order
            .iter()
            .zip(&base.times)
            .filter(|(id, _)| touched.binary_search(id).is_err())
            .map(|(&id, &time)| (time, self.order_key(id), id));
        let mut changed = changed.into_iter().peekable();
        let mut kept = kept.peekable();
        let merged = std::iter::from_fn(|| match (kept.peek(), changed.peek()) {
            (Some(a), Some(b)) if (Reverse(b.0), b.1) < (Reverse(a.0), a.1) => changed.next(),
            (Some(_), _) => kept.next(),
            (None, _) => changed.next(),
        });
        merged
            .skip(offset)
            .take(limit)
            .map(|(_, _, id)| id)
            .collect()
    }

    /// The greatest `updated_at` of the records of `t` that carry neither
    /// `block` nor `mute` (`None`: no such record).
    fn shown_latest(&self, t: AccountId) -> Option<i64> {
        self.followers_latest(t).iter().find_map(|&f| {
            let r = self.record(f, t)?;
            (self.tagset_flags(r.tagset) & (FLAG_BLOCK | FLAG_MUTE) == 0).then_some(r.updated_at)
        })
    }
}
