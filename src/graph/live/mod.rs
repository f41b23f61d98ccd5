//! The live index: the tail's entities on top of a base graph
//! (docs/live.md), as an LSM memtable masks older files. The graph's
//! accessors ask it first and fall back to the base, so every query reads
//! through it without knowing.
//!
//! What it holds, each whole (a re-read replaces its entity, and what
//! derives from it is computed again from the base and the entities):
//! - the live lists: user, roles, own records with their tag sets;
//! - each affected account's primary list (the primary-list rule applied
//!   to the live lists and primary-list rows), its following row when it
//!   differs from the base's, its lists by role;
//! - the followers of every account a changed following row names (or
//!   named), in the base's three orders, their count and how many of
//!   them are hidden (`block`, `mute`). Every other count (following
//!   comes from the row), orders by a count and ranks are the base's:
//!   compacted values, as are the leaderboard and `/stats`;
//! - tag texts and sets the base does not know (ids after the base's);
//! - the new ops of each account that gained some, placed in its base
//!   row (read through `Notifications`, the base row not copied), and
//!   whole rows where base ops leave, change actor or join.
//!
//! Accounts the base lacks get ids after the base's. Base ids are in
//! address order, so "address ascending" is an id comparison there; a
//! new account's id is not, so the rows that hold one are ordered by
//! [`LiveIndex::key`] (address order over both), and the few queries
//! that compare ids across rows compare keys (`Graph::order_key`).
//!
//! One change cannot be laid over a base ([`NotLive`]): a list becoming
//! primary whose hidden ops tie in `updated_at` with a target's visible
//! ones (only `seq`s, which the graph keeps for hidden ops alone, order
//! them). The tail compacts instead.
//!
//! Cost (k live lists with r records, f changed following rows, t
//! accounts whose record by one of them differs from the base's, with d
//! followers on average, and n notification rows rewritten whole, of o
//! ops, which only primary-list switches and user changes cause): built
//! after each changing poll in O(r log r + f·row) plus, for the t and n
//! whose inputs changed since the previous build over the same base
//! (after a compaction: all of them), O(t·d + n·o); the others are
//! shared with that build (its `Arc`s), their inputs compared. The rare
//! lists whose ops become hidden at once (a primary-list switch) add one
//! scan of the base's ops per new actor. Memory O(r + t·d + n·o), shared
//! parts counted in each index that holds them. It grows with what is
//! held since the base, so a compaction bounds it. Requests pay one hash
//! probe per accessor while the index is not empty, nothing once
//! compacted.

mod build;
mod notify;
mod splice;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{AccountId, FastMap, Record, RecordRow};
use crate::snapshot::{Address, ListState, OpRow};

/// Why the entities cannot be laid over this base: a compaction must
/// fold them into a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotLive {
    /// A list the base holds became its user's primary list, and an op it
    /// had while hidden has the `updated_at` of a visible op of the same
    /// target (their `seq`s would order them).
    HiddenOps(u64),
}

impl std::fmt::Display for NotLive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotLive::HiddenOps(t) => write!(
                f,
                "list {t} became a primary list with an op at the time of another"
            ),
        }
    }
}

/// The tail's entities, as its overlay holds them.
pub struct Changes<'a> {
    /// Each live list, whole.
    pub lists: &'a BTreeMap<u64, ListState>,
    /// Each re-read account's `primary_lists` row (`None`: none).
    pub primary: &'a BTreeMap<Address, Option<u64>>,
    /// The lists whose ops go beyond the base's.
    pub ops: Vec<ListOps<'a>>,
}

/// One list's ops beyond the base: appended to the base's, or
/// (`replace`) its whole history. Each op comes with its place among the
/// new ops of every list, the order a compaction numbers them in (after
/// the base's at equal `updated_at`).
pub struct ListOps<'a> {
    pub token: u64,
    pub replace: bool,
    pub ops: Vec<(&'a OpRow, u64)>,
}

/// One live list.
#[derive(Debug, Default)]
struct LiveList {
    /// Its user (`None`: no such list, or the zero address).
    user: Option<AccountId>,
    /// Its user, owner and manager that are accounts (lists of 13).
    roles: Vec<AccountId>,
    exists: bool,
    row: LiveRow,
}

/// A row of records: targets in address order, each one's `updated_at`
/// and tag set.
#[derive(Clone, Debug, Default)]
pub(super) struct LiveRow {
    targets: Vec<AccountId>,
    times: Vec<i64>,
    sets: Vec<u32>,
    /// (target, index) by id, when a target is a new account (the
    /// targets are then not in id order); else empty.
    by_id: Vec<(AccountId, u32)>,
}

