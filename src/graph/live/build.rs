//! Builds a [`LiveIndex`] from a base graph and the tail's entities: the
//! live lists, then the primary-list rule over the accounts they (or a
//! primary-list row) affect, their following rows, the followers (and
//! which of them are hidden) of every account those rows name or named,
//! the lists by role, and the notifications (`notify.rs`). Every step
//! reads the base's indexes directly: a build depends only on the base
//! and the entities, so the tail builds it again after each poll. What a
//! hub costs (its followers' orders, its notification row) is shared
//! with the previous build over the same base where its inputs are the
//! same, and its follower orders are patched from that build's where some
//! followers' records differ (`splice.rs`), so a poll pays for what it
//! changed; new account ids and tag ids carry over from that build so
//! that equal inputs compare equal.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::splice::{insert_all, splice, symmetric_difference};
use super::{Changes, LiveFollowers, LiveIndex, LiveList, LiveRow, LiveTags, NotLive};
use crate::graph::{AccountId, FollowerIndex, Graph, OwnRecords, Record, RecordRow};
use crate::graph::{FLAG_BLOCK, FLAG_MUTE, FLAG_TOP8};
use crate::snapshot::{Address, ListState};

pub(super) const ZERO: Address = [0; 20];

impl LiveIndex {
    /// The live index of `changes` over `g`'s base (a live index `g` may
    /// hold is ignored). `prev`: the previous build over the same base,
    /// whose unchanged parts are shared.
    pub fn build(
        g: &Graph,
        changes: &Changes<'_>,
        prev: Option<&LiveIndex>,
        same_counts: bool,
    ) -> Result<LiveIndex, NotLive> {
        let mut b = Builder {
            g,
            c: changes,
            prev,
            same_counts,
            out: LiveIndex::default(),
        };
        b.out.tags = prev.map_or_else(|| LiveTags::over(g), |p| p.tags.clone());
        b.new_accounts();
        b.lists();
        let (primary_affected, role_affected) = b.affected();
        b.primary(&primary_affected);
        b.following();
        b.followers();
        b.lists_of(&role_affected);
        let mut tags = std::mem::take(&mut b.out.tags);
        let (rows, added, memo) = super::notify::rows(g, changes, &b.out, &mut tags, prev)?;
        b.out.notifications = rows;
        b.out.added_ops = added;
        b.out.notify_memo = memo;
        b.out.tags = tags;
        b.out.entities = changes.lists.len() + changes.primary.len();
        Ok(b.out)
    }
}

struct Builder<'a> {
    g: &'a Graph,
    c: &'a Changes<'a>,
    prev: Option<&'a LiveIndex>,
    /// Whether `prev` ordered followers by the same counts (the same
    /// compacted values).
    same_counts: bool,
    out: LiveIndex,
}

