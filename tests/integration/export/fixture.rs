//! The hand-made indexer database: rows that exercise every mapping and
//! skip rule of the exporter, with BYTEA columns stored as raw bytes or as
//! `0x...` text. `mapping` checks what they export to.

use super::{bytea, slot, uint256, A, AM, B, C, D, E, F, LR, NFT, Z};

/// Rows exercising every mapping and skip rule. `enc(hex)` is the SQL for a
/// BYTEA value given as hex: raw bytes, or the ASCII text `0x...` that
/// some deployments store.
pub(super) fn fixture_sql(ascii_bytea: bool) -> String {
    let enc = |hex: &str| bytea(hex, ascii_bytea);
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