impl LiveRow {
    fn as_row(&self) -> RecordRow<'_> {
        RecordRow::with_sets(&self.targets, &self.times, &self.sets, &self.by_id)
    }
    fn find(&self, t: AccountId) -> Option<Record> {
        self.as_row().find(t)
    }
    fn from_row(row: RecordRow<'_>) -> LiveRow {
        LiveRow {
            targets: row.targets.to_vec(),
            times: row.times.to_vec(),
            sets: (0..row.len()).map(|i| row.tagset(i)).collect(),
            by_id: Vec::new(),
        }
    }
    fn heap_bytes(&self) -> usize {
        self.targets.capacity() * 4
            + self.times.capacity() * 8
            + self.sets.capacity() * 4
            + self.by_id.capacity() * 8
    }
}

/// An account's followers in the base's three orders, and who of them
/// tagged it, with what they were made of: the records of changed
/// following rows that name it and the base records those rows had
/// (follower ascending). The next build over the same base shares an
/// entry whose records are the same.
#[derive(Clone, Debug, Default)]
struct LiveFollowers {
    adds: Vec<(AccountId, Record)>,
    drops: Vec<(AccountId, Record)>,
    latest: Vec<AccountId>,
    by_count: Vec<AccountId>,
    by_address: Vec<AccountId>,
    /// Followers whose record carries `block` or `mute`.
    hidden: u32,
    /// (follower, tag set) of the tagged records, followers ascending.
    tagged: Vec<(AccountId, u32)>,
}

/// Tag texts and sets beyond the base's (ids continue the base's; the
/// next build over the same base starts from these, so ids stay).
#[derive(Clone, Debug, Default)]
struct LiveTags {
    base_texts: u32,
    base_sets: u32,
    texts: Vec<Box<str>>,
    ids: FastMap<Box<str>, u32>,
    sets: Vec<Box<[u32]>>,
    set_ids: FastMap<Box<[u32]>, u32>,
    flags: Vec<u8>,
}

/// See the module doc.
#[derive(Default)]
pub struct LiveIndex {
    /// The base's accounts: ids below are the base's.
    base_accounts: u32,
    /// The accounts the base lacks (and the previous builds over the same
    /// base lacked), in the order first seen: ids from `base_accounts` on.
    new_accounts: Vec<Address>,
    new_ids: FastMap<Address, AccountId>,
    /// Each new account's order key.
    new_keys: Vec<u64>,
    lists: FastMap<u64, LiveList>,
    primary: FastMap<AccountId, Option<u64>>,
    following: FastMap<AccountId, LiveRow>,
    followers: FastMap<AccountId, Arc<LiveFollowers>>,
    lists_of: FastMap<AccountId, Vec<u64>>,
    tags: LiveTags,
    notifications: super::notifications::NotificationRows,
    notify_memo: notify::Memo,
    /// The new ops of rows that only gain some, with their places.
    added_ops: notify::AddedOps,
    /// Entities held (lists and accounts), for `/snapshot`.
    entities: usize,
}

impl std::fmt::Debug for LiveIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveIndex")
            .field("lists", &self.lists.len())
            .field("following", &self.following.len())
            .field("followers", &self.followers.len())
            .field("notifications", &self.notifications.len())
            .finish()
    }
}

impl LiveIndex {
    /// Entities held on top of the base (lists and accounts re-read).
    pub fn entities(&self) -> usize {
        self.entities
    }

