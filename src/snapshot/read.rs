//! The row reader: a whole snapshot -> validated [`Tables`]. Each table
//! file is read into memory and its row groups decoded in parallel
//! (`row_groups`), the tables in parallel too; rules across tables
//! are checked last. Errors come in table order, then row order, whichever
//! thread met them first: this is the reader that names a snapshot's first
//! fault exactly. The streaming loader (`graph::build`) shares its
//! manifest check, the small tables and the row validation.
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::files::{DirFiles, SnapshotFiles};
use super::manifest::{
    checked_manifest, manifest_entries, manifest_entry, read_manifest, resolve_snapshot_dir,
    snapshot_name, Manifest, TableEntry, MANIFEST,
};
use super::readers::*;
use super::schema::Table;
use super::tables::*;
use super::{SnapshotError, SnapshotErrorKind};

/// A validated snapshot, ready for the graph builder.
#[derive(Debug)]
pub struct LoadedSnapshot {
    /// The directory's name (the name `CURRENT` holds).
    pub name: String,
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// `manifest.created_at` in epoch milliseconds.
    pub created_at_ms: i64,
    pub tables: Tables,
}

/// Resolves `path` (root or snapshot directory) and reads the snapshot.
pub fn load(path: &Path) -> Result<LoadedSnapshot, SnapshotError> {
    read_snapshot(&resolve_snapshot_dir(path)?)
}

/// Reads and validates the snapshot in `dir` (tables and row groups in
/// parallel on the current rayon pool).
pub fn read_snapshot(dir: &Path) -> Result<LoadedSnapshot, SnapshotError> {
    read_snapshot_from(&DirFiles(dir), snapshot_name(dir), dir.to_path_buf())
}

/// Reads and validates the snapshot whose files `src` holds; `name` and
/// `dir` are what the loaded snapshot reports (its name and location).
pub fn read_snapshot_from(
    src: &dyn SnapshotFiles,
    name: String,
    dir: PathBuf,
) -> Result<LoadedSnapshot, SnapshotError> {
    let (manifest, created_at_ms) = checked_manifest(src)?;
    let entries = manifest_entries(&manifest);
    let tables = read_tables(src, &entries)?;
    Ok(LoadedSnapshot {
        name,
        dir,
        manifest,
        created_at_ms,
        tables,
    })
}

impl LoadedSnapshot {
    /// Reads and validates one table of the snapshot directory `dir` by its
    /// name in [`Table::ALL`] (checksum, schema and per-table rules; no
    /// cross-table check) and returns its row count. For per-table load
    /// timing in benches (the readers are private; this is reachable as
    /// `followgraph::snapshot::LoadedSnapshot::read_table_rows`).
    pub fn read_table_rows(dir: &Path, name: &str) -> Result<usize, SnapshotError> {
        let dir = &DirFiles(dir) as &dyn SnapshotFiles;
        let manifest = read_manifest(dir)?;
        let e = manifest_entry(&manifest, name)?;
        let table = Table::named(name).ok_or_else(|| {
            SnapshotError::new(
                SnapshotErrorKind::Manifest,
                MANIFEST,
                format!("unknown table `{name}`"),
            )
        })?;
        Ok(match table {
            Table::Lists => read_lists(dir, e)?.len(),
            Table::PrimaryLists => read_primary_lists(dir, e)?.len(),
            Table::ListRecords => read_list_records(dir, e)?.len(),
            Table::ListRecordTags => read_list_record_tags(dir, e)?.len(),
            Table::ListOps => read_list_ops(dir, e)?.len(),
            Table::Ens => read_ens(dir, e)?.len(),
            Table::BadgeEvents => read_badge_events(dir, e)?.len(),
            Table::Badges => read_badges(dir, e)?.len(),
            Table::Recommended => read_recommended(dir, e)?.len(),
        })
    }
}

/// The entry of a required table (`checked_manifest` made sure of it).
fn required<'e>(entries: &[Option<&'e TableEntry>], t: Table) -> &'e TableEntry {
    entries[t.index()].expect("checked_manifest requires every required table")
}

/// The rows of `recommended`, none when the snapshot leaves it out.
fn read_optional_recommended(
    dir: &dyn SnapshotFiles,
    entries: &[Option<&TableEntry>],
) -> Result<Vec<RecommendedRow>, SnapshotError> {
    match entries[Table::Recommended.index()] {
        Some(e) => read_recommended(dir, e),
        None => Ok(Vec::new()),
    }
}

