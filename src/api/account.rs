//! Sections 8, 9, 13 and 14: who an account is (`/users/{a}/account`),
//! whose a list is (`/lists/{id}/account`), an account's lists and its
//! primary list.

use crate::graph::Graph;
use crate::json::{push_key, push_num_str, push_opt_num_str};

use super::rows::{push_address, push_ens};
use super::subject::{Account, ListUser};

/// 8: `{"address", "ens"}`, for any address.
pub fn render_user(g: &Graph, account: &Account, out: &mut String) {
    out.push('{');
    push_address_and_ens(g, account, out);
    out.push('}');
}

/// 9: the list's user as 8 says, then whether the list is the user's
/// primary list, and the user's primary list (null without one).
pub fn render_list(g: &Graph, list: &ListUser, out: &mut String) {
    let primary = g.primary_list(list.user);
    out.push('{');
    push_address_and_ens(g, &Account::of(g, list.user), out);
    out.push(',');
    push_key(out, "is_primary_list");
    out.push_str(if primary == Some(list.token_id) {
        "true"
    } else {
        "false"
    });
    out.push(',');
    push_key(out, "primary_list");
    push_opt_num_str(out, primary);
    out.push('}');
}

/// 13: the account's primary list and the lists it is user, owner or
/// manager of, ascending.
pub fn render_lists(g: &Graph, account: &Account, out: &mut String) {
    out.push('{');
    push_key(out, "primary_list");
    push_opt_num_str(out, account.id.and_then(|id| g.primary_list(id)));
    out.push(',');
    push_key(out, "lists");
    out.push('[');
    let lists = account.id.map_or(&[][..], |id| g.lists_of(id));
    for (i, &token_id) in lists.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_num_str(out, token_id);
    }
    out.push_str("]}");
}

/// 14: `{"primary_list": "3"}` or null.
pub fn render_primary_list(g: &Graph, account: &Account, out: &mut String) {
    out.push('{');
    push_key(out, "primary_list");
    push_opt_num_str(out, account.id.and_then(|id| g.primary_list(id)));
    out.push('}');
}

fn push_address_and_ens(g: &Graph, account: &Account, out: &mut String) {
    push_key(out, "address");
    push_address(out, &account.address);
    out.push(',');
    push_key(out, "ens");
    push_ens(out, account.id.and_then(|id| g.profile(id)));
}
