//! Random request targets for endpoints 1-7 of the differential test, and
//! the query and path parameter values that `gen_more.rs` and
//! `gen_follow.rs` draw from too. Everything is drawn as small indices (so
//! proptest can shrink it) and turned into request targets by `build_req`,
//! aimed at a snapshot from `gen_snap.rs`.

use followgraph::snapshot::PrimaryListRow;
use proptest::prelude::*;

use super::gen_snap::{Snap, MAX_TOKEN, NAMES, S_SECS, TAGS, UNKNOWN_ADDRESS};
use super::target::{encode, hex_random_case, model_path, random_case, with_query, Req};

/// One random request: the endpoint (0..7: endpoints 1-7 of the API reference,
/// in order), the subject choice and the query parameters, all as small
/// numbers.
#[derive(Clone, Debug)]
pub struct ReqSpec {
    pub endpoint: usize,
    pub subject: (u8, usize, u64),
    /// (name choice, value choice, seed, no '=' sign)
    pub params: Vec<(usize, usize, u64, bool)>,
}

pub fn req_spec() -> impl Strategy<Value = ReqSpec> {
    (
        0..7usize,
        (0..10u8, 0..64usize, any::<u64>()),
        prop::collection::vec(
            (
                0..64usize,
                0..64usize,
                any::<u64>(),
                prop::bool::weighted(0.05),
            ),
            0..=5,
        ),
    )
        .prop_map(|(endpoint, subject, params)| ReqSpec {
            endpoint,
            subject,
            params,
        })
}

const PARAM_NAMES: [&str; 14] = [
    "limit", "offset", "sort", "tags", "opcode", "interval", "start", "tag", "term", "cache",
    "LIMIT", "foo", "limit", "term",
];

const NUMBERS: [&str; 15] = [
    "",
    " 1",
    "0",
    "1",
    "2",
    "3",
    "007",
    "10",
    "1000",
    "1001",
    "-1",
    "+1",
    "1e3",
    "18446744073709551615",
    "18446744073709551616",
];

fn pick<'a>(values: &[&'a str], choice: usize) -> &'a str {
    values[choice % values.len()]
}

/// A 1-4 character piece of `text` (by chars), random case, perhaps with
/// ASCII spaces around it.
fn piece(text: &str, seed: u64) -> String {
    let chars: Vec<char> = text.chars().collect();
    let len = 1 + (seed % 4) as usize;
    let len = len.min(chars.len());
    let start = ((seed >> 2) as usize) % (chars.len() - len + 1);
    let s: String = chars[start..start + len].iter().collect();
    let s = if seed >> 10 & 1 == 1 {
        random_case(&s, seed >> 11)
    } else {
        s
    };
    match seed >> 20 & 7 {
        0 => format!(" {s}"),
        1 => format!("{s}\t "),
        2 => format!("\n{s} "),
        _ => s,
    }
}

pub(super) fn param_value(name: &str, choice: usize, seed: u64, snap: &Snap) -> String {
    match name {
        "limit" | "offset" | "LIMIT" => {
            if name == "offset" && choice.is_multiple_of(2) {
                return (seed % 4).to_string();
            }
            pick(&NUMBERS, choice).to_owned()
        }
        "opcode" => {
            if choice.is_multiple_of(2) {
                (seed % 7).to_string()
            } else {
                pick(&NUMBERS, choice / 2).to_owned()
            }
        }
        "start" => {
            let deltas: [i64; 8] = [0, -1, 1, 3600, -3600, 86400, 604_800, -1_000_000];
            match choice % 4 {
                0 => pick(&NUMBERS, choice / 4).to_owned(),
                _ => (S_SECS as i64 + deltas[(seed % 8) as usize]).to_string(),
            }
        }
        "interval" => pick(
            &[
                "hour", "day", "week", "month", "all", "ALL", "Hour", "DAY", "mOnTh", "year", "",
                " day", "WEEK",
            ],
            choice,
        )
        .to_owned(),
        "sort" => pick(
            &[
                "latest",
                "earliest",
                "followers",
                "EARLIEST",
                "Followers",
                "LATEST",
                "random",
                "",
                " followers",
            ],
            choice,
        )
        .to_owned(),
        "tag" => {
            if choice.is_multiple_of(4) {
                ""
            } else {
                TAGS[choice % TAGS.len()]
            }
        }
        .to_owned(),
        "tags" => {
            let k = 1 + (seed % 3) as usize;
            let mut parts = Vec::new();
            for j in 0..k {
                let s = seed >> (4 + 8 * j);
                let tag = match s % 13 {
                    10 => "",
                    11 => "x=y",
                    12 => "top8 ",
                    x => TAGS[x as usize],
                };
                parts.push(if s >> 4 & 1 == 1 {
                    format!(" {tag} ")
                } else {
                    tag.to_owned()
                });
            }
            if choice.is_multiple_of(5) {
                parts.push(String::new());
            }
            parts.join(",")
        }
        "term" | "foo" => match choice % 6 {
            // Hubs are likely on the leaderboard.
            0 | 1 => piece(
                &followgraph::snapshot::format_address(&snap.addrs[choice % 3 % snap.addrs.len()]),
                seed,
            ),
            2 => piece(
                &followgraph::snapshot::format_address(&snap.addrs[choice % snap.addrs.len()]),
                seed,
            ),
            3 | 4 if !snap.tables.ens.is_empty() && seed >> 30 & 3 != 0 => {
                piece(&snap.tables.ens[choice % snap.tables.ens.len()].name, seed)
            }
            3 | 4 => piece(NAMES[choice % NAMES.len()], seed),
            _ => pick(
                &["", "   ", "zz", "0x", ".eth", "%", "*", "🔥"],
                (seed % 8) as usize,
            )
            .to_owned(),
        },
        "cache" => pick(&["fresh", "no", ""], choice).to_owned(),
        _ => unreachable!(),
    }
}

