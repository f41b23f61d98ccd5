//! Tables written and read back unchanged, in any row-group layout.

use super::*;

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
