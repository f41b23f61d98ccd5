//! Sections 15-18, 27 and 28: the records of an account's primary list
//! (`/users/{a}/following`, `allFollowing`) or of a list's own records
//! (`/lists/{id}/following`, `allFollowing`, `allFollowingAddresses`,
//! `/exportState/{id}`), as following entries.
//!
//! The pages themselves are `graph::query::following`'s.

use crate::error::ApiError;
use crate::graph::query::{following_page, newest_first, Exclude, RecordFilter};
use crate::graph::{AccountId, Graph, RecordRow};
use crate::json::push_key;

use super::followers::FollowerParams;
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
    let indexes = RecordFilter::new(g, &page.tags, exclude).map_or_else(Vec::new, |filter| {
        following_page(g, &row, page.sort, &filter, page.offset, page.limit)
    });
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

/// 27: the addresses of every record, as a top-level array.
pub fn render_addresses(g: &Graph, row: RecordRow<'_>, out: &mut String) {
    out.push('[');
    for (n, i) in newest_first(g, &row).into_iter().enumerate() {
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
    for (n, i) in newest_first(g, &row).into_iter().enumerate() {
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
