//! One transaction per export: rows committed while it runs are all in
//! the next snapshot or none in this one, and an export killed mid-way
//! changes nothing and leaves nothing the next one does not clear.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use followgraph::snapshot::Tables;

use crate::pg::Postgres;

use super::fixture::fixture_sql;
use super::{
    a, current, export_ok, indexer, loaded, slot, snapshot_dirs, spawn_export, wait_exit, E,
    EXPORT_TIMEOUT, LR,
};

/// Waits until the database shows a statement of the exporter matching
/// `like` running (the export is mid-way, inside its transaction).
fn wait_for_statement(pg: &Postgres, like: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let sql = format!(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'followgraph-export' \
         AND state = 'active' AND query LIKE '{like}'"
    );
    while pg.query_one(&sql) == "0" {
        assert!(Instant::now() < deadline, "the export never ran {like}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A `lists` query that sleeps first: the export holds its transaction
/// open, before any record is read, for as long as the test needs.
fn slow_lists_query(dir: &Path, seconds: u32) -> PathBuf {
    let path = dir.join("slow_lists.sql");
    std::fs::write(
        &path,
        format!(
            "SELECT token_id, \"user\"::text AS \"user\", owner::text AS owner, \
             manager::text AS manager FROM efp_lists, pg_sleep({seconds}) \
             WHERE token_id > 0 AND nft_chain_id = 8453"
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_record_its_tag_and_op_committed_during_the_export_are_all_or_none() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let query = slow_lists_query(work.path(), 3);
    let q = format!("lists={}", query.display());
    // Without the override the lists table would hold token 7's bad owner;
    // the override filters nothing else, so skip counts don't matter here.
    let log = work.path().join("export.log");
    let mut child = spawn_export(
        &pg.url(),
        out.path(),
        &["--query", &q, "--name", "during"],
        &log,
    );
    wait_for_statement(&pg, "%pg_sleep%");
    // The writer: a record and its tag in one transaction, committed while
    // the export sleeps inside its transaction, before it reads either.
    pg.execute(&format!(
        "BEGIN; \
         INSERT INTO efp_list_records VALUES (8453, '{LR}', decode('{s1}', 'hex'), \
           decode('0101{E}', 'hex'), 1, 1, decode('{E}', 'hex'), now(), now()); \
         INSERT INTO efp_list_record_tags VALUES (8453, '{LR}', decode('{s1}', 'hex'), \
           decode('0101{E}', 'hex'), 'mute', now(), now()); \
         INSERT INTO events (chain_id, block_number, transaction_index, log_index, \
           contract_address, event_name, event_args, created_at) VALUES (8453, 900, 0, 0, \
           '{LR}', 'ListOp', jsonb_build_object('slot', '0x{s1}', 'op', '0x01010101{E}'), now()); \
         COMMIT;",
        s1 = slot(1)
    ));
    let status = wait_exit(&mut child, EXPORT_TIMEOUT);
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(&log).unwrap()
    );
    let during = loaded(out.path());
    let has_e = |t: &Tables| {
        (
            t.list_records.iter().any(|r| r.address == a(E)),
            t.list_record_tags.iter().any(|r| r.address == a(E)),
        )
    };
    assert_eq!(
        has_e(&during),
        (false, false),
        "neither: committed after the export's snapshot"
    );
    // The next export sees both.
    export_ok(&pg.url(), out.path(), &["--name", "after"]);
    assert_eq!(has_e(&loaded(out.path())), (true, true));
}

#[test]
fn an_export_killed_mid_way_changes_nothing_and_the_next_one_succeeds() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &["--name", "before"]);
    let work = tempfile::tempdir().unwrap();
    // ens is read after the list tables: files are half written when it sleeps.
    let slow_ens = work.path().join("slow_ens.sql");
    std::fs::write(
        &slow_ens,
        "SELECT address::text AS address, name, avatar, NULL::text AS header, display, \
         NULL::text AS records, NULL::text AS chains, fresh, resolver::text AS resolver, \
         NULL::text AS errors FROM ens_metadata, pg_sleep(60) WHERE name <> ''",
    )
    .unwrap();
    let q = format!("ens={}", slow_ens.display());
    let log = work.path().join("export.log");
    let mut child = spawn_export(
        &pg.url(),
        out.path(),
        &["--query", &q, "--name", "killed"],
        &log,
    );
    wait_for_statement(&pg, "%pg_sleep%");
    let tmp = out.path().join(".tmp-killed");
    assert!(
        tmp.join("list_ops.parquet").is_file(),
        "mid-way: tables written"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(current(out.path()).as_deref(), Some("before"));
    assert!(!out.path().join("killed").exists());
    assert!(loaded(out.path()).lists.len() == 7);
    // The next export publishes and clears what the killed one left.
    export_ok(&pg.url(), out.path(), &["--name", "next"]);
    assert_eq!(current(out.path()).as_deref(), Some("next"));
    assert!(!tmp.exists(), "the stale temporary directory is removed");
    assert_eq!(
        snapshot_dirs(out.path()),
        vec!["before".to_owned(), "next".to_owned()]
    );
}
