//! The finer rules of docs/export.md, each on a small database of its own,
//! with the rows it must export and the skips it counts (or must not) written
//! out by hand.

use std::collections::BTreeMap;

use followgraph::snapshot::EnsRow;

use crate::pg::Postgres;

use super::mapping::{op_row, record, tag};
use super::{
    a, bytea, export_ok, indexer, loaded, skip_examples, skipped, slot, sorted, A, B, F, LR, NFT,
};

const LISTS: &str = "INSERT INTO efp_lists (nft_chain_id, nft_contract_address, token_id, \
    owner, manager, \"user\", list_storage_location_chain_id, \
    list_storage_location_contract_address, list_storage_location_slot) VALUES";
const RECORDS: &str = "INSERT INTO efp_list_records (chain_id, contract_address, slot, record, \
    record_version, record_type, record_data, updated_at) VALUES";
const TAGS: &str = "INSERT INTO efp_list_record_tags (chain_id, contract_address, slot, record, \
    tag, updated_at) VALUES";
const EVENTS: &str = "INSERT INTO events (chain_id, block_number, transaction_index, log_index, \
    contract_address, event_name, event_args, created_at) VALUES";

/// An `efp_lists` row: list `token_id`, every role `A`, stored at
/// (`chain`, LR, slot `n`).
fn list_at(token_id: u64, chain: u64, n: u8, ascii: bool) -> String {
    format!(
        "(8453, '{NFT}', {token_id}, '0x{A}', '0x{A}', '0x{A}', {chain}, '{LR}', {})",
        bytea(&slot(n), ascii)
    )
}

/// A ListOp event at (`chain`, LR, slot `n`) with op bytes `op` (hex).
fn list_op(chain: u64, block: u64, log: u64, n: u8, op: &str, at: &str) -> String {
    format!(
        "({chain}, {block}, 0, {log}, '{LR}', 'ListOp', \
         jsonb_build_object('slot', '0x{}', 'op', '0x{op}'), '{at}')",
        slot(n)
    )
}

