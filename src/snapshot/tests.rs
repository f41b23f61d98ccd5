//! Loader tests: round trips through `write_snapshot` / `read_snapshot`,
//! one test per validation rule, and `resolve_snapshot_dir`.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryArray, Int32Array, Int64Array, LargeBinaryArray, LargeStringArray,
    RecordBatch, StringArray, StringViewArray, TimestampMicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt64Array,
};
use arrow_schema::{Field, Schema};
use sha2::{Digest, Sha256};

use super::*;

const CREATED: i64 = 1_795_176_000_000; // 2026-11-20T12:00:00.000Z
const T0: i64 = 1_700_000_000_000;

fn addr(n: u8) -> Address {
    [n; 20]
}

fn addr_text(n: u8) -> String {
    format_address(&addr(n))
}

fn sample() -> Tables {
    Tables {
        lists: vec![
            ListRow {
                token_id: 1,
                user: addr(1),
                owner: addr(1),
                manager: addr(1),
            },
            ListRow {
                token_id: 2,
                user: addr(2),
                owner: addr(0xa2),
                manager: addr(0xb2),
            },
            ListRow {
                token_id: 3,
                user: addr(3),
                owner: addr(3),
                manager: addr(3),
            },
        ],
        primary_lists: vec![
            PrimaryListRow {
                address: addr(1),
                token_id: 1,
            },
            PrimaryListRow {
                address: addr(2),
                token_id: 2,
            },
            PrimaryListRow {
                address: addr(0xcd),
                token_id: 3,
            },
        ],
        list_records: vec![
            RecordRow {
                token_id: 1,
                address: addr(2),
                updated_at: T0,
            },
            RecordRow {
                token_id: 1,
                address: addr(3),
                updated_at: T0 + 1,
            },
            RecordRow {
                token_id: 2,
                address: addr(1),
                updated_at: T0 + 2,
            },
            RecordRow {
                token_id: 2,
                address: addr(3),
                updated_at: T0 - 86_400_000,
            },
            RecordRow {
                token_id: 3,
                address: addr(1),
                updated_at: 0,
            },
            RecordRow {
                token_id: 99,
                address: addr(1),
                updated_at: T0 + 5,
            },
        ],
        list_record_tags: vec![
            TagRow {
                token_id: 1,
                address: addr(2),
                tag: "top8".into(),
                updated_at: T0,
            },
            TagRow {
                token_id: 1,
                address: addr(2),
                tag: "🦀 café".into(),
                updated_at: T0 + 1,
            },
            TagRow {
                token_id: 1,
                address: addr(3),
                tag: "Top8".into(),
                updated_at: T0 + 2,
            },
            TagRow {
                token_id: 2,
                address: addr(1),
                tag: "block".into(),
                updated_at: T0 + 3,
            },
        ],
        list_ops: vec![
            op_row(1, 10, OP_FOLLOW, addr(2), ""),
            op_row(1, 11, OP_TAG, addr(2), "🦀 café"),
            op_row(1, 12, OP_UNTAG, addr(2), "mute"),
            op_row(2, 13, OP_UNFOLLOW, addr(9), ""),
            op_row(2, 20, OP_FOLLOW, addr(1), ""),
        ],
        ens: vec![
            EnsRow {
                address: addr(1),
                name: "alice.eth".into(),
                avatar: Some("https://example.com/a.png".into()),
                header: None,
                display: Some("Alice.eth".into()),
                records: Some(
                    r#"{"url":"https://alice.example","avatar":"x","description":"hi 👋"}"#.into(),
                ),
                chains: Some(r#"{"eth":"0x01","btc":"bc1q"}"#.into()),
                fresh: Some(T0),
                resolver: Some(addr_text(0x44)),
                errors: Some(r#"{"zeta":"timeout","alpha":"nxdomain"}"#.into()),
            },
            EnsRow {
                address: addr(2),
                name: "bob.eth".into(),
                ..EnsRow::default()
            },
            EnsRow {
                address: addr(3),
                name: "ÉLODIE.eth".into(),
                ..EnsRow::default()
            },
        ],
        badge_events: vec![
            badge_event(177_709, 0, "efp-beta"),
            badge_event(169_216, 1, "efp-launch"),
            badge_event(171_997, 2, "efp-one-year"),
        ],
        badges: vec![
            BadgeRow {
                address: addr(1),
                event_id: 177_709,
                token_id: "7000123".into(),
                owner: "0xAbCd".into(),
            },
            BadgeRow {
                address: addr(1),
                event_id: 169_216,
                token_id: "7000124".into(),
                owner: "0xabcd".into(),
            },
            BadgeRow {
                address: addr(2),
                event_id: 177_709,
                token_id: "7000125".into(),
                owner: addr_text(2),
            },
        ],
    }
}

fn op_row(token_id: u64, seq: u64, opcode: u8, target: Address, tag: &str) -> OpRow {
    OpRow {
        token_id,
        seq,
        op: Op {
            opcode,
            target,
            tag: tag.into(),
        },
        updated_at: T0 + seq as i64,
    }
}

fn badge_event(event_id: i64, position: i32, fancy_id: &str) -> BadgeEventRow {
    BadgeEventRow {
        event_id,
        position,
        fancy_id: fancy_id.into(),
        name: format!("Event {fancy_id}"),
        event_url: "https://efp.app".into(),
        image_url: format!("https://img.example/{event_id}.png"),
        country: String::new(),
        city: String::new(),
        description: "A badge".into(),
        year: 2024,
        start_date: "06-Sep-2024".into(),
        end_date: "07-Sep-2024".into(),
        expiry_date: "06-Oct-2024".into(),
    }
}

/// A temp dir holding snapshot `snap` written from `tables`.
fn written(tables: &Tables, opts: &WriteOptions) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("snap");
    write_snapshot(&dir, CREATED, tables, opts).unwrap();
    (tmp, dir)
}

fn sample_dir() -> (tempfile::TempDir, PathBuf) {
    written(&sample(), &WriteOptions::default())
}

fn read_err(dir: &Path) -> SnapshotError {
    match read_snapshot(dir) {
        Ok(_) => panic!("snapshot in {} was accepted", dir.display()),
        Err(e) => e,
    }
}

#[track_caller]
fn assert_err(e: &SnapshotError, file: &str, row: Option<u64>, needles: &[&str]) {
    assert_eq!(e.file, file, "wrong file in {e}");
    assert_eq!(e.row, row, "wrong row in {e}");
    for needle in needles {
        assert!(
            e.reason.contains(needle),
            "{e:?} does not mention {needle:?}"
        );
    }
}

fn sha_hex(bytes: &[u8]) -> String {
    let mut s = String::new();
    push_hex(&mut s, &Sha256::digest(bytes));
    s
}

fn edit_manifest(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut m);
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// Replaces table `name`'s file with `batch` and fixes the manifest's row
/// count and checksum, so only the batch's content is wrong.
fn put(dir: &Path, name: &str, batch: &RecordBatch) {
    let file = format!("{name}.parquet");
    write_batch_file(&dir.join(&file), batch).unwrap();
    let sha = sha_hex(&std::fs::read(dir.join(&file)).unwrap());
    let rows = batch.num_rows();
    edit_manifest(dir, |m| {
        m["tables"][name]["rows"] = rows.into();
        m["tables"][name]["sha256"] = sha.into();
    });
}

/// `batch` with column `name` replaced by `array` (appended when absent).
fn with_column(batch: &RecordBatch, name: &str, array: ArrayRef) -> RecordBatch {
    let schema = batch.schema();
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    let field = Field::new(name, array.data_type().clone(), true);
    match schema.index_of(name) {
        Ok(i) => {
            fields[i] = field;
            columns[i] = array;
        }
        Err(_) => {
            fields.push(field);
            columns.push(array);
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

fn without_column(batch: &RecordBatch, name: &str) -> RecordBatch {
    let i = batch.schema().index_of(name).unwrap();
    let mut batch = batch.clone();
    batch.remove_column(i);
    batch
}

/// Writes the sample with table `name`'s column `col` replaced by `array`.
fn sample_with_column(name: &str, col: &str, array: ArrayRef) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = sample_dir();
    let batch = table_batch(name, &sample());
    put(&dir, name, &with_column(&batch, col, array));
    (tmp, dir)
}

fn strings(values: &[Option<&str>]) -> ArrayRef {
    Arc::new(StringArray::from(values.to_vec()))
}

fn sample_ops_bytes() -> Vec<Vec<u8>> {
    sample().list_ops.iter().map(|r| r.op.encode()).collect()
}

fn ops_with(row: usize, bytes: Vec<u8>) -> ArrayRef {
    let mut ops = sample_ops_bytes();
    ops[row] = bytes;
    Arc::new(BinaryArray::from_iter_values(ops))
}

// ---------------------------------------------------------------------------
// Round trips

#[test]
fn round_trip() {
    let tables = sample();
    let (_tmp, dir) = written(&tables, &WriteOptions::default());
    let snap = read_snapshot(&dir).unwrap();
    assert_tables_eq(&snap.tables, &tables);
    assert_eq!(snap.name, "snap");
    assert_eq!(snap.dir, dir);
    assert_eq!(snap.created_at_ms, CREATED);
    assert_eq!(snap.manifest.format, FORMAT_V1);
    assert_eq!(snap.manifest.created_at, "2026-11-20T12:00:00.000Z");
    for name in TABLE_NAMES {
        let entry = &snap.manifest.tables[name];
        assert_eq!(entry.file, format!("{name}.parquet"));
        assert_eq!(entry.sha256.as_ref().map(String::len), Some(64));
    }
    assert_eq!(snap.manifest.tables["list_records"].rows, 6);
    // Key order of the JSON objects is kept.
    let records = snap.tables.ens[0].records.as_deref().unwrap();
    assert!(records.starts_with(r#"{"url":"#), "{records}");
    assert_eq!(
        snap.tables.ens[0].errors.as_deref(),
        Some(r#"{"zeta":"timeout","alpha":"nxdomain"}"#)
    );
    assert!(!dir.read_dir().unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".tmp")));
}

/// The same files read from memory (as an object-store download would
/// hold them) load the same snapshot, and a missing one is named.
#[test]
fn round_trip_from_memory() {
    let tables = sample();
    let (_tmp, dir) = written(&tables, &WriteOptions::default());
    let mut files = super::MemoryFiles::default();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        files.0.insert(
            name,
            bytes::Bytes::from(std::fs::read(entry.path()).unwrap()),
        );
    }
    let loaded =
        super::read_snapshot_from(&files, "in-memory".into(), PathBuf::from("mem://x")).unwrap();
    assert_eq!(loaded.name, "in-memory");
    assert_tables_eq(&loaded.tables, &tables);
    files.0.remove("list_ops.parquet");
    let e = super::read_snapshot_from(&files, "in-memory".into(), PathBuf::from("mem://x"))
        .unwrap_err();
    assert_err(&e, "list_ops.parquet", None, &["file is missing"]);
}

#[test]
fn round_trip_many_row_groups_keeps_order() {
    let mut tables = sample();
    tables.list_records = (0..101u64)
        .map(|i| RecordRow {
            token_id: 1 + i % 7,
            address: addr(i as u8),
            updated_at: T0 - i as i64 * 1000,
        })
        .collect();
    tables.list_ops = (0..57u64)
        .map(|i| {
            op_row(
                1 + i % 3,
                1000 - i,
                1 + (i % 4) as u8,
                addr(i as u8),
                if i % 4 >= 2 { "t" } else { "" },
            )
        })
        .collect();
    let opts = WriteOptions {
        row_group_rows: 2,
        checksums: false,
    };
    let (_tmp, dir) = written(&tables, &opts);
    let bytes = bytes::Bytes::from(std::fs::read(dir.join("list_records.parquet")).unwrap());
    let builder =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
    assert_eq!(builder.metadata().num_row_groups(), 51);
    let snap = read_snapshot(&dir).unwrap();
    assert_tables_eq(&snap.tables, &tables);
    assert!(snap.manifest.tables.values().all(|e| e.sha256.is_none()));
}

#[test]
fn round_trip_in_a_dedicated_pool() {
    let (_tmp, dir) = sample_dir();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let snap = pool.install(|| read_snapshot(&dir)).unwrap();
    assert_tables_eq(&snap.tables, &sample());
}

#[test]
fn empty_tables_round_trip() {
    let (_tmp, dir) = written(&Tables::default(), &WriteOptions::default());
    let snap = read_snapshot(&dir).unwrap();
    assert_tables_eq(&snap.tables, &Tables::default());
}

#[test]
fn row_errors_use_global_row_numbers_across_row_groups() {
    let mut tables = sample();
    tables.list_records = (0..9u64)
        .map(|i| RecordRow {
            token_id: 1,
            address: addr(i as u8),
            updated_at: T0,
        })
        .collect();
    tables.list_records[7].token_id = 0;
    let (_tmp, dir) = written(
        &tables,
        &WriteOptions {
            row_group_rows: 2,
            checksums: true,
        },
    );
    assert_err(
        &read_err(&dir),
        "list_records.parquet",
        Some(7),
        &["token_id", "> 0"],
    );
}

#[test]
fn rewriting_a_snapshot_dir_replaces_it() {
    let (_tmp, dir) = sample_dir();
    write_snapshot(
        &dir,
        CREATED + 1,
        &Tables::default(),
        &WriteOptions::default(),
    )
    .unwrap();
    let snap = read_snapshot(&dir).unwrap();
    assert_eq!(snap.created_at_ms, CREATED + 1);
    assert!(snap.tables.lists.is_empty());
}

// ---------------------------------------------------------------------------
// Manifest

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
// Files

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

// ---------------------------------------------------------------------------
// Columns

#[test]
fn missing_column() {
    let (_tmp, dir) = sample_dir();
    put(
        &dir,
        "lists",
        &without_column(&table_batch("lists", &sample()), "user"),
    );
    assert_err(
        &read_err(&dir),
        "lists.parquet",
        None,
        &["missing column `user`"],
    );
}

#[test]
fn wrong_column_type() {
    let (_tmp, dir) = sample_with_column(
        "lists",
        "token_id",
        strings(&[Some("1"), Some("2"), Some("3")]),
    );
    assert_err(
        &read_err(&dir),
        "lists.parquet",
        None,
        &["column `token_id`", "Utf8", "UInt64"],
    );

    let years: ArrayRef = Arc::new(Int64Array::from(vec![2024i64, 2024, 2024]));
    let (_tmp, dir) = sample_with_column("badge_events", "year", years);
    assert_err(
        &read_err(&dir),
        "badge_events.parquet",
        None,
        &["column `year`", "Int64", "expected Int32"],
    );

    let ops: ArrayRef = strings(&[Some("x"); 5]);
    let (_tmp, dir) = sample_with_column("list_ops", "op", ops);
    assert_err(
        &read_err(&dir),
        "list_ops.parquet",
        None,
        &["column `op`", "expected Binary"],
    );

    let ts: ArrayRef = Arc::new(Int64Array::from(vec![T0; 6]));
    let (_tmp, dir) = sample_with_column("list_records", "updated_at", ts);
    assert_err(
        &read_err(&dir),
        "list_records.parquet",
        None,
        &["column `updated_at`", "Int64", "Timestamp"],
    );
}

#[test]
fn int64_seq_is_rejected() {
    // Only token_id accepts Int64; seq is UInt64.
    let seqs: ArrayRef = Arc::new(Int64Array::from(vec![10i64, 11, 12, 13, 20]));
    let (_tmp, dir) = sample_with_column("list_ops", "seq", seqs);
    assert_err(
        &read_err(&dir),
        "list_ops.parquet",
        None,
        &["column `seq` has type Int64", "expected UInt64"],
    );
}

#[test]
fn second_timestamps_are_rejected() {
    // Milli-, micro- or nanoseconds only, with or without a time zone.
    let secs: ArrayRef =
        Arc::new(TimestampSecondArray::from(vec![1, 2, 3, 4, 5]).with_timezone("UTC"));
    let (_tmp, dir) = sample_with_column("list_ops", "updated_at", secs);
    assert_err(
        &read_err(&dir),
        "list_ops.parquet",
        None,
        &[
            "column `updated_at` has type Timestamp(s",
            "milli-, micro- or nanoseconds",
        ],
    );

    let secs: ArrayRef = Arc::new(TimestampSecondArray::from(vec![T0 / 1000; 6]));
    let (_tmp, dir) = sample_with_column("list_records", "updated_at", secs);
    assert_err(
        &read_err(&dir),
        "list_records.parquet",
        None,
        &[
            "column `updated_at` has type Timestamp(s",
            "milli-, micro- or nanoseconds",
        ],
    );
}

#[test]
fn timestamp_without_timezone() {
    let ts: ArrayRef = Arc::new(TimestampMillisecondArray::from(vec![T0; 6]));
    let (_tmp, dir) = sample_with_column("list_records", "updated_at", ts);
    assert_err(
        &read_err(&dir),
        "list_records.parquet",
        None,
        &["`updated_at`", "adjusted to UTC"],
    );
}

#[test]
fn null_in_required_column() {
    let owners = strings(&[Some(&addr_text(1)), None, Some(&addr_text(3))]);
    let (_tmp, dir) = sample_with_column("lists", "owner", owners);
    assert_err(
        &read_err(&dir),
        "lists.parquet",
        Some(1),
        &["null in required column `owner`"],
    );

    let seqs: ArrayRef = Arc::new(UInt64Array::from(vec![
        Some(1),
        Some(2),
        Some(3),
        Some(4),
        None,
    ]));
    let (_tmp, dir) = sample_with_column("list_ops", "seq", seqs);
    assert_err(
        &read_err(&dir),
        "list_ops.parquet",
        Some(4),
        &["null in required column `seq`"],
    );

    let countries = strings(&[Some(""), Some("DE"), None]);
    let (_tmp, dir) = sample_with_column("badge_events", "country", countries);
    assert_err(
        &read_err(&dir),
        "badge_events.parquet",
        Some(2),
        &["null in required column `country`"],
    );

    let ts: ArrayRef = Arc::new(
        TimestampMillisecondArray::from(vec![Some(T0), None, None, None]).with_timezone("UTC"),
    );
    let (_tmp, dir) = sample_with_column("list_record_tags", "updated_at", ts);
    assert_err(
        &read_err(&dir),
        "list_record_tags.parquet",
        Some(1),
        &["null in required column `updated_at`"],
    );
}

#[test]
fn nullable_ens_columns_accept_nulls() {
    let mut tables = sample();
    tables.ens.push(EnsRow {
        address: addr(9),
        name: "nulls.eth".into(),
        ..EnsRow::default()
    });
    let (_tmp, dir) = written(&tables, &WriteOptions::default());
    assert_tables_eq(&read_snapshot(&dir).unwrap().tables, &tables);
}

#[test]
fn malformed_address() {
    let bad = "0x12345";
    let users = strings(&[Some(&addr_text(1)), Some(&addr_text(2)), Some(bad)]);
    let (_tmp, dir) = sample_with_column("lists", "user", users);
    assert_err(
        &read_err(&dir),
        "lists.parquet",
        Some(2),
        &["malformed address \"0x12345\" in column `user`"],
    );

    let bad = format!("0x{}", "g".repeat(40));
    let holders = strings(&[Some(&addr_text(1)), Some(&bad), Some(&addr_text(2))]);
    let (_tmp, dir) = sample_with_column("badges", "address", holders);
    assert_err(
        &read_err(&dir),
        "badges.parquet",
        Some(1),
        &["malformed address", "`address`"],
    );
}

#[test]
fn uppercase_addresses_are_lower_cased() {
    let upper = format!("0x{}", "AB".repeat(20));
    let mixed = "0xC9C3A4337a1bba75D0860A1A81f7B990dc607334";
    let users = strings(&[Some(&upper), Some(mixed), Some(&addr_text(3))]);
    let (_tmp, dir) = sample_with_column("lists", "user", users);
    let snap = read_snapshot(&dir).unwrap();
    assert_eq!(snap.tables.lists[0].user, [0xab; 20]);
    assert_eq!(
        format_address(&snap.tables.lists[1].user),
        mixed.to_lowercase()
    );
}

#[test]
fn token_id_zero() {
    let mut tables = sample();
    tables.list_records[4].token_id = 0;
    let (_tmp, dir) = written(&tables, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "list_records.parquet",
        Some(4),
        &["token_id must be > 0"],
    );

    let mut tables = sample();
    tables.primary_lists[1].token_id = 0;
    let (_tmp, dir) = written(&tables, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "primary_lists.parquet",
        Some(1),
        &["token_id must be > 0"],
    );

    let mut tables = sample();
    tables.lists[0].token_id = 0;
    let (_tmp, dir) = written(&tables, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "lists.parquet",
        Some(0),
        &["token_id must be > 0"],
    );
}

#[test]
fn int64_token_id_accepted() {
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![1i64, 2, 3]));
    let (_tmp, dir) = sample_with_column("lists", "token_id", ids);
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![1i64, 1, 1, 2, 2]));
    put(
        &dir,
        "list_ops",
        &with_column(&table_batch("list_ops", &sample()), "token_id", ids),
    );
    assert_tables_eq(&read_snapshot(&dir).unwrap().tables, &sample());
}

