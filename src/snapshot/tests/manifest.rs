//! The manifest's rules, and which directory a root stands for.

use super::*;

#[test]
fn missing_manifest() {
    let (_tmp, dir) = sample_dir();
    std::fs::remove_file(dir.join("manifest.json")).unwrap();
    assert_err(&read_err(&dir), "manifest.json", None, &["cannot read"]);
}

#[test]
fn malformed_manifest() {
    let (_tmp, dir) = sample_dir();
    std::fs::write(
        dir.join("manifest.json"),
        "{\"format\": \"graph-snapshot/1\",",
    )
    .unwrap();
    assert_err(
        &read_err(&dir),
        "manifest.json",
        None,
        &["malformed manifest"],
    );
    std::fs::write(
        dir.join("manifest.json"),
        r#"{"format": "graph-snapshot/1"}"#,
    )
    .unwrap();
    assert_err(
        &read_err(&dir),
        "manifest.json",
        None,
        &["malformed manifest", "created_at"],
    );
}

#[test]
fn unknown_format_version() {
    let (_tmp, dir) = sample_dir();
    edit_manifest(&dir, |m| m["format"] = "graph-snapshot/2".into());
    assert_err(
        &read_err(&dir),
        "manifest.json",
        None,
        &["unknown format version", "graph-snapshot/2"],
    );
}

#[test]
fn invalid_created_at() {
    let (_tmp, dir) = sample_dir();
    edit_manifest(&dir, |m| m["created_at"] = "2026-11-20 12:00:00".into());
    assert_err(
        &read_err(&dir),
        "manifest.json",
        None,
        &["created_at", "2026-11-20 12:00:00"],
    );
}

#[test]
fn missing_table_entry() {
    let (_tmp, dir) = sample_dir();
    edit_manifest(&dir, |m| {
        m["tables"].as_object_mut().unwrap().remove("badge_events");
    });
    assert_err(&read_err(&dir), "manifest.json", None, &["`badge_events`"]);
}

#[test]
fn manifest_file_names_must_stay_inside_the_dir() {
    let (tmp, dir) = sample_dir();
    // A readable, valid file outside the snapshot directory.
    std::fs::copy(dir.join("lists.parquet"), tmp.path().join("lists.parquet")).unwrap();
    for bad in [
        "../lists.parquet",
        "/etc/passwd",
        "sub/lists.parquet",
        "..\\lists.parquet",
        "",
        ".",
        "..",
    ] {
        edit_manifest(&dir, |m| m["tables"]["lists"]["file"] = bad.into());
        let e = read_err(&dir);
        assert_err(
            &e,
            "manifest.json",
            None,
            &["`lists`", "not a plain file name"],
        );
    }
}

#[test]
fn extra_manifest_tables_and_files_are_ignored() {
    let (_tmp, dir) = sample_dir();
    edit_manifest(&dir, |m| {
        m["tables"]["followers_cache"] = serde_json::json!({"file": "nope.parquet", "rows": 5});
        m["comment"] = "extra keys too".into();
    });
    std::fs::write(dir.join("README.txt"), "hello").unwrap();
    assert_tables_eq(&read_snapshot(&dir).unwrap().tables, &sample());
}

#[test]
fn renamed_file_is_followed() {
    let (_tmp, dir) = sample_dir();
    std::fs::rename(dir.join("ens.parquet"), dir.join("ens-v2.parquet")).unwrap();
    edit_manifest(&dir, |m| {
        m["tables"]["ens"]["file"] = "ens-v2.parquet".into()
    });
    assert_tables_eq(&read_snapshot(&dir).unwrap().tables, &sample());
}

// ---------------------------------------------------------------------------
// resolve_snapshot_dir

#[test]
fn resolve_follows_current() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    for name in ["s1", "s2"] {
        write_snapshot(
            &root.join(name),
            CREATED,
            &Tables::default(),
            &WriteOptions::default(),
        )
        .unwrap();
    }
    publish(root, "s1").unwrap();
    assert_eq!(resolve_snapshot_dir(root).unwrap(), root.join("s1"));
    assert_eq!(load(root).unwrap().name, "s1");
    publish(root, "s2").unwrap();
    assert_eq!(load(root).unwrap().name, "s2");
}

