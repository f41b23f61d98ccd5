//! Missing, truncated and corrupt files; row counts and checksums.

use super::*;

#[test]
fn missing_file() {
    let (_tmp, dir) = sample_dir();
    std::fs::remove_file(dir.join("list_ops.parquet")).unwrap();
    assert_err(&read_err(&dir), "list_ops.parquet", None, &["missing"]);
}

#[test]
fn truncated_parquet_file() {
    let (_tmp, dir) = sample_dir();
    let path = dir.join("list_records.parquet");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    edit_manifest(&dir, |m| {
        m["tables"]["list_records"]
            .as_object_mut()
            .unwrap()
            .remove("sha256");
    });
    assert_err(
        &read_err(&dir),
        "list_records.parquet",
        None,
        &["not a readable Parquet file"],
    );
    std::fs::write(&path, b"").unwrap();
    assert_err(
        &read_err(&dir),
        "list_records.parquet",
        None,
        &["not a readable Parquet file"],
    );
}

#[test]
fn corrupt_page_data() {
    let (_tmp, dir) = written(
        &sample(),
        &WriteOptions {
            row_group_rows: 1 << 20,
            checksums: false,
        },
    );
    let path = dir.join("badge_events.parquet");
    let mut bytes = std::fs::read(&path).unwrap();
    // Smash the data pages (after the 4-byte magic), keep the footer.
    let end = bytes.len() / 2;
    for b in &mut bytes[4..end] {
        *b = 0xff;
    }
    std::fs::write(&path, &bytes).unwrap();
    assert_err(
        &read_err(&dir),
        "badge_events.parquet",
        None,
        &["not a readable Parquet file"],
    );
}

#[test]
fn row_count_mismatch() {
    let (_tmp, dir) = sample_dir();
    edit_manifest(&dir, |m| m["tables"]["list_record_tags"]["rows"] = 5.into());
    assert_err(
        &read_err(&dir),
        "list_record_tags.parquet",
        None,
        &["row count 4", "manifest's 5"],
    );
}

#[test]
fn checksum_mismatch() {
    let (_tmp, dir) = sample_dir();
    let wrong = "ab".repeat(32);
    edit_manifest(&dir, |m| {
        m["tables"]["badges"]["sha256"] = wrong.clone().into()
    });
    let e = read_err(&dir);
    assert_err(&e, "badges.parquet", None, &["checksum mismatch", &wrong]);
    let actual = sha_hex(&std::fs::read(dir.join("badges.parquet")).unwrap());
    assert!(e.reason.contains(&actual), "{e}");
}

#[test]
fn checksum_is_case_insensitive() {
    let (_tmp, dir) = sample_dir();
    edit_manifest(&dir, |m| {
        let sha = m["tables"]["lists"]["sha256"]
            .as_str()
            .unwrap()
            .to_uppercase();
        m["tables"]["lists"]["sha256"] = sha.into();
    });
    read_snapshot(&dir).unwrap();
}
