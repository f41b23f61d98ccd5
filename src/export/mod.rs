//! `followgraph export`: the indexer's PostgreSQL database -> a published
//! snapshot (docs/export.md).
//!
//! One round: lock the root, open ONE `REPEATABLE READ, READ ONLY`
//! transaction, stream every table through its query into Parquet row
//! groups under `.tmp-<name>/` of the staging directory (the root itself
//! on disk; a writer thread per table, so memory holds a few chunks),
//! write the manifest last, load the result with the server's own loader,
//! then publish it through the root (`root/`: the shrink guard, the files,
//! `CURRENT` last) and apply `--keep`. Any error before that removes the
//! temporary directory and publishes nothing.

mod copy;
mod ens;
mod error;
pub mod locations;
mod overrides;
mod recommended;
pub mod reread;
mod sink;
mod source;
mod summary;
mod values;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::ExportConfig;
use crate::root::{RootError, ShrinkGuard, SnapshotRoot};
use crate::snapshot::{
    is_valid_snapshot_name, sync_dir, Table, TableEntry, WrittenTable, IN_PROGRESS_PREFIX,
};
pub use error::{ColumnMismatch, CopyError, ExportError, ValueError};
pub use reread::event_positions;
use sink::TableSink;
use source::Only;
pub use summary::{SkipEntry, Skips, Summary};

/// How the exported snapshot is checked before `CURRENT` moves.
#[derive(Clone, Debug)]
pub enum Verify {
    /// `EXE check DIR` in a child process: the server's whole load, whose
    /// memory (a graph's worth) is returned to the system when it exits.
    Command(PathBuf),
    /// The same load in this process.
    InProcess,
}

#[derive(Clone, Debug)]
pub struct ExportOptions {
    pub database_url: String,
    /// Where the snapshot is published.
    pub root: Arc<SnapshotRoot>,
    /// Where it is written and verified first: the root itself on disk (a
    /// `.tmp-` directory renamed into place), a local directory for an
    /// object-store root.
    pub staging: PathBuf,
    pub guard: ShrinkGuard,
    pub name: Option<String>,
    pub keep: usize,
    /// Snapshot table -> (query file, its SQL).
    pub queries: BTreeMap<Table, (PathBuf, String)>,
    pub statement_timeout_secs: u64,
    pub verify: Verify,
}

impl ExportOptions {
    /// From the command line: reads the `--query` files and checks names.
    pub fn from_config(config: &ExportConfig) -> Result<ExportOptions, ExportError> {
        let database_url = config.database_url().ok_or(ExportError::NoDatabaseUrl)?;
        if let Some(name) = &config.name {
            if !is_valid_snapshot_name(name) {
                return Err(ExportError::InvalidName(name.clone()));
            }
            if name.starts_with(IN_PROGRESS_PREFIX) {
                return Err(ExportError::WorkInProgressName {
                    name: name.clone(),
                    prefix: IN_PROGRESS_PREFIX,
                });
            }
        }
        let mut queries = BTreeMap::new();
        for q in &config.queries {
            let (table, file) = q
                .split_once('=')
                .ok_or_else(|| ExportError::QueryForm(q.clone()))?;
            let table = Table::named(table).ok_or_else(|| {
                let names: Vec<&str> = Table::ALL.iter().map(|t| t.name()).collect();
                ExportError::QueryTable {
                    arg: q.clone(),
                    table: table.to_owned(),
                    known: names.join(", "),
                }
            })?;
            let sql = std::fs::read_to_string(file).map_err(|source| ExportError::QueryRead {
                table,
                file: file.to_owned(),
                source,
            })?;
            if overrides::statement(&sql).is_empty() {
                return Err(ExportError::QueryEmpty {
                    table,
                    file: file.to_owned(),
                });
            }
            if queries.insert(table, (PathBuf::from(file), sql)).is_some() {
                return Err(ExportError::QueryTwice(table));
            }
        }
        let exe = std::env::current_exe().map_err(ExportError::NoProgram)?;
        let root = SnapshotRoot::open_path(&config.out, &config.store)?;
        let staging = match &root {
            SnapshotRoot::Dir(d) => d.path().to_path_buf(),
            SnapshotRoot::S3(_) => std::env::temp_dir()
                .join(format!("followgraph-export-staging-{}", std::process::id())),
        };
        Ok(ExportOptions {
            database_url,
            root: Arc::new(root),
            staging,
            guard: config.shrink.guard(),
            name: config.name.clone(),
            keep: config.keep,
            queries,
            statement_timeout_secs: config.statement_timeout,
            verify: Verify::Command(exe),
        })
    }
}

// ---------------------------------------------------------------------------
// The command