/// Reads the tables of `entries` ([`Table::ALL`] order) in parallel.
fn read_tables(
    dir: &dyn SnapshotFiles,
    entries: &[Option<&TableEntry>],
) -> Result<Tables, SnapshotError> {
    let e = |t: Table| required(entries, t);
    let (mut lists, mut primary, mut records, mut tags) = (None, None, None, None);
    let (mut ops, mut ens, mut events, mut badges) = (None, None, None, None);
    let mut recommended = None;
    rayon::scope(|s| {
        // Largest tables first, so they start while the small ones fill gaps.
        s.spawn(|_| ops = Some(read_list_ops(dir, e(Table::ListOps))));
        s.spawn(|_| records = Some(read_list_records(dir, e(Table::ListRecords))));
        s.spawn(|_| tags = Some(read_list_record_tags(dir, e(Table::ListRecordTags))));
        s.spawn(|_| lists = Some(read_lists(dir, e(Table::Lists))));
        s.spawn(|_| primary = Some(read_primary_lists(dir, e(Table::PrimaryLists))));
        s.spawn(|_| ens = Some(read_ens(dir, e(Table::Ens))));
        s.spawn(|_| events = Some(read_badge_events(dir, e(Table::BadgeEvents))));
        s.spawn(|_| badges = Some(read_badges(dir, e(Table::Badges))));
        s.spawn(|_| recommended = Some(read_optional_recommended(dir, entries)));
    });
    // Errors are reported in table order, whichever thread found them first.
    let done = "every table task ran";
    let tables = Tables {
        lists: lists.expect(done)?,
        primary_lists: primary.expect(done)?,
        list_records: records.expect(done)?,
        list_record_tags: tags.expect(done)?,
        list_ops: ops.expect(done)?,
        ens: ens.expect(done)?,
        badge_events: events.expect(done)?,
        badges: badges.expect(done)?,
        recommended: recommended.expect(done)?,
    };
    check_badge_events(
        &tables.badges,
        &tables.badge_events,
        e(Table::Badges),
        e(Table::BadgeEvents),
    )?;
    Ok(tables)
}

/// Every badge names an event of `badge_events`.
fn check_badge_events(
    badges: &[BadgeRow],
    events: &[BadgeEventRow],
    badges_e: &TableEntry,
    events_e: &TableEntry,
) -> Result<(), SnapshotError> {
    let known: HashSet<i64> = events.iter().map(|e| e.event_id).collect();
    match badges
        .iter()
        .enumerate()
        .find(|(_, b)| !known.contains(&b.event_id))
    {
        None => Ok(()),
        Some((row, b)) => Err(SnapshotError::at_row(
            SnapshotErrorKind::InvalidRow,
            &badges_e.file,
            row as u64,
            format!(
                "event_id {} is not in badge_events ({})",
                b.event_id, events_e.file
            ),
        )),
    }
}

/// The small tables, read whole (the streaming loader's first step).
pub(crate) struct SmallTables {
    pub lists: Vec<ListRow>,
    pub primary_lists: Vec<PrimaryListRow>,
    pub ens: Vec<EnsRow>,
    pub badge_events: Vec<BadgeEventRow>,
    pub badges: Vec<BadgeRow>,
    pub recommended: Vec<RecommendedRow>,
}

/// Reads and validates the small tables of `entries` ([`Table::ALL`]
/// order) in parallel.
pub(crate) fn read_small_tables(
    dir: &dyn SnapshotFiles,
    entries: &[Option<&TableEntry>],
) -> Result<SmallTables, SnapshotError> {
    let e = |t: Table| required(entries, t);
    let (mut lists, mut primary, mut ens, mut events, mut badges) = (None, None, None, None, None);
    let mut recommended = None;
    rayon::scope(|s| {
        s.spawn(|_| ens = Some(read_ens(dir, e(Table::Ens))));
        s.spawn(|_| lists = Some(read_lists(dir, e(Table::Lists))));
        s.spawn(|_| primary = Some(read_primary_lists(dir, e(Table::PrimaryLists))));
        s.spawn(|_| events = Some(read_badge_events(dir, e(Table::BadgeEvents))));
        s.spawn(|_| badges = Some(read_badges(dir, e(Table::Badges))));
        s.spawn(|_| recommended = Some(read_optional_recommended(dir, entries)));
    });
    let done = "every table task ran";
    let small = SmallTables {
        lists: lists.expect(done)?,
        primary_lists: primary.expect(done)?,
        ens: ens.expect(done)?,
        badge_events: events.expect(done)?,
        badges: badges.expect(done)?,
        recommended: recommended.expect(done)?,
    };
    check_badge_events(
        &small.badges,
        &small.badge_events,
        e(Table::Badges),
        e(Table::BadgeEvents),
    )?;
    Ok(small)
}

/// The `recommended` rows of the snapshot `src` holds, validated (none
/// when it leaves the table out): what an export carries forward.
pub fn read_recommended_rows(
    src: &dyn SnapshotFiles,
) -> Result<Vec<RecommendedRow>, SnapshotError> {
    let (manifest, _) = checked_manifest(src)?;
    read_optional_recommended(src, &manifest_entries(&manifest))
}
