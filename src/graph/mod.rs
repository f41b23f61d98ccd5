//! The immutable in-memory graph of one snapshot and every index the
//! endpoints read. Built once per snapshot (in parallel with rayon), never
//! mutated afterwards, shared by all requests behind an `Arc`.
//!
//! `Graph` is a facade: it holds one value per index and its methods
//! delegate to them. Each index has a file of its own with its type, its
//! accessors, its builder and its `heap_bytes()`, and its layout and cost
//! in the file's doc (n accounts, e visible records, o visible ops):
//! - `accounts.rs`: accounts interned to dense `u32` ids **in address
//!   order** (so "address ascending" tie-breaks are id comparisons), the
//!   address and name lookups, primary lists (20 + 8 bytes per account);
//! - `records.rs`: the forward direction, a petgraph CSR whose row F is
//!   what F's primary list follows, ascending, each edge carrying its
//!   `updated_at` (12 bytes per record); the tag sets of the few tagged
//!   records sit in a side table;
//! - `followers.rs`: the reverse direction as a CSR of its own (shared row
//!   offsets, two column arrays, 8 bytes per record): row T lists T's
//!   followers pre-sorted in the two orders the endpoint pages through
//!   (latest, follower count), so a page costs O(offset + limit), not a
//!   sort of a hub's whole row;
//! - `notifications.rs`: ops grouped by target, newest first (12 bytes
//!   each);
//! - `tags.rs`: tag texts and tag sets with their block/mute/top8 flags;
//! - `tagged_by.rs`: each account's tagged records by follower;
//! - `ranks.rs`: per-account counts, their RANK()s, the leaderboard order;
//! - `ranked.rs`: each count's ranked orders (both directions);
//! - `lists.rs`: every list's user, the own records of lists that are
//!   not their user's primary list (a second CSR, by list), each
//!   account's lists, the counts of `/stats`;
//! - `search/`: a gram index over the leaderboard for substring
//!   search, and the per-account entries and names searches test
//!   (`mod.rs`: the type and its queries; `grams.rs`: which grams a
//!   text has and a term needs; `build.rs`: the builder);
//!   `postings.rs`: its posting lists and how they are intersected;
//!   `term.rs`: the search term and its byte-level tests of names and
//!   addresses;
//! - `profiles.rs`: name-service profiles in one text arena;
//! - `badges.rs`: badge events and each account's holdings;
//! - `recommended.rs`: the curated accounts to suggest, in answer order,
//!   and the query that leaves out what a viewer has (43–46);
//! - `discover.rs`: the accounts followed most recently, ordered at load
//!   (47), merged with the live index's changes per page;
//! - `live/`: the tail's re-read entities over these indexes (docs/live.md),
//!   which the accessors below ask first; ranks, the leaderboard, `/stats`
//!   and orders by a count read the compacted values instead: the base's,
//!   or those of the last refresh (`compacted.rs`).
//!
//! `build.rs` orders the load's phases (and holds the ways to a graph:
//! from files, rows or tables); `layers.rs` derives graphs from one
//! another (a refresh, a live index); `intern.rs`, `lookup.rs`,
//! `scatter.rs` and `hash.rs` are the helpers the indexes share.

mod accounts;
mod badges;
mod build;
mod compacted;
mod discover;
mod followers;
mod hash;
mod hidden_ops;
mod intern;
mod layers;
mod lists;
pub mod live;
mod lookup;
mod notifications;
mod postings;
mod profiles;
pub mod query;
mod ranked;
mod ranks;
mod recommended;
mod records;
mod scatter;
mod search;
mod stop;
mod tagged_by;
mod tags;
mod term;

pub use badges::{BadgeEvent, Holding};
pub use compacted::NeedsFold;
pub use followers::FollowerIndex;
pub use hash::{FastMap, FastState};
pub use lists::{GlobalStats, OwnRecords};
pub use live::LiveIndex;
pub use notifications::{Notification, Notifications};
pub use profiles::Profile;
pub use ranked::RankedSort;
pub use ranks::AccountStats;
pub use recommended::{Recommended, Viewer};
pub use records::{Record, RecordRow};
pub use search::{IndexCost, IndexPlan, SearchIndex};
pub use term::Term;

use crate::snapshot::{format_address, Address, Table};

/// An account's dense id (index into the sorted addresses).
pub type AccountId = u32;

/// Flags of a tag set (`tags.rs`), precomputed so that list filters test
/// one byte; the record indexes read them too.
pub const FLAG_BLOCK: u8 = 1;
pub const FLAG_MUTE: u8 = 2;
pub const FLAG_TOP8: u8 = 4;

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

