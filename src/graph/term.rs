//! A search term and the literal, case-insensitive substring tests the
//! searches make of it against names and addresses (`search/` holds the
//! index that finds candidates; this file, what a candidate is tested
//! with).
//!
//! Cost model: a name or an address is tens of bytes, so a test is
//! dominated by how the bytes are compared, not by the algorithm. A term
//! of up to 8 bytes tests every start of a haystack of up to 64 bytes at
//! once, in 16-byte lanes; a longer term or haystack
//! takes a first-byte scan. A name is compared only if its `byte_mask`
//! holds the term's. An address is tested only for a term of
//! `0-9a-fx`, and for 3+ hex digits only once one of the two bytes the
//! term must contain is found among its 20 bytes (~85% of addresses are
//! turned away for a 3-digit term before any hex is written).

use crate::snapshot::Address;

/// `0x` + 40 lower-case hex digits in a stack buffer (no allocation on the
/// search hot path).
pub(super) fn address_bytes(a: &Address) -> [u8; 42] {
    let literal = crate::json::address_literal(a);
    let mut out = [0u8; 42];
    // The JSON literal without its quotes.
    out.copy_from_slice(&literal.as_bytes()[1..43]);
    out
}

/// Whether `needle` occurs in `haystack`: a first-byte scan, then a
/// compare. Haystacks are names and addresses (tens of bytes), where this
/// beats `str::contains`, whose searcher is built anew on every call.
/// Bytewise is right for UTF-8 too: a character's encoding never starts
/// inside another's.
#[inline]
pub(super) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    if haystack.len() < needle.len() {
        return false;
    }
    let last_start = haystack.len() - needle.len();
    (0..=last_start).any(|i| haystack[i] == first && &haystack[i + 1..i + needle.len()] == rest)
}

/// Longest haystack `contains_word` takes (names past it use `contains`).
const WORD_HAYSTACK_MAX: usize = 64;

/// Whether a term of at most 8 bytes, packed little-endian in `word`,
/// occurs in `haystack` (at most `WORD_HAYSTACK_MAX` bytes): every start
/// is tested at once, a byte of the term at a time, in loops of fixed
/// length the compiler turns into vector compares. It replaced a
/// first-byte test and a `memcmp` call per hit (hex terms in addresses
/// hit the first byte every 16 bytes), most of a hex term's search in a
/// hub's followers.
#[inline]
fn contains_word(haystack: &[u8], len: usize, word: u64) -> bool {
    let mut padded = [0u8; WORD_HAYSTACK_MAX + 8];
    padded[..haystack.len()].copy_from_slice(haystack);
    contains_word_padded(&padded, haystack.len(), len, word)
}

/// `contains_word` of `padded[..hay_len]`, in as few 16-byte lanes as
/// the haystack needs (a name rarely needs more than one).
#[inline]
fn contains_word_padded(
    padded: &[u8; WORD_HAYSTACK_MAX + 8],
    hay_len: usize,
    len: usize,
    word: u64,
) -> bool {
    let Some(last_start) = hay_len.checked_sub(len) else {
        return false;
    };
    match last_start {
        0..16 => starts_holding::<16>(padded, last_start, len, word),
        16..32 => starts_holding::<32>(padded, last_start, len, word),
        _ => starts_holding::<WORD_HAYSTACK_MAX>(padded, last_start, len, word),
    }
}

/// Whether the term starts at any of `padded`'s first `last_start + 1`
/// bytes (`last_start < STARTS`).
#[inline]
fn starts_holding<const STARTS: usize>(
    padded: &[u8; WORD_HAYSTACK_MAX + 8],
    last_start: usize,
    len: usize,
    word: u64,
) -> bool {
    let mut hits = [true; STARTS];
    for j in 0..len.min(8) {
        let byte = (word >> (8 * j)) as u8;
        let window = &padded[j..j + STARTS];
        for (hit, &b) in hits.iter_mut().zip(window) {
            *hit &= b == byte;
        }
    }
    // Starts past `last_start` would read beyond the haystack.
    hits.iter().enumerate().fold(false, |any, (start, &hit)| {
        any | (hit & (start <= last_start))
    })
}

