//! The search index against a plain scan of the same texts.

use super::build::BLOCK;
use super::*;
use crate::graph::term::{address_bytes, contains};

/// A name too long for its entry's length field is found through
/// `long_name_ends`; the names after it still start where they do.
#[test]
fn names_past_the_entry_length_field() {
    let long = format!("{}needle", "x".repeat(70_000));
    let names = ["Ann", long.as_str(), "Bob"];
    let addresses: Vec<Address> = (0..3u8).map(|i| [i + 1; 20]).collect();
    let index = SearchIndex::build(&[0, 1, 2], &addresses, |id| Some(names[id as usize]));
    assert_eq!(index.name(0), "ann");
    assert_eq!(index.name(1), long);
    assert_eq!(index.name(2), "bob");
    let found = |term: &str| -> Vec<AccountId> {
        let t = Term::new(term);
        (0..3).filter(|&id| index.matches(&t, id)).collect()
    };
    assert_eq!(found("needle"), [1]);
    assert_eq!(found("bob"), [2]);
    assert_eq!(found("0x0303"), [2]);
    assert_eq!(found("an"), [0]);
    assert!(found("zz").is_empty());
    assert!(!index.matches(&Term::new("bob"), 3));
}

/// Long posting lists (skips used) agree with a plain scan.
#[test]
fn intersection_with_skips_matches_a_scan() {
    // More than two blocks of the two-pass build.
    let n = 2 * BLOCK + 3000;
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        state >> 33
    };
    let addresses: Vec<Address> = (0..n)
        .map(|_| std::array::from_fn(|_| next() as u8))
        .collect();
    // A 6-letter alphabet: every trigram is in hundreds of names, and
    // runs of hex digits (`a`-`d`, `1`) are broken by `x`.
    let names: Vec<String> = (0..n)
        .map(|_| {
            let len = 4 + next() as usize % 8;
            (0..len)
                .map(|_| b"abcd1x"[next() as usize % 6] as char)
                .collect()
        })
        .collect();
    let leaderboard: Vec<AccountId> = (0..n as AccountId).collect();
    let index = SearchIndex::build(&leaderboard, &addresses, |id| {
        Some(names[id as usize].as_str())
    });
    assert!(!index.skips.is_empty());
    let mut terms: Vec<String> = vec!["abc".into(), "dddd".into(), "abcdab".into(), "0x0".into()];
    for i in 0..60 {
        let name = &names[next() as usize % n];
        let len = 3 + i % 4;
        if name.len() >= len {
            terms.push(name[name.len() - len..].to_owned());
        }
        let hex = address_bytes(&addresses[next() as usize % n]);
        let from = next() as usize % 36;
        terms.push(String::from_utf8(hex[from..from + 3 + i % 5].to_vec()).unwrap());
    }
    // Names, addresses and hex across names: lists of equal and of
    // very different lengths (both ways of `candidates`).
    terms.extend(["abcd0", "0xab", "a0", "dab1", "x00"].map(String::from));
    // Hex runs in names: 4 digits, and runs broken by a byte that is not
    // one (the trigrams across it are needed).
    terms.extend(["ab1c", "1ddd", "xab1c", "ab1x", "cc1dxa", "bxc1da"].map(String::from));
    // An address's last digits (3 of them are in no 4-digit gram),
    // its first, and an `x` where no address has one.
    for _ in 0..20 {
        let hex = address_bytes(&addresses[next() as usize % n]);
        let hex = std::str::from_utf8(&hex).unwrap();
        terms.extend([&hex[39..], &hex[38..], &hex[..3], &hex[1..4], &hex[..7]].map(String::from));
    }
    terms.extend(["0x0x", "ax1", "1x2", "xx1", "0xg"].map(String::from));
    for term in &terms {
        if term.len() >= 3 {
            let mut leapfrog = Vec::new();
            index.each_candidate(term.as_bytes(), |p| {
                leapfrog.push(p as u32);
                false
            });
            let candidates = index
                .plan(term)
                .map_or_else(Vec::new, IndexPlan::candidates);
            assert_eq!(candidates, leapfrog, "{term}");
        }
        let all: Vec<usize> = (0..n)
            .filter(|&p| {
                names[p].contains(term.as_str())
                    || contains(&address_bytes(&addresses[p]), term.as_bytes())
            })
            .collect();
        for (offset, limit) in [
            (0, usize::MAX),
            (0, 10),
            (7, 5),
            (all.len().saturating_sub(2), 10),
        ] {
            let want: Vec<usize> = all.iter().copied().skip(offset).take(limit).collect();
            let got = index.find(term, offset, limit, n, |p| p as AccountId);
            assert_eq!(got, want, "term {term:?} offset {offset} limit {limit}");
        }
    }
}

/// A name's run of 4 hex digits is one gram, which stands for the two
/// trigrams inside it; a trigram across a byte that is not a hex digit
/// is still needed.
#[test]
fn a_run_of_hex_digits_stands_for_its_trigrams() {
    use super::grams::{gram_key, name_grams, Needed, NAME_QUAD};
    assert_eq!(name_grams(b"12ab"), Needed::All(vec![NAME_QUAD + 0x12ab]));
    assert_eq!(
        name_grams(b"12abc"),
        Needed::All(vec![NAME_QUAD + 0x12ab, NAME_QUAD + 0x2abc])
    );
    assert_eq!(
        name_grams(b"r12ab"),
        Needed::All(vec![gram_key(b"r12"), NAME_QUAD + 0x12ab])
    );
    assert_eq!(
        name_grams(b"12abx"),
        Needed::All(vec![gram_key(b"abx"), NAME_QUAD + 0x12ab])
    );
    assert_eq!(
        name_grams(b"ab1x"),
        Needed::All(vec![gram_key(b"ab1"), gram_key(b"b1x")])
    );
}
