//! Random small snapshots for the differential test: the pools every value
//! is drawn from (timestamps, addresses, tags, names) and `SnapSpec`.
//! Everything is drawn as small indices (so proptest can shrink it) and
//! turned into valid `Tables` (the uniqueness rules of docs/snapshot.md
//! hold) by `build_snap`.

use std::collections::HashSet;

use followgraph::snapshot::{
    Address, BadgeEventRow, BadgeRow, EnsRow, ListRow, Op, OpRow, PrimaryListRow, RecordRow,
    Tables, TagRow,
};
use proptest::prelude::*;

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
pub const NAMES: [&str; 13] = [
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
    "<b>&\"Long'Name</b>\r.eth",
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
        0..4usize,
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
            avatar: opt(
                e.avatar,
                &[
                    "https://img/a.png",
                    "ipfs://q\"uote\\",
                    "http://i/<\"&'>\t.png",
                ],
            ),
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
