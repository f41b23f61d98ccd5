//! The generator's properties: determinism whatever the thread count, op
//! histories that replay to the current rows, the uniqueness and reference
//! rules of docs/snapshot.md, the distributions' shape, and the streamed files
//! holding exactly the in-memory tables.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use super::lists::WINDOW_MS;
use super::*;
use crate::snapshot::tables::assert_tables_eq;
use crate::snapshot::{Address, Op, OP_FOLLOW, OP_TAG, OP_UNFOLLOW, OP_UNTAG};

fn opts(accounts: u64, seed: u64) -> GenerateOptions {
    GenerateOptions {
        accounts,
        seed,
        out: PathBuf::from("unused"),
        created_at_ms: default_created_at_ms(),
        progress: false,
    }
}

fn gen(accounts: u64, seed: u64) -> Tables {
    generate_tables(&opts(accounts, seed), &mut |_, _| {})
}

#[test]
fn deterministic_and_thread_count_independent() {
    let a = gen(3000, 7);
    let b = gen(3000, 7);
    assert_tables_eq(&a, &b);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let c = pool.install(|| gen(3000, 7));
    assert_tables_eq(&a, &c);
    let d = gen(3000, 8);
    assert_ne!(a.list_records, d.list_records);
    assert_ne!(a.lists[0].user, d.lists[0].user);
}

#[test]
fn progress_reaches_total() {
    let mut calls = Vec::new();
    generate_tables(&opts(5000, 1), &mut |d, t| calls.push((d, t)));
    assert_eq!(calls.first(), Some(&(0, 5000)));
    assert_eq!(calls.last(), Some(&(5000, 5000)));
    assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0));
}

#[test]
fn empty_and_tiny() {
    let t = gen(0, 1);
    assert!(t.lists.is_empty() && t.list_ops.is_empty());
    assert_eq!(t.badge_events.len(), 10);
    for n in 1..6 {
        let t = gen(n, 3);
        assert!(t.lists.len() as u64 <= 3 * n);
    }
}

/// Replaying every list's ops in seq order gives exactly the current
/// records (with updated_at = last follow) and tags.
#[test]
fn ops_replay_to_current_state() {
    let t = gen(4000, 11);
    let created = default_created_at_ms();
    // seq strictly increasing with (updated_at, seq) order as stored.
    for (i, w) in t.list_ops.windows(2).enumerate() {
        assert!(w[0].seq < w[1].seq, "seq at {i}");
        assert!(w[0].updated_at <= w[1].updated_at, "updated_at at {i}");
    }
    assert_eq!(t.list_ops.first().unwrap().seq, 1);
    let ties = t
        .list_ops
        .windows(2)
        .filter(|w| w[0].updated_at == w[1].updated_at)
        .count();
    assert!(ties > 100, "{ties} ties");
    assert!(t
        .list_ops
        .iter()
        .all(|o| o.updated_at < created && o.updated_at >= created - WINDOW_MS));

    let mut records: HashMap<(u64, Address), i64> = HashMap::new();
    let mut tags: HashMap<(u64, Address, String), i64> = HashMap::new();
    for o in &t.list_ops {
        let bytes = o.op.encode();
        assert_eq!(Op::decode(&bytes).unwrap(), o.op);
        let key = (o.token_id, o.op.target);
        match o.op.opcode {
            OP_FOLLOW => assert!(records.insert(key, o.updated_at).is_none()),
            OP_UNFOLLOW => assert!(records.remove(&key).is_some()),
            OP_TAG => {
                assert!(records.contains_key(&key), "tag on unfollowed");
                tags.insert((o.token_id, o.op.target, o.op.tag.clone()), o.updated_at);
            }
            OP_UNTAG => {
                assert!(records.contains_key(&key), "untag on unfollowed");
                assert!(tags
                    .remove(&(o.token_id, o.op.target, o.op.tag.clone()))
                    .is_some());
            }
            other => panic!("opcode {other}"),
        }
    }
    let stored: HashMap<(u64, Address), i64> = t
        .list_records
        .iter()
        .map(|r| ((r.token_id, r.address), r.updated_at))
        .collect();
    assert_eq!(stored.len(), t.list_records.len(), "duplicate records");
    assert_eq!(stored, records);
    let stored_tags: HashMap<(u64, Address, String), i64> = t
        .list_record_tags
        .iter()
        .map(|r| ((r.token_id, r.address, r.tag.clone()), r.updated_at))
        .collect();
    assert_eq!(
        stored_tags.len(),
        t.list_record_tags.len(),
        "duplicate tags"
    );
    assert_eq!(stored_tags, tags);

    // Primary lists specifically, and a few orphan tag rows exist.
    let primary: HashSet<u64> = primary_tokens(&t);
    assert!(
        t.list_records
            .iter()
            .filter(|r| primary.contains(&r.token_id))
            .count()
            > 0
    );
    let orphan = t
        .list_record_tags
        .iter()
        .filter(|g| !records.contains_key(&(g.token_id, g.address)))
        .count();
    assert!(orphan > 0, "no invisible tag rows");
    // top8 at most 8 per list; special and varied tags present.
    let mut top8: HashMap<u64, usize> = HashMap::new();
    for g in &t.list_record_tags {
        if g.tag == "top8" {
            *top8.entry(g.token_id).or_default() += 1;
        }
    }
    assert!(top8.values().all(|&c| c <= 8));
    for tag in ["top8", "block", "mute"] {
        assert!(t.list_record_tags.iter().any(|g| g.tag == tag), "{tag}");
    }
    assert!(t
        .list_record_tags
        .iter()
        .any(|g| g.tag.chars().any(|c| c.is_uppercase())));
    assert!(t.list_record_tags.iter().any(|g| !g.tag.is_ascii()));
    assert!(t.list_ops.iter().any(|o| o.op.opcode == OP_UNTAG));
    assert!(t.list_ops.iter().any(|o| o.op.opcode == OP_UNFOLLOW));
    // Self-follows occur.
    let users: HashMap<u64, Address> = t.lists.iter().map(|l| (l.token_id, l.user)).collect();
    assert!(t
        .list_records
        .iter()
        .any(|r| users[&r.token_id] == r.address));
}

