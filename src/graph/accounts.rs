//! Accounts: who an id is, and how a request's subject (an address, a
//! name, a list id) becomes one.
//!
//! Layout (n accounts, p profiles, l primary lists):
//! - the address table: the addresses sorted (20 bytes each), so an id is
//!   an index and "address ascending" tie-breaks are id comparisons;
//!   found by binary search within one of 2^16 buckets of the first two
//!   bytes (256 KiB), ~2 cache lines instead of ~20. A hash map would
//!   cost several times the table's memory;
//! - each account's primary list token id (8 bytes, 0: none) and the
//!   primary list -> user table (`lookup::TokenMap`: 4 bytes per id up
//!   to the largest when ids are dense, else 16 per list);
//! - the name index: (hash of the lower-cased name, account) sorted by
//!   hash (16 bytes per profile) behind 2^16 buckets of the hash's top
//!   bits. Lookups verify the candidates' names, so hash collisions are
//!   harmless; a map of boxed names would hold an allocation per name
//!   more.
//!
//! Built in two steps: the primary lists are checked and keyed by
//! provisional ids while the large tables stream (`PrimaryLists`), and
//! made final, with the address table, once every address is known.

use rayon::prelude::*;

use super::hash::FastState;
use super::intern::Interner;
use super::lookup::{find_address, Buckets, TokenMap};
use super::{prefetch, AccountId};
use crate::snapshot::{Address, EnsRow, ListRow, PrimaryListRow};

/// The sorted addresses and their buckets: address <-> id.
pub(super) struct AddressTable {
    addresses: Vec<Address>,
    buckets: Buckets,
}

impl AddressTable {
    /// `addresses`: every account's address, sorted (ids are indexes).
    pub(super) fn new(addresses: Vec<Address>) -> AddressTable {
        let buckets = Buckets::new(addresses.len(), |i| Buckets::of_address(&addresses[i]));
        AddressTable { addresses, buckets }
    }
    #[inline]
    pub(super) fn id(&self, address: &Address) -> Option<AccountId> {
        find_address(&self.addresses, &self.buckets, address)
    }
    /// Every address, by id.
    pub(super) fn all(&self) -> &[Address] {
        &self.addresses
    }
}

/// Every account's address and primary list.
pub(super) struct Accounts {
    addresses: AddressTable,
    /// Account -> its primary list's token id (0: none).
    primary_list: Vec<u64>,
    /// Primary list token id -> its user.
    primary_list_user: TokenMap,
    /// The `primary_lists` rows the primary-list rule rejected, of
    /// accounts (few): a live change of the list's user may make them
    /// hold.
    rejected: Vec<(AccountId, u64)>,
}

impl Accounts {
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.addresses.addresses.len()
    }
    #[inline]
    pub(super) fn id(&self, address: &Address) -> Option<AccountId> {
        self.addresses.id(address)
    }
    #[inline]
    pub(super) fn address(&self, id: AccountId) -> &Address {
        &self.addresses.addresses[id as usize]
    }
    /// Every address, by id.
    pub(super) fn addresses(&self) -> &[Address] {
        self.addresses.all()
    }
    /// The account's primary list token id, if it has one.
    #[inline]
    pub(super) fn primary_list(&self, id: AccountId) -> Option<u64> {
        Some(self.primary_list[id as usize]).filter(|&t| t != 0)
    }
    /// The account's `primary_lists` row, whether the rule kept it or not.
    pub(super) fn primary_row(&self, id: AccountId) -> Option<u64> {
        self.primary_list(id).or_else(|| {
            let i = self.rejected.binary_search_by_key(&id, |r| r.0).ok()?;
            Some(self.rejected[i].1)
        })
    }
    /// Primary list token id -> its user (the scans' visibility test).
    pub(super) fn primary_list_users(&self) -> &TokenMap {
        &self.primary_list_user
    }

    /// Starts loading the account's address and primary list.
    #[inline(always)]
    pub(super) fn prefetch(&self, id: usize) {
        prefetch(&self.addresses.addresses[id]);
        prefetch(&self.primary_list[id]);
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.addresses.addresses.capacity() * 20
            + self.primary_list.capacity() * 8
            + self.addresses.buckets.heap_bytes()
            + self.primary_list_user.heap_bytes()
            + self.rejected.capacity() * 16
    }
}

/// The visible primary lists while account ids are provisional.
pub(super) struct PrimaryLists {
    /// (token id, provisional user) in `primary_lists` row order.
    pairs: Vec<(u64, u32)>,
    /// (address, token id) of the rows the rule rejected.
    rejected: Vec<(Address, u64)>,
}

impl PrimaryLists {
    /// The primary-list rule: primary_lists[A] == L and lists[L].user == A
    /// (A not the zero address); the users interned.
    pub(super) fn new(
        lists: &[ListRow],
        primary_lists: &[PrimaryListRow],
        interner: &Interner,
    ) -> PrimaryLists {
        let mut list_users: Vec<(u64, Address)> =
            lists.iter().map(|l| (l.token_id, l.user)).collect();
        list_users.par_sort_unstable_by_key(|l| l.0);
        let user_of = |token: u64| {
            let i = list_users.binary_search_by_key(&token, |l| l.0).ok()?;
            Some(list_users[i].1)
        };
        // The zero address is no user (a list without one), so it has no
        // primary list either, even if a row names one.
        let (kept, rejected): (Vec<&PrimaryListRow>, Vec<&PrimaryListRow>) = primary_lists
            .par_iter()
            .partition(|p| p.address != [0; 20] && user_of(p.token_id) == Some(p.address));
        let rejected = rejected
            .iter()
            .filter(|p| p.address != [0; 20])
            .map(|p| (p.address, p.token_id))
            .collect();
        let users: Vec<Address> = kept.iter().map(|p| p.address).collect();
        let pairs = kept
            .iter()
            .map(|p| p.token_id)
            .zip(interner.ids_par(&users))
            .collect();
        PrimaryLists { pairs, rejected }
    }

