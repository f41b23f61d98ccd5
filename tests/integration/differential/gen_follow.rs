//! Generation for endpoints 15-37 and 29: what `gen_more.rs`
//! does for 8-14, for these. Snapshots get records that tie on
//! `updated_at` within a list (so the address tie-break decides) on top
//! of what `gen` and `gen_more` give (records and block/mute tags in
//! lists that are not their user's primary list, userless lists, the zero
//! address as a target). Requests aim at any list and account, with
//! every `tags`, `sort` and paging of 6, repeated and comma-separated
//! `include` (bad values too), a second account (30, 31, 33), and 32's
//! POSTed body: items of any JSON type, names, unknown names, escapes,
//! and bodies that are not UTF-8, not JSON, not an array or too long;
//! `term` as in 4, and 29's `leader` (empty, spaces, unknown).

use followgraph::snapshot::format_address;
use proptest::prelude::*;

use super::gen::{param_value, ReqSpec};
use super::gen_more::{list_subject, user_subject};
use super::gen_snap::{Snap, NAMES, UNKNOWN_ADDRESS};
use super::target::{encode, hex_random_case, model_path, random_case, with_query, Req};

/// Record choices (i, j): record i takes the `updated_at` of the j-th
/// other record of its list.
pub fn tweaks() -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec((0..64usize, 0..8usize), 0..=4)
}

pub fn tweak_snap(snap: &mut Snap, same_time: &[(usize, usize)]) {
    let records = &mut snap.tables.list_records;
    if records.is_empty() {
        return;
    }
    for &(i, j) in same_time {
        let i = i % records.len();
        let token = records[i].token_id;
        let others: Vec<usize> = (0..records.len())
            .filter(|&k| k != i && records[k].token_id == token)
            .collect();
        if !others.is_empty() {
            records[i].updated_at = records[others[j % others.len()]].updated_at;
        }
    }
}

/// A request of 15-37: `gen`'s shape, a second account and 32's body.
#[derive(Clone, Debug)]
pub struct FollowSpec {
    pub req: ReqSpec,
    /// The account after the first path parameter (30, 31, 33).
    pub second: (u8, usize, u64),
    /// 32's body: (kind, items as (kind, choice, seed), whitespace seed).
    pub body: (u8, Vec<(u8, usize, u64)>, u64),
}

/// Endpoints 18..=40 (the model's numbering), 15-18 weighted.
pub fn req_spec() -> impl Strategy<Value = FollowSpec> {
    let params = prop::collection::vec(
        (
            0..64usize,
            0..64usize,
            any::<u64>(),
            prop::bool::weighted(0.05),
        ),
        0..=5,
    );
    let items = prop::collection::vec((0..12u8, 0..64usize, any::<u64>()), 0..=6);
    (
        prop_oneof![2 => 18..22usize, 3 => 18..32usize, 3 => 32..41usize],
        (0..20u8, 0..64usize, any::<u64>()),
        params,
        (0..20u8, 0..64usize, any::<u64>()),
        (0..16u8, items, any::<u64>()),
    )
        .prop_map(|(endpoint, subject, params, second, body)| FollowSpec {
            req: ReqSpec {
                endpoint,
                subject,
                params,
            },
            second,
            body,
        })
}

fn pick<'a>(values: &[&'a str], choice: usize) -> &'a str {
    values[choice % values.len()]
}

/// A value of 15-18's `include`: good ones, alone, repeated or
/// comma-separated with spaces and empty segments, and bad ones (a 400
/// naming include: wrong case, unknown, a quote in it).
fn include_value(choice: usize) -> String {
    let good = [
        "ens",
        "ens",
        "mutuals",
        "blocked",
        "muted",
        "ens,mutuals",
        " ens ",
        "blocked, muted ,",
        "",
        ",",
        "mutuals , ens",
        "ens,,muted",
    ];
    // One in four is bad.
    if !choice.is_multiple_of(4) {
        return pick(&good, choice / 4).to_owned();
    }
    pick(
        &["ENS", "ens,followers", "top8", "Ens", "é", "a\"b"],
        choice / 4,
    )
    .to_owned()
}

