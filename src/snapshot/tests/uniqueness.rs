//! The uniqueness rules of each table, and which fault is reported first.

use super::*;

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
