//! Builds the graph straight from the snapshot's Parquet tables.
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
//!    (the order of a target's ops does not depend on account ids);
//! 3. `list_records` -> 16-byte edges; then the account ids are made
//!    final (address order), edges renumbered and sorted in place, the
//!    forward CSR built and the edges dropped;
//! 4. `list_record_tags` -> tag sets of visible records;
//! 5. counts, the follower index, ranks, the leaderboard, search, badges.
//!
//! Rules across rows (uniqueness) are checked on the compact forms. Any
//! fault sends the caller to the row reader (`read_snapshot_from`), which
//! names the first fault exactly as SNAPSHOT.md and the tests expect.
use std::cmp::Reverse;
use std::sync::Mutex;

use petgraph::csr::Csr;
use petgraph::visit::EdgeRef;
use rayon::prelude::*;

use super::intern::Interner;
use super::*;
use crate::snapshot::{
    checked_manifest, manifest_entries, read_small_tables, scan_list_ops, scan_list_record_tags,
    scan_list_records, Address, BadgeRow, PrimaryListRow, SnapshotErrorKind, SnapshotFiles,
};

/// Why the streaming build stopped.
pub(super) enum Stop {
    /// The snapshot is invalid, or breaks a limit; the row reader names
    /// the first fault when it is one of SNAPSHOT.md's.
    Invalid(SnapshotError),
    /// Valid so far, but `list_ops` is not in `seq` order in the file: the
    /// notification order (ties by `seq`) needs the rows sorted first.
    OpsOutOfOrder,
}

impl From<SnapshotError> for Stop {
    fn from(e: SnapshotError) -> Self {
        Stop::Invalid(e)
    }
}

fn limit(file: &str, reason: impl Into<String>) -> Stop {
    Stop::Invalid(SnapshotError::new(SnapshotErrorKind::Limit, file, reason))
}

fn duplicate(file: &str, reason: impl Into<String>) -> Stop {
    Stop::Invalid(SnapshotError::new(
        SnapshotErrorKind::Duplicate,
        file,
        reason,
    ))
}

/// The tag texts, interned from many threads.
type SharedTags = Mutex<TagInterner>;

/// The tag texts one row group meets, numbered locally (no lock per row);
/// mapped to shared ids under one lock once the group is read.
type LocalTags = TagInterner;