impl Builder<'_> {
    /// The base's account, else the new one (`new_accounts` made it).
    fn id(&self, a: &Address) -> AccountId {
        match self.g.base.accounts.id(a) {
            Some(id) => id,
            None => self.out.new_ids[a],
        }
    }

    /// Ids after the base's, in the order first seen, for every address
    /// an entity names that the base lacks, and their order keys.
    fn new_accounts(&mut self) {
        let base = &self.g.base.accounts;
        let mut new: BTreeSet<Address> = BTreeSet::new();
        let mut note = |a: &Address| {
            if base.id(a).is_none() {
                new.insert(*a);
            }
        };
        for state in self.c.lists.values() {
            if let Some(row) = &state.row {
                if row.user != ZERO {
                    note(&row.user);
                }
                note(&row.owner);
                note(&row.manager);
                state.records.iter().for_each(|r| note(&r.address));
            }
        }
        for ops in &self.c.ops {
            ops.ops.iter().for_each(|(op, _)| note(&op.op.target));
        }
        // The hidden ops of the lists that may become primary: the live
        // ones and those a primary-list row names.
        let lists = &self.g.base.lists;
        let may_join = self.c.lists.keys().chain(self.c.primary.values().flatten());
        for &l in may_join {
            lists.hidden_ops(l).for_each(|(op, _)| note(&op.target));
        }
        let out = &mut self.out;
        out.base_accounts = base.len() as u32;
        // The previous build's ids stay (its rows are shared); the new
        // ones follow.
        if let Some(p) = self.prev {
            out.new_accounts.clone_from(&p.new_accounts);
            out.new_ids.clone_from(&p.new_ids);
        }
        for a in new {
            if !out.new_ids.contains_key(&a) {
                let id = out.base_accounts + out.new_accounts.len() as u32;
                out.new_ids.insert(a, id);
                out.new_accounts.push(a);
            }
        }
        let mut order: Vec<usize> = (0..out.new_accounts.len()).collect();
        order.sort_unstable_by_key(|&i| out.new_accounts[i]);
        let addresses = base.addresses();
        out.new_keys = vec![0; order.len()];
        let mut last: Option<(usize, u64)> = None;
        for i in order {
            let at = addresses.partition_point(|b| b < &out.new_accounts[i]);
            let rank = match last {
                Some((p, r)) if p == at => r + 1,
                _ => 0,
            };
            last = Some((at, rank));
            out.new_keys[i] = ((at as u64) << 32) | rank;
        }
    }

    /// Whether a live record equals a base one (its tag set by content:
    /// a live set may repeat a base set under another id).
    fn same_record(&self, base: Record, live: Record) -> bool {
        let tags = |set: u32| match self.out.tags.set_tags(set) {
            Some(tags) => tags,
            None => self.g.base.tags.set(set),
        };
        base.updated_at == live.updated_at && tags(base.tagset) == tags(live.tagset)
    }

    /// The base's followers of `t` in one of its orders (none for a new
    /// account).
    fn base_followers(
        &self,
        t: AccountId,
        order: fn(&FollowerIndex, AccountId) -> &[AccountId],
    ) -> &[AccountId] {
        if self.g.in_base(t) {
            order(&self.g.base.followers, t)
        } else {
            &[]
        }
    }

    /// Each live list: user, roles, and (with a user) its records.
    fn lists(&mut self) {
        for (&token, state) in self.c.lists {
            let mut list = LiveList::default();
            if let Some(row) = &state.row {
                list.exists = true;
                if row.user != ZERO {
                    list.user = Some(self.id(&row.user));
                }
                list.roles.extend(list.user);
                list.roles.push(self.id(&row.owner));
                list.roles.push(self.id(&row.manager));
                list.roles.sort_unstable();
                list.roles.dedup();
            }
            if list.user.is_some() {
                list.row = self.live_row(state);
            }
            self.out.lists.insert(token, list);
        }
    }

    /// A list's records with their visible tags, targets in address
    /// order.
    fn live_row(&mut self, state: &ListState) -> LiveRow {
        let mut texts: BTreeMap<&Address, Vec<&str>> = BTreeMap::new();
        for t in &state.tags {
            texts.entry(&t.address).or_default().push(&t.tag);
        }
        let mut records = Vec::with_capacity(state.records.len());
        for r in &state.records {
            let set = match texts.get_mut(&r.address) {
                Some(t) => self.out.tags.set_of(self.g, t),
                None => 0,
            };
            records.push((self.id(&r.address), r.updated_at, set));
        }
        records.sort_unstable_by_key(|r| self.out.key(r.0));
        records.dedup_by_key(|r| r.0);
        let targets: Vec<AccountId> = records.iter().map(|r| r.0).collect();
        let mut by_id = Vec::new();
        if targets.iter().any(|&t| !self.g.in_base(t)) {
            by_id = targets
                .iter()
                .enumerate()
                .map(|(i, &t)| (t, i as u32))
                .collect();
            by_id.sort_unstable();
        }
        LiveRow {
            targets,
            times: records.iter().map(|r| r.1).collect(),
            sets: records.iter().map(|r| r.2).collect(),
            by_id,
        }
    }

    /// The accounts whose primary list may have changed (the users, then
    /// and now, of the live lists; the re-read accounts) and those whose
    /// lists by role may have (every role, then and now).
    fn affected(&self) -> (BTreeSet<AccountId>, BTreeSet<AccountId>) {
        let base = &self.g.base;
        let mut primary = BTreeSet::new();
        let mut roles = BTreeSet::new();
        for (&token, list) in &self.out.lists {
            primary.extend(base.lists.user(token));
            primary.extend(list.user);
            roles.extend(list.roles.iter().copied());
            roles.extend(base.lists.roles(token).into_iter().flatten().flatten());
        }
        // An address the base does not know is no list's user: no primary
        // list either way.
        primary.extend(
            self.c
                .primary
                .keys()
                .filter(|&a| *a != ZERO)
                .filter_map(|a| base.accounts.id(a)),
        );
        (primary, roles)
    }

    /// The primary-list rule for the affected accounts: their row in
    /// `primary_lists` names a list whose user they are.
    fn primary(&mut self, affected: &BTreeSet<AccountId>) {
        let base = &self.g.base;
        for &a in affected {
            let address = match self.out.new_account(a) {
                Some(&address) => address,
                None => *base.accounts.address(a),
            };
            let row = match self.c.primary.get(&address) {
                Some(&p) => p,
                None if self.g.in_base(a) => base.accounts.primary_row(a),
                None => None,
            };
            let user = |t: u64| match self.out.lists.get(&t) {
                Some(l) => l.user,
                None => base.lists.user(t),
            };
            let primary = row.filter(|&t| user(t) == Some(a));
            self.out.primary.insert(a, primary);
        }
    }

    /// The following row of each affected account whose primary list, or
    /// its records, changed.
    fn following(&mut self) {
        let mut rows = Vec::new();
        for (&a, &p) in &self.out.primary {
            let live = p.and_then(|t| self.out.lists.get(&t));
            if p == self.g.base_primary_list(a) && live.is_none() {
                continue;
            }
            let row = match (p, live) {
                (None, _) => LiveRow::default(),
                (Some(_), Some(list)) => list.row.clone(),
                (Some(t), None) => LiveRow::from_row(base_list_row(self.g, t)),
            };
            rows.push((a, row));
        }
        self.out.following.extend(rows);
    }

    /// The followers and counts of every account a changed following
    /// row names or named.
    fn followers(&mut self) {
        let base = &self.g.base;
        let mut added: BTreeMap<AccountId, Vec<(AccountId, Record)>> = BTreeMap::new();
        let mut dropped: BTreeMap<AccountId, Vec<(AccountId, Record)>> = BTreeMap::new();
        // Only the accounts whose record by a changed row differs from the
        // base's: the others' followers, counts and tags are the base's
        // (a re-read list mostly differs in one record, and its other
        // targets are often hubs).
        let mut touched: BTreeSet<AccountId> = BTreeSet::new();
        for (&f, row) in &self.out.following {
            let old = base.records.row(f);
            for (i, &t) in row.targets.iter().enumerate() {
                let record = Record {
                    updated_at: row.times[i],
                    tagset: row.sets[i],
                };
                added.entry(t).or_default().push((f, record));
                if !old.find(t).is_some_and(|was| self.same_record(was, record)) {
                    touched.insert(t);
                }
            }
            for (i, &t) in old.targets.iter().enumerate() {
                dropped.entry(t).or_default().push((f, old.record(i)));
                if row.find(t).is_none() {
                    touched.insert(t);
                }
            }
        }
        let key = |x: AccountId| self.out.key(x);
        let mut done = Vec::with_capacity(touched.len());
        for t in touched {
            let mut adds = added.remove(&t).unwrap_or_default();
            adds.sort_unstable_by_key(|a| a.0);
            let mut drops = dropped.remove(&t).unwrap_or_default();
            drops.sort_unstable_by_key(|d| d.0);
            let prev = self.prev.and_then(|p| p.followers.get(&t));
            if let Some(same) = prev.filter(|f| f.adds == adds && f.drops == drops) {
                if self.same_counts {
                    done.push((t, same.clone()));
                    continue;
                }
                // Only the order by count depends on the compacted counts.
                let mut followers = LiveFollowers::clone(same);
                followers.by_count.sort_unstable_by_key(|&x| {
                    (Reverse(self.g.compacted_followers_count(x)), key(x))
                });
                done.push((t, Arc::new(followers)));
                continue;
            }
            // Inputs that moved since the previous build: its orders with
            // the followers whose record changed taken out and put back.
            if let Some(p) = prev.filter(|_| self.same_counts) {
                if let Some(orders) = self.patched(t, p, &adds, &drops) {
                    let hidden = self.hidden(t, &adds, &drops);
                    done.push((t, Arc::new(orders.with(adds, drops, hidden))));
                    continue;
                }
            }
            // The base followers of t whose row changed: they leave every
            // order (those that still follow t come back with `adds`). A
            // hub's orders are copied once each, and each follower checked
            // against these few, not against every changed row.
            let mut gone: Vec<AccountId> = drops.iter().map(|d| d.0).collect();
            gone.sort_unstable();
            let kept = |ids: &[AccountId]| -> Vec<AccountId> {
                if gone.is_empty() {
                    return ids.to_vec();
                }
                ids.iter()
                    .copied()
                    .filter(|x| gone.binary_search(x).is_err())
                    .collect()
            };
            let time_of = |x: AccountId| match adds.binary_search_by_key(&x, |a| a.0) {
                Ok(i) => adds[i].1.updated_at,
                Err(_) => base.records.record(x, t).map_or(0, |r| r.updated_at),
            };
            let new: Vec<AccountId> = adds.iter().map(|a| a.0).collect();
            let by_address = insert_all(
                kept(self.base_followers(t, FollowerIndex::by_address)),
                &new,
                key,
            );
            let latest = insert_all(
                kept(self.base_followers(t, FollowerIndex::latest)),
                &new,
                |x| (Reverse(time_of(x)), key(x)),
            );
            // In the order of the compacted counts (refreshed ones
            // re-sorted the base rows they change).
            let refreshed = self.g.compacted.as_ref().and_then(|c| c.by_count.get(&t));
            let by_count = insert_all(
                kept(refreshed.map_or_else(
                    || self.base_followers(t, FollowerIndex::by_count),
                    |row| &row[..],
                )),
                &new,
                |x| (Reverse(self.g.compacted_followers_count(x)), key(x)),
            );
            let hidden = self.hidden(t, &adds, &drops);
            // The base's taggers of t but those that left (`gone`), then
            // the added records with tags.
            let gone_tagged: BTreeSet<&Address> = drops
                .iter()
                .map(|(f, _)| base.accounts.address(*f))
                .collect();
            let mut tagged: Vec<(AccountId, u32)> = base
                .tagged_by
                .of(t)
                .filter(|(a, _)| !gone_tagged.contains(a))
                .filter_map(|(a, set)| Some((base.accounts.id(a)?, set)))
                .chain(
                    adds.iter()
                        .filter(|(_, r)| r.tagset != 0)
                        .map(|(f, r)| (*f, r.tagset)),
                )
                .collect();
            tagged.sort_unstable_by_key(|&(x, _)| key(x));
            let orders = Orders {
                latest,
                by_count,
                by_address,
                tagged,
            };
            done.push((t, Arc::new(orders.with(adds, drops, hidden))));
        }
        self.out.followers.extend(done);
    }

    /// Followers of `t` whose record hides them (`block`, `mute`).
    fn hidden(
        &self,
        t: AccountId,
        adds: &[(AccountId, Record)],
        drops: &[(AccountId, Record)],
    ) -> u32 {
        let hides = |r: &Record| self.out.tags.flags(self.g, r.tagset) & HIDING != 0;
        (self.g.base.stats.hidden_followers(t)
            + adds.iter().filter(|(_, r)| hides(r)).count() as u32)
            .saturating_sub(drops.iter().filter(|(_, r)| hides(r)).count() as u32)
    }

    /// `t`'s followers from `prev`'s (a build over the same base and
    /// counts) when only some followers' records differ: each order loses
    /// their old places and gains their new ones, a binary search each and
    /// one copy of the order, where a build from the base filters every
    /// follower of a hub and finds each tagger's id by address. `None`
    /// when an old place is not where its key says (then t is built from
    /// the base).
    fn patched(
        &self,
        t: AccountId,
        prev: &LiveFollowers,
        adds: &[(AccountId, Record)],
        drops: &[(AccountId, Record)],
    ) -> Option<Orders> {
        let base = &self.g.base;
        // f's record of t as a set of inputs shows it (None: f does not
        // follow t).
        let record = |adds: &[(AccountId, Record)], drops: &[(AccountId, Record)], f| match adds
            .binary_search_by_key(&f, |a| a.0)
        {
            Ok(i) => Some(adds[i].1),
            Err(_) if drops.binary_search_by_key(&f, |d| d.0).is_ok() => None,
            Err(_) => base.records.record(f, t),
        };
        let mut changed: Vec<AccountId> = symmetric_difference(&prev.adds, adds);
        changed.extend(symmetric_difference(&prev.drops, drops));
        changed.sort_unstable();
        changed.dedup();
        // (follower, old record) out, (follower, new record) in.
        let mut out = Vec::new();
        let mut put = Vec::new();
        for f in changed {
            let (was, now) = (record(&prev.adds, &prev.drops, f), record(adds, drops, f));
            if was != now {
                out.extend(was.map(|r| (f, r)));
                put.extend(now.map(|r| (f, r)));
            }
        }
        let key = |x: AccountId| self.out.key(x);
        // Each order's key of a follower with its record; the orders hold
        // the previous records (the changed followers' are in `out`).
        let time = |x: AccountId| record(&prev.adds, &prev.drops, x).map_or(0, |r| r.updated_at);
        let by_address = splice(
            &prev.by_address,
            out.iter().map(|&(f, _)| key(f)),
            put.iter().map(|&(f, _)| (key(f), f)),
            |&x| key(x),
        )?;
        let latest = splice(
            &prev.latest,
            out.iter().map(|&(f, r)| (Reverse(r.updated_at), key(f))),
            put.iter()
                .map(|&(f, r)| ((Reverse(r.updated_at), key(f)), f)),
            |&x| (Reverse(time(x)), key(x)),
        )?;
        let count = |x: AccountId| (Reverse(self.g.compacted_followers_count(x)), key(x));
        let by_count = splice(
            &prev.by_count,
            out.iter().map(|&(f, _)| count(f)),
            put.iter().map(|&(f, _)| (count(f), f)),
            |&x| count(x),
        )?;
        let tagged = splice(
            &prev.tagged,
            out.iter()
                .filter(|(_, r)| r.tagset != 0)
                .map(|&(f, _)| key(f)),
            put.iter()
                .filter(|(_, r)| r.tagset != 0)
                .map(|&(f, r)| (key(f), (f, r.tagset))),
            |&(x, _)| key(x),
        )?;
        Some(Orders {
            latest,
            by_count,
            by_address,
            tagged,
        })
    }

    /// Each role-affected account's lists: the base's but the live ones,
    /// and the live lists that name it.
    fn lists_of(&mut self, affected: &BTreeSet<AccountId>) {
        for &a in affected {
            let mut lists: Vec<u64> = self
                .g
                .base
                .lists
                .lists_of(a)
                .iter()
                .copied()
                .filter(|t| !self.out.lists.contains_key(t))
                .collect();
            lists.extend(
                self.out
                    .lists
                    .iter()
                    .filter(|(_, l)| l.exists && l.roles.contains(&a))
                    .map(|(&t, _)| t),
            );
            lists.sort_unstable();
            lists.dedup();
            self.out.lists_of.insert(a, lists);
        }
    }
}