/// Op bytes (hex) of `opcode` on the version-1 type-1 record of `target`.
fn op(opcode: u8, target: &str, tag: &str) -> String {
    let mut hex = format!("01{opcode:02x}0101{target}");
    for b in tag.bytes() {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

fn reasons(entries: &[(&str, &str, u64)]) -> BTreeMap<(String, String), u64> {
    entries
        .iter()
        .map(|(s, r, n)| ((s.to_string(), r.to_string()), *n))
        .collect()
}

const NAME_TAKEN: &str = "name already held by a newer row (case-insensitively)";

#[test]
fn an_ens_name_goes_to_the_newest_row_then_the_freshest_then_the_lowest_address() {
    let pg = Postgres::start();
    indexer(&pg);
    let d = |n: u8| format!("{n:040x}");
    let (d0, d1, d2) = (d(0xd0), d(0xd1), d(0xd2));
    let aa = "aa".repeat(20);
    let bb_upper = "BB".repeat(20);
    let one = d(1);
    pg.execute(&format!(
        "INSERT INTO ens_metadata (address, name, fresh, updated_at) VALUES
         -- the newest updated_at wins, whatever its fresh or address
         ('0x{A}', 'newest.eth', 900, '2024-01-01Z'),
         ('0x{B}', 'NEWEST.eth', 100, '2024-03-01Z'),
         ('0x{F}', 'Newest.ETH', NULL, '2024-02-01Z'),
         -- same updated_at: the greatest fresh, NULL lowest
         ('0x{d0}', 'fresh.eth', 3, '2024-05-01Z'),
         ('0x{d1}', 'FRESH.eth', NULL, '2024-05-01Z'),
         ('0x{d2}', 'Fresh.eth', 5, '2024-05-01Z'),
         -- same updated_at and fresh: the lowest address, by its value
         -- (stored upper case, 0xBB... sorts before 0xaa... as text)
         ('0x{bb_upper}', 'tie.eth', 7, '2024-06-01T00:00:00.123456Z'),
         ('0x{aa}', 'TIE.eth', 7, '2024-06-01T00:00:00.123456Z'),
         ('0x{one}', 'Tie.eth', NULL, '2024-06-01T00:00:00.123456Z');"
    ));
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &[]);
    let ens = |addr: &str, name: &str, fresh: i64| EnsRow {
        address: a(addr),
        name: name.into(),
        fresh: Some(fresh),
        ..EnsRow::default()
    };
    assert_eq!(
        sorted(&loaded(out.path()).ens),
        sorted(&[
            ens(B, "NEWEST.eth", 100),
            ens(&d2, "Fresh.eth", 5),
            ens(&aa, "TIE.eth", 7),
        ])
    );
    assert_eq!(
        skipped(out.path()),
        reasons(&[("ens_metadata", NAME_TAKEN, 6)])
    );
    // The rows are read in precedence order: the first skips are the
    // losers of the newest group, then of the next.
    assert_eq!(
        skip_examples(out.path())[&("ens_metadata".to_owned(), NAME_TAKEN.to_owned())],
        vec![
            format!("address = \"0x{bb_upper}\""),
            format!("address = \"0x{one}\""),
            format!("address = \"0x{d0}\""),
        ]
    );
}

#[test]
fn one_list_op_at_a_shared_storage_location_is_one_op_per_list_in_token_id_order() {
    let pg = Postgres::start();
    indexer(&pg);
    let (jan1, jan2) = ("2024-01-01Z", "2024-01-02Z");
    pg.execute(&format!(
        "{LISTS} {}, {}, {}, {}, {};
         {EVENTS} {}, {}, {}, {}, {};",
        // Lists 30, 5 and 12 share slot 1, inserted out of token order.
        list_at(30, 8453, 1, false),
        list_at(5, 8453, 1, false),
        list_at(12, 8453, 1, false),
        list_at(7, 8453, 2, false),
        list_at(2, 10, 3, false),
        // Inserted out of order: seq follows (created_at, chain_id,
        // block_number, transaction_index, log_index, token_id).
        list_op(8453, 10, 1, 1, &op(2, A, ""), jan2),
        list_op(8453, 10, 0, 2, &op(1, B, ""), jan2),
        list_op(10, 1000, 0, 3, &op(1, B, ""), jan2),
        list_op(8453, 9, 0, 1, &op(3, A, "top8"), jan2),
        list_op(8453, 50, 0, 1, &op(1, A, ""), jan1),
    ));
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &[]);
    let (t1, t2) = ("2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z");
    assert_eq!(
        loaded(out.path()).list_ops,
        vec![
            // created_at first: block 50 of Jan 1 before block 9 of Jan 2.
            op_row(5, 1, 1, A, "", t1),
            op_row(12, 2, 1, A, "", t1),
            op_row(30, 3, 1, A, "", t1),
            // chain 10 before chain 8453, whatever the block.
            op_row(2, 4, 1, B, "", t2),
            op_row(5, 5, 3, A, "top8", t2),
            op_row(12, 6, 3, A, "top8", t2),
            op_row(30, 7, 3, A, "top8", t2),
            op_row(7, 8, 1, B, "", t2),
            op_row(5, 9, 2, A, "", t2),
            op_row(12, 10, 2, A, "", t2),
            op_row(30, 11, 2, A, "", t2),
        ]
    );
    assert_eq!(skipped(out.path()), reasons(&[]));
}

#[test]
fn an_op_tag_has_no_length_limit_but_a_record_tag_has_255_bytes() {
    let pg = Postgres::start();
    indexer(&pg);
    let long_tag = "é".repeat(150); // 300 bytes
    let longer_untag = "t".repeat(1000);
    let tag_255 = format!("{}a", "é".repeat(127));
    let (rec_a, s1) = (bytea(&format!("0101{A}"), false), bytea(&slot(1), false));
    pg.execute(&format!(
        "{LISTS} {};
         {RECORDS} (8453, '{LR}', {s1}, {rec_a}, 1, 1, {data_a}, '2024-02-01Z');
         {TAGS} (8453, '{LR}', {s1}, {rec_a}, '{tag_255}', '2024-02-02Z'),
                (8453, '{LR}', {s1}, {rec_a}, repeat('é', 128), '2024-02-03Z');
         {EVENTS} {}, {};",
        list_at(1, 8453, 1, false),
        list_op(8453, 1, 0, 1, &op(3, A, &long_tag), "2024-02-04Z"),
        list_op(8453, 2, 0, 1, &op(4, A, &longer_untag), "2024-02-05Z"),
        data_a = bytea(A, false),
    ));
    let out = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), out.path(), &[]);
    let t = loaded(out.path());
    assert_eq!(
        t.list_ops,
        vec![
            op_row(1, 1, 3, A, &long_tag, "2024-02-04T00:00:00.000Z"),
            op_row(1, 2, 4, A, &longer_untag, "2024-02-05T00:00:00.000Z"),
        ]
    );
    assert_eq!(
        t.list_record_tags,
        vec![tag(1, A, &tag_255, "2024-02-02T00:00:00.000Z")]
    );
    assert_eq!(
        skipped(out.path()),
        reasons(&[(
            "efp_list_record_tags",
            "tag is empty or longer than 255 bytes",
            1
        )])
    );
}

