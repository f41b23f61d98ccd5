//! Random small snapshots and random request targets for the differential
//! test. Everything is drawn as small indices (so proptest can shrink it) and
//! turned into valid `Tables` (the uniqueness rules of docs/snapshot.md hold)
//! and into request targets by the `build` functions.

use std::collections::HashSet;

use followgraph::snapshot::{
    Address, BadgeEventRow, BadgeRow, EnsRow, ListRow, Op, OpRow, PrimaryListRow, RecordRow,
    Tables, TagRow,
};
use proptest::prelude::*;

use super::target::{encode, hex_random_case, random_case, with_query, Req};

pub const HOUR: i64 = 3_600_000;
/// 2024-10-14T00:00:00.000Z: the centre of every timestamp drawn.
pub const S_SECS: u64 = 1_728_864_000;
pub const S: i64 = S_SECS as i64 * 1000;
/// The `now` requests without `start` are answered at.
pub const NOW_MS: i64 = S + 1000;

/// Timestamps around S, on and next to every window bound, so that ties
/// and boundary cases are frequent.
pub const TIMES: [i64; 16] = [
    S,
    S - 1,
    S - 1000,
    S - HOUR + 1,
    S - HOUR,
    S - HOUR - 1,
    S - 24 * HOUR,
    S - 168 * HOUR,
    S - 168 * HOUR - 1,
    S - 720 * HOUR,
    S - 720 * HOUR - 1,
    S - 2000 * HOUR,
    S + 1000,
    S + HOUR,
    0,
    -1_500,
];

/// Snapshot `created_at` values.
pub const CREATED: [i64; 3] = [1_795_176_000_000, S + 123, 951_782_400_007];

/// Address bytes come from a small alphabet so that 1-4 character search
/// terms match several accounts.
const ADDRESS_BYTES: [u8; 7] = [0x00, 0x0a, 0xab, 0xba, 0xcd, 0x12, 0xff];

/// An address no snapshot mentions (0x77 is not in ADDRESS_BYTES).
pub const UNKNOWN_ADDRESS: Address = [0x77; 20];

pub const TAGS: [&str; 10] = [
    "block",
    "mute",
    "top8",
    "Top8",
    "dev",
    "🔥 fire",
    "Block",
    "a b",
    "q\"\\",
    "é",
];

/// Names; some collide case-insensitively (the later one is dropped).
pub const NAMES: [&str; 12] = [
    "alice.eth",
    "Bob12.eth",
    "bob.eth",
    "BOB.eth",
    "Ünïcödé.eth",
    "ab.eth",
    "0xab.eth",
    "Zed🔥.eth",
    "cafe.ETH",
    "x",
    "a+b!@:.eth",
    "x/y.eth",
];

pub const MAX_TOKEN: u64 = 14;

#[derive(Clone, Debug)]
pub struct EnsSpec {
    pub addr: usize,
    pub name: usize,
    pub avatar: usize,
    pub header: usize,
    pub display: usize,
    pub records: usize,
    pub chains: usize,
    pub fresh: usize,
    pub resolver: usize,
    pub errors: usize,
}

#[derive(Clone, Debug)]
pub struct SnapSpec {
    pub addrs: Vec<Vec<u8>>,
    /// (token_id, user, owner)
    pub lists: Vec<(u64, usize, usize)>,
    /// (list or account, kind, token): see `build_snap`.
    pub primaries: Vec<(usize, u8, u64)>,
    /// (list choice, random token, use random token, target, time)
    pub records: Vec<(usize, u64, bool, usize, usize)>,
    /// (record index, tag, time)
    pub rec_tags: Vec<(usize, usize, usize)>,
    /// (token, target, tag, time): mostly without a record
    pub stray_tags: Vec<(u64, usize, usize, usize)>,
    /// (list choice, random token, use random token, opcode, target, tag, time)
    pub ops: Vec<(usize, u64, bool, u8, usize, usize, usize)>,
    pub seq_mul: u64,
    pub ens: Vec<EnsSpec>,
    /// (event id choice, position choice, text variant)
    pub events: Vec<(usize, usize, usize)>,
    /// (holder, event, owner variant, token variant)
    pub badges: Vec<(usize, usize, usize, usize)>,
    pub created: usize,
    /// Write the tables to Parquet and read them back before building.
    pub via_parquet: bool,
}

