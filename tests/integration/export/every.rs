//! `--every`: the exporter keeps publishing on a schedule, keeps the last
//! good snapshot current while the database is down, resumes when it is
//! back, and exits 0 on SIGTERM.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::pg::Postgres;

use super::fixture::fixture_sql;
use super::{current, indexer, loaded, spawn_export, wait_exit};

#[test]
fn every_keeps_exporting_across_a_database_restart_and_stops_on_sigterm() {
    let mut pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("export.log");
    let mut child = spawn_export(
        &pg.url(),
        out.path(),
        &["--every", "1", "--keep", "100"],
        &log,
    );
    let wait_for = |what: &str, cond: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !cond() {
            assert!(
                Instant::now() < deadline,
                "{what}; log:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait_for("no first snapshot", &|| current(out.path()).is_some());
    pg.stop();
    let failed = |l: &Path| {
        std::fs::read_to_string(l)
            .unwrap_or_default()
            .contains("round failed")
    };
    wait_for("no failed round while the database is down", &|| {
        failed(&log)
    });
    let during_outage = current(out.path()).unwrap();
    assert!(
        loaded(out.path()).lists.len() == 7,
        "the last good snapshot stays current"
    );
    pg.restart();
    wait_for("no new snapshot after the database came back", &|| {
        current(out.path()).is_some_and(|c| c != during_outage)
    });
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = wait_exit(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(0), "SIGTERM ends --every with status 0");
    assert!(
        !std::fs::read_dir(out.path())
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with(".tmp-")),
        "no temporary directory left"
    );
}