#[test]
fn resolve_without_current_takes_the_greatest_name_with_a_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    for name in ["2026-01-01", "2026-03-01", "2026-02-01"] {
        write_snapshot(
            &root.join(name),
            CREATED,
            &Tables::default(),
            &WriteOptions::default(),
        )
        .unwrap();
    }
    // Greater names without a manifest (half-written) are skipped.
    std::fs::create_dir(root.join("2026-04-01")).unwrap();
    assert_eq!(resolve_snapshot_dir(root).unwrap(), root.join("2026-03-01"));
    let empty = tempfile::tempdir().unwrap();
    let e = resolve_snapshot_dir(empty.path()).unwrap_err();
    assert!(e.reason.contains("no CURRENT"), "{e}");

    // An export's work in progress, manifest written but not yet renamed,
    // is never taken, even alone.
    let only_tmp = tempfile::tempdir().unwrap();
    let in_progress = only_tmp.path().join(".tmp-2026-05-01");
    write_snapshot(
        &in_progress,
        CREATED,
        &Tables::default(),
        &WriteOptions::default(),
    )
    .unwrap();
    let e = resolve_snapshot_dir(only_tmp.path()).unwrap_err();
    assert!(e.reason.contains("no CURRENT"), "{e}");
    std::fs::rename(&in_progress, root.join(".tmp-2026-05-01")).unwrap();
    assert_eq!(resolve_snapshot_dir(root).unwrap(), root.join("2026-03-01"));
}

#[test]
fn resolve_a_snapshot_dir_directly() {
    let (_tmp, dir) = sample_dir();
    assert_eq!(resolve_snapshot_dir(&dir).unwrap(), dir);
    assert_tables_eq(&load(&dir).unwrap().tables, &sample());
}

#[test]
fn resolve_current_naming_a_missing_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write_snapshot(
        &root.join("s1"),
        CREATED,
        &Tables::default(),
        &WriteOptions::default(),
    )
    .unwrap();
    publish(root, "s9").unwrap();
    let e = resolve_snapshot_dir(root).unwrap_err();
    assert!(e.file.ends_with("CURRENT"), "{e}");
    assert!(e.reason.contains("s9"), "{e}");
    publish(root, "../s1").unwrap();
    let e = resolve_snapshot_dir(root).unwrap_err();
    assert!(e.reason.contains("not a valid snapshot name"), "{e}");
}

#[test]
fn a_source_anchor_loads_and_a_malformed_one_is_rejected() {
    let (_tmp, dir) = sample_dir();
    edit_manifest(&dir, |m| {
        m["source"] = serde_json::json!({
            "positions": {"8453": [24012345, 17, 3], "10": [130000000, 2, 0]},
            "db_time": "2026-11-20T12:00:00.000Z"
        })
    });
    let graph = crate::graph::Graph::load_path(&dir).expect("an anchored snapshot loads");
    let anchor = graph.anchor.expect("anchor");
    assert_eq!(anchor.positions[&8453], [24012345, 17, 3]);
    assert_eq!(anchor.positions[&10], [130000000, 2, 0]);
    assert_eq!(
        crate::time::format_iso_ms(anchor.db_time_ms),
        "2026-11-20T12:00:00.000Z"
    );
    assert_eq!(
        serde_json::to_value(anchor.to_json()).unwrap(),
        serde_json::json!({
            "positions": {"10": [130000000, 2, 0], "8453": [24012345, 17, 3]},
            "db_time": "2026-11-20T12:00:00.000Z"
        })
    );
    let bad = [
        (
            serde_json::json!({"positions": {"x": [1, 2, 3]}, "db_time": "2026-11-20T12:00:00.000Z"}),
            "chain id",
        ),
        (
            serde_json::json!({"positions": {"08453": [1, 2, 3]}, "db_time": "2026-11-20T12:00:00.000Z"}),
            "chain id",
        ),
        (
            serde_json::json!({"positions": {"1": [1, 2]}, "db_time": "2026-11-20T12:00:00.000Z"}),
            "malformed manifest",
        ),
        (
            serde_json::json!({"positions": {"1": [1, -2, 3]}, "db_time": "2026-11-20T12:00:00.000Z"}),
            "malformed manifest",
        ),
        (
            serde_json::json!({"positions": {}, "db_time": "yesterday"}),
            "db_time",
        ),
        (serde_json::json!({"positions": {}}), "malformed manifest"),
        (serde_json::json!([1]), "malformed manifest"),
    ];
    for (source, reason) in bad {
        edit_manifest(&dir, |m| m["source"] = source.clone());
        assert_err(&read_err(&dir), "manifest.json", None, &[reason]);
        assert!(crate::graph::Graph::load_path(&dir).is_err(), "{source}");
    }
}

#[test]
fn a_snapshot_without_source_has_no_anchor() {
    let (_tmp, dir) = sample_dir();
    let graph = crate::graph::Graph::load_path(&dir).expect("loads");
    assert!(graph.anchor.is_none());
}
