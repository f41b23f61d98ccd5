//! The immutable in-memory graph of one snapshot and every index the
//! endpoints read. Built once per snapshot (in parallel with rayon), never
//! mutated afterwards, shared by all requests behind an `Arc`.
//!
//! Layout (n accounts, e visible records, o visible ops):
//! - accounts are interned to dense `u32` ids **in address order**, so
//!   "address ascending" tie-breaks are id comparisons;
//! - `following`: petgraph CSR, row F = the accounts F's primary list
//!   holds, ascending, each edge carrying its `updated_at` (8 bytes); the
//!   tag sets of the few tagged records sit in a side table;
//! - `followers`: the reverse direction as a CSR of its own (shared row
//!   offsets, two column arrays): row T lists T's followers pre-sorted in
//!   the two orders the endpoint pages through (latest, follower count), so
//!   a page costs O(offset + limit), not a sort of a hub's whole row;
//! - `notifications`: ops grouped by target, newest first (16 bytes each);
//! - per-account counts and RANK()s, the leaderboard order and a trigram
//!   index over it for substring search.

mod build;
mod hash;
mod intern;
mod lookup;
mod search;

use petgraph::csr::Csr;
use petgraph::visit::EdgeRef;
use petgraph::Directed;
use rayon::prelude::*;

pub use hash::{FastMap, FastState};
pub use search::SearchIndex;

use crate::snapshot::{
    format_address, Address, BadgeEventRow, DirFiles, EnsRow, LoadedSnapshot, SnapshotError,
    SnapshotErrorKind, SnapshotFiles, Table, TableEntry, Tables, OP_TAG,
};

/// An account's dense id (index into `Graph::addresses`).
pub type AccountId = u32;

/// Flags of a tag set, precomputed so that list filters test one byte.
pub const FLAG_BLOCK: u8 = 1;
pub const FLAG_MUTE: u8 = 2;
pub const FLAG_TOP8: u8 = 4;

/// One visible follow record F -> T: when it was (last) added and the id of
/// its set of visible tags (0 = no tags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub updated_at: i64,
    pub tagset: u32,
}

/// One visible op as stored under its target account: 12 bytes (there
/// are ~26M at a million accounts). The opcode rides in the top 3 bits of
/// the actor id; the tags of tag/untag ops live in a side table.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, packed(4))]
struct StoredOp {
    updated_at: i64,
    actor_op: u32,
}

const ACTOR_BITS: u32 = 29;

/// One visible op, unpacked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notification {
    pub updated_at: i64,
    pub actor: AccountId,
    pub opcode: u8,
    /// 0 (the empty tag) for follow and un-follow.
    pub tag_id: u32,
}

/// The ops targeting one account, newest first (`updated_at` descending,
/// then `seq` descending).
#[derive(Clone, Copy, Debug)]
pub struct Notifications<'g> {
    /// Index of the first op in the graph-wide arrays.
    base: usize,
    ops: &'g [StoredOp],
    /// (graph-wide op index, tag id) of every tag/untag op, sorted.
    tags: &'g [(u32, u32)],
}

impl<'g> Notifications<'g> {
    pub fn empty() -> Self {
        Notifications {
            base: 0,
            ops: &[],
            tags: &[],
        }
    }
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    pub fn updated_at(&self, i: usize) -> i64 {
        self.ops[i].updated_at
    }
    pub fn opcode(&self, i: usize) -> u8 {
        (self.ops[i].actor_op >> ACTOR_BITS) as u8
    }
    /// The first index whose op is not `newer` (ops are newest first).
    pub fn partition_point(&self, newer: impl Fn(i64) -> bool) -> usize {
        self.ops.partition_point(|o| newer(o.updated_at))
    }
    pub fn get(&self, i: usize) -> Notification {
        let op = self.ops[i];
        let opcode = (op.actor_op >> ACTOR_BITS) as u8;
        let tag_id = if opcode >= OP_TAG {
            let global = (self.base + i) as u32;
            self.tags
                .binary_search_by_key(&global, |&(at, _)| at)
                .map_or(0, |k| self.tags[k].1)
        } else {
            0
        };
        Notification {
            updated_at: op.updated_at,
            actor: op.actor_op & ((1 << ACTOR_BITS) - 1),
            opcode,
            tag_id,
        }
    }
}

