//! How the indexer's column values are read and shown: BYTEA stored raw or
//! as its ASCII `0x` hex text (deployments use both; told apart per value
//! by length and prefix), addresses, and the text a skipped row's key has
//! in the summary's examples.

use std::borrow::Cow;

use super::copy::int8;
use crate::snapshot::{parse_address, Address};

/// A BYTEA of `N` bytes, stored raw or as the ASCII text `0x` + 2N hex
/// digits (the two encodings deployments use); `None` for anything else.
pub(super) fn fixed_bytes<const N: usize>(v: &[u8]) -> Option<[u8; N]> {
    if v.len() == N {
        return v.try_into().ok();
    }
    if v.len() == 2 + 2 * N && (v.starts_with(b"0x") || v.starts_with(b"0X")) {
        let mut out = [0u8; N];
        faster_hex::hex_decode(&v[2..], &mut out).ok()?;
        return Some(out);
    }
    None
}

/// `0x` + even-length hex text (either case) -> bytes.
pub(super) fn hex_text(v: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    hex_text_into(v.as_bytes(), &mut out)?;
    Some(out)
}

/// [`hex_text`] into a reused buffer (no allocation per row).
pub(super) fn hex_text_into(v: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let hex = v.strip_prefix(b"0x").or_else(|| v.strip_prefix(b"0X"))?;
    if hex.len() % 2 != 0 {
        return None;
    }
    out.clear();
    out.resize(hex.len() / 2, 0);
    faster_hex::hex_decode(hex, out).ok()
}

/// A BYTEA value of any length as its bytes, stored raw or as `0x` hex
/// text (for values whose length does not tell the encoding apart).
pub(super) fn bytea_bytes(v: &[u8]) -> Cow<'_, [u8]> {
    let mut out = Vec::new();
    match hex_text_into(v, &mut out) {
        Some(()) => Cow::Owned(out),
        None => Cow::Borrowed(v),
    }
}

/// Exactly `0x` + 2N hex digits -> N bytes.
pub(super) fn hex_fixed<const N: usize>(v: &[u8]) -> Option<[u8; N]> {
    if v.len() != 2 + 2 * N {
        return None;
    }
    fixed_bytes::<N>(v)
}

/// The last contract address text and its parse: a table's rows almost
/// all name one contract, so each is parsed once instead of per row.
#[derive(Default)]
pub(super) struct ContractCache {
    text: Vec<u8>,
    parsed: Option<Address>,
}

impl ContractCache {
    pub(super) fn get(&mut self, text: Option<&[u8]>) -> Option<Address> {
        let text = text?;
        if text != self.text.as_slice() {
            self.text.clear();
            self.text.extend_from_slice(text);
            self.parsed = std::str::from_utf8(text).ok().and_then(parse_address);
        }
        self.parsed
    }
}

/// An address column: `0x` + 40 hex digits, any case.
pub(super) fn address(v: Option<&str>) -> Option<Address> {
    v.and_then(parse_address)
}

/// How a BYTEA shows in the summary's examples: `0x` hex of its bytes,
/// the same whether the deployment stores them raw or as hex text.
pub(super) fn show_bytes(v: Option<&[u8]>) -> String {
    match v {
        None => "NULL".to_owned(),
        Some(b) => format!("0x{}", faster_hex::hex_string(&bytea_bytes(b))),
    }
}

pub(super) fn show_int(v: Option<&[u8]>) -> String {
    match int8(v, "") {
        Ok(Some(n)) => n.to_string(),
        _ => "NULL".to_owned(),
    }
}

pub(super) fn show_text(v: Option<&[u8]>) -> String {
    match v {
        None => "NULL".to_owned(),
        Some(b) => format!("{:?}", String::from_utf8_lossy(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytea_in_both_encodings() {
        let raw = [0xabu8; 20];
        assert_eq!(fixed_bytes::<20>(&raw), Some(raw));
        let text = format!("0x{}", "ab".repeat(20));
        assert_eq!(fixed_bytes::<20>(text.as_bytes()), Some(raw));
        assert_eq!(fixed_bytes::<20>(text.to_uppercase().as_bytes()), Some(raw));
        assert_eq!(
            fixed_bytes::<20>(format!("0x{}", "AB".repeat(20)).as_bytes()),
            Some(raw)
        );
        assert_eq!(fixed_bytes::<20>(&raw[..19]), None);
        assert_eq!(
            fixed_bytes::<20>(format!("0x{}", "zz".repeat(20)).as_bytes()),
            None
        );
        assert_eq!(hex_text("0x0102"), Some(vec![1, 2]));
        assert_eq!(hex_text("0x012"), None);
        assert_eq!(hex_text("0102"), None);
    }

    #[test]
    fn bytea_shows_as_hex_of_its_bytes_in_both_encodings() {
        assert_eq!(show_bytes(Some(&[1, 0xab])), "0x01ab");
        assert_eq!(show_bytes(Some(b"0x01ab")), "0x01ab");
        assert_eq!(show_bytes(Some(b"0X01AB")), "0x01ab");
        assert_eq!(show_bytes(Some(b"0x")), "0x");
        assert_eq!(show_bytes(None), "NULL");
        // Text that is not hex is shown as the bytes it is.
        assert_eq!(show_bytes(Some(b"0xzz")), "0x30787a7a");
        assert_eq!(show_bytes(Some(b"0x012")), "0x3078303132");
    }
}
