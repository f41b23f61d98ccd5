//! Which grams a text has and which a term needs: a name's byte
//! trigrams and runs of 4 hex digits, an address's 4-hex-digit grams and
//! first digits, the keys they take in the index's one table, and the
//! clauses a term turns into (see the index's module doc).

use crate::snapshot::Address;

/// A gram key with no dense index (and a gram no list holds).
pub(super) const NO_GRAM: u32 = u32::MAX;

/// A name's trigram: its three bytes (24 bits).
pub(super) fn gram_key(w: &[u8]) -> u32 {
    (u32::from(w[0]) << 16) | (u32::from(w[1]) << 8) | u32::from(w[2])
}

// An address's grams, above every name trigram: its hex digits are 4
// bits each, so four of them make a 16-bit gram, where four bytes of
// text would not fit a table.
/// Any 4 consecutive hex digits of the address (37 an address).
pub(super) const QUAD: u32 = 1 << 24;
/// Its first digit, and its first two (`0x` + 1 or 2 digits).
pub(super) const FIRST1: u32 = QUAD + (1 << 16);
pub(super) const FIRST2: u32 = FIRST1 + 16;
/// Any 4 consecutive hex digits (`0-9a-f`) of a name: a term of 4 hex
/// digits finds the names holding it in one short list, where its two
/// trigrams were lists of ~3,200 at a million accounts (names hold
/// digits).
pub(super) const NAME_QUAD: u32 = FIRST2 + 256;
/// Gram keys are below this.
pub(super) const GRAM_KEYS: usize = (NAME_QUAD + (1 << 16)) as usize;

/// The 40 hex digits of an address, as values 0-15.
pub(super) fn nibbles(address: &Address) -> [u32; 40] {
    std::array::from_fn(|k| u32::from(address[k / 2] >> (4 * (1 - k % 2)) & 0xf))
}

/// Packs up to 4 hex digit values, most significant first.
pub(super) fn pack(digits: &[u32]) -> u32 {
    digits.iter().fold(0, |acc, &d| acc << 4 | d)
}

/// A lower-case hex digit's value (terms and names are lower-cased).
fn hex_digit(b: u8) -> Option<u32> {
    match b {
        b'0'..=b'9' => Some(u32::from(b - b'0')),
        b'a'..=b'f' => Some(u32::from(b - b'a' + 10)),
        _ => None,
    }
}

/// The `NAME_QUAD` gram of each 4-byte window of `text` that is all hex
/// digits, with where the window starts.
fn hex_quads(text: &[u8]) -> impl Iterator<Item = (usize, u32)> + '_ {
    text.windows(4).enumerate().filter_map(|(at, w)| {
        let value = w
            .iter()
            .try_fold(0, |acc, &b| Some(acc << 4 | hex_digit(b)?))?;
        Some((at, NAME_QUAD + value))
    })
}

/// The distinct grams of an entry's texts, sorted: its address's (see
/// `QUAD`) and its name's trigrams and hex runs (`NAME_QUAD`).
pub(super) fn entry_grams(address: &Address, name_lower: &str, out: &mut Vec<u32>) {
    out.clear();
    let digits = nibbles(address);
    out.extend(digits.windows(4).map(|w| QUAD + pack(w)));
    out.push(FIRST1 + digits[0]);
    out.push(FIRST2 + pack(&digits[..2]));
    let name = name_lower.as_bytes();
    out.extend(name.windows(3).map(gram_key));
    out.extend(hex_quads(name).map(|(_, gram)| gram));
    out.sort_unstable();
    out.dedup();
}

/// Grams a text must have to hold a term: all of them, or (3 hex
/// digits anywhere in an address) any one of them.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Needed {
    All(Vec<u32>),
    Any(Vec<u32>),
}

/// The grams an address holding `term` (trimmed, lower-cased, 3+ bytes)
/// must have. `None` when no address holds it (a byte other than
/// `0-9a-f`, or an `x` other than the one of `0x`).
pub(super) fn address_grams(term: &[u8]) -> Option<Needed> {
    let hex_from = match term {
        [b'x', ..] => 1,
        [b'0', b'x', ..] => 2,
        _ => 0,
    };
    let digits: Vec<u32> = term[hex_from..]
        .iter()
        .map(|&b| hex_digit(b))
        .collect::<Option<_>>()?;
    let mut all: Vec<u32> = digits.windows(4).map(|w| QUAD + pack(w)).collect();
    match (hex_from, digits.as_slice()) {
        // The address starts with the digits after `x`.
        (1.., [a, b, ..]) => all.push(FIRST2 + pack(&[*a, *b])),
        (1.., [a]) => all.push(FIRST1 + a),
        // 3 digits anywhere: a `QUAD` they start, or one they end (the
        // last three of an address), so no address needs a gram of its
        // last 3 digits, which would cost memory for no faster search.
        (0, [_, _, _]) => {
            let mut any: Vec<u32> = (0..16)
                .flat_map(|d| {
                    [
                        QUAD + (pack(&digits) << 4 | d),
                        QUAD + (d << 12 | pack(&digits)),
                    ]
                })
                .collect();
            any.sort_unstable();
            any.dedup();
            return Some(Needed::Any(any));
        }
        (0, [_, _, _, ..]) => {}
        // Under 3 bytes: no gram bounds it.
        _ => return None,
    }
    all.sort_unstable();
    all.dedup();
    Some(Needed::All(all))
}

/// The grams a name holding `term` (3+ bytes) must have: the gram of
/// each run of 4 hex digits, and each trigram no such run holds (the
/// run's gram implies its two).
pub(super) fn name_grams(term: &[u8]) -> Needed {
    let quads: Vec<(usize, u32)> = hex_quads(term).collect();
    let in_quad = |at: usize| quads.iter().any(|&(q, _)| q == at || q + 1 == at);
    let mut grams: Vec<u32> = (term.windows(3).enumerate())
        .filter(|&(at, _)| !in_quad(at))
        .map(|(_, w)| gram_key(w))
        .chain(quads.iter().map(|&(_, gram)| gram))
        .collect();
    grams.sort_unstable();
    grams.dedup();
    Needed::All(grams)
}