const HIDING: u8 = FLAG_BLOCK | FLAG_MUTE;

/// A follower entry's orders (see [`LiveFollowers`]).
struct Orders {
    latest: Vec<AccountId>,
    by_count: Vec<AccountId>,
    by_address: Vec<AccountId>,
    tagged: Vec<(AccountId, u32)>,
}

impl Orders {
    fn with(
        self,
        adds: Vec<(AccountId, Record)>,
        drops: Vec<(AccountId, Record)>,
        hidden: u32,
    ) -> LiveFollowers {
        LiveFollowers {
            adds,
            drops,
            latest: self.latest,
            by_count: self.by_count,
            by_address: self.by_address,
            hidden,
            tagged: self.tagged,
        }
    }
}

/// List `token`'s own records in the base (where the base keeps them).
fn base_list_row(g: &Graph, token: u64) -> RecordRow<'_> {
    let base = &g.base;
    match base
        .lists
        .own_records(token, |u| base.accounts.primary_list(u))
    {
        Some(OwnRecords::Primary(user)) => base.records.row(user),
        Some(OwnRecords::Other(row)) => base.lists.others().row(row),
        None => RecordRow::with_sets(&[], &[], &[], &[]),
    }
}

impl LiveTags {
    /// Empty, its ids continuing the base's.
    fn over(g: &Graph) -> LiveTags {
        let (base_texts, base_sets) = g.base.tags.lens();
        LiveTags {
            base_texts,
            base_sets,
            ..LiveTags::default()
        }
    }

