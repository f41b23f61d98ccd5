//! T's followers in the requested order, filtered and paged (6, 7, 19,
//! 20), and a slice of the newest-first order (21, 22).
//!
//! The follower index keeps each row pre-sorted newest first and by
//! follower count, so a page walks the prepared order from its offset and
//! reads only the records it shows (or, filtered, the records it tests):
//! O(offset + limit) unfiltered, O(offset + limit + the filtered-out
//! members before the page) filtered. `earliest` walks the newest-first
//! order backwards and finds an offset by binary searches on the times.

use super::{FollowerSort, PageFill, RecordFilter};
use crate::graph::{AccountId, Graph, Record};

/// How many followers are looked up together (see `Graph::records`): a
/// page of 10 plus a little filtering in one batch.
pub const BATCH: usize = 16;

/// T's followers with F's record of T, in the requested order, produced
/// batch by batch.
struct FollowerCandidates<'a> {
    g: &'a Graph,
    t: AccountId,
    /// `latest` or `by_count`; `earliest` walks `latest` backwards.
    order: &'a [AccountId],
    earliest: bool,
    /// Next index into `order` (forwards), or end of the unread part
    /// (backwards).
    pos: usize,
    /// Earliest only: fetched but not yet emitted, in backward order; the
    /// last run of equal `updated_at` may continue in the next batch.
    pending: Vec<(AccountId, Record)>,
}

impl<'a> FollowerCandidates<'a> {
    fn new(g: &'a Graph, t: AccountId, sort: FollowerSort) -> Self {
        let (order, earliest) = match sort {
            FollowerSort::Latest => (g.followers_latest(t), false),
            FollowerSort::Followers => (g.followers_by_count(t), false),
            FollowerSort::Earliest => (g.followers_latest(t), true),
        };
        FollowerCandidates {
            g,
            t,
            order,
            earliest,
            pos: if earliest { order.len() } else { 0 },
            pending: Vec::new(),
        }
    }

    /// Skips the first `n` followers (before any batch) without looking up
    /// their records; returns how many of `n` were past the end.
    fn skip_unfiltered(&mut self, n: usize) -> usize {
        if self.earliest {
            return self.skip_earliest(n);
        }
        let skipped = n.min(self.order.len() - self.pos);
        self.pos += skipped;
        n - skipped
    }

    /// Backwards, whole runs of equal times are skipped from the end of
    /// `latest`; a run is emitted forwards (address ascending), so of the
    /// run the skip ends in, its first members are skipped and the rest is
    /// left pending. The run's bounds come from binary searches on the
    /// times (`latest` is time descending): O(log n) lookups where a walk
    /// read `n` records, tens of milliseconds deep into a hub's followers.
    fn skip_earliest(&mut self, n: usize) -> usize {
        let len = self.order.len();
        if n == 0 {
            return 0;
        }
        if n >= len {
            self.pos = 0;
            return n - len;
        }
        // The last n of `latest` hold the n earliest times.
        let cut = len - n;
        let at_cut = self.updated_at(self.order[cut]);
        let run_start = self.order[..cut].partition_point(|&f| self.updated_at(f) > at_cut);
        let run_end = cut + self.order[cut..].partition_point(|&f| self.updated_at(f) >= at_cut);
        // Skipped of the run: as many as it has from the cut on.
        let kept = &self.order[run_start + (run_end - cut)..run_end];
        let mut pending = Vec::with_capacity(kept.len());
        for chunk in kept.rchunks(BATCH) {
            self.lookup(chunk.iter().rev().copied(), &mut pending);
        }
        self.pending = pending;
        self.pos = run_start;
        0
    }

    fn updated_at(&self, f: AccountId) -> i64 {
        // Every follower in the index has a record of T.
        self.g.record(f, self.t).map_or(0, |r| r.updated_at)
    }

