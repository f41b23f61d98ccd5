//! The snapshot tables as plain rows: what the Parquet reader
//! produces after validation, what the writer and the generator consume,
//! and what the graph builder turns into indexes; with the two encodings
//! rows carry, addresses (hex) and list ops (bytes).

/// A 20-byte account address (always stored lower-case when printed).
pub type Address = [u8; 20];

/// Parses `0x` + 40 hex digits (either case; the `0x` must be lower-case).
pub fn parse_address(text: &str) -> Option<Address> {
    let hex = text.strip_prefix("0x")?.as_bytes();
    if hex.len() != 40 {
        return None;
    }
    let mut out = [0u8; 20];
    faster_hex::hex_decode(hex, &mut out).ok()?;
    Some(out)
}

/// A snapshot's address column: `0x` + 40 hex digits in any case, the
/// prefix included (SNAPSHOT.md: the loader accepts any case). The API's
/// `addressOrENS` stays strict (`parse_address`): there `0X…` is a name.
pub fn parse_address_any_case(text: &str) -> Option<Address> {
    match text.as_bytes() {
        [b'0', b'X', hex @ ..] if hex.len() == 40 => {
            let mut out = [0u8; 20];
            faster_hex::hex_decode(hex, &mut out).ok()?;
            Some(out)
        }
        _ => parse_address(text),
    }
}

/// `0x` + 40 lower-case hex digits.
pub fn format_address(addr: &Address) -> String {
    let mut digits = [0u8; 40];
    let digits = faster_hex::hex_encode(addr, &mut digits).expect("40 digits for 20 bytes");
    let mut s = String::with_capacity(42);
    s.push_str("0x");
    s.push_str(digits);
    s
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ListRow {
    pub token_id: u64,
    pub user: Address,
    pub owner: Address,
    pub manager: Address,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PrimaryListRow {
    pub address: Address,
    pub token_id: u64,
}

/// `updated_at` fields everywhere are epoch milliseconds (UTC).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RecordRow {
    pub token_id: u64,
    pub address: Address,
    pub updated_at: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TagRow {
    pub token_id: u64,
    pub address: Address,
    pub tag: String,
    pub updated_at: i64,
}

/// One list as the export maps it at one moment (the tail's unit of
/// change): its row (`None`: the mapping exports no such list), records
/// and tags at its storage location.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListState {
    pub row: Option<ListRow>,
    pub records: Vec<RecordRow>,
    pub tags: Vec<TagRow>,
}

pub const OP_FOLLOW: u8 = 1;
pub const OP_UNFOLLOW: u8 = 2;
pub const OP_TAG: u8 = 3;
pub const OP_UNTAG: u8 = 4;

/// A decoded list op. The raw bytes are exactly reproducible from it
/// (`encode`), so the raw bytes need not be kept in memory.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Op {
    /// 1 follow, 2 un-follow, 3 tag, 4 un-tag.
    pub opcode: u8,
    pub target: Address,
    /// Empty for opcodes 1 and 2; non-empty UTF-8 for 3 and 4.
    pub tag: String,
}

/// Why op bytes are malformed; the text is the loader's reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpError {
    /// Fewer than 24 bytes (the length).
    #[error("op is {0} bytes, shorter than 24")]
    TooShort(usize),
    /// The first byte is not 1.
    #[error("op version {0} is not 1")]
    Version(u8),
    /// The record version/type bytes are not 1/1.
    #[error("op record version/type {0}/{1} is not 1/1")]
    RecordType(u8, u8),
    /// A follow or un-follow op longer than 24 bytes (opcode, length).
    #[error("op with opcode {0} is {1} bytes, must be exactly 24")]
    Length(u8, usize),
    /// A tag or un-tag op without a tag (the opcode).
    #[error("op with opcode {0} has no tag (24 bytes, needs at least 25)")]
    NoTag(u8),
    #[error("op tag is not valid UTF-8")]
    TagNotUtf8,
    #[error("unknown opcode {0}")]
    UnknownOpcode(u8),
}

