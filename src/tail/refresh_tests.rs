//! A refresh against its model: random bases and held entities, the
//! refreshed graph's compacted values against those of a full load of
//! the merged tables (`Overlay::merge`, what a fold writes).

use super::Overlay;
use crate::export::reread::Reread;
use crate::graph::{Graph, RankedSort};
use crate::rng::SplitMix64;
use crate::snapshot::{Address, EnsRow, ListRow, ListState, Op, OpRow, PrimaryListRow};
use crate::snapshot::{RecordRow, Tables, TagRow};

pub(super) const ACCOUNTS: u64 = 24;
const LISTS: u64 = 20;
const TAGS: [&str; 4] = ["top8", "block", "mute", "friend"];

/// Base accounts' addresses are even in byte 17, the held entities' new
/// ones odd: they fall between the base's in address order.
pub(super) fn address(i: u64, new: bool) -> Address {
    let mut a = [0; 20];
    a[17] = (2 * i + u64::from(new)) as u8;
    a[19] = 1;
    a
}

fn someone(r: &mut SplitMix64, new_ones: bool) -> Address {
    address(r.below(ACCOUNTS), new_ones && r.chance(0.3))
}

/// A list's records and tags, targets distinct.
fn rows_of(r: &mut SplitMix64, token_id: u64, new_ones: bool) -> (Vec<RecordRow>, Vec<TagRow>) {
    let mut records: Vec<RecordRow> = (0..r.below(9))
        .map(|_| RecordRow {
            token_id,
            address: someone(r, new_ones),
            updated_at: 10 + r.below(5) as i64,
        })
        .collect();
    records.sort_by_key(|x| x.address);
    records.dedup_by_key(|x| x.address);
    let mut tags = Vec::new();
    for x in &records {
        for tag in TAGS {
            if r.chance(0.2) {
                tags.push(TagRow {
                    token_id,
                    address: x.address,
                    tag: tag.into(),
                    updated_at: x.updated_at,
                });
            }
        }
    }
    (records, tags)
}

fn list(r: &mut SplitMix64, token_id: u64, new_ones: bool) -> ListRow {
    let user = if r.chance(0.1) {
        [0; 20]
    } else {
        someone(r, new_ones)
    };
    let owner = if r.chance(0.7) {
        user
    } else {
        someone(r, new_ones)
    };
    ListRow {
        token_id,
        user,
        owner,
        manager: owner,
    }
}

fn op(r: &mut SplitMix64, token_id: u64, seq: u64, new_ones: bool) -> OpRow {
    OpRow {
        token_id,
        seq,
        op: Op {
            opcode: 1 + r.below(2) as u8,
            target: someone(r, new_ones),
            tag: String::new(),
        },
        updated_at: 100 + r.below(50) as i64,
    }
}

pub(super) fn base(r: &mut SplitMix64) -> Tables {
    let lists: Vec<ListRow> = (1..=LISTS).map(|t| list(r, t, false)).collect();
    let mut t = Tables::default();
    for l in &lists {
        let (records, tags) = rows_of(r, l.token_id, false);
        t.list_records.extend(records);
        t.list_record_tags.extend(tags);
    }
    for l in &lists {
        if l.user != [0; 20] && r.chance(0.8) {
            t.primary_lists.retain(|p| p.address != l.user);
            t.primary_lists.push(PrimaryListRow {
                address: l.user,
                token_id: l.token_id,
            });
        }
    }
    t.primary_lists.sort_by_key(|p| p.address);
    t.list_ops = (1..=60)
        .map(|seq| {
            let token = 1 + r.below(LISTS + 3);
            op(r, token, seq, false)
        })
        .collect();
    t.ens = (0..ACCOUNTS)
        .filter(|i| i % 3 == 0)
        .map(|i| EnsRow {
            address: address(i, false),
            name: format!("n{i}.eth"),
            ..EnsRow::default()
        })
        .collect();
    t.lists = lists;
    t
}