fn primary_tokens(t: &Tables) -> HashSet<u64> {
    let users: HashMap<u64, Address> = t.lists.iter().map(|l| (l.token_id, l.user)).collect();
    t.primary_lists
        .iter()
        .filter(|p| users.get(&p.token_id) == Some(&p.address))
        .map(|p| p.token_id)
        .collect()
}

fn distinct<T: std::hash::Hash + Eq>(v: Vec<T>) -> bool {
    let len = v.len();
    let set: HashSet<T> = v.into_iter().collect();
    set.len() == len
}

#[test]
fn uniqueness_and_reference_rules() {
    let n = 4000;
    let t = gen(n, 5);
    assert!(distinct(
        t.lists.iter().map(|l| l.token_id).collect::<Vec<_>>()
    ));
    assert!(t.lists.iter().all(|l| l.token_id > 0));
    assert!(distinct(
        t.primary_lists
            .iter()
            .map(|p| p.address)
            .collect::<Vec<_>>()
    ));
    assert!(distinct(
        t.list_ops.iter().map(|o| o.seq).collect::<Vec<_>>()
    ));
    assert!(distinct(
        t.ens.iter().map(|e| e.address).collect::<Vec<_>>()
    ));
    assert!(distinct(
        t.ens
            .iter()
            .map(|e| e.name.to_lowercase())
            .collect::<Vec<_>>()
    ));
    assert!(distinct(
        t.badge_events
            .iter()
            .map(|e| e.event_id)
            .collect::<Vec<_>>()
    ));
    assert!(distinct(
        t.badge_events
            .iter()
            .map(|e| e.position)
            .collect::<Vec<_>>()
    ));
    assert!(distinct(
        t.badges
            .iter()
            .map(|b| (b.address, b.event_id))
            .collect::<Vec<_>>()
    ));
    let events: HashSet<i64> = t.badge_events.iter().map(|e| e.event_id).collect();
    assert!(t.badges.iter().all(|b| events.contains(&b.event_id)));
    assert!(t.badges.iter().all(|b| b.token_id.parse::<u64>().is_ok()
        && b.owner.to_lowercase() == crate::snapshot::format_address(&b.address)));
    assert!(t
        .badges
        .iter()
        .any(|b| b.owner.chars().any(|c| c.is_ascii_uppercase())));
    let by_pos: Vec<i64> = {
        let mut e = t.badge_events.clone();
        e.sort_by_key(|e| e.position);
        e.iter().map(|e| e.event_id).collect()
    };
    assert!(
        by_pos.windows(2).any(|w| w[0] > w[1]),
        "positions follow event_id order"
    );
    let holders: HashSet<Address> = t.badges.iter().map(|b| b.address).collect();
    let share = holders.len() as f64 / n as f64;
    assert!((0.15..0.25).contains(&share), "{share}");

    // Addresses: distinct accounts; tag/ops text sane.
    let users: HashSet<Address> = t.lists.iter().map(|l| l.user).collect();
    assert!(users.len() as f64 > 0.9 * n as f64);
    assert!(t
        .list_record_tags
        .iter()
        .all(|g| !g.tag.is_empty() && g.tag.len() <= 255));

    // JSON columns are JSON objects; records keep a non-alphabetical order.
    for e in &t.ens {
        for col in [&e.records, &e.chains, &e.errors].into_iter().flatten() {
            let v: serde_json::Value = serde_json::from_str(col).unwrap();
            assert!(v.is_object(), "{col}");
            assert_eq!(&v.to_string(), col, "not compact or order changed");
        }
    }
    // Keys not in alphabetical order somewhere ("description" before
    // "com.twitter").
    assert!(t.ens.iter().any(|e| e.records.as_deref().is_some_and(|r| {
        match (r.find("\"description\""), r.find("\"com.twitter\"")) {
            (Some(d), Some(c)) => d < c,
            _ => false,
        }
    })));
    assert!(t
        .ens
        .iter()
        .any(|e| e.name.chars().any(|c| c.is_ascii_uppercase())));
    assert!(t.ens.iter().any(|e| e.avatar.is_none()) && t.ens.iter().any(|e| e.records.is_none()));
    let ens_share = t.ens.iter().filter(|e| users.contains(&e.address)).count() as f64 / n as f64;
    assert!((0.7..0.9).contains(&ens_share), "{ens_share}");
    assert!(t.ens.iter().any(|e| !users.contains(&e.address)));

    // Primary-list rule is exercised both ways.
    let primary = primary_tokens(&t);
    let share = primary.len() as f64 / n as f64;
    assert!((0.85..0.95).contains(&share), "{share}");
    let ignored = t.primary_lists.len() - primary.len();
    assert!(ignored > 10, "{ignored}");
    let list_tokens: HashSet<u64> = t.lists.iter().map(|l| l.token_id).collect();
    assert!(t
        .primary_lists
        .iter()
        .any(|p| !list_tokens.contains(&p.token_id)));
    let list_user: HashMap<u64, Address> = t.lists.iter().map(|l| (l.token_id, l.user)).collect();
    assert!(t
        .primary_lists
        .iter()
        .any(|p| list_user.get(&p.token_id).is_some_and(|u| *u != p.address)));
    let non_primary_records = t
        .list_records
        .iter()
        .filter(|r| !primary.contains(&r.token_id))
        .count();
    assert!(non_primary_records > 0);
    assert!(t.lists.iter().any(|l| l.owner != l.user));
    assert!(t.lists.iter().any(|l| l.manager != l.owner));
}

