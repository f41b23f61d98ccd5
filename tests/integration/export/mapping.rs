//! Mapping and skip rules: the hand-made database (`fixture`) exports to
//! exactly these rows and skip counts, whichever BYTEA encoding it uses.

use std::collections::BTreeMap;
use std::path::Path;

use followgraph::snapshot::{EnsRow, ListRow, Op, OpRow, PrimaryListRow, RecordRow, TagRow};

use crate::pg::Postgres;

use super::fixture::fixture_sql;
use super::{a, export_json, export_ok, indexer, loaded, ms, skipped, sorted, A, B, C, D, E, F, Z};

fn list(token_id: u64, user: &str, owner: &str, manager: &str) -> ListRow {
    ListRow {
        token_id,
        user: a(user),
        owner: a(owner),
        manager: a(manager),
    }
}

pub(super) fn record(token_id: u64, addr: &str, at: &str) -> RecordRow {
    RecordRow {
        token_id,
        address: a(addr),
        updated_at: ms(at),
    }
}

pub(super) fn tag(token_id: u64, addr: &str, tag: &str, at: &str) -> TagRow {
    TagRow {
        token_id,
        address: a(addr),
        tag: tag.to_owned(),
        updated_at: ms(at),
    }
}

pub(super) fn op_row(
    token_id: u64,
    seq: u64,
    opcode: u8,
    target: &str,
    tag: &str,
    at: &str,
) -> OpRow {
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
    // The tag of list 3's type-2 record is out of scope: not even a skip.
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
