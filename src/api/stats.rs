//! Sections 11, 12 and 41: an account's and a list's follow counts, and
//! the snapshot's counts (`/stats`).

use crate::graph::Graph;
use crate::json::{push_key, push_num, push_num_str};

use super::subject::{Account, ListUser};

/// 11: followers (blocked and muted included: the entries of 6) and the
/// primary list's records without `block`/`mute` (the entries of 15).
pub fn render_user(g: &Graph, account: &Account, out: &mut String) {
    let (followers, following) = account.id.map_or((0, 0), |id| {
        (g.followers_count(id) as u64, g.following_shown(id) as u64)
    });
    push_counts(followers, following, out);
}

/// 12: the followers whose record of the list's user carries neither
/// `block` nor `mute` (the entries of 7), and the list's own records
/// without them (the entries of 17).
pub fn render_list(g: &Graph, list: &ListUser, out: &mut String) {
    push_counts(
        g.followers_shown(list.user) as u64,
        g.own_records_shown(list.token_id) as u64,
        out,
    );
}

fn push_counts(followers: u64, following: u64, out: &mut String) {
    out.push('{');
    push_key(out, "followers_count");
    push_num(out, followers);
    out.push(',');
    push_key(out, "following_count");
    push_num(out, following);
    out.push('}');
}

/// 41: `{"stats": {...}}`, every count a string.
pub fn render_global(g: &Graph, out: &mut String) {
    let s = g.global_stats();
    out.push_str("{\"stats\":{");
    for (i, (key, n)) in [
        ("address_count", s.address_count),
        ("list_count", s.list_count),
        ("list_op_count", s.list_op_count),
        ("user_count", s.user_count),
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            out.push(',');
        }
        push_key(out, key);
        push_num_str(out, n);
    }
    out.push_str("}}");
}
