//! The live notification rows: an op is visible while its list is its
//! user's primary list, with that user as actor, so a list's ops change
//! when it gets new ops, its history is read again, or it becomes or
//! stops being a primary list.
//!
//! The order is a compaction's: `updated_at` descending, then the base's
//! ops after the new ones, the base's by `seq` descending and the new
//! ones by their place among the new ops descending. A target's row is
//! its base row without the ops of lists that stopped being primary (or
//! whose history was read again), with the new actor of lists whose user
//! changed while they stayed primary, with the ops the base kept hidden of
//! lists that became primary (the lists index keeps them), merged with the
//! new ops. Such a hidden op at the very `updated_at` of one of the row's
//! base ops would need both `seq`s, which the graph keeps only for hidden
//! ops: [`NotLive::HiddenOps`], and the tail compacts.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use super::Changes;
use super::{LiveIndex, NotLive};
use crate::graph::notifications::{Notification, NotificationRow, NotificationRows};
use crate::graph::{AccountId, FastMap, Graph};
use crate::snapshot::{Address, OpRow, OP_TAG};

/// New ops of rows that only gain some, each with its place in the row.
pub(super) type AddedOps = FastMap<AccountId, Vec<(u32, Notification)>>;

/// An op in a row's order: (`updated_at`, new (1) or base (0), then its
/// place among the new ops or its base `seq`).
type Key = (i64, u8, u64);
/// Ops with their keys, newest first.
type Placed = Vec<(Key, Notification)>;

/// What the rows written whole were made of, for the next build over
/// the same base: a row whose new and joining ops are the same, none of
/// whose actors' fate changed, is shared, not written again.
#[derive(Default)]
pub(super) struct Memo {
    /// Each written row's new ops and joining base ops, newest first.
    inputs: FastMap<AccountId, (Placed, Placed)>,
    /// Base actors whose ops leave every row, and those whose ops take
    /// another actor.
    gone: BTreeSet<AccountId>,
    moved: BTreeMap<AccountId, AccountId>,
}

impl Memo {
    pub(super) fn heap_bytes(&self) -> usize {
        let entry = std::mem::size_of::<(Key, Notification)>();
        self.inputs
            .values()
            .map(|(a, b)| 64 + (a.capacity() + b.capacity()) * entry)
            .sum::<usize>()
            + (self.gone.len() + self.moved.len()) * 16
    }
}

