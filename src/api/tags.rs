//! Sections 34-37: the tags of a list's records (`/users/{a}/tags`: the
//! account's primary list; `/lists/{id}/tags`: the list's own records,
//! with an `include` filter) and the tags an account's followers put on it
//! (`taggedAs`). Tags are few per list and per account, so each answer
//! reads only tagged records: the row's side-table entries, or the
//! account's entries in the tagged-by index.

use crate::error::ApiError;
use crate::graph::{AccountId, FastMap, Graph, RecordRow};
use crate::json::{address_literal, push_key, push_num, push_num_str, push_str, Ascii};
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
/// counted by id, then only the distinct ones sorted by bytes. A hub's
/// answer holds tens of thousands of pairs over a few tags, so each
/// distinct tag's `,"tag":…}` is written once and copied per pair.
fn push_pairs(g: &Graph, subject: &Subject<'_>, mut pairs: Vec<(&Address, u32)>, out: &mut String) {
    let text = |tag: u32| g.tag_text(tag).as_bytes();
    debug_assert!(pairs
        .windows(2)
        .all(|w| (w[0].0, text(w[0].1)) < (w[1].0, text(w[1].1))));
    let mut distinct = DistinctTags::default();
    for pair in &mut pairs {
        pair.1 = distinct.count(pair.1);
    }
    let mut by_text: Vec<usize> = (0..distinct.tags.len()).collect();
    by_text.sort_unstable_by(|&a, &b| text(distinct.tags[a]).cmp(text(distinct.tags[b])));
    // Each distinct tag as a JSON string, once: for `tags`, `tagCounts`
    // and every pair's `,"tag":…}`.
    let quoted: Vec<String> = distinct
        .tags
        .iter()
        .map(|&tag| {
            let mut q = String::new();
            push_str(&mut q, g.tag_text(tag));
            q
        })
        .collect();
    out.push('{');
    push_subject(subject, out);
    out.push_str(",\"tags\":[");
    for (i, &slot) in by_text.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&quoted[slot]);
    }
    out.push_str("],\"tagCounts\":[");
    for (i, &slot) in by_text.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"tag\":");
        out.push_str(&quoted[slot]);
        out.push(',');
        push_key(out, "count");
        push_num(out, distinct.counts[slot]);
        out.push('}');
    }
    out.push_str("],\"taggedAddresses\":[");
    let endings: Vec<String> = quoted.iter().map(|q| format!(",\"tag\":{q}}}")).collect();
    let ending_bytes: usize = endings
        .iter()
        .zip(&distinct.counts)
        .map(|(ending, &n)| ending.len() * n as usize)
        .sum();
    out.reserve(pairs.len() * Ascii::<56>::LEN + ending_bytes);
    let mut head = PAIR_HEAD;
    for (i, &(address, slot)) in pairs.iter().enumerate() {
        head.put(12, &address_literal(address));
        head.push_from(out, usize::from(i == 0));
        out.push_str(&endings[slot as usize]);
    }
    out.push_str("]}");
}

/// `,{"address":` and room for the address's literal.
const PAIR_HEAD: Ascii<56> = Ascii::padded(",{\"address\":");

/// The distinct tags of an answer in first-seen order, with their counts.
/// A tag is found by a look at the last one seen (pairs run in address
/// order, mostly over one or two tags), then a scan while they are few,
/// then a map.
#[derive(Default)]
struct DistinctTags {
    tags: Vec<u32>,
    counts: Vec<u64>,
    last: usize,
    slots: FastMap<u32, usize>,
}

/// Distinct tags scanned before a map is built.
const SCANNED_TAGS: usize = 16;

impl DistinctTags {
    /// Counts `tag` once; its slot in `tags` and `counts`.
    fn count(&mut self, tag: u32) -> u32 {
        let slot = if self.tags.get(self.last) == Some(&tag) {
            self.last
        } else if self.tags.len() <= SCANNED_TAGS {
            match self.tags.iter().position(|&t| t == tag) {
                Some(slot) => slot,
                None => self.add(tag),
            }
        } else {
            match self.slots.get(&tag) {
                Some(&slot) => slot,
                None => self.add(tag),
            }
        };
        self.last = slot;
        self.counts[slot] += 1;
        slot as u32
    }

    fn add(&mut self, tag: u32) -> usize {
        let slot = self.tags.len();
        self.tags.push(tag);
        self.counts.push(0);
        if self.tags.len() > SCANNED_TAGS {
            if self.slots.is_empty() {
                self.slots
                    .extend(self.tags.iter().enumerate().map(|(i, &t)| (t, i)));
            } else {
                self.slots.insert(tag, slot);
            }
        }
        slot
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_tags_count_past_the_scanned_few() {
        let mut distinct = DistinctTags::default();
        // 40 distinct tags, interleaved, so the map takes over after 16.
        let stream: Vec<u32> = (0..400u32).map(|i| (i * 7) % 40 + 1000).collect();
        let slots: Vec<u32> = stream.iter().map(|&t| distinct.count(t)).collect();
        for (&tag, &slot) in stream.iter().zip(&slots) {
            assert_eq!(distinct.tags[slot as usize], tag);
        }
        assert_eq!(distinct.tags.len(), 40);
        assert!(distinct.counts.iter().all(|&n| n == 10));
        let mut seen = distinct.tags.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 40);
    }
}
