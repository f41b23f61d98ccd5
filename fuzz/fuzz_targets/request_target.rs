//! `api::route` + `api::parse` on arbitrary request targets: must never
//! panic, and what they accept must respect the configured limits.
//!
//! Input: `[mode][target bytes...]`. The target is split at its first `?`
//! into raw path and raw query. `mode` picks the configured maximum
//! `limit` (bits 0-1) and how bytes that are not UTF-8 reach the `&str`
//! API (bit 2: U+FFFD replacement, else percent-encoding of every
//! non-ASCII byte, which is what a real request line carries).
#![no_main]

use std::borrow::Cow;

use followgraph::api::{parse, percent_decode, route};
use libfuzzer_sys::fuzz_target;

const MAX_LIMITS: [u64; 4] = [1000, 0, 1, u64::MAX];

fn to_text(bytes: &[u8], lossy: bool) -> Cow<'_, str> {
    if lossy {
        return String::from_utf8_lossy(bytes);
    }
    if bytes.is_ascii() {
        // ASCII is always UTF-8.
        return Cow::Borrowed(std::str::from_utf8(bytes).unwrap());
    }
    let mut out = String::with_capacity(bytes.len() * 3);
    for &b in bytes {
        if b.is_ascii() {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Cow::Owned(out)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, target)) = data.split_first() else {
        return;
    };
    let max_limit = MAX_LIMITS[usize::from(mode & 3)];
    let lossy = mode & 4 != 0;
    let (path, query) = match target.iter().position(|&b| b == b'?') {
        Some(q) => (&target[..q], &target[q + 1..]),
        None => (target, &[][..]),
    };
    let path = to_text(path, lossy);
    let query = to_text(query, lossy);

    // Decoding never grows its input.
    assert!(percent_decode(path.as_bytes(), false).len() <= path.len());
    assert!(percent_decode(query.as_bytes(), true).len() <= query.len());

    let (decoded, found) = route(&path);
    let Some(found) = found else {
        return;
    };
    assert!(decoded.starts_with("/api/v1/"), "{decoded:?}");
    if let Ok(req) = parse(&found, &query, max_limit) {
        assert_eq!(req.call.endpoint(), found.endpoint);
        if let Some(limit) = req.call.limit() {
            assert!(limit as u64 <= max_limit, "limit {limit} > {max_limit}");
        }
    }
});