fn ens_spec() -> impl Strategy<Value = EnsSpec> {
    (
        0..64usize,
        0..NAMES.len(),
        0..3usize,
        0..3usize,
        0..3usize,
        0..4usize,
        0..3usize,
        0..4usize,
        0..2usize,
        0..3usize,
    )
        .prop_map(
            |(addr, name, avatar, header, display, records, chains, fresh, resolver, errors)| {
                EnsSpec {
                    addr,
                    name,
                    avatar,
                    header,
                    display,
                    records,
                    chains,
                    fresh,
                    resolver,
                    errors,
                }
            },
        )
}

pub fn snap_spec() -> impl Strategy<Value = SnapSpec> {
    let t = TIMES.len();
    let addrs = prop::collection::vec(
        prop::collection::vec(prop::sample::select(ADDRESS_BYTES.to_vec()), 20),
        6..=10,
    );
    let lists = prop::collection::vec((1..=12u64, 0..64usize, 0..64usize), 1..=10);
    let primaries = prop::collection::vec((0..64usize, 0..4u8, 1..=MAX_TOKEN), 1..=16);
    // Record and op targets lean towards three "hub" accounts, so that
    // follower lists are long and counts tie.
    let target = || prop_oneof![0..3usize, 0..64usize];
    let records = prop::collection::vec(
        (
            0..64usize,
            1..=MAX_TOKEN,
            prop::bool::weighted(0.15),
            target(),
            0..t,
        ),
        0..=50,
    );
    let rec_tags = prop::collection::vec((0..64usize, 0..TAGS.len(), 0..t), 0..=40);
    let stray_tags = prop::collection::vec((1..=MAX_TOKEN, 0..64usize, 0..TAGS.len(), 0..t), 0..=6);
    let ops = prop::collection::vec(
        (
            0..64usize,
            1..=MAX_TOKEN,
            prop::bool::weighted(0.15),
            1..=4u8,
            target(),
            0..TAGS.len(),
            0..t,
        ),
        0..=60,
    );
    let ens = prop::collection::vec(ens_spec(), 0..=8);
    let events = prop::collection::vec((0..5usize, 0..5usize, 0..3usize), 0..=4);
    let badges = prop::collection::vec((0..64usize, 0..8usize, 0..3usize, 0..3usize), 0..=10);
    (
        (addrs, lists, primaries, records, rec_tags, stray_tags),
        (
            ops,
            1..101u64,
            ens,
            events,
            badges,
            0..CREATED.len(),
            prop::bool::weighted(0.05),
        ),
    )
        .prop_map(
            |(
                (addrs, lists, primaries, records, rec_tags, stray_tags),
                (ops, seq_mul, ens, events, badges, created, via_parquet),
            )| SnapSpec {
                addrs,
                lists,
                primaries,
                records,
                rec_tags,
                stray_tags,
                ops,
                seq_mul,
                ens,
                events,
                badges,
                created,
                via_parquet,
            },
        )
}

/// A generated snapshot: the tables plus the pools requests draw from.
#[derive(Clone, Debug)]
pub struct Snap {
    pub tables: Tables,
    pub created_at_ms: i64,
    pub addrs: Vec<Address>,
    pub via_parquet: bool,
}

fn opt(choice: usize, values: &[&str]) -> Option<String> {
    // choice 0 is null
    choice
        .checked_sub(1)
        .map(|i| values[i % values.len()].to_owned())
}

/// JSON object text: compact, or (when it goes through Parquet, whose
/// reader re-serialises it) with spaces.
fn json_text(choice: usize, values: &[serde_json::Value], spaced: bool) -> Option<String> {
    let v = &values[choice.checked_sub(1)? % values.len()];
    Some(if spaced {
        serde_json::to_string_pretty(v).unwrap()
    } else {
        serde_json::to_string(v).unwrap()
    })
}

