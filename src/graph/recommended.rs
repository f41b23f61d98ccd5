//! The snapshot's curated accounts to suggest (`recommended`, API
//! sections 43–46), and the query that leaves out what a viewer already
//! has.
//!
//! Layout (r rows, a few hundred in practice): the rows in answer order,
//! `position` ascending then address ascending, each with its texts and
//! the base's id of its account when the base has one (an account the
//! snapshot does not otherwise name has none, and nobody follows it until
//! a live index adds it). About 120 bytes plus the texts per row.
//!
//! Cost of a page: the rows are walked in order and each is tested
//! against the viewer's records (one binary search in the viewer's row,
//! the live row when the tail holds one) until `offset + limit` members
//! are found: O((offset + limit + excluded) · log d) for a viewer with d
//! records, at most O(r · log d).

use super::{AccountId, Graph};
use crate::snapshot::{Address, RecommendedRow};

/// One `recommended` row, as stored.
#[derive(Clone, Debug)]
pub struct Recommended {
    pub address: Address,
    pub name: Box<str>,
    pub avatar: Option<Box<str>>,
    pub header: Option<Box<str>>,
    pub class: Option<Box<str>>,
    /// Epoch milliseconds.
    pub created_at: Option<i64>,
    /// The account's id in the base, if it has one.
    base_id: Option<AccountId>,
}

/// Every row, in answer order.
#[derive(Default)]
pub(super) struct RecommendedRows {
    rows: Vec<Recommended>,
}

impl RecommendedRows {
    /// The rows of `recommended` in answer order; `id` finds an address
    /// in the base's (final) ids.
    pub(super) fn build(
        mut rows: Vec<RecommendedRow>,
        id: impl Fn(&Address) -> Option<AccountId>,
    ) -> RecommendedRows {
        rows.sort_unstable_by_key(|a| (a.position, a.address));
        let text = |s: Option<String>| s.map(String::into_boxed_str);
        let rows = rows
            .into_iter()
            .map(|r| Recommended {
                base_id: id(&r.address),
                address: r.address,
                name: r.name.into_boxed_str(),
                avatar: text(r.avatar),
                header: text(r.header),
                class: text(r.class),
                created_at: r.created_at,
            })
            .collect();
        RecommendedRows { rows }
    }

    pub(super) fn rows(&self) -> &[Recommended] {
        &self.rows
    }

    pub(super) fn heap_bytes(&self) -> usize {
        let text = |s: &Option<Box<str>>| s.as_ref().map_or(0, |s| s.len());
        self.rows.capacity() * std::mem::size_of::<Recommended>()
            + self
                .rows
                .iter()
                .map(|r| r.name.len() + text(&r.avatar) + text(&r.header) + text(&r.class))
                .sum::<usize>()
    }
}

/// Whose recommendations: what is left out of the rows.
#[derive(Clone, Copy, Debug)]
pub enum Viewer {
    /// 43, 45: the account itself and every account its primary list
    /// holds a record of (`id`: `None` for an address without data).
    Account {
        address: Address,
        id: Option<AccountId>,
    },
    /// 44, 46: the list's user and every account of the list's own
    /// records.
    List { token_id: u64, user: AccountId },
}

impl Graph {
    /// The recommended rows the viewer does not have, in answer order,
    /// from the `offset`th, at most `limit`, each with its account's id
    /// (`None`: the graph does not know the address).
    pub fn recommended_page(
        &self,
        viewer: Viewer,
        offset: usize,
        limit: usize,
    ) -> Vec<(&Recommended, Option<AccountId>)> {
        let (own, row) = match viewer {
            Viewer::Account { address, id } => (address, self.following_row(id)),
            Viewer::List { token_id, user } => {
                (*self.address(user), self.list_records_row(token_id))
            }
        };
        self.base
            .recommended
            .rows()
            .iter()
            .map(|r| (r, r.base_id.or_else(|| self.account_id(&r.address))))
            .filter(|&(r, id)| r.address != own && id.is_none_or(|id| row.find(id).is_none()))
            .skip(offset)
            .take(limit)
            .collect()
    }
}
