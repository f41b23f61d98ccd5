//! Minimal JSON text writing for the hot path: responses are built by
//! appending to one `String` (field order fixed by the code, no
//! intermediate values). Escaping matches serde_json's output exactly.

/// Appends `s` as a JSON string literal.
pub fn push_str(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 15)] as char);
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Fixed-length ASCII text: every way to build or change one writes only
/// ASCII, so it appends to a `String` without a UTF-8 check (the check,
/// reading bytes just stored, was a large share of a hub's `taggedAs`
/// answer of megabytes).
#[derive(Clone, Copy)]
pub struct Ascii<const N: usize>([u8; N]);

impl<const N: usize> Ascii<N> {
    pub const LEN: usize = N;

    /// `text` padded with spaces to `N` bytes (a compile-time error if it
    /// is longer or not ASCII).
    pub const fn padded(text: &str) -> Self {
        let text = text.as_bytes();
        assert!(text.len() <= N && text.is_ascii());
        let mut bytes = [b' '; N];
        let mut i = 0;
        while i < text.len() {
            bytes[i] = text[i];
            i += 1;
        }
        Ascii(bytes)
    }

    /// Writes `piece` at byte `at`.
    #[inline]
    pub fn put<const M: usize>(&mut self, at: usize, piece: &Ascii<M>) {
        self.0[at..at + M].copy_from_slice(&piece.0);
    }

    /// Appends bytes `from..` to `out`.
    #[inline]
    pub fn push_from(&self, out: &mut String, from: usize) {
        // SAFETY: ASCII bytes (any run of them) appended to valid UTF-8
        // leave valid UTF-8.
        unsafe { out.as_mut_vec() }.extend_from_slice(&self.0[from..]);
    }

    pub fn as_bytes(&self) -> &[u8; N] {
        &self.0
    }

