//! Searches within one account's sets: 23, 24 (`searchFollowers`: the
//! entries of 6 or 7 whose address or name holds `term`), 25, 26
//! (`searchFollowing`: the entries of 15 or 17) and 29
//! (`commonFollowers`: whom A follows that follow L). The searches and
//! their cost are `graph::query::within`'s and `common`'s; here they are
//! parsed and rendered.

use crate::error::ApiError;
use crate::graph::query::{common_followers, search_followers, search_following, Exclude};
use crate::graph::{AccountId, Graph, RecordRow};
use crate::json::{push_key, push_num_str};

use super::followers::push_page;
use super::following::{push_entry, EntryEns};
use super::query_string::{trim, Query};
use super::rows::{
    push_address, push_follower_head, push_follower_tags_and_flags, push_name_avatar_header,
    push_short_ens,
};
use super::subject::AccountRef;

/// 29's parameters after `leader`: `term` (trimmed, lower-cased; empty:
/// no filter), `limit` (`None`: all) and `offset`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CommonParams {
    pub term: String,
    pub limit: Option<usize>,
    pub offset: usize,
}

impl CommonParams {
    /// `leader` (missing or empty: `None`, A itself), then term, limit,
    /// offset, in table order.
    pub fn parse(
        q: &Query<'_>,
        max_limit: u64,
    ) -> Result<(Option<AccountRef>, CommonParams), ApiError> {
        let leader = q
            .text("leader")?
            .filter(|l| !l.is_empty())
            .map(AccountRef::parse);
        let term = trim(q.text("term")?.unwrap_or("")).to_lowercase();
        let limit = match q.number("limit")? {
            Some(n) if n > max_limit => {
                return Err(ApiError::BadParameter(format!(
                    "limit must be at most {max_limit}"
                )))
            }
            n => n.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        };
        let offset = q.offset()?;
        Ok((
            leader,
            CommonParams {
                term,
                limit,
                offset,
            },
        ))
    }

    pub fn heap_bytes(&self) -> usize {
        self.term.len()
    }
}

/// 23, 24: T's followers (all of them, or without those whose record of T
/// carries block or mute) whose address or name holds `term`, address
/// ascending, paged.
pub fn render_followers(
    g: &Graph,
    t: Option<AccountId>,
    term: &str,
    limit: usize,
    offset: usize,
    exclude: Exclude,
    out: &mut String,
) {
    out.push_str("{\"followers\":[");
    let Some(t) = t.filter(|_| !term.is_empty() && limit > 0) else {
        out.push_str("]}");
        return;
    };
    let page = search_followers(g, t, term, offset, limit, exclude);
    push_page(g, t, &page, out, |out, f, record, back| {
        out.push('{');
        push_follower_head(out, g, f);
        out.push(',');
        push_key(out, "ens");
        push_short_ens(out, g.profile(f));
        out.push(',');
        push_follower_tags_and_flags(out, g, record, back);
        out.push('}');
    });
    out.push_str("]}");
}

/// 25, 26: the records of `row` that carry neither block nor mute and
/// whose account's address or name holds `term`, address ascending (the
/// row's order), paged.
pub fn render_following(
    g: &Graph,
    row: RecordRow<'_>,
    term: &str,
    limit: usize,
    offset: usize,
    out: &mut String,
) {
    out.push_str("{\"following\":[");
    if !term.is_empty() && limit > 0 {
        let page = search_following(g, &row, term, offset, limit);
        for (n, &i) in page.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            push_entry(g, &row, i, EntryEns::Short, out);
        }
    }
    out.push_str("]}");
}

/// 29: the accounts C that A's primary list holds and whose primary list
/// holds L, neither record carrying block or mute, that match `term`;
/// mutuals descending then address ascending; `length` before paging.
pub fn render_common(
    g: &Graph,
    a: Option<AccountId>,
    l: Option<AccountId>,
    p: &CommonParams,
    out: &mut String,
) {
    let members = match (a, l) {
        (Some(a), Some(l)) => common_followers(g, a, l, &p.term),
        _ => Vec::new(),
    };
    let length = members.len();
    let start = p.offset.min(length);
    let end = p
        .limit
        .map_or(length, |n| start.saturating_add(n).min(length));
    let page = &members[start..end];
    g.prefetch_accounts(page.iter().copied());
    out.push_str("{\"results\":[");
    for (i, &c) in page.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        push_key(out, "address");
        push_address(out, g.address(c));
        out.push(',');
        push_name_avatar_header(out, g.profile(c));
        out.push(',');
        push_key(out, "mutuals_rank");
        push_num_str(out, u64::from(g.stats(c).mutuals_rank));
        out.push('}');
    }
    out.push_str("],\"length\":");
    crate::json::push_num(out, length as u64);
    out.push('}');
}