/// The five counts of one account, as stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    followers: u32,
    following: u32,
    mutuals: u32,
    blocks: u32,
    top8: u32,
}

/// SQL `RANK()` of one count, descending, among accounts whose count is >
/// 0, as (count, rank) for each distinct count > 0, count descending. A
/// rank depends only on the count, so the distinct counts (a few thousand)
/// replace a rank per account.
#[derive(Debug, Default)]
struct RankTable(Vec<(u32, u32)>);

impl RankTable {
    fn new(counts: impl Iterator<Item = u32>) -> RankTable {
        let mut sorted: Vec<u32> = counts.filter(|&c| c > 0).collect();
        sorted.par_sort_unstable_by(|a, b| b.cmp(a));
        let mut table = Vec::new();
        for (i, &c) in sorted.iter().enumerate() {
            if i == 0 || sorted[i - 1] != c {
                // Ties share the rank of their first; the next leaves a gap.
                table.push((c, i as u32 + 1));
            }
        }
        table.shrink_to_fit();
        RankTable(table)
    }

    fn rank(&self, count: u32) -> u32 {
        if count == 0 {
            return 0;
        }
        self.0
            .binary_search_by(|&(c, _)| count.cmp(&c))
            .map_or(0, |i| self.0[i].1)
    }
}

/// Counts and ranks of one account (ranks are 0 when the count is 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccountStats {
    pub followers: u32,
    pub following: u32,
    pub mutuals: u32,
    pub blocks: u32,
    pub top8: u32,
    pub followers_rank: u32,
    pub following_rank: u32,
    pub mutuals_rank: u32,
    pub blocks_rank: u32,
    pub top8_rank: u32,
}

/// Where a profile field's text lies in the shared arena (`len ==
/// u32::MAX`: null). One arena instead of a heap string per field saves
/// the pointers and allocator overhead of ~6 strings per profile.
#[derive(Clone, Copy, Debug)]
struct TextRef {
    start: u32,
    len: u32,
}

const NULL_TEXT: TextRef = TextRef {
    start: 0,
    len: u32::MAX,
};

/// The fields of one profile, in `ens` column order.
#[derive(Clone, Copy, Debug)]
struct ProfileSlots {
    /// name, avatar, header, display, records, chains, resolver, errors.
    texts: [TextRef; 8],
    fresh: Option<i64>,
}

/// A name-service profile; JSON object columns hold compact JSON text.
#[derive(Clone, Copy, Debug)]
pub struct Profile<'g> {
    arena: &'g str,
    slots: &'g ProfileSlots,
}

impl<'g> Profile<'g> {
    fn text(&self, field: usize) -> Option<&'g str> {
        let r = self.slots.texts[field];
        (r.len != u32::MAX).then(|| &self.arena[r.start as usize..(r.start + r.len) as usize])
    }
    pub fn name(&self) -> &'g str {
        self.text(0).unwrap_or("")
    }
    pub fn avatar(&self) -> Option<&'g str> {
        self.text(1)
    }
    pub fn header(&self) -> Option<&'g str> {
        self.text(2)
    }
    pub fn display(&self) -> Option<&'g str> {
        self.text(3)
    }
    pub fn records(&self) -> Option<&'g str> {
        self.text(4)
    }
    pub fn chains(&self) -> Option<&'g str> {
        self.text(5)
    }
    pub fn resolver(&self) -> Option<&'g str> {
        self.text(6)
    }
    pub fn errors(&self) -> Option<&'g str> {
        self.text(7)
    }
    pub fn fresh(&self) -> Option<i64> {
        self.slots.fresh
    }
}

/// A badge event with its `event` JSON object serialised once at load.
#[derive(Clone, Debug)]
pub struct BadgeEvent {
    pub event_id: i64,
    pub event_json: Box<str>,
}

/// A badge an account holds: index into `Graph::badge_events`.
#[derive(Clone, Debug)]
pub struct Holding {
    pub event: u32,
    pub token_id: Box<str>,
    pub owner: Box<str>,
}

/// Row counts of the snapshot's tables (as read, before visibility rules),
/// by [`Table`]; serialised as `{table: rows}` in [`Table::ALL`] order.
#[derive(Clone, Debug, Default)]
pub struct TableCounts([u64; Table::ALL.len()]);