/// Query parameter names per endpoint: its own (weighted), `cache`, and
/// ones it does not take.
fn names(endpoint: usize) -> &'static [&'static str] {
    match endpoint {
        18..=21 => &[
            "limit", "limit", "offset", "offset", "tags", "tags", "sort", "sort", "include",
            "include", "include", "include", "cache", "LIMIT", "foo", "INCLUDE",
        ],
        29 => &[
            "include", "include", "include", "include", "cache", "limit", "foo",
        ],
        32 | 33 => &[
            "limit", "offset", "offset", "tags", "tags", "sort", "sort", "cache", "include",
        ],
        34 | 35 => &["limit", "offset", "offset", "sort", "tags", "cache", "foo"],
        36..=39 => &[
            "term", "term", "term", "limit", "offset", "offset", "cache", "sort",
        ],
        40 => &[
            "leader", "leader", "leader", "term", "term", "limit", "offset", "cache",
        ],
        _ => &["cache", "limit", "offset", "include", "sort", "foo"],
    }
}

/// A body item of 32, as JSON text (compact, so that "the item as sent"
/// is what `serde_json` prints).
fn item(kind: u8, choice: usize, seed: u64, snap: &Snap) -> String {
    let string = |s: &str| serde_json::to_string(s).unwrap();
    let addrs = &snap.addrs;
    let ens = &snap.tables.ens;
    match kind {
        0 => string(&hex_random_case(&addrs[choice % 3 % addrs.len()], seed)),
        1 | 2 => string(&hex_random_case(&addrs[choice % addrs.len()], seed)),
        3 if !ens.is_empty() => string(&random_case(&ens[choice % ens.len()].name, seed)),
        3 | 4 => string(&random_case(NAMES[choice % NAMES.len()], seed)),
        5 => string(&hex_random_case(&UNKNOWN_ADDRESS, seed)),
        6 => string(&format_address(&[0; 20])),
        7 => {
            let upper = format!("0X{}", &format_address(&addrs[choice % addrs.len()])[2..]);
            string(pick(&["0x123", "", "nobody.eth", &upper, " 0x"], choice))
        }
        8 => "null".to_owned(),
        9 => pick(&["1", "true", "false", "-2", "1.5", "0"], choice).to_owned(),
        10 => pick(
            &[
                "{}",
                "{\"a\":1}",
                "[]",
                "[\"0xab\"]",
                "{\"z\":\"x\",\"b\":[null]}",
            ],
            choice,
        )
        .to_owned(),
        // A JSON escape in an address that resolves.
        _ => format!(
            "\"\\u0030x{}\"",
            &format_address(&addrs[choice % addrs.len()])[2..]
        ),
    }
}

/// 32's body: mostly an array of items with random whitespace; sometimes
/// one that is not UTF-8, not JSON, not an array, or too long.
fn body(spec: &(u8, Vec<(u8, usize, u64)>, u64), snap: &Snap) -> Vec<u8> {
    let (kind, items, seed) = spec;
    let space = |s: u64| pick(&["", "", " ", "\n", "\t ", "\r\n"], (s % 6) as usize);
    let choice = (seed >> 8) as usize;
    match kind {
        0..=11 => {
            let mut text = format!("{}[", space(seed >> 3));
            for (i, &(k, c, s)) in items.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                text.push_str(space(s >> 5));
                text.push_str(&item(k, c, s, snap));
                text.push_str(space(s >> 9));
            }
            text.push(']');
            text.push_str(space(seed >> 13));
            text.into_bytes()
        }
        12 => b"[\"0x\xff\"]".to_vec(),
        13 => pick(
            &["", "[", "[1,]", "nul", "[\"0x\" \"y\"]", "[] x", " "],
            choice,
        )
        .into(),
        14 => pick(&["{}", "\"0xab\"", "null", "3", "{\"a\":[1]}"], choice).into(),
        _ => {
            let n = if choice.is_multiple_of(2) { 1000 } else { 1001 };
            format!("[{}null]", "null,".repeat(n - 1)).into_bytes()
        }
    }
}

