//! Sections 6 and 7, `/users/{addressOrENS}/followers` and
//! `/lists/{token_id}/followers`: T's followers in the requested order,
//! paged, with a tag filter; 19 and 20 (`allFollowers`: 6's membership
//! for both, the same renderer) and 21, 22 (`latestFollowers`: a slice of
//! the prepared newest-first order with three fields a follower).

use crate::error::ApiError;
use crate::graph::{AccountId, Graph, Record, FLAG_BLOCK, FLAG_MUTE};

use super::query_string::{keyword, trim, Query};
use super::rows::{push_address, push_follower, push_time};
use crate::json::{push_key, push_num_str};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FollowerSort {
    Latest,
    Earliest,
    Followers,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FollowerParams {
    /// Tags to keep (any of them), sorted and de-duplicated; empty: no filter.
    pub tags: Vec<String>,
    pub sort: FollowerSort,
    pub limit: usize,
    pub offset: usize,
}

impl FollowerParams {
    /// Parameters in table order: limit, offset, tags, sort.
    pub fn parse(q: &Query<'_>, max_limit: u64) -> Result<FollowerParams, ApiError> {
        let limit = q.limit(10, max_limit)?;
        let offset = q.offset()?;
        let mut tags: Vec<String> = q
            .text("tags")?
            .unwrap_or("")
            .split(',')
            .map(trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect();
        tags.sort_unstable();
        tags.dedup();
        let sort = keyword(
            q.text("sort")?.unwrap_or(""),
            &[
                ("earliest", FollowerSort::Earliest),
                ("followers", FollowerSort::Followers),
            ],
            FollowerSort::Latest,
        );
        Ok(FollowerParams {
            tags,
            sort,
            limit,
            offset,
        })
    }

    pub fn heap_bytes(&self) -> usize {
        self.tags.iter().map(|t| t.len() + 24).sum()
    }
}

/// 21, 22: `limit` (default 10) and `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LatestParams {
    pub limit: usize,
    pub offset: usize,
}

impl LatestParams {
    pub fn parse(q: &Query<'_>, max_limit: u64) -> Result<LatestParams, ApiError> {
        Ok(LatestParams {
            limit: q.limit(10, max_limit)?,
            offset: q.offset()?,
        })
    }
}

/// Who of T's followers a variant leaves out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exclude {
    /// 6: nobody.
    Nobody,
    /// 7: followers whose record of T carries `block` or `mute`.
    BlockedOrMuted,
}

/// How many followers are looked up together (see `Graph::records`): a
/// page of 10 plus a little filtering in one batch.
pub(super) const BATCH: usize = 16;

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
pub(super) struct RecordBatch {
    pairs: [(AccountId, AccountId); BATCH],
    records: [Option<Record>; BATCH],
    len: usize,
}

impl RecordBatch {
    /// The first `BATCH` of `pairs`.
    #[inline]
    pub(super) fn look_up(
        g: &Graph,
        pairs: impl Iterator<Item = (AccountId, AccountId)>,
    ) -> RecordBatch {
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

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(super) fn pairs(&self) -> std::slice::Iter<'_, (AccountId, AccountId)> {
        self.pairs[..self.len].iter()
    }

    pub(super) fn records(&self) -> std::slice::Iter<'_, Option<Record>> {
        self.records[..self.len].iter()
    }
}

/// Writes a page of T's followers (each with its record of T),
/// comma-separated, by `entry`, which also gets T's record of the
/// follower (the is_* flags): those are looked up a batch at a time, and
/// the batch's accounts asked for before any is written.
pub(super) fn push_page(
    g: &Graph,
    t: AccountId,
    page: &[(AccountId, Record)],
    out: &mut String,
    mut entry: impl FnMut(&mut String, AccountId, &Record, Option<&Record>),
) {
    for (c, chunk) in page.chunks(BATCH).enumerate() {
        let back = RecordBatch::look_up(g, chunk.iter().map(|&(f, _)| (t, f)));
        g.prefetch_accounts(chunk.iter().map(|&(f, _)| f));
        for (i, ((f, record), back)) in chunk.iter().zip(back.records()).enumerate() {
            if c + i > 0 {
                out.push(',');
            }
            entry(out, *f, record, back.as_ref());
        }
    }
}