impl TableCounts {
    /// The counts `rows` gives each table.
    pub fn from_fn(rows: impl FnMut(Table) -> u64) -> TableCounts {
        TableCounts(Table::ALL.map(rows))
    }

    /// (table, rows) in [`Table::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Table, u64)> + '_ {
        Table::ALL.into_iter().zip(self.0)
    }

    /// The counts in [`Table::ALL`] order.
    pub fn as_array(&self) -> [u64; 8] {
        self.0
    }
}

impl std::ops::Index<Table> for TableCounts {
    type Output = u64;

    fn index(&self, table: Table) -> &u64 {
        &self.0[table.index()]
    }
}

impl serde::Serialize for TableCounts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter().map(|(t, rows)| (t.name(), rows)))
    }
}

/// The reverse direction: T's followers in two precomputed orders.
#[derive(Debug, Default)]
pub struct FollowerIndex {
    offsets: Vec<usize>,
    /// `updated_at` descending, then address ascending.
    latest: Vec<AccountId>,
    /// followers count descending, then address ascending.
    by_count: Vec<AccountId>,
}

const NO_PROFILE: u32 = u32::MAX;

pub struct Graph {
    pub name: String,
    pub created_at_ms: i64,
    /// `created_at` in the API's canonical form.
    pub created_at: String,
    pub table_counts: TableCounts,
    /// Sorted: an account's id is its index, found by binary search (a
    /// hash map would cost ~50 MB more at a million accounts).
    addresses: Vec<Address>,
    /// `addresses` bucketed by their first two bytes.
    address_buckets: lookup::Buckets,
    /// Account -> its primary list's token id (0: none).
    primary_list: Vec<u64>,
    /// Primary list token id -> its user.
    primary_list_user: lookup::ListUsers,
    /// Edge weight: the record's `updated_at`.
    following: Csr<(), i64, Directed, u32>,
    /// One bit per edge (global CSR edge index): does the record carry
    /// visible tags? Most do not, and the bit spares them a search.
    tagged: Vec<u64>,
    /// (edge index, tag set) of every record with visible tags, sorted.
    record_tagsets: Vec<(u32, u32)>,
    followers: FollowerIndex,
    tag_texts: Vec<Box<str>>,
    tag_ids: FastMap<Box<str>, u32>,
    tagsets: Vec<Box<[u32]>>,
    tagset_flags: Vec<u8>,
    counts: Vec<Counts>,
    /// followers, following, mutuals, blocks, top8.
    rank_tables: [RankTable; 5],
    leaderboard: Vec<AccountId>,
    search: SearchIndex,
    profile_of: Vec<u32>,
    profiles: Vec<ProfileSlots>,
    profile_text: String,
    /// (hash of the lower-cased name, account), sorted. Lookups verify
    /// the candidates' names, so hash collisions are harmless; a map of
    /// boxed names would hold ~45 MB more at a million accounts.
    names: Vec<(u64, AccountId)>,
    /// `names` bucketed by the hash's top bits.
    name_buckets: lookup::Buckets,
    /// Account -> its range of `notifications` (start, end).
    notification_rows: Vec<(u32, u32)>,
    notifications: Vec<StoredOp>,
    notification_tags: Vec<(u32, u32)>,
    badge_events: Vec<BadgeEvent>,
    holdings: FastMap<AccountId, Box<[Holding]>>,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("name", &self.name)
            .field("accounts", &self.addresses.len())
            .field("records", &self.following.edge_count())
            .field("notifications", &self.notifications.len())
            .finish()
    }
}

impl Graph {
    pub fn account_count(&self) -> usize {
        self.addresses.len()
    }
    pub fn record_count(&self) -> usize {
        self.following.edge_count()
    }
    pub fn notification_count(&self) -> usize {
        self.notifications.len()
    }
    pub fn leaderboard_len(&self) -> usize {
        self.leaderboard.len()
    }