/// `followgraph export`: once, or every `--every` seconds until SIGTERM.
pub fn run(config: &ExportConfig) -> Result<(), ExportError> {
    let options = ExportOptions::from_config(config)?;
    let result = run_rounds(config, &options);
    if options.root.is_remote() {
        let _ = std::fs::remove_dir_all(&options.staging);
    }
    result
}

fn run_rounds(config: &ExportConfig, options: &ExportOptions) -> Result<(), ExportError> {
    let options = options.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(ExportError::Runtime)?;
    runtime.block_on(async {
        if config.every == 0 {
            let summary = export_once(&options).await?;
            report(&summary);
            return Ok(());
        }
        let every = Duration::from_secs(config.every);
        let stop = shutdown_signal()?;
        tokio::pin!(stop);
        loop {
            tokio::select! {
                result = export_once(&options) => match result {
                    Ok(summary) => report(&summary),
                    Err(e) => {
                        let current = off_runtime(|| options.root.current())
                            .ok()
                            .flatten()
                            .unwrap_or_else(|| "nothing".into());
                        if crate::logs::json() {
                            tracing::error!(error = %e, current = %current, "export round failed; the current snapshot stays");
                        } else {
                            eprintln!("export: round failed, {current} stays current: {e}");
                        }
                    }
                },
                _ = &mut stop => return Ok(()),
            }
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = &mut stop => return Ok(()),
            }
        }
    })
}

/// Runs `f` outside the async runtime: an object-store root blocks on a
/// runtime of its own, which cannot start inside this one.
fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    tokio::task::block_in_place(|| {
        std::thread::scope(|s| {
            s.spawn(f)
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
        })
    })
}

/// The `recommended` rows to write: `efp_recommended`'s, or the current
/// snapshot's when those look like a rebuild caught half-way (and it has
/// some); what happened is noted for the summary.
async fn export_recommended(
    opts: &ExportOptions,
    client: &tokio_postgres::Client,
    skips: &mut Skips,
    notes: &mut Vec<String>,
) -> Result<Vec<crate::snapshot::RecommendedRow>, ExportError> {
    let Some(rows) = recommended::read(client, skips).await? else {
        notes.push(
            "the indexer has no efp_recommended table: recommended was written empty".to_owned(),
        );
        return Ok(Vec::new());
    };
    let Some(why) = recommended::half_built(&rows) else {
        return Ok(rows);
    };
    let root = &opts.root;
    match off_runtime(|| recommended::current_rows(root)) {
        Ok(current) if !current.is_empty() => {
            notes.push(format!("recommended carried forward ({why})"));
            Ok(current)
        }
        Ok(_) => Ok(rows),
        Err(e) => {
            notes.push(format!(
                "recommended read {why} and the current snapshot's rows could not be read \
                 ({e}): written as read"
            ));
            Ok(rows)
        }
    }
}

fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>, ExportError> {
    use tokio::signal::unix::{signal, SignalKind};
    let handle = |kind, name| {
        signal(kind).map_err(|source| ExportError::Signal {
            signal: name,
            source,
        })
    };
    let mut term = handle(SignalKind::terminate(), "SIGTERM")?;
    let mut int = handle(SignalKind::interrupt(), "SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        if crate::logs::json() {
            tracing::info!("export stopping");
        } else {
            eprintln!("export: stopping");
        }
    })
}

/// A published round's summary: the text report, or with JSON logs one
/// event with its figures (the whole summary under `summary`, as JSON).
fn report(summary: &Summary) {
    if !crate::logs::json() {
        eprint!("{}", summary.render());
        return;
    }
    let json = summary.to_json();
    let rows: u64 = json["rows"].as_object().map_or(0, |r| {
        r.values().filter_map(serde_json::Value::as_u64).sum()
    });
    tracing::info!(
        snapshot = %json["name"].as_str().unwrap_or(""),
        created_at = %json["created_at"].as_str().unwrap_or(""),
        rows,
        skipped = summary.skips.total(),
        seconds = json["seconds"]["total"].as_f64().unwrap_or(0.0),
        summary = %json,
        "export published"
    );
}

