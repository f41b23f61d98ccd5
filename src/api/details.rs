//! Section 1, `/lists/{token_id}/details`: the list's user, its ens object,
//! ranks and primary list. (Section 10, an account's details, is the same
//! body and belongs here.)

use crate::graph::{AccountId, Graph};
use crate::json::{push_key, push_num_str};

use super::rows::{push_address, push_ens};

pub fn render(g: &Graph, user: AccountId, out: &mut String) {
    let s = g.stats(user);
    out.push('{');
    push_key(out, "address");
    push_address(out, g.address(user));
    out.push(',');
    push_key(out, "ens");
    push_ens(out, g.profile(user));
    out.push(',');
    push_key(out, "ranks");
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
    out.push_str("},");
    push_key(out, "primary_list");
    push_num_str(out, g.primary_list(user).unwrap_or(0));
    out.push('}');
}