#[test]
fn negative_int64_token_id() {
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![1i64, -2, 3]));
    let (_tmp, dir) = sample_with_column("lists", "token_id", ids);
    assert_err(
        &read_err(&dir),
        "lists.parquet",
        Some(1),
        &["negative value -2 in column `token_id`"],
    );
}

#[test]
fn malformed_ops() {
    let follow = sample().list_ops[0].op.encode();
    let tag = sample().list_ops[1].op.encode();
    let mut version = follow.clone();
    version[0] = 2;
    let mut opcode = follow.clone();
    opcode[1] = 5;
    let mut record_type = follow.clone();
    record_type[3] = 2;
    let mut long_follow = follow.clone();
    long_follow.push(b'x');
    let mut tag_without_tag = follow.clone();
    tag_without_tag[1] = OP_TAG;
    let mut bad_utf8 = tag.clone();
    bad_utf8.extend_from_slice(&[0xff, 0xfe]);
    let cases: Vec<(Vec<u8>, &[&str])> = vec![
        (version, &["malformed op", "version 2"]),
        (opcode, &["malformed op", "unknown opcode 5"]),
        (record_type, &["malformed op", "record version/type"]),
        (long_follow, &["malformed op", "25 bytes", "exactly 24"]),
        (tag_without_tag, &["malformed op", "no tag"]),
        (follow[..23].to_vec(), &["malformed op", "23 bytes"]),
        (Vec::new(), &["malformed op", "0 bytes"]),
        (bad_utf8, &["malformed op", "UTF-8"]),
    ];
    for (bytes, needles) in cases {
        let (_tmp, dir) = sample_with_column("list_ops", "op", ops_with(3, bytes));
        assert_err(&read_err(&dir), "list_ops.parquet", Some(3), needles);
    }
}