    pub fn as_str(&self) -> &str {
        // Always Ok: the bytes are ASCII.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// `n % 100` as two decimal digits.
#[inline]
pub fn two_digits(n: u32) -> Ascii<2> {
    let n = (n % 100) as u8;
    Ascii([b'0' + n / 10, b'0' + n % 10])
}

/// The two lower-case hex digits of every byte value.
const HEX_PAIRS: [[u8; 2]; 256] = {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[0u8; 2]; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = [HEX[b >> 4], HEX[b & 15]];
        b += 1;
    }
    t
};

/// The 8 lower-case hex digits of 4 bytes, in order, without a table or
/// branches: each nibble spread to its own byte, then mapped to `0`-`9`
/// or `a`-`f`.
#[inline]
pub fn hex_of_4(bytes: [u8; 4]) -> Ascii<8> {
    let mut x = u64::from(u32::from_be_bytes(bytes));
    x = (x | (x << 16)) & 0x0000_ffff_0000_ffff;
    x = (x | (x << 8)) & 0x00ff_00ff_00ff_00ff;
    x = (x | (x << 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // 1 in the bytes holding 10-15 (n + 6 carries into bit 4).
    let letters = ((x + 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101;
    Ascii((x + 0x3030_3030_3030_3030 + letters * u64::from(b'a' - b'0' - 10)).to_be_bytes())
}

/// The 32 lower-case hex digits of 16 bytes, in order: on x86_64 in SSE2
/// registers (part of its baseline), a few instructions for all 16; a
/// taggedAs answer of a hub writes ~50,000 addresses, where the 4-byte
/// word version showed as most of its time.
#[cfg(target_arch = "x86_64")]
#[inline]
fn hex_of_16(bytes: &[u8; 16]) -> Ascii<32> {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpgt_epi8, _mm_loadu_si128, _mm_set1_epi8,
        _mm_srli_epi16, _mm_storeu_si128, _mm_unpackhi_epi8, _mm_unpacklo_epi8,
    };
    let mut out = [0u8; 32];
    // SAFETY: SSE2 is always present on x86_64; the load reads the 16
    // bytes of `bytes` and the stores write the 32 of `out`, unaligned.
    unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().cast::<__m128i>());
        let nibble = _mm_set1_epi8(0x0f);
        let high = _mm_and_si128(_mm_srli_epi16(v, 4), nibble);
        let low = _mm_and_si128(v, nibble);
        // 0-9 -> '0'-'9', 10-15 -> 'a'-'f'.
        let ascii = |x: __m128i| {
            let letters = _mm_and_si128(
                _mm_cmpgt_epi8(x, _mm_set1_epi8(9)),
                _mm_set1_epi8((b'a' - b'0' - 10) as i8),
            );
            _mm_add_epi8(_mm_add_epi8(x, _mm_set1_epi8(b'0' as i8)), letters)
        };
        let first = ascii(_mm_unpacklo_epi8(high, low));
        let second = ascii(_mm_unpackhi_epi8(high, low));
        _mm_storeu_si128(out.as_mut_ptr().cast::<__m128i>(), first);
        _mm_storeu_si128(out.as_mut_ptr().add(16).cast::<__m128i>(), second);
    }
    Ascii(out)
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn hex_of_16(bytes: &[u8; 16]) -> Ascii<32> {
    let mut out = Ascii([0u8; 32]);
    for (i, chunk) in bytes.chunks_exact(4).enumerate() {
        out.put(8 * i, &hex_of_4([chunk[0], chunk[1], chunk[2], chunk[3]]));
    }
    out
}

/// Bytes of an address's JSON string (`address_literal`).
pub const ADDRESS_LITERAL: usize = 44;

/// An address as its JSON string: `"0x` + 40 lower-case hex digits + `"`.
#[inline]
pub fn address_literal(a: &[u8; 20]) -> Ascii<ADDRESS_LITERAL> {
    let mut literal = Ascii::<ADDRESS_LITERAL>::padded("\"0x");
    let [head @ .., b16, b17, b18, b19] = *a;
    literal.put(3, &hex_of_16(&head));
    literal.put(35, &hex_of_4([b16, b17, b18, b19]));
    literal.0[43] = b'"';
    literal
}

/// Appends lower-case hex of `bytes` (without `0x`) to `out`, 4 bytes at
/// a time (per-char pushes, then a table and a UTF-8 check per address,
/// showed in the profile of a body of ten thousand addresses). The JSON
/// writer's own: it appends in place, where the hex crates encode into a
/// buffer first and measured slower (benches/edges.rs, `hex/encode_20`).
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    out.reserve(bytes.len() * 2);
    let mut chunks = bytes.chunks_exact(4);
    for chunk in &mut chunks {
        hex_of_4([chunk[0], chunk[1], chunk[2], chunk[3]]).push_from(out, 0);
    }
    for &b in chunks.remainder() {
        Ascii(HEX_PAIRS[usize::from(b)]).push_from(out, 0);
    }
}

/// Appends `"key":` (keys are plain ASCII identifiers).
pub fn push_key(out: &mut String, key: &str) {
    out.push('"');
    out.push_str(key);
    out.push_str("\":");
}

/// Appends a string literal, or `null`.
pub fn push_opt_str(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => push_str(out, s),
        None => out.push_str("null"),
    }
}

/// Appends an integer as a JSON string (`"17"`), as the API prints counters.
pub fn push_num_str(out: &mut String, n: u64) {
    out.push('"');
    push_num(out, n);
    out.push('"');
}

/// Appends `"17"`, or `null`.
pub fn push_opt_num_str(out: &mut String, n: Option<u64>) {
    match n {
        Some(n) => push_num_str(out, n),
        None => out.push_str("null"),
    }
}

/// The length of `s` as `push_str` writes it, quotes included (to size a
/// large body once).
pub fn str_len(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// Appends `n` in decimal. By hand: `write!` goes through `core::fmt`,
/// which showed in the ranked leaderboard's profile.
pub fn push_num(out: &mut String, n: u64) {
    let width = n.checked_ilog10().map_or(1, |l| l as usize + 1);
    push_padded(out, n, width);
}

/// Appends a signed `n` in decimal.
pub fn push_int(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    push_num(out, n.unsigned_abs());
}

/// Appends `n` zero-padded to `width` digits (`n` < 10^width).
pub fn push_padded(out: &mut String, n: u64, width: usize) {
    // Right-aligned in the buffer, appended once.
    let mut digits = Ascii([b'0'; 20]);
    let mut n = n;
    let width = width.min(digits.0.len());
    for at in (digits.0.len() - width..digits.0.len()).rev() {
        digits.0[at] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    digits.push_from(out, digits.0.len() - width);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_hex_is_lower_case_hex_of_any_length() {
        for len in [0, 1, 19, 20, 21, 45] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let mut out = String::from("0x");
            push_hex(&mut out, &bytes);
            let expected: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(out, format!("0x{expected}"));
        }
    }

    #[test]
    fn numbers_like_display() {
        for n in [0, 7, 10, 99, 100, 12_345, u64::from(u32::MAX), u64::MAX] {
            let mut out = String::from("x");
            push_num(&mut out, n);
            assert_eq!(out, format!("x{n}"));
        }
        for n in [0, -1, 42, i64::MIN, i64::MAX] {
            let mut out = String::new();
            push_int(&mut out, n);
            assert_eq!(out, n.to_string());
        }
        let mut out = String::new();
        push_padded(&mut out, 7, 3);
        push_padded(&mut out, 2024, 4);
        push_padded(&mut out, 0, 2);
        assert_eq!(out, "007202400");
    }

    #[test]
    fn hex_of_every_byte_in_every_position() {
        for b in 0..=255u8 {
            for at in 0..4 {
                let mut bytes = [0x5au8; 4];
                bytes[at] = b;
                let want: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                assert_eq!(hex_of_4(bytes).as_str(), want, "{bytes:?}");
            }
        }
        // Every byte value in every position of an address.
        for b in 0..=255u8 {
            let a: [u8; 20] = std::array::from_fn(|i| b.wrapping_add((i * 97) as u8));
            let hex: String = a.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(address_literal(&a).as_str(), format!("\"0x{hex}\""));
        }
        let a: [u8; 20] = std::array::from_fn(|i| (i * 53 + 7) as u8);
        let hex: String = a.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(address_literal(&a).as_str(), format!("\"0x{hex}\""));
        let mut out = String::from("é");
        address_literal(&a).push_from(&mut out, 40);
        push_hex(&mut out, &a[..7]);
        assert_eq!(out, format!("é{}\"{}", &hex[37..], &hex[..14]));
    }

    #[test]
    fn escapes_like_serde_json() {
        for s in [
            "plain",
            "quo\"te",
            "back\\slash",
            "nl\nx",
            "\u{1}\u{1f}",
            "é🔥/",
            "\t\r\u{8}\u{c}",
        ] {
            let mut out = String::new();
            push_str(&mut out, s);
            assert_eq!(out, serde_json::to_string(s).unwrap(), "{s:?}");
            assert_eq!(str_len(s), out.len(), "{s:?}");
        }
    }
}
