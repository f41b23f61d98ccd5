//! How graphs derive from one another: a base (one snapshot's indexes),
//! compacted values refreshed over it (`compacted.rs`), and the tail's
//! live index on top (`live/`). Each layer is shared (`Arc`) by the
//! graphs derived from the same one, so a derived graph costs only what
//! it adds; and what each layer holds, for `/snapshot`'s `memory_bytes`.

use std::sync::Arc;

use super::{compacted, live, Graph, LiveIndex, NeedsFold};

impl Graph {
    /// The live index on top of the base, if any.
    #[inline]
    pub fn live(&self) -> Option<&LiveIndex> {
        self.live.as_deref()
    }
    /// This graph without a live index it may hold (its base and
    /// compacted values shared).
    pub fn base_only(&self) -> Graph {
        Graph {
            name: self.name.clone(),
            created_at_ms: self.created_at_ms,
            created_at: self.created_at.clone(),
            anchor: self.anchor.clone(),
            table_counts: self.table_counts.clone(),
            base: self.base.clone(),
            compacted: self.compacted.clone(),
            live: None,
        }
    }
    /// This graph's base with the tail's entities on top (a live index
    /// `self` holds is replaced). `prev`: a graph over the same base whose
    /// live index may share its unchanged parts (ignored otherwise; its
    /// orders by count only with the same compacted values).
    pub fn with_live(
        &self,
        changes: &live::Changes<'_>,
        prev: Option<&Graph>,
    ) -> Result<Graph, live::NotLive> {
        let prev = prev.filter(|p| Arc::ptr_eq(&p.base, &self.base));
        let same_counts = prev.is_some_and(|p| match (&p.compacted, &self.compacted) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        });
        let live = LiveIndex::build(self, changes, prev.and_then(Graph::live), same_counts)?;
        Ok(Graph {
            live: Some(Arc::new(live)),
            ..self.base_only()
        })
    }
    /// This graph's base (no live index) with the compacted values of
    /// `self` (a base and the live index of `changes`) refreshed, named
    /// `name` and dated `created_at_ms` (the refresh's poll).
    pub fn refreshed(
        &self,
        changes: &live::Changes<'_>,
        name: String,
        created_at_ms: i64,
    ) -> Result<Graph, NeedsFold> {
        let compacted = compacted::Compacted::build(self, changes)?;
        Ok(Graph {
            name,
            created_at_ms,
            created_at: crate::time::format_iso_ms(created_at_ms),
            compacted: Some(Arc::new(compacted)),
            ..self.base_only()
        })
    }
    /// Approximate heap bytes held by each part of the graph (capacities
    /// times element sizes; hash maps at ~1 control byte per slot).
    pub fn memory_by_part(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("accounts", self.base.accounts.heap_bytes()),
            ("following", self.base.records.heap_bytes()),
            ("followers", self.base.followers.heap_bytes()),
            (
                "tags",
                self.base.tags.heap_bytes() + self.base.tagged_by.heap_bytes(),
            ),
            ("stats", self.base.stats.heap_bytes()),
            ("ranked", self.base.ranked.heap_bytes()),
            ("lists", self.base.lists.heap_bytes()),
            ("search", self.base.search.heap_bytes()),
            // The name index is counted with the profiles it indexes.
            (
                "profiles",
                self.base.profiles.heap_bytes() + self.base.names.heap_bytes(),
            ),
            ("notifications", self.base.notifications.heap_bytes()),
            ("badges", self.base.badges.heap_bytes()),
            ("recommended", self.base.recommended.heap_bytes()),
            ("latest_follows", self.base.latest_follows.heap_bytes()),
            (
                "compacted",
                self.compacted.as_ref().map_or(0, |c| c.heap_bytes()),
            ),
            ("live", self.live().map_or(0, LiveIndex::heap_bytes)),
        ]
    }
}