#[test]
fn large_and_view_types_accepted() {
    let (_tmp, dir) = sample_dir();
    let t = sample();
    let users: Vec<String> = t.lists.iter().map(|r| format_address(&r.user)).collect();
    let batch = with_column(
        &table_batch("lists", &t),
        "user",
        Arc::new(LargeStringArray::from_iter_values(&users)),
    );
    let batch = with_column(
        &batch,
        "owner",
        Arc::new(StringViewArray::from_iter_values(
            t.lists.iter().map(|r| format_address(&r.owner)),
        )),
    );
    put(&dir, "lists", &batch);
    let ops = Arc::new(LargeBinaryArray::from_iter_values(sample_ops_bytes()));
    put(
        &dir,
        "list_ops",
        &with_column(&table_batch("list_ops", &t), "op", ops),
    );
    assert_tables_eq(&read_snapshot(&dir).unwrap().tables, &t);
}

#[test]
fn tag_length() {
    let mut tables = sample();
    tables.list_record_tags[2].tag = "x".repeat(256);
    let (_tmp, dir) = written(&tables, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "list_record_tags.parquet",
        Some(2),
        &["tag is 256 bytes", "255"],
    );

    let mut tables = sample();
    tables.list_record_tags[1].tag = String::new();
    let (_tmp, dir) = written(&tables, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "list_record_tags.parquet",
        Some(1),
        &["tag is empty"],
    );

    // 255 bytes of multi-byte characters is fine.
    let mut tables = sample();
    tables.list_record_tags[1].tag = "é".repeat(127) + "x";
    assert_eq!(tables.list_record_tags[1].tag.len(), 255);
    let (_tmp, dir) = written(&tables, &WriteOptions::default());
    assert_tables_eq(&read_snapshot(&dir).unwrap().tables, &tables);
}