#[test]
fn skip_examples_show_bytea_as_0x_hex_of_its_bytes_in_either_encoding() {
    for ascii in [false, true] {
        let pg = Postgres::start();
        indexer(&pg);
        let enc = |hex: &str| bytea(hex, ascii);
        let short_a = &A[..38];
        // Upper-case text (`0X`, `AB...`) is the same bytes.
        let rec_f = if ascii {
            format!("convert_to('0X0101{}', 'UTF8')", F.to_uppercase())
        } else {
            enc(&format!("0101{F}"))
        };
        pg.execute(&format!(
            "{LISTS} {list};
             INSERT INTO efp_list_metadata (chain_id, contract_address, slot, \"key\", value) VALUES
               (8453, '{LR}', {s1}, 'user', '0x1234'),
               (8453, '{LR}', {short_slot}, 'manager', '0x{B}');
             {RECORDS} (8453, '{LR}', {s1}, {rec_short}, 1, 1, {data_short}, '2024-02-01Z'),
                       (8453, '{LR}', {s99}, {rec_a}, 1, 1, {data_a}, '2024-02-01Z');
             {TAGS} (8453, '{LR}', {s1}, {rec_a}, '', '2024-02-02Z'),
                    (8453, '{LR}', {s99}, {rec_f}, 'x', '2024-02-02Z');",
            list = list_at(1, 8453, 1, ascii),
            s1 = enc(&slot(1)),
            s99 = enc(&slot(0x99)),
            short_slot = enc(&"0a".repeat(31)),
            rec_a = enc(&format!("0101{A}")),
            rec_short = enc(&format!("0101{short_a}")),
            data_a = enc(A),
            data_short = enc(short_a),
        ));
        let out = tempfile::tempdir().unwrap();
        let stderr = export_ok(&pg.url(), out.path(), &[]);
        let (s1, s99) = (format!("0x{}", slot(1)), format!("0x{}", slot(0x99)));
        let meta_key = |slot: &str, key: &str| {
            format!("(chain_id, contract_address, slot, key) = (8453, \"{LR}\", {slot}, \"{key}\")")
        };
        let record_key = |slot: &str, record: &str| {
            format!(
                "(chain_id, contract_address, slot, record) = (8453, \"{LR}\", {slot}, 0x{record})"
            )
        };
        let tag_key = |slot: &str, record: &str, tag: &str| {
            format!(
                "(chain_id, contract_address, slot, record, tag) = \
                 (8453, \"{LR}\", {slot}, 0x{record}, \"{tag}\")"
            )
        };
        let expected: BTreeMap<(String, String), Vec<String>> = [
            (
                "efp_list_metadata",
                "value is not a 20-byte address",
                meta_key(&s1, "user"),
            ),
            (
                "efp_list_metadata",
                "storage location is not (chain, 20-byte contract, 32-byte slot)",
                meta_key(&format!("0x{}", "0a".repeat(31)), "manager"),
            ),
            (
                "efp_list_records",
                "record_data is not a 20-byte address",
                record_key(&s1, &format!("0101{short_a}")),
            ),
            (
                "efp_list_records",
                "no exported list at its storage location",
                record_key(&s99, &format!("0101{A}")),
            ),
            (
                "efp_list_record_tags",
                "tag is empty or longer than 255 bytes",
                tag_key(&s1, &format!("0101{A}"), ""),
            ),
            (
                "efp_list_record_tags",
                "no exported list at its storage location",
                tag_key(&s99, &format!("0101{F}"), "x"),
            ),
        ]
        .into_iter()
        .map(|(s, r, key)| ((s.to_owned(), r.to_owned()), vec![key]))
        .collect();
        assert_eq!(skip_examples(out.path()), expected, "ascii BYTEA: {ascii}");
        // The summary on stderr prints the same keys.
        let line = format!(
            "efp_list_records: record_data is not a 20-byte address: 1 (first: {})",
            record_key(&s1, &format!("0101{short_a}"))
        );
        assert!(stderr.contains(&line), "ascii BYTEA: {ascii}\n{stderr}");
    }
}

#[test]
fn records_of_another_version_or_type_and_their_tags_are_neither_exported_nor_counted() {
    for ascii in [false, true] {
        let pg = Postgres::start();
        indexer(&pg);
        let enc = |hex: &str| bytea(hex, ascii);
        let short_a = &A[..38];
        pg.execute(&format!(
            "{LISTS} {list};
             {RECORDS}
               (8453, '{LR}', {s1}, {rec_a}, 1, 1, {data_a}, '2024-02-01Z'),
               (8453, '{LR}', {s1}, {v2_a}, 2, 1, {data_a}, '2024-02-01Z'),
               (8453, '{LR}', {s1}, {t2_a}, 1, 2, {data_a}, '2024-02-01Z'),
               (8453, '{LR}', {s1}, {t2_5}, 1, 2, {data_5}, '2024-02-01Z'),
               (8453, '{LR}', {s99}, {t2_b}, 1, 2, {data_b}, '2024-02-01Z'),
               (8453, '{LR}', {s1}, {rec_short}, 1, 1, {data_short}, '2024-02-01Z');
             {TAGS}
               (8453, '{LR}', {s1}, {rec_a}, 'top8', '2024-02-02Z'),
               (8453, '{LR}', {s1}, {v2_a}, 'x', '2024-02-02Z'),
               (8453, '{LR}', {s1}, {t2_a}, 'x', '2024-02-02Z'),
               (8453, '{LR}', {s1}, {t2_5}, 'x', '2024-02-02Z'),
               (8453, '{LR}', {s99}, {t2_b}, 'x', '2024-02-02Z'),
               (8453, '{LR}', {s1}, {rec_short}, 'x', '2024-02-02Z');",
            list = list_at(1, 8453, 1, ascii),
            s1 = enc(&slot(1)),
            s99 = enc(&slot(0x99)),
            rec_a = enc(&format!("0101{A}")),
            v2_a = enc(&format!("0201{A}")),
            t2_a = enc(&format!("0102{A}")),
            t2_5 = enc("01020102030405"),
            t2_b = enc(&format!("0102{B}")),
            rec_short = enc(&format!("0101{short_a}")),
            data_a = enc(A),
            data_b = enc(B),
            data_5 = enc("0102030405"),
            data_short = enc(short_a),
        ));
        let out = tempfile::tempdir().unwrap();
        export_ok(&pg.url(), out.path(), &[]);
        let t = loaded(out.path());
        assert_eq!(
            t.list_records,
            vec![record(1, A, "2024-02-01T00:00:00.000Z")]
        );
        assert_eq!(
            t.list_record_tags,
            vec![tag(1, A, "top8", "2024-02-02T00:00:00.000Z")]
        );
        // Only the version-1 type-1 record whose address is not 20 bytes,
        // and its tag, are skips.
        assert_eq!(
            skipped(out.path()),
            reasons(&[
                (
                    "efp_list_records",
                    "record_data is not a 20-byte address",
                    1
                ),
                (
                    "efp_list_record_tags",
                    "record is not a version-1 type-1 record of a 20-byte address",
                    1
                ),
            ]),
            "ascii BYTEA: {ascii}"
        );
    }
}

/// The manifest's `source`: the greatest position of each chain (NUMERIC
/// indexes compared as numbers, not text) and the transaction's time,
/// which is also `created_at`; no events, no positions.
#[test]
fn the_manifest_records_where_the_export_stands_in_the_event_log() {
    let pg = Postgres::start();
    indexer(&pg);
    let source = |root: &std::path::Path| {
        let dir = root.join(super::current(root).expect("CURRENT"));
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(m["source"]["db_time"], m["created_at"], "{m}");
        m["source"]["positions"].clone()
    };
    let empty = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), empty.path(), &[]);
    assert_eq!(source(empty.path()), serde_json::json!({}));

    pg.execute(&format!(
        "{EVENTS} \
         (8453, 100, 9, 3, '{LR}', 'Other', '{{}}', now()), \
         (8453, 100, 10, 0, '{LR}', 'Other', '{{}}', now()), \
         (8453, 99, 50, 7, '{LR}', 'Other', '{{}}', now()), \
         (10, 7, 0, 12, '{LR}', 'Other', '{{}}', now()), \
         (10, 7, 0, 9, '{LR}', 'Other', '{{}}', now())"
    ));
    let root = tempfile::tempdir().unwrap();
    export_ok(&pg.url(), root.path(), &[]);
    assert_eq!(
        source(root.path()),
        serde_json::json!({"10": [7, 0, 12], "8453": [100, 10, 0]})
    );
}
