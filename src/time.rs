//! Milliseconds since the Unix epoch <-> the API's ISO 8601 form
//! (`2024-10-14T19:45:38.617Z`). Hand-rolled: two small functions do not
//! earn a date-time crate.

use crate::json::{two_digits, Ascii};

/// Formats epoch milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC).
pub fn format_iso_ms(ms: i64) -> String {
    let mut out = String::with_capacity(24);
    write_iso_ms(&mut out, ms);
    out
}

/// Appends the ISO form of `ms` to `out` (no allocation on the hot path).
pub fn write_iso_ms(out: &mut String, ms: i64) {
    let days = ms.div_euclid(86_400_000);
    let ms_of_day = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let secs = ms_of_day / 1000;
    let millis = ms_of_day % 1000;
    let (hh, mm, ss) = (secs / 3600, (secs / 60) % 60, secs % 60);
    use std::fmt::Write;
    if (0..=9999).contains(&y) {
        // By hand, into one buffer appended once (not `write!`, not a
        // push per field): every row of a follower list has a time.
        let mut iso = Ascii::<24>::padded("0000-00-00T00:00:00.000Z");
        let two = |n: i64| two_digits(n as u32);
        iso.put(0, &two(y / 100));
        iso.put(2, &two(y % 100));
        iso.put(5, &two(m));
        iso.put(8, &two(d));
        iso.put(11, &two(hh));
        iso.put(14, &two(mm));
        iso.put(17, &two(ss));
        iso.put(20, &two(millis / 10));
        iso.put(21, &two(millis % 100));
        iso.push_from(out, 0);
    } else {
        // Out-of-range years keep ISO 8601's expanded form with a sign.
        let _ = write!(
            out,
            "{y:+07}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{millis:03}Z"
        );
    }
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (UTC only) into epoch
/// milliseconds; the fraction is truncated to milliseconds.
pub fn parse_iso_ms(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || *b.last()? != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = b.get(r)?;
        if s.iter().all(u8::is_ascii_digit) {
            Some(s.iter().fold(0i64, |a, &c| a * 10 + i64::from(c - b'0')))
        } else {
            None
        }
    };
    if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    let rest = &b[19..b.len() - 1];
    let millis = match rest {
        [] => 0,
        [b'.', frac @ ..] if !frac.is_empty() && frac.iter().all(u8::is_ascii_digit) => {
            let mut v = 0i64;
            for i in 0..3 {
                v = v * 10 + frac.get(i).map_or(0, |&c| i64::from(c - b'0'));
            }
            v
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    Some(((days * 24 + h) * 60 + mi) * 60_000 + s * 1000 + millis)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's days <-> civil date algorithms (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_iso_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_iso_ms(1_728_935_138_617), "2024-10-14T19:45:38.617Z");
        assert_eq!(format_iso_ms(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(format_iso_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn formats_like_the_padded_format_string() {
        let mut ms: i64 = 1;
        for _ in 0..2_000 {
            ms = ms.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1) % 253_402_300_799_999;
            let ms = ms.abs();
            let (y, m, d) = civil_from_days(ms.div_euclid(86_400_000));
            let t = ms.rem_euclid(86_400_000);
            let expected = format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
                t / 3_600_000,
                t / 60_000 % 60,
                t / 1000 % 60,
                t % 1000
            );
            assert_eq!(format_iso_ms(ms), expected);
        }
    }

    #[test]
    fn parses_and_round_trips() {
        assert_eq!(
            parse_iso_ms("2024-10-14T19:45:38.617Z"),
            Some(1_728_935_138_617)
        );
        assert_eq!(
            parse_iso_ms("2024-10-14T19:45:38Z"),
            Some(1_728_935_138_000)
        );
        assert_eq!(
            parse_iso_ms("2024-10-14T19:45:38.6179Z"),
            Some(1_728_935_138_617)
        );
        assert_eq!(
            parse_iso_ms("2024-10-14T19:45:38.6Z"),
            Some(1_728_935_138_600)
        );
        for ms in [0, 1_700_000_000_123, 4_102_444_800_000, -86_400_001] {
            assert_eq!(parse_iso_ms(&format_iso_ms(ms)), Some(ms));
        }
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "",
            "2024-10-14 19:45:38Z",
            "2024-10-14T19:45:38.617",
            "2024-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2024-10-14T24:00:00Z",
            "2024-10-14T19:45:38.Z",
            "2024-10-14T19:45:38+00:00",
        ] {
            assert_eq!(parse_iso_ms(bad), None, "{bad}");
        }
    }
}
