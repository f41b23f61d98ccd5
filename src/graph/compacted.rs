//! Compacted values refreshed in memory: the counts, ranks and orders
//! docs/live.md calls compacted (the leaderboard and its search, ranked
//! orders, `/stats`, orders by a followers count), recomputed over the
//! base with the tail's entities in place, without writing or loading
//! files. A graph that holds one answers those values from it, and every
//! other value from the base and its live index as before; together
//! that is the answer of a full load of the export at the refresh's
//! poll (the tests hold both against one).
//!
//! Account ids stay the base's and the live index's (new accounts after
//! the base's, in the order first seen), so every order here ties by the
//! graph's address-order key, not by id.
//!
//! Cost (n accounts, k accounts whose counts the entities change, b
//! leaderboard accounts): the counts copied (20 bytes per account) and
//! the k recounted from their rows; the leaderboard, the five ranked
//! orders and the search index rebuilt as at load (O(n log n), the
//! search index dominating: it is a load's search phase); each base
//! followers row that holds one of the k re-sorted by count (a hub's
//! whole row, kept only if its order changed); `/stats` from the
//! entities' lists against the base's (O(lists) to count owners). Memory:
//! a second copy of what it replaces, about a tenth of a graph, while the
//! old one serves.
//!
//! Some changes it does not take (a list's ops history read again, a
//! list that stopped existing): the caller folds the entities into files
//! then ([`NeedsFold`]).

use std::cmp::Reverse;

use rayon::prelude::*;

use super::live::Changes;
use super::ranked::RankedOrders;
use super::ranks::{Counts, Stats};
use super::{AccountId, FastMap, GlobalStats, Graph, SearchIndex, FLAG_BLOCK, FLAG_TOP8};
use crate::snapshot::Address;

/// The compacted values of one refresh (see the module doc).
pub(super) struct Compacted {
    pub(super) stats: Stats,
    pub(super) ranked: RankedOrders,
    pub(super) search: SearchIndex,
    /// The leaderboard's accounts in address order (40).
    pub(super) board_by_address: Vec<AccountId>,
    /// Base followers rows whose order by count changed.
    pub(super) by_count: FastMap<AccountId, Box<[AccountId]>>,
    pub(super) global: GlobalStats,
}

