//! `followgraph export` against a real PostgreSQL started by the test
//! (`pg.rs`): mapping and skip rules with rows written out by hand, both
//! BYTEA encodings, consistency under a concurrent writer, SIGKILL,
//! `--keep`, `--every` across a database restart, bad credentials, bad
//! `--query` files, and the round trip generate -> database -> export ->
//! serve, byte-identical to the generated Parquet snapshot.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use followgraph::snapshot::{
    parse_address, Address, EnsRow, ListRow, Op, OpRow, PrimaryListRow, RecordRow, Tables, TagRow,
};

use crate::pg::Postgres;
use crate::support::{followgraph_command, run_to_exit, Rng};

const SCHEMA: &str = include_str!("../indexer/schema.sql");
const EXPORT_TIMEOUT: Duration = Duration::from_secs(120);

const A: &str = "1111111111111111111111111111111111111111";
const B: &str = "2222222222222222222222222222222222222222";
const C: &str = "3333333333333333333333333333333333333333";
const D: &str = "4444444444444444444444444444444444444444";
const E: &str = "5555555555555555555555555555555555555555";
const F: &str = "abcdefabcdefabcdefabcdefabcdefabcdefabcd";
const Z: &str = "0000000000000000000000000000000000000000";
const NFT: &str = "0x0e688f5dca4a0a4729946acbc44c792341714e08";
const LR: &str = "0x41aa48ef3c0446b46a5b1cc6337ff3d3716e2a33";
const AM: &str = "0x5289fe5dabc021d02fddf23d4a4df96f4e0f17ef";

fn a(hex40: &str) -> Address {
    parse_address(&format!("0x{hex40}")).expect("address")
}

fn ms(iso: &str) -> i64 {
    followgraph::time::parse_iso_ms(iso).expect("ISO time")
}

fn slot(n: u8) -> String {
    format!("{n:02x}").repeat(32)
}

fn uint256(n: u64) -> String {
    format!("0x{n:064x}")
}

fn export_args(url: &str, out: &Path, extra: &[&str]) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "export".into(),
        "--database-url".into(),
        url.into(),
        "--out".into(),
        out.as_os_str().to_owned(),
    ];
    args.extend(extra.iter().map(OsString::from));
    args
}

/// Runs `export` to its exit; returns (exit code, stderr).
fn export(url: &str, out: &Path, extra: &[&str]) -> (i32, String) {
    let (status, _, stderr) = run_to_exit(&export_args(url, out, extra), &[], EXPORT_TIMEOUT);
    let status = status.unwrap_or_else(|| panic!("export did not finish; stderr:\n{stderr}"));
    (status.code().unwrap_or(-1), stderr)
}

fn export_ok(url: &str, out: &Path, extra: &[&str]) -> String {
    let (code, stderr) = export(url, out, extra);
    assert_eq!(code, 0, "export failed; stderr:\n{stderr}");
    stderr
}

fn current(root: &Path) -> Option<String> {
    std::fs::read_to_string(root.join("CURRENT"))
        .ok()
        .map(|s| s.trim().to_owned())
}

/// The snapshot CURRENT names, loaded by the server's loader.
fn loaded(root: &Path) -> Tables {
    followgraph::snapshot::load(root)
        .unwrap_or_else(|e| panic!("exported snapshot rejected: {e}"))
        .tables
}

fn export_json(root: &Path) -> serde_json::Value {
    let dir = root.join(current(root).expect("CURRENT"));
    serde_json::from_slice(&std::fs::read(dir.join("export.json")).expect("export.json"))
        .expect("export.json is JSON")
}

