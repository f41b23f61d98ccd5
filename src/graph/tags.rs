//! Tags: the texts of the visible record tags and op tags, interned to
//! dense ids (tag 0 is ""), and the distinct *sets* of tags records carry
//! (set 0 is empty), each with its block/mute/top8 flags precomputed so a
//! list filter tests one byte.
//!
//! Also the scan of `list_record_tags`, which turns the tag rows of
//! visible records into (edge index, tag set) pairs for the records'
//! side table (`records.rs`). Tags are few (tens of thousands of texts,
//! a few thousand sets at a million accounts), so hash maps are cheap
//! here; threads number the tags of their row group locally and map them
//! to shared ids under one lock per group.

use std::sync::Mutex;

use rayon::prelude::*;

use super::hash::map_heap_bytes;
use super::lookup::TokenMap;
use super::records::ForwardCsr;
use super::stop::{duplicate, lock, Stop};
use super::{AccountId, FastMap};
use super::{FLAG_BLOCK, FLAG_MUTE, FLAG_TOP8};
use crate::snapshot::{scan_list_record_tags, Address, SnapshotFiles, TableEntry};

/// The graph's tags: texts and sets, as interned at load.
pub(super) struct Tags {
    texts: Vec<Box<str>>,
    ids: FastMap<Box<str>, u32>,
    sets: Vec<Box<[u32]>>,
    set_flags: Vec<u8>,
}

impl Tags {
    /// The tag ids of set `set`, ascending by tag bytes.
    #[inline]
    pub(super) fn set(&self, set: u32) -> &[u32] {
        &self.sets[set as usize]
    }
    #[inline]
    pub(super) fn set_flags(&self, set: u32) -> u8 {
        self.set_flags[set as usize]
    }
    #[inline]
    pub(super) fn id(&self, text: &str) -> Option<u32> {
        self.ids.get(text).copied()
    }
    #[inline]
    pub(super) fn text(&self, tag: u32) -> &str {
        &self.texts[tag as usize]
    }
    /// How many tag texts and tag sets there are (ids below).
    pub(super) fn lens(&self) -> (u32, u32) {
        (self.texts.len() as u32, self.sets.len() as u32)
    }

    /// Approximate heap bytes (a boxed text or set counted with its
    /// 16-byte pointer).
    pub(super) fn heap_bytes(&self) -> usize {
        self.texts.iter().map(|t| t.len() + 16).sum::<usize>()
            + map_heap_bytes(&self.ids)
            + self.sets.iter().map(|s| s.len() * 4 + 16).sum::<usize>()
            + self.set_flags.capacity()
    }
}

/// Tag strings and tag sets, interned. Tag 0 is "" and set 0 is empty.
pub(super) struct TagInterner {
    texts: Vec<Box<str>>,
    ids: FastMap<Box<str>, u32>,
    sets: Vec<Box<[u32]>>,
    set_ids: FastMap<Box<[u32]>, u32>,
    set_flags: Vec<u8>,
}

impl Default for TagInterner {
    fn default() -> Self {
        let mut t = TagInterner {
            texts: Vec::new(),
            ids: FastMap::default(),
            sets: vec![Box::from([])],
            set_ids: FastMap::default(),
            set_flags: vec![0],
        };
        t.tag("");
        t.set_ids.insert(Box::from([]), 0);
        t
    }
}

impl TagInterner {
    pub(super) fn tag(&mut self, text: &str) -> u32 {
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        let id = self.texts.len() as u32;
        self.texts.push(text.into());
        self.ids.insert(text.into(), id);
        id
    }

    /// Interns a set given as tag ids already sorted by tag bytes.
    fn set(&mut self, tags: &[u32]) -> u32 {
        if let Some(&id) = self.set_ids.get(tags) {
            return id;
        }
        let id = self.sets.len() as u32;
        let flags = tags.iter().fold(0u8, |f, &tag| {
            f | match &*self.texts[tag as usize] {
                "block" => FLAG_BLOCK,
                "mute" => FLAG_MUTE,
                "top8" => FLAG_TOP8,
                _ => 0,
            }
        });
        self.sets.push(tags.into());
        self.set_flags.push(flags);
        self.set_ids.insert(tags.into(), id);
        id
    }

    /// The texts and sets as the graph keeps them (the set lookup table
    /// is for interning only).
    pub(super) fn finish(self) -> Tags {
        Tags {
            texts: self.texts,
            ids: self.ids,
            sets: self.sets,
            set_flags: self.set_flags,
        }
    }
}

/// The tag texts, interned from many threads.
pub(super) type SharedTags = Mutex<TagInterner>;

/// The tag texts one row group meets, numbered locally (no lock per row);
/// mapped to shared ids under one lock once the group is read.
pub(super) type LocalTags = TagInterner;

