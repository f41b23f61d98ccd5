//! The load's orchestration: which index is built from which table, in
//! what order, and what overlaps what. Each index's own building lives in
//! its file; this one holds the phases, the phase timer and `Stop`.
//!
//! The three large tables (`list_ops`, `list_records`,
//! `list_record_tags`) are never held as rows: each row group is decoded
//! in parallel, every row validated and turned into the few bytes its
//! index needs (a 16-byte op or edge, or nothing for an invisible row),
//! and the decoded batch dropped. Phases run largest-transient first, so
//! each phase's scratch space is freed before the next one's final arrays
//! grow:
//!
//! 1. the small tables, read whole (lists, primary lists, profiles,
//!    badges); addresses are interned to *provisional* ids as they are met;
//! 2. `list_ops` -> the notification index, grouped by provisional target
//!    (the order of a target's ops does not depend on account ids), the
//!    mostly serial profiles built alongside;
//! 3. `list_records` -> 16-byte edges (primary lists' by user, other
//!    lists' by ordinal); then the account ids are made final (address
//!    order), edges renumbered and sorted in place, the two CSRs built
//!    (the badges alongside) and the edges dropped;
//! 4. `list_record_tags` -> tag sets of the records of both CSRs;
//! 5. counts, the leaderboard, search, the follower index, ranks, the
//!    ranked orders, the lists (each account's, `/stats`), the
//!    recommended rows and the latest follows (`/discover`).
//!
//! Rules across rows (uniqueness) are checked on the compact forms. Any
//! fault sends the caller to the row reader (`read_snapshot_from`), which
//! names the first fault exactly as docs/snapshot.md ("Validation") and
//! the tests expect.
use rayon::prelude::*;

use super::accounts::{AddressTable, NameIndex, PrimaryLists};
use super::badges::build_badges;
use super::discover::LatestFollows;
use super::followers::build_follower_index;
use super::intern::Interner;
use super::lists::ListsBuilder;
use super::notifications::{group_ops, scan_ops, ACTOR_BITS};
use super::profiles::ProfilesBuilder;
use super::ranked::RankedOrders;
use super::ranks::{count_follows, count_tagged, leaderboard_order, Stats};
use super::recommended::RecommendedRows;
use super::records::{forward_csr, list_csr, scan_records, Records};
use super::stop::{limit, Stop};
use super::tagged_by::TaggedBy;
use super::tags::{scan_tags, SharedTags, TagTargets};
use super::{Graph, SearchIndex, TableCounts};
use crate::snapshot::{
    checked_manifest, manifest_entries, read_small_tables, Address, DirFiles, LoadedSnapshot,
    SnapshotError, SnapshotErrorKind, SnapshotFiles, Tables,
};

