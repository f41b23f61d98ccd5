//! Sections 43–47: the curated accounts a viewer does not have yet
//! (`/users/{a}/recommended`, `/lists/{id}/recommended`), the same with
//! profile, counts and ranks (`…/recommended/details`), and the accounts
//! followed most recently (`/discover`). Parameters: `limit` (default 10)
//! and `offset` ([`LatestParams`]).

use crate::graph::{AccountStats, Graph, Viewer};
use crate::json::{push_key, push_num_str, push_opt_str, push_str};

use super::details::push_ranks;
use super::followers::LatestParams;
use super::rows::{push_address, push_name_avatar, push_name_avatar_header, push_time};
use super::subject::{Account, ListUser};

/// The viewer of 43, 45 (an account) or 44, 46 (a list).
pub fn viewer(account: Option<&Account>, list: Option<&ListUser>) -> Option<Viewer> {
    match (account, list) {
        (Some(a), _) => Some(Viewer::Account {
            address: a.address,
            id: a.id,
        }),
        (None, Some(l)) => Some(Viewer::List {
            token_id: l.token_id,
            user: l.user,
        }),
        (None, None) => None,
    }
}

/// 43, 44: the rows as stored.
pub fn render(g: &Graph, viewer: Viewer, p: &LatestParams, out: &mut String) {
    out.push_str("{\"recommended\":[");
    for (i, (r, _)) in g
        .recommended_page(viewer, p.offset, p.limit)
        .into_iter()
        .enumerate()
    {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        push_key(out, "name");
        push_str(out, &r.name);
        out.push(',');
        push_key(out, "address");
        push_address(out, &r.address);
        out.push(',');
        push_key(out, "avatar");
        push_opt_str(out, r.avatar.as_deref());
        out.push(',');
        push_key(out, "header");
        push_opt_str(out, r.header.as_deref());
        out.push(',');
        push_key(out, "class");
        push_opt_str(out, r.class.as_deref());
        out.push(',');
        push_key(out, "created_at");
        match r.created_at {
            Some(ms) => push_time(out, ms),
            None => out.push_str("null"),
        }
        out.push('}');
    }
    out.push_str("]}");
}

/// 45, 46: the same accounts with the `ens` row's name, avatar and
/// records, 11's counts (as strings) and 10's ranks.
pub fn render_details(g: &Graph, viewer: Viewer, p: &LatestParams, out: &mut String) {
    out.push_str("{\"recommended\":[");
    let page = g.recommended_page(viewer, p.offset, p.limit);
    g.prefetch_accounts(page.iter().filter_map(|&(_, id)| id));
    for (i, (r, id)) in page.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let profile = id.and_then(|id| g.profile(id));
        out.push('{');
        push_key(out, "address");
        push_address(out, &r.address);
        out.push(',');
        push_key(out, "ens");
        out.push('{');
        push_name_avatar(out, profile);
        out.push(',');
        push_key(out, "records");
        out.push_str(profile.and_then(|p| p.records()).unwrap_or("{}"));
        out.push_str("},");
        let (followers, following) = id.map_or((0, 0), |id| {
            (g.followers_count(id) as u64, g.following_shown(id) as u64)
        });
        push_key(out, "stats");
        out.push('{');
        push_key(out, "followers_count");
        push_num_str(out, followers);
        out.push(',');
        push_key(out, "following_count");
        push_num_str(out, following);
        out.push_str("},");
        push_key(out, "ranks");
        push_ranks(out, &id.map_or(AccountStats::default(), |id| g.stats(id)));
        out.push('}');
    }
    out.push_str("]}");
}

/// 47: the latest follows, each with its `ens` name, avatar and header
/// and its leaderboard counts (compacted).
pub fn render_discover(g: &Graph, p: &LatestParams, out: &mut String) {
    out.push_str("{\"latestFollows\":[");
    let page = g.latest_follows(p.offset, p.limit);
    g.prefetch_accounts(page.iter().copied());
    for (i, &id) in page.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let s = g.stats(id);
        out.push('{');
        push_key(out, "address");
        push_address(out, g.address(id));
        out.push(',');
        push_name_avatar_header(out, g.profile(id));
        out.push(',');
        push_key(out, "followers");
        push_num_str(out, u64::from(s.followers));
        out.push(',');
        push_key(out, "following");
        push_num_str(out, u64::from(s.following));
        out.push('}');
    }
    out.push_str("]}");
}
