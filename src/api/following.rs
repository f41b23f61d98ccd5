//! Sections 15-18, 27 and 28: the records of an account's primary list
//! (`/users/{a}/following`, `allFollowing`) or of a list's own records
//! (`/lists/{id}/following`, `allFollowing`, `allFollowingAddresses`,
//! `/exportState/{id}`), as following entries.
//!
//! A page is a bounded selection, not a sort of the whole list: the
//! records that pass the filters are keyed by the requested order and the
//! first `offset + limit` of them selected (O(n) on average), then only
//! those sorted. A state lookup in a list is a binary search of its row
//! (targets ascending).

use std::cmp::Reverse;

use crate::error::ApiError;
use crate::graph::{AccountId, Graph, RecordRow, FLAG_BLOCK, FLAG_MUTE};
use crate::json::push_key;

use super::followers::{Exclude, FollowerParams, FollowerSort};
use super::query_string::{trim, Query};
use super::rows::{push_address, push_ens, push_short_ens, push_tagset};

/// `include` values, as bits (all part of the cache key; only `ens`
/// changes the body).
pub const INCLUDE_ENS: u8 = 1;
const INCLUDE_NAMES: [&str; 4] = ["ens", "mutuals", "blocked", "muted"];

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FollowingParams {
    /// limit, offset, tags and sort, read as for followers.
    pub page: FollowerParams,
    /// The `include` values asked for, one bit each (`INCLUDE_NAMES`).
    pub include: u8,
}

impl FollowingParams {
    /// Parameters in table order: limit, offset, tags, sort, include.
    /// Every `include` counts, each split on commas.
    pub fn parse(q: &Query<'_>, max_limit: u64) -> Result<FollowingParams, ApiError> {
        let page = FollowerParams::parse(q, max_limit)?;
        let mut include = 0;
        for value in q.texts("include")? {
            for segment in value.split(',').map(trim).filter(|s| !s.is_empty()) {
                let Some(bit) = INCLUDE_NAMES.iter().position(|&n| n == segment) else {
                    return Err(ApiError::BadParameter(format!(
                        "include must be ens, mutuals, blocked or muted (comma-separated), not {segment:?}"
                    )));
                };
                include |= 1 << bit;
            }
        }
        Ok(FollowingParams { page, include })
    }

    pub fn heap_bytes(&self) -> usize {
        self.page.heap_bytes()
    }
}

/// 15-18: a page of `row`'s records.
pub fn render(
    g: &Graph,
    row: RecordRow<'_>,
    p: &FollowingParams,
    exclude: Exclude,
    out: &mut String,
) {
    out.push_str("{\"following\":[");
    let page = &p.page;
    let wanted: Vec<u32> = page.tags.iter().filter_map(|t| g.tag_id(t)).collect();
    if (!page.tags.is_empty() && wanted.is_empty()) || page.limit == 0 {
        out.push_str("]}");
        return;
    }
    let keep = |set: u32| {
        let hidden = g.tagset_flags(set) & (FLAG_BLOCK | FLAG_MUTE) != 0;
        !(exclude == Exclude::BlockedOrMuted && hidden)
            && (wanted.is_empty() || g.tagset(set).iter().any(|t| wanted.contains(t)))
    };
    let kept = (0..row.len()).filter(|&i| keep(row.tagset(i)));
    let indexes = match page.sort {
        FollowerSort::Latest => first(kept, page, |i| (Reverse(row.times[i]), row.targets[i])),
        FollowerSort::Earliest => first(kept, page, |i| (row.times[i], row.targets[i])),
        FollowerSort::Followers => first(kept, page, |i| {
            let t = row.targets[i];
            (Reverse(g.followers_count(t)), t)
        }),
    };
    let ens = if p.include & INCLUDE_ENS != 0 {
        EntryEns::Full
    } else {
        EntryEns::None
    };
    for (n, &i) in indexes.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        push_entry(g, &row, i, ens, out);
    }
    out.push_str("]}");
}

/// The indexes of `kept` ordered by `key`, then the page of them from
/// `offset`, `limit` long: a selection of the first `offset + limit`,
/// only they sorted.
fn first<K: Ord>(
    kept: impl Iterator<Item = usize>,
    page: &FollowerParams,
    key: impl Fn(usize) -> K,
) -> Vec<usize> {
    let mut keyed: Vec<(K, usize)> = kept.map(|i| (key(i), i)).collect();
    let end = page.offset.saturating_add(page.limit).min(keyed.len());
    if page.offset >= end {
        return Vec::new();
    }
    if end < keyed.len() {
        keyed.select_nth_unstable_by(end - 1, |a, b| a.0.cmp(&b.0));
        keyed.truncate(end);
    }
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    keyed[page.offset..].iter().map(|&(_, i)| i).collect()
}

/// Every record of `row`, `updated_at` descending then address ascending
/// (the order of 27 and 28).
fn newest_first(row: &RecordRow<'_>) -> Vec<usize> {
    let mut all: Vec<usize> = (0..row.len()).collect();
    all.sort_unstable_by_key(|&i| (Reverse(row.times[i]), row.targets[i]));
    all
}

/// 27: the addresses of every record, as a top-level array.
pub fn render_addresses(g: &Graph, row: RecordRow<'_>, out: &mut String) {
    out.push('[');
    for (n, i) in newest_first(&row).into_iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        push_address(out, g.address(row.targets[i]));
    }
    out.push(']');
}

/// 28: a following entry for every record, in 27's order.
pub fn render_export(g: &Graph, row: RecordRow<'_>, out: &mut String) {
    out.push_str("{\"following\":[");
    for (n, i) in newest_first(&row).into_iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        push_entry(g, &row, i, EntryEns::None, out);
    }
    out.push_str("]}");
}

/// What ends a following entry: nothing, the ens object (`include=ens`)
/// or the short ens (25, 26).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum EntryEns {
    None,
    Full,
    Short,
}

/// A following entry: `{"version":1,"record_type":"address","data",
/// "address","tags"}`, then `"ens"` as `ens` says.
pub fn push_entry(g: &Graph, row: &RecordRow<'_>, i: usize, ens: EntryEns, out: &mut String) {
    let t: AccountId = row.targets[i];
    out.push_str("{\"version\":1,\"record_type\":\"address\",");
    push_key(out, "data");
    push_address(out, g.address(t));
    out.push(',');
    push_key(out, "address");
    push_address(out, g.address(t));
    out.push(',');
    push_key(out, "tags");
    push_tagset(out, g, row.tagset(i));
    if ens != EntryEns::None {
        out.push(',');
        push_key(out, "ens");
        if ens == EntryEns::Full {
            push_ens(out, g.profile(t));
        } else {
            push_short_ens(out, g.profile(t));
        }
    }
    out.push('}');
}
