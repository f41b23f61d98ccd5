//! Tag counts of an answer (34-37): its (account, tag set) entries
//! tallied by tag set, then by distinct tag, and the records of a row
//! that carry one of the searched tags (35 with `include`).
//!
//! A hub's answer holds tens of thousands of entries over a few dozen tag
//! sets, so the entries are tallied by set ([`SetSlots`], a direct-mapped
//! cache in front of [`DistinctIds`]), and the distinct tags are counted
//! from the sets' counts: O(entries) with a cache hit each, plus
//! O(sets × tags a set) for the tags.

use std::ops::Range;

use crate::graph::{FastMap, Graph, RecordRow};

/// The tally of an answer's entries: its distinct tag sets and tags, each
/// tag's count (entries whose set holds it), and each set's tags as slots
/// of the distinct tags.
pub struct TagTally {
    sets: SetSlots,
    tags: DistinctIds,
    /// Set slot k's tags are `tag_slots[set_tags[k].clone()]`.
    tag_slots: Vec<u32>,
    set_tags: Vec<Range<usize>>,
}

impl TagTally {
    /// Tallies the tag sets of an answer's entries, in any order.
    pub fn of(g: &Graph, sets: impl Iterator<Item = u32>) -> TagTally {
        let mut slots = SetSlots::new();
        for set in sets {
            let slot = slots.slot(set);
            slots.distinct.counts[slot] += 1;
        }
        let mut tags = DistinctIds::default();
        let mut tag_slots: Vec<u32> = Vec::new();
        let mut set_tags: Vec<Range<usize>> = Vec::with_capacity(slots.distinct.ids.len());
        for (&set, &n) in slots.distinct.ids.iter().zip(&slots.distinct.counts) {
            let start = tag_slots.len();
            tag_slots.extend(g.tagset(set).iter().map(|&tag| tags.add_count(tag, n)));
            set_tags.push(start..tag_slots.len());
        }
        TagTally {
            sets: slots,
            tags,
            tag_slots,
            set_tags,
        }
    }

    /// The distinct tags' ids, by slot.
    pub fn tags(&self) -> &[u32] {
        &self.tags.ids
    }

    /// Each distinct tag's count, by slot.
    pub fn counts(&self) -> &[u64] {
        &self.tags.counts
    }

    /// The distinct tags' slots ordered by their text's bytes.
    pub fn by_text(&self, g: &Graph) -> Vec<usize> {
        let text = |tag: u32| g.tag_text(tag).as_bytes();
        let mut by_text: Vec<usize> = (0..self.tags.ids.len()).collect();
        by_text.sort_unstable_by(|&a, &b| text(self.tags.ids[a]).cmp(text(self.tags.ids[b])));
        by_text
    }

    /// The slots of the tags of `set`, a set of the tallied entries.
    #[inline]
    pub fn slots_of(&mut self, set: u32) -> &[u32] {
        let slot = self.sets.slot(set);
        &self.tag_slots[self.set_tags[slot].clone()]
    }
}

/// 35 with `include`: the records of `row` (address order) that carry at
/// least one of `tags`, as (index into the row, tag set).
pub fn tagged_with<'a>(
    g: &'a Graph,
    row: &'a RecordRow<'a>,
    tags: &[String],
) -> impl Iterator<Item = (usize, u32)> + 'a {
    let wanted: Vec<u32> = tags.iter().filter_map(|t| g.tag_id(t)).collect();
    row.tagged()
        .filter(move |&(_, set)| g.tagset(set).iter().any(|t| wanted.contains(t)))
}

/// The distinct tag sets of an answer (`distinct`), found through a
/// direct-mapped cache of (set, slot) before `DistinctIds`' own look-up:
/// a hub's entries change set every other entry, over a few dozen sets,
/// and a map probe per entry was a quarter of its answer's time.
struct SetSlots {
    cache: [(u32, u32); SET_CACHE],
    distinct: DistinctIds,
}

const SET_CACHE: usize = 256;

impl SetSlots {
    fn new() -> SetSlots {
        SetSlots {
            // No set has id u32::MAX (ids are indexes of a `Vec`).
            cache: [(u32::MAX, 0); SET_CACHE],
            distinct: DistinctIds::default(),
        }
    }

    /// `set`'s slot in `distinct`, added (with count 0) if new.
    #[inline(always)]
    fn slot(&mut self, set: u32) -> usize {
        let line = (set.wrapping_mul(0x9e37_79b9) >> 24) as usize % SET_CACHE;
        match self.cache[line] {
            (cached, slot) if cached == set => slot as usize,
            _ => self.miss(line, set),
        }
    }

    #[cold]
    #[inline(never)]
    fn miss(&mut self, line: usize, set: u32) -> usize {
        let slot = self.distinct.add_count(set, 0);
        self.cache[line] = (set, slot);
        slot as usize
    }
}

/// Distinct ids (tags, or tag sets) in first-seen order, with their
/// counts. An id is found by a look at the last one seen (entries run in
/// address order, mostly over one or two sets), then a scan while they
/// are few, then a map.
#[derive(Default)]
struct DistinctIds {
    ids: Vec<u32>,
    counts: Vec<u64>,
    last: usize,
    slots: FastMap<u32, usize>,
}

/// Distinct ids scanned before a map is built.
const SCANNED_IDS: usize = 16;

impl DistinctIds {
    /// Counts `id` `n` times; its slot in `ids` and `counts`.
    #[inline]
    fn add_count(&mut self, id: u32, n: u64) -> u32 {
        let slot = match self.find(id) {
            Some(slot) => slot,
            None => self.add(id),
        };
        self.last = slot;
        self.counts[slot] += n;
        slot as u32
    }

    #[inline]
    fn find(&self, id: u32) -> Option<usize> {
        if self.ids.get(self.last) == Some(&id) {
            Some(self.last)
        } else if self.ids.len() <= SCANNED_IDS {
            self.ids.iter().position(|&t| t == id)
        } else {
            self.slots.get(&id).copied()
        }
    }

    fn add(&mut self, id: u32) -> usize {
        let slot = self.ids.len();
        self.ids.push(id);
        self.counts.push(0);
        if self.ids.len() > SCANNED_IDS {
            if self.slots.is_empty() {
                self.slots
                    .extend(self.ids.iter().enumerate().map(|(i, &t)| (t, i)));
            } else {
                self.slots.insert(id, slot);
            }
        }
        slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_tags_count_past_the_scanned_few() {
        let mut distinct = DistinctIds::default();
        // 40 distinct tags, interleaved, so the map takes over after 16.
        let stream: Vec<u32> = (0..400u32).map(|i| (i * 7) % 40 + 1000).collect();
        let slots: Vec<u32> = stream.iter().map(|&t| distinct.add_count(t, 1)).collect();
        for (&tag, &slot) in stream.iter().zip(&slots) {
            assert_eq!(distinct.ids[slot as usize], tag);
        }
        assert_eq!(distinct.ids.len(), 40);
        assert!(distinct.counts.iter().all(|&n| n == 10));
        let mut seen = distinct.ids.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 40);
    }
}
