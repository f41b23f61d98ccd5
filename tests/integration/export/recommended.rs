//! The `recommended` table from `efp_recommended` (docs/export.md,
//! "recommended"): the mapping with and without the `header` column, the
//! skips, a database without the table, and the carry-forward of a
//! rebuild caught half-way.

use std::collections::BTreeMap;
use std::path::Path;

use followgraph::snapshot::RecommendedRow;

use crate::pg::Postgres;

use super::{a, current, export_json, export_ok, indexer, loaded, ms, skipped, A, B, C, D, E};

const INSERT: &str =
    "INSERT INTO efp_recommended (\"index\", name, address, avatar, header, class, created_at) VALUES";

fn row(position: i64, address: &str, name: &str) -> RecommendedRow {
    RecommendedRow {
        position,
        address: a(address),
        name: name.into(),
        ..RecommendedRow::default()
    }
}

fn notes(root: &Path) -> Vec<String> {
    export_json(root)["notes"]
        .as_array()
        .expect("notes array")
        .iter()
        .map(|n| n.as_str().unwrap().to_owned())
        .collect()
}

fn recommended_notes(root: &Path) -> Vec<String> {
    notes(root)
        .into_iter()
        .filter(|n| n.contains("recommended"))
        .collect()
}

/// An ens row of `C` with a header in its records, and one of `D`
/// without.
fn profiles(pg: &Postgres) {
    pg.execute(&format!(
        "INSERT INTO ens_metadata (address, name, records) VALUES
         ('0x{C}', 'carol.eth', '{{\"header\": \"https://c/h.png\", \"avatar\": \"x\"}}'),
         ('0x{D}', 'dave.eth', '{{\"url\": \"https://d\"}}');"
    ));
}

#[test]
fn rows_map_and_a_missing_header_comes_from_the_profile() {
    let pg = Postgres::start();
    indexer(&pg);
    profiles(&pg);
    let e_upper = E.to_uppercase();
    pg.execute(&format!(
        "{INSERT}
         (2, 'Bee \"<b>\" & co', '0x{B}', 'https://b/a.png', 'https://b/h.png', 'A', '2024-02-01T00:00:00.123456Z'),
         (1, 'carol', '0x{C}', NULL, NULL, NULL, NULL),
         (1, 'dave', '0x{D}', NULL, NULL, 'C', '2024-01-01Z'),
         (-5, 'alice', '0x{A}', NULL, 'https://a/own.png', NULL, NULL),
         (NULL, 'no index', '0x{e_upper}', NULL, NULL, NULL, NULL),
         (3, 'bad', '0x12', NULL, NULL, NULL, NULL);"
    ));
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &[]);
    let mut want = vec![
        RecommendedRow {
            header: Some("https://a/own.png".into()),
            ..row(-5, A, "alice")
        },
        // No header of its own: its profile's.
        RecommendedRow {
            header: Some("https://c/h.png".into()),
            ..row(1, C, "carol")
        },
        // No header of its own, none in its profile.
        RecommendedRow {
            class: Some("C".into()),
            created_at: Some(ms("2024-01-01T00:00:00.000Z")),
            ..row(1, D, "dave")
        },
        RecommendedRow {
            avatar: Some("https://b/a.png".into()),
            header: Some("https://b/h.png".into()),
            class: Some("A".into()),
            created_at: Some(ms("2024-02-01T00:00:00.123Z")),
            ..row(2, B, "Bee \"<b>\" & co")
        },
    ];
    let mut got = loaded(out.path()).recommended;
    got.sort();
    want.sort();
    assert_eq!(got, want);
    let skips: BTreeMap<(String, String), u64> = [
        ("efp_recommended", "address is not 20 bytes", 1),
        ("efp_recommended", "index is NULL", 1),
    ]
    .into_iter()
    .map(|(s, r, n)| ((s.to_owned(), r.to_owned()), n))
    .collect();
    assert_eq!(skipped(out.path()), skips);
    assert_eq!(recommended_notes(out.path()), Vec::<String>::new());
}

#[test]
fn without_a_header_column_the_header_is_the_profiles() {
    let pg = Postgres::start();
    indexer(&pg);
    profiles(&pg);
    pg.execute(&format!(
        "ALTER TABLE efp_recommended DROP COLUMN header;
         INSERT INTO efp_recommended (\"index\", name, address, created_at) VALUES
         (0, 'carol', '0x{C}', NULL), (1, 'dave', '0x{D}', NULL), (2, 'bee', '0x{B}', NULL);"
    ));
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &[]);
    let mut got = loaded(out.path()).recommended;
    got.sort();
    assert_eq!(
        got,
        vec![
            RecommendedRow {
                header: Some("https://c/h.png".into()),
                ..row(0, C, "carol")
            },
            row(1, D, "dave"),
            row(2, B, "bee"),
        ]
    );
}

#[test]
fn a_database_without_the_table_exports_it_empty_and_says_so() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute("DROP TABLE efp_recommended;");
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &[]);
    assert!(loaded(out.path()).recommended.is_empty());
    assert_eq!(
        recommended_notes(out.path()),
        vec!["the indexer has no efp_recommended table: recommended was written empty"]
    );
    let name = current(out.path()).unwrap();
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(out.path().join(name).join("manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["tables"]["recommended"]["rows"], 0);
}

#[test]
fn a_rebuild_caught_half_way_carries_the_current_rows_forward() {
    let pg = Postgres::start();
    indexer(&pg);
    let out = tempfile::tempdir().unwrap();
    // Empty, with nothing published yet: written empty.
    export_ok(&pg.url(), out.path(), &["--name", "s0"]);
    assert!(loaded(out.path()).recommended.is_empty());
    assert_eq!(recommended_notes(out.path()), Vec::<String>::new());

    pg.execute(&format!(
        "{INSERT} (0, 'one', '0x{A}', NULL, NULL, NULL, NULL), (1, 'two', '0x{B}', NULL, NULL, NULL, NULL);"
    ));
    export_ok(&pg.url(), out.path(), &["--name", "s1"]);
    let published = vec![row(0, A, "one"), row(1, B, "two")];
    assert_eq!(loaded(out.path()).recommended, published);

    // TRUNCATE: nothing to read.
    pg.execute("TRUNCATE efp_recommended;");
    export_ok(&pg.url(), out.path(), &["--name", "s2"]);
    assert_eq!(current(out.path()).as_deref(), Some("s2"));
    assert_eq!(loaded(out.path()).recommended, published);
    assert_eq!(
        recommended_notes(out.path()),
        vec!["recommended carried forward (empty)"]
    );

    // The rows back, all at index 0: carried forward again (from s2).
    pg.execute(&format!(
        "{INSERT} (0, 'x', '0x{C}', NULL, NULL, NULL, NULL), (0, 'y', '0x{D}', NULL, NULL, NULL, NULL);"
    ));
    export_ok(&pg.url(), out.path(), &["--name", "s3"]);
    assert_eq!(loaded(out.path()).recommended, published);
    assert_eq!(
        recommended_notes(out.path()),
        vec!["recommended carried forward (unordered)"]
    );

    // One row at index 0 is an order: exported as read.
    pg.execute("DELETE FROM efp_recommended WHERE name = 'y';");
    export_ok(&pg.url(), out.path(), &["--name", "s4"]);
    assert_eq!(loaded(out.path()).recommended, vec![row(0, C, "x")]);
    assert_eq!(recommended_notes(out.path()), Vec::<String>::new());
}
