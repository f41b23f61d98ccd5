//! Section 4, `/leaderboard/search`: a literal substring of address or
//! name, over the leaderboard in its order. (Sections 38-40, ranked, count
//! and all, belong here.)

use crate::error::ApiError;
use crate::graph::{AccountId, Graph};
use crate::json::{push_key, push_str};

use super::query_string::{trim, Query};
use super::rows::push_leaderboard_row;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SearchParams {
    /// `term` trimmed and lower-cased; empty means no results.
    pub term: String,
    pub limit: usize,
    pub offset: usize,
}

impl SearchParams {
    /// Parameters in table order: term, limit, offset.
    pub fn parse(q: &Query<'_>, max_limit: u64) -> Result<SearchParams, ApiError> {
        let term = trim(q.text("term")?.unwrap_or("")).to_lowercase();
        let limit = q.limit(50, max_limit)?;
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
        let board = g.leaderboard();
        let address = |pos: usize| g.address(board[pos]);
        let ids: Vec<AccountId> = g
            .search_index()
            .find(&p.term, p.offset, p.limit, address)
            .into_iter()
            .map(|pos| board[pos])
            .collect();
        g.prefetch_accounts(&ids);
        for (i, &id) in ids.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_leaderboard_row(out, g, id);
        }
    }
    out.push_str("]}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn term_trimmed_and_lowered_limit_capped() {
        let p = SearchParams::parse(&Query::parse("term=+Bob%20"), 1000).unwrap();
        assert_eq!(
            p,
            SearchParams {
                term: "bob".into(),
                limit: 50,
                offset: 0
            }
        );
        let p = SearchParams::parse(&Query::parse("term=a"), 3).unwrap();
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
