//! Column presence and types, nulls, and the value rules of each column.

use super::*;

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
    let upper_prefix = format!("0X{}", "Cd".repeat(20));
    let users = strings(&[Some(&upper), Some(mixed), Some(&upper_prefix)]);
    let (_tmp, dir) = sample_with_column("lists", "user", users);
    let snap = read_snapshot(&dir).unwrap();
    assert_eq!(snap.tables.lists[0].user, [0xab; 20]);
    assert_eq!(
        format_address(&snap.tables.lists[1].user),
        mixed.to_lowercase()
    );
    assert_eq!(snap.tables.lists[2].user, [0xcd; 20]);
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
