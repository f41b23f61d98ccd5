//! Where the generated rows land in the indexer's tables: each list's
//! storage slot, how its `user`/`manager` are stored, which lists get the
//! extra rows the export must ignore, the bytes of a record, and the
//! primary-key order the rows are sent in. Everything is a pure function
//! of the token id, so a seed always gives the same database.

use crate::snapshot::Address;

/// 64 bits of noise for lane `lane` of `token_id`.
fn noise(token_id: u64, lane: u64) -> u64 {
    crate::rng::keyed(token_id ^ 0x5107_5eed, lane)
}

/// A list's storage slot: 24 bytes of hash noise of the token id, then the
/// token id big-endian (so distinct token ids have distinct slots).
pub fn slot_of(token_id: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    for lane in 0..3 {
        let at = lane * 8;
        out[at..at + 8].copy_from_slice(&noise(token_id, lane as u64 + 1).to_be_bytes());
    }
    out[24..].copy_from_slice(&token_id.to_be_bytes());
    out
}

/// The out-of-date (non-zero) `user`/`manager` column value of lists whose
/// metadata overrides it.
pub(super) fn stale_address(token_id: u64) -> Address {
    let mut out = [0u8; 20];
    out[..8].copy_from_slice(&noise(token_id, 4).to_be_bytes());
    out[8..16].copy_from_slice(&noise(token_id, 5).to_be_bytes());
    out[16..].copy_from_slice(&noise(token_id, 6).to_be_bytes()[..4]);
    out[0] |= 0x80;
    out
}

/// How a list's `user` and `manager` are stored (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RoleStorage {
    /// Columns and metadata both hold the real values.
    Both,
    /// Columns hold the zero address; metadata the real values.
    MetadataOverZero,
    /// Only the columns (no metadata rows).
    ColumnsOnly,
    /// Columns hold a stale non-zero address; metadata the real values.
    MetadataOverStale,
}

pub(super) fn role_storage(token_id: u64) -> RoleStorage {
    match token_id % 4 {
        0 => RoleStorage::Both,
        1 => RoleStorage::MetadataOverZero,
        2 => RoleStorage::ColumnsOnly,
        _ => RoleStorage::MetadataOverStale,
    }
}

/// Lists that also get a `location-note` metadata row.
pub(super) fn has_location_note(token_id: u64) -> bool {
    token_id % 97 == 5
}

/// Lists that also hold a record of record type 2.
pub(super) fn has_foreign_record(token_id: u64) -> bool {
    token_id % 53 == 7
}

/// The 22 bytes of a version-1 type-1 (address) record.
pub(super) fn address_record(address: &Address) -> [u8; 22] {
    let mut out = [0u8; 22];
    out[0] = 1;
    out[1] = 1;
    out[2..].copy_from_slice(address);
    out
}

/// The (record, record_data) of a type-2 record: 32 bytes of data.
pub(super) fn foreign_record(token_id: u64) -> (Vec<u8>, [u8; 32]) {
    let mut data = [0u8; 32];
    for lane in 0..4 {
        let at = lane * 8;
        data[at..at + 8].copy_from_slice(&noise(token_id, 10 + lane as u64).to_be_bytes());
    }
    let mut record = vec![1, 2];
    record.extend_from_slice(&data);
    (record, data)
}

/// The rows of `rows` grouped by list (a list's rows are contiguous in the
/// generated tables), lists in slot order and each list's rows sorted by
/// `order`: the order of the (chain_id, contract_address, slot, record…)
/// primary keys, so PostgreSQL appends to those indexes instead of
/// inserting at random pages of an index far larger than its buffers.
pub(super) fn in_key_order<'a, T>(
    rows: &'a [T],
    token_id: impl Fn(&T) -> u64,
    order: impl Fn(&T, &T) -> std::cmp::Ordering + Copy + 'a,
) -> impl Iterator<Item = (u64, [u8; 32], Vec<&'a T>)> + 'a {
    let mut lists: Vec<([u8; 32], u64, usize, usize)> = Vec::new();
    let mut start = 0;
    for i in 1..=rows.len() {
        let token = token_id(&rows[start]);
        if i == rows.len() || token_id(&rows[i]) != token {
            lists.push((slot_of(token), token, start, i));
            start = i;
        }
    }
    lists.sort_unstable();
    lists.into_iter().map(move |(slot, token, start, end)| {
        let mut list: Vec<&T> = rows[start..end].iter().collect();
        list.sort_by(|a, b| order(a, b));
        (token, slot, list)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn slots_are_distinct_and_end_with_the_token_id() {
        let mut seen = HashSet::new();
        for token in (0..20_000u64).chain([u64::MAX, 1 << 40, (1 << 63) - 1]) {
            let slot = slot_of(token);
            assert_eq!(slot[24..], token.to_be_bytes());
            assert!(seen.insert(slot), "slot of {token} repeats");
            // The 24 noise bytes differ between neighbours.
            assert_ne!(slot[..24], slot_of(token ^ 1)[..24]);
        }
        assert_eq!(slot_of(42), slot_of(42), "deterministic");
    }

    #[test]
    fn stale_addresses_are_not_zero() {
        assert!((0..10_000).all(|t| stale_address(t) != [0u8; 20]));
    }

    #[test]
    fn rows_come_in_primary_key_order() {
        let rows: Vec<(u64, u8)> = vec![(5, 3), (5, 1), (9, 2), (2, 7), (2, 0), (2, 4)];
        let out: Vec<_> = in_key_order(&rows, |r| r.0, |a, b| a.1.cmp(&b.1)).collect();
        assert_eq!(out.len(), 3);
        assert!(out.windows(2).all(|w| w[0].1 < w[1].1), "slot order");
        for (token, slot, list) in &out {
            assert_eq!(*slot, slot_of(*token));
            assert!(list.iter().all(|r| r.0 == *token));
            assert!(list.windows(2).all(|w| w[0].1 < w[1].1));
        }
        assert_eq!(out.iter().map(|l| l.2.len()).sum::<usize>(), rows.len());
        assert_eq!(
            in_key_order(&rows[..0], |r| r.0, |a, b| a.cmp(b)).count(),
            0
        );
    }

    #[test]
    fn role_storage_uses_every_path() {
        let kinds: HashSet<_> = (1..=4).map(role_storage).map(|k| k as u8).collect();
        assert_eq!(kinds.len(), 4);
        assert_eq!(address_record(&[7; 20])[..2], [1, 1]);
        let (record, data) = foreign_record(7);
        assert_eq!(record[..2], [1, 2]);
        assert_eq!(record[2..], data);
    }
}