/// One snapshot's graph: its identity and the indexes over its rows
/// (a clone shares them).
#[derive(Clone)]
pub struct Graph {
    pub name: String,
    pub created_at_ms: i64,
    /// `created_at` in the API's canonical form.
    pub created_at: String,
    /// Where the snapshot stands in the indexer's event log, when its
    /// manifest says (the tail starts there).
    pub anchor: Option<crate::snapshot::Anchor>,
    pub table_counts: TableCounts,
    /// The snapshot's indexes, shared by the graphs the tail derives.
    base: std::sync::Arc<Indexes>,
    /// Compacted values refreshed over `base` and the tail's entities
    /// (`compacted.rs`), if any: they answer in place of the base's.
    compacted: Option<std::sync::Arc<compacted::Compacted>>,
    /// The tail's entities on top of `base` (docs/live.md), if any.
    live: Option<std::sync::Arc<LiveIndex>>,
}

/// The indexes of one snapshot (or compaction).
struct Indexes {
    accounts: accounts::Accounts,
    names: accounts::NameIndex,
    records: records::Records,
    followers: FollowerIndex,
    tags: tags::Tags,
    tagged_by: tagged_by::TaggedBy,
    stats: ranks::Stats,
    ranked: ranked::RankedOrders,
    lists: lists::Lists,
    search: SearchIndex,
    profiles: profiles::Profiles,
    notifications: notifications::NotificationIndex,
    badges: badges::Badges,
    recommended: recommended::RecommendedRows,
    latest_follows: discover::LatestFollows,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("name", &self.name)
            .field("accounts", &self.base.accounts.len())
            .field("records", &self.base.records.len())
            .field("notifications", &self.base.notifications.len())
            .finish()
    }
}

impl Graph {
    pub fn account_count(&self) -> usize {
        self.base.accounts.len()
    }
    pub fn record_count(&self) -> usize {
        self.base.records.len()
    }
    pub fn notification_count(&self) -> usize {
        self.base.notifications.len()
    }
    pub fn leaderboard_len(&self) -> usize {
        self.leaderboard().len()
    }

