//! The kind each rejection carries (what callers decide on), one case per
//! kind the reader produces.

use super::*;

#[track_caller]
fn assert_kind(e: &SnapshotError, kind: SnapshotErrorKind) {
    assert_eq!(e.kind, kind, "wrong kind for {e}");
}

#[test]
fn files_manifest_and_root() {
    let (_tmp, dir) = sample_dir();
    std::fs::remove_file(dir.join("list_ops.parquet")).unwrap();
    assert_kind(&read_err(&dir), SnapshotErrorKind::MissingFile);

    let mut files = memory_files(CREATED, &sample()).unwrap();
    files.0.remove("ens.parquet");
    let e = read_snapshot_from(&files, "m".into(), PathBuf::from("m")).unwrap_err();
    assert_kind(&e, SnapshotErrorKind::MissingFile);

    let (_tmp, dir) = sample_dir();
    std::fs::write(dir.join("badges.parquet"), b"").unwrap();
    edit_manifest(&dir, |m| {
        m["tables"]["badges"]["rows"] = 0.into();
        m["tables"]["badges"]
            .as_object_mut()
            .unwrap()
            .remove("sha256");
    });
    assert_kind(&read_err(&dir), SnapshotErrorKind::Unreadable);

    let (_tmp, dir) = sample_dir();
    edit_manifest(&dir, |m| m["format"] = "graph-snapshot/2".into());
    assert_kind(&read_err(&dir), SnapshotErrorKind::Manifest);

    let tmp = tempfile::tempdir().unwrap();
    let e = resolve_snapshot_dir(tmp.path()).unwrap_err();
    assert_kind(&e, SnapshotErrorKind::NoSnapshot);
}

#[test]
fn counts_checksums_and_columns() {
    let (_tmp, dir) = sample_dir();
    edit_manifest(&dir, |m| m["tables"]["list_record_tags"]["rows"] = 5.into());
    assert_kind(&read_err(&dir), SnapshotErrorKind::RowCount);

    let (_tmp, dir) = sample_dir();
    edit_manifest(&dir, |m| {
        m["tables"]["ens"]["sha256"] = "ab".repeat(32).into()
    });
    assert_kind(&read_err(&dir), SnapshotErrorKind::Checksum);

    let (_tmp, dir) = sample_dir();
    put(
        &dir,
        "lists",
        &without_column(&table_batch(Table::Lists, &sample()), "user"),
    );
    assert_kind(&read_err(&dir), SnapshotErrorKind::Schema);
}

#[test]
fn rows_and_uniqueness() {
    let mut t = sample();
    t.list_records[4].token_id = 0;
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_kind(&read_err(&dir), SnapshotErrorKind::InvalidRow);

    let mut t = sample();
    t.badges[1].event_id = 5;
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_kind(&read_err(&dir), SnapshotErrorKind::InvalidRow);

    let mut t = sample();
    t.lists[2].token_id = 1;
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_kind(&read_err(&dir), SnapshotErrorKind::Duplicate);
}