/// (source, reason) -> count from `export.json`.
fn skipped(root: &Path) -> BTreeMap<(String, String), u64> {
    export_json(root)["skipped"]
        .as_array()
        .expect("skipped array")
        .iter()
        .map(|s| {
            (
                (
                    s["source"].as_str().unwrap().to_owned(),
                    s["reason"].as_str().unwrap().to_owned(),
                ),
                s["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Directory names under `root` (dot entries excluded).
fn snapshot_dirs(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn sorted<T: Ord + Clone>(v: &[T]) -> Vec<T> {
    let mut v = v.to_vec();
    v.sort();
    v
}

fn indexer(pg: &Postgres) {
    pg.execute(SCHEMA);
}

// ---------------------------------------------------------------------------
// The hand-made indexer database

/// Rows exercising every mapping and skip rule. `enc(hex)` is the SQL for a
/// BYTEA value given as hex: raw bytes, or the ASCII text `0x...` that
/// some deployments store.
fn fixture_sql(ascii_bytea: bool) -> String {
    let enc = |hex: &str| {
        if ascii_bytea {
            format!("convert_to('0x{hex}', 'UTF8')")
        } else {
            format!("decode('{hex}', 'hex')")
        }
    };
    let rec = |addr: &str| enc(&format!("0101{addr}"));
    let lr_upper = LR.to_uppercase().replacen("0X", "0x", 1);
    let op = |code: u8, addr: &str, tag: &str| format!("0x01{code:02x}0101{addr}{tag}");
    let event =
        |chain: u64, block: u64, tx: u64, log: u64, name: &str, slot: &str, op: &str, at: &str| {
            format!(
                "({chain}, {block}, {tx}, {log}, '{LR}', '{name}', \
             jsonb_build_object('slot', '{slot}', 'op', '{op}'), '{at}')"
            )
        };
    let s = |n: u8| format!("0x{}", slot(n));
    format!(
        r#"
INSERT INTO efp_lists (nft_chain_id, nft_contract_address, token_id, owner, manager, "user",
    list_storage_location_chain_id, list_storage_location_contract_address, list_storage_location_slot) VALUES
  (8453, '{NFT}', 1, '0x{A}', '0x{A}', '0x{A}', 8453, '{LR}', {s1}),
  (8453, '{NFT}', 2, '0x{B}', '0x{Z}', '0x{Z}', 8453, '{lr_upper}', {s2}),
  (8453, '{NFT}', 3, '0x{C}', '0x{D}', '0x{C}', 8453, '{LR}', {s3}),
  (8453, '{NFT}', 4, '0x{E}', '0x{Z}', '0x{Z}', NULL, NULL, NULL),
  (8453, '{NFT}', 0, '0x{A}', '0x{A}', '0x{A}', 8453, '{LR}', {s5}),
  (42161, '{NFT}', 1, '0x{D}', '0x{D}', '0x{D}', 8453, '{LR}', {s6}),
  (8453, '{NFT}', 7, 'not-an-address', '0x{A}', '0x{A}', 8453, '{LR}', {s7}),
  (8453, '{NFT}', 8, '0x{E}', '0x{E}', '0x{E}', 8453, '{LR}', {s8}),
  (8453, '{NFT}', 9, '0x{B}', '0x{B}', '0x{B}', 8453, '{LR}', {s1}),
  (8453, '{NFT}', 10, '0x{A}', '0x{A}', '0x{A}', 8453, '{LR}', {short_slot});

INSERT INTO efp_list_metadata (chain_id, contract_address, slot, "key", value) VALUES
  (8453, '{LR}', {s2}, 'user', '0x{B}'),
  (8453, '{LR}', {s2}, 'manager', '0x{C}'),
  (8453, '{LR}', {s3}, 'user', '0x{D}'),
  (8453, '{LR}', {s3}, 'location-note', '0xdead'),
  (8453, '{LR}', {s8}, 'user', '0x1234');

INSERT INTO efp_account_metadata (chain_id, contract_address, address, "key", value, updated_at) VALUES
  (8453, '{AM}', '0x{A}', 'primary-list', '{p1}', '2024-01-01Z'),
  (8453, '{AM}', '0x{A}', 'display-name', '0x00', '2024-06-01Z'),
  (8453, '{AM}', '0x{B}', 'primary-list', '{p2}', '2024-03-01Z'),
  (1, '0x9999999999999999999999999999999999999999', '0x{B}', 'primary-list', '{p9}', '2024-01-01Z'),
  (8453, '{AM}', '0x{C}', 'primary-list', '0x01', '2024-05-01Z'),
  (1, '0x9999999999999999999999999999999999999999', '0x{C}', 'primary-list', '{p3}', '2024-01-01Z'),
  (8453, '{AM}', '0x{D}', 'primary-list', '{p_big}', '2024-01-01Z'),
  (8453, '{AM}', '0x{f_upper}', 'primary-list', '{p4}', '2024-01-01Z'),
  (8453, '{AM}', 'not-an-address', 'primary-list', '{p1}', '2024-01-01Z');

INSERT INTO efp_list_records (chain_id, contract_address, slot, record, record_version, record_type, record_data, updated_at) VALUES
  (8453, '{LR}', {s1}, {rec_b}, 1, 1, {data_b}, '2024-02-01T00:00:00.123456Z'),
  (8453, '{LR}', {s1}, {rec_c}, 1, 1, {data_c}, '2024-02-02Z'),
  (8453, '{LR}', {s2}, {rec_a}, 1, 1, {data_a}, '2024-02-03Z'),
  (8453, '{LR}', {s3}, {rec_type2}, 1, 2, {data_a}, '2024-02-04Z'),
  (8453, '{LR}', {s2}, {rec_short}, 1, 1, {data_short}, '2024-02-05Z'),
  (8453, '{LR}', {s6}, {rec_a}, 1, 1, {data_a}, '2024-02-06Z'),
  (8453, '{LR}', {s99}, {rec_a}, 1, 1, {data_a}, '2024-02-07Z');

INSERT INTO efp_list_record_tags (chain_id, contract_address, slot, record, tag, updated_at) VALUES
  (8453, '{LR}', {s1}, {rec_b}, 'top8', '2024-02-10Z'),
  (8453, '{LR}', {s1}, {rec_d}, 'block', '2024-02-11Z'),
  (8453, '{LR}', {s2}, {rec_a}, repeat('é', 128), '2024-02-12Z'),
  (8453, '{LR}', {s2}, {rec_a}, '', '2024-02-13Z'),
  (8453, '{LR}', {s3}, {rec_type2}, 'friend', '2024-02-14Z'),
  (8453, '{LR}', {s99}, {rec_a}, 'friend', '2024-02-15Z');

INSERT INTO events (chain_id, block_number, transaction_index, log_index, contract_address, event_name, event_args, created_at) VALUES
  {e_follow_b},
  {e_tag_friend},
  {e_unfollow_a},
  {e_v2},
  {e_opcode5},
  {e_long},
  {e_no_list},
  {e_transfer},
  {e_bad_slot},
  {e_bad_hex},
  {e_bad_utf8},
  {e_follow_c},
  {e_tag_x};

INSERT INTO ens_metadata (address, name, avatar, display, records, chains, fresh, resolver, errors) VALUES
  ('0x{A}', 'alice.eth', 'https://a/avatar.png', 'Alice.eth',
   '{{"avatar": "https://a/avatar.png", "header": "https://a/h.png"}}', NULL, 300,
   '0x231b0ee14048e9dccd1d247744d114a4eb5e8e63', '{{}}'),
  ('0x{C}', 'ALICE.eth', NULL, NULL, NULL, NULL, 100, NULL, NULL),
  ('0x{B}', 'carol.eth', NULL, NULL, NULL, '{{eth}}', 200, NULL, NULL),
  ('0x{D}', 'dave.eth', NULL, NULL, '[1]', NULL, NULL, NULL, 'oops'),
  ('0x{E}', '', NULL, NULL, NULL, NULL, 50, NULL, NULL),
  ('bad-address', 'x.eth', NULL, NULL, NULL, NULL, 50, NULL, NULL);
"#,
        s1 = enc(&slot(1)),
        s2 = enc(&slot(2)),
        s3 = enc(&slot(3)),
        s5 = enc(&slot(5)),
        s6 = enc(&slot(6)),
        s7 = enc(&slot(7)),
        s8 = enc(&slot(8)),
        s99 = enc(&slot(0x99)),
        short_slot = enc(&"0a".repeat(31)),
        p1 = uint256(1),
        p2 = uint256(2),
        p3 = uint256(3),
        p4 = uint256(4),
        p9 = uint256(9),
        p_big = uint256(1 << 63),
        f_upper = F.to_uppercase(),
        rec_a = rec(A),
        rec_b = rec(B),
        rec_c = rec(C),
        rec_d = rec(D),
        rec_type2 = enc(&format!("0102{A}")),
        rec_short = rec(&A[..38]),
        data_a = enc(A),
        data_b = enc(B),
        data_c = enc(C),
        data_short = enc(&A[..38]),
        e_follow_b = event(
            8453,
            100,
            0,
            0,
            "ListOp",
            &s(1),
            &op(1, B, ""),
            "2024-02-01Z"
        ),
        e_tag_friend = event(
            8453,
            100,
            0,
            1,
            "ListOp",
            &s(2),
            &op(3, A, "667269656e64"),
            "2024-01-15Z"
        ),
        e_unfollow_a = event(
            8453,
            99,
            0,
            0,
            "ListOp",
            &s(2),
            &op(2, A, ""),
            "2024-02-01Z"
        ),
        e_v2 = event(
            8453,
            101,
            0,
            0,
            "ListOp",
            &s(1),
            &op(1, B, "").replacen("0x01", "0x02", 1),
            "2024-02-01Z"
        ),
        e_opcode5 = event(
            8453,
            102,
            0,
            0,
            "ListOp",
            &s(1),
            &op(5, B, ""),
            "2024-02-01Z"
        ),
        e_long = event(
            8453,
            103,
            0,
            0,
            "ListOp",
            &s(1),
            &op(1, B, "00"),
            "2024-02-01Z"
        ),
        e_no_list = event(
            8453,
            104,
            0,
            0,
            "ListOp",
            &s(0x99),
            &op(1, B, ""),
            "2024-02-01Z"
        ),
        e_transfer = event(
            8453,
            105,
            0,
            0,
            "Transfer",
            &s(1),
            &op(1, B, ""),
            "2024-02-01Z"
        ),
        e_bad_slot = event(
            8453,
            106,
            0,
            0,
            "ListOp",
            "0x12",
            &op(1, B, ""),
            "2024-02-01Z"
        ),
        e_bad_hex = event(8453, 107, 0, 0, "ListOp", &s(1), "0xzz", "2024-02-01Z"),
        e_bad_utf8 = event(
            8453,
            108,
            0,
            0,
            "ListOp",
            &s(1),
            &op(3, B, "ff"),
            "2024-02-01Z"
        ),
        e_follow_c = event(
            8453,
            300,
            10,
            0,
            "ListOp",
            &s(3),
            &op(1, C, ""),
            "2024-03-01Z"
        ),
        e_tag_x = event(
            8453,
            300,
            9,
            5,
            "ListOp",
            &s(3),
            &op(3, C, "78"),
            "2024-03-01Z"
        ),
    )
}

fn list(token_id: u64, user: &str, owner: &str, manager: &str) -> ListRow {
    ListRow {
        token_id,
        user: a(user),
        owner: a(owner),
        manager: a(manager),
    }
}

fn record(token_id: u64, addr: &str, at: &str) -> RecordRow {
    RecordRow {
        token_id,
        address: a(addr),
        updated_at: ms(at),
    }
}

fn tag(token_id: u64, addr: &str, tag: &str, at: &str) -> TagRow {
    TagRow {
        token_id,
        address: a(addr),
        tag: tag.to_owned(),
        updated_at: ms(at),
    }
}

fn op_row(token_id: u64, seq: u64, opcode: u8, target: &str, tag: &str, at: &str) -> OpRow {
    OpRow {
        token_id,
        seq,
        op: Op {
            opcode,
            target: a(target),
            tag: tag.to_owned(),
        },
        updated_at: ms(at),
    }
}

/// What the fixture must export, whichever BYTEA encoding it uses.
fn check_fixture_export(root: &Path) {
    let t = loaded(root);
    assert_eq!(
        sorted(&t.lists),
        vec![
            list(1, A, A, A),
            list(2, B, B, C),  // user and manager from list metadata
            list(3, D, C, D),  // metadata user wins over the column
            list(4, Z, E, Z),  // no user at all: the zero address
            list(8, E, E, E),  // malformed metadata value: the column
            list(9, B, B, B),  // shares list 1's storage location
            list(10, A, A, A), // 31-byte slot: exported, no records
        ]
    );
    assert_eq!(
        sorted(&t.primary_lists),
        sorted(&[
            PrimaryListRow {
                address: a(A),
                token_id: 1
            },
            PrimaryListRow {
                address: a(B),
                token_id: 2
            },
            PrimaryListRow {
                address: a(C),
                token_id: 3
            },
            PrimaryListRow {
                address: a(F),
                token_id: 4
            },
        ])
    );
    assert_eq!(
        sorted(&t.list_records),
        vec![
            record(1, B, "2024-02-01T00:00:00.123Z"),
            record(1, C, "2024-02-02T00:00:00.000Z"),
            record(2, A, "2024-02-03T00:00:00.000Z"),
            record(9, B, "2024-02-01T00:00:00.123Z"),
            record(9, C, "2024-02-02T00:00:00.000Z"),
        ]
    );
    assert_eq!(
        sorted(&t.list_record_tags),
        vec![
            tag(1, B, "top8", "2024-02-10T00:00:00.000Z"),
            tag(1, D, "block", "2024-02-11T00:00:00.000Z"),
            tag(9, B, "top8", "2024-02-10T00:00:00.000Z"),
            tag(9, D, "block", "2024-02-11T00:00:00.000Z"),
        ]
    );
    // seq: (created_at, chain_id, block_number, transaction_index,
    // log_index) order, numeric transaction_index (9 before 10); skipped
    // events take no seq; one event at a shared location is one op per list.
    assert_eq!(
        t.list_ops,
        vec![
            op_row(2, 1, 3, A, "friend", "2024-01-15T00:00:00.000Z"),
            op_row(2, 2, 2, A, "", "2024-02-01T00:00:00.000Z"),
            op_row(1, 3, 1, B, "", "2024-02-01T00:00:00.000Z"),
            op_row(9, 4, 1, B, "", "2024-02-01T00:00:00.000Z"),
            op_row(3, 5, 3, C, "x", "2024-03-01T00:00:00.000Z"),
            op_row(3, 6, 1, C, "", "2024-03-01T00:00:00.000Z"),
        ]
    );
    assert_eq!(
        t.ens,
        vec![
            EnsRow {
                address: a(A),
                name: "alice.eth".into(),
                avatar: Some("https://a/avatar.png".into()),
                header: Some("https://a/h.png".into()),
                display: Some("Alice.eth".into()),
                // The loader keeps stored JSON, minus whitespace.
                records: Some(
                    r#"{"avatar":"https://a/avatar.png","header":"https://a/h.png"}"#.into()
                ),
                chains: None,
                fresh: Some(300),
                resolver: Some("0x231b0ee14048e9dccd1d247744d114a4eb5e8e63".into()),
                errors: Some("{}".into()),
            },
            EnsRow {
                address: a(B),
                name: "carol.eth".into(),
                fresh: Some(200),
                ..EnsRow::default()
            },
            EnsRow {
                address: a(D),
                name: "dave.eth".into(),
                ..EnsRow::default()
            },
        ]
    );
    assert!(t.badge_events.is_empty() && t.badges.is_empty());

    let expected: BTreeMap<(String, String), u64> = [
        ("efp_lists", "token_id is not > 0", 1),
        ("efp_lists", "token_id already exported for another NFT chain or contract", 1),
        ("efp_lists", "owner is not a 20-byte address", 1),
        (
            "efp_lists",
            "storage location is not (chain, 20-byte contract, 32-byte slot): list exported without records",
            1,
        ),
        ("efp_list_metadata", "value is not a 20-byte address", 1),
        ("efp_account_metadata", "address is not 20 bytes", 1),
        (
            "efp_account_metadata",
            "primary-list value is not 0x + 64 hex digits of an id in 1..2^63-1",
            2,
        ),
        ("efp_list_records", "no exported list at its storage location", 2),
        ("efp_list_records", "record_data is not a 20-byte address", 1),
        ("efp_list_record_tags", "no exported list at its storage location", 1),
        (
            "efp_list_record_tags",
            "record is not a version-1 type-1 record of a 20-byte address",
            1,
        ),
        ("efp_list_record_tags", "tag is empty or longer than 255 bytes", 2),
        ("events", "no exported list at its storage location", 1),
        ("events", "op of another version", 1),
        ("events", "op with an unknown opcode", 1),
        ("events", "op of the wrong length", 1),
        ("events", "op tag is not UTF-8", 1),
        ("events", "ListOp slot is not 0x + 64 hex digits", 1),
        ("events", "ListOp op is not 0x + hex", 1),
        ("ens_metadata", "address is not 20 bytes", 1),
        ("ens_metadata", "empty name", 1),
        ("ens_metadata", "name already held by a newer row (case-insensitively)", 1),
        ("ens_metadata", "records is not a JSON object: exported as null", 1),
        ("ens_metadata", "errors is not a JSON object: exported as null", 1),
    ]
    .into_iter()
    .map(|(s, r, n)| ((s.to_owned(), r.to_owned()), n))
    .collect();
    assert_eq!(skipped(root), expected);
    let json = export_json(root);
    assert_eq!(json["rows"]["lists"], 7);
    assert_eq!(json["rows"]["list_ops"], 6);
    assert_eq!(json["created_at"].as_str().map(str::len), Some(24));
}

#[test]
fn every_mapping_and_skip_rule_with_raw_bytea() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    let stderr = export_ok(&pg.url(), out.path(), &[]);
    check_fixture_export(out.path());
    // The summary on stderr names each reason with its count and keys.
    assert!(
        stderr.contains("events: op with an unknown opcode: 1 (first: (chain_id, block_number, transaction_index, log_index) = (8453, 102, 0, 0))"),
        "{stderr}"
    );
    assert!(
        stderr.contains("badge_events and badges were written empty"),
        "{stderr}"
    );
}

#[test]
fn every_mapping_and_skip_rule_with_hex_text_bytea() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(true));
    // The fixture really stores text: a slot is 66 bytes, not 32.
    assert_eq!(
        pg.query_one("SELECT max(length(slot)) FROM efp_list_records"),
        "66"
    );
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &[]);
    check_fixture_export(out.path());
}

#[test]
fn publishes_atomically_with_manifest_checksums_and_export_json() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &["--name", "first"]);
    assert_eq!(current(out.path()).as_deref(), Some("first"));
    let dir = out.path().join("first");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["format"], "graph-snapshot/1");
    for (table, entry) in manifest["tables"].as_object().unwrap() {
        let sha = entry["sha256"]
            .as_str()
            .unwrap_or_else(|| panic!("{table} has no sha256"));
        assert_eq!(sha.len(), 64);
    }
    assert_eq!(
        manifest["created_at"],
        export_json(out.path())["created_at"]
    );
    // No temporary directory is left, and an existing name is refused.
    assert_eq!(snapshot_dirs(out.path()), vec!["first".to_owned()]);
    let (code, stderr) = export(&pg.url(), out.path(), &["--name", "first"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("already exists"), "{stderr}");
    // Default names are snap-<UTC time>.
    export_ok(&pg.url(), out.path(), &[]);
    let name = current(out.path()).unwrap();
    assert!(name.starts_with("snap-2") && name.ends_with('Z'), "{name}");
}