/// The indexer's `ens_metadata` has no header column (an export reads
/// `records->>'header'`) and its `chains` column is never filled, so
/// generated rows must round-trip through it.
#[test]
fn ens_rows_fit_the_indexer() {
    let t = gen(3000, 2);
    assert!(t.ens.iter().all(|e| e.chains.is_none()));
    assert!(t.ens.iter().any(|e| e.header.is_some()));
    for e in &t.ens {
        let from_records = e.records.as_deref().and_then(|r| {
            let v: serde_json::Value = serde_json::from_str(r).unwrap();
            v.get("header").and_then(|h| h.as_str()).map(str::to_owned)
        });
        assert_eq!(e.header, from_records, "{}", e.name);
    }
}

#[test]
fn power_law_shape() {
    let n = 5000;
    let t = gen(n, 9);
    let primary = primary_tokens(&t);
    let mut followers: HashMap<Address, u64> = HashMap::new();
    let mut following: HashMap<u64, u64> = HashMap::new();
    for r in t
        .list_records
        .iter()
        .filter(|r| primary.contains(&r.token_id))
    {
        *followers.entry(r.address).or_default() += 1;
        *following.entry(r.token_id).or_default() += 1;
    }
    let mut f: Vec<u64> = followers.values().copied().collect();
    f.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = f.iter().sum();
    let median = f[f.len() / 2];
    assert!(f[0] > 50 * median.max(1), "top {} median {median}", f[0]);
    // The top 1% hold well over 20% here (over half at 1M accounts,
    // where big lists saturate the head less).
    let top1pct: u64 = f[..(n as usize / 100)].iter().sum();
    assert!(top1pct * 5 > total, "top 1% has {top1pct} of {total}");
    let per_account = t.list_records.len() as f64 / n as f64;
    assert!(
        (14.0..28.0).contains(&per_account),
        "{per_account} records per account"
    );
    let mut out: Vec<u64> = following.values().copied().collect();
    out.sort_unstable();
    assert!(
        out[out.len() / 2] < 20 && *out.last().unwrap() > 300,
        "{:?}",
        out.last()
    );
}