    pub fn account_id(&self, address: &Address) -> Option<AccountId> {
        lookup::find_address(&self.addresses, &self.address_buckets, address)
    }
    pub fn address(&self, id: AccountId) -> &Address {
        &self.addresses[id as usize]
    }
    /// Resolves a name case-insensitively (`lower` is already lower-cased).
    pub fn account_by_lower_name(&self, lower: &str) -> Option<AccountId> {
        let hash = name_hash(lower);
        let bucket = &self.names[self.name_buckets.range(lookup::Buckets::of_hash(hash))];
        let first = bucket.partition_point(|&(h, _)| h < hash);
        bucket[first..]
            .iter()
            .take_while(|&&(h, _)| h == hash)
            .map(|&(_, id)| id)
            .find(|&id| {
                self.profile(id)
                    .is_some_and(|p| lower_name_is(p.name(), lower))
            })
    }
    /// The user of list `token_id` when it is that user's primary list.
    pub fn primary_list_user(&self, token_id: u64) -> Option<AccountId> {
        self.primary_list_user.get(token_id)
    }
    /// Starts loading what rendering these accounts reads (address,
    /// primary list, counts, profile), so that a page's accounts load
    /// together instead of one cache miss after another.
    pub fn prefetch_accounts(&self, ids: &[AccountId]) {
        let n = self.addresses.len();
        for &id in ids.iter().filter(|&&id| (id as usize) < n) {
            let i = id as usize;
            prefetch(&self.addresses[i]);
            prefetch(&self.primary_list[i]);
            prefetch(&self.counts[i]);
            prefetch(&self.profile_of[i]);
        }
        // Second hop, now that the profile slots' indexes are arriving.
        for &id in ids.iter().filter(|&&id| (id as usize) < n) {
            if let Some(slots) = self.profiles.get(self.profile_of[id as usize] as usize) {
                prefetch(slots);
                if let Some(first) = self
                    .profile_text
                    .as_bytes()
                    .get(slots.texts[0].start as usize)
                {
                    prefetch(first);
                }
            }
        }
    }
    /// The account's primary list token id, if it has one.
    pub fn primary_list(&self, id: AccountId) -> Option<u64> {
        Some(self.primary_list[id as usize]).filter(|&t| t != 0)
    }
    pub fn stats(&self, id: AccountId) -> AccountStats {
        let c = self.counts[id as usize];
        let [followers, following, mutuals, blocks, top8] = &self.rank_tables;
        AccountStats {
            followers: c.followers,
            following: c.following,
            mutuals: c.mutuals,
            blocks: c.blocks,
            top8: c.top8,
            followers_rank: followers.rank(c.followers),
            following_rank: following.rank(c.following),
            mutuals_rank: mutuals.rank(c.mutuals),
            blocks_rank: blocks.rank(c.blocks),
            top8_rank: top8.rank(c.top8),
        }
    }
    pub fn profile(&self, id: AccountId) -> Option<Profile<'_>> {
        self.profiles
            .get(self.profile_of[id as usize] as usize)
            .map(|slots| Profile {
                arena: &self.profile_text,
                slots,
            })
    }

    /// F's primary-list records: targets ascending with their attributes.
    pub fn following_of(&self, f: AccountId) -> (&[AccountId], &[i64]) {
        if (f as usize) < self.following.node_count() {
            (
                self.following.neighbors_slice(f),
                self.following.edges_slice(f),
            )
        } else {
            (&[], &[])
        }
    }

    /// The records of many (follower, target) pairs at once, into `out`
    /// (cleared first). Each lookup is a few dependent cache misses at a
    /// million accounts; done in passes with prefetches, the misses of
    /// the different pairs overlap instead of queueing.
    pub fn records(&self, pairs: &[(AccountId, AccountId)], out: &mut Vec<Option<Record>>) {
        out.clear();
        if self.following.node_count() == 0 {
            out.resize(pairs.len(), None);
            return;
        }
        // Row starts come from slice positions: row 0 starts at edge 0.
        let base = self.following.neighbors_slice(0).as_ptr() as usize;
        let rows: Vec<(usize, usize)> = pairs
            .iter()
            .map(|&(f, _)| {
                let targets = self.following_of(f).0;
                let start = (targets.as_ptr() as usize - base) / 4;
                if let Some(mid) = targets.get(targets.len() / 2) {
                    prefetch(mid);
                }
                (start, targets.len())
            })
            .collect();
        let found: Vec<Option<usize>> = pairs
            .iter()
            .zip(&rows)
            .map(|(&(f, t), &(start, _))| {
                let (targets, times) = self.following_of(f);
                let i = targets.binary_search(&t).ok()?;
                prefetch(&times[i]);
                prefetch(&self.tagged[(start + i) / 64]);
                Some(i)
            })
            .collect();
        out.extend(pairs.iter().zip(rows.iter().zip(&found)).map(
            |(&(f, _), (&(start, _), &i))| {
                let i = i?;
                Some(Record {
                    updated_at: self.following_of(f).1[i],
                    tagset: self.edge_tagset(start + i),
                })
            },
        ));
    }

    /// The tag set of the record at global edge index `edge`.
    fn edge_tagset(&self, edge: usize) -> u32 {
        if self.tagged[edge / 64] & (1 << (edge % 64)) == 0 {
            0
        } else {
            self.record_tagsets
                .binary_search_by_key(&(edge as u32), |&(e, _)| e)
                .map_or(0, |k| self.record_tagsets[k].1)
        }
    }

    /// F's record of T, if F's primary list holds one.
    pub fn record(&self, f: AccountId, t: AccountId) -> Option<Record> {
        let (targets, times) = self.following_of(f);
        let i = targets.binary_search(&t).ok()?;
        // The row is not empty (it holds t), so it has a first edge id.
        let edge = self.following.edges(f).next().map_or(0, |e| e.id()) + i;
        Some(Record {
            updated_at: times[i],
            tagset: self.edge_tagset(edge),
        })
    }

    /// T's followers, `updated_at` descending then address ascending.
    pub fn followers_latest(&self, t: AccountId) -> &[AccountId] {
        let (a, b) = self.follower_range(t);
        &self.followers.latest[a..b]
    }
    /// T's followers, follower count descending then address ascending.
    pub fn followers_by_count(&self, t: AccountId) -> &[AccountId] {
        let (a, b) = self.follower_range(t);
        &self.followers.by_count[a..b]
    }
    fn follower_range(&self, t: AccountId) -> (usize, usize) {
        let o = &self.followers.offsets;
        (o[t as usize], o[t as usize + 1])
    }

    pub fn tagset(&self, set: u32) -> &[u32] {
        &self.tagsets[set as usize]
    }
    pub fn tagset_flags(&self, set: u32) -> u8 {
        self.tagset_flags[set as usize]
    }
    /// The id of a tag text that some visible record or op carries.
    pub fn tag_id(&self, text: &str) -> Option<u32> {
        self.tag_ids.get(text).copied()
    }
    pub fn tag_text(&self, tag: u32) -> &str {
        &self.tag_texts[tag as usize]
    }

    /// Leaderboard accounts, followers descending then address ascending.
    pub fn leaderboard(&self) -> &[AccountId] {
        &self.leaderboard
    }
    pub fn search_index(&self) -> &SearchIndex {
        &self.search
    }

    /// Ops targeting the account, `updated_at` descending then `seq`
    /// descending.
    pub fn notifications_of(&self, id: AccountId) -> Notifications<'_> {
        let (a, b) = self.notification_rows[id as usize];
        let (a, b) = (a as usize, b as usize);
        Notifications {
            base: a,
            ops: &self.notifications[a..b],
            tags: &self.notification_tags,
        }
    }

    pub fn badge_events(&self) -> &[BadgeEvent] {
        &self.badge_events
    }
    /// The badges the account holds, ordered by event position.
    pub fn holdings(&self, id: AccountId) -> &[Holding] {
        self.holdings.get(&id).map_or(&[], |h| h)
    }

    /// Reads, validates and indexes the snapshot whose files `src` holds
    /// (named `name`, found at `dir`), streaming its large tables. A
    /// snapshot it rejects gets the row reader's error, which names the
    /// first fault in table and row order.
    pub fn load(
        src: &dyn SnapshotFiles,
        name: String,
        dir: std::path::PathBuf,
    ) -> Result<Graph, SnapshotError> {
        let stop = match build::build(src, name.clone()) {
            Ok(graph) => return Ok(graph),
            Err(stop) => stop,
        };
        let loaded = crate::snapshot::read_snapshot_from(src, name, dir)?;
        match stop {
            // Valid rows, but a limit of the graph broken.
            build::Stop::Invalid(e) => Err(e),
            build::Stop::OpsOutOfOrder => {
                tracing::info!("list_ops is not in seq order: sorting its rows in memory first");
                Graph::from_tables(loaded.name, loaded.created_at_ms, loaded.tables)
            }
        }
    }

    /// Resolves `path` (a root or one snapshot directory) and loads it.
    pub fn load_path(path: &std::path::Path) -> Result<Graph, SnapshotError> {
        let dir = crate::snapshot::resolve_snapshot_dir(path)?;
        let name = crate::snapshot::snapshot_name(&dir);
        Graph::load(&DirFiles(&dir), name, dir.clone())
    }

    /// Builds the graph of a snapshot already read into rows.
    pub fn build(snapshot: LoadedSnapshot) -> Result<Graph, SnapshotError> {
        Graph::from_tables(snapshot.name, snapshot.created_at_ms, snapshot.tables)
    }

    /// Approximate heap bytes held by each part of the graph (capacities
    /// times element sizes; hash maps at ~1 control byte per slot).
    pub fn memory_by_part(&self) -> Vec<(&'static str, usize)> {
        use std::mem::size_of;
        fn map<K, V, S>(m: &std::collections::HashMap<K, V, S>) -> usize {
            m.capacity() * (size_of::<(K, V)>() + 1)
        }
        let profiles: usize = self.profile_text.capacity()
            + self.profiles.capacity() * size_of::<ProfileSlots>()
            + self.profile_of.capacity() * 4
            + self.names.capacity() * size_of::<(u64, AccountId)>()
            + self.name_buckets.heap_bytes();
        let holdings: usize = map(&self.holdings)
            + self
                .holdings
                .values()
                .flat_map(|h| h.iter())
                .map(|h| size_of::<Holding>() + h.token_id.len() + h.owner.len())
                .sum::<usize>();
        vec![
            (
                "accounts",
                self.addresses.capacity() * 20
                    + self.primary_list.capacity() * 8
                    + self.address_buckets.heap_bytes()
                    + self.primary_list_user.heap_bytes(),
            ),
            (
                "following",
                self.following.edge_count() * (4 + 8)
                    + (self.following.node_count() + 1) * size_of::<usize>()
                    + self.tagged.capacity() * 8
                    + self.record_tagsets.capacity() * 8,
            ),
            (
                "followers",
                self.followers.offsets.capacity() * size_of::<usize>()
                    + (self.followers.latest.capacity() + self.followers.by_count.capacity()) * 4,
            ),
            (
                "tags",
                self.tag_texts.iter().map(|t| t.len() + 16).sum::<usize>()
                    + map(&self.tag_ids)
                    + self.tagsets.iter().map(|s| s.len() * 4 + 16).sum::<usize>()
                    + self.tagset_flags.capacity(),
            ),
            (
                "stats",
                self.counts.capacity() * size_of::<Counts>()
                    + self
                        .rank_tables
                        .iter()
                        .map(|t| t.0.capacity() * 8)
                        .sum::<usize>()
                    + self.leaderboard.capacity() * 4,
            ),
            ("search", self.search.heap_bytes()),
            ("profiles", profiles),
            (
                "notifications",
                self.notification_rows.capacity() * 8
                    + self.notifications.capacity() * size_of::<StoredOp>()
                    + self.notification_tags.capacity() * 8,
            ),
            (
                "badges",
                holdings
                    + self
                        .badge_events
                        .iter()
                        .map(|e| e.event_json.len() + 24)
                        .sum::<usize>(),
            ),
        ]
    }

    /// Builds a graph from in-memory tables (benches, tests): they go
    /// through in-memory Parquet files and the one loader. Ops are put in
    /// `seq` order first.
    pub fn from_tables(
        name: String,
        created_at_ms: i64,
        mut tables: Tables,
    ) -> Result<Graph, SnapshotError> {
        if !tables.list_ops.windows(2).all(|w| w[0].seq < w[1].seq) {
            tables.list_ops.par_sort_by_key(|o| o.seq);
        }
        let files = crate::snapshot::memory_files(created_at_ms, &tables).map_err(|e| {
            SnapshotError::new(
                SnapshotErrorKind::Internal,
                "snapshot",
                format!("cannot encode tables: {e}"),
            )
        })?;
        drop(tables);
        build::build(&files, name).map_err(|stop| match stop {
            build::Stop::Invalid(e) => e,
            build::Stop::OpsOutOfOrder => {
                SnapshotError::new(SnapshotErrorKind::Duplicate, "list_ops", "duplicate seq")
            }
        })
    }
}

