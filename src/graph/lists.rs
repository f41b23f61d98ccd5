//! Lists: every row of `lists`, by token id. Which lists answer (any list
//! with a user, primary or not), each list's user, the own records of the
//! lists that are not their user's primary list, each account's lists by
//! role (user, owner or manager), and the counts of `/stats`.
//!
//! Layout (l lists, r records in lists that are not their user's primary
//! list, m (account, list) role pairs):
//! - token id -> list ordinal (`TokenMap`: 4 bytes per id up to the
//!   largest when ids are dense, else 16 per list); ordinals follow token
//!   ids, so ordinal order is token order;
//! - per ordinal its user (4 bytes; `NO_USER` for the zero address),
//!   owner and manager (8 bytes; the live index reads them); the ops of
//!   lists that are not visible ([`HiddenOps`], ~40 bytes each: a live
//!   index needs them when such a list becomes primary);
//! - the own records of the other lists: a [`Records`] (the forward
//!   index's type) whose row is the list's ordinal, 12 bytes per record.
//!   A primary list's own records are its user's row of the forward index;
//! - each account's lists, token ids ascending: a CSR of its own (4 bytes
//!   of offset per account, 8 per pair);
//! - the four counts of `/stats`.
//!
//! Built in two steps: while the large tables stream, the users, owners
//! and managers are interned to provisional ids and token ids map to
//! ordinals (`ListsBuilder`); the other lists' records become their own
//! CSR once every address is known.

use rayon::prelude::*;

use super::hidden_ops::{HiddenOp, HiddenOps};
use super::intern::Interner;
use super::lookup::{TokenMap, NO_USER};
use super::records::Records;
use super::AccountId;
use crate::snapshot::{Address, ListRow};

/// The counts of `/stats` (endpoint 41 of the API reference,
/// docs/openapi.yaml).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GlobalStats {
    /// Distinct addresses with a record in any list in `lists`.
    pub address_count: u64,
    /// Rows of `lists`.
    pub list_count: u64,
    /// Rows of `list_ops` whose list is in `lists`.
    pub list_op_count: u64,
    /// Distinct owners in `lists`.
    pub user_count: u64,
}

/// A list's ordinal, user and owner ([`Lists::parts`]).
pub(super) struct ListParts {
    pub(super) ordinal: u32,
    pub(super) user: Option<AccountId>,
    pub(super) owner: AccountId,
}

/// Where a list's own records are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnRecords {
    /// The list is its user's primary list: the user's forward row.
    Primary(AccountId),
    /// Any other list: its row (ordinal) in the other lists' records.
    Other(u32),
}

/// Every list: its user, its own records (other than primary lists'),
/// each account's lists and the `/stats` counts.
pub(super) struct Lists {
    ordinals: TokenMap,
    tokens: Vec<u64>,
    users: Vec<AccountId>,
    /// Per ordinal: owner and manager.
    roles: Vec<[AccountId; 2]>,
    /// The ops of lists that are not visible.
    hidden_ops: HiddenOps,
    others: Records,
    by_account_offsets: Vec<u32>,
    by_account: Vec<u64>,
    stats: GlobalStats,
    /// (token id, ops) of the ops of lists `lists` lacks (a refresh
    /// counts them once such a list exists).
    unlisted_ops: Vec<(u64, u64)>,
}

impl Lists {
    /// The list's ordinal, if `lists` has it.
    #[inline]
    fn ordinal(&self, token_id: u64) -> Option<u32> {
        self.ordinals.get(token_id)
    }

    /// The list's user, if the list exists and its user is not the zero
    /// address.
    #[inline]
    pub(super) fn user(&self, token_id: u64) -> Option<AccountId> {
        let user = self.users[self.ordinal(token_id)? as usize];
        (user != NO_USER).then_some(user)
    }

    /// The list's ordinal, user (`None`: the zero address) and owner, if
    /// the list exists (what `/stats` counts of it).
    pub(super) fn parts(&self, token_id: u64) -> Option<ListParts> {
        let ordinal = self.ordinal(token_id)?;
        let user = self.users[ordinal as usize];
        Some(ListParts {
            ordinal,
            user: (user != NO_USER).then_some(user),
            owner: self.roles[ordinal as usize][0],
        })
    }

    /// How many ops a list `lists` lacks has.
    pub(super) fn unlisted_ops(&self, token_id: u64) -> u64 {
        self.unlisted_ops
            .binary_search_by_key(&token_id, |&(t, _)| t)
            .map_or(0, |i| self.unlisted_ops[i].1)
    }

