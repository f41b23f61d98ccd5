//! Loader tests: round trips through `write_snapshot` / `read_snapshot`,
//! one test per validation rule, and `resolve_snapshot_dir`; this module
//! holds the sample snapshot and the helpers that break it one way at a
//! time.

mod columns;
mod files;
mod kinds;
mod manifest;
mod recommended;
mod round_trip;
mod scale;
mod uniqueness;

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
        recommended: vec![
            RecommendedRow {
                position: 2,
                address: addr(2),
                name: "bob.eth".into(),
                avatar: Some("https://euc.li/bob.eth".into()),
                header: None,
                class: Some("A".into()),
                created_at: Some(T0),
            },
            RecommendedRow {
                position: -1,
                address: addr(0xee),
                name: "\"<x>\" & y".into(),
                avatar: None,
                header: Some("https://h.example/e".into()),
                class: None,
                created_at: None,
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
    faster_hex::hex_string(&Sha256::digest(bytes))
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