#[test]
fn ens_json_columns_must_be_objects() {
    let cases: [(&str, &str, &[&str]); 12] = [
        (
            "records",
            r#"["a","b"]"#,
            &["`records`", "JSON object", "an array"],
        ),
        ("records", "not json", &["`records`", "not valid JSON"]),
        (
            "chains",
            r#""eth""#,
            &["`chains`", "JSON object", "a string"],
        ),
        ("errors", "null", &["`errors`", "JSON object", "null"]),
        ("errors", r#"{"a":1"#, &["`errors`", "not valid JSON"]),
        (
            "records",
            " \n[{}] ",
            &["`records`", "JSON object", "an array"],
        ),
        ("records", "12", &["`records`", "JSON object", "a number"]),
        ("chains", "true", &["`chains`", "JSON object", "a boolean"]),
        ("records", "", &["`records`", "not valid JSON"]),
        ("records", r#"{"a":1} x"#, &["`records`", "not valid JSON"]),
        ("records", r#"{"a":1}{}"#, &["`records`", "not valid JSON"]),
        ("errors", r#"{"a":"\x"}"#, &["`errors`", "not valid JSON"]),
    ];
    for (col, text, needles) in cases {
        let (_tmp, dir) = sample_with_column("ens", col, strings(&[None, None, Some(text)]));
        assert_err(&read_err(&dir), "ens.parquet", Some(2), needles);
    }
}

#[test]
fn ens_json_is_stored_compact_in_key_order() {
    let pretty = "{\n  \"z\": \"1\",\n  \"a\": {\"nested\": [1, 2]},\n  \"m\": \"\u{1f980}\"\n}";
    let (_tmp, dir) =
        sample_with_column("ens", "records", strings(&[Some(pretty), None, Some("{}")]));
    let snap = read_snapshot(&dir).unwrap();
    assert_eq!(
        snap.tables.ens[0].records.as_deref(),
        Some("{\"z\":\"1\",\"a\":{\"nested\":[1,2]},\"m\":\"\u{1f980}\"}")
    );
    assert_eq!(snap.tables.ens[1].records, None);
    assert_eq!(snap.tables.ens[2].records.as_deref(), Some("{}"));
}

#[test]
fn ens_json_keeps_its_stored_text() {
    // Duplicate keys, number spellings and string escapes survive as
    // stored; only whitespace outside strings is dropped.
    let stored = r#"{"z":1,"n":12345678901234567890123,"f":1.50,"e":1e2,"u":"\u00e9","z":2}"#;
    let spaced = concat!(
        "\t{ \"k\" :\r\n[ 1 , -0.0E+3 ,true,null ] ,",
        r#""s p\" \\":" a\t b \"\\" , "big": 1e400 }"#,
        "\n"
    );
    let deep = format!("{{\"d\": {}1{} }}", "[ ".repeat(300), " ]".repeat(300));
    let (_tmp, dir) = sample_dir();
    let t = sample();
    let batch = with_column(
        &table_batch("ens", &t),
        "records",
        strings(&[Some(stored), Some(spaced), Some(&deep)]),
    );
    let batch = with_column(&batch, "chains", strings(&[None, Some(" { } "), None]));
    let batch = with_column(&batch, "errors", strings(&[None, None, Some(stored)]));
    put(&dir, "ens", &batch);
    let ens = read_snapshot(&dir).unwrap().tables.ens;
    assert_eq!(ens[0].records.as_deref(), Some(stored));
    assert_eq!(
        ens[1].records.as_deref(),
        Some(r#"{"k":[1,-0.0E+3,true,null],"s p\" \\":" a\t b \"\\","big":1e400}"#)
    );
    assert_eq!(
        ens[2].records.as_deref(),
        Some(format!("{{\"d\":{}1{}}}", "[".repeat(300), "]".repeat(300)).as_str())
    );
    assert_eq!(ens[1].chains.as_deref(), Some("{}"));
    assert_eq!(ens[2].errors.as_deref(), Some(stored));
}

// ---------------------------------------------------------------------------
// Timestamps and extra columns

#[test]
fn finer_timestamps_are_floored_to_ms() {
    let micros: ArrayRef = Arc::new(
        TimestampMicrosecondArray::from(vec![T0 * 1000 + 999, -1, 1, 0, 5_000, -1_001])
            .with_timezone("UTC"),
    );
    let (_tmp, dir) = sample_with_column("list_records", "updated_at", micros);
    let got: Vec<i64> = read_snapshot(&dir)
        .unwrap()
        .tables
        .list_records
        .iter()
        .map(|r| r.updated_at)
        .collect();
    assert_eq!(got, vec![T0, -1, 0, 0, 5, -2]);

    let nanos: ArrayRef = Arc::new(
        TimestampNanosecondArray::from(vec![T0 * 1_000_000 + 999_999, -1, 1_999_999, 0])
            .with_timezone("+00:00"),
    );
    let (_tmp, dir) = sample_with_column("list_record_tags", "updated_at", nanos);
    let got: Vec<i64> = read_snapshot(&dir)
        .unwrap()
        .tables
        .list_record_tags
        .iter()
        .map(|r| r.updated_at)
        .collect();
    assert_eq!(got, vec![T0, -1, 1, 0]);
}

#[test]
fn extra_columns_are_ignored() {
    let (_tmp, dir) = sample_dir();
    let t = sample();
    let batch = table_batch("list_records", &t);
    let batch = with_column(
        &batch,
        "extra_text",
        strings(&[None, Some("x"), None, None, None, None]),
    );
    let batch = with_column(
        &batch,
        "extra_num",
        Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5, 6])),
    );
    // Columns in another order than the writer's.
    let order = [
        "extra_num",
        "updated_at",
        "address",
        "extra_text",
        "token_id",
    ];
    let schema = batch.schema();
    let idx: Vec<usize> = order.iter().map(|n| schema.index_of(n).unwrap()).collect();
    put(&dir, "list_records", &batch.project(&idx).unwrap());
    assert_tables_eq(&read_snapshot(&dir).unwrap().tables, &t);
}

// ---------------------------------------------------------------------------
// Uniqueness

#[test]
fn duplicate_list_token_id() {
    let mut t = sample();
    t.lists[2].token_id = 1;
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "lists.parquet",
        Some(2),
        &["duplicate token_id 1", "first at row 0"],
    );
}

#[test]
fn duplicate_primary_list_address_in_other_case() {
    let (_tmp, dir) = sample_dir();
    let upper = format!("0x{}", "CD".repeat(20));
    let addresses = strings(&[Some(&addr_text(0xcd)), Some(&addr_text(2)), Some(&upper)]);
    put(
        &dir,
        "primary_lists",
        &with_column(
            &table_batch("primary_lists", &sample()),
            "address",
            addresses,
        ),
    );
    assert_err(
        &read_err(&dir),
        "primary_lists.parquet",
        Some(2),
        &["duplicate address", &addr_text(0xcd), "first at row 0"],
    );
}

#[test]
fn duplicate_list_record() {
    let mut t = sample();
    t.list_records[5] = RecordRow {
        token_id: 2,
        address: addr(1),
        updated_at: T0 + 9,
    };
    let (_tmp, dir) = written(
        &t,
        &WriteOptions {
            row_group_rows: 2,
            checksums: true,
        },
    );
    let e = read_err(&dir);
    assert_err(
        &e,
        "list_records.parquet",
        Some(5),
        &[
            "duplicate (token_id, address)",
            &format!("(2, {})", addr_text(1)),
            "first at row 2",
        ],
    );
}

#[test]
fn duplicate_reports_the_earliest_repeat() {
    let mut t = sample();
    t.list_records = (0..50u64)
        .map(|i| RecordRow {
            token_id: 1 + i,
            address: addr(1),
            updated_at: 0,
        })
        .collect();
    t.list_records[40].token_id = 5; // repeats row 4
    t.list_records[30].token_id = 20; // repeats row 19
    t.list_records[45].token_id = 20; // repeats row 19 again
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "list_records.parquet",
        Some(30),
        &["first at row 19"],
    );
}

