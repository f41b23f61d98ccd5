//! Generation for endpoints 8-14 and 38-41: what `gen.rs` does for 1-7,
//! for these. Snapshots get lists without a user (the zero address as
//! `user`, the exporter's form); requests aim at any list (primary or
//! not, userless, missing), at accounts that are only a list's owner or
//! manager, at the zero address, and try every `sort` and `direction`
//! of 38 with bad and unknown values.

use followgraph::snapshot::{format_address, Address};
use proptest::prelude::*;

use super::gen::{list_param, param_value, user_param, ReqSpec};
use super::gen_snap::Snap;
use super::target::{encode, hex_random_case, model_path, random_case, with_query, Req};

const ZERO: Address = [0; 20];

/// Changes to a built snapshot, see `tweak_snap`: (list choice, what)
/// per list made userless; record and op choices retargeted to the zero
/// address.
#[derive(Clone, Debug)]
pub struct Tweaks {
    pub userless: Vec<(usize, u8)>,
    pub zero_targets: Vec<usize>,
}

pub fn tweaks() -> impl Strategy<Value = Tweaks> {
    (
        prop::collection::vec((0..64usize, 0..6u8), 0..=2),
        prop::collection::vec(0..64usize, 0..=2),
    )
        .prop_map(|(userless, zero_targets)| Tweaks {
            userless,
            zero_targets,
        })
}

/// Makes some lists userless. Their records, tags and ops stay (visible
/// to 41 only), and a `primary_lists` row naming such a list for its
/// former user is then ignored. Sometimes the owner or manager is the zero
/// address too, so that 13 for it has lists by those roles only. Then
/// some records and ops target the zero address (40's example has it on
/// the leaderboard): it has followers and notifications.
pub fn tweak_snap(snap: &mut Snap, tweaks: &Tweaks) {
    let t = &mut snap.tables;
    let n = t.lists.len();
    for &(choice, what) in tweaks.userless.iter().filter(|_| n > 0) {
        let l = &mut t.lists[choice % n];
        l.user = ZERO;
        match what {
            0 => l.owner = ZERO,
            1 => l.manager = ZERO,
            _ => {}
        }
    }
    for &choice in &tweaks.zero_targets {
        if !t.list_ops.is_empty() {
            let i = choice % t.list_ops.len();
            t.list_ops[i].op.target = ZERO;
        }
        let records = &mut t.list_records;
        if records.is_empty() {
            continue;
        }
        let i = choice % records.len();
        let token = records[i].token_id;
        // (token_id, address) stays unique; the old record's tags stay,
        // invisible.
        if !(records.iter()).any(|r| r.token_id == token && r.address == ZERO) {
            records[i].address = ZERO;
        }
    }
}

/// Endpoints 7..=17 (API endpoints 8-14, 38-41), the same shape as `gen`'s.
pub fn req_spec() -> impl Strategy<Value = ReqSpec> {
    (
        7..18usize,
        (0..16u8, 0..64usize, any::<u64>()),
        prop::collection::vec(
            (
                0..64usize,
                0..64usize,
                any::<u64>(),
                prop::bool::weighted(0.05),
            ),
            0..=4,
        ),
    )
        .prop_map(|(endpoint, subject, params)| ReqSpec {
            endpoint,
            subject,
            params,
        })
}

/// Lists that are not their user's primary list (userless ones included).
fn other_lists(snap: &Snap) -> Vec<u64> {
    let t = &snap.tables;
    let is_primary = |token: u64, user: &Address| {
        (t.primary_lists.iter()).any(|p| p.token_id == token && p.address == *user)
    };
    (t.lists.iter())
        .filter(|l| !is_primary(l.token_id, &l.user))
        .map(|l| l.token_id)
        .collect()
}

