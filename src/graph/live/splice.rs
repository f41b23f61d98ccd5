//! Edits of a live index's follower orders: the followers that arrive
//! in an order put in their places, those that leave taken out, each
//! found by a binary search on the order's key and the order copied once
//! in the segments between them (a hub's order is not shifted once per
//! change).

use crate::graph::{AccountId, Record};

/// `v` (ordered by `key`) with `new` (absent from it) inserted in
/// order: a binary search each, then one pass that copies `v` in the
/// segments between them (a hub's order is not shifted once per insert).
pub(super) fn insert_all<K: Ord>(
    v: Vec<AccountId>,
    new: &[AccountId],
    key: impl Fn(AccountId) -> K,
) -> Vec<AccountId> {
    if new.is_empty() {
        return v;
    }
    let mut at: Vec<(usize, K, AccountId)> = new
        .iter()
        .map(|&x| {
            let k = key(x);
            (v.partition_point(|&y| key(y) < k), k, x)
        })
        .collect();
    at.sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let mut out = Vec::with_capacity(v.len() + new.len());
    let mut from = 0;
    for (i, _, x) in at {
        out.extend_from_slice(&v[from..i]);
        out.push(x);
        from = i;
    }
    out.extend_from_slice(&v[from..]);
    out
}

/// `v` (ordered by `key`, keys unique) without the elements of keys
/// `gone` and with `new` (absent from it) in order: a binary search each,
/// then one copy of `v` in the segments between them. `None` when a key
/// of `gone` is not in `v`.
pub(super) fn splice<T: Copy, K: Ord>(
    v: &[T],
    gone: impl Iterator<Item = K>,
    new: impl Iterator<Item = (K, T)>,
    key: impl Fn(&T) -> K,
) -> Option<Vec<T>> {
    let mut skip = Vec::new();
    for k in gone {
        let i = v.partition_point(|y| key(y) < k);
        if v.get(i).is_none_or(|y| key(y) != k) {
            return None;
        }
        skip.push(i);
    }
    skip.sort_unstable();
    let mut at: Vec<(usize, K, T)> = new
        .map(|(k, x)| (v.partition_point(|y| key(y) < k), k, x))
        .collect();
    at.sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let mut out = Vec::with_capacity((v.len() + at.len()).saturating_sub(skip.len()));
    let mut skip = skip.into_iter().peekable();
    let mut from = 0;
    // v[from..to] but the skipped places.
    let mut copy = |out: &mut Vec<T>, from: &mut usize, to: usize| {
        while let Some(i) = skip.next_if(|&i| i < to) {
            out.extend_from_slice(&v[*from..i]);
            *from = i + 1;
        }
        out.extend_from_slice(&v[*from..to]);
        *from = to;
    };
    for (i, _, x) in at {
        copy(&mut out, &mut from, i);
        out.push(x);
    }
    copy(&mut out, &mut from, v.len());
    Some(out)
}

/// The followers whose entry (its presence or its record) differs
/// between two lists of entries sorted by follower.
pub(super) fn symmetric_difference(
    a: &[(AccountId, Record)],
    b: &[(AccountId, Record)],
) -> Vec<AccountId> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.0 == y.0 => {
                if x.1 != y.1 {
                    out.push(x.0);
                }
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x.0 < y.0 => {
                out.push(x.0);
                i += 1;
            }
            (Some(x), None) => {
                out.push(x.0);
                i += 1;
            }
            (_, Some(y)) => {
                out.push(y.0);
                j += 1;
            }
            (None, None) => unreachable!(),
        }
    }
    out
}