/// `t`: the account, or the list's user; `None` (no data) has no
/// followers.
pub fn render(
    g: &Graph,
    t: Option<AccountId>,
    p: &FollowerParams,
    exclude: Exclude,
    out: &mut String,
) {
    out.push_str("{\"followers\":[");
    let Some(t) = t else {
        out.push_str("]}");
        return;
    };
    let wanted: Vec<u32> = p.tags.iter().filter_map(|tag| g.tag_id(tag)).collect();
    if !p.tags.is_empty() && wanted.is_empty() {
        out.push_str("]}");
        return;
    }
    let exclude_blocked_muted = exclude == Exclude::BlockedOrMuted;
    let keep = |r: &Record| {
        let flags = g.tagset_flags(r.tagset);
        !(exclude_blocked_muted && flags & (FLAG_BLOCK | FLAG_MUTE) != 0)
            && (wanted.is_empty() || g.tagset(r.tagset).iter().any(|tag| wanted.contains(tag)))
    };
    let filtered = exclude_blocked_muted || !wanted.is_empty();
    let mut candidates = FollowerCandidates::new(g, t, p.sort);
    let mut skip = if filtered {
        p.offset
    } else {
        candidates.skip_unfiltered(p.offset)
    };
    let mut rows: Vec<(AccountId, Record)> = Vec::with_capacity(p.limit.min(BATCH));
    let mut batch = Vec::with_capacity(BATCH);
    while rows.len() < p.limit {
        batch.clear();
        // Unfiltered, exactly the rows still missing are fetched.
        let want = if filtered || skip > 0 {
            BATCH
        } else {
            p.limit - rows.len()
        };
        candidates.next_batch(want, &mut batch);
        if batch.is_empty() {
            break;
        }
        for &(f, r) in &batch {
            if !keep(&r) {
                continue;
            }
            if skip > 0 {
                skip -= 1;
                continue;
            }
            rows.push((f, r));
            if rows.len() == p.limit {
                break;
            }
        }
    }
    push_page(g, t, &rows, out, |out, f, record, back| {
        push_follower(out, g, f, record, back)
    });
    out.push_str("]}");
}

/// 21, 22: a page of T's followers newest first (blocked and muted ones
/// kept): the prepared order sliced, then only the page's records read.
pub fn render_latest(g: &Graph, t: Option<AccountId>, p: &LatestParams, out: &mut String) {
    out.push_str("{\"followers\":[");
    let order = t.map_or(&[][..], |t| g.followers_latest(t));
    let start = p.offset.min(order.len());
    let page = &order[start..start + p.limit.min(order.len() - start)];
    let Some(t) = t else {
        out.push_str("]}");
        return;
    };
    for (c, chunk) in page.chunks(BATCH).enumerate() {
        g.prefetch_addresses(chunk.iter().copied());
        let records = RecordBatch::look_up(g, chunk.iter().map(|&f| (f, t)));
        for (i, (&f, record)) in chunk.iter().zip(records.records()).enumerate() {
            if c + i > 0 {
                out.push(',');
            }
            out.push('{');
            push_key(out, "address");
            push_address(out, g.address(f));
            out.push(',');
            push_key(out, "svc_list_nft_token_id");
            push_num_str(out, g.primary_list(f).unwrap_or(0));
            out.push(',');
            push_key(out, "updated_at");
            // Every follower in the index has a record of T.
            push_time(out, record.map_or(0, |r| r.updated_at));
            out.push('}');
        }
    }
    out.push_str("]}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(query: &str) -> Result<FollowerParams, ApiError> {
        FollowerParams::parse(&Query::parse(query), 1000)
    }

    #[test]
    fn numbers_defaults_and_errors() {
        assert_eq!(
            parse("limit=&offset=007&limit=3").unwrap(),
            FollowerParams {
                tags: vec![],
                sort: FollowerSort::Latest,
                limit: 10,
                offset: 7
            }
        );
        for (q, msg) in [
            ("limit=-1", "limit must be a non-negative integer"),
            ("limit=1e3", "limit must be a non-negative integer"),
            ("limit=%201", "limit must be a non-negative integer"),
            (
                "limit=18446744073709551616",
                "limit must be a non-negative integer",
            ),
            ("limit=1001", "limit must be at most 1000"),
            ("offset=x&limit=y", "limit must be a non-negative integer"),
            ("sort=%FF", "sort is not valid UTF-8"),
        ] {
            assert_eq!(parse(q), Err(ApiError::BadParameter(msg.into())), "{q}");
        }
    }

    #[test]
    fn tags_trimmed_sorted_deduplicated() {
        let p = parse("tags=b,+a+,,a&sort=EARLIEST").unwrap();
        assert_eq!(p.tags, vec!["a".to_owned(), "b".to_owned()]);
        assert_eq!(p.sort, FollowerSort::Earliest);
    }
}
