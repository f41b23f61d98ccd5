//! Percent-decoding and the query string: decoded `name=value` pairs and
//! the typed readers every family's `parse` uses (text, numbers, `limit`,
//! `offset`), with the API reference's 400 texts (docs/openapi.yaml).

use std::borrow::Cow;

use crate::error::ApiError;

/// Percent-decodes `%XX` sequences (others kept as they are); `plus` also
/// turns `+` into a space, as form encoding does. Text with nothing to
/// decode (the usual case) is borrowed, not copied.
pub fn percent_decode(raw: &[u8], plus: bool) -> Cow<'_, [u8]> {
    if !raw.iter().any(|&c| c == b'%' || (plus && c == b'+')) {
        return Cow::Borrowed(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    percent_decode_into(raw, plus, &mut out);
    Cow::Owned(out)
}

/// `percent_decode`, appending to `out`.
pub fn percent_decode_into(raw: &[u8], plus: bool, out: &mut Vec<u8>) {
    if !plus {
        out.extend(percent_encoding::percent_decode(raw));
        return;
    }
    // `+` is no hex digit, so no escape spans one: decoding the pieces
    // between them is decoding the whole.
    for (i, piece) in raw.split(|&c| c == b'+').enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.extend(percent_encoding::percent_decode(piece));
    }
}

/// Removes leading and trailing ASCII whitespace ("trimmed" in the API
/// reference, docs/openapi.yaml).
pub fn trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii_whitespace())
}

/// Decoded query pairs in request order (`application/x-www-form-urlencoded`).
#[derive(Clone, Debug, Default)]
pub struct Query<'a> {
    /// The first `INLINE_PAIRS` pairs (most queries have fewer: no
    /// allocation on the common path), then the rest.
    inline: [Option<Pair<'a>>; INLINE_PAIRS],
    more: Vec<Pair<'a>>,
}

const INLINE_PAIRS: usize = 6;

type Pair<'a> = (Decoded<'a>, Decoded<'a>);

/// A decoded name or value, borrowed from the query when nothing needed
/// decoding.
type Decoded<'a> = Cow<'a, [u8]>;

impl<'a> Query<'a> {
    pub fn parse(raw: &'a str) -> Query<'a> {
        let mut query = Query::default();
        let pairs = raw.split('&').filter(|p| !p.is_empty()).map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (
                percent_decode(k.as_bytes(), true),
                percent_decode(v.as_bytes(), true),
            )
        });
        for (i, pair) in pairs.enumerate() {
            match query.inline.get_mut(i) {
                Some(slot) => *slot = Some(pair),
                None => query.more.push(pair),
            }
        }
        query
    }

    /// The pairs in request order.
    fn pairs(&self) -> impl Iterator<Item = &Pair<'a>> {
        self.inline
            .iter()
            .map_while(Option::as_ref)
            .chain(&self.more)
    }

    /// The first occurrence's value, as UTF-8 text.
    pub fn text(&self, name: &str) -> Result<Option<&str>, ApiError> {
        match self.pairs().find(|(k, _)| **k == *name.as_bytes()) {
            None => Ok(None),
            Some((_, v)) => std::str::from_utf8(v)
                .map(Some)
                .map_err(|_| ApiError::BadParameter(format!("{name} is not valid UTF-8"))),
        }
    }

    /// Every occurrence's value, in request order, as UTF-8 text.
    pub fn texts(&self, name: &str) -> Result<Vec<&str>, ApiError> {
        self.pairs()
            .filter(|(k, _)| **k == *name.as_bytes())
            .map(|(_, v)| {
                std::str::from_utf8(v)
                    .map_err(|_| ApiError::BadParameter(format!("{name} is not valid UTF-8")))
            })
            .collect()
    }

    /// A non-negative decimal integer; missing or empty gives `None`.
    pub fn number(&self, name: &str) -> Result<Option<u64>, ApiError> {
        let Some(text) = self.text(name)? else {
            return Ok(None);
        };
        if text.is_empty() {
            return Ok(None);
        }
        let bad = || ApiError::BadParameter(format!("{name} must be a non-negative integer"));
        if !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        text.parse::<u64>().map(Some).map_err(|_| bad())
    }

    /// `limit`: `default` when missing or empty (lowered to `max_limit`
    /// when above it), 400 above `max_limit`.
    pub fn limit(&self, default: u64, max_limit: u64) -> Result<usize, ApiError> {
        let n = self.number("limit")?.unwrap_or(default.min(max_limit));
        if n > max_limit {
            return Err(ApiError::BadParameter(format!(
                "limit must be at most {max_limit}"
            )));
        }
        Ok(to_usize(n))
    }

    /// `offset`, 0 when missing or empty.
    pub fn offset(&self) -> Result<usize, ApiError> {
        Ok(to_usize(self.number("offset")?.unwrap_or(0)))
    }

    /// `cache=fresh`: skip the cache lookup. `cache` is every endpoint's
    /// last parameter, so it is read last.
    pub fn fresh(&self) -> Result<bool, ApiError> {
        Ok(self.text("cache")? == Some("fresh"))
    }
}

/// The value of the entry of `choices` equal to `text` ignoring ASCII
/// case, else `default` (without lower-casing a copy).
pub fn keyword<T: Copy>(text: &str, choices: &[(&str, T)], default: T) -> T {
    choices
        .iter()
        .find(|(name, _)| text.eq_ignore_ascii_case(name))
        .map_or(default, |&(_, value)| value)
}

/// Beyond `usize` a count means "everything", which is what a saturated
/// offset or limit gives anyway.
fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding_keeps_broken_escapes() {
        assert_eq!(*percent_decode(b"a%2", false), *b"a%2");
        assert_eq!(*percent_decode(b"%zz%41", false), *b"%zzA");
        assert_eq!(*percent_decode(b"a+b%2B", true), *b"a b+");
        assert_eq!(*percent_decode(b"a+b", false), *b"a+b");
        assert_eq!(*percent_decode(b"%", true), *b"%");
        // `+` inside a would-be escape breaks it, and still means a space.
        assert_eq!(*percent_decode(b"%4+1%+41", true), *b"%4 1% 41");
        assert_eq!(*percent_decode(b"%4+1", false), *b"%4+1");
        // Bytes that are not UTF-8 come out as they are; the readers judge.
        assert_eq!(*percent_decode(b"%ff%FE%41", true), [0xff, 0xfe, b'A']);
        // Nothing to decode: borrowed, not copied.
        assert!(matches!(
            percent_decode(b"limit", true),
            Cow::Borrowed(b"limit")
        ));
        assert!(matches!(percent_decode(b"a+b", true), Cow::Owned(_)));
    }

    #[test]
    fn first_occurrence_counts_and_empty_means_default() {
        let q = Query::parse("limit=&offset=007&limit=3&&flag");
        assert_eq!(q.limit(10, 1000), Ok(10));
        assert_eq!(q.offset(), Ok(7));
        assert_eq!(q.text("flag"), Ok(Some("")));
        assert_eq!(q.text("missing"), Ok(None));
        assert_eq!(
            Query::parse("limit=50").limit(10, 3),
            Err(ApiError::BadParameter("limit must be at most 3".into()))
        );
        assert_eq!(Query::parse("").limit(50, 3), Ok(3));
        assert_eq!(Query::parse("cache=fresh").fresh(), Ok(true));
        assert_eq!(Query::parse("cache=Fresh").fresh(), Ok(false));
    }
}
