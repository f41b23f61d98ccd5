//! Sections 1 and 10, `/lists/{token_id}/details` and
//! `/users/{addressOrENS}/details`: an account (the list's user), its ens
//! object, ranks and primary list. One body for both, so 10 is 1 of the
//! account's primary list byte for byte.

use crate::graph::{AccountStats, Graph};
use crate::json::{push_key, push_num_str, push_opt_num_str};

use super::rows::{push_address, push_ens};
use super::subject::Account;

/// An account without data has the all-null ens, ranks "0" and no
/// primary list.
pub fn render(g: &Graph, account: &Account, out: &mut String) {
    let s = account.id.map_or(AccountStats::default(), |id| g.stats(id));
    out.push('{');
    push_key(out, "address");
    push_address(out, &account.address);
    out.push(',');
    push_key(out, "ens");
    push_ens(out, account.id.and_then(|id| g.profile(id)));
    out.push(',');
    push_key(out, "ranks");
    push_ranks(out, &s);
    out.push(',');
    push_key(out, "primary_list");
    push_opt_num_str(out, account.id.and_then(|id| g.primary_list(id)));
    out.push('}');
}

/// The `ranks` object of 10 (and of 45, 46): each `*_rank` as a string.
pub(super) fn push_ranks(out: &mut String, s: &AccountStats) {
    out.push('{');
    for (i, (key, rank)) in [
        ("mutuals_rank", s.mutuals_rank),
        ("followers_rank", s.followers_rank),
        ("following_rank", s.following_rank),
        ("top8_rank", s.top8_rank),
        ("blocks_rank", s.blocks_rank),
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            out.push(',');
        }
        push_key(out, key);
        push_num_str(out, u64::from(rank));
    }
    out.push('}');
}