    /// Every list's owner.
    pub(super) fn owners(&self) -> impl Iterator<Item = AccountId> + '_ {
        self.roles.iter().map(|r| r[0])
    }

    /// The list's user (`None`: the zero address), owner and manager, if
    /// the list exists.
    pub(super) fn roles(&self, token_id: u64) -> Option<[Option<AccountId>; 3]> {
        let ordinal = self.ordinal(token_id)? as usize;
        let user = self.users[ordinal];
        let [owner, manager] = self.roles[ordinal];
        Some([
            (user != NO_USER).then_some(user),
            Some(owner),
            Some(manager),
        ])
    }

    /// The list's ops that are not visible (it is not its user's primary
    /// list), by `seq`, each with its tag (`""` when none).
    pub(super) fn hidden_ops(&self, token_id: u64) -> impl Iterator<Item = (&HiddenOp, &str)> {
        self.hidden_ops.of(token_id)
    }

    /// Whether the list has ops that are not visible.
    pub(super) fn has_hidden_ops(&self, token_id: u64) -> bool {
        self.hidden_ops.has(token_id)
    }

    /// Where the list's own records are (`primary_list`: its user's
    /// primary list), if it has a user.
    pub(super) fn own_records(
        &self,
        token_id: u64,
        primary_list: impl Fn(AccountId) -> Option<u64>,
    ) -> Option<OwnRecords> {
        let ordinal = self.ordinal(token_id)?;
        let user = self.users[ordinal as usize];
        if user == NO_USER {
            return None;
        }
        Some(if primary_list(user) == Some(token_id) {
            OwnRecords::Primary(user)
        } else {
            OwnRecords::Other(ordinal)
        })
    }

    /// The own records of lists that are not their user's primary list,
    /// by ordinal.
    pub(super) fn others(&self) -> &Records {
        &self.others
    }

    /// The token ids of the lists whose user, owner or manager `id` is,
    /// ascending.
    #[inline]
    pub(super) fn lists_of(&self, id: AccountId) -> &[u64] {
        let o = &self.by_account_offsets;
        match (o.get(id as usize), o.get(id as usize + 1)) {
            (Some(&a), Some(&b)) => &self.by_account[a as usize..b as usize],
            _ => &[],
        }
    }

    pub(super) fn stats(&self) -> GlobalStats {
        self.stats
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.ordinals.heap_bytes()
            + self.tokens.capacity() * 8
            + self.users.capacity() * 4
            + self.roles.capacity() * 8
            + self.hidden_ops.heap_bytes()
            + self.others.heap_bytes()
            + self.by_account_offsets.capacity() * 4
            + self.by_account.capacity() * 8
            + self.unlisted_ops.capacity() * 16
    }
}

/// The lists while account ids are provisional.
pub(super) struct ListsBuilder {
    /// Token ids, ascending (ordinal -> token id).
    tokens: Vec<u64>,
    /// Per ordinal: provisional user (`NO_USER`: the zero address), owner
    /// and manager.
    roles: Vec<[u32; 3]>,
    user_count: u64,
}

const ZERO: Address = [0; 20];

impl ListsBuilder {
    /// Every list's user, owner and manager interned (a zero-address user
    /// is no user).
    pub(super) fn new(lists: &[ListRow], interner: &Interner) -> ListsBuilder {
        let mut rows: Vec<&ListRow> = lists.iter().collect();
        rows.par_sort_unstable_by_key(|l| l.token_id);
        // Each list's distinct addresses interned once (owner and manager
        // are mostly the user); a zero-address user is no account.
        let mut people: Vec<Address> = Vec::with_capacity(rows.len());
        // Per list: where its addresses start in `people`, and the slot
        // (among them) of its user (`NO_SLOT`: none), owner and manager.
        let mut slots: Vec<(usize, [u8; 3])> = Vec::with_capacity(rows.len());
        const NO_SLOT: u8 = u8::MAX;
        for l in &rows {
            let start = people.len();
            let mut slot = |a: Address| {
                let own = &people[start..];
                let i = own.iter().position(|&p| p == a).unwrap_or_else(|| {
                    people.push(a);
                    people.len() - start - 1
                });
                i as u8
            };
            let user = if l.user == ZERO {
                NO_SLOT
            } else {
                slot(l.user)
            };
            let owner = slot(l.owner);
            let manager = slot(l.manager);
            slots.push((start, [user, owner, manager]));
        }
        let ids = interner.ids_par(&people);
        drop(people);
        let roles = slots
            .iter()
            .map(|&(start, s)| {
                s.map(|i| {
                    if i == NO_SLOT {
                        NO_USER
                    } else {
                        ids[start + i as usize]
                    }
                })
            })
            .collect();
        let mut owners: Vec<Address> = lists.iter().map(|l| l.owner).collect();
        owners.par_sort_unstable();
        owners.dedup();
        ListsBuilder {
            tokens: rows.iter().map(|l| l.token_id).collect(),
            roles,
            user_count: owners.len() as u64,
        }
    }

    /// Token id -> ordinal, for the scans.
    pub(super) fn ordinals(&self) -> TokenMap {
        TokenMap::new(
            self.tokens
                .iter()
                .enumerate()
                .map(|(i, &t)| (t, i as u32))
                .collect(),
        )
    }