pub(super) fn rows(
    g: &Graph,
    c: &Changes<'_>,
    out: &LiveIndex,
    tags: &mut super::LiveTags,
    prev: Option<&LiveIndex>,
) -> Result<(NotificationRows, AddedOps, Memo), NotLive> {
    let base = &g.base;
    let id = |a: &Address| match base.accounts.id(a) {
        Some(id) => id,
        None => out.new_ids[a],
    };
    let primary_live = |u: AccountId| match out.primary.get(&u) {
        Some(&p) => p,
        None => g.base_primary_list(u),
    };
    let user_live = |t: u64| match out.lists.get(&t) {
        Some(l) => l.user,
        None => base.lists.user(t),
    };
    let actor_live = |t: u64| user_live(t).filter(|&u| primary_live(u) == Some(t));
    let actor_base = |t: u64| base.accounts.primary_list_users().get(t);

    // The lists whose visible ops may differ from the base's.
    let ops_of: BTreeMap<u64, &super::ListOps<'_>> = c.ops.iter().map(|o| (o.token, o)).collect();
    let mut lists: BTreeSet<u64> = out.lists.keys().copied().collect();
    lists.extend(ops_of.keys());
    for (&a, &p) in &out.primary {
        lists.extend(p);
        lists.extend(g.base_primary_list(a));
    }
    // Lists whose base ops leave every row, lists whose base ops stay
    // with another actor (by their base actor), and the new ops with
    // their targets.
    let mut dropped: BTreeSet<u64> = BTreeSet::new();
    let mut moved: BTreeMap<AccountId, AccountId> = BTreeMap::new();
    let mut joined: BTreeMap<u64, AccountId> = BTreeMap::new();
    let mut added: BTreeMap<AccountId, Vec<(Key, Notification)>> = BTreeMap::new();
    for &l in &lists {
        let (was, now) = (actor_base(l), actor_live(l));
        let ops = ops_of.get(&l);
        let replace = ops.is_some_and(|o| o.replace);
        match (was, now) {
            _ if replace => dropped.extend(was.map(|_| l)),
            (Some(a), Some(b)) if a != b => {
                moved.insert(a, b);
            }
            (Some(_), None) => {
                dropped.insert(l);
            }
            (None, Some(b)) if base.lists.has_hidden_ops(l) => {
                joined.insert(l, b);
            }
            _ => {}
        }
        let (Some(actor), Some(ops)) = (now, ops) else {
            continue;
        };
        for &(op, place) in &ops.ops {
            let n = notification(op, actor, tags, g);
            added
                .entry(id(&op.op.target))
                .or_default()
                .push(((op.updated_at, 1, place), n));
        }
    }
    // The targets of the base ops that leave or change actor: from the
    // base's rows by actor.
    // The base ops of lists that became primary, by target.
    let mut joins: BTreeMap<AccountId, Vec<(Key, Notification)>> = BTreeMap::new();
    for (&l, &actor) in &joined {
        for (op, tag) in base.lists.hidden_ops(l) {
            // Noted by `Builder::new_accounts` (never missing; a deferral
            // rather than a panic if it were).
            let known = base.accounts.id(&op.target);
            let Some(t) = known.or_else(|| out.new_ids.get(&op.target).copied()) else {
                return Err(NotLive::HiddenOps(l));
            };
            let n = Notification {
                updated_at: op.updated_at,
                actor,
                opcode: op.opcode,
                tag_id: if op.opcode >= OP_TAG {
                    tags.tag(g, tag)
                } else {
                    0
                },
            };
            joins
                .entry(t)
                .or_default()
                .push(((op.updated_at, 0, op.seq), n));
        }
    }
    // Rows whose base ops change (they leave, change actor or join) are
    // written whole; the others only gain new ops, kept beside the base
    // row with their places in it (a hub's row is not copied).
    let mut rewritten: BTreeSet<AccountId> = joins.keys().copied().collect();
    // A base op is of a dropped list when its actor is that list's base
    // user: the actors of dropped and moved ops, as bits, so that the
    // rows rewritten (hubs' among them) cost a bit test per op.
    let gone: BTreeSet<AccountId> = dropped.iter().filter_map(|&l| actor_base(l)).collect();
    let mut actors: Vec<AccountId> = gone.iter().copied().collect();
    actors.extend(moved.keys());
    let mut bits = vec![0u64; (base.accounts.len()).div_ceil(64)];
    for &a in &actors {
        bits[a as usize / 64] |= 1 << (a % 64);
    }
    if !actors.is_empty() {
        rewritten.extend(base.notifications.targets_of(&actors));
    }
    let mut plain = FastMap::default();
    for (&t, new) in added.iter_mut().filter(|(t, _)| !rewritten.contains(t)) {
        new.sort_unstable_by_key(|e| Reverse(e.0));
        let of = g.base_notifications(t);
        // A new op goes before the base's ops of its time.
        let placed: Vec<(u32, Notification)> = new
            .iter()
            .enumerate()
            .map(|(k, (key, op))| ((of.partition_point(|at| at > key.0) + k) as u32, *op))
            .collect();
        plain.insert(t, placed);
    }

    // The rows of the previous build that stay as they were: those of
    // targets that no actor whose fate changed since reaches.
    let shared = prev.map(|p| {
        let m = &p.notify_memo;
        let mut changed: Vec<AccountId> = gone.symmetric_difference(&m.gone).copied().collect();
        changed.extend(
            moved
                .keys()
                .chain(m.moved.keys())
                .filter(|a| moved.get(a) != m.moved.get(a)),
        );
        let dirty: BTreeSet<AccountId> = if changed.is_empty() {
            BTreeSet::new()
        } else {
            base.notifications
                .targets_of(&changed)
                .into_iter()
                .collect()
        };
        (p, dirty)
    });
    let mut memo = Memo::default();
    let mut rows = Vec::with_capacity(rewritten.len());
    for t in rewritten {
        let mut new = added.remove(&t).unwrap_or_default();
        new.sort_unstable_by_key(|e| Reverse(e.0));
        let mut join = joins.remove(&t).unwrap_or_default();
        join.sort_unstable_by_key(|e| Reverse(e.0));
        let same = shared.as_ref().and_then(|(p, dirty)| {
            let was = p.notify_memo.inputs.get(&t)?;
            let row = p.notifications.row(t)?;
            (!dirty.contains(&t) && was.0 == new && was.1 == join).then(|| row.clone())
        });
        if let Some(row) = same {
            rows.push((t, row));
            memo.inputs.insert(t, (new, join));
            continue;
        }
        let of = g.base_notifications(t);
        let kept = (0..of.len()).map(|i| of.get(i)).filter_map(|mut n| {
            if bits[n.actor as usize / 64] >> (n.actor % 64) & 1 == 0 {
                return Some(n);
            }
            if gone.contains(&n.actor) {
                return None;
            }
            if let Some(&actor) = moved.get(&n.actor) {
                n.actor = actor;
            }
            Some(n)
        });
        let Some(base_ops) = merge_base(kept, join.iter().copied()) else {
            // A joining op at the time of a base op: their `seq`s (which
            // the graph does not keep for visible ops) would order them.
            return Err(NotLive::HiddenOps(
                joined.keys().next().copied().unwrap_or(0),
            ));
        };
        let row = merge_newest_first(base_ops.into_iter(), new.iter().copied());
        rows.push((t, NotificationRow::new(row)));
        memo.inputs.insert(t, (new, join));
    }
    memo.gone = gone;
    memo.moved = moved;
    Ok((NotificationRows::new(rows.into_iter()), plain, memo))
}