impl LocalTags {
    /// The shared id of each local id in `wanted` (others: `u32::MAX`).
    pub(super) fn shared_ids(
        &self,
        mut wanted: impl Iterator<Item = u32>,
        mut intern: impl FnMut(&str) -> u32,
    ) -> Vec<u32> {
        let mut shared = vec![u32::MAX; self.texts.len()];
        wanted.try_for_each(|local| {
            let slot = shared.get_mut(local as usize)?;
            if *slot == u32::MAX {
                *slot = intern(&self.texts[local as usize]);
            }
            Some(())
        });
        shared
    }
}

/// The records with visible tags in one CSR: (edge index, tag set), by
/// edge, and each one's target.
#[derive(Default)]
pub(super) struct RecordTagsets {
    pub(super) sets: Vec<(u32, u32)>,
    pub(super) targets: Vec<AccountId>,
}

/// Where a tag row's record is: the primary lists' forward CSR (by user)
/// or the other lists' CSR (by ordinal).
pub(super) struct TagTargets<'a> {
    pub(super) primary_list_user: &'a TokenMap,
    pub(super) following: &'a ForwardCsr,
    pub(super) list_ordinal: &'a TokenMap,
    pub(super) others: &'a ForwardCsr,
}

/// The visible tag sets of both CSRs (primary lists', other lists'), every
/// tag row checked for uniqueness on the way.
pub(super) fn scan_tags(
    src: &dyn SnapshotFiles,
    e: &TableEntry,
    at: &TagTargets<'_>,
    account_id: &(impl Fn(&Address) -> Option<AccountId> + Sync),
    tags: &mut TagInterner,
) -> Result<(RecordTagsets, RecordTagsets), Stop> {
    // Every row's key for the uniqueness rule, its tag as an id of its own
    // (the graph's ids are for visible tags only).
    let all_tags: Mutex<LocalTags> = Mutex::default();
    let shared = Mutex::new(std::mem::take(tags));
    #[derive(Default)]
    struct TagGroup {
        tags: LocalTags,
        keys: Vec<(u64, Address, u32)>,
    }
    let (mut visible, groups) = scan_list_record_tags(
        src,
        e,
        TagGroup::default,
        |g: &mut TagGroup, t| {
            let tag = g.tags.tag(t.tag);
            g.keys.push((t.token_id, t.address, tag));
            // A target no visible record has was never interned: invisible.
            let to = account_id(&t.address)?;
            let (other, row, csr) = match at.primary_list_user.get(t.token_id) {
                Some(f) => (false, f, at.following),
                None => (true, at.list_ordinal.get(t.token_id)?, at.others),
            };
            let edge = super::records::edge_index(csr, row, to)?;
            Some(VisibleTag {
                other,
                edge: edge as u32,
                tag,
                to,
            })
        },
        |g, visible| {
            // Keys get ids of every tag; the graph's ids are for visible
            // tags only.
            let every = 0..g.tags.texts.len() as u32;
            let key_ids = g.tags.shared_ids(every, |text| lock(&all_tags).tag(text));
            for key in &mut g.keys {
                key.2 = key_ids[key.2 as usize];
            }
            let mut graph_tags = lock(&shared);
            let ids = g
                .tags
                .shared_ids(visible.iter().map(|v| v.tag), |text| graph_tags.tag(text));
            for v in visible {
                v.tag = ids[v.tag as usize];
            }
            g.tags = LocalTags::default();
        },
    )?;
    *tags = crate::sync::into_inner(shared);
    let keys: Vec<Vec<(u64, Address, u32)>> = groups.into_iter().map(|g| g.keys).collect();
    let mut keys = keys.concat();
    keys.par_sort_unstable();
    if keys.windows(2).any(|w| w[0] == w[1]) {
        return Err(duplicate(&e.file, "duplicate (token_id, address, tag)"));
    }
    drop(keys);
    visible.par_sort_unstable_by(|a, b| {
        (a.other, a.edge).cmp(&(b.other, b.edge)).then_with(|| {
            tags.texts[a.tag as usize]
                .as_bytes()
                .cmp(tags.texts[b.tag as usize].as_bytes())
        })
    });
    let mut found = (RecordTagsets::default(), RecordTagsets::default());
    let mut group: Vec<u32> = Vec::new();
    for chunk in visible.chunk_by(|a, b| (a.other, a.edge) == (b.other, b.edge)) {
        group.clear();
        group.extend(chunk.iter().map(|v| v.tag));
        let into = if chunk[0].other {
            &mut found.1
        } else {
            &mut found.0
        };
        into.sets.push((chunk[0].edge, tags.set(&group)));
        into.targets.push(chunk[0].to);
    }
    Ok(found)
}

/// A tag row whose record is visible, as the scan keeps it.
struct VisibleTag {
    /// In the other lists' CSR (else the primary lists').
    other: bool,
    edge: u32,
    tag: u32,
    to: AccountId,
}
