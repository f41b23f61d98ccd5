//! Sections 6 and 7, `/users/{addressOrENS}/followers` and
//! `/lists/{token_id}/followers`: T's followers in the requested order,
//! paged, with a tag filter; 19 and 20 (`allFollowers`: 6's membership
//! for both, the same renderer) and 21, 22 (`latestFollowers`: a slice of
//! the prepared newest-first order with three fields a follower).

use crate::error::ApiError;
use crate::graph::query::{
    followers_page, latest_page, Exclude, FollowerSort, RecordBatch, RecordFilter, BATCH,
};
use crate::graph::{AccountId, Graph, Record};

use super::query_string::{keyword, trim, Query};
use super::rows::{push_address, push_follower, push_time};
use crate::json::{push_key, push_num_str};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FollowerParams {
    /// Tags to keep (any of them), sorted and de-duplicated; empty: no filter.
    pub tags: Vec<String>,
    pub sort: FollowerSort,
    pub limit: usize,
    pub offset: usize,
}

impl FollowerParams {
    /// Parameters in table order: limit, offset, tags, sort.
    pub fn parse(q: &Query<'_>, max_limit: u64) -> Result<FollowerParams, ApiError> {
        let limit = q.limit(10, max_limit)?;
        let offset = q.offset()?;
        let mut tags: Vec<String> = q
            .text("tags")?
            .unwrap_or("")
            .split(',')
            .map(trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect();
        tags.sort_unstable();
        tags.dedup();
        let sort = keyword(
            q.text("sort")?.unwrap_or(""),
            &[
                ("earliest", FollowerSort::Earliest),
                ("followers", FollowerSort::Followers),
            ],
            FollowerSort::Latest,
        );
        Ok(FollowerParams {
            tags,
            sort,
            limit,
            offset,
        })
    }

    pub fn heap_bytes(&self) -> usize {
        self.tags.iter().map(|t| t.len() + 24).sum()
    }
}

/// 21, 22: `limit` (default 10) and `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LatestParams {
    pub limit: usize,
    pub offset: usize,
}

impl LatestParams {
    pub fn parse(q: &Query<'_>, max_limit: u64) -> Result<LatestParams, ApiError> {
        Ok(LatestParams {
            limit: q.limit(10, max_limit)?,
            offset: q.offset()?,
        })
    }
}

/// Writes a page of T's followers (each with its record of T),
/// comma-separated, by `entry`, which also gets T's record of the
/// follower (the is_* flags): those are looked up a batch at a time, and
/// the batch's accounts asked for before any is written.
pub(super) fn push_page(
    g: &Graph,
    t: AccountId,
    page: &[(AccountId, Record)],
    out: &mut String,
    mut entry: impl FnMut(&mut String, AccountId, &Record, Option<&Record>),
) {
    for (c, chunk) in page.chunks(BATCH).enumerate() {
        let back = RecordBatch::look_up(g, chunk.iter().map(|&(f, _)| (t, f)));
        g.prefetch_accounts(chunk.iter().map(|&(f, _)| f));
        for (i, ((f, record), back)) in chunk.iter().zip(back.records()).enumerate() {
            if c + i > 0 {
                out.push(',');
            }
            entry(out, *f, record, back.as_ref());
        }
    }
}

/// `t`: the account, or the list's user; `None` (no data) has no
/// followers.
pub fn render(
    g: &Graph,
    t: Option<AccountId>,
    p: &FollowerParams,
    exclude: Exclude,
    out: &mut String,
) {
    out.push_str("{\"followers\":[");
    if let (Some(t), Some(filter)) = (t, RecordFilter::new(g, &p.tags, exclude)) {
        let page = followers_page(g, t, p.sort, &filter, p.offset, p.limit);
        push_page(g, t, &page, out, |out, f, record, back| {
            push_follower(out, g, f, record, back)
        });
    }
    out.push_str("]}");
}

/// 21, 22: a page of T's followers newest first, three fields each; only
/// the page's records are read.
pub fn render_latest(g: &Graph, t: Option<AccountId>, p: &LatestParams, out: &mut String) {
    out.push_str("{\"followers\":[");
    if let Some(t) = t {
        let page = latest_page(g, t, p.offset, p.limit);
        for (c, chunk) in page.chunks(BATCH).enumerate() {
            g.prefetch_addresses(chunk.iter().copied());
            let records = RecordBatch::look_up(g, chunk.iter().map(|&f| (f, t)));
            for (i, (&f, record)) in chunk.iter().zip(records.records()).enumerate() {
                if c + i > 0 {
                    out.push(',');
                }
                out.push('{');
                push_key(out, "address");
                push_address(out, g.address(f));
                out.push(',');
                push_key(out, "svc_list_nft_token_id");
                push_num_str(out, g.primary_list(f).unwrap_or(0));
                out.push(',');
                push_key(out, "updated_at");
                // Every follower in the index has a record of T.
                push_time(out, record.map_or(0, |r| r.updated_at));
                out.push('}');
            }
        }
    }
    out.push_str("]}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(query: &str) -> Result<FollowerParams, ApiError> {
        FollowerParams::parse(&Query::parse(query), 1000)
    }

    #[test]
    fn numbers_defaults_and_errors() {
        assert_eq!(
            parse("limit=&offset=007&limit=3").unwrap(),
            FollowerParams {
                tags: vec![],
                sort: FollowerSort::Latest,
                limit: 10,
                offset: 7
            }
        );
        for (q, msg) in [
            ("limit=-1", "limit must be a non-negative integer"),
            ("limit=1e3", "limit must be a non-negative integer"),
            ("limit=%201", "limit must be a non-negative integer"),
            (
                "limit=18446744073709551616",
                "limit must be a non-negative integer",
            ),
            ("limit=1001", "limit must be at most 1000"),
            ("offset=x&limit=y", "limit must be a non-negative integer"),
            ("sort=%FF", "sort is not valid UTF-8"),
        ] {
            assert_eq!(parse(q), Err(ApiError::BadParameter(msg.into())), "{q}");
        }
    }

    #[test]
    fn tags_trimmed_sorted_deduplicated() {
        let p = parse("tags=b,+a+,,a&sort=EARLIEST").unwrap();
        assert_eq!(p.tags, vec!["a".to_owned(), "b".to_owned()]);
        assert_eq!(p.sort, FollowerSort::Earliest);
    }
}