    /// The id of a tag text, the base's or a new one.
    pub(super) fn tag(&mut self, g: &Graph, text: &str) -> u32 {
        if let Some(id) = g.base.tags.id(text).or_else(|| self.ids.get(text).copied()) {
            return id;
        }
        let id = self.base_texts + self.texts.len() as u32;
        self.texts.push(text.into());
        self.ids.insert(text.into(), id);
        id
    }

    fn text<'g>(&'g self, g: &'g Graph, tag: u32) -> &'g str {
        match tag.checked_sub(self.base_texts) {
            Some(i) => &self.texts[i as usize],
            None => g.base.tags.text(tag),
        }
    }

    /// The set of these tag texts (any order, repeats allowed), as a
    /// new set: the base keeps no lookup of its sets by content.
    fn set_of(&mut self, g: &Graph, texts: &mut Vec<&str>) -> u32 {
        texts.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        texts.dedup();
        if texts.is_empty() {
            return 0;
        }
        let ids: Box<[u32]> = texts.iter().map(|t| self.tag(g, t)).collect();
        if let Some(&id) = self.set_ids.get(&ids) {
            return id;
        }
        let flags = ids.iter().fold(0u8, |f, &tag| {
            f | match self.text(g, tag) {
                "block" => FLAG_BLOCK,
                "mute" => FLAG_MUTE,
                "top8" => FLAG_TOP8,
                _ => 0,
            }
        });
        let id = self.base_sets + self.sets.len() as u32;
        self.sets.push(ids.clone());
        self.set_ids.insert(ids, id);
        self.flags.push(flags);
        id
    }

    /// A new set's tag ids (`None`: a base set).
    fn set_tags(&self, set: u32) -> Option<&[u32]> {
        let i = set.checked_sub(self.base_sets)?;
        self.sets.get(i as usize).map(|s| &s[..])
    }

    /// A set's flags, the base's or a new one's.
    fn flags(&self, g: &Graph, set: u32) -> u8 {
        match set.checked_sub(self.base_sets) {
            Some(i) => self.flags[i as usize],
            None => g.base.tags.set_flags(set),
        }
    }
}