    /// Token id -> the user's provisional id (a dense table as minted).
    pub(super) fn provisional_users(&self) -> TokenMap {
        let mut by_token = self.pairs.clone();
        by_token.par_sort_unstable();
        TokenMap::new(by_token)
    }

    /// The accounts, in final ids (`perm`: provisional -> final).
    pub(super) fn finish(self, addresses: AddressTable, perm: &[u32]) -> Accounts {
        let mut primary_list = vec![0u64; addresses.addresses.len()];
        let mut primary_list_user: Vec<(u64, AccountId)> = self
            .pairs
            .into_iter()
            .map(|(token, prov)| {
                let id = perm[prov as usize];
                primary_list[id as usize] = token;
                (token, id)
            })
            .collect();
        primary_list_user.par_sort_unstable();
        let mut rejected: Vec<(AccountId, u64)> = self
            .rejected
            .iter()
            .filter_map(|(a, token)| Some((addresses.id(a)?, *token)))
            .collect();
        rejected.sort_unstable();
        Accounts {
            addresses,
            primary_list,
            primary_list_user: TokenMap::new(primary_list_user),
            rejected,
        }
    }
}

/// Lower-cased name -> account.
pub(super) struct NameIndex {
    /// (hash of the lower-cased name, account), sorted.
    names: Vec<(u64, AccountId)>,
    /// `names` bucketed by the hash's top bits.
    buckets: Buckets,
}

impl NameIndex {
    /// `ids`: each `ens` row's provisional account id.
    pub(super) fn build(ens: &[EnsRow], ids: &[u32]) -> NameIndexBuilder {
        NameIndexBuilder {
            names: ens
                .par_iter()
                .zip(ids)
                .map(|(e, &id)| (name_hash(&e.name.to_lowercase()), id))
                .collect(),
        }
    }

    /// The account whose name lower-cases to `lower` (already lower-cased),
    /// `name_of` giving each candidate's name.
    #[inline]
    pub(super) fn find<'a>(
        &self,
        lower: &str,
        name_of: impl Fn(AccountId) -> Option<&'a str>,
    ) -> Option<AccountId> {
        let hash = name_hash(lower);
        let bucket = &self.names[self.buckets.range(Buckets::of_hash(hash))];
        super::prefetch_lines(bucket);
        let first = bucket.partition_point(|&(h, _)| h < hash);
        bucket[first..]
            .iter()
            .take_while(|&&(h, _)| h == hash)
            .map(|&(_, id)| id)
            .find(|&id| name_of(id).is_some_and(|name| lower_name_is(name, lower)))
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.names.capacity() * std::mem::size_of::<(u64, AccountId)>() + self.buckets.heap_bytes()
    }
}

/// The name index while account ids are provisional.
pub(super) struct NameIndexBuilder {
    /// (hash of the lower-cased name, provisional id).
    names: Vec<(u64, u32)>,
}

impl NameIndexBuilder {
    /// The index in final ids (`perm`: provisional -> final).
    pub(super) fn finish(self, perm: &[u32]) -> NameIndex {
        let mut names = self.names;
        for name in &mut names {
            name.1 = perm[name.1 as usize];
        }
        names.par_sort_unstable();
        let buckets = Buckets::new(names.len(), |i| Buckets::of_hash(names[i].0));
        NameIndex { names, buckets }
    }
}

/// Is `lower` the Unicode lower-casing of `name`? (Without allocating for
/// the usual ASCII name.)
fn lower_name_is(name: &str, lower: &str) -> bool {
    if name.is_ascii() {
        name.len() == lower.len()
            && name
                .bytes()
                .zip(lower.bytes())
                .all(|(a, b)| a.to_ascii_lowercase() == b)
    } else {
        name.to_lowercase() == lower
    }
}

/// The name index's hash of a lower-cased name.
fn name_hash(lower: &str) -> u64 {
    use std::hash::BuildHasher;
    FastState::default().hash_one(lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_case_insensitively_and_collisions_are_verified() {
        let names = ["Alice.eth", "bob.eth", "ÉMILE.eth"];
        let rows: Vec<EnsRow> = names
            .iter()
            .map(|&name| EnsRow {
                address: [0; 20],
                name: name.into(),
                avatar: None,
                header: None,
                display: None,
                records: None,
                chains: None,
                fresh: None,
                resolver: None,
                errors: None,
            })
            .collect();
        // Provisional ids 0, 1, 2 become 2, 0, 1.
        let index = NameIndex::build(&rows, &[0, 1, 2]).finish(&[2, 0, 1]);
        let name_of = |id: AccountId| Some(names[[1, 2, 0][id as usize]]);
        assert_eq!(index.find("alice.eth", name_of), Some(2));
        assert_eq!(index.find("bob.eth", name_of), Some(0));
        assert_eq!(index.find("émile.eth", name_of), Some(1));
        assert_eq!(index.find("carol.eth", name_of), None);
        // A hash match whose name differs (as a collision would) is not one.
        assert_eq!(index.find("bob.eth", |_| Some("rob.eth")), None);
        assert!(lower_name_is("Bob.ETH", "bob.eth"));
        assert!(!lower_name_is("Bob.ETH", "bob.et"));
    }
}