    /// The lists in final ids (`perm`: provisional -> final; `n`
    /// accounts). `others`: the other lists' own records by ordinal;
    /// `listed_targets`: whether an account has a record in any listed
    /// list (for `/stats`).
    pub(super) fn finish(
        self,
        ordinals: TokenMap,
        perm: &[u32],
        others: Records,
        listed_targets: impl Fn(AccountId) -> bool + Sync,
        ops: super::notifications::ListOpFacts,
    ) -> Lists {
        let n = perm.len();
        let final_id = |prov: u32| perm[prov as usize];
        let users: Vec<AccountId> = self
            .roles
            .iter()
            .map(|r| {
                if r[0] == NO_USER {
                    NO_USER
                } else {
                    final_id(r[0])
                }
            })
            .collect();
        let roles = self
            .roles
            .iter()
            .map(|r| [final_id(r[1]), final_id(r[2])])
            .collect();
        let mut pairs: Vec<(AccountId, u64)> = self
            .roles
            .par_iter()
            .zip(&self.tokens)
            .flat_map_iter(|(r, &token)| {
                r.iter()
                    .filter(|&&p| p != NO_USER)
                    .map(move |&p| (final_id(p), token))
            })
            .collect();
        pairs.par_sort_unstable();
        pairs.dedup();
        let mut by_account_offsets = vec![0u32; n + 1];
        for &(id, _) in &pairs {
            by_account_offsets[id as usize + 1] += 1;
        }
        for i in 0..n {
            by_account_offsets[i + 1] += by_account_offsets[i];
        }
        let address_count = (0..n as u32)
            .into_par_iter()
            .filter(|&id| listed_targets(id))
            .count() as u64;
        let stats = GlobalStats {
            address_count,
            list_count: self.tokens.len() as u64,
            list_op_count: ops.listed,
            user_count: self.user_count,
        };
        Lists {
            ordinals,
            tokens: self.tokens,
            users,
            roles,
            hidden_ops: HiddenOps::new(ops.hidden),
            unlisted_ops: ops.unlisted,
            others,
            by_account_offsets,
            by_account: pairs.into_iter().map(|(_, t)| t).collect(),
            stats,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::records::forward_csr;

    fn list(token_id: u64, user: u8, owner: u8, manager: u8) -> ListRow {
        let a = |b: u8| {
            let mut x = [0u8; 20];
            x[19] = b;
            x
        };
        ListRow {
            token_id,
            user: a(user),
            owner: a(owner),
            manager: a(manager),
        }
    }

    #[test]
    fn users_roles_and_counts() {
        let interner = Interner::new(8);
        // Token 9: user 1, owner 2; token 4: no user, owner 2, manager 3;
        // token 7: user 3, owner 3, manager 3.
        let rows = [list(9, 1, 2, 1), list(4, 0, 2, 3), list(7, 3, 3, 3)];
        let b = ListsBuilder::new(&rows, &interner);
        assert_eq!(b.user_count, 2);
        let ordinals = b.ordinals();
        assert_eq!(ordinals.get(4), Some(0));
        assert_eq!(ordinals.get(9), Some(2));
        let (_, perm) = interner.finish();
        let n = perm.len();
        let others = Records::new(
            forward_csr(Vec::new(), &perm, "t").ok().unwrap(),
            Vec::new(),
        );
        let hidden = HiddenOp {
            seq: 3,
            updated_at: 10,
            target: [1; 20],
            opcode: 1,
        };
        let facts = crate::graph::notifications::ListOpFacts {
            listed: 5,
            hidden: vec![(7, hidden, "".into())],
            unlisted: vec![(11, 2)],
        };
        let lists = b.finish(ordinals, &perm, others, |id| id == 0, facts);
        assert_eq!(lists.hidden_ops(7).count(), 1);
        assert_eq!((lists.unlisted_ops(11), lists.unlisted_ops(7)), (2, 0));
        assert!(!lists.has_hidden_ops(9) && !lists.has_hidden_ops(8));
        // Final ids follow addresses: 0x..01 is 0, 0x..02 is 1, 0x..03 is 2.
        assert_eq!(n, 3);
        assert_eq!(lists.stats().list_count, 3);
        assert_eq!(lists.stats().list_op_count, 5);
        assert_eq!(lists.stats().user_count, 2);
        assert_eq!(lists.stats().address_count, 1);
        assert_eq!(lists.user(4), None);
        assert_eq!(lists.user(5), None);
        let (u9, u7) = (lists.user(9).unwrap(), lists.user(7).unwrap());
        assert_eq!((u9, u7), (0, 2));
        assert_eq!(lists.lists_of(0), &[9]);
        assert_eq!(lists.lists_of(1), &[4, 9]);
        assert_eq!(lists.lists_of(2), &[4, 7]);
        assert_eq!(
            lists.own_records(9, |_| Some(9)),
            Some(OwnRecords::Primary(u9))
        );
        assert_eq!(lists.own_records(7, |_| None), Some(OwnRecords::Other(1)));
        assert_eq!(lists.own_records(4, |_| None), None);
        assert_eq!(lists.lists_of(n as u32 + 5), &[] as &[u64]);
    }
}
