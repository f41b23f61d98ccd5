//! `--query TABLE=FILE.sql`: a bad query names the table and column and
//! publishes nothing; the badge tables are exported through the query
//! files of `tests/indexer/queries/`.

use std::path::Path;

use crate::pg::Postgres;

use super::fixture::fixture_sql;
use super::{
    a, current, export, export_with_env, indexer, loaded, skipped, snapshot_dirs, sorted, A,
};

#[test]
fn a_bad_query_names_the_table_and_column_and_publishes_nothing() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    pg.execute(include_str!("../../indexer/badge_tables.sql"));
    let out = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let write = |name: &str, sql: &str| {
        let p = work.path().join(name);
        std::fs::write(&p, sql).unwrap();
        format!("badges={}", p.display())
    };
    let cases = [
        (
            write("missing.sql", "SELECT holder AS address, event_id, poap_token_id AS token_id FROM poap_holdings"),
            "--query badges: the query has no column `owner`",
        ),
        (
            write("type.sql", "SELECT holder AS address, now() AS event_id, poap_token_id AS token_id, owner_as_reported AS owner FROM poap_holdings"),
            "--query badges: column `event_id` has type timestamptz, expected bigint, integer, smallint or numeric",
        ),
        (
            write("syntax.sql", "SELEC 1"),
            "--query badges: ERROR: syntax error at or near \"SELEC\"",
        ),
    ];
    for (arg, message) in &cases {
        let (code, stderr) = export(&pg.url(), out.path(), &["--query", arg]);
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains(message),
            "expected {message:?} in:\n{stderr}"
        );
        assert!(snapshot_dirs(out.path()).is_empty(), "nothing published");
        assert!(current(out.path()).is_none());
    }
    let (code, stderr) = export(&pg.url(), out.path(), &["--query", "nosuch=x.sql"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("unknown table `nosuch`"), "{stderr}");
}

#[test]
fn badges_through_query_files() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    pg.execute(include_str!("../../indexer/badge_tables.sql"));
    pg.execute(&format!(
        "INSERT INTO poap_events VALUES \
           (177709, 2, 'f1', 'Event One', 'https://e/1', 'https://i/1', '', '', 'd1', 2024, \
            '06-Sep-2024', '21-Sep-2024', '21-Sep-2025'), \
           (178064, 1, 'f2', 'Event Two', 'https://e/2', 'https://i/2', 'France', 'Paris', 'd2', 2024, \
            '01-Oct-2024', '02-Oct-2024', '02-Oct-2025'); \
         INSERT INTO poap_holdings VALUES ('0x{A}', 177709, '7189762', '0xC9C3A4337a1bba75D0860A1A81f7B990dc607334'), \
           ('not-an-address', 178064, '1', '0x0');"
    ));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/indexer/queries");
    let out = tempfile::tempdir().unwrap();
    // Both files through the environment, comma-separated (the flag
    // itself is exercised above).
    let queries = format!(
        "badge_events={},badges={}",
        dir.join("badge_events.sql").display(),
        dir.join("badges.sql").display()
    );
    let (code, stderr) = export_with_env(
        &pg.url(),
        out.path(),
        &[],
        &[("FOLLOWGRAPH_QUERIES", queries.into())],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("written empty"), "{stderr}");
    let t = loaded(out.path());
    assert_eq!(
        sorted(
            &t.badge_events
                .iter()
                .map(|e| (e.event_id, e.position, e.city.clone()))
                .collect::<Vec<_>>()
        ),
        vec![(177709, 2, String::new()), (178064, 1, "Paris".to_owned())]
    );
    assert_eq!(t.badges.len(), 1);
    assert_eq!(t.badges[0].address, a(A));
    assert_eq!(
        t.badges[0].owner,
        "0xC9C3A4337a1bba75D0860A1A81f7B990dc607334"
    );
    assert_eq!(
        skipped(out.path()).get(&(
            "--query badges".to_owned(),
            "an address is not 0x + 40 hex digits".to_owned()
        )),
        Some(&1)
    );
}
