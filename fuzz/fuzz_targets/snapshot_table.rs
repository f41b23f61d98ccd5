//! One snapshot table file of arbitrary bytes, loaded with `read_snapshot`
//! next to seven valid files: must give `Ok` or `Err`, never panic, abort
//! or hang.
//!
//! Input: `[selector][file bytes...]`. `selector % 8` picks the table
//! (`TABLE_NAMES` order) whose file the bytes replace. The manifest entry of
//! that table gets no `sha256`, and its `rows` is the row count the file's
//! own footer claims (0 when the footer does not parse), so that inputs get
//! past the row-count check into schema checks and row decoding; with
//! `selector & 8` it is that count + 1 instead (the mismatch path).
//!
//! The snapshot directory is one per process under /dev/shm (tmpfs) when it
//! exists, else the system temp dir; only the fuzzed file and the manifest
//! are rewritten per input. `read_snapshot` has no in-memory entry point,
//! so every input goes through the file system.
//!
//! Panics: `read_snapshot` deliberately catches panics raised inside the
//! parquet crate (hostile files trigger some) and reports the file as
//! unreadable, so libfuzzer-sys's abort-on-any-panic hook is replaced by
//! one that only records the panic; a panic that escapes `read_snapshot`
//! (a bug in followgraph itself) is printed and aborts as before.
//!
//! `FOLLOWGRAPH_FUZZ_SEEDS=<dir>`: at start-up, also write seed inputs (the
//! writer's own files for every table, in several variants) into `<dir>`.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use arrow_array::{
    ArrayRef, BinaryArray, Int64Array, LargeStringArray, RecordBatch, StringArray,
    TimestampNanosecondArray, TimestampSecondArray, UInt64Array,
};
use arrow_schema::{Field, Schema};
use followgraph::snapshot::{
    read_snapshot, write_batch_file, write_snapshot, BadgeEventRow, BadgeRow, EnsRow, ListRow,
    Manifest, Op, OpRow, PrimaryListRow, RecordRow, Tables, TagRow, WriteOptions, TABLE_NAMES,
};
use libfuzzer_sys::fuzz_target;

const CREATED_AT_MS: i64 = 1_795_176_000_000;

fn a(n: u8) -> [u8; 20] {
    [n; 20]
}