#[test]
fn duplicate_list_record_tag() {
    let mut t = sample();
    t.list_record_tags.push(TagRow {
        token_id: 1,
        address: addr(2),
        tag: "🦀 café".into(),
        updated_at: 1,
    });
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "list_record_tags.parquet",
        Some(4),
        &[
            "duplicate (token_id, address, tag)",
            "🦀 café",
            "first at row 1",
        ],
    );
    // Tags are case-sensitive: "top8" and "Top8" on one record are distinct.
    let mut t = sample();
    t.list_record_tags[2].address = addr(2);
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    read_snapshot(&dir).unwrap();
}

#[test]
fn duplicate_op_seq() {
    let mut t = sample();
    t.list_ops[4].seq = 11;
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "list_ops.parquet",
        Some(4),
        &["duplicate seq 11", "first at row 1"],
    );
    // Unordered but unique seqs are fine.
    let mut t = sample();
    t.list_ops.reverse();
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_tables_eq(&read_snapshot(&dir).unwrap().tables, &t);
}

#[test]
fn duplicate_ens_address() {
    let mut t = sample();
    t.ens[2].address = addr(1);
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "ens.parquet",
        Some(2),
        &["duplicate address", &addr_text(1), "first at row 0"],
    );
}

#[test]
fn duplicate_ens_name_differing_in_case() {
    let mut t = sample();
    t.ens.push(EnsRow {
        address: addr(7),
        name: "élodie.ETH".into(),
        ..EnsRow::default()
    });
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "ens.parquet",
        Some(3),
        &[
            "duplicate name \"élodie.ETH\"",
            "case-insensitively",
            "first at row 2",
            "ÉLODIE.eth",
        ],
    );
}