/// Tag strings and tag sets, interned. Tag 0 is "" and set 0 is empty.
struct TagInterner {
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
    fn tag(&mut self, text: &str) -> u32 {
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
}

/// CSR row offsets (n + 1 of them) for items whose rows are `rows`.
/// CSR offsets (n + 1) of rows holding `items` by `row_of`, counted in
/// parallel (a count table per thread).
fn row_offsets_par<T: Sync>(
    n: usize,
    items: &[T],
    row_of: impl Fn(&T) -> u32 + Sync,
) -> Vec<usize> {
    let part = items.len().div_ceil(rayon::current_num_threads()).max(1);
    let counts: Vec<Vec<u32>> = items
        .par_chunks(part)
        .map(|chunk| {
            let mut count = vec![0u32; n];
            for item in chunk {
                count[row_of(item) as usize] += 1;
            }
            count
        })
        .collect();
    let mut offsets = vec![0usize; n + 1];
    for count in &counts {
        for (o, &c) in offsets[1..].iter_mut().zip(count) {
            *o += c as usize;
        }
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    offsets
}

/// Items with two values each placed in CSR rows (laid out by `offsets`)
/// in two arrays laid out alike, rows keeping the order in which `visit`
/// hands the (row, a, b) items to its argument (the same order every
/// time it is called): a counting sort. The scatter's writes are random,
/// one cache miss each, so it runs in parallel: each task owns a range of
/// rows holding about the same number of items and scans all the items
/// for its own. `put` returns where an item landed when the calling task
/// owns its row (each item lands once: use the position when `Some`).
fn scatter_row_pairs<A, B>(
    offsets: &[usize],
    visit: impl Fn(&mut dyn FnMut(u32, A, B) -> Option<usize>) + Sync,
) -> (Vec<A>, Vec<B>)
where
    A: Copy + Default + Send,
    B: Copy + Default + Send,
{
    let rows = offsets.len().saturating_sub(1);
    let total = offsets.last().copied().unwrap_or(0);
    let mut out_a = vec![A::default(); total];
    let mut out_b = vec![B::default(); total];
    let parts = rayon::current_num_threads().max(1);
    // Row boundaries of the parts: 0 = b_0 <= b_1 <= ... <= b_parts = rows.
    let mut bounds: Vec<usize> = (0..parts)
        .map(|k| {
            offsets
                .partition_point(|&o| o < total / parts * k)
                .saturating_sub(1)
        })
        .collect();
    bounds[0] = 0;
    bounds.push(rows);
    for k in 1..bounds.len() {
        bounds[k] = bounds[k].max(bounds[k - 1]);
    }
    let mut slices = Vec::with_capacity(parts);
    let (mut rest_a, mut rest_b) = (out_a.as_mut_slice(), out_b.as_mut_slice());
    for w in bounds.windows(2) {
        let len = offsets[w[1]] - offsets[w[0]];
        let (part_a, tail_a) = std::mem::take(&mut rest_a).split_at_mut(len);
        let (part_b, tail_b) = std::mem::take(&mut rest_b).split_at_mut(len);
        slices.push((w[0]..w[1], part_a, part_b));
        (rest_a, rest_b) = (tail_a, tail_b);
    }
    slices.into_par_iter().for_each(|(range, part_a, part_b)| {
        let base = offsets[range.start];
        let mut cursor: Vec<usize> = offsets[range.clone()].iter().map(|&o| o - base).collect();
        visit(&mut |row, a, b| {
            let row = row as usize;
            if !range.contains(&row) {
                return None;
            }
            let c = &mut cursor[row - range.start];
            part_a[*c] = a;
            part_b[*c] = b;
            *c += 1;
            Some(base + *c - 1)
        });
    });
    (out_a, out_b)
}

type Profiles = (Vec<u32>, Vec<ProfileSlots>, String, Vec<(u64, AccountId)>);

/// Is `lower` the Unicode lower-casing of `name`? (Without allocating for
/// the usual ASCII name.)
fn lower_name_is(name: &str, lower: &str) -> bool {
    if name.is_ascii() {
        name.len() == lower.len()
            && name
                .bytes()
                .zip(lower.bytes())
                .all(|(a, b)| a.to_ascii_lowercase() == b)
    } else {
        name.to_lowercase() == lower
    }
}

/// Asks the CPU to start loading `value`'s cache line (a hint: no effect
/// on results, and a no-op off x86-64).
#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing into the program;
    // the pointer comes from a live reference anyway.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
}

/// The name index's hash of a lower-cased name.
fn name_hash(lower: &str) -> u64 {
    use std::hash::BuildHasher;
    FastState::default().hash_one(lower)
}

type Badges = (Vec<BadgeEvent>, FastMap<AccountId, Box<[Holding]>>);

fn event_json(e: &BadgeEventRow) -> String {
    #[derive(serde::Serialize)]
    struct Event<'a> {
        id: i64,
        fancy_id: &'a str,
        name: &'a str,
        event_url: &'a str,
        image_url: &'a str,
        country: &'a str,
        city: &'a str,
        description: &'a str,
        year: i32,
        start_date: &'a str,
        end_date: &'a str,
        expiry_date: &'a str,
    }
    serde_json::to_string(&Event {
        id: e.event_id,
        fancy_id: &e.fancy_id,
        name: &e.name,
        event_url: &e.event_url,
        image_url: &e.image_url,
        country: &e.country,
        city: &e.city,
        description: &e.description,
        year: e.year,
        start_date: &e.start_date,
        end_date: &e.end_date,
        expiry_date: &e.expiry_date,
    })
    .expect("serialising plain strings cannot fail")
}