/// Builds the graph of the snapshot `src` holds.
pub(super) fn build(src: &dyn SnapshotFiles, name: String) -> Result<Graph, Stop> {
    let mut timer = PhaseTimer::start();
    let (manifest, created_at_ms) = checked_manifest(src)?;
    let entries = manifest_entries(&manifest);
    let anchor = manifest
        .source
        .as_ref()
        .map(|s| crate::snapshot::Anchor::from_json(s).expect("checked_manifest checked it"));
    let table_counts = TableCounts::from_fn(|t| entries[t.index()].map_or(0, |e| e.rows));
    let [_, _, Some(records_e), Some(tags_e), Some(ops_e), Some(ens_e), ..] = entries[..] else {
        unreachable!("checked_manifest requires every required table");
    };

    // 1. Small tables; the primary-list rule.
    let small = read_small_tables(src, &entries)?;
    timer.done("small tables");
    // Most accounts have a list, many a profile; the table grows if
    // there are more.
    let interner = Interner::new(small.lists.len().max(small.ens.len()));
    let primary = PrimaryLists::new(&small.lists, &small.primary_lists, &interner);
    let lists = ListsBuilder::new(&small.lists, &interner);
    let list_ordinals = lists.ordinals();
    let (ens, event_rows, badge_rows) = (small.ens, small.badge_events, small.badges);
    let recommended_rows = small.recommended;
    drop((small.lists, small.primary_lists));
    let primary_prov = primary.provisional_users();
    timer.done("primary lists");

    // 2. Ops, and meanwhile (its part is mostly serial) the profiles.
    let tags = SharedTags::default();
    let (profiles, scanned_ops) = rayon::join(
        || {
            let profiles = ProfilesBuilder::new(&ens, &interner, &ens_e.file)?;
            let names = NameIndex::build(&ens, profiles.ids());
            let holders: Vec<Address> = badge_rows.iter().map(|b| b.address).collect();
            interner.ids_par(&holders);
            Ok::<_, Stop>((profiles, names))
        },
        || scan_ops(src, ops_e, &primary_prov, &list_ordinals, &interner, &tags),
    );
    let ((profiles, names), ((ops, tagged_ops), op_facts)) = (profiles?, scanned_ops?);
    drop(ens);
    timer.done("profiles, list_ops scan");
    let notifications = group_ops(ops, tagged_ops, interner.len());
    timer.done("notifications");

    // 3. Records, then final ids.
    let (edges, list_edges) =
        scan_records(src, records_e, &primary_prov, &list_ordinals, &interner)?;
    drop(primary_prov);
    timer.done("records scan");
    tracing::debug!(accounts = interner.len(), "addresses interned");
    let (addresses, perm) = interner.finish();
    let n = addresses.len();
    if n > 1 << ACTOR_BITS {
        return Err(limit(
            &ops_e.file,
            format!("more than 2^{ACTOR_BITS} accounts"),
        ));
    }
    let addresses = AddressTable::new(addresses);
    // The badges (serial) alongside the forward CSR.
    let ((following, other_lists), badges) = rayon::join(
        || {
            (
                forward_csr(edges, &perm, &records_e.file),
                list_csr(list_edges, &perm, &records_e.file),
            )
        },
        || {
            build_badges(&event_rows, &badge_rows, |a| {
                addresses.id(a).expect("badge holders were interned")
            })
        },
    );
    let (following, other_lists) = (following?, other_lists?);
    drop((event_rows, badge_rows));
    timer.done("forward csr, badges");
    let notifications = notifications.finish(&perm);
    let accounts = primary.finish(addresses, &perm);
    timer.done("final ids");

    // 4. Record tags.
    let mut tags = crate::sync::into_inner(tags);
    let at = TagTargets {
        primary_list_user: accounts.primary_list_users(),
        following: &following,
        list_ordinal: &list_ordinals,
        others: &other_lists,
    };
    let (record_tagsets, list_tagsets) =
        scan_tags(src, tags_e, &at, &|a: &Address| accounts.id(a), &mut tags)?;
    let tags = tags.finish();
    let records = Records::new(following, record_tagsets.sets);
    let other_lists = Records::new(other_lists, list_tagsets.sets);
    let tagged_by = TaggedBy::build(&records, accounts.addresses());
    timer.done("tagsets");

    // 5. Counts and the leaderboard, then the largest scratch space
    // (search) before the follower index, then ranks.
    let mut counts = count_follows(n, records.csr());
    let leaderboard = leaderboard_order(&counts, |id| accounts.primary_list(id).is_some());
    timer.done("counts, leaderboard");
    let profiles = profiles.finish(n, &perm);
    let names = names.finish(&perm);
    let search = SearchIndex::build(&leaderboard, accounts.addresses(), |id| {
        profiles.get(id).map(|p| p.name())
    });
    timer.done("search index");
    let (followers, mutuals) = build_follower_index(n, records.csr(), &counts);
    timer.done("follower index");
    let tagged = records.tagged_edges().zip(&record_tagsets.targets);
    let hidden_followers = count_tagged(
        &mut counts,
        tagged.map(|((_, set), &to)| (tags.set_flags(set), to)),
    );
    let stats = Stats::new(counts, mutuals, leaderboard, hidden_followers);
    let ranked = RankedOrders::build(stats.counts());
    timer.done("tag counts, mutuals, ranks");
    // Accounts with a record in any listed list: the primary lists'
    // targets have followers; the other lists' are marked.
    let mut other_targets = vec![false; n];
    for row in 0..other_lists.csr().node_count() as u32 {
        for &t in other_lists.following_of(row).0 {
            other_targets[t as usize] = true;
        }
    }
    let lists = lists.finish(
        list_ordinals,
        &perm,
        other_lists,
        |id| other_targets[id as usize] || stats.counts()[id as usize].followers > 0,
        op_facts,
    );
    drop(perm);
    timer.done("lists");
    let recommended = RecommendedRows::build(recommended_rows, |a| accounts.id(a));
    let latest_follows = LatestFollows::build(n, &records, |set| tags.set_flags(set));
    timer.done("recommended, latest follows");
    Ok(Graph {
        name,
        created_at_ms,
        created_at: crate::time::format_iso_ms(created_at_ms),
        anchor,
        table_counts,
        live: None,
        compacted: None,
        base: std::sync::Arc::new(super::Indexes {
            accounts,
            names,
            records,
            followers,
            tags,
            tagged_by,
            stats,
            ranked,
            lists,
            search,
            profiles,
            notifications,
            badges,
            recommended,
            latest_follows,
        }),
    })
}

