//! The mapping's value rules: primary-list values, tag records, op skip reasons.
use super::*;

#[test]
fn primary_list_values() {
    let v = |n: &str| format!("0x{n:0>64}");
    assert_eq!(primary_list_value(&v("1")), Some(1));
    assert_eq!(
        primary_list_value(&v("7fffffffffffffff")),
        Some(i64::MAX as u64)
    );
    assert_eq!(primary_list_value(&v("8000000000000000")), None);
    assert_eq!(primary_list_value(&v("0")), None);
    assert_eq!(primary_list_value(&v("1").replace("0x", "")), None);
    assert_eq!(primary_list_value("0x01"), None);
    assert_eq!(primary_list_value(&format!("0x1{}", "0".repeat(63))), None);
}

#[test]
fn tag_records_in_and_out_of_scope() {
    let is = |v: &[u8]| match tag_record(Some(v)) {
        TagRecord::Address(a) => format!("{:02x}", a[0]),
        TagRecord::OutOfScope => "out".to_owned(),
        TagRecord::Malformed => "malformed".to_owned(),
    };
    let mut v1t1 = vec![1, 1];
    v1t1.extend_from_slice(&[0xab; 20]);
    assert_eq!(is(&v1t1), "ab");
    let text = format!("0x0101{}", "ab".repeat(20));
    assert_eq!(is(text.as_bytes()), "ab");
    assert_eq!(is(&v1t1[..21]), "malformed");
    assert_eq!(
        is(format!("0x0101{}", "ab".repeat(19)).as_bytes()),
        "malformed"
    );
    assert_eq!(is(&[1]), "malformed");
    assert_eq!(is(b""), "malformed");
    assert!(matches!(tag_record(None), TagRecord::Malformed));
    for other in [[2, 1], [1, 2]] {
        let mut r = other.to_vec();
        r.extend_from_slice(&[0xab; 20]);
        assert_eq!(is(&r), "out");
        assert_eq!(is(&r[..7]), "out");
    }
    assert_eq!(is(b"0x0102ab"), "out");
}

#[test]
fn op_reasons() {
    let op = |b: &[u8]| op_skip_reason(b, &Op::decode(b).unwrap_err());
    let mut follow = vec![1, 1, 1, 1];
    follow.extend_from_slice(&[7; 20]);
    let mut v2 = follow.clone();
    v2[0] = 2;
    assert_eq!(op(&v2), "op of another version");
    let mut unknown = follow.clone();
    unknown[1] = 9;
    assert_eq!(op(&unknown), "op with an unknown opcode");
    let mut long = follow.clone();
    long.push(b'x');
    assert_eq!(op(&long), "op of the wrong length");
    assert_eq!(op(&follow[..10]), "op of the wrong length");
    let mut bad_tag = follow.clone();
    bad_tag[1] = 3;
    bad_tag.push(0xff);
    assert_eq!(op(&bad_tag), "op tag is not UTF-8");
    let mut other_record = follow.clone();
    other_record[3] = 2;
    assert_eq!(
        op(&other_record),
        "op on a record that is not version-1 type-1"
    );
}
