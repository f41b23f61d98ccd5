//! Sections 30, 31 and 33 (and 32's items): the state of one record, as
//! the follow button asks it. `followerState` (30): does B's primary list
//! follow A; `buttonState` (31): does the list follow the account;
//! `/lists/{id}/{a}/followerState` (33): does the account's primary list
//! follow the list's user. Each is one binary search in one row.

use crate::graph::{Graph, Record, FLAG_BLOCK, FLAG_MUTE};
use crate::json::{push_key, push_num_str};

use super::own_row;
use super::rows::push_address;
use super::subject::{Account, ListUser};

/// `{"follow": …, "block": …, "mute": …}` of a record (all false without
/// one).
fn push_state(g: &Graph, record: Option<Record>, out: &mut String) {
    let flags = record.map_or(0, |r| g.tagset_flags(r.tagset));
    let follow = record.is_some() && flags & (FLAG_BLOCK | FLAG_MUTE) == 0;
    let bool_text = |b: bool| if b { "true" } else { "false" };
    out.push_str("{\"follow\":");
    out.push_str(bool_text(follow));
    out.push_str(",\"block\":");
    out.push_str(bool_text(flags & FLAG_BLOCK != 0));
    out.push_str(",\"mute\":");
    out.push_str(bool_text(flags & FLAG_MUTE != 0));
    out.push('}');
}

/// 30: B's primary list's record of A.
pub fn render_follower_state(g: &Graph, user: &Account, follower: &Account, out: &mut String) {
    let record = match (follower.id, user.id) {
        (Some(b), Some(a)) => g.following_row(Some(b)).find(a),
        _ => None,
    };
    out.push('{');
    push_key(out, "addressUser");
    push_address(out, &user.address);
    out.push(',');
    push_key(out, "addressFollower");
    push_address(out, &follower.address);
    out.push(',');
    push_key(out, "state");
    push_state(g, record, out);
    out.push('}');
}

/// 31: the list's own record of the account.
pub fn render_button_state(g: &Graph, list: &ListUser, account: &Account, out: &mut String) {
    let record = account.id.and_then(|a| own_row(g, list).find(a));
    push_list_state(g, list, account, record, out);
}

/// 33: the account's primary list's record of the list's user.
pub fn render_list_follower_state(g: &Graph, list: &ListUser, account: &Account, out: &mut String) {
    let record = g.following_row(account.id).find(list.user);
    push_list_state(g, list, account, record, out);
}

/// `{"token_id": "3", "address": …, "state": …}`.
fn push_list_state(
    g: &Graph,
    list: &ListUser,
    account: &Account,
    record: Option<Record>,
    out: &mut String,
) {
    out.push('{');
    push_key(out, "token_id");
    push_num_str(out, list.token_id);
    out.push(',');
    push_key(out, "address");
    push_address(out, &account.address);
    out.push(',');
    push_key(out, "state");
    push_state(g, record, out);
    out.push('}');
}