/// A tiny snapshot that has rows in every table and touches every column
/// kind (nulls, JSON objects, all four opcodes, several tags).
fn tiny_tables() -> Tables {
    let t = 1_728_864_000_000;
    let mut tables = Tables::default();
    for (id, user) in [(1u64, 1u8), (2, 2), (3, 3), (4, 1)] {
        tables.lists.push(ListRow {
            token_id: id,
            user: a(user),
            owner: a(user),
            manager: a(9),
        });
    }
    for (who, id) in [(1u8, 1u64), (2, 2), (3, 3), (7, 99)] {
        tables.primary_lists.push(PrimaryListRow {
            address: a(who),
            token_id: id,
        });
    }
    for (id, who, at) in [
        (1u64, 2u8, 0i64),
        (1, 3, 1),
        (2, 1, 2),
        (3, 3, 3),
        (99, 1, 4),
    ] {
        tables.list_records.push(RecordRow {
            token_id: id,
            address: a(who),
            updated_at: t + at,
        });
    }
    for (id, who, tag) in [
        (1u64, 2u8, "top8"),
        (1, 3, "block"),
        (2, 1, "mute"),
        (3, 3, "é"),
    ] {
        tables.list_record_tags.push(TagRow {
            token_id: id,
            address: a(who),
            tag: tag.into(),
            updated_at: t,
        });
    }
    for (seq, (id, opcode, who, tag)) in [
        (1u64, 1u8, 2u8, ""),
        (1, 3, 2, "top8"),
        (2, 1, 1, ""),
        (1, 4, 2, "top8"),
        (1, 2, 3, ""),
    ]
    .into_iter()
    .enumerate()
    {
        tables.list_ops.push(OpRow {
            token_id: id,
            seq: seq as u64 + 1,
            op: Op {
                opcode,
                target: a(who),
                tag: tag.into(),
            },
            updated_at: t + seq as i64,
        });
    }
    tables.ens.push(EnsRow {
        address: a(1),
        name: "alice.eth".into(),
        avatar: Some("https://example.com/a.png".into()),
        header: None,
        display: Some("Alice.eth".into()),
        records: Some(r#"{"com.twitter":"alice","avatar":"x"}"#.into()),
        chains: Some(r#"{"eth":"0x01"}"#.into()),
        fresh: Some(1_726_680_254_493),
        resolver: Some("0x4976fb03c32e5b8cfe2b6ccb31c09ba78ebaba41".into()),
        errors: Some("{}".into()),
    });
    tables.ens.push(EnsRow {
        address: a(2),
        name: "Bob.eth".into(),
        ..Default::default()
    });
    for (id, pos) in [(177709i64, 0i32), (178064, 1)] {
        tables.badge_events.push(BadgeEventRow {
            event_id: id,
            position: pos,
            fancy_id: format!("ev-{id}"),
            name: "An event".into(),
            event_url: "https://example.com".into(),
            image_url: "https://example.com/i.png".into(),
            country: String::new(),
            city: "Lisbon".into(),
            description: "desc".into(),
            year: 2024,
            start_date: "06-Sep-2024".into(),
            end_date: "21-Sep-2024".into(),
            expiry_date: "21-Sep-2025".into(),
        });
    }
    tables.badges.push(BadgeRow {
        address: a(1),
        event_id: 177709,
        token_id: "7189762".into(),
        owner: "0xC9C3A4337a1bba75D0860A1A81f7B990dc607334".into(),
    });
    tables
}

struct Fixture {
    dir: PathBuf,
    manifest: Manifest,
    /// The valid bytes of every table file, in `TABLE_NAMES` order.
    valid: Vec<Vec<u8>>,
    /// The table whose file currently holds fuzzed bytes.
    dirty: Mutex<Option<usize>>,
}

fn work_root() -> PathBuf {
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    base.join(format!("followgraph-fuzz-{}", std::process::id()))
}

/// Removes the directories of earlier fuzzing processes that are gone
/// (libFuzzer ends the process with `exit`, so none cleans up after itself).
fn remove_stale(root: &Path) {
    let Some(parent) = root.parent() else { return };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix("followgraph-fuzz-") {
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

/// The last panic's message and location (see the module comment).
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        // Runs after libfuzzer-sys installed its hook, and replaces it.
        std::panic::set_hook(Box::new(|info| {
            let text = format!("{info}\n{}", std::backtrace::Backtrace::force_capture());
            if let Ok(mut last) = LAST_PANIC.lock() {
                *last = text;
            }
        }));
        let root = work_root();
        remove_stale(&root);
        let _ = std::fs::remove_dir_all(&root);
        let dir = root.join("snap");
        let tables = tiny_tables();
        write_snapshot(&dir, CREATED_AT_MS, &tables, &WriteOptions::default())
            .expect("write the base snapshot");
        let manifest: Manifest =
            serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
        // The base snapshot itself must load.
        read_snapshot(&dir).expect("the base snapshot loads");
        let valid = TABLE_NAMES
            .iter()
            .map(|name| std::fs::read(dir.join(&manifest.tables[*name].file)).unwrap())
            .collect();
        if let Some(seeds) = std::env::var_os("FOLLOWGRAPH_FUZZ_SEEDS") {
            write_seeds(Path::new(&seeds), &root, &tables);
        }
        Fixture {
            dir,
            manifest,
            valid,
            dirty: Mutex::new(None),
        }
    })
}

fn seed(out: &Path, name: String, table: usize, bytes: &[u8]) {
    let mut data = vec![table as u8];
    data.extend_from_slice(bytes);
    std::fs::write(out.join(name), data).expect("write seed");
}

/// The writer's files for every table (one and many row groups), plus
/// hand-built variants with the other accepted column types.
fn write_seeds(out: &Path, root: &Path, tables: &Tables) {
    std::fs::create_dir_all(out).expect("seed dir");
    for (variant, rows) in [
        ("one-group", 1 << 20),
        ("groups-of-1", 1),
        ("groups-of-2", 2),
    ] {
        let dir = root.join(variant);
        let opts = WriteOptions {
            row_group_rows: rows,
            checksums: false,
        };
        write_snapshot(&dir, CREATED_AT_MS, tables, &opts).expect("write seed snapshot");
        for (i, name) in TABLE_NAMES.iter().enumerate() {
            let bytes = std::fs::read(dir.join(format!("{name}.parquet"))).unwrap();
            seed(out, format!("{name}-{variant}"), i, &bytes);
        }
        let empty = root.join(format!("{variant}-empty"));
        write_snapshot(&empty, CREATED_AT_MS, &Tables::default(), &opts)
            .expect("write empty seed snapshot");
        let bytes = std::fs::read(empty.join("list_records.parquet")).unwrap();
        seed(out, format!("list_records-{variant}-empty"), 2, &bytes);
    }
    // list_records with Int64 token ids, second/nanosecond timestamps,
    // LargeUtf8 addresses and a null; list_ops with Int64 seq.
    let utc = Some(Arc::<str>::from("UTC"));
    let addr = "0x0101010101010101010101010101010101010101";
    let variants: Vec<(&str, usize, RecordBatch)> = vec![
        (
            "list_records-int64-seconds",
            2,
            batch(vec![
                ("token_id", Arc::new(Int64Array::from(vec![1, 2, -3]))),
                ("address", Arc::new(StringArray::from(vec![addr; 3]))),
                (
                    "updated_at",
                    Arc::new(
                        TimestampSecondArray::from(vec![0, i64::MAX, -1])
                            .with_timezone_opt(utc.clone()),
                    ),
                ),
            ]),
        ),
        (
            "list_records-large-nanos-null",
            2,
            batch(vec![
                ("token_id", Arc::new(UInt64Array::from(vec![Some(1), None]))),
                (
                    "address",
                    Arc::new(LargeStringArray::from(vec![addr, "0xAB"])),
                ),
                (
                    "updated_at",
                    Arc::new(
                        TimestampNanosecondArray::from(vec![i64::MIN, 1])
                            .with_timezone_opt(utc.clone()),
                    ),
                ),
            ]),
        ),
        (
            "list_ops-int64-seq-bad-op",
            4,
            batch(vec![
                ("token_id", Arc::new(UInt64Array::from(vec![1, 1]))),
                ("seq", Arc::new(Int64Array::from(vec![2, 2]))),
                (
                    "op",
                    Arc::new(BinaryArray::from(vec![
                        &[1u8, 3, 1, 1][..],
                        &[0xff; 30][..],
                    ])),
                ),
                (
                    "updated_at",
                    Arc::new(
                        TimestampNanosecondArray::from(vec![0, 0]).with_timezone_opt(utc.clone()),
                    ),
                ),
            ]),
        ),
        (
            "list_records-no-timezone",
            2,
            batch(vec![
                ("token_id", Arc::new(UInt64Array::from(vec![1]))),
                ("address", Arc::new(StringArray::from(vec![addr]))),
                (
                    "updated_at",
                    Arc::new(TimestampNanosecondArray::from(vec![0])),
                ),
            ]),
        ),
    ];
    for (name, table, batch) in variants {
        let path = root.join(format!("{name}.parquet"));
        write_batch_file(&path, &batch).expect("write variant");
        seed(out, name.to_owned(), table, &std::fs::read(&path).unwrap());
    }
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, array)| Field::new(*name, array.data_type().clone(), true))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).expect("valid batch")
}