/// A `{token_id}` for any list endpoint (1, 3, 7 too: `gen`'s kinds are
/// 0..10): `gen`'s choice (mostly primary lists), except that its kind 8
/// and half of the kinds above 9 are lists that are not their user's
/// primary list (userless ones included: the rule change), any list, or a
/// userless one.
pub(super) fn list_subject(kind: u8, idx: usize, snap: &Snap) -> String {
    let lists = &snap.tables.lists;
    let others = other_lists(snap);
    let userless: Vec<u64> = (lists.iter())
        .filter(|l| l.user == ZERO)
        .map(|l| l.token_id)
        .collect();
    match kind {
        8 | 12 | 13 if !others.is_empty() => others[idx % others.len()].to_string(),
        10 | 11 if !lists.is_empty() => lists[idx % lists.len()].token_id.to_string(),
        14 if !userless.is_empty() => userless[idx % userless.len()].to_string(),
        15 if !others.is_empty() => format!("0{}", others[idx % others.len()]),
        _ => list_param(kind % 10, idx, snap),
    }
}

/// An `{addressOrENS}`: half the time `gen`'s, else a list's user, owner
/// or manager (often only one of them), the zero address, or the name of
/// a list's owner.
pub(super) fn user_subject(kind: u8, idx: usize, seed: u64, snap: &Snap) -> String {
    let lists = &snap.tables.lists;
    let role = |r: usize| {
        let l = &lists[idx % lists.len()];
        [l.user, l.owner, l.manager][r]
    };
    match kind {
        10..=13 if !lists.is_empty() => hex_random_case(&role(kind as usize % 3), seed),
        14 => format_address(&ZERO),
        15 if !lists.is_empty() => {
            let owner = role(1);
            match snap.tables.ens.iter().find(|e| e.address == owner) {
                Some(e) => random_case(&e.name, seed),
                None => hex_random_case(&owner, seed),
            }
        }
        _ => user_param(kind % 10, idx, seed, snap),
    }
}

/// A value of 38's `sort` or `direction`, or 11's `live`: the known ones
/// in any case, and unknown ones (which mean the default).
fn word(name: &str, choice: usize) -> String {
    let values: &[&str] = match name {
        "sort" => &[
            "mutuals",
            "followers",
            "following",
            "blocked",
            "top8",
            "TOP8",
            "Blocked",
            "FOLLOWING",
            "Followers",
            "mUtUaLs",
            "block",
            "blocks",
            "",
            "latest",
            " top8",
            "asc",
        ],
        "direction" => &[
            "asc",
            "desc",
            "ASC",
            "Asc",
            "DESC",
            "",
            "ascending",
            " asc",
            "up",
        ],
        _ => &["true", "false", "", "TRUE", "1", "x y"],
    };
    values[choice % values.len()].to_owned()
}

/// Query parameter names per endpoint: its own (weighted), `cache`, and
/// ones it does not take, whatever their value (`limit=-1` on 39 is no
/// 400).
fn names(endpoint: usize) -> &'static [&'static str] {
    match endpoint {
        10 => &["live", "live", "cache", "limit", "LIVE"],
        14 => &[
            "limit",
            "offset",
            "offset",
            "sort",
            "sort",
            "sort",
            "direction",
            "direction",
            "direction",
            "cache",
            "LIMIT",
            "foo",
            "limit",
        ],
        _ => &["cache", "limit", "offset", "sort", "foo"],
    }
}

pub fn build_req(spec: &ReqSpec, snap: &Snap) -> Req {
    let endpoint = spec.endpoint;
    let (kind, idx, seed) = spec.subject;
    let param = match endpoint {
        8 | 11 => list_subject(kind, idx, snap),
        14..=17 => String::new(),
        _ => user_subject(kind, idx, seed, snap),
    };
    let at = encode(&param, false, seed);
    let path = model_path(endpoint, &[&at]);
    let names = names(endpoint);
    let mut params = Vec::new();
    for &(name_choice, value_choice, seed, bare) in &spec.params {
        let name = names[name_choice % names.len()];
        let value = match name {
            "sort" | "direction" | "live" | "LIVE" => word(name, value_choice),
            _ => param_value(name, value_choice, seed, snap),
        };
        params.push((name, (!bare).then_some(value), seed));
    }
    with_query(endpoint, path, param, params, seed >> 40)
}