/// The bytes a text holds, as a set of 48 classes (the low 48 bits): a
/// letter or a digit each, every other byte folded into the 12 classes
/// left. A name can hold a term only if its mask covers the term's, so
/// the mask turns away most names before their bytes are read (a term of
/// 3-4 letters and digits needs all of them in one name).
#[inline]
pub(super) fn byte_mask(text: &[u8]) -> u64 {
    text.iter().fold(0u64, |mask, &b| {
        let class = match b {
            b'a'..=b'z' => b - b'a',
            b'0'..=b'9' => 26 + (b - b'0'),
            _ => 36 + b % 12,
        };
        mask | 1u64 << class
    })
}

/// A search term, trimmed and lower-cased, with what is known of it before
/// any account is tested.
#[derive(Clone, Debug)]
pub struct Term<'a> {
    lower: &'a str,
    /// Only `0-9a-fx` can be part of `0x` + lower-case hex.
    may_be_in_address: bool,
    /// A term of 1-8 bytes packed for `contains_word`.
    packed: Option<u64>,
    /// A term of 3+ hex digits lies in an address's hex at an even digit
    /// (its first two digits are then one byte of the address) or at an
    /// odd one (its second and third are): an address holding neither
    /// byte cannot match, which 20 byte compares tell (85% of addresses
    /// for a 3-digit term) before any hex is written.
    address_bytes: Option<[u8; 2]>,
    /// `byte_mask` of the term.
    mask: u64,
}

impl<'a> Term<'a> {
    /// Whether a text whose `byte_mask` is `text_mask` may hold the term.
    #[inline(always)]
    pub(super) fn may_be_in(&self, text_mask: u64) -> bool {
        self.mask & !text_mask == 0
    }

    /// Whether `text` (a lower-cased name) holds the term.
    #[inline]
    pub fn holds(&self, text: &[u8]) -> bool {
        match self.packed {
            Some(word) if text.len() <= WORD_HAYSTACK_MAX => {
                contains_word(text, self.lower.len(), word)
            }
            _ => contains(text, self.lower.as_bytes()),
        }
    }

    /// Whether `0x` + the lower-case hex of `address` holds the term.
    #[inline]
    pub fn in_address(&self, address: &Address) -> bool {
        if !self.may_be_in_address {
            return false;
        }
        if let Some([even, odd]) = self.address_bytes {
            // No early exit: a loop the compiler turns into vector compares.
            let holds = address
                .iter()
                .fold(false, |any, &x| any | (x == even) | (x == odd));
            if !holds {
                return false;
            }
        }
        let mut padded = [0u8; WORD_HAYSTACK_MAX + 8];
        padded[..42].copy_from_slice(&address_bytes(address));
        match self.packed {
            Some(word) => contains_word_padded(&padded, 42, self.lower.len(), word),
            None => contains(&padded[..42], self.lower.as_bytes()),
        }
    }

