//! A record row's page (15-18): the records that pass the filters, keyed
//! by the requested order, the first `offset + limit` of them selected
//! (O(n) on average), then only those sorted: a bounded selection, not a
//! sort of the whole row. And the row's every record newest first (27,
//! 28): O(n log n).

use std::cmp::Reverse;

use super::{FollowerSort, RecordFilter};
use crate::graph::{Graph, RecordRow};

/// The indexes into `row` of the page: the records `filter` keeps, in
/// `sort` order, from `offset`, `limit` long.
pub fn following_page(
    g: &Graph,
    row: &RecordRow<'_>,
    sort: FollowerSort,
    filter: &RecordFilter,
    offset: usize,
    limit: usize,
) -> Vec<usize> {
    if limit == 0 {
        return Vec::new();
    }
    let kept = (0..row.len()).filter(|&i| filter.keep(g, row.tagset(i)));
    match sort {
        FollowerSort::Latest => first(kept, offset, limit, |i| {
            (Reverse(row.times[i]), g.order_key(row.targets[i]))
        }),
        FollowerSort::Earliest => first(kept, offset, limit, |i| {
            (row.times[i], g.order_key(row.targets[i]))
        }),
        FollowerSort::Followers => first(kept, offset, limit, |i| {
            let t = row.targets[i];
            (Reverse(g.compacted_followers_count(t)), g.order_key(t))
        }),
    }
}

/// The indexes of `kept` ordered by `key`, then the page of them from
/// `offset`, `limit` long: a selection of the first `offset + limit`,
/// only they sorted.
fn first<K: Ord>(
    kept: impl Iterator<Item = usize>,
    offset: usize,
    limit: usize,
    key: impl Fn(usize) -> K,
) -> Vec<usize> {
    let mut keyed: Vec<(K, usize)> = kept.map(|i| (key(i), i)).collect();
    let end = offset.saturating_add(limit).min(keyed.len());
    if offset >= end {
        return Vec::new();
    }
    if end < keyed.len() {
        keyed.select_nth_unstable_by(end - 1, |a, b| a.0.cmp(&b.0));
        keyed.truncate(end);
    }
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    keyed[offset..].iter().map(|&(_, i)| i).collect()
}

/// Every record of `row`, `updated_at` descending then address ascending
/// (the order of 27 and 28).
pub fn newest_first(g: &Graph, row: &RecordRow<'_>) -> Vec<usize> {
    let mut all: Vec<usize> = (0..row.len()).collect();
    all.sort_unstable_by_key(|&i| (Reverse(row.times[i]), g.order_key(row.targets[i])));
    all
}
