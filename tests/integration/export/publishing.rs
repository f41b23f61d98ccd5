//! Publishing: a snapshot appears whole under its name with checksums and
//! `export.json`, one the server's loader would reject is never published,
//! and `--keep` retains the newest snapshots but never the current one.

use followgraph::snapshot::Tables;

use crate::pg::Postgres;

use super::fixture::fixture_sql;
use super::{
    current, export, export_json, export_ok, export_with_env, indexer, ms, slot, snapshot_dirs, B,
    LR,
};

#[test]
fn publishes_atomically_with_manifest_checksums_and_export_json() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &["--name", "first"]);
    assert_eq!(current(out.path()).as_deref(), Some("first"));
    let dir = out.path().join("first");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["format"], "graph-snapshot/1");
    for (table, entry) in manifest["tables"].as_object().unwrap() {
        let sha = entry["sha256"]
            .as_str()
            .unwrap_or_else(|| panic!("{table} has no sha256"));
        assert_eq!(sha.len(), 64);
    }
    assert_eq!(
        manifest["created_at"],
        export_json(out.path())["created_at"]
    );
    // No temporary directory is left, and an existing name is refused.
    assert_eq!(snapshot_dirs(out.path()), vec!["first".to_owned()]);
    let (code, stderr) = export(&pg.url(), out.path(), &["--name", "first"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("already exists"), "{stderr}");
    // Default names are snap-<UTC time>.
    export_ok(&pg.url(), out.path(), &[]);
    let name = current(out.path()).unwrap();
    assert!(name.starts_with("snap-2") && name.ends_with('Z'), "{name}");
    // The name from the environment; never an export's work-in-progress
    // prefix.
    let (code, stderr) = export_with_env(
        &pg.url(),
        out.path(),
        &[],
        &[("FOLLOWGRAPH_NAME", "from-env".into())],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(current(out.path()).as_deref(), Some("from-env"));
    let (code, stderr) = export(&pg.url(), out.path(), &["--name", ".tmp-x"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("work in progress"), "{stderr}");
}

#[test]
fn a_snapshot_the_server_would_reject_is_never_published() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &["--name", "good"]);
    // Two rows at one storage location whose contracts differ only in case
    // are distinct to the database but the same record to the snapshot:
    // the exporter writes both, and the server's loader rejects the file.
    pg.execute(&format!(
        "INSERT INTO efp_list_records VALUES (8453, '{}', decode('{}', 'hex'), \
         decode('0101{B}', 'hex'), 1, 1, decode('{B}', 'hex'), now(), now())",
        LR.to_uppercase().replacen("0X", "0x", 1),
        slot(1)
    ));
    let (code, stderr) = export(&pg.url(), out.path(), &["--name", "bad"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("the server's loader rejects the export: list_records.parquet row"),
        "{stderr}"
    );
    assert!(stderr.contains("duplicate (token_id, address)"), "{stderr}");
    assert_eq!(current(out.path()).as_deref(), Some("good"));
    assert_eq!(snapshot_dirs(out.path()), vec!["good".to_owned()]);
}

#[test]
fn keep_retains_the_newest_snapshots_and_never_the_current_one() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    for name in ["k1", "k2", "k3", "k4"] {
        export_ok(&pg.url(), out.path(), &["--name", name, "--keep", "2"]);
    }
    assert_eq!(
        snapshot_dirs(out.path()),
        vec!["k3".to_owned(), "k4".to_owned()]
    );
    // Newest is by the manifest's created_at: a snapshot of another
    // producer dated in the future outranks the new export, yet the
    // snapshot CURRENT names (the new one) is never deleted.
    followgraph::snapshot::write_snapshot(
        &out.path().join("future"),
        ms("2099-01-01T00:00:00.000Z"),
        &Tables::default(),
        &followgraph::snapshot::WriteOptions::default(),
    )
    .unwrap();
    std::fs::create_dir(out.path().join("notes")).unwrap(); // no manifest: not a snapshot
    export_ok(&pg.url(), out.path(), &["--name", "k5", "--keep", "1"]);
    assert_eq!(
        snapshot_dirs(out.path()),
        vec!["future".to_owned(), "k5".to_owned(), "notes".to_owned()]
    );
    export_ok(&pg.url(), out.path(), &["--name", "k6", "--keep", "0"]);
    assert_eq!(
        snapshot_dirs(out.path()),
        vec!["k6".to_owned(), "notes".to_owned()]
    );
    assert_eq!(current(out.path()).as_deref(), Some("k6"));
}

#[test]
fn with_json_logs_the_export_reports_one_event_per_line() {
    let pg = Postgres::start();
    crate::export::indexer(&pg);
    let out = tempfile::tempdir().unwrap();
    let stderr = export_ok(&pg.url(), out.path(), &["--log-format", "json"]);
    let events: Vec<serde_json::Value> = stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect();
    let published = events
        .iter()
        .find(|e| e["message"] == "export published")
        .unwrap_or_else(|| panic!("{stderr}"));
    let name = current(out.path()).expect("published");
    assert_eq!(published["snapshot"], name.as_str());
    assert_eq!(published["rows"], 0);
    let summary: serde_json::Value =
        serde_json::from_str(published["summary"].as_str().unwrap()).unwrap();
    assert_eq!(summary["name"], name.as_str());
}

#[test]
fn a_table_that_shrank_past_max_shrink_is_not_published() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &["--name", "first"]);
    pg.execute("DELETE FROM efp_list_records");
    let (code, stderr) = export(&pg.url(), out.path(), &["--name", "second"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("rows (100.0% fewer), more than --max-shrink 20%"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--allow-shrink publishes it anyway"),
        "{stderr}"
    );
    assert_eq!(current(out.path()).as_deref(), Some("first"));
    assert_eq!(snapshot_dirs(out.path()), vec!["first".to_owned()]);
    // The environment's setting, then the flag that lets it through.
    let (code, stderr) = export_with_env(
        &pg.url(),
        out.path(),
        &["--name", "second"],
        &[("FOLLOWGRAPH_MAX_SHRINK", "100".into())],
    );
    assert_eq!(code, 0, "{stderr}");
    pg.execute("DELETE FROM efp_lists");
    let (code, stderr) = export(
        &pg.url(),
        out.path(),
        &["--name", "third", "--allow-shrink"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(current(out.path()).as_deref(), Some("third"));
    let (code, stderr) = export(&pg.url(), out.path(), &["--max-shrink", "120"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("not a percentage from 0 to 100"),
        "{stderr}"
    );
}