/// One poll's reads: some lists re-read (new accounts among them), a
/// mint or two, primary lists changed, new ops, sometimes a history read
/// again.
pub(super) fn reread(r: &mut SplitMix64, base: &Tables) -> Reread {
    let mut reread = Reread::default();
    for token in 1..=LISTS + 2 {
        if !r.chance(0.35) {
            continue;
        }
        let row = match base.lists.iter().find(|l| l.token_id == token) {
            Some(l) if r.chance(0.7) => l.clone(),
            _ => list(r, token, true),
        };
        let (records, tags) = rows_of(r, token, true);
        reread.lists.insert(
            token,
            ListState {
                row: Some(row),
                records,
                tags,
            },
        );
    }
    for state in reread.lists.values() {
        let row = state.row.as_ref().expect("a row");
        if row.user != [0; 20] && r.chance(0.4) {
            reread.primary.insert(row.user, Some(row.token_id));
        }
    }
    if r.chance(0.3) {
        reread
            .primary
            .insert(address(r.below(ACCOUNTS), false), None);
    }
    for place in 0..r.below(12) {
        let token = 1 + r.below(LISTS + 2);
        let o = op(r, token, 0, true);
        let at = o.updated_at;
        reread.ops.push((o, (at, 1, [1000 + place, 0, 0])));
    }
    if r.chance(0.3) {
        let token = 1 + r.below(LISTS);
        let o = op(r, token, 0, true);
        let at = o.updated_at;
        reread
            .rescanned
            .insert(token, vec![(o, (at, 1, [900, 0, 0]))]);
    }
    reread
}

/// The entities of one poll's reads.
fn held(r: &mut SplitMix64, base: &Tables) -> Overlay {
    let mut overlay = Overlay::default();
    overlay.apply(reread(r, base), 1);
    overlay
}

/// Every compacted value of `g`, by address.
fn compacted_values(g: &Graph) -> Vec<String> {
    let addresses = |ids: &[u32]| -> Vec<String> {
        ids.iter()
            .map(|&id| crate::snapshot::format_address(g.address(id)))
            .collect()
    };
    let mut out = vec![
        format!("stats {:?}", g.global_stats()),
        format!("board {:?}", addresses(g.leaderboard())),
        format!(
            "by address {:?}",
            addresses(&g.leaderboard_by_address().collect::<Vec<_>>())
        ),
    ];
    for term in [
        "n",
        "n1",
        ".eth",
        "0001",
        "2a",
        "00000000000000000000000000000000001",
        "0x",
    ] {
        let ids = g.leaderboard_search(term, 0, 1000);
        out.push(format!("search {term} {:?}", addresses(&ids)));
    }
    for sort in RankedSort::ALL {
        for descending in [true, false] {
            let ranked = addresses(g.ranked(sort, descending));
            out.push(format!("{sort:?} {descending} {ranked:?}"));
        }
    }
    for i in 0..ACCOUNTS {
        for new in [false, true] {
            // An account one graph lacks (named by nothing, or only by
            // what the other drops) has no counts.
            let id = g.account_id(&address(i, new));
            out.push(format!(
                "{i} {new} {:?} {:?} {:?}",
                id.map(|id| g.stats(id)).unwrap_or_default(),
                id.map_or(vec![], |id| addresses(g.followers_by_count(id))),
                id.map_or(0, |id| g.compacted_followers_count(id)),
            ));
        }
    }
    out
}

#[test]
fn a_refresh_answers_as_a_full_load_of_the_merged_tables() {
    let (mut refreshed, mut folded) = (0, 0);
    for seed in 0..40 {
        let r = &mut SplitMix64::new(seed);
        let tables = base(r);
        let overlay = held(r, &tables);
        let merged = overlay.merge(tables.clone());
        let (Ok(g), Ok(full)) = (
            Graph::from_tables("base".into(), 0, tables),
            Graph::from_tables("full".into(), 0, merged),
        ) else {
            continue;
        };
        let changes = overlay.changes();
        let Ok(held) = g.with_live(&changes, None) else {
            continue;
        };
        let Ok(base) = held.refreshed(&changes, "refreshed".into(), 0) else {
            folded += 1;
            continue;
        };
        let got = base
            .with_live(&changes, Some(&held))
            .expect("live as before");
        let (got, want) = (compacted_values(&got), compacted_values(&full));
        for (a, b) in got.iter().zip(&want) {
            assert_eq!(a, b, "seed {seed}");
        }
        assert_eq!(got.len(), want.len(), "seed {seed}");
        refreshed += 1;
    }
    assert!(
        refreshed > 25 && folded < 8,
        "{refreshed} refreshed, {folded} folded"
    );
}