#[test]
fn duplicate_badge_event_id_and_position() {
    let mut t = sample();
    t.badge_events[2].event_id = 169_216;
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "badge_events.parquet",
        Some(2),
        &["duplicate event_id 169216", "first at row 1"],
    );

    let mut t = sample();
    t.badge_events[2].position = 0;
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "badge_events.parquet",
        Some(2),
        &["duplicate position 0", "first at row 0"],
    );
}

#[test]
fn duplicate_badge() {
    let mut t = sample();
    t.badges[2].address = addr(1);
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "badges.parquet",
        Some(2),
        &["duplicate (address, event_id)", "177709", "first at row 0"],
    );
}

#[test]
fn badge_with_unknown_event() {
    let mut t = sample();
    t.badges[1].event_id = 42;
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_err(
        &read_err(&dir),
        "badges.parquet",
        Some(1),
        &["event_id 42", "not in badge_events"],
    );
}

#[test]
fn first_error_in_table_order_wins() {
    let mut t = sample();
    t.badges[1].event_id = 42;
    t.lists[1].token_id = 0;
    t.list_ops[0].seq = 20;
    let (_tmp, dir) = written(&t, &WriteOptions::default());
    assert_err(&read_err(&dir), "lists.parquet", Some(1), &["token_id"]);
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

// ---------------------------------------------------------------------------
// Scale (run by hand: cargo test --release --lib snapshot::tests::big -- --ignored --nocapture)

#[test]
#[ignore]
fn big_snapshot_load_time() {
    let n_lists = 200_000u64;
    let mut t = Tables::default();
    let a = |i: u64| -> Address {
        let mut out = [0u8; 20];
        out[..8].copy_from_slice(&i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
        out[8..16].copy_from_slice(&i.to_be_bytes());
        out
    };
    t.lists = (1..=n_lists)
        .map(|i| ListRow {
            token_id: i,
            user: a(i),
            owner: a(i),
            manager: a(i),
        })
        .collect();
    t.primary_lists = (1..=n_lists)
        .map(|i| PrimaryListRow {
            address: a(i),
            token_id: i,
        })
        .collect();
    t.list_records = (0..20_000_000u64)
        .map(|i| RecordRow {
            token_id: 1 + i % n_lists,
            address: a(i / n_lists + 7_000_000),
            updated_at: T0 + i as i64,
        })
        .collect();
    t.list_record_tags = (0..1_000_000u64)
        .map(|i| TagRow {
            token_id: 1 + i % n_lists,
            address: a(i / n_lists),
            tag: "top8".into(),
            updated_at: T0,
        })
        .collect();
    t.list_ops = (0..30_000_000u64)
        .map(|i| op_row(1 + i % n_lists, i, 1 + (i % 2) as u8, a(i), ""))
        .collect();
    // BIG_SNAPSHOT_DIR keeps the written snapshot between runs.
    let tmp = tempfile::tempdir().unwrap();
    let dir =
        std::env::var_os("BIG_SNAPSHOT_DIR").map_or_else(|| tmp.path().join("big"), PathBuf::from);
    if !dir.join("manifest.json").is_file() {
        let start = std::time::Instant::now();
        write_snapshot(&dir, CREATED, &t, &WriteOptions::default()).unwrap();
        eprintln!("write: {:?}", start.elapsed());
    }
    for _ in 0..2 {
        let cpu = || -> f64 {
            let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
            let f: Vec<&str> = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect();
            f.get(11..13).map_or(0.0, |v| {
                v.iter()
                    .map(|x| x.parse::<f64>().unwrap_or(0.0))
                    .sum::<f64>()
                    / 100.0
            })
        };
        let (start, cpu0) = (std::time::Instant::now(), cpu());
        let snap = read_snapshot(&dir).unwrap();
        eprintln!("read: {:?} wall, {:.2}s cpu", start.elapsed(), cpu() - cpu0);
        assert_eq!(snap.tables.list_ops.len(), t.list_ops.len());
    }
}

// ---------------------------------------------------------------------------
// The duplicate finder itself

/// The naive answer: the earliest row equal to some earlier row.
fn naive_first_duplicate(keys: &[u64]) -> Option<(usize, usize)> {
    (1..keys.len()).find_map(|j| (0..j).find(|&i| keys[i] == keys[j]).map(|i| (i, j)))
}

#[test]
fn first_duplicate_matches_the_naive_answer() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for n in [0usize, 1, 2, 3, 10, 100, 2049, 5000, 20_000] {
        for range in [n as u64 * 50 + 1, n as u64 + 1, 3] {
            let keys: Vec<u64> = (0..n).map(|_| rand() % range).collect();
            let want = naive_first_duplicate(&keys);
            // A good hash, a hash that collides a lot, and a constant one.
            let good = read::first_duplicate(
                &keys,
                |k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                |a, b| a == b,
            );
            let weak = read::first_duplicate(&keys, |k| (k % 7) << 61 | (k % 5), |a, b| a == b);
            assert_eq!(good, want, "n {n} range {range}");
            assert_eq!(weak, want, "n {n} range {range}");
            if n <= 5000 {
                assert_eq!(read::first_duplicate(&keys, |_| 42, |a, b| a == b), want);
            }
        }
    }
}