/// Removes the temporary snapshot directory when the round ends (once
/// published it has moved, or been uploaded).
struct TmpDir {
    path: PathBuf,
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// `snap-<UTC yyyymmddThhmmssZ>` of `ms`.
pub fn default_name(ms: i64) -> String {
    let iso = crate::time::format_iso_ms(ms); // 2026-11-20T12:00:00.000Z
    let compact: String = iso[..19]
        .chars()
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    format!("snap-{compact}Z")
}

/// One export round; publishes and returns the summary, or publishes
/// nothing and says why.
pub async fn export_once(opts: &ExportOptions) -> Result<Summary, ExportError> {
    let started = Instant::now();
    let root = &opts.staging;
    std::fs::create_dir_all(root).map_err(ExportError::io("create", root))?;
    let _lock = off_runtime(|| opts.root.lock())?;
    let mut phases: Vec<(String, f64)> = Vec::new();
    let mut phase = Instant::now();
    let mut lap = |name: &str, phases: &mut Vec<(String, f64)>| {
        phases.push((name.to_owned(), phase.elapsed().as_secs_f64()));
        phase = Instant::now();
    };

    let client = crate::pg::connect(&opts.database_url, "followgraph-export")
        .await
        .map_err(ExportError::Connect)?;
    let begin = format!(
        "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; \
         SET LOCAL statement_timeout = {}; SET LOCAL work_mem = '64MB'",
        opts.statement_timeout_secs
            .saturating_mul(1000)
            .min(i32::MAX as u64)
    );
    client
        .batch_execute(&begin)
        .await
        .map_err(ExportError::sql("cannot start the export transaction"))?;
    // The first statement fixes the transaction's snapshot, and now() is
    // the transaction's start: the snapshot's instant.
    let created_at_ms: i64 = client
        .query_one("SELECT floor(extract(epoch FROM now()) * 1000)::int8", &[])
        .await
        .map_err(ExportError::sql("cannot read the transaction time"))?
        .get(0);
    lap("connect", &mut phases);

    let name = off_runtime(|| choose_name(opts, opts.name.as_deref(), created_at_ms))?;
    let tmp = TmpDir {
        path: root.join(format!("{IN_PROGRESS_PREFIX}{name}")),
    };
    std::fs::create_dir(&tmp.path).map_err(ExportError::io("create", &tmp.path))?;

    let mut skips = Skips::default();
    let mut notes = Vec::new();
    let mut written: BTreeMap<Table, WrittenTable> = BTreeMap::new();
    let query = |t: Table| opts.queries.get(&t).map(|(_, sql)| sql.as_str());
    let needs_index = [Table::ListRecords, Table::ListRecordTags, Table::ListOps]
        .into_iter()
        .any(|t| query(t).is_none());

    // lists first: the storage-location index maps every other table.
    let mut sink = TableSink::start(&tmp.path, Table::Lists)?;
    let index = match query(Table::Lists) {
        Some(sql) => {
            overrides::export(&client, Table::Lists, sql, &mut sink, &mut skips).await?;
            if needs_index {
                source::lists(&client, None, &mut skips, Only::ALL, Only::ALL).await?
            } else {
                source::ListIndex::default()
            }
        }
        None => source::lists(&client, Some(&mut sink), &mut skips, Only::ALL, Only::ALL).await?,
    };
    written.insert(Table::Lists, sink.finish()?);
    lap(Table::Lists.name(), &mut phases);

    for table in &Table::ALL[1..] {
        let table = *table;
        let mut sink = TableSink::start(&tmp.path, table)?;
        match (query(table), table) {
            (Some(sql), _) => overrides::export(&client, table, sql, &mut sink, &mut skips).await?,
            (None, Table::Lists) => unreachable!("lists are exported first"),
            (None, Table::PrimaryLists) => {
                source::primary_lists(&client, &mut sink, &mut skips, Only::ALL).await?
            }
            (None, Table::ListRecords) => {
                source::list_records(&client, &index, &mut sink, &mut skips, Only::ALL).await?
            }
            (None, Table::ListRecordTags) => {
                source::list_record_tags(&client, &index, &mut sink, &mut skips, Only::ALL).await?
            }
            (None, Table::ListOps) => {
                source::list_ops(&client, &index, &mut sink, &mut skips, Only::ALL, None).await?
            }
            (None, Table::Ens) => ens::ens(&client, &mut sink, &mut skips).await?,
            // The indexer holds no badges: written empty, noted below.
            (None, Table::BadgeEvents | Table::Badges) => {}
            (None, Table::Recommended) => {
                let rows = export_recommended(opts, &client, &mut skips, &mut notes).await?;
                for row in rows {
                    sink.chunk.recommended.push(row);
                    sink.pushed()?;
                }
            }
        }
        written.insert(table, sink.finish()?);
        lap(table.name(), &mut phases);
    }
    drop(index);
    // The same transaction snapshot as every table: where it stands.
    let anchor = crate::snapshot::Anchor {
        positions: reread::event_positions(&client).await?,
        db_time_ms: created_at_ms,
    };
    if query(Table::BadgeEvents).is_none() || query(Table::Badges).is_none() {
        notes.push(
            "the indexer holds no badges: badge_events and badges were written empty where no \
             --query gave them (e.g. --query badge_events=FILE.sql --query badges=FILE.sql)"
                .to_owned(),
        );
    }
    // Read-only: ending it releases the database snapshot before the
    // (database-free) verification.
    client
        .batch_execute("COMMIT")
        .await
        .map_err(ExportError::sql("cannot end the export transaction"))?;
    drop(client);

    let entries = written
        .iter()
        .map(|(t, w)| {
            let entry = TableEntry {
                file: t.file_name().to_owned(),
                rows: w.rows,
                sha256: w.sha256.clone(),
            };
            (t.name().to_owned(), entry)
        })
        .collect();
    crate::snapshot::write_manifest(&tmp.path, created_at_ms, entries, Some(&anchor))
        .map_err(ExportError::io("write", tmp.path.join("manifest.json")))?;
    lap("manifest", &mut phases);
    let verify_peak_rss = verify(&opts.verify, &tmp.path)?;
    lap("verify", &mut phases);

    let mut summary = Summary {
        name: name.clone(),
        path: opts.root.location(&name),
        created_at_ms,
        rows: written.iter().map(|(t, w)| (*t, w.rows)).collect(),
        skips,
        bytes_written: written.values().map(|w| w.bytes).sum(),
        phases,
        cpu_seconds: crate::process::cpu_seconds(),
        peak_rss: crate::process::peak_rss_bytes(),
        verify_peak_rss,
        notes,
    };
    let mut report = summary.clone();
    report
        .phases
        .push(("total".to_owned(), started.elapsed().as_secs_f64()));
    let json = serde_json::to_string_pretty(&report.to_json()).expect("JSON values serialise");
    write_file_synced(&tmp.path.join("export.json"), json.as_bytes())?;
    sync_dir(&tmp.path).map_err(ExportError::io("sync", &tmp.path))?;

    let publishing = Instant::now();
    off_runtime(|| opts.root.publish(&tmp.path, &name, opts.guard, true))?;
    if let Err(e) = off_runtime(|| opts.root.retain(&name, opts.keep)) {
        summary.notes.push(format!("--keep: {e}"));
    }
    summary
        .phases
        .push(("publish".to_owned(), publishing.elapsed().as_secs_f64()));
    summary
        .phases
        .push(("total".to_owned(), started.elapsed().as_secs_f64()));
    Ok(summary)
}

/// The given name, refused when taken, else the default name of the
/// export's time (with `-2`, `-3`, … when taken: later names still sort
/// later).
fn choose_name(
    opts: &ExportOptions,
    given: Option<&str>,
    created_at_ms: i64,
) -> Result<String, RootError> {
    let taken = |name: &str| -> Result<bool, RootError> {
        Ok(opts.staging.join(name).exists() || opts.root.manifest(name)?.is_some())
    };
    if let Some(name) = given {
        if taken(name)? {
            return Err(RootError::Exists {
                path: opts.root.location(name),
            });
        }
        return Ok(name.to_owned());
    }
    let base = default_name(created_at_ms);
    let mut name = base.clone();
    let mut n = 1;
    while taken(&name)? {
        n += 1;
        name = format!("{base}-{n}");
    }
    Ok(name)
}

fn write_file_synced(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    use std::io::Write;
    let mut f = std::fs::File::create(path).map_err(ExportError::io("create", path))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(ExportError::io("write", path))
}

/// Loads the exported directory as the server would; `Err` is the reason
/// the server would reject it. Returns the load's peak RSS when known.
fn verify(how: &Verify, dir: &Path) -> Result<Option<u64>, ExportError> {
    match how {
        Verify::InProcess => {
            crate::graph::Graph::load_path(dir)
                .map_err(|e| ExportError::Rejected(e.to_string()))?;
            Ok(None)
        }
        Verify::Command(exe) => {
            let out = std::process::Command::new(exe)
                .arg("check")
                .arg(dir)
                .env("RUST_LOG", "warn")
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|source| ExportError::RunCheck {
                    program: exe.clone(),
                    source,
                })?;
            if out.status.success() {
                let stdout = String::from_utf8_lossy(&out.stdout);
                return Ok(stdout
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("peak_rss_bytes="))
                    .and_then(|n| n.parse().ok()));
            }
            let stderr = String::from_utf8_lossy(&out.stderr);
            let reason = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no reason given")
                .trim_start_matches("followgraph: ");
            Err(ExportError::Rejected(reason.to_owned()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_sort_by_time() {
        assert_eq!(default_name(1_795_176_000_000), "snap-20261120T120000Z");
        assert!(default_name(1_795_176_001_000) > default_name(1_795_176_000_999));
        assert!(format!("{}-2", default_name(0)) > default_name(0));
        assert!(format!("{}-2", default_name(0)) < default_name(1000));
    }
}