#[test]
fn a_snapshot_the_server_would_reject_is_never_published() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &["--name", "good"]);
    // Two rows at one storage location whose contracts differ only in case
    // are distinct to the database but the same record to the snapshot:
    // the exporter writes both, and the server's loader rejects the file.
    pg.execute(&format!(
        "INSERT INTO efp_list_records VALUES (8453, '{}', decode('{}', 'hex'), \
         decode('0101{B}', 'hex'), 1, 1, decode('{B}', 'hex'), now(), now())",
        LR.to_uppercase().replacen("0X", "0x", 1),
        slot(1)
    ));
    let (code, stderr) = export(&pg.url(), out.path(), &["--name", "bad"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("the server's loader rejects the export: list_records.parquet row"),
        "{stderr}"
    );
    assert!(stderr.contains("duplicate (token_id, address)"), "{stderr}");
    assert_eq!(current(out.path()).as_deref(), Some("good"));
    assert_eq!(snapshot_dirs(out.path()), vec!["good".to_owned()]);
}

/// Waits until the database shows a statement of the exporter matching
/// `like` running (the export is mid-way, inside its transaction).
fn wait_for_statement(pg: &Postgres, like: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let sql = format!(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'followgraph-export' \
         AND state = 'active' AND query LIKE '{like}'"
    );
    while pg.query_one(&sql) == "0" {
        assert!(Instant::now() < deadline, "the export never ran {like}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn spawn_export(url: &str, out: &Path, extra: &[&str], log: &Path) -> Child {
    followgraph_command(&export_args(url, out, extra), &[])
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(log).unwrap()))
        .spawn()
        .expect("spawn export")
}

