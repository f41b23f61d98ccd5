//! The leaderboard: endpoint 4, `/leaderboard/search` (a literal substring
//! of address or name, over the leaderboard in its order), 38 (one count's
//! ranked order, prepared at load), 39 (its size) and 40 (every account,
//! address ascending).

use crate::error::ApiError;
use crate::graph::{AccountId, Graph, RankedSort};
use crate::json::{push_key, push_num_str, push_opt_str, push_str, str_len};

use super::query_string::{keyword, trim, Query};
use super::rows::{push_address, push_leaderboard_row};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SearchParams {
    /// `term` trimmed and lower-cased; empty means no results.
    pub term: String,
    pub limit: usize,
    pub offset: usize,
}

impl SearchParams {
    /// Parameters in table order: term, limit, offset; `limit` defaults
    /// to `default_limit`.
    pub fn parse(
        q: &Query<'_>,
        default_limit: u64,
        max_limit: u64,
    ) -> Result<SearchParams, ApiError> {
        let term = trim(q.text("term")?.unwrap_or("")).to_lowercase();
        let limit = q.limit(default_limit, max_limit)?;
        Ok(SearchParams {
            term,
            limit,
            offset: q.offset()?,
        })
    }

    pub fn heap_bytes(&self) -> usize {
        self.term.len()
    }
}

pub fn render_search(g: &Graph, p: &SearchParams, out: &mut String) {
    out.push('{');
    push_key(out, "last_updated");
    push_str(out, &g.created_at);
    out.push_str(",\"results\":[");
    if !p.term.is_empty() && p.limit > 0 {
        let ids = g.leaderboard_search(&p.term, p.offset, p.limit);
        push_rows(g, &ids, false, out);
    }
    out.push_str("]}");
}

fn push_rows(g: &Graph, ids: &[AccountId], top8: bool, out: &mut String) {
    g.prefetch_accounts(ids.iter().copied());
    for (i, &id) in ids.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_leaderboard_row(out, g, id, top8);
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RankedParams {
    pub limit: usize,
    pub offset: usize,
    pub sort: RankedSort,
    pub descending: bool,
}

impl RankedParams {
    /// Parameters in table order: limit, offset, sort, direction; an
    /// unknown `sort` or `direction` is the default.
    pub fn parse(q: &Query<'_>, max_limit: u64) -> Result<RankedParams, ApiError> {
        let limit = q.limit(50, max_limit)?;
        let offset = q.offset()?;
        let sort = keyword(
            q.text("sort")?.unwrap_or(""),
            &[
                ("followers", RankedSort::Followers),
                ("following", RankedSort::Following),
                ("blocked", RankedSort::Blocks),
                ("top8", RankedSort::Top8),
            ],
            RankedSort::Mutuals,
        );
        let descending = !q
            .text("direction")?
            .unwrap_or("")
            .eq_ignore_ascii_case("asc");
        Ok(RankedParams {
            limit,
            offset,
            sort,
            descending,
        })
    }
}

/// 38: a page of one count's order (accounts whose count is above 0).
pub fn render_ranked(g: &Graph, p: &RankedParams, out: &mut String) {
    out.push('{');
    push_key(out, "last_updated");
    push_str(out, &g.created_at);
    out.push_str(",\"results\":[");
    let order = g.ranked(p.sort, p.descending);
    let start = p.offset.min(order.len());
    let page = &order[start..start.saturating_add(p.limit).min(order.len())];
    push_rows(g, page, true, out);
    out.push_str("]}");
}

/// 39: the number of leaderboard accounts, as a string.
pub fn render_count(g: &Graph, out: &mut String) {
    out.push('{');
    push_key(out, "leaderboardCount");
    push_num_str(out, g.leaderboard_len() as u64);
    out.push('}');
}

/// 40: every leaderboard account, address ascending, with its name. At a
/// million accounts the body is tens of MB: `out` is sized exactly first,
/// so it is never copied by growing.
pub fn render_all(g: &Graph, out: &mut String) {
    const ROW: &str = "{\"address\":\"0x0000000000000000000000000000000000000000\",\"name\":},";
    let name = |id: AccountId| g.profile(id).map(|p| p.name());
    let len: usize = g
        .leaderboard_by_address()
        .map(|id| ROW.len() + name(id).map_or(4, str_len))
        .sum();
    out.reserve_exact(len + "{\"results\":[]}".len());
    out.push_str("{\"results\":[");
    for (i, id) in g.leaderboard_by_address().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        push_key(out, "address");
        push_address(out, g.address(id));
        out.push(',');
        push_key(out, "name");
        push_opt_str(out, name(id));
        out.push('}');
    }
    out.push_str("]}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn term_trimmed_and_lowered_limit_capped() {
        let p = SearchParams::parse(&Query::parse("term=+Bob%20"), 50, 1000).unwrap();
        assert_eq!(
            p,
            SearchParams {
                term: "bob".into(),
                limit: 50,
                offset: 0
            }
        );
        let p = SearchParams::parse(&Query::parse("term=a"), 50, 3).unwrap();
        assert_eq!(
            p,
            SearchParams {
                term: "a".into(),
                limit: 3,
                offset: 0
            }
        );
    }
}