impl LocalTags {
    /// The shared id of each local id in `wanted` (others: `u32::MAX`).
    fn shared_ids(
        &self,
        mut wanted: impl Iterator<Item = u32>,
        mut intern: impl FnMut(&str) -> u32,
    ) -> Vec<u32> {
        let mut shared = vec![u32::MAX; self.texts.len()];
        wanted.try_for_each(|local| {
            let slot = shared.get_mut(local as usize)?;
            if *slot == u32::MAX {
                *slot = intern(&self.texts[local as usize]);
            }
            Some(())
        });
        shared
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Builds the graph of the snapshot `src` holds.
pub(super) fn build(src: &dyn SnapshotFiles, name: String) -> Result<Graph, Stop> {
    let mut timer = PhaseTimer::start();
    let (manifest, created_at_ms) = checked_manifest(src)?;
    let entries = manifest_entries(&manifest);
    let table_counts = TableCounts::from_fn(|t| entries[t.index()].rows);
    let [_, _, records_e, tags_e, ops_e, ens_e, ..] = entries[..] else {
        unreachable!("one entry per table");
    };

    // 1. Small tables; the primary-list rule: primary_lists[A] == L and
    // lists[L].user == A.
    let small = read_small_tables(src, &entries)?;
    timer.done("small tables");
    // Most accounts have a list, many a profile; the table grows if
    // there are more.
    let interner = Interner::new(small.lists.len().max(small.ens.len()));
    let primary: Vec<(u64, u32)> = {
        let mut list_users: Vec<(u64, Address)> =
            small.lists.iter().map(|l| (l.token_id, l.user)).collect();
        list_users.par_sort_unstable_by_key(|l| l.0);
        let user_of = |token: u64| {
            let i = list_users.binary_search_by_key(&token, |l| l.0).ok()?;
            Some(list_users[i].1)
        };
        let kept: Vec<&PrimaryListRow> = small
            .primary_lists
            .par_iter()
            .filter(|p| user_of(p.token_id) == Some(p.address))
            .collect();
        let users: Vec<Address> = kept.iter().map(|p| p.address).collect();
        kept.iter()
            .map(|p| p.token_id)
            .zip(interner.ids_par(&users))
            .collect()
    };
    let (ens, badge_events, badges) = (small.ens, small.badge_events, small.badges);
    drop((small.lists, small.primary_lists));
    // Token id -> the user's provisional id (a dense table as minted).
    let primary_prov = {
        let mut by_token = primary.clone();
        by_token.par_sort_unstable();
        lookup::ListUsers::new(by_token)
    };
    timer.done("primary lists");

    // 2. Ops, and meanwhile (its part is mostly serial) the profiles.
    let tags = SharedTags::default();
    let (profiles, scanned_ops) = rayon::join(
        || {
            let profiles = ProfilesBuilder::new(&ens, &interner, &ens_e.file)?;
            let holders: Vec<Address> = badges.iter().map(|b| b.address).collect();
            interner.ids_par(&holders);
            Ok::<_, Stop>(profiles)
        },
        || scan_ops(src, ops_e, &primary_prov, &interner, &tags),
    );
    let (profiles, (ops, tagged_ops)) = (profiles?, scanned_ops?);
    drop(ens);
    timer.done("profiles, list_ops scan");
    let mut notifications = group_ops(ops, tagged_ops, interner.len());
    timer.done("notifications");

    // 3. Records, then final ids.
    let edges = scan_records(src, records_e, &primary_prov, &interner)?;
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
    let address_buckets = lookup::Buckets::new(n, |i| lookup::Buckets::of_address(&addresses[i]));
    let account_id = |a: &Address| lookup::find_address(&addresses, &address_buckets, a);
    // The badges (serial) alongside the forward CSR.
    let (following, (badge_events, holdings)) = rayon::join(
        || forward_csr(edges, &perm, &records_e.file),
        || {
            build_badges(&badge_events, &badges, |a| {
                account_id(a).expect("badge holders were interned")
            })
        },
    );
    let following = following?;
    drop(badges);
    timer.done("forward csr, badges");
    notifications.renumber(&perm);
    let mut primary_list = vec![0u64; n];
    let mut primary_list_user: Vec<(u64, AccountId)> = primary
        .into_iter()
        .map(|(token, prov)| {
            let id = perm[prov as usize];
            primary_list[id as usize] = token;
            (token, id)
        })
        .collect();
    primary_list_user.par_sort_unstable();
    let primary_list_user = lookup::ListUsers::new(primary_list_user);
    timer.done("final ids");

    // 4. Record tags.
    let mut tags = tags.into_inner().unwrap_or_else(|e| e.into_inner());
    let (record_tagsets, tagset_targets) = scan_tags(
        src,
        tags_e,
        &primary_list_user,
        &account_id,
        &following,
        &mut tags,
    )?;
    let mut tagged = vec![0u64; following.edge_count().div_ceil(64)];
    for &(edge, _) in &record_tagsets {
        tagged[edge as usize / 64] |= 1 << (edge % 64);
    }
    timer.done("tagsets");

    // 5. Counts and the leaderboard, then the largest scratch space
    // (search) before the follower index, then ranks.
    let mut stats = vec![Counts::default(); n];
    for f in 0..following.node_count() as u32 {
        let targets = following.neighbors_slice(f);
        stats[f as usize].following = targets.len() as u32;
        for &t in targets {
            stats[t as usize].followers += 1;
        }
    }
    let mut leaderboard: Vec<AccountId> = (0..n as u32)
        .filter(|&id| primary_list[id as usize] != 0 || stats[id as usize].followers > 0)
        .collect();
    leaderboard.par_sort_unstable_by_key(|&id| (Reverse(stats[id as usize].followers), id));
    timer.done("counts, leaderboard");
    let (profile_of, profiles, profile_text, names) = profiles.finish(n, &perm);
    drop(perm);
    let search = SearchIndex::build(&leaderboard, &addresses, |id| {
        profiles.get(profile_of[id as usize] as usize).map(|slots| {
            Profile {
                arena: &profile_text,
                slots,
            }
            .name()
        })
    });
    timer.done("search index");
    let name_buckets = lookup::Buckets::new(names.len(), |i| lookup::Buckets::of_hash(names[i].0));
    let (followers, mutuals) = build_follower_index(n, &following, &stats);
    timer.done("follower index");
    for (&(_, set), &to) in record_tagsets.iter().zip(&tagset_targets) {
        let flags = tags.set_flags[set as usize];
        if flags & FLAG_BLOCK != 0 {
            stats[to as usize].blocks += 1;
        }
        if flags & FLAG_TOP8 != 0 {
            stats[to as usize].top8 += 1;
        }
    }
    for (s, m) in stats.iter_mut().zip(mutuals) {
        s.mutuals = m;
    }
    let rank_tables = [
        RankTable::new(stats.iter().map(|s| s.followers)),
        RankTable::new(stats.iter().map(|s| s.following)),
        RankTable::new(stats.iter().map(|s| s.mutuals)),
        RankTable::new(stats.iter().map(|s| s.blocks)),
        RankTable::new(stats.iter().map(|s| s.top8)),
    ];
    timer.done("tag counts, mutuals, ranks");
    Ok(Graph {
        name,
        created_at_ms,
        created_at: crate::time::format_iso_ms(created_at_ms),
        table_counts,
        addresses,
        address_buckets,
        primary_list,
        primary_list_user,
        following,
        tagged,
        record_tagsets,
        followers,
        tag_texts: tags.texts,
        tag_ids: tags.ids,
        tagsets: tags.sets,
        tagset_flags: tags.set_flags,
        counts: stats,
        rank_tables,
        leaderboard,
        search,
        profile_of,
        profiles,
        profile_text,
        names,
        name_buckets,
        notification_rows: notifications.rows,
        notifications: notifications.ops,
        notification_tags: notifications.tags,
        badge_events,
        holdings,
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
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0;
    };
    // Fields after the command name (which may hold spaces): utime and
    // stime are the 12th and 13th, in clock ticks (100 per second).
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = after_name
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    ticks * 10
}

/// One visible op as decoded: 16 bytes, grouped by `target` later.
#[derive(Clone, Copy, Debug, Default)]
struct OpItem {
    updated_at: i64,
    actor_op: u32,
    target: u32,
}

/// The visible ops in file order, and (op index, tag id) of the tag and
/// untag ops among them.
type ScannedOps = (Vec<OpItem>, Vec<(u32, u32)>);

/// What one row group of `list_ops` reports besides its ops.
struct OpGroup {
    /// The targets of the kept ops, interned once the group is read (an
    /// op's `target` is its index here until then).
    targets: Vec<Address>,
    /// The tags of `tagged`, local ids until the group is read.
    tags: LocalTags,
    kept: u32,
    /// (index among the group's kept ops, tag id) of tag/untag ops.
    tagged: Vec<(u32, u32)>,
    seqs: Option<(u64, u64)>,
    ordered: bool,
}

/// The notification index while account ids are provisional: rows by
/// provisional target, actors provisional.
struct NotificationsBuilder {
    rows: Vec<(u32, u32)>,
    ops: Vec<StoredOp>,
    tags: Vec<(u32, u32)>,
}

impl NotificationsBuilder {
    /// Final ids: actors renumbered in place, rows indexed by final id.
    fn renumber(&mut self, perm: &[u32]) {
        const ACTOR_MASK: u32 = (1 << ACTOR_BITS) - 1;
        self.ops.par_iter_mut().for_each(|op| {
            let actor_op = op.actor_op;
            op.actor_op = (actor_op & !ACTOR_MASK) | perm[(actor_op & ACTOR_MASK) as usize];
        });
        let mut rows = vec![(0u32, 0u32); perm.len()];
        for (prov, &row) in self.rows.iter().enumerate() {
            rows[perm[prov] as usize] = row;
        }
        self.rows = rows;
    }
}

fn scan_ops(
    src: &dyn SnapshotFiles,
    e: &TableEntry,
    primary: &lookup::ListUsers,
    interner: &Interner,
    tags: &SharedTags,
) -> Result<ScannedOps, Stop> {
    let (items, groups) = scan_list_ops(
        src,
        e,
        || OpGroup {
            targets: Vec::new(),
            tags: LocalTags::default(),
            kept: 0,
            tagged: Vec::new(),
            seqs: None,
            ordered: true,
        },
        |g: &mut OpGroup, o| {
            g.seqs = match g.seqs {
                None => Some((o.seq, o.seq)),
                Some((first, last)) => {
                    g.ordered &= last < o.seq;
                    Some((first, o.seq))
                }
            };
            let actor = primary.get(o.token_id)?;
            if !o.tag.is_empty() {
                let tag = g.tags.tag(o.tag);
                g.tagged.push((g.kept, tag));
            }
            g.targets.push(o.target);
            g.kept += 1;
            Some(OpItem {
                updated_at: o.updated_at,
                actor_op: actor | (u32::from(o.opcode) << ACTOR_BITS),
                target: g.kept - 1,
            })
        },
        |g, ops| {
            let ids = interned(interner, &mut g.targets);
            for op in ops {
                op.target = ids[op.target as usize];
            }
            let mut shared = lock(tags);
            let tag_ids = g
                .tags
                .shared_ids(g.tagged.iter().map(|t| t.1), |text| shared.tag(text));
            for t in &mut g.tagged {
                t.1 = tag_ids[t.1 as usize];
            }
            g.tags = LocalTags::default();
        },
    )?;
    // Strictly increasing seqs in file order are unique and make file
    // order the tie-break order.
    let mut last: Option<u64> = None;
    for g in &groups {
        if let Some((first, end)) = g.seqs {
            if !g.ordered || last.is_some_and(|l| l >= first) {
                return Err(Stop::OpsOutOfOrder);
            }
            last = Some(end);
        }
    }
    if items.len() > u32::MAX as usize {
        return Err(limit(&e.file, "more than 2^32 visible ops"));
    }
    // (op index, tag) of tag/untag ops, op indexes ascending.
    let mut tagged: Vec<(u32, u32)> = Vec::new();
    let mut base = 0u32;
    for g in groups {
        tagged.extend(g.tagged.iter().map(|&(i, tag)| (base + i, tag)));
        base += g.kept;
    }
    Ok((items, tagged))
}

/// Groups ops by target, each target's newest first (`updated_at`
/// descending, then `seq` descending: file order reversed). A counting
/// sort over the reversed ops, then a sort of the rows out of time order.
fn group_ops(items: Vec<OpItem>, tagged: Vec<(u32, u32)>, n: usize) -> NotificationsBuilder {
    let offsets = row_offsets_par(n, &items, |o| o.target);
    // Newest first within a target: file order reversed (then a stable
    // sort by time). The tagged ops' positions are taken as they land.
    let found_tags: Mutex<Vec<(u32, u32)>> = Mutex::new(Vec::with_capacity(tagged.len()));
    let (mut ops, _): (Vec<StoredOp>, Vec<()>) = scatter_row_pairs(&offsets, |put| {
        let mut found = Vec::new();
        let mut next_tagged = tagged.len();
        for (item, op) in items.iter().enumerate().rev() {
            let stored = StoredOp {
                updated_at: op.updated_at,
                actor_op: op.actor_op,
            };
            let at = put(op.target, stored, ());
            if next_tagged > 0 && tagged[next_tagged - 1].0 as usize == item {
                next_tagged -= 1;
                if let Some(at) = at {
                    found.push((at as u32, tagged[next_tagged].1));
                }
            }
        }
        lock(&found_tags).append(&mut found);
    });
    let mut tags = found_tags.into_inner().unwrap_or_else(|e| e.into_inner());
    tags.par_sort_unstable();
    drop(items);
    sort_rows_newest_first(&mut ops, &mut tags, &offsets);
    let rows = offsets
        .windows(2)
        .map(|w| (w[0] as u32, w[1] as u32))
        .collect();
    NotificationsBuilder { rows, ops, tags }
}

/// Sorts every row of `ops` by `updated_at` descending, stably (rows hold
/// `seq` descending already), moving the (position, tag) entries of
/// `tags` along.
fn sort_rows_newest_first(ops: &mut [StoredOp], tags: &mut [(u32, u32)], offsets: &[usize]) {
    let rows = offsets.len() - 1;
    let parts = (rayon::current_num_threads() * 16).min(rows.max(1));
    let mut work = Vec::with_capacity(parts);
    let (mut ops_rest, mut tags_rest) = (ops, tags);
    let mut row = 0;
    for k in 1..=parts {
        let end_row = rows * k / parts;
        let (o, ot) = std::mem::take(&mut ops_rest).split_at_mut(offsets[end_row] - offsets[row]);
        let split = tags_rest.partition_point(|&(p, _)| (p as usize) < offsets[end_row]);
        let (t, tt) = std::mem::take(&mut tags_rest).split_at_mut(split);
        work.push((row..end_row, o, t));
        (ops_rest, tags_rest, row) = (ot, tt, end_row);
    }
    work.into_par_iter().for_each(|(range, ops, tags)| {
        let base = offsets[range.start];
        let mut order: Vec<(Reverse<i64>, u32)> = Vec::new();
        let mut moved: Vec<StoredOp> = Vec::new();
        let mut new_pos: Vec<u32> = Vec::new();
        for r in range {
            let (a, b) = (offsets[r] - base, offsets[r + 1] - base);
            let row = &mut ops[a..b];
            if row.windows(2).all(|w| {
                let (x, y) = (w[0].updated_at, w[1].updated_at);
                x >= y
            }) {
                continue;
            }
            order.clear();
            order.extend(
                row.iter()
                    .enumerate()
                    .map(|(i, o)| (Reverse(o.updated_at), i as u32)),
            );
            order.sort_unstable();
            moved.clear();
            moved.extend(order.iter().map(|&(_, i)| row[i as usize]));
            row.copy_from_slice(&moved);
            let lo = tags.partition_point(|&(p, _)| (p as usize) < offsets[r]);
            let hi = tags.partition_point(|&(p, _)| (p as usize) < offsets[r + 1]);
            if lo < hi {
                new_pos.clear();
                new_pos.resize(row.len(), 0);
                for (j, &(_, i)) in order.iter().enumerate() {
                    new_pos[i as usize] = j as u32;
                }
                for t in &mut tags[lo..hi] {
                    t.0 = offsets[r] as u32 + new_pos[t.0 as usize - offsets[r]];
                }
                tags[lo..hi].sort_unstable();
            }
        }
    });
}

/// Visible records as (follower, target, updated_at) in provisional ids.
type Edge = (u32, u32, i64);

fn scan_records(
    src: &dyn SnapshotFiles,
    e: &TableEntry,
    primary: &lookup::ListUsers,
    interner: &Interner,
) -> Result<Vec<Edge>, Stop> {
    #[derive(Default)]
    struct RecordGroup {
        invisible: Vec<(u64, Address)>,
        /// The kept records' targets; an edge's target is its index here
        /// until the group is read.
        targets: Vec<Address>,
    }
    let (edges, groups) = scan_list_records(
        src,
        e,
        RecordGroup::default,
        |g: &mut RecordGroup, r| match primary.get(r.token_id) {
            Some(f) => {
                g.targets.push(r.address);
                Some((f, g.targets.len() as u32 - 1, r.updated_at))
            }
            None => {
                g.invisible.push((r.token_id, r.address));
                None
            }
        },
        |g, edges| {
            let ids = interned(interner, &mut g.targets);
            for edge in edges {
                edge.1 = ids[edge.1 as usize];
            }
        },
    )?;
    // (token_id, address) unique: the visible rows' keys map one to one
    // to (follower, target), checked once sorted; the others here.
    let mut invisible: Vec<(u64, Address)> = groups.into_iter().flat_map(|g| g.invisible).collect();
    invisible.par_sort_unstable();
    if invisible.windows(2).any(|w| w[0] == w[1]) {
        return Err(duplicate(&e.file, "duplicate (token_id, address)"));
    }
    Ok(edges)
}

/// The ids of `addresses` (emptied: a group's batch is done with).
fn interned(interner: &Interner, addresses: &mut Vec<Address>) -> Vec<u32> {
    let mut ids = Vec::with_capacity(addresses.len());
    interner.ids(addresses, &mut ids);
    *addresses = Vec::new();
    ids
}

/// Renumbers the edges to final ids, sorts them in place and builds the
/// forward CSR from them.
fn forward_csr(
    mut edges: Vec<Edge>,
    perm: &[u32],
    file: &str,
) -> Result<Csr<(), i64, petgraph::Directed, u32>, Stop> {
    if edges.len() > u32::MAX as usize {
        return Err(limit(file, "more than 2^32 visible records"));
    }
    edges.par_iter_mut().for_each(|e| {
        e.0 = perm[e.0 as usize];
        e.1 = perm[e.1 as usize];
    });
    edges.par_sort_unstable_by_key(|e| (u64::from(e.0) << 32) | u64::from(e.1));
    if edges
        .par_windows(2)
        .any(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
    {
        return Err(duplicate(file, "duplicate (token_id, address)"));
    }
    Ok(Csr::from_sorted_edges(&edges).expect("edges are sorted by (follower, target) and unique"))
}

/// (edge index, tag set) of the records with visible tags, by edge, and
/// each one's target.
type RecordTagsets = (Vec<(u32, u32)>, Vec<AccountId>);

/// The visible tag sets: (edge index, set id) of every record that has
/// any, sorted; every tag row checked for uniqueness on the way.
fn scan_tags(
    src: &dyn SnapshotFiles,
    e: &TableEntry,
    primary_list_user: &lookup::ListUsers,
    account_id: &(impl Fn(&Address) -> Option<AccountId> + Sync),
    following: &Csr<(), i64, petgraph::Directed, u32>,
    tags: &mut TagInterner,
) -> Result<RecordTagsets, Stop> {
    // Every row's key for the uniqueness rule, its tag as an id of its own
    // (the graph's ids are for visible tags only).
    let all_tags: Mutex<LocalTags> = Mutex::default();
    let shared = Mutex::new(std::mem::take(tags));
    #[derive(Default)]
    struct TagGroup {
        tags: LocalTags,
        keys: Vec<(u64, Address, u32)>,
    }
    let (mut visible, groups) = scan_list_record_tags(
        src,
        e,
        TagGroup::default,
        |g: &mut TagGroup, t| {
            let tag = g.tags.tag(t.tag);
            g.keys.push((t.token_id, t.address, tag));
            let f = primary_list_user.get(t.token_id)?;
            // A target no visible record has was never interned: invisible.
            let to = account_id(&t.address)?;
            if f as usize >= following.node_count() {
                return None;
            }
            let i = following.neighbors_slice(f).binary_search(&to).ok()?;
            let edge = following.edges(f).next().map_or(0, |e| e.id()) + i;
            Some((edge as u32, tag, to))
        },
        |g, visible| {
            // Keys get ids of every tag; the graph's ids are for visible
            // tags only.
            let every = 0..g.tags.texts.len() as u32;
            let key_ids = g.tags.shared_ids(every, |text| lock(&all_tags).tag(text));
            for key in &mut g.keys {
                key.2 = key_ids[key.2 as usize];
            }
            let mut graph_tags = lock(&shared);
            let ids = g
                .tags
                .shared_ids(visible.iter().map(|v| v.1), |text| graph_tags.tag(text));
            for v in visible {
                v.1 = ids[v.1 as usize];
            }
            g.tags = LocalTags::default();
        },
    )?;
    *tags = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    let keys: Vec<Vec<(u64, Address, u32)>> = groups.into_iter().map(|g| g.keys).collect();
    let mut keys = keys.concat();
    keys.par_sort_unstable();
    if keys.windows(2).any(|w| w[0] == w[1]) {
        return Err(duplicate(&e.file, "duplicate (token_id, address, tag)"));
    }
    drop(keys);
    visible.par_sort_unstable_by(|a, b| {
        a.0.cmp(&b.0).then_with(|| {
            tags.texts[a.1 as usize]
                .as_bytes()
                .cmp(tags.texts[b.1 as usize].as_bytes())
        })
    });
    let mut sets = Vec::new();
    let mut targets = Vec::new();
    let mut group: Vec<u32> = Vec::new();
    for chunk in visible.chunk_by(|a, b| a.0 == b.0) {
        group.clear();
        group.extend(chunk.iter().map(|&(_, tag, _)| tag));
        sets.push((chunk[0].0, tags.set(&group)));
        targets.push(chunk[0].2);
    }
    Ok((sets, targets))
}

/// Profiles while account ids are provisional.
struct ProfilesBuilder {
    /// The provisional id of each profile (`ens` row order).
    ids: Vec<u32>,
    slots: Vec<ProfileSlots>,
    arena: String,
    /// (hash of the lower-cased name, provisional id).
    names: Vec<(u64, u32)>,
}

impl ProfilesBuilder {
    fn new(ens: &[EnsRow], interner: &Interner, file: &str) -> Result<Self, Stop> {
        let mut arena = String::new();
        let mut put = |text: Option<&str>| -> Result<TextRef, Stop> {
            let Some(text) = text else {
                return Ok(NULL_TEXT);
            };
            let start = u32::try_from(arena.len())
                .ok()
                .filter(|s| {
                    s.checked_add(text.len() as u32).is_some() && text.len() < u32::MAX as usize
                })
                .ok_or_else(|| limit(file, "more than 4 GiB of profile text"))?;
            arena.push_str(text);
            Ok(TextRef {
                start,
                len: text.len() as u32,
            })
        };
        let addresses: Vec<Address> = ens.iter().map(|e| e.address).collect();
        let ids = interner.ids_par(&addresses);
        drop(addresses);
        let names = ens
            .par_iter()
            .zip(&ids)
            .map(|(e, &id)| (name_hash(&e.name.to_lowercase()), id))
            .collect();
        let mut slots = Vec::with_capacity(ens.len());
        for e in ens {
            slots.push(ProfileSlots {
                texts: [
                    put(Some(&e.name))?,
                    put(e.avatar.as_deref())?,
                    put(e.header.as_deref())?,
                    put(e.display.as_deref())?,
                    put(e.records.as_deref())?,
                    put(e.chains.as_deref())?,
                    put(e.resolver.as_deref())?,
                    put(e.errors.as_deref())?,
                ],
                fresh: e.fresh,
            });
        }
        arena.shrink_to_fit();
        Ok(ProfilesBuilder {
            ids,
            slots,
            arena,
            names,
        })
    }

    fn finish(self, n: usize, perm: &[u32]) -> Profiles {
        let mut profile_of = vec![NO_PROFILE; n];
        for (row, &prov) in self.ids.iter().enumerate() {
            profile_of[perm[prov as usize] as usize] = row as u32;
        }
        let mut names = self.names;
        for name in &mut names {
            name.1 = perm[name.1 as usize];
        }
        names.par_sort_unstable();
        (profile_of, self.slots, self.arena, names)
    }
}

/// T's followers in both orders, from the forward CSR: a counting sort of
/// (follower, time) by target (followers ascending within each row, the
/// CSR being scanned in follower order), then each row sorted; and each
/// account's mutual follows, counted on the way.
fn build_follower_index(
    n: usize,
    following: &Csr<(), i64, petgraph::Directed, u32>,
    stats: &[Counts],
) -> (FollowerIndex, Vec<u32>) {
    // Row lengths are the follower counts, counted already.
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0usize);
    for s in &stats[..n] {
        offsets.push(offsets.last().unwrap() + s.followers as usize);
    }
    // Edges in follower order, as (target, follower, time).
    let each_edge = |put: &mut dyn FnMut(u32, AccountId, i64)| {
        for f in 0..following.node_count() as u32 {
            for (&t, &at) in following
                .neighbors_slice(f)
                .iter()
                .zip(following.edges_slice(f))
            {
                put(t, f, at);
            }
        }
    };
    let (mut latest, mut at): (Vec<AccountId>, Vec<i64>) = scatter_row_pairs(&offsets, |put| {
        each_edge(&mut |t, f, at| {
            put(t, f, at);
        })
    });
    // Rows hold followers ascending now: each account's mutuals are a
    // merge of its two sorted lists (not a binary search per edge).
    let mutuals: Vec<u32> = (0..n)
        .into_par_iter()
        .map(|x| {
            if x >= following.node_count() {
                return 0;
            }
            sorted_common(
                following.neighbors_slice(x as u32),
                &latest[offsets[x]..offsets[x + 1]],
            )
        })
        .collect();
    // Both orders of each row in one parallel pass; sort keys are made
    // once per follower (not looked up in every comparison).
    let mut by_count = vec![0 as AccountId; latest.len()];
    {
        type Row<'a> = (&'a mut [AccountId], &'a mut [i64], &'a mut [AccountId]);
        let mut rows: Vec<Row<'_>> = Vec::with_capacity(n);
        let (mut ids, mut ts, mut by) = (
            latest.as_mut_slice(),
            at.as_mut_slice(),
            by_count.as_mut_slice(),
        );
        for w in offsets.windows(2) {
            let len = w[1] - w[0];
            let (a, ids_rest) = std::mem::take(&mut ids).split_at_mut(len);
            let (b, ts_rest) = std::mem::take(&mut ts).split_at_mut(len);
            let (c, by_rest) = std::mem::take(&mut by).split_at_mut(len);
            rows.push((a, b, c));
            (ids, ts, by) = (ids_rest, ts_rest, by_rest);
        }
        // Sort keys packed into integers: one compare per step.
        rows.into_par_iter().for_each_init(
            || (Vec::new(), Vec::new()),
            |(by_time, by_followers): &mut (Vec<u128>, Vec<u64>), (ids, ts, by)| {
                if ids.len() <= 1 {
                    by.copy_from_slice(ids);
                    return;
                }
                // Most followed first, then ascending ids.
                by_followers.clear();
                by_followers.extend(
                    ids.iter()
                        .map(|&f| (u64::from(!stats[f as usize].followers) << 32) | u64::from(f)),
                );
                by_followers.sort_unstable();
                for (slot, &key) in by.iter_mut().zip(by_followers.iter()) {
                    *slot = key as AccountId;
                }
                // Newest first; equal times keep ascending follower ids.
                by_time.clear();
                by_time.extend(ts.iter().zip(ids.iter()).map(|(&t, &f)| {
                    let newest_first = !((t as u64) ^ (1 << 63));
                    (u128::from(newest_first) << 32) | u128::from(f)
                }));
                by_time.sort_unstable();
                for (slot, &key) in ids.iter_mut().zip(by_time.iter()) {
                    *slot = key as AccountId;
                }
            },
        );
    }
    drop(at);
    (
        FollowerIndex {
            offsets,
            latest,
            by_count,
        },
        mutuals,
    )
}

/// How many values two ascending lists share.
fn sorted_common(a: &[u32], b: &[u32]) -> u32 {
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common
}

fn build_badges(
    events: &[BadgeEventRow],
    badges: &[BadgeRow],
    id_of: impl Fn(&Address) -> AccountId,
) -> Badges {
    let mut events: Vec<&BadgeEventRow> = events.iter().collect();
    events.sort_by_key(|e| e.position);
    let index: FastMap<i64, u32> = events
        .iter()
        .enumerate()
        .map(|(i, e)| (e.event_id, i as u32))
        .collect();
    let badge_events = events
        .iter()
        .map(|e| BadgeEvent {
            event_id: e.event_id,
            event_json: event_json(e).into_boxed_str(),
        })
        .collect();
    let mut by_account: FastMap<AccountId, Vec<Holding>> = FastMap::default();
    for b in badges {
        // The reader guarantees every badge names an existing event.
        let Some(&event) = index.get(&b.event_id) else {
            continue;
        };
        by_account
            .entry(id_of(&b.address))
            .or_default()
            .push(Holding {
                event,
                token_id: b.token_id.as_str().into(),
                owner: b.owner.as_str().into(),
            });
    }
    let holdings = by_account
        .into_iter()
        .map(|(id, mut h)| {
            h.sort_by_key(|h| h.event);
            (id, h.into_boxed_slice())
        })
        .collect();
    (badge_events, holdings)
}