/// The row count the file's footer claims, if it parses.
fn footer_rows(bytes: &[u8]) -> Option<u64> {
    let meta = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&bytes::Bytes::copy_from_slice(bytes))
        .ok()?;
    u64::try_from(meta.file_metadata().num_rows()).ok()
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, file_bytes)) = data.split_first() else {
        return;
    };
    let fx = fixture();
    let table = usize::from(selector % 8);
    let name = TABLE_NAMES[table];
    let mut dirty = fx.dirty.lock().unwrap();
    if let Some(prev) = *dirty {
        if prev != table {
            let file = &fx.manifest.tables[TABLE_NAMES[prev]].file;
            std::fs::write(fx.dir.join(file), &fx.valid[prev]).unwrap();
        }
    }
    *dirty = Some(table);
    let mut manifest = fx.manifest.clone();
    let entry = manifest.tables.get_mut(name).unwrap();
    entry.sha256 = None;
    entry.rows = footer_rows(file_bytes).unwrap_or(0);
    if selector & 8 != 0 {
        entry.rows = entry.rows.wrapping_add(1);
    }
    std::fs::write(fx.dir.join(&entry.file), file_bytes).unwrap();
    std::fs::write(
        fx.dir.join("manifest.json"),
        serde_json::to_vec(&manifest).unwrap(),
    )
    .unwrap();
    // Ok or Err are both fine; a panic, abort or hang is the bug.
    let loaded = std::panic::catch_unwind(|| read_snapshot(&fx.dir).map(drop));
    if loaded.is_err() {
        let last = LAST_PANIC.lock().map(|l| l.clone()).unwrap_or_default();
        eprintln!("read_snapshot panicked: {last}");
        std::process::abort();
    }
});