/// For diagnostics and tests.
pub fn address_text(g: &Graph, id: AccountId) -> String {
    format_address(g.address(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_table_is_sql_rank_over_positive_counts() {
        let table = RankTable::new([5, 3, 3, 0, 1, 5, 3].into_iter());
        let ranks: Vec<u32> = [5, 3, 0, 1, 2, 9].iter().map(|&c| table.rank(c)).collect();
        // 5,5 share 1; 3,3,3 share 3; 1 is 6th; 0 has rank 0; absent counts 0.
        assert_eq!(ranks, vec![1, 3, 0, 6, 0, 0]);
        assert_eq!(RankTable::new(std::iter::empty()).rank(4), 0);
    }

    #[test]
    fn scatter_row_pairs_is_a_stable_counting_sort() {
        // Skewed rows (one holds most items), empty rows, skipped items.
        let rows: Vec<u32> = (0..1000u32)
            .map(|i| match i % 10 {
                0..=5 => 3,
                6 => u32::MAX,
                7 => 0,
                _ => 4 + i % 5,
            })
            .collect();
        let kept: Vec<u32> = rows.iter().copied().filter(|&r| r != u32::MAX).collect();
        let mut want: Vec<(u32, usize)> = rows
            .iter()
            .enumerate()
            .filter(|&(_, &r)| r != u32::MAX)
            .map(|(i, &r)| (r, i))
            .collect();
        want.sort(); // by row, then item index: the scan order
        let want: Vec<usize> = want.iter().map(|&(_, i)| i).collect();
        for threads in [1, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let offsets = pool.install(|| row_offsets_par(9, &kept, |&r| r));
            assert_eq!(offsets.len(), 10);
            assert_eq!(offsets[9], kept.len());
            let placed = std::sync::Mutex::new(Vec::new());
            let (got, doubled) = pool.install(|| {
                scatter_row_pairs(&offsets, |put| {
                    let mut mine = Vec::new();
                    for (i, &r) in rows.iter().enumerate() {
                        if r != u32::MAX {
                            if let Some(at) = put(r, i, 2 * i as u64) {
                                mine.push((i, at));
                            }
                        }
                    }
                    placed.lock().unwrap().append(&mut mine);
                })
            });
            assert_eq!(got, want);
            assert_eq!(
                doubled,
                want.iter().map(|&i| 2 * i as u64).collect::<Vec<_>>()
            );
            let mut placed = placed.into_inner().unwrap();
            placed.sort();
            assert_eq!(placed.len(), kept.len(), "each item lands once");
            for (i, at) in placed {
                assert_eq!(got[at], i);
            }
        }
        let (empty, _): (Vec<u8>, Vec<u8>) = scatter_row_pairs(&[0], |_| {});
        assert!(empty.is_empty());
    }
}