    /// Whether some entity names an account the base lacks.
    #[inline]
    pub(super) fn has_new_accounts(&self) -> bool {
        !self.new_accounts.is_empty()
    }
    /// How many accounts the base lacks.
    pub(super) fn new_account_count(&self) -> usize {
        self.new_accounts.len()
    }
    /// The accounts whose following row is live.
    pub(super) fn following_accounts(&self) -> impl Iterator<Item = AccountId> + '_ {
        self.following.keys().copied()
    }
    /// An account the base lacks.
    #[inline]
    pub(super) fn new_account(&self, id: AccountId) -> Option<&Address> {
        self.new_accounts
            .get(id.checked_sub(self.base_accounts)? as usize)
    }
    #[inline]
    pub(super) fn new_account_id(&self, address: &Address) -> Option<AccountId> {
        self.new_ids.get(address).copied()
    }
    /// A key in address order over the base's accounts and the new ones:
    /// a base id in the high half with all ones below, a new account the
    /// count of base addresses below its own in the high half and its
    /// rank among the new ones at that place below.
    #[inline]
    pub fn key(&self, id: AccountId) -> u64 {
        match id.checked_sub(self.base_accounts) {
            Some(i) => self.new_keys[i as usize],
            None => (u64::from(id) << 32) | u64::from(u32::MAX),
        }
    }

    /// The list's user, if the live index holds the list.
    #[inline]
    pub(super) fn list_user(&self, token_id: u64) -> Option<Option<AccountId>> {
        self.lists.get(&token_id).map(|l| l.user)
    }
    /// The list's own records, if the live index holds the list.
    pub(super) fn list_row(&self, token_id: u64) -> Option<RecordRow<'_>> {
        let list = self.lists.get(&token_id)?;
        Some(if list.user.is_some() {
            list.row.as_row()
        } else {
            RecordRow::with_sets(&[], &[], &[], &[])
        })
    }
    #[inline]
    pub(super) fn primary_list(&self, id: AccountId) -> Option<Option<u64>> {
        self.primary.get(&id).copied()
    }
    #[inline]
    pub(super) fn following(&self, id: AccountId) -> Option<RecordRow<'_>> {
        self.following.get(&id).map(LiveRow::as_row)
    }
    /// F's record of T, if F's following row is live.
    #[inline]
    pub(super) fn record(&self, f: AccountId, t: AccountId) -> Option<Option<Record>> {
        self.following.get(&f).map(|row| row.find(t))
    }
    /// Whether any following row is live (record lookups need patching).
    /// The accounts whose records by a changed row differ from the
    /// base's (those whose followers the index holds).
    pub(super) fn touched_targets(&self) -> impl Iterator<Item = AccountId> + '_ {
        self.followers.keys().copied()
    }
    pub(super) fn has_following(&self) -> bool {
        !self.following.is_empty()
    }
    pub(super) fn followers_latest(&self, t: AccountId) -> Option<&[AccountId]> {
        self.followers.get(&t).map(|f| &f.latest[..])
    }
    pub(super) fn followers_by_count(&self, t: AccountId) -> Option<&[AccountId]> {
        self.followers.get(&t).map(|f| &f.by_count[..])
    }
    pub(super) fn followers_by_address(&self, t: AccountId) -> Option<&[AccountId]> {
        self.followers.get(&t).map(|f| &f.by_address[..])
    }
    pub(super) fn hidden_followers(&self, t: AccountId) -> Option<u32> {
        self.followers.get(&t).map(|f| f.hidden)
    }
    pub(super) fn tagged_by(&self, t: AccountId) -> Option<&[(AccountId, u32)]> {
        self.followers.get(&t).map(|f| &f.tagged[..])
    }
    /// The live followers count (blocked and muted included).
    pub(super) fn followers_count(&self, id: AccountId) -> Option<u32> {
        self.followers.get(&id).map(|f| f.by_address.len() as u32)
    }
    pub(super) fn lists_of(&self, id: AccountId) -> Option<&[u64]> {
        self.lists_of.get(&id).map(|v| &v[..])
    }
    /// The account's notification row, if this index rewrote it whole.
    pub(super) fn notifications_of(
        &self,
        id: AccountId,
    ) -> Option<super::notifications::Notifications<'_>> {
        self.notifications.of(id)
    }
    /// The new ops of a row that only gains some (placed in the row).
    pub(super) fn added_ops(&self, id: AccountId) -> Option<&[(u32, super::Notification)]> {
        self.added_ops.get(&id).map(|v| &v[..])
    }

    /// The tag ids of a live set (`None`: a base set).
    #[inline]
    pub(super) fn tagset(&self, set: u32) -> Option<&[u32]> {
        let i = set.checked_sub(self.tags.base_sets)?;
        self.tags.sets.get(i as usize).map(|s| &s[..])
    }
    #[inline]
    pub(super) fn tagset_flags(&self, set: u32) -> Option<u8> {
        let i = set.checked_sub(self.tags.base_sets)?;
        self.tags.flags.get(i as usize).copied()
    }
    #[inline]
    pub(super) fn tag_text(&self, tag: u32) -> Option<&str> {
        let i = tag.checked_sub(self.tags.base_texts)?;
        self.tags.texts.get(i as usize).map(|t| &t[..])
    }
    #[inline]
    pub(super) fn tag_id(&self, text: &str) -> Option<u32> {
        self.tags.ids.get(text).copied()
    }

    /// Approximate heap bytes.
    pub fn heap_bytes(&self) -> usize {
        let slot = |entry: usize| entry + 1;
        self.lists
            .values()
            .map(|l| slot(64) + l.row.heap_bytes() + l.roles.capacity() * 4)
            .sum::<usize>()
            + self.primary.capacity() * slot(20)
            + self
                .following
                .values()
                .map(|r| slot(56) + r.heap_bytes())
                .sum::<usize>()
            + self
                .followers
                .values()
                .map(|f| {
                    slot(8)
                        + 200
                        + (f.latest.capacity() + f.by_count.capacity() + f.by_address.capacity())
                            * 4
                        + f.tagged.capacity() * 8
                        + (f.adds.capacity() + f.drops.capacity()) * 24
                })
                .sum::<usize>()
            + self
                .lists_of
                .values()
                .map(|v| slot(28) + v.capacity() * 8)
                .sum::<usize>()
            + self
                .tags
                .texts
                .iter()
                .map(|t| t.len() * 2 + 32)
                .sum::<usize>()
            + self
                .tags
                .sets
                .iter()
                .map(|s| s.len() * 8 + 32)
                .sum::<usize>()
            + self.notifications.heap_bytes()
            + self.notify_memo.heap_bytes()
            + self
                .added_ops
                .values()
                .map(|v| 40 + v.capacity() * 24)
                .sum::<usize>()
            + self.new_accounts.capacity() * 20
            + self.new_keys.capacity() * 8
            + self.new_ids.capacity() * 25
    }
}