#[test]
fn generate_writes_a_loadable_root() {
    let root = tempfile::tempdir().unwrap();
    let o = GenerateOptions {
        out: root.path().join("snaps"),
        ..opts(1500, 4)
    };
    let dir = generate(&o).unwrap();
    assert_eq!(dir, o.out.join("gen-1500-4"));
    let current = std::fs::read_to_string(o.out.join("CURRENT")).unwrap();
    assert_eq!(current.trim(), "gen-1500-4");
    let loaded = crate::snapshot::load(&o.out).unwrap();
    assert_eq!(loaded.name, "gen-1500-4");
    assert_eq!(loaded.created_at_ms, o.created_at_ms);
    assert_eq!(loaded.manifest.created_at, DEFAULT_CREATED_AT);
    assert!(loaded.manifest.tables.values().all(|t| t.sha256.is_some()));
    // The streamed files hold exactly the in-memory tables.
    crate::snapshot::assert_tables_eq(&loaded.tables, &gen(1500, 4));
}

/// The curated list holds what 43's rules need: accounts on it that
/// follow some of the others and not the rest (each a viewer offered
/// itself), tied positions, a name that needs escaping and an address
/// nothing else names.
#[test]
fn recommended_rows_cover_the_rules() {
    let t = gen(3000, 7);
    let r = &t.recommended;
    assert!((15..=22).contains(&r.len()), "{} rows", r.len());
    let addresses: HashSet<Address> = r.iter().map(|x| x.address).collect();
    assert_eq!(addresses.len(), r.len(), "addresses are unique");
    let positions: HashSet<i64> = r.iter().map(|x| x.position).collect();
    assert!(positions.len() < r.len(), "some positions tie");
    assert!(r.iter().any(|x| x.name.contains(['"', '<', '&'])));
    // A row's account whose primary list follows some rows and not others.
    let primary_of = |a: &Address| {
        let p = t.primary_lists.iter().find(|p| p.address == *a)?;
        (t.lists.iter()).find(|l| l.token_id == p.token_id && l.user == *a)?;
        Some(p.token_id)
    };
    let viewers = r
        .iter()
        .filter_map(|v| primary_of(&v.address))
        .filter(|&list| {
            let follows: HashSet<Address> = (t.list_records.iter())
                .filter(|x| x.token_id == list)
                .map(|x| x.address)
                .collect();
            let followed = r.iter().filter(|x| follows.contains(&x.address)).count();
            followed > 0 && followed < r.len() - 1
        });
    assert!(viewers.count() >= 3);
    // The last row names an address no other table does, without a header.
    let last = r.last().unwrap();
    let named: HashSet<Address> = (t.list_records.iter().map(|x| x.address))
        .chain(t.lists.iter().map(|l| l.user))
        .chain(t.ens.iter().map(|e| e.address))
        .collect();
    assert!(!named.contains(&last.address));
    assert_eq!(last.header, None);
    assert!(r[..r.len() - 1].iter().all(|x| x.header.is_some()));
}
