//! Sections 34-37: the tags of a list's records (`/users/{a}/tags`: the
//! account's primary list; `/lists/{id}/tags`: the list's own records,
//! with an `include` filter) and the tags an account's followers put on it
//! (`taggedAs`). Tags are few per list and per account, so each answer
//! reads only tagged records: the row's side-table entries, or the
//! account's entries in the tagged-by index.

use crate::error::ApiError;
use crate::graph::query::{tagged_with, TagTally};
use crate::graph::{AccountId, Graph, RecordRow};
use crate::json::{
    address_literal, push_key, push_num, push_num_str, push_str, Ascii, ADDRESS_LITERAL,
};
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
    let entries = || {
        row.tagged()
            .map(|(i, set)| (g.address(row.targets[i]), set))
    };
    push_pairs(g, &subject, entries, out);
}

/// 36, 37: every (follower, tag of its record of `t`) pair.
pub fn render_tagged_as(g: &Graph, subject: Subject<'_>, t: Option<AccountId>, out: &mut String) {
    match t {
        Some(t) => push_pairs(g, &subject, || g.tagged_by(t), out),
        None => push_pairs(g, &subject, std::iter::empty, out),
    }
}

/// `{subject, "tags", "tagCounts", "taggedAddresses"}` of the (account,
/// tag set) entries `entries()` yields, in their order (address, then a
/// set's tags by bytes: rows and the tagged-by index are by address, a
/// tag set's tags by bytes). A hub's answer holds tens of thousands of
/// entries over a few dozen tag sets, so the entries are read twice
/// rather than collected: once to tally them ([`TagTally`]: by set, then
/// the distinct tags from the sets' counts), the tags sorted by bytes,
/// and each pair is written straight into the body, reserved whole once
/// (see [`PairWriter`]).
fn push_pairs<'g, I>(g: &'g Graph, subject: &Subject<'_>, entries: impl Fn() -> I, out: &mut String)
where
    I: Iterator<Item = (&'g Address, u32)>,
{
    debug_assert!({
        let text = |tag: u32| g.tag_text(tag).as_bytes();
        let pairs: Vec<(&Address, &[u8])> = entries()
            .flat_map(|(a, set)| g.tagset(set).iter().map(move |&t| (a, text(t))))
            .collect();
        pairs.windows(2).all(|w| w[0] < w[1])
    });
    let mut tally = TagTally::of(g, entries().map(|(_, set)| set));
    let by_text = tally.by_text(g);
    // Each distinct tag as a JSON string, once: for `tags`, `tagCounts`
    // and every pair's `,"tag":…}`.
    let quoted: Vec<String> = tally
        .tags()
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
        push_num(out, tally.counts()[slot]);
        out.push('}');
    }
    out.push_str("],\"taggedAddresses\":[");
    let endings: Vec<Ending> = quoted.iter().map(|q| Ending::new(q)).collect();
    let bytes: u64 = endings
        .iter()
        .zip(tally.counts())
        .map(|(ending, &n)| (PAIR_HEAD.len() + ADDRESS_LITERAL + ending.text.len()) as u64 * n)
        .sum();
    let mut writer = PairWriter::new(out, usize::try_from(bytes).unwrap_or(usize::MAX));
    let (mut last_set, mut slots): (Option<u32>, &[u32]) = (None, &[]);
    for (address, set) in entries() {
        if last_set != Some(set) {
            last_set = Some(set);
            slots = tally.slots_of(set);
        }
        let literal = address_literal(address);
        for &slot in slots {
            writer.push(&literal, &endings[slot as usize]);
        }
    }
    writer.finish();
    out.push_str("]}");
}

/// `{"address":` before an address's literal.
const PAIR_HEAD: &[u8; 11] = b"{\"address\":";
/// Bytes of an ending copied whole (the bytes past its length are
/// overwritten by the next pair).
const ENDING_COPY: usize = 32;

/// A tag's `,"tag":…},` after a pair's address, padded to `ENDING_COPY`
/// bytes when it fits (nearly every tag), so that it is copied as one
/// fixed-size move rather than a `memcpy` call of its length.
struct Ending {
    text: String,
    padded: Option<[u8; ENDING_COPY]>,
}

impl Ending {
    fn new(quoted: &str) -> Ending {
        let text = format!(",\"tag\":{quoted}}},");
        let padded = (text.len() <= ENDING_COPY).then(|| {
            let mut p = [b' '; ENDING_COPY];
            p[..text.len()].copy_from_slice(text.as_bytes());
            p
        });
        Ending { text, padded }
    }
}

/// Writes pairs `{"address":…,"tag":…},` into a body reserved for all of
/// them, with fixed-size copies; `finish` drops the last comma.
struct PairWriter<'a> {
    out: &'a mut Vec<u8>,
    written: bool,
}

/// Reserved past the pairs' own bytes: what the last `PairWriter::push`
/// asks to have free (its whole copies), and the answer's closing `]}`.
/// Short of it, the last pair or the close would grow the body by
/// doubling: a copy of the whole answer.
const PAIR_SLACK: usize = PAIR_HEAD.len() + ADDRESS_LITERAL + ENDING_COPY + 2;

impl<'a> PairWriter<'a> {
    fn new(out: &'a mut String, bytes: usize) -> PairWriter<'a> {
        // SAFETY: only whole pairs of ASCII and of a JSON string's UTF-8
        // are appended (see `push`), so `out` stays valid UTF-8.
        let out = unsafe { out.as_mut_vec() };
        out.reserve(bytes.saturating_add(PAIR_SLACK));
        PairWriter {
            out,
            written: false,
        }
    }

    #[inline]
    fn push(&mut self, literal: &Ascii<ADDRESS_LITERAL>, ending: &Ending) {
        const HEAD: usize = PAIR_HEAD.len();
        let Some(padded) = &ending.padded else {
            self.out.extend_from_slice(PAIR_HEAD);
            self.out.extend_from_slice(literal.as_bytes());
            self.out.extend_from_slice(ending.text.as_bytes());
            self.written = true;
            return;
        };
        // The reserve counted every pair; this only guards the writes.
        self.out.reserve(HEAD + ADDRESS_LITERAL + ENDING_COPY);
        let len = self.out.len();
        // SAFETY: `reserve` left room past `len` for the three copies,
        // which are all written before `set_len` covers their first
        // HEAD + ADDRESS_LITERAL + ending.text.len() bytes (at most
        // ENDING_COPY of them the ending's: it was padded).
        unsafe {
            let dst = self.out.as_mut_ptr().add(len);
            std::ptr::copy_nonoverlapping(PAIR_HEAD.as_ptr(), dst, HEAD);
            std::ptr::copy_nonoverlapping(
                literal.as_bytes().as_ptr(),
                dst.add(HEAD),
                ADDRESS_LITERAL,
            );
            std::ptr::copy_nonoverlapping(
                padded.as_ptr(),
                dst.add(HEAD + ADDRESS_LITERAL),
                ENDING_COPY,
            );
            self.out
                .set_len(len + HEAD + ADDRESS_LITERAL + ending.text.len());
        }
        self.written = true;
    }

    /// Drops the comma after the last pair.
    fn finish(self) {
        if self.written {
            self.out.pop();
        }
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
    for (n, (i, set)) in tagged_with(g, &row, &search.tags).enumerate() {
        if n > 0 {
            out.push(',');
        }
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
