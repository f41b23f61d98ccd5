//! The queries the endpoints run over the indexes: pages of followers and
//! following in each order with their filters, the searches within an
//! account's sets, common followers. They return ids, record indexes and
//! records; api/ renders them. Each file's doc gives its cost.
//!
//! - `followers.rs`: T's followers in the three orders, filtered and
//!   paged, walking the follower index's prepared orders;
//! - `following.rs`: a record row's page in the three orders (a bounded
//!   selection), and its every record newest first;
//! - `within.rs`: the searches within followers and within following,
//!   and the plan between walking a set and the search index;
//! - `common.rs`: whom A follows that follow L;
//! - `notifications.rs`: an account's ops in a window, filtered, paged;
//! - `tags.rs`: the tag counts of an answer's entries, and tag search;
//! - `intersect.rs`: the sorted-list intersection the searches share.

mod common;
mod followers;
mod following;
mod intersect;
mod notifications;
mod tags;
mod within;

pub use common::common_followers;
pub use followers::{followers_page, latest_page, RecordBatch, BATCH};
pub use following::{following_page, newest_first};
pub use notifications::{notifications_page, NotificationFilter};
pub use tags::{tagged_with, TagTally};
pub use within::{search_followers, search_following};

use super::{Graph, FLAG_BLOCK, FLAG_MUTE};

/// The order of a page of followers or of following.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FollowerSort {
    /// `updated_at` descending, then address ascending.
    Latest,
    /// `updated_at` ascending, then address ascending.
    Earliest,
    /// The member's follower count descending (the leaderboard's, a
    /// compacted value), then address ascending.
    Followers,
}

/// Who of a set a variant leaves out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exclude {
    /// Nobody.
    Nobody,
    /// Members whose record carries `block` or `mute`.
    BlockedOrMuted,
}

/// Which records a page keeps: the variant's exclusion and the `tags`
/// filter (any of them), resolved to tag ids.
pub struct RecordFilter {
    exclude: Exclude,
    /// Empty: no tag filter.
    wanted: Vec<u32>,
}

impl RecordFilter {
    /// `None` when `tags` are asked for but none is a tag of the graph:
    /// then no record passes.
    pub fn new(g: &Graph, tags: &[String], exclude: Exclude) -> Option<RecordFilter> {
        let wanted: Vec<u32> = tags.iter().filter_map(|tag| g.tag_id(tag)).collect();
        (tags.is_empty() || !wanted.is_empty()).then_some(RecordFilter { exclude, wanted })
    }

    /// Whether some records fail it (so a page cannot skip unread ones).
    pub fn filters(&self) -> bool {
        self.exclude == Exclude::BlockedOrMuted || !self.wanted.is_empty()
    }

    #[inline]
    pub fn keep(&self, g: &Graph, tagset: u32) -> bool {
        (self.exclude == Exclude::Nobody || shown(g, tagset))
            && (self.wanted.is_empty()
                || g.tagset(tagset).iter().any(|tag| self.wanted.contains(tag)))
    }
}

/// A page filled from candidates in order: the first `skip` kept ones
/// are passed over, then kept ones taken until `limit`.
struct PageFill<T> {
    rows: Vec<T>,
    skip: usize,
    limit: usize,
}

impl<T> PageFill<T> {
    fn new(skip: usize, limit: usize, capacity: usize) -> PageFill<T> {
        PageFill {
            rows: Vec::with_capacity(limit.min(capacity)),
            skip,
            limit,
        }
    }

    fn is_full(&self) -> bool {
        self.rows.len() >= self.limit
    }

    /// Kept candidates still wanted: those to skip and the page's rest.
    fn wanted(&self) -> usize {
        self.skip.saturating_add(self.limit - self.rows.len())
    }

    /// Offers the next kept candidate; true once the page is full.
    #[inline]
    fn offer(&mut self, row: T) -> bool {
        if self.skip > 0 {
            self.skip -= 1;
            return false;
        }
        self.rows.push(row);
        self.is_full()
    }
}

/// Whether a record with tag set `tagset` carries neither block nor mute.
#[inline]
pub fn shown(g: &Graph, tagset: u32) -> bool {
    g.tagset_flags(tagset) & (FLAG_BLOCK | FLAG_MUTE) == 0
}
