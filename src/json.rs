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
/// which showed at ~2 µs a request in the ranked leaderboard's profile.
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
    let mut digits = [b'0'; 20];
    let mut n = n;
    let width = width.min(digits.len());
    for at in (0..width).rev() {
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend(digits[..width].iter().map(|&d| char::from(d)));
}

#[cfg(test)]
mod tests {
    use super::*;

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