pub fn build_snap(spec: &SnapSpec) -> Snap {
    let mut addrs: Vec<Address> = Vec::new();
    for a in &spec.addrs {
        let a: Address = a.as_slice().try_into().unwrap();
        if !addrs.contains(&a) {
            addrs.push(a);
        }
    }
    let n = addrs.len();
    let ad = |i: usize| addrs[i % n];
    let mut t = Tables::default();

    let mut tokens = HashSet::new();
    for &(token_id, user, owner) in &spec.lists {
        if tokens.insert(token_id) {
            t.lists.push(ListRow {
                token_id,
                user: ad(user),
                owner: ad(owner),
                manager: ad(owner + 1),
            });
        }
    }

    let mut seen = HashSet::new();
    for &(who, kind, token) in &spec.primaries {
        // kind < 3: a list's user names that list (valid unless the user
        // already has a row); else a random account names a random token
        // (someone else's list, a missing list, or by chance its own).
        let (address, token_id) = if kind < 3 && !t.lists.is_empty() {
            let l = &t.lists[who % t.lists.len()];
            (l.user, l.token_id)
        } else {
            (ad(who), token)
        };
        if seen.insert(address) {
            t.primary_lists.push(PrimaryListRow { address, token_id });
        }
    }

    let list_token = |choice: usize, random: u64, use_random: bool| -> u64 {
        if use_random || t.lists.is_empty() {
            random
        } else {
            t.lists[choice % t.lists.len()].token_id
        }
    };

    let mut seen = HashSet::new();
    let mut records = Vec::new();
    for &(choice, random, use_random, target, time) in &spec.records {
        let token_id = list_token(choice, random, use_random);
        let address = ad(target);
        if seen.insert((token_id, address)) {
            records.push(RecordRow {
                token_id,
                address,
                updated_at: TIMES[time],
            });
        }
    }

    let mut seen = HashSet::new();
    let mut tags = Vec::new();
    if !records.is_empty() {
        for &(rec, tag, time) in &spec.rec_tags {
            let r: &RecordRow = &records[rec % records.len()];
            if seen.insert((r.token_id, r.address, tag)) {
                tags.push(TagRow {
                    token_id: r.token_id,
                    address: r.address,
                    tag: TAGS[tag].to_owned(),
                    updated_at: TIMES[time],
                });
            }
        }
    }
    for &(token_id, target, tag, time) in &spec.stray_tags {
        let address = ad(target);
        if seen.insert((token_id, address, tag)) {
            tags.push(TagRow {
                token_id,
                address,
                tag: TAGS[tag].to_owned(),
                updated_at: TIMES[time],
            });
        }
    }

    let mut ops = Vec::new();
    for (i, &(choice, random, use_random, opcode, target, tag, time)) in spec.ops.iter().enumerate()
    {
        // i * seq_mul mod 101 is a permutation of 0..101 (101 is prime).
        let seq = (i as u64 * spec.seq_mul) % 101 + 1;
        ops.push(OpRow {
            token_id: list_token(choice, random, use_random),
            seq,
            op: Op {
                opcode,
                target: ad(target),
                tag: if opcode >= 3 {
                    TAGS[tag].to_owned()
                } else {
                    String::new()
                },
            },
            updated_at: TIMES[time],
        });
    }
    t.list_records = records;
    t.list_record_tags = tags;
    t.list_ops = ops;

    let records_values = [
        serde_json::json!({"avatar": "https://x/a.png", "com.twitter": "al\"ice"}),
        serde_json::json!({"z": "1", "a": "2", "m": "é🔥"}),
        serde_json::json!({}),
    ];
    let chains_values = [
        serde_json::json!({"eth": "0xAbC", "btc": "bc1q"}),
        serde_json::json!({"sol": "x"}),
    ];
    let errors_values = [
        serde_json::json!({"z": {"code": 500, "detail": "timeout"}, "a": [1, "x", null, 2.5]}),
        serde_json::json!({"avatar": "not found"}),
    ];
    let spaced = spec.via_parquet;
    let mut seen_addr = HashSet::new();
    let mut seen_name = HashSet::new();
    for e in &spec.ens {
        let address = ad(e.addr);
        let name = NAMES[e.name];
        if !seen_addr.insert(address) || !seen_name.insert(name.to_lowercase()) {
            continue;
        }
        t.ens.push(EnsRow {
            address,
            name: name.to_owned(),
            avatar: opt(e.avatar, &["https://img/a.png", "ipfs://q\"uote\\"]),
            header: opt(e.header, &["https://img/h.png", "hdr\n\t"]),
            display: opt(e.display, &["Display Name", "dîsplay🔥"]),
            records: json_text(e.records, &records_values, spaced),
            chains: json_text(e.chains, &chains_values, spaced),
            fresh: match e.fresh {
                0 => None,
                1 => Some(1_726_680_254_493),
                2 => Some(0),
                _ => Some(-5),
            },
            resolver: opt(e.resolver, &["0x4976fb03c32e5b8cfe2b6ccb31c09ba78ebaba41"]),
            errors: json_text(e.errors, &errors_values, spaced),
        });
    }

    const EVENT_IDS: [i64; 5] = [177709, 178064, 1, 42, 9_000_000_000];
    const POSITIONS: [i32; 5] = [20, 10, -3, 0, 7];
    let mut ids = HashSet::new();
    let mut positions = HashSet::new();
    for &(id, pos, variant) in &spec.events {
        if !ids.insert(EVENT_IDS[id]) || !positions.insert(POSITIONS[pos]) {
            continue;
        }
        let mut e = BadgeEventRow {
            event_id: EVENT_IDS[id],
            position: POSITIONS[pos],
            fancy_id: format!("event-{id}"),
            name: format!("Event {id}"),
            event_url: "https://events.example".into(),
            image_url: format!("https://img.example/{id}.png"),
            country: String::new(),
            city: String::new(),
            description: String::new(),
            year: 2024,
            start_date: "06-Sep-2024".into(),
            end_date: "21-Sep-2024".into(),
            expiry_date: "21-Sep-2025".into(),
        };
        match variant {
            0 => {}
            1 => {
                e.country = "Thailand".into();
                e.city = "Bangkok".into();
                e.description = "Devcon \"7\" attendee\nBangkok 🔥".into();
                e.year = 2023;
            }
            _ => {
                e.description = "tab\tback\\slash\u{1}".into();
                e.year = -1;
                e.event_url = String::new();
            }
        }
        t.badge_events.push(e);
    }
    let mut seen = HashSet::new();
    if !t.badge_events.is_empty() {
        for &(holder, event, owner, token) in &spec.badges {
            let address = ad(holder);
            let event_id = t.badge_events[event % t.badge_events.len()].event_id;
            if !seen.insert((address, event_id)) {
                continue;
            }
            let lower = followgraph::snapshot::format_address(&address);
            t.badges.push(BadgeRow {
                address,
                event_id,
                token_id: ["7189762", "1", "0042"][token].to_owned(),
                owner: match owner {
                    0 => lower,
                    1 => lower.to_uppercase().replacen("0X", "0x", 1),
                    _ => "0xC9C3A4337a1bBa75D0860A1A81f7B990dc607334".to_owned(),
                },
            });
        }
    }

    Snap {
        tables: t,
        created_at_ms: CREATED[spec.created],
        addrs,
        via_parquet: spec.via_parquet,
    }
}

// ------------------------------------------------------------------ requests

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
    let path = match endpoint {
        0 => format!("/api/v1/lists/{}/details", encode(&param, false, seed)),
        1 => format!("/api/v1/users/{}/badges", encode(&param, false, seed)),
        2 => format!("/api/v1/lists/{}/badges", encode(&param, false, seed)),
        3 => "/api/v1/leaderboard/search".to_owned(),
        4 => format!(
            "/api/v1/users/{}/notifications",
            encode(&param, false, seed)
        ),
        5 => format!("/api/v1/users/{}/followers", encode(&param, false, seed)),
        _ => format!("/api/v1/lists/{}/followers", encode(&param, false, seed)),
    };
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