fn wait_exit(child: &mut Child, timeout: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the export did not exit within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A `lists` query that sleeps first: the export holds its transaction
/// open, before any record is read, for as long as the test needs.
fn slow_lists_query(dir: &Path, seconds: u32) -> PathBuf {
    let path = dir.join("slow_lists.sql");
    std::fs::write(
        &path,
        format!(
            "SELECT token_id, \"user\"::text AS \"user\", owner::text AS owner, \
             manager::text AS manager FROM efp_lists, pg_sleep({seconds}) \
             WHERE token_id > 0 AND nft_chain_id = 8453"
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_record_its_tag_and_op_committed_during_the_export_are_all_or_none() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let query = slow_lists_query(work.path(), 3);
    let q = format!("lists={}", query.display());
    // Without the override the lists table would hold token 7's bad owner;
    // the override filters nothing else, so skip counts don't matter here.
    let log = work.path().join("export.log");
    let mut child = spawn_export(
        &pg.url(),
        out.path(),
        &["--query", &q, "--name", "during"],
        &log,
    );
    wait_for_statement(&pg, "%pg_sleep%");
    // The writer: a record and its tag in one transaction, committed while
    // the export sleeps inside its transaction, before it reads either.
    pg.execute(&format!(
        "BEGIN; \
         INSERT INTO efp_list_records VALUES (8453, '{LR}', decode('{s1}', 'hex'), \
           decode('0101{E}', 'hex'), 1, 1, decode('{E}', 'hex'), now(), now()); \
         INSERT INTO efp_list_record_tags VALUES (8453, '{LR}', decode('{s1}', 'hex'), \
           decode('0101{E}', 'hex'), 'mute', now(), now()); \
         INSERT INTO events (chain_id, block_number, transaction_index, log_index, \
           contract_address, event_name, event_args, created_at) VALUES (8453, 900, 0, 0, \
           '{LR}', 'ListOp', jsonb_build_object('slot', '0x{s1}', 'op', '0x01010101{E}'), now()); \
         COMMIT;",
        s1 = slot(1)
    ));
    let status = wait_exit(&mut child, EXPORT_TIMEOUT);
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(&log).unwrap()
    );
    let during = loaded(out.path());
    let has_e = |t: &Tables| {
        (
            t.list_records.iter().any(|r| r.address == a(E)),
            t.list_record_tags.iter().any(|r| r.address == a(E)),
        )
    };
    assert_eq!(
        has_e(&during),
        (false, false),
        "neither: committed after the export's snapshot"
    );
    // The next export sees both.
    export_ok(&pg.url(), out.path(), &["--name", "after"]);
    assert_eq!(has_e(&loaded(out.path())), (true, true));
}

#[test]
fn an_export_killed_mid_way_changes_nothing_and_the_next_one_succeeds() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &["--name", "before"]);
    let work = tempfile::tempdir().unwrap();
    // ens is read after the list tables: files are half written when it sleeps.
    let slow_ens = work.path().join("slow_ens.sql");
    std::fs::write(
        &slow_ens,
        "SELECT address::text AS address, name, avatar, NULL::text AS header, display, \
         NULL::text AS records, NULL::text AS chains, fresh, resolver::text AS resolver, \
         NULL::text AS errors FROM ens_metadata, pg_sleep(60) WHERE name <> ''",
    )
    .unwrap();
    let q = format!("ens={}", slow_ens.display());
    let log = work.path().join("export.log");
    let mut child = spawn_export(
        &pg.url(),
        out.path(),
        &["--query", &q, "--name", "killed"],
        &log,
    );
    wait_for_statement(&pg, "%pg_sleep%");
    let tmp = out.path().join(".tmp-killed");
    assert!(
        tmp.join("list_ops.parquet").is_file(),
        "mid-way: tables written"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(current(out.path()).as_deref(), Some("before"));
    assert!(!out.path().join("killed").exists());
    assert!(loaded(out.path()).lists.len() == 7);
    // The next export publishes and clears what the killed one left.
    export_ok(&pg.url(), out.path(), &["--name", "next"]);
    assert_eq!(current(out.path()).as_deref(), Some("next"));
    assert!(!tmp.exists(), "the stale temporary directory is removed");
    assert_eq!(
        snapshot_dirs(out.path()),
        vec!["before".to_owned(), "next".to_owned()]
    );
}

#[test]
fn keep_retains_the_newest_snapshots_and_never_the_current_one() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    for name in ["k1", "k2", "k3", "k4"] {
        export_ok(&pg.url(), out.path(), &["--name", name, "--keep", "2"]);
    }
    assert_eq!(
        snapshot_dirs(out.path()),
        vec!["k3".to_owned(), "k4".to_owned()]
    );
    // Newest is by the manifest's created_at: a snapshot of another
    // producer dated in the future outranks the new export, yet the
    // snapshot CURRENT names (the new one) is never deleted.
    followgraph::snapshot::write_snapshot(
        &out.path().join("future"),
        ms("2099-01-01T00:00:00.000Z"),
        &Tables::default(),
        &followgraph::snapshot::WriteOptions::default(),
    )
    .unwrap();
    std::fs::create_dir(out.path().join("notes")).unwrap(); // no manifest: not a snapshot
    export_ok(&pg.url(), out.path(), &["--name", "k5", "--keep", "1"]);
    assert_eq!(
        snapshot_dirs(out.path()),
        vec!["future".to_owned(), "k5".to_owned(), "notes".to_owned()]
    );
    export_ok(&pg.url(), out.path(), &["--name", "k6", "--keep", "0"]);
    assert_eq!(
        snapshot_dirs(out.path()),
        vec!["k6".to_owned(), "notes".to_owned()]
    );
    assert_eq!(current(out.path()).as_deref(), Some("k6"));
}

