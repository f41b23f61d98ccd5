//! Sections 34-37: the tags of a list's records (`/users/{a}/tags`: the
//! account's primary list; `/lists/{id}/tags`: the list's own records,
//! with an `include` filter) and the tags an account's followers put on it
//! (`taggedAs`). Tags are few per list and per account, so each answer
//! reads only tagged records: the row's side-table entries, or the
//! account's entries in the tagged-by index.

use crate::error::ApiError;
use crate::graph::{AccountId, FastMap, Graph, RecordRow};
use crate::json::{push_key, push_num, push_num_str, push_str};
use crate::snapshot::Address;

use super::query_string::{trim, Query};
use super::rows::{push_address, push_tagset};
use super::subject::Account;

/// Who an answer is about: an account (`"address"`) or a list
/// (`"token_id"`).
pub enum Subject<'a> {
    Account(&'a Account),
    List(u64),
}

/// 35's `include`: tags to search, in the order given, without repeats.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TagSearch {
    pub tags: Vec<String>,
}

impl TagSearch {
    /// The first `include`, comma-separated, segments trimmed, empty ones
    /// dropped.
    pub fn parse(q: &Query<'_>) -> Result<TagSearch, ApiError> {
        let mut tags: Vec<String> = Vec::new();
        for segment in q.text("include")?.unwrap_or("").split(',').map(trim) {
            if !segment.is_empty() && !tags.iter().any(|t| t == segment) {
                tags.push(segment.to_owned());
            }
        }
        Ok(TagSearch { tags })
    }

    pub fn heap_bytes(&self) -> usize {
        self.tags.iter().map(|t| t.len() + 24).sum()
    }
}

fn push_subject(subject: &Subject<'_>, out: &mut String) {
    match subject {
        Subject::Account(a) => {
            push_key(out, "address");
            push_address(out, &a.address);
        }
        Subject::List(token_id) => {
            push_key(out, "token_id");
            push_num_str(out, *token_id);
        }
    }
}

/// 34, 35 (without `include`): every (record, tag) pair of `row`.
pub fn render_tags(g: &Graph, subject: Subject<'_>, row: RecordRow<'_>, out: &mut String) {
    let pairs = row
        .tagged()
        .flat_map(|(i, set)| {
            let address = g.address(row.targets[i]);
            g.tagset(set).iter().map(move |&tag| (address, tag))
        })
        .collect();
    push_pairs(g, &subject, pairs, out);
}

/// 36, 37: every (follower, tag of its record of `t`) pair.
pub fn render_tagged_as(g: &Graph, subject: Subject<'_>, t: Option<AccountId>, out: &mut String) {
    let pairs = match t {
        Some(t) => g
            .tagged_by(t)
            .flat_map(|(address, set)| g.tagset(set).iter().map(move |&tag| (address, tag)))
            .collect(),
        None => Vec::new(),
    };
    push_pairs(g, &subject, pairs, out);
}

/// `{subject, "tags", "tagCounts", "taggedAddresses"}` of (account, tag)
/// pairs given in their order (address, then tag bytes: rows and the
/// tagged-by index are by address, a tag set's tags by bytes): tags
/// counted by id, then only the distinct ones sorted by bytes.
fn push_pairs(g: &Graph, subject: &Subject<'_>, pairs: Vec<(&Address, u32)>, out: &mut String) {
    let text = |tag: u32| g.tag_text(tag).as_bytes();
    debug_assert!(pairs
        .windows(2)
        .all(|w| (w[0].0, text(w[0].1)) < (w[1].0, text(w[1].1))));
    let mut by_tag: FastMap<u32, u64> = FastMap::default();
    for &(_, tag) in &pairs {
        *by_tag.entry(tag).or_insert(0) += 1;
    }
    let mut counts: Vec<(u32, u64)> = by_tag.into_iter().collect();
    counts.sort_unstable_by(|a, b| text(a.0).cmp(text(b.0)));
    out.push('{');
    push_subject(subject, out);
    out.push_str(",\"tags\":[");
    for (i, &(tag, _)) in counts.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_str(out, g.tag_text(tag));
    }
    out.push_str("],\"tagCounts\":[");
    for (i, &(tag, n)) in counts.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        push_key(out, "tag");
        push_str(out, g.tag_text(tag));
        out.push(',');
        push_key(out, "count");
        push_num(out, n);
        out.push('}');
    }
    out.push_str("],\"taggedAddresses\":[");
    out.reserve(pairs.len() * 72);
    for (i, &(address, tag)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"address\":");
        push_address(out, address);
        out.push_str(",\"tag\":");
        push_str(out, g.tag_text(tag));
        out.push('}');
    }
    out.push_str("]}");
}

/// 35 with `include`: the records carrying at least one of the tags
/// searched, address ascending, each with all its tags.
pub fn render_tag_search(
    g: &Graph,
    token_id: u64,
    row: RecordRow<'_>,
    search: &TagSearch,
    out: &mut String,
) {
    let wanted: Vec<u32> = search.tags.iter().filter_map(|t| g.tag_id(t)).collect();
    out.push('{');
    push_key(out, "token_id");
    push_num_str(out, token_id);
    out.push_str(",\"tagsToSearch\":[");
    for (i, tag) in search.tags.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_str(out, tag);
    }
    out.push_str("],\"taggedAddresses\":[");
    let mut n = 0;
    // Row order is address order.
    for (i, set) in row.tagged() {
        let tags = g.tagset(set);
        if !tags.iter().any(|t| wanted.contains(t)) {
            continue;
        }
        if n > 0 {
            out.push(',');
        }
        n += 1;
        out.push('{');
        push_key(out, "address");
        push_address(out, g.address(row.targets[i]));
        out.push(',');
        push_key(out, "tags");
        push_tagset(out, g, set);
        out.push('}');
    }
    out.push_str("]}");
}