fn endpoint_params(endpoint: usize) -> &'static [usize] {
    // Indices into PARAM_NAMES, weighted towards the endpoint's own.
    match endpoint {
        0..=2 => &[9, 0, 11],
        3 => &[8, 8, 8, 13, 0, 1, 9, 10, 11],
        4 => &[4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 0, 1, 9, 11],
        _ => &[0, 0, 12, 1, 1, 2, 2, 2, 3, 3, 3, 9, 10, 11, 7],
    }
}

/// A `{token_id}` path parameter, mostly lists that have data.
pub(super) fn list_param(kind: u8, idx: usize, snap: &Snap) -> String {
    let (lists, rows) = (&snap.tables.lists, &snap.tables.primary_lists);
    let named: Vec<u64> = rows.iter().map(|p| p.token_id).collect();
    // Lists that are their user's primary list (the rule of docs/snapshot.md,
    // only used here to aim requests at lists that have data).
    let is_primary = |p: &&PrimaryListRow| {
        (lists.iter()).any(|l| l.token_id == p.token_id && l.user == p.address)
    };
    let primary: Vec<u64> = rows.iter().filter(is_primary).map(|p| p.token_id).collect();
    match kind {
        0..=3 if !primary.is_empty() => primary[idx % primary.len()].to_string(),
        4 if !lists.is_empty() => lists[idx % lists.len()].token_id.to_string(),
        5 if !named.is_empty() => named[idx % named.len()].to_string(),
        6 if !primary.is_empty() => format!("00{}", primary[idx % primary.len()]),
        7 => pick(
            &[
                "0",
                "-1",
                "+1",
                "abc",
                "1.5",
                "18446744073709551616",
                "18446744073709551615",
                " 1",
                "00",
            ],
            idx,
        )
        .to_owned(),
        _ => (1 + idx as u64 % MAX_TOKEN).to_string(),
    }
}

/// An `{addressOrENS}` path parameter: hubs, any account, names in any
/// case, unknown addresses and names.
pub(super) fn user_param(kind: u8, idx: usize, seed: u64, snap: &Snap) -> String {
    let ens = &snap.tables.ens;
    match kind {
        // Shrinking can merge addresses: fewer than 3 may be left.
        0..=1 => hex_random_case(&snap.addrs[idx % 3 % snap.addrs.len()], seed),
        2..=3 => hex_random_case(&snap.addrs[idx % snap.addrs.len()], seed),
        4 | 5 if !ens.is_empty() => random_case(&ens[idx % ens.len()].name, seed),
        6 => random_case(NAMES[idx % NAMES.len()], seed),
        7 => hex_random_case(&UNKNOWN_ADDRESS, seed),
        8 => {
            let a = followgraph::snapshot::format_address(&snap.addrs[idx % snap.addrs.len()]);
            format!("0X{}", &a[2..])
        }
        _ => pick(&["0x123", "nobody.eth", "0x", "💥"], idx).to_owned(),
    }
}

pub fn build_req(spec: &ReqSpec, snap: &Snap) -> Req {
    let endpoint = spec.endpoint;
    let (kind, idx, seed) = spec.subject;
    let param: String = match endpoint {
        3 => String::new(),
        0 | 2 | 6 => super::gen_more::list_subject(kind, idx, snap),
        _ => user_param(kind, idx, seed, snap),
    };
    let at = encode(&param, false, seed);
    let path = model_path(endpoint, &[&at]);
    let names = endpoint_params(endpoint);
    let mut params = Vec::new();
    for (i, &(name_choice, value_choice, seed, bare)) in spec.params.iter().enumerate() {
        let name = if endpoint == 3 && i == 0 && name_choice % 16 != 0 {
            "term"
        } else {
            PARAM_NAMES[names[name_choice % names.len()]]
        };
        let value = (!bare).then(|| param_value(name, value_choice, seed, snap));
        params.push((name, value, seed));
    }
    with_query(endpoint, path, param, params, spec.subject.2 >> 40)
}