/// An `{addressOrENS}` that is often the user of a primary list (so that
/// 15, 16 and 34 have records to show), as an address or its name; else
/// `gen_more`'s choice.
fn account_subject(kind: u8, idx: usize, seed: u64, snap: &Snap) -> String {
    let t = &snap.tables;
    let users: Vec<_> = (t.primary_lists.iter())
        .filter(|p| (t.lists.iter()).any(|l| l.token_id == p.token_id && l.user == p.address))
        .map(|p| p.address)
        .collect();
    if kind >= 10 || users.is_empty() {
        return user_subject(kind, idx, seed, snap);
    }
    let user = users[idx % users.len()];
    match t.ens.iter().find(|e| e.address == user) {
        Some(e) if kind.is_multiple_of(3) => random_case(&e.name, seed),
        _ => hex_random_case(&user, seed),
    }
}

pub fn build_req(spec: &FollowSpec, snap: &Snap) -> Req {
    let endpoint = spec.req.endpoint;
    let (kind, idx, seed) = spec.req.subject;
    let by_list = matches!(endpoint, 20..=23 | 25..=27 | 29 | 31 | 33 | 35 | 37 | 39);
    // Who is followed (30, 19, 21, 23): half the time `gen`'s hubs, any
    // account or a name.
    let followed = matches!(endpoint, 30 | 32 | 34 | 36) && kind < 10;
    let param = if by_list {
        list_subject(kind, idx, snap)
    } else if followed {
        user_subject(kind % 6, idx, seed, snap)
    } else {
        account_subject(kind, idx, seed, snap)
    };
    let (kind2, idx2, seed2) = spec.second;
    let param2 = if matches!(endpoint, 24 | 25 | 27) {
        account_subject(kind2, idx2, seed2, snap)
    } else {
        String::new()
    };
    let at = encode(&param, false, seed);
    let at2 = encode(&param2, false, seed2);
    let path = model_path(endpoint, &[&at, &at2]);
    let names = names(endpoint);
    let mut params = Vec::new();
    for &(name_choice, value_choice, seed, bare) in &spec.req.params {
        let name = names[name_choice % names.len()];
        let value = match name {
            "include" | "INCLUDE" if endpoint <= 21 => include_value(value_choice),
            "include" => param_value("tags", value_choice, seed, snap),
            "INCLUDE" => include_value(value_choice),
            // 29's leader: empty or missing (A itself), spaces, an unknown
            // name, or an account.
            "leader" => match value_choice % 8 {
                0 => String::new(),
                1 => "  ".to_owned(),
                2 => "nobody.eth".to_owned(),
                3 | 4 => user_subject((seed % 6) as u8, value_choice, seed >> 5, snap),
                _ => account_subject((seed % 20) as u8, value_choice, seed >> 5, snap),
            },
            // Half the time a short piece most addresses or names hold,
            // so that searches within a few followers find some.
            "term" if value_choice.is_multiple_of(2) => pick(
                &[
                    "a", "b", "0a", "ab", "ba", "cd", "ff", "12", ".eth", "B", " AB ", "0",
                ],
                value_choice / 2,
            )
            .to_owned(),
            _ => param_value(name, value_choice, seed, snap),
        };
        params.push((name, (!bare).then_some(value), seed));
    }
    let mut req = with_query(endpoint, path, param, params, seed >> 40);
    req.param2 = param2;
    if endpoint == 26 {
        req.body = Some(body(&spec.body, snap));
    }
    req
}
