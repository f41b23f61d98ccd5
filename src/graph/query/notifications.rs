//! An account's notifications (section 5): the ops naming it, newest
//! first as the notification index keeps them, within a time window
//! (two binary searches), filtered by opcode and tag, paged:
//! O(log n + offset + limit + the filtered-out ops before the page).

use crate::graph::{AccountId, Graph, Notification};

/// Which of an account's notifications a page holds.
pub struct NotificationFilter<'a> {
    /// `begin <= updated_at <= end`, in milliseconds; `None`: all time.
    pub window: Option<(i64, i64)>,
    pub opcode: Option<u8>,
    /// Only tag and untag ops (3, 4) carry a tag; an unknown tag matches
    /// nothing.
    pub tag: Option<&'a str>,
}

pub fn notifications_page(
    g: &Graph,
    account: AccountId,
    filter: &NotificationFilter<'_>,
    offset: usize,
    limit: usize,
) -> Vec<Notification> {
    let all = g.notifications_of(account);
    let window = match filter.window {
        None => 0..all.len(),
        Some((begin, end)) => {
            let first = all.partition_point(|at| at > end);
            let last = all.partition_point(|at| at >= begin);
            first..last.max(first)
        }
    };
    let tag_filter: Option<Option<u32>> = filter.tag.map(|t| g.tag_id(t));
    let keep = |i: &usize| {
        let opcode = all.opcode(*i);
        filter.opcode.is_none_or(|op| opcode == op)
            && match tag_filter {
                None => true,
                Some(None) => false,
                Some(Some(tag)) => opcode >= 3 && all.get(*i).tag_id == tag,
            }
    };
    window
        .filter(keep)
        .skip(offset)
        .take(limit)
        .map(|i| all.get(i))
        .collect()
}