#[test]
fn every_keeps_exporting_across_a_database_restart_and_stops_on_sigterm() {
    let mut pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    let out = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("export.log");
    let mut child = spawn_export(
        &pg.url(),
        out.path(),
        &["--every", "1", "--keep", "100"],
        &log,
    );
    let wait_for = |what: &str, cond: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !cond() {
            assert!(
                Instant::now() < deadline,
                "{what}; log:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait_for("no first snapshot", &|| current(out.path()).is_some());
    pg.stop();
    let failed = |l: &Path| {
        std::fs::read_to_string(l)
            .unwrap_or_default()
            .contains("round failed")
    };
    wait_for("no failed round while the database is down", &|| {
        failed(&log)
    });
    let during_outage = current(out.path()).unwrap();
    assert!(
        loaded(out.path()).lists.len() == 7,
        "the last good snapshot stays current"
    );
    pg.restart();
    wait_for("no new snapshot after the database came back", &|| {
        current(out.path()).is_some_and(|c| c != during_outage)
    });
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = wait_exit(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(0), "SIGTERM ends --every with status 0");
    assert!(
        !std::fs::read_dir(out.path())
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with(".tmp-")),
        "no temporary directory left"
    );
}

#[test]
fn a_wrong_password_is_a_clear_error_that_never_prints_the_password() {
    let pg = Postgres::start();
    indexer(&pg);
    let out = tempfile::tempdir().unwrap();
    let secret = "hunter2-very-secret";
    let (code, stderr) = export(&pg.url_with_password(secret), out.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("password authentication failed"),
        "{stderr}"
    );
    assert!(stderr.contains("postgres:***@127.0.0.1"), "{stderr}");
    assert!(
        !stderr.contains(secret),
        "the password was printed:\n{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "one line:\n{stderr}");
    assert!(snapshot_dirs(out.path()).is_empty());
    // From the environment too (DATABASE_URL), same rules.
    let (status, _, stderr) = run_to_exit(
        &[
            "export".into(),
            "--out".into(),
            out.path().as_os_str().to_owned(),
        ],
        &[("DATABASE_URL", pg.url_with_password(secret).into())],
        EXPORT_TIMEOUT,
    );
    assert_eq!(status.and_then(|s| s.code()), Some(1));
    assert!(
        stderr.contains("password authentication failed"),
        "{stderr}"
    );
    assert!(!stderr.contains(secret), "{stderr}");
}

#[test]
fn a_bad_query_names_the_table_and_column_and_publishes_nothing() {
    let pg = Postgres::start();
    indexer(&pg);
    pg.execute(&fixture_sql(false));
    pg.execute(include_str!("../indexer/badge_tables.sql"));
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
    pg.execute(include_str!("../indexer/badge_tables.sql"));
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
    let stderr = export_ok(
        &pg.url(),
        out.path(),
        &[
            "--query",
            &format!("badge_events={}", dir.join("badge_events.sql").display()),
            "--query",
            &format!("badges={}", dir.join("badges.sql").display()),
        ],
    );
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

#[test]
fn a_missing_source_table_is_one_line_naming_it() {
    let pg = Postgres::start();
    let out = tempfile::tempdir().unwrap();
    let (code, stderr) = export(&pg.url(), out.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("efp_list_metadata: ERROR: relation \"efp_list_metadata\" does not exist"),
        "{stderr}"
    );
    assert!(snapshot_dirs(out.path()).is_empty());
}

// ---------------------------------------------------------------------------
// Round trip: generate -> database -> export -> serve

fn hex_address(addr: &Address) -> String {
    followgraph::snapshot::format_address(addr)
}

/// Request targets over all seven endpoints and their parameters, drawn
/// from the generated tables (known and unknown accounts, names in any
/// case, tags, every sort, opcode and interval, paging, bad values).
fn draw_requests(t: &Tables, created_at_ms: i64, count: usize) -> Vec<String> {
    let mut d = Rng(42);
    let mut accounts: Vec<String> = Vec::new();
    for l in t.lists.iter().step_by(3) {
        accounts.push(hex_address(&l.user));
    }
    for r in t.list_records.iter().step_by(97) {
        accounts.push(hex_address(&r.address));
    }
    for e in t.ens.iter().step_by(5) {
        accounts.push(e.name.clone());
        accounts.push(e.name.to_uppercase());
    }
    accounts.extend(
        [
            "0x123",
            "nobody.eth",
            "0x9999999999999999999999999999999999999999",
        ]
        .map(String::from),
    );
    // Followed hubs: the accounts with many followers make long pages.
    let mut by_target: BTreeMap<Address, usize> = BTreeMap::new();
    for r in &t.list_records {
        *by_target.entry(r.address).or_default() += 1;
    }
    let mut hubs: Vec<(usize, Address)> = by_target.into_iter().map(|(a, n)| (n, a)).collect();
    hubs.sort_unstable_by(|a, b| b.cmp(a));
    accounts.extend(hubs.iter().take(20).map(|(_, a)| hex_address(a)));
    let mut tokens: Vec<String> = t
        .lists
        .iter()
        .step_by(4)
        .map(|l| l.token_id.to_string())
        .collect();
    tokens.extend(["0", "abc", "99999999", "18446744073709551616"].map(String::from));
    let mut tags: Vec<String> = t
        .list_record_tags
        .iter()
        .step_by(11)
        .map(|r| r.tag.clone())
        .collect();
    tags.extend(["top8", "block", "mute", "nope"].map(String::from));
    let terms: Vec<String> = t
        .ens
        .iter()
        .step_by(7)
        .map(|e| e.name.chars().take(4).collect::<String>())
        .chain(
            t.lists
                .iter()
                .step_by(50)
                .map(|l| hex_address(&l.user)[2..7].to_owned()),
        )
        .chain(["eth", " ", "", "ZZZ"].map(String::from))
        .collect();
    let start_s = created_at_ms / 1000;
    let enc = |s: &str| {
        s.replace('%', "%25")
            .replace(' ', "%20")
            .replace('&', "%26")
            .replace('+', "%2B")
            .replace('#', "%23")
    };
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let mut q: Vec<String> = Vec::new();
        let page = |d: &mut Rng, q: &mut Vec<String>| {
            if d.chance(60) {
                q.push(format!("limit={}", d.pick_item(&[0, 1, 3, 10, 50, 200])));
            }
            if d.chance(40) {
                q.push(format!("offset={}", d.pick_item(&[0, 1, 5, 20, 1000])));
            }
        };
        let path = match d.below(7) {
            0 => format!("/api/v1/lists/{}/details", d.pick_item(&tokens)),
            1 => format!(
                "/api/v1/users/{}/badges",
                enc(d.pick_item(&accounts).as_str())
            ),
            2 => format!("/api/v1/lists/{}/badges", d.pick_item(&tokens)),
            3 => {
                q.push(format!("term={}", enc(d.pick_item(&terms).as_str())));
                page(&mut d, &mut q);
                "/api/v1/leaderboard/search".to_owned()
            }
            4 => {
                if d.chance(70) {
                    q.push(format!("opcode={}", d.below(6)));
                }
                let interval = *d.pick_item(&["hour", "day", "week", "month", "all", "MONTH"]);
                q.push(format!("interval={interval}"));
                if interval != "all" || d.chance(50) {
                    let back =
                        *d.pick_item(&[0i64, 3600, 86_400, 7 * 86_400, 30 * 86_400, 90 * 86_400]);
                    q.push(format!("start={}", start_s - back));
                }
                if d.chance(30) {
                    q.push(format!("tag={}", enc(d.pick_item(&tags).as_str())));
                }
                page(&mut d, &mut q);
                format!(
                    "/api/v1/users/{}/notifications",
                    enc(d.pick_item(&accounts).as_str())
                )
            }
            kind => {
                if d.chance(40) {
                    let n = 1 + d.below(2);
                    let chosen: Vec<String> =
                        (0..n).map(|_| enc(d.pick_item(&tags).as_str())).collect();
                    q.push(format!("tags={}", chosen.join(",")));
                }
                if d.chance(70) {
                    q.push(format!(
                        "sort={}",
                        d.pick_item(&["latest", "earliest", "followers", "FOLLOWERS", "x"])
                    ));
                }
                page(&mut d, &mut q);
                if kind == 5 {
                    format!(
                        "/api/v1/users/{}/followers",
                        enc(d.pick_item(&accounts).as_str())
                    )
                } else {
                    format!("/api/v1/lists/{}/followers", d.pick_item(&tokens))
                }
            }
        };
        if d.chance(20) {
            q.push("cache=fresh".to_owned());
        }
        out.push(if q.is_empty() {
            path
        } else {
            format!("{path}?{}", q.join("&"))
        });
    }
    out
}

fn assert_same_rows<T: Ord + Clone + std::fmt::Debug>(table: &str, a: &[T], b: &[T]) {
    let (a, b) = (sorted(a), sorted(b));
    if a != b {
        let first = a
            .iter()
            .zip(&b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len()));
        panic!(
            "{table}: generated {} rows, exported {}; first difference at sorted row {first}:\n  generated {:?}\n  exported  {:?}",
            a.len(),
            b.len(),
            a.get(first),
            b.get(first)
        );
    }
}

#[test]
fn round_trip_generate_into_the_database_export_and_serve_byte_identically() {
    const ACCOUNTS: &str = "1500";
    const SEED: &str = "7";
    let pg = Postgres::start();
    let work = tempfile::tempdir().unwrap();
    let root_a = work.path().join("a");
    let root_b = work.path().join("b");
    for target in [
        vec!["--out".into(), root_a.as_os_str().to_owned()],
        vec!["--indexer-database-url".into(), pg.url().into()],
    ] {
        let mut args: Vec<OsString> = vec![
            "generate".into(),
            "--accounts".into(),
            ACCOUNTS.into(),
            "--seed".into(),
            SEED.into(),
        ];
        args.extend(target);
        let (status, _, stderr) = run_to_exit(&args, &[], Duration::from_secs(300));
        assert!(
            status.is_some_and(|s| s.success()),
            "generate failed:\n{stderr}"
        );
    }
    let queries = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/indexer/queries");
    export_ok(
        &pg.url(),
        &root_b,
        &[
            "--query",
            &format!(
                "badge_events={}",
                queries.join("badge_events.sql").display()
            ),
            "--query",
            &format!("badges={}", queries.join("badges.sql").display()),
        ],
    );
    assert!(
        skipped(&root_b).is_empty(),
        "generated rows are all exportable: {:?}",
        skipped(&root_b)
    );

    // Table by table first: a failure names the table and the row.
    let a = followgraph::snapshot::load(&root_a).unwrap();
    let b = followgraph::snapshot::load(&root_b).unwrap();
    let (ta, tb) = (&a.tables, &b.tables);
    assert!(ta.list_ops.len() > 1000 && ta.list_record_tags.len() > 100 && ta.badges.len() > 10);
    assert_same_rows("lists", &ta.lists, &tb.lists);
    assert_same_rows("primary_lists", &ta.primary_lists, &tb.primary_lists);
    assert_same_rows("list_records", &ta.list_records, &tb.list_records);
    assert_same_rows(
        "list_record_tags",
        &ta.list_record_tags,
        &tb.list_record_tags,
    );
    assert_eq!(ta.list_ops, tb.list_ops, "list_ops, in seq order");
    assert_same_rows("ens", &ta.ens, &tb.ens);
    assert_same_rows("badge_events", &ta.badge_events, &tb.badge_events);
    assert_same_rows("badges", &ta.badges, &tb.badges);

    // Then over HTTP: every answer byte-identical, except the leaderboard's
    // timestamps, which are each snapshot's created_at (generate's fixed
    // one; the export's is its transaction time).
    let (created_a, created_b) = (
        followgraph::time::format_iso_ms(a.created_at_ms),
        followgraph::time::format_iso_ms(b.created_at_ms),
    );
    assert_ne!(created_a, created_b);
    let requests = draw_requests(ta, a.created_at_ms, 3000);
    drop((a, b));
    let serve = |root: &Path| {
        crate::support::TestServer::spawn(
            tempfile::tempdir().unwrap(),
            &crate::support::serve_args(root),
            &[],
        )
    };
    let (server_a, server_b) = (serve(&root_a), serve(&root_b));
    let mut conn_a = crate::support::Conn::new(server_a.port);
    let mut conn_b = crate::support::Conn::new(server_b.port);
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    let mut nonempty = 0;
    for target in &requests {
        let ra = conn_a.get(target).unwrap();
        let rb = conn_b.get(target).unwrap();
        let body_a = String::from_utf8(ra.body).unwrap();
        let body_b = String::from_utf8(rb.body)
            .unwrap()
            .replace(&created_b, &created_a);
        assert_eq!((ra.status, &body_a), (rb.status, &body_b), "GET {target}");
        *statuses.entry(ra.status).or_default() += 1;
        if body_a.len() > 200 {
            nonempty += 1;
        }
    }
    // The draw reaches answers with data and the error paths alike.
    assert!(
        statuses[&200] > 1500 && statuses.contains_key(&400) && statuses.contains_key(&404),
        "{statuses:?}"
    );
    assert!(nonempty > 1000, "only {nonempty} answers carried data");
}