/// A base row (newest first) with the base ops of lists that became
/// primary (newest first); `None` when one of them has the `updated_at`
/// of a row's op.
fn merge_base(
    row: impl Iterator<Item = Notification>,
    joined: impl Iterator<Item = (Key, Notification)>,
) -> Option<Vec<Notification>> {
    let mut out = Vec::new();
    let mut joined = joined.peekable();
    for b in row {
        while let Some((_, n)) = joined.next_if(|(k, _)| k.0 > b.updated_at) {
            out.push(n);
        }
        if joined.peek().is_some_and(|(k, _)| k.0 == b.updated_at) {
            return None;
        }
        out.push(b);
    }
    out.extend(joined.map(|(_, n)| n));
    Some(out)
}

/// A base row (newest first) merged with new ops (newest first): at
/// equal `updated_at` the new ones come first.
fn merge_newest_first(
    base: impl Iterator<Item = Notification>,
    new: impl Iterator<Item = (Key, Notification)>,
) -> Vec<Notification> {
    let mut out = Vec::new();
    let mut new = new.peekable();
    for b in base {
        while let Some((_, n)) = new.next_if(|(k, _)| k.0 >= b.updated_at) {
            out.push(n);
        }
        out.push(b);
    }
    out.extend(new.map(|(_, n)| n));
    out
}

fn notification(
    op: &OpRow,
    actor: AccountId,
    tags: &mut super::LiveTags,
    g: &Graph,
) -> Notification {
    Notification {
        updated_at: op.updated_at,
        actor,
        opcode: op.op.opcode,
        tag_id: if op.op.opcode >= OP_TAG {
            tags.tag(g, &op.op.tag)
        } else {
            0
        },
    }
}