    #[inline]
    pub fn account_id(&self, address: &Address) -> Option<AccountId> {
        self.base
            .accounts
            .id(address)
            .or_else(|| self.live()?.new_account_id(address))
    }
    #[inline]
    pub fn address(&self, id: AccountId) -> &Address {
        if let Some(address) = self.live().and_then(|l| l.new_account(id)) {
            return address;
        }
        self.base.accounts.address(id)
    }
    /// Whether the base has the account (a live index may add others).
    #[inline]
    fn in_base(&self, id: AccountId) -> bool {
        (id as usize) < self.base.accounts.len()
    }
    /// A key in address order: the id itself, unless a live index holds
    /// accounts the base lacks (whose ids are not in address order).
    /// Queries that order or intersect ids across rows compare these.
    #[inline]
    pub fn order_key(&self, id: AccountId) -> u64 {
        match self.live() {
            Some(live) if live.has_new_accounts() => live.key(id),
            _ => u64::from(id),
        }
    }
    /// Whether the account's address or name holds `term` (the search
    /// index's test; an account the base lacks has no name).
    #[inline]
    pub fn holds_term(&self, term: &Term<'_>, id: AccountId) -> bool {
        if self.in_base(id) {
            self.base.search.matches(term, id)
        } else {
            term.in_address(self.address(id))
        }
    }
    /// Resolves a name case-insensitively (`lower` is already lower-cased).
    #[inline]
    pub fn account_by_lower_name(&self, lower: &str) -> Option<AccountId> {
        self.base
            .names
            .find(lower, |id| self.base.profiles.get(id).map(|p| p.name()))
    }
    /// The user of list `token_id`, primary or not (`None`: no such list,
    /// or its user is the zero address).
    #[inline]
    pub fn list_user(&self, token_id: u64) -> Option<AccountId> {
        if let Some(user) = self.live().and_then(|l| l.list_user(token_id)) {
            return user;
        }
        self.base.lists.user(token_id)
    }
    /// Where the base keeps list `token_id`'s own records (by the base's
    /// primary lists: a live index masks them, it does not move them).
    fn base_own_records(&self, token_id: u64) -> Option<OwnRecords> {
        self.base
            .lists
            .own_records(token_id, |user| self.base_primary_list(user))
    }
    /// List `token_id`'s own records: its user's primary-list row, or its
    /// row among the other lists' (empty when the list has no user).
    pub fn list_records_row(&self, token_id: u64) -> RecordRow<'_> {
        if let Some(row) = self.live().and_then(|l| l.list_row(token_id)) {
            return row;
        }
        match self.base_own_records(token_id) {
            Some(OwnRecords::Primary(user)) => self.base.records.row(user),
            Some(OwnRecords::Other(row)) => self.base.lists.others().row(row),
            None => RecordRow::with_sets(&[], &[], &[], &[]),
        }
    }
    /// The account's primary-list records (empty without a primary list,
    /// or for an address without data).
    pub fn following_row(&self, id: Option<AccountId>) -> RecordRow<'_> {
        if let Some(row) = id.and_then(|id| self.live()?.following(id)) {
            return row;
        }
        // Past the last row, a row is empty.
        self.base.records.row(id.unwrap_or(AccountId::MAX))
    }
    /// How many of list `token_id`'s own records carry neither `block`
    /// nor `mute`.
    pub fn own_records_shown(&self, token_id: u64) -> usize {
        if self.live.is_some() {
            return self.shown_in(self.list_records_row(token_id));
        }
        let flags = |set| self.base.tags.set_flags(set);
        match self.base_own_records(token_id) {
            Some(OwnRecords::Primary(user)) => self.base.records.shown_in_row(user, flags),
            Some(OwnRecords::Other(row)) => self.base.lists.others().shown_in_row(row, flags),
            None => 0,
        }
    }
    /// How many of the account's primary-list records carry neither
    /// `block` nor `mute`.
    pub fn following_shown(&self, id: AccountId) -> usize {
        if self.live.is_some() {
            return self.shown_in(self.following_row(Some(id)));
        }
        self.base
            .records
            .shown_in_row(id, |set| self.base.tags.set_flags(set))
    }
    /// A row's records that carry neither `block` nor `mute`.
    fn shown_in(&self, row: RecordRow<'_>) -> usize {
        let hidden = row
            .tagged()
            .filter(|&(_, set)| self.tagset_flags(set) & (FLAG_BLOCK | FLAG_MUTE) != 0)
            .count();
        row.len() - hidden
    }
    /// How many of the account's followers' records of it carry neither
    /// `block` nor `mute`.
    pub fn followers_shown(&self, id: AccountId) -> usize {
        let hidden = match self.live().and_then(|l| l.hidden_followers(id)) {
            Some(hidden) => hidden,
            None => self.base.stats.hidden_followers(id),
        };
        (self.followers_count(id) - hidden) as usize
    }
    /// The lists whose user, owner or manager the account is, ascending.
    #[inline]
    pub fn lists_of(&self, id: AccountId) -> &[u64] {
        if let Some(lists) = self.live().and_then(|l| l.lists_of(id)) {
            return lists;
        }
        self.base.lists.lists_of(id)
    }
    /// The counts of `/stats` (compacted).
    pub fn global_stats(&self) -> GlobalStats {
        match &self.compacted {
            Some(c) => c.global,
            None => self.base.lists.stats(),
        }
    }
    /// Starts loading these accounts' addresses and primary lists only
    /// (a page that prints no counts and no profile).
    pub fn prefetch_addresses(&self, ids: impl Iterator<Item = AccountId>) {
        let n = self.base.accounts.len();
        for id in ids.filter(|&id| (id as usize) < n) {
            self.base.accounts.prefetch(id as usize);
        }
    }
    /// Starts loading what rendering these accounts reads (address,
    /// primary list, counts, profile), so that a page's accounts load
    /// together instead of one cache miss after another.
    pub fn prefetch_accounts(&self, ids: impl Iterator<Item = AccountId> + Clone) {
        let n = self.base.accounts.len();
        for id in ids.clone().filter(|&id| (id as usize) < n) {
            let i = id as usize;
            self.base.accounts.prefetch(i);
            self.base.stats.prefetch(i);
            self.base.profiles.prefetch_index(i);
        }
        // Second hop, now that the profile slots' indexes are arriving.
        for id in ids.filter(|&id| (id as usize) < n) {
            self.base.profiles.prefetch_profile(id as usize);
        }
    }
    /// The account's primary list token id, if it has one.
    #[inline]
    pub fn primary_list(&self, id: AccountId) -> Option<u64> {
        if let Some(p) = self.live().and_then(|l| l.primary_list(id)) {
            return p;
        }
        self.base_primary_list(id)
    }
    /// The account's primary list in the base.
    #[inline]
    fn base_primary_list(&self, id: AccountId) -> Option<u64> {
        self.in_base(id)
            .then(|| self.base.accounts.primary_list(id))
            .flatten()
    }
    /// The account's counts and ranks as of the last compaction (the
    /// leaderboard's; docs/live.md's compacted values).
    #[inline]
    pub fn stats(&self, id: AccountId) -> AccountStats {
        let stats = self.compacted_stats();
        if (id as usize) >= stats.counts().len() {
            return AccountStats::default();
        }
        stats.get(id)
    }
    /// The counts and ranks of the last compaction.
    #[inline]
    fn compacted_stats(&self) -> &ranks::Stats {
        match &self.compacted {
            Some(c) => &c.stats,
            None => &self.base.stats,
        }
    }
    /// The account's followers count now (blocked and muted included).
    #[inline]
    pub fn followers_count(&self, id: AccountId) -> u32 {
        if let Some(n) = self.live().and_then(|l| l.followers_count(id)) {
            return n;
        }
        self.compacted_followers_count(id)
    }
    /// The followers count that orders by followers use (compacted).
    #[inline]
    pub fn compacted_followers_count(&self, id: AccountId) -> u32 {
        self.compacted_stats()
            .counts()
            .get(id as usize)
            .map_or(0, |c| c.followers)
    }
    #[inline]
    pub fn profile(&self, id: AccountId) -> Option<Profile<'_>> {
        if !self.in_base(id) {
            return None;
        }
        self.base.profiles.get(id)
    }

    /// F's primary-list records: targets ascending with their attributes.
    #[inline]
    pub fn following_of(&self, f: AccountId) -> (&[AccountId], &[i64]) {
        if let Some(row) = self.live().and_then(|l| l.following(f)) {
            return (row.targets, row.times);
        }
        self.base.records.following_of(f)
    }
    /// The records of many (follower, target) pairs at once, into `out`
    /// (cleared first), with the lookups' cache misses overlapped.
    #[inline]
    pub fn records(&self, pairs: &[(AccountId, AccountId)], out: &mut Vec<Option<Record>>) {
        self.base.records.records(pairs, out);
        self.live_records(pairs, out);
    }
    /// `records` into a slice of `pairs.len()`.
    pub fn records_into(&self, pairs: &[(AccountId, AccountId)], out: &mut [Option<Record>]) {
        self.base.records.records_into(pairs, out);
        self.live_records(pairs, out);
    }
    /// The live rows' records in place of the base's.
    fn live_records(&self, pairs: &[(AccountId, AccountId)], out: &mut [Option<Record>]) {
        let Some(live) = self.live().filter(|l| l.has_following()) else {
            return;
        };
        for (record, &(f, t)) in out.iter_mut().zip(pairs) {
            if let Some(r) = live.record(f, t) {
                *record = r;
            }
        }
    }
    /// F's record of T, if F's primary list holds one.
    #[inline]
    pub fn record(&self, f: AccountId, t: AccountId) -> Option<Record> {
        if let Some(r) = self.live().and_then(|l| l.record(f, t)) {
            return r;
        }
        self.base.records.record(f, t)
    }

    /// T's followers, `updated_at` descending then address ascending.
    #[inline]
    pub fn followers_latest(&self, t: AccountId) -> &[AccountId] {
        if let Some(f) = self.live().and_then(|l| l.followers_latest(t)) {
            return f;
        }
        if !self.in_base(t) {
            return &[];
        }
        self.base.followers.latest(t)
    }
    /// (follower's address, tag set) of the followers' records of T that
    /// carry tags, followers ascending.
    pub fn tagged_by(&self, t: AccountId) -> impl Iterator<Item = (&Address, u32)> + '_ {
        match self.live().and_then(|l| l.tagged_by(t)) {
            Some(tagged) => {
                records::Either::Left(tagged.iter().map(|&(f, set)| (self.address(f), set)))
            }
            None => records::Either::Right(self.base.tagged_by.of(t)),
        }
    }
    /// T's followers, address ascending.
    #[inline]
    pub fn followers_by_address(&self, t: AccountId) -> &[AccountId] {
        if let Some(f) = self.live().and_then(|l| l.followers_by_address(t)) {
            return f;
        }
        if !self.in_base(t) {
            return &[];
        }
        self.base.followers.by_address(t)
    }
    /// T's followers, follower count (compacted) descending then address
    /// ascending.
    #[inline]
    pub fn followers_by_count(&self, t: AccountId) -> &[AccountId] {
        if let Some(f) = self.live().and_then(|l| l.followers_by_count(t)) {
            return f;
        }
        if !self.in_base(t) {
            return &[];
        }
        if let Some(row) = self.compacted.as_ref().and_then(|c| c.by_count.get(&t)) {
            return row;
        }
        self.base.followers.by_count(t)
    }

    #[inline]
    pub fn tagset(&self, set: u32) -> &[u32] {
        if let Some(tags) = self.live().and_then(|l| l.tagset(set)) {
            return tags;
        }
        self.base.tags.set(set)
    }
    #[inline]
    pub fn tagset_flags(&self, set: u32) -> u8 {
        if let Some(flags) = self.live().and_then(|l| l.tagset_flags(set)) {
            return flags;
        }
        self.base.tags.set_flags(set)
    }
    /// The id of a tag text that some visible record or op carries.
    #[inline]
    pub fn tag_id(&self, text: &str) -> Option<u32> {
        self.base
            .tags
            .id(text)
            .or_else(|| self.live()?.tag_id(text))
    }
    #[inline]
    pub fn tag_text(&self, tag: u32) -> &str {
        if let Some(text) = self.live().and_then(|l| l.tag_text(tag)) {
            return text;
        }
        self.base.tags.text(tag)
    }

    /// Leaderboard accounts, followers descending then address ascending
    /// (compacted).
    #[inline]
    pub fn leaderboard(&self) -> &[AccountId] {
        self.compacted_stats().leaderboard()
    }
    /// The leaderboard's accounts in address order (compacted).
    pub fn leaderboard_by_address(&self) -> impl Iterator<Item = AccountId> + '_ {
        if let Some(c) = &self.compacted {
            return records::Either::Left(c.board_by_address.iter().copied());
        }
        let on_board = |id: &AccountId| {
            self.base
                .stats
                .on_leaderboard(*id, self.base_primary_list(*id).is_some())
        };
        records::Either::Right((0..self.base.accounts.len() as AccountId).filter(on_board))
    }
    /// The accounts whose `sort` count is above 0, that count descending
    /// or ascending, then address ascending (compacted).
    #[inline]
    pub fn ranked(&self, sort: RankedSort, descending: bool) -> &[AccountId] {
        match &self.compacted {
            Some(c) => c.ranked.get(sort, descending),
            None => self.base.ranked.get(sort, descending),
        }
    }
    pub fn search_index(&self) -> &SearchIndex {
        match &self.compacted {
            Some(c) => &c.search,
            None => &self.base.search,
        }
    }
    /// Leaderboard accounts whose address or name contains `term_lower`
    /// (trimmed, lower-cased, non-empty), in leaderboard order, after
    /// `offset` matches, at most `limit` (compacted).
    pub fn leaderboard_search(
        &self,
        term_lower: &str,
        offset: usize,
        limit: usize,
    ) -> Vec<AccountId> {
        let board = self.leaderboard();
        self.search_index()
            .find(term_lower, offset, limit, board.len(), |p| board[p])
            .into_iter()
            .map(|p| board[p])
            .collect()
    }

    /// Ops targeting the account, `updated_at` descending then `seq`
    /// descending.
    #[inline]
    pub fn notifications_of(&self, id: AccountId) -> Notifications<'_> {
        let live = self.live();
        if let Some(n) = live.and_then(|l| l.notifications_of(id)) {
            return n;
        }
        let row = self.base_notifications(id);
        match live.and_then(|l| l.added_ops(id)) {
            Some(added) => row.with_added(added),
            None => row,
        }
    }

    /// The account's notifications in the base (none for an account the
    /// base lacks).
    fn base_notifications(&self, id: AccountId) -> Notifications<'_> {
        if self.in_base(id) {
            self.base.notifications.of(id)
        } else {
            Notifications::empty()
        }
    }

    pub fn badge_events(&self) -> &[BadgeEvent] {
        self.base.badges.events()
    }
    /// The badges the account holds, ordered by event position.
    #[inline]
    pub fn holdings(&self, id: AccountId) -> &[Holding] {
        self.base.badges.holdings(id)
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

/// Starts loading the cache lines of a short slice (up to 8 of them)
/// before a binary search of it, whose dependent misses then overlap.
#[inline(always)]
fn prefetch_lines<T>(slice: &[T]) {
    let per_line = (64 / std::mem::size_of::<T>().max(1)).max(1);
    for value in slice.iter().step_by(per_line).take(8) {
        prefetch(value);
    }
    if let Some(last) = slice.last() {
        prefetch(last);
    }
}

/// For diagnostics and tests.
pub fn address_text(g: &Graph, id: AccountId) -> String {
    format_address(g.address(id))
}
