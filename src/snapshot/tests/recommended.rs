//! The optional `recommended` table: left out, present, and each of its
//! rules broken once.

use arrow_array::{Float64Array, Int8Array, UInt32Array, UInt64Array};

use super::*;

/// The sample without `recommended`: no file, no manifest entry.
fn sample_without_recommended() -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = sample_dir();
    std::fs::remove_file(dir.join("recommended.parquet")).unwrap();
    edit_manifest(&dir, |m| {
        m["tables"].as_object_mut().unwrap().remove("recommended");
    });
    (tmp, dir)
}

#[test]
fn left_out_it_has_no_rows() {
    let (_tmp, dir) = sample_without_recommended();
    let snap = read_snapshot(&dir).unwrap();
    assert!(snap.tables.recommended.is_empty());
    assert_eq!(snap.tables.lists, sample().lists);
    assert!(read_recommended_rows(&DirFiles(&dir)).unwrap().is_empty());
}

#[test]
fn present_it_reads_back_as_written() {
    let (_tmp, dir) = sample_dir();
    let rows = read_snapshot(&dir).unwrap().tables.recommended;
    assert_eq!(rows, sample().recommended);
    assert_eq!(read_recommended_rows(&DirFiles(&dir)).unwrap(), rows);
}

#[test]
fn in_the_manifest_without_its_file_is_rejected() {
    let (_tmp, dir) = sample_dir();
    std::fs::remove_file(dir.join("recommended.parquet")).unwrap();
    assert_err(
        &read_err(&dir),
        "recommended.parquet",
        None,
        &["file is missing"],
    );
}

#[test]
fn a_file_without_its_manifest_entry_is_ignored() {
    let (_tmp, dir) = sample_dir();
    edit_manifest(&dir, |m| {
        m["tables"].as_object_mut().unwrap().remove("recommended");
    });
    assert!(read_snapshot(&dir).unwrap().tables.recommended.is_empty());
}

#[test]
fn position_takes_any_integer_type() {
    for (array, want) in [
        (Arc::new(Int8Array::from(vec![-3, 4])) as ArrayRef, [-3, 4]),
        (Arc::new(UInt32Array::from(vec![7, 0])), [7, 0]),
        (Arc::new(Int32Array::from(vec![1, 1])), [1, 1]),
        (
            Arc::new(UInt64Array::from(vec![i64::MAX as u64, 2])),
            [i64::MAX, 2],
        ),
    ] {
        let (_tmp, dir) = sample_with_column("recommended", "position", array);
        let rows = read_snapshot(&dir).unwrap().tables.recommended;
        let got: Vec<i64> = rows.iter().map(|r| r.position).collect();
        assert_eq!(got, want);
    }
}

#[test]
fn position_rules() {
    let too_large = Arc::new(UInt64Array::from(vec![1, i64::MAX as u64 + 1]));
    let (_tmp, dir) = sample_with_column("recommended", "position", too_large);
    assert_err(
        &read_err(&dir),
        "recommended.parquet",
        Some(1),
        &["position", "9223372036854775808", "64-bit"],
    );
    let float = Arc::new(Float64Array::from(vec![1.0, 2.0]));
    let (_tmp, dir) = sample_with_column("recommended", "position", float);
    assert_err(
        &read_err(&dir),
        "recommended.parquet",
        None,
        &["position", "an integer type"],
    );
    let null = Arc::new(Int64Array::from(vec![Some(1), None]));
    let (_tmp, dir) = sample_with_column("recommended", "position", null);
    assert_err(
        &read_err(&dir),
        "recommended.parquet",
        Some(1),
        &["null", "position"],
    );
}

#[test]
fn addresses_are_unique_in_any_case() {
    let upper = format!("0x{}", "EE".repeat(20));
    let (_tmp, dir) = sample_with_column(
        "recommended",
        "address",
        strings(&[Some(&upper), Some(&addr_text(0xee))]),
    );
    let e = read_err(&dir);
    assert_eq!(e.kind, SnapshotErrorKind::Duplicate);
    assert_err(&e, "recommended.parquet", Some(1), &["address"]);
    let (_tmp, dir) = sample_with_column(
        "recommended",
        "address",
        strings(&[Some("0x12"), Some(&addr_text(0xee))]),
    );
    assert_err(
        &read_err(&dir),
        "recommended.parquet",
        Some(0),
        &["malformed address"],
    );
}

#[test]
fn name_is_required_the_rest_may_be_null() {
    let (_tmp, dir) = sample_with_column("recommended", "name", strings(&[Some("a"), None]));
    assert_err(
        &read_err(&dir),
        "recommended.parquet",
        Some(1),
        &["null", "name"],
    );
    // The second sample row's avatar, class and created_at are null.
    let (_tmp, dir) = sample_dir();
    let rows = read_snapshot(&dir).unwrap().tables.recommended;
    assert_eq!(
        (&rows[1].avatar, &rows[1].class, rows[1].created_at),
        (&None, &None, None)
    );
}

#[test]
fn created_at_is_floored_to_milliseconds() {
    let micros = Arc::new(
        TimestampMicrosecondArray::from(vec![Some(T0 * 1000 + 999), None]).with_timezone("UTC"),
    );
    let (_tmp, dir) = sample_with_column("recommended", "created_at", micros);
    let rows = read_snapshot(&dir).unwrap().tables.recommended;
    assert_eq!(rows[0].created_at, Some(T0));
    assert_eq!(rows[1].created_at, None);
}