    /// Appends the next at most `want` candidates (at least one while any
    /// are left) to `out`.
    fn next_batch(&mut self, want: usize, out: &mut Vec<(AccountId, Record)>) {
        let want = want.clamp(1, BATCH);
        if !self.earliest {
            let ids = &self.order[self.pos..(self.pos + want).min(self.order.len())];
            self.pos += ids.len();
            self.lookup(ids.iter().copied(), out);
            return;
        }
        // Backwards, `latest` is (time ascending, address descending);
        // each run of equal times is reversed into address order.
        loop {
            if self.pos == 0 && self.pending.is_empty() {
                return;
            }
            let ids = &self.order[self.pos.saturating_sub(BATCH)..self.pos];
            self.pos -= ids.len();
            let mut fetched = std::mem::take(&mut self.pending);
            self.lookup(ids.iter().rev().copied(), &mut fetched);
            let complete = if self.pos == 0 {
                fetched.len()
            } else {
                let last = fetched.last().map_or(0, |r| r.1.updated_at);
                fetched.len()
                    - fetched
                        .iter()
                        .rev()
                        .take_while(|r| r.1.updated_at == last)
                        .count()
            };
            self.pending = fetched.split_off(complete);
            let mut run_start = 0;
            for i in 1..=fetched.len() {
                if i == fetched.len() || fetched[i].1.updated_at != fetched[run_start].1.updated_at
                {
                    out.extend(fetched[run_start..i].iter().rev());
                    run_start = i;
                }
            }
            if complete > 0 {
                return;
            }
        }
    }

    /// At most `BATCH` ids.
    fn lookup(&self, ids: impl Iterator<Item = AccountId>, out: &mut Vec<(AccountId, Record)>) {
        let t = self.t;
        let batch = RecordBatch::look_up(self.g, ids.map(|f| (f, t)));
        // Every follower in the index has a record of T.
        out.extend(
            batch
                .pairs()
                .zip(batch.records())
                .filter_map(|(&(f, _), r)| Some((f, (*r)?))),
        );
    }
}

/// The records of up to `BATCH` (follower, target) pairs, looked up
/// together on the stack (see `Graph::records`): no allocation a page.
pub struct RecordBatch {
    pairs: [(AccountId, AccountId); BATCH],
    records: [Option<Record>; BATCH],
    len: usize,
}

impl RecordBatch {
    /// The first `BATCH` of `pairs`.
    #[inline]
    pub fn look_up(g: &Graph, pairs: impl Iterator<Item = (AccountId, AccountId)>) -> RecordBatch {
        let mut batch = RecordBatch {
            pairs: [(0, 0); BATCH],
            records: [None; BATCH],
            len: 0,
        };
        for (slot, pair) in batch.pairs.iter_mut().zip(pairs) {
            *slot = pair;
            batch.len += 1;
        }
        g.records_into(&batch.pairs[..batch.len], &mut batch.records[..batch.len]);
        batch
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn pairs(&self) -> std::slice::Iter<'_, (AccountId, AccountId)> {
        self.pairs[..self.len].iter()
    }

    pub fn records(&self) -> std::slice::Iter<'_, Option<Record>> {
        self.records[..self.len].iter()
    }
}

/// A page of T's followers in `sort` order that pass `filter`, each with
/// its record of T.
pub fn followers_page(
    g: &Graph,
    t: AccountId,
    sort: FollowerSort,
    filter: &RecordFilter,
    offset: usize,
    limit: usize,
) -> Vec<(AccountId, Record)> {
    let filtered = filter.filters();
    let mut candidates = FollowerCandidates::new(g, t, sort);
    let skip = if filtered {
        offset
    } else {
        candidates.skip_unfiltered(offset)
    };
    let mut page = PageFill::new(skip, limit, BATCH);
    let mut batch = Vec::with_capacity(BATCH);
    while !page.is_full() {
        batch.clear();
        // Unfiltered, exactly the rows still missing are fetched.
        let want = if filtered {
            BATCH
        } else {
            page.wanted().min(BATCH)
        };
        candidates.next_batch(want, &mut batch);
        if batch.is_empty() {
            break;
        }
        for &(f, r) in &batch {
            if filter.keep(g, r.tagset) && page.offer((f, r)) {
                break;
            }
        }
    }
    page.rows
}

/// 21, 22: the page of T's followers newest first (blocked and muted ones
/// kept): the prepared order sliced.
pub fn latest_page(g: &Graph, t: AccountId, offset: usize, limit: usize) -> &[AccountId] {
    let order = g.followers_latest(t);
    let start = offset.min(order.len());
    &order[start..start + limit.min(order.len() - start)]
}