/// Why the held entities must be folded into files instead.
#[derive(Debug)]
pub struct NeedsFold(pub &'static str);

impl std::fmt::Display for NeedsFold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl Compacted {
    /// The compacted values of `g` (a base with the live index of
    /// `changes`; a refresh `g` holds is not read).
    pub(super) fn build(g: &Graph, changes: &Changes<'_>) -> Result<Compacted, NeedsFold> {
        let global = global_stats(g, changes)?;
        let base = &g.base;
        let n_base = base.accounts.len();
        let live = g.live();
        let n = n_base + live.map_or(0, |l| l.new_account_count());
        let base_counts = base.stats.counts();
        let mut counts = Vec::with_capacity(n);
        counts.extend_from_slice(base_counts);
        counts.resize(n, Counts::default());
        let mut affected: Vec<AccountId> = live
            .map(|l| l.following_accounts().chain(l.touched_targets()).collect())
            .unwrap_or_default();
        affected.extend(n_base as AccountId..n as AccountId);
        affected.par_sort_unstable();
        affected.dedup();
        let recounted: Vec<Counts> = affected.par_iter().map(|&a| counts_of(g, a)).collect();
        for (&a, c) in affected.iter().zip(recounted) {
            counts[a as usize] = c;
        }

        let keyed = n > n_base;
        let key = |id: AccountId| g.order_key(id);
        let mut board: Vec<AccountId> = (0..n as AccountId)
            .into_par_iter()
            .filter(|&id| counts[id as usize].followers > 0 || g.primary_list(id).is_some())
            .collect();
        let mut board_by_address = board.clone();
        if keyed {
            board.par_sort_unstable_by_key(|&id| (Reverse(counts[id as usize].followers), key(id)));
            board_by_address.par_sort_unstable_by_key(|&id| key(id));
        } else {
            board.par_sort_unstable_by_key(|&id| (Reverse(counts[id as usize].followers), id));
        }
        let ranked = if keyed {
            RankedOrders::build_keyed(&counts, key)
        } else {
            RankedOrders::build(&counts)
        };
        let search = {
            let mut addresses: Vec<Address> = Vec::with_capacity(n);
            addresses.extend_from_slice(base.accounts.addresses());
            addresses.extend((n_base..n).map(|id| *g.address(id as AccountId)));
            SearchIndex::build(&board, &addresses, |id| {
                ((id as usize) < n_base)
                    .then(|| base.profiles.get(id).map(|p| p.name()))
                    .flatten()
            })
        };
        let by_count = resorted_rows(g, &counts, n_base);
        Ok(Compacted {
            stats: Stats::from_counts(counts, board),
            ranked,
            search,
            board_by_address,
            by_count,
            global,
        })
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.stats.heap_bytes()
            + self.ranked.heap_bytes()
            + self.search.heap_bytes()
            + self.board_by_address.capacity() * 4
            + self
                .by_count
                .values()
                .map(|row| row.len() * 4 + 16)
                .sum::<usize>()
    }
}

/// One account's five counts over the base and the live index (never a
/// refresh `g` holds): what a load of the merged tables counts.
fn counts_of(g: &Graph, a: AccountId) -> Counts {
    let (targets, _) = g.following_of(a);
    let followers = match g.live().and_then(|l| l.followers_count(a)) {
        Some(n) => n,
        None => base_followers(g, a),
    };
    let mut c = Counts {
        followers,
        following: targets.len() as u32,
        mutuals: targets
            .iter()
            .filter(|&&t| g.record(t, a).is_some())
            .count() as u32,
        blocks: 0,
        top8: 0,
    };
    for (_, set) in g.tagged_by(a) {
        let flags = g.tagset_flags(set);
        c.blocks += u32::from(flags & FLAG_BLOCK != 0);
        c.top8 += u32::from(flags & FLAG_TOP8 != 0);
    }
    c
}

/// The base's followers count of an account (0 for a new one).
fn base_followers(g: &Graph, id: AccountId) -> u32 {
    g.base
        .stats
        .counts()
        .get(id as usize)
        .map_or(0, |c| c.followers)
}

/// The base followers rows holding an account whose followers count
/// `counts` changes, sorted again by the new counts; those whose order is
/// the base's are left out.
fn resorted_rows(
    g: &Graph,
    counts: &[Counts],
    n_base: usize,
) -> FastMap<AccountId, Box<[AccountId]>> {
    let base = &g.base;
    let changed = |id: AccountId| counts[id as usize].followers != base_followers(g, id);
    // The rows that hold such an account in the base, or in the live
    // index (a live row is read from the live index, but its follower
    // may leave it again by a later poll's).
    let mut rows: Vec<AccountId> = (0..counts.len() as AccountId)
        .into_par_iter()
        .filter(|&c| changed(c))
        .flat_map_iter(|c| {
            let live = g.following_of(c).0.iter();
            live.chain(base.records.following_of(c).0).copied()
        })
        .filter(|&t| (t as usize) < n_base)
        .collect();
    rows.par_sort_unstable();
    rows.dedup();
    rows.into_par_iter()
        .filter_map(|t| {
            let old = base.followers.by_count(t);
            let mut row = old.to_vec();
            row.sort_unstable_by_key(|&f| (Reverse(counts[f as usize].followers), g.order_key(f)));
            (row != old).then(|| (t, row.into_boxed_slice()))
        })
        .collect()
}

/// `/stats` over the base with the entities' lists in place of theirs:
/// the base's counts, less what each entity's base list added, plus what
/// its re-read adds.
fn global_stats(g: &Graph, changes: &Changes<'_>) -> Result<GlobalStats, NeedsFold> {
    let base = &g.base;
    let lists = &base.lists;
    let mut s = lists.stats();
    // Per account: lists that own it, lists that hold a record of it
    // (changes against the base).
    let mut owners: FastMap<AccountId, i64> = FastMap::default();
    let mut holders: FastMap<AccountId, i64> = FastMap::default();
    // The live index names every address an entity holds.
    let id_of = |a: &Address| {
        g.account_id(a)
            .ok_or(NeedsFold("an address the live index lacks"))
    };
    for (&token, state) in changes.lists {
        let before = lists.parts(token);
        if let Some(parts) = &before {
            *owners.entry(parts.owner).or_default() -= 1;
            let row = match parts.user {
                Some(user) if g.base_primary_list(user) == Some(token) => base.records.row(user),
                _ => lists.others().row(parts.ordinal),
            };
            for &t in row.targets {
                *holders.entry(t).or_default() -= 1;
            }
        }
        if let Some(row) = &state.row {
            *owners.entry(id_of(&row.owner)?).or_default() += 1;
            let mut targets: Vec<AccountId> = state
                .records
                .iter()
                .map(|r| id_of(&r.address))
                .collect::<Result<_, _>>()?;
            targets.sort_unstable();
            targets.dedup();
            for t in targets {
                *holders.entry(t).or_default() += 1;
            }
        }
        match (before.is_some(), state.row.is_some()) {
            (true, false) => return Err(NeedsFold("a list stopped existing")),
            (false, true) => {
                s.list_count += 1;
                // Its ops in the base's files now count (unless its
                // history was read again: below).
                s.list_op_count += lists.unlisted_ops(token);
            }
            _ => {}
        }
    }
    // Ops: new ones count where their list exists; a history read again
    // replaces the base's ops of its list (a primary list's are its
    // user's visible ops, another's its hidden ones).
    let mut replaced_users: Vec<AccountId> = Vec::new();
    let mut removed_ops = 0u64;
    for ops in &changes.ops {
        let before = lists.parts(ops.token);
        let exists = match changes.lists.get(&ops.token) {
            Some(state) => state.row.is_some(),
            None => before.is_some(),
        };
        if exists {
            s.list_op_count += ops.ops.len() as u64;
        }
        if !ops.replace {
            continue;
        }
        match before {
            Some(parts) => match parts.user {
                Some(user) if g.base_primary_list(user) == Some(ops.token) => {
                    replaced_users.push(user)
                }
                _ => removed_ops += lists.hidden_ops(ops.token).count() as u64,
            },
            None if exists => removed_ops += lists.unlisted_ops(ops.token),
            None => {}
        }
    }
    replaced_users.sort_unstable();
    replaced_users.dedup();
    if !replaced_users.is_empty() {
        let visible: u64 = base
            .notifications
            .count_by_actor(&replaced_users)
            .iter()
            .sum();
        removed_ops += visible;
    }
    s.list_op_count = less(s.list_op_count, removed_ops)?;
    // Owners: how many base lists each one owns.
    let mut owned: FastMap<AccountId, i64> = owners.keys().map(|&o| (o, 0)).collect();
    for o in lists.owners() {
        if let Some(n) = owned.get_mut(&o) {
            *n += 1;
        }
    }
    for (o, delta) in owners {
        let was = owned[&o];
        s.user_count = adjust(s.user_count, was > 0, was + delta > 0)?;
    }
    // Holders: primary lists (the base's followers count) and the others.
    let mut held: FastMap<AccountId, i64> = holders
        .keys()
        .map(|&t| (t, i64::from(base_followers(g, t))))
        .collect();
    let others = lists.others();
    for row in 0..others.csr().node_count() as u32 {
        for t in others.following_of(row).0 {
            if let Some(n) = held.get_mut(t) {
                *n += 1;
            }
        }
    }
    for (t, delta) in holders {
        let was = held[&t];
        s.address_count = adjust(s.address_count, was > 0, was + delta > 0)?;
    }
    Ok(s)
}

/// A distinct count after one member's presence went from `was` to `is`.
fn adjust(count: u64, was: bool, is: bool) -> Result<u64, NeedsFold> {
    match (was, is) {
        (false, true) => Ok(count + 1),
        (true, false) => less(count, 1),
        _ => Ok(count),
    }
}

/// `count - n`; below zero the base and the entities disagree, and files
/// settle it.
fn less(count: u64, n: u64) -> Result<u64, NeedsFold> {
    count
        .checked_sub(n)
        .ok_or(NeedsFold("the base's counts and the entities disagree"))
}