    /// The term as searched (trimmed, lower-cased).
    pub fn text(&self) -> &'a str {
        self.lower
    }

    pub fn new(lower: &'a str) -> Term<'a> {
        let bytes = lower.as_bytes();
        let packed = (1..=8).contains(&bytes.len()).then(|| {
            bytes
                .iter()
                .enumerate()
                .fold(0u64, |acc, (k, &b)| acc | u64::from(b) << (8 * k))
        });
        let digit = |b: u8| char::from(b).to_digit(16).map(|d| d as u8);
        let hex = bytes.iter().all(|&b| digit(b).is_some());
        let address_bytes = match bytes {
            [a, b, c, ..] if hex => {
                let d = |x: &u8| digit(*x).unwrap_or(0);
                Some([(d(a) << 4) | d(b), (d(b) << 4) | d(c)])
            }
            _ => None,
        };
        Term {
            lower,
            packed,
            address_bytes,
            mask: byte_mask(bytes),
            may_be_in_address: lower.len() <= 42
                && lower
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b) || b == b'x'),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The address byte filter of hex terms never drops a match: terms
    /// cut from the addresses' hex at even and odd digits, and random ones.
    #[test]
    fn hex_terms_match_addresses_like_contains() {
        let mut rng = crate::rng::SplitMix64::new(0x51_7cc1_b727_220a);
        let mut next = move || rng.next_u64() as usize;
        let addresses: Vec<Address> = (0..300)
            .map(|_| std::array::from_fn(|_| next() as u8))
            .collect();
        for i in 0..3_000 {
            let hex = address_bytes(&addresses[next() % 300]);
            let len = 3 + next() % 6;
            let term: String = if i % 2 == 0 {
                let from = next() % (42 - len + 1);
                String::from_utf8(hex[from..from + len].to_vec()).unwrap()
            } else {
                (0..len)
                    .map(|_| b"0123456789abcdef"[next() % 16] as char)
                    .collect()
            };
            let t = Term::new(&term);
            for a in &addresses {
                let expected = contains(&address_bytes(a), term.as_bytes());
                assert_eq!(t.in_address(a), expected, "{term}");
            }
        }
    }

    #[test]
    fn packed_terms_match_like_contains() {
        let mut rng = crate::rng::SplitMix64::new(0x9e37_79b9_7f4a_7c15);
        let mut next = move || rng.next_u64() as usize;
        for _ in 0..20_000 {
            // Three symbols (NUL among them) so that matches are common.
            let hay: Vec<u8> = (0..next() % 70).map(|_| b"\0ab"[next() % 3]).collect();
            let needle: String = (0..1 + next() % 8)
                .map(|_| ['a', 'b', '\0'][next() % 3])
                .collect();
            let term = Term::new(&needle);
            let word = term.packed.expect("1-8 bytes are packed");
            if hay.len() <= WORD_HAYSTACK_MAX {
                assert_eq!(
                    contains_word(&hay, needle.len(), word),
                    contains(&hay, needle.as_bytes()),
                    "{hay:?} {needle:?}"
                );
            }
        }
        assert!(Term::new("123456789").packed.is_none());
    }

    /// The name mask never turns away a name that holds the term, and
    /// turns away one that lacks a letter, a digit or another byte of it.
    #[test]
    fn name_masks_never_drop_a_match() {
        let mut rng = crate::rng::SplitMix64::new(0x2545_f491_4f6c_dd1d);
        let mut next = move || rng.next_u64() as usize;
        // Letters, digits, punctuation and multi-byte characters.
        let alphabet = ["a", "b", "z", "0", "9", ".", "-", "_", "é", "ß", "🦀", "\0"];
        for _ in 0..20_000 {
            let pick = |next: &mut dyn FnMut() -> usize, n: usize| -> String {
                (0..n).map(|_| alphabet[next() % alphabet.len()]).collect()
            };
            let (name_len, term_len) = (next() % 12, 1 + next() % 4);
            let name = pick(&mut next, name_len);
            let term = pick(&mut next, term_len);
            let t = Term::new(&term);
            if contains(name.as_bytes(), term.as_bytes()) {
                assert!(t.may_be_in(byte_mask(name.as_bytes())), "{name:?} {term:?}");
            }
        }
        let t = Term::new("tren");
        assert!(t.may_be_in(byte_mask(b"trent371795.eth")));
        assert!(t.may_be_in(byte_mask(b"nert")));
        assert!(!t.may_be_in(byte_mask(b"trea.eth")));
        assert!(!Term::new("ab9").may_be_in(byte_mask(b"ab8")));
        assert!(!Term::new("a-b").may_be_in(byte_mask(b"ab")));
        assert!(Term::new("").may_be_in(byte_mask(b"")));
        // The search index keeps a name's length above the mask.
        let every_byte: Vec<u8> = (0..=255).collect();
        assert_eq!(byte_mask(&every_byte), (1 << 48) - 1);
    }
}