impl Op {
    /// Decodes `[0x01][opcode][0x01][0x01][20-byte address][tag...]`,
    /// saying why when the bytes are malformed.
    pub fn decode(bytes: &[u8]) -> Result<Op, OpError> {
        let (opcode, target, tag) = Op::parse(bytes)?;
        Ok(Op {
            opcode,
            target,
            tag: tag.to_owned(),
        })
    }

    /// [`Op::decode`] without allocating: (opcode, target, tag), the tag
    /// borrowed from `bytes` ("" for follow and un-follow).
    pub fn parse(bytes: &[u8]) -> Result<(u8, Address, &str), OpError> {
        if bytes.len() < 24 {
            return Err(OpError::TooShort(bytes.len()));
        }
        if bytes[0] != 1 {
            return Err(OpError::Version(bytes[0]));
        }
        if bytes[2] != 1 || bytes[3] != 1 {
            return Err(OpError::RecordType(bytes[2], bytes[3]));
        }
        let opcode = bytes[1];
        let target: Address = bytes[4..24].try_into().expect("20 bytes");
        let tag_bytes = &bytes[24..];
        match opcode {
            OP_FOLLOW | OP_UNFOLLOW if tag_bytes.is_empty() => Ok((opcode, target, "")),
            OP_FOLLOW | OP_UNFOLLOW => Err(OpError::Length(opcode, bytes.len())),
            OP_TAG | OP_UNTAG if tag_bytes.is_empty() => Err(OpError::NoTag(opcode)),
            OP_TAG | OP_UNTAG => match std::str::from_utf8(tag_bytes) {
                Ok(tag) => Ok((opcode, target, tag)),
                Err(_) => Err(OpError::TagNotUtf8),
            },
            other => Err(OpError::UnknownOpcode(other)),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.tag.len());
        out.extend_from_slice(&[1, self.opcode, 1, 1]);
        out.extend_from_slice(&self.target);
        out.extend_from_slice(self.tag.as_bytes());
        out
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct OpRow {
    pub token_id: u64,
    pub seq: u64,
    pub op: Op,
    pub updated_at: i64,
}

/// `records`, `chains` and `errors` hold compact JSON object text with the
/// stored key order (the reader validates and re-serialises them).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct EnsRow {
    pub address: Address,
    pub name: String,
    pub avatar: Option<String>,
    pub header: Option<String>,
    pub display: Option<String>,
    pub records: Option<String>,
    pub chains: Option<String>,
    pub fresh: Option<i64>,
    pub resolver: Option<String>,
    pub errors: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct BadgeEventRow {
    pub event_id: i64,
    pub position: i32,
    pub fancy_id: String,
    pub name: String,
    pub event_url: String,
    pub image_url: String,
    pub country: String,
    pub city: String,
    pub description: String,
    pub year: i32,
    pub start_date: String,
    pub end_date: String,
    pub expiry_date: String,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct BadgeRow {
    pub address: Address,
    pub event_id: i64,
    pub token_id: String,
    pub owner: String,
}

/// A curated account to suggest (`recommended`, optional in a snapshot).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct RecommendedRow {
    pub position: i64,
    pub address: Address,
    pub name: String,
    pub avatar: Option<String>,
    pub header: Option<String>,
    pub class: Option<String>,
    /// Epoch milliseconds.
    pub created_at: Option<i64>,
}

/// All tables of one snapshot, rows in file order (`recommended` empty
/// when the snapshot leaves it out).
#[derive(Clone, Debug, Default)]
pub struct Tables {
    pub lists: Vec<ListRow>,
    pub primary_lists: Vec<PrimaryListRow>,
    pub list_records: Vec<RecordRow>,
    pub list_record_tags: Vec<TagRow>,
    pub list_ops: Vec<OpRow>,
    pub ens: Vec<EnsRow>,
    pub badge_events: Vec<BadgeEventRow>,
    pub badges: Vec<BadgeRow>,
    pub recommended: Vec<RecommendedRow>,
}

/// Compares two snapshots table by table, so a failure names the table.
#[cfg(test)]
pub(crate) fn assert_tables_eq(a: &Tables, b: &Tables) {
    assert_eq!(a.lists, b.lists);
    assert_eq!(a.primary_lists, b.primary_lists);
    assert_eq!(a.list_records, b.list_records);
    assert_eq!(a.list_record_tags, b.list_record_tags);
    assert_eq!(a.list_ops, b.list_ops);
    assert_eq!(a.ens, b.ens);
    assert_eq!(a.badge_events, b.badge_events);
    assert_eq!(a.badges, b.badges);
    assert_eq!(a.recommended, b.recommended);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_parse_and_format() {
        let a = parse_address("0xC9C3A4337a1bba75D0860A1A81f7B990dc607334").unwrap();
        assert_eq!(
            format_address(&a),
            "0xc9c3a4337a1bba75d0860a1a81f7b990dc607334"
        );
        assert!(parse_address("0XC9C3A4337a1bba75D0860A1A81f7B990dc607334").is_none());
        assert!(parse_address("0x123").is_none());
        assert!(parse_address("0xg9c3a4337a1bba75d0860a1a81f7b990dc607334").is_none());
    }

    #[test]
    fn addresses_accept_exactly_the_hex_digits() {
        // Every byte at the first digit and at the last (the codec checks
        // the first 32 digits a vector at a time, the rest one by one).
        for c in 0..=255u8 {
            let want = char::from(c).to_digit(16).map(|d| d as u8);
            for at in [0, 39] {
                let mut text = *b"0x7777777777777777777777777777777777777777";
                text[2 + at] = c;
                let got = std::str::from_utf8(&text).ok().and_then(parse_address);
                let value = want.map(|d| if at == 0 { d << 4 | 7 } else { 0x70 | d });
                let byte = if at == 0 { 0 } else { 19 };
                assert_eq!(got.map(|a| a[byte]), value, "byte {c} at digit {at}");
            }
        }
        let a = parse_address_any_case("0X00ff9Aabcdef0123456789ABCDEF000000000001").unwrap();
        assert_eq!(a[..3], [0x00, 0xff, 0x9a]);
        assert_eq!(a[19], 0x01);
        assert!(parse_address_any_case("0X00fg9Aabcdef0123456789ABCDEF000000000001").is_none());
    }

    #[test]
    fn op_round_trip_and_rejections() {
        let t = [0xabu8; 20];
        let tag = Op {
            opcode: 3,
            target: t,
            tag: "top8".into(),
        };
        assert_eq!(Op::decode(&tag.encode()).unwrap(), tag);
        let follow = Op {
            opcode: 1,
            target: t,
            tag: String::new(),
        };
        assert_eq!(follow.encode().len(), 24);
        assert_eq!(Op::decode(&follow.encode()).unwrap(), follow);
        let mut bad = follow.encode();
        bad[0] = 2;
        assert!(Op::decode(&bad)
            .unwrap_err()
            .to_string()
            .contains("version"));
        let mut bad = follow.encode();
        bad[1] = 5;
        assert!(Op::decode(&bad).unwrap_err().to_string().contains("opcode"));
        let mut bad = follow.encode();
        bad.push(b'x');
        assert!(Op::decode(&bad).is_err());
        let mut bad = follow.encode();
        bad[1] = 3;
        assert!(Op::decode(&bad).is_err());
        let mut bad = tag.encode();
        bad.push(0xff);
        assert!(Op::decode(&bad).unwrap_err().to_string().contains("UTF-8"));
        assert!(Op::decode(&[1, 1, 1]).is_err());
    }
}