/// The ways to a graph: from snapshot files (streamed), from rows read
/// already, from in-memory tables.
impl Graph {
    /// Reads, validates and indexes the snapshot whose files `src` holds
    /// (named `name`, found at `dir`), streaming its large tables. A
    /// snapshot it rejects gets the row reader's error, which names the
    /// first fault in table and row order.
    pub fn load(
        src: &dyn SnapshotFiles,
        name: String,
        dir: std::path::PathBuf,
    ) -> Result<Graph, SnapshotError> {
        let stop = match build(src, name.clone()) {
            Ok(graph) => return Ok(graph),
            Err(stop) => stop,
        };
        let loaded = crate::snapshot::read_snapshot_from(src, name, dir)?;
        match stop {
            // Valid rows, but a limit of the graph broken.
            Stop::Invalid(e) => Err(e),
            Stop::OpsOutOfOrder => {
                tracing::info!("list_ops is not in seq order: sorting its rows in memory first");
                Graph::from_tables(loaded.name, loaded.created_at_ms, loaded.tables)
            }
        }
    }

    /// Resolves `path` (a root or one snapshot directory) and loads it.
    pub fn load_path(path: &std::path::Path) -> Result<Graph, SnapshotError> {
        let dir = crate::snapshot::resolve_snapshot_dir(path)?;
        let name = crate::snapshot::snapshot_name(&dir);
        Graph::load(&DirFiles(&dir), name, dir.clone())
    }

    /// Builds the graph of a snapshot already read into rows.
    pub fn build(snapshot: LoadedSnapshot) -> Result<Graph, SnapshotError> {
        Graph::from_tables(snapshot.name, snapshot.created_at_ms, snapshot.tables)
    }

    /// Builds a graph from in-memory tables (benches, tests): they go
    /// through in-memory Parquet files and the one loader. Ops are put in
    /// `seq` order first.
    pub fn from_tables(
        name: String,
        created_at_ms: i64,
        mut tables: Tables,
    ) -> Result<Graph, SnapshotError> {
        if !tables.list_ops.windows(2).all(|w| w[0].seq < w[1].seq) {
            tables.list_ops.par_sort_by_key(|o| o.seq);
        }
        let files = encode(created_at_ms, &tables)?;
        drop(tables);
        build_from(&files, name)
    }
}

fn encode(
    created_at_ms: i64,
    tables: &Tables,
) -> Result<crate::snapshot::MemoryFiles, SnapshotError> {
    crate::snapshot::memory_files(created_at_ms, tables).map_err(|e| {
        SnapshotError::new(
            SnapshotErrorKind::Internal,
            "snapshot",
            format!("cannot encode tables: {e}"),
        )
    })
}

fn build_from(files: &crate::snapshot::MemoryFiles, name: String) -> Result<Graph, SnapshotError> {
    build(files, name).map_err(|stop| match stop {
        Stop::Invalid(e) => e,
        Stop::OpsOutOfOrder => {
            SnapshotError::new(SnapshotErrorKind::Duplicate, "list_ops", "duplicate seq")
        }
    })
}

/// Logs the wall and CPU time of each build phase at debug level (CPU
/// over wall is how many cores the phase kept busy).
struct PhaseTimer {
    wall: std::time::Instant,
    cpu_ms: u64,
}

impl PhaseTimer {
    fn start() -> Self {
        PhaseTimer {
            wall: std::time::Instant::now(),
            cpu_ms: process_cpu_ms(),
        }
    }

    fn done(&mut self, phase: &str) {
        let cpu_ms = process_cpu_ms();
        tracing::debug!(
            phase,
            ms = self.wall.elapsed().as_millis() as u64,
            cpu_ms = cpu_ms.saturating_sub(self.cpu_ms),
            "graph build phase"
        );
        *self = PhaseTimer {
            wall: std::time::Instant::now(),
            cpu_ms,
        };
    }
}

/// User + system CPU time of this process so far, from /proc (0 where
/// there is none): only when debug logging is on.
fn process_cpu_ms() -> u64 {
    if !tracing::enabled!(tracing::Level::DEBUG) {
        return 0;
    }
    crate::process::cpu_seconds().map_or(0, |s| (s * 1000.0) as u64)
}
