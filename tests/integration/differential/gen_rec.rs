//! Generation for endpoints 43-48: what `gen.rs` does for 1-7, for
//! these. Snapshots get a `recommended` table (or none): rows for the
//! snapshot's accounts and for addresses nothing else names (one of them
//! the unknown address the requests use), positions from a small range
//! (ties), optional fields null or set, names that need escaping.
//! Requests aim at accounts and lists as `gen_more` does, with `limit`
//! and `offset` good and bad.

use followgraph::snapshot::{Address, RecommendedRow};
use proptest::prelude::*;

use super::gen::{param_value, ReqSpec};
use super::gen_more::{list_subject, user_subject};
use super::gen_snap::{Snap, S, UNKNOWN_ADDRESS};
use super::target::{encode, model_path, with_query, Req};

/// The first model endpoint of this file (43); 48 is `FIRST + 5`.
const FIRST: usize = 41;

/// `recommended` rows: (address choice, position, seed).
pub fn rows() -> impl Strategy<Value = Vec<(usize, u8, u64)>> {
    prop::collection::vec((0..64usize, 0..4u8, any::<u64>()), 0..=8)
}

const NAMES: [&str; 4] = ["pick.eth", "<b>&\"'", "Émile.eth", "a\\b\nc"];

/// Adds the `recommended` rows (addresses kept unique: a repeat is
/// dropped).
pub fn add_recommended(snap: &mut Snap, rows: &[(usize, u8, u64)]) {
    for &(choice, position, seed) in rows {
        let address: Address = match choice % 8 {
            6 => UNKNOWN_ADDRESS,
            7 => [0x78; 20],
            _ => snap.addrs[choice % snap.addrs.len()],
        };
        let t = &mut snap.tables;
        if t.recommended.iter().any(|r| r.address == address) {
            continue;
        }
        let bit = |i: u32| seed >> i & 1 == 1;
        t.recommended.push(RecommendedRow {
            position: i64::from(position) - 1,
            address,
            name: NAMES[(seed % 4) as usize].to_owned(),
            avatar: bit(2).then(|| "https://a.example/x.png".to_owned()),
            header: bit(3).then(|| "https://h.example/\"q\"".to_owned()),
            class: bit(4).then(|| ["A", "B"][(seed >> 5 & 1) as usize].to_owned()),
            created_at: bit(6).then_some(S + (seed >> 8 & 0xffff) as i64),
        });
    }
}

/// Endpoints 41..=46 (API endpoints 43-48), the same shape as `gen`'s.
pub fn req_spec() -> impl Strategy<Value = ReqSpec> {
    (
        FIRST..FIRST + 6,
        (0..16u8, 0..64usize, any::<u64>()),
        prop::collection::vec(
            (
                0..64usize,
                0..64usize,
                any::<u64>(),
                prop::bool::weighted(0.05),
            ),
            0..=3,
        ),
    )
        .prop_map(|(endpoint, subject, params)| ReqSpec {
            endpoint,
            subject,
            params,
        })
}

pub fn build_req(spec: &ReqSpec, snap: &Snap) -> Req {
    let endpoint = spec.endpoint;
    let (kind, idx, seed) = spec.subject;
    let param = match endpoint - FIRST {
        1 | 3 => list_subject(kind, idx, snap),
        4 => String::new(),
        _ => user_subject(kind, idx, seed, snap),
    };
    let at = encode(&param, false, seed);
    let path = model_path(endpoint, &[&at]);
    let names = [
        "limit", "offset", "offset", "limit", "cache", "foo", "LIMIT",
    ];
    let mut params = Vec::new();
    for &(name_choice, value_choice, seed, bare) in &spec.params {
        let name = names[name_choice % names.len()];
        let value = param_value(name, value_choice, seed, snap);
        params.push((name, (!bare).then_some(value), seed));
    }
    with_query(endpoint, path, param, params, seed >> 40)
}
