//! What a request asks, derived from the endpoint table rather than
//! written per endpoint: the row's endpoint, the path's subjects in path
//! order (their kinds are the path's shape) and the parameters of the
//! row's payload. Parsing, resolving, paging and the cache's accounting
//! read the table; only rendering (by family, `mod.rs`) knows endpoints.

use crate::error::ApiError;
use crate::graph::{AccountId, Graph, RecordRow};

use super::endpoints::{Endpoint, Payload, Route, Segment};
use super::followers::{FollowerParams, LatestParams};
use super::following::FollowingParams;
use super::leaderboard::{RankedParams, SearchParams};
use super::notifications::NotificationParams;
use super::query_string::Query;
use super::search::CommonParams;
use super::states::Batch;
use super::subject::{resolve_list, Account, AccountRef, ListUser, TokenId};
use super::tags::TagSearch;

/// A call: `A` is an `{addressOrENS}` subject, `L` a `{token_id}` one. As
/// parsed they are references (`Call`); resolved in one graph, accounts
/// and list users ([`Resolved`]), what the response cache keys on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Call<A = AccountRef, L = TokenId> {
    pub endpoint: Endpoint,
    pub subjects: Subjects<A, L>,
    pub params: Params,
}

/// A call whose subjects are resolved in one graph.
pub type Resolved = Call<Account, ListUser>;

/// The path's subjects, in path order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Subjects<A, L> {
    None,
    Account(A),
    List(L),
    Accounts(A, A),
    ListAccount(L, A),
    /// 29: the account, then `leader` (`None` as parsed: the account
    /// itself; resolved, always `Some`, so that both spellings share a
    /// cache entry).
    AccountLeader(A, Option<A>),
}

/// The parameters of a row's payload ([`Payload`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Params {
    None,
    Search(SearchParams),
    Notifications(NotificationParams),
    Followers(FollowerParams),
    /// `limit` and `offset` (`Payload::Latest` and `Payload::Page`).
    Latest(LatestParams),
    Ranked(RankedParams),
    Following(FollowingParams),
    Common(CommonParams),
    Tags(TagSearch),
    /// 32's items stay as parsed (each resolves, or not, when rendered).
    Batch(Batch),
}

impl Params {
    /// Reads the query as `payload` says, its parameters in the row's
    /// order; 29's `leader` comes back beside them.
    fn parse(
        payload: Payload,
        q: &Query<'_>,
        max_limit: u64,
    ) -> Result<(Params, Option<AccountRef>), ApiError> {
        let params = match payload {
            Payload::Plain => Params::None,
            Payload::Live => {
                q.text("live")?;
                Params::None
            }
            Payload::BoardSearch => Params::Search(SearchParams::parse(q, 50, max_limit)?),
            Payload::Search => Params::Search(SearchParams::parse(q, 10, max_limit)?),
            Payload::Notifications => {
                Params::Notifications(NotificationParams::parse(q, max_limit)?)
            }
            Payload::Followers => Params::Followers(FollowerParams::parse(q, max_limit)?),
            Payload::Latest | Payload::Page => Params::Latest(LatestParams::parse(q, max_limit)?),
            Payload::Ranked => Params::Ranked(RankedParams::parse(q, max_limit)?),
            Payload::Following => Params::Following(FollowingParams::parse(q, max_limit)?),
            Payload::Common => {
                let (leader, p) = CommonParams::parse(q, max_limit)?;
                return Ok((Params::Common(p), leader));
            }
            Payload::Tags => Params::Tags(TagSearch::parse(q)?),
            Payload::Batch => Params::Batch(Batch::default()),
        };
        Ok((params, None))
    }

    /// `limit` (`None`: no limit) and `offset`, for parameters that page.
    pub fn page(&self) -> Option<(Option<usize>, usize)> {
        match self {
            Params::Search(p) => Some((Some(p.limit), p.offset)),
            Params::Notifications(p) => Some((Some(p.limit), p.offset)),
            Params::Followers(p) => Some((Some(p.limit), p.offset)),
            Params::Latest(p) => Some((Some(p.limit), p.offset)),
            Params::Ranked(p) => Some((Some(p.limit), p.offset)),
            Params::Following(p) => Some((Some(p.page.limit), p.page.offset)),
            Params::Common(p) => Some((p.limit, p.offset)),
            Params::None | Params::Tags(_) | Params::Batch(_) => None,
        }
    }

    /// Heap bytes they hold, for the response cache's bound.
    pub fn heap_bytes(&self) -> usize {
        match self {
            Params::Search(p) => p.heap_bytes(),
            Params::Notifications(p) => p.heap_bytes(),
            Params::Followers(p) => p.heap_bytes(),
            Params::Following(p) => p.heap_bytes(),
            Params::Common(p) => p.heap_bytes(),
            Params::Tags(p) => p.heap_bytes(),
            Params::Batch(p) => p.heap_bytes(),
            Params::None | Params::Latest(_) | Params::Ranked(_) => 0,
        }
    }
}

impl Call {
    /// Path parameters in path order (their kinds from the row's shape),
    /// then the query as the row's payload says: the API reference's
    /// order of 400s.
    pub fn parse(route: &Route, q: &Query<'_>, max_limit: u64) -> Result<Call, ApiError> {
        let e = route.endpoint;
        // At most two path parameters (`MAX_PARAMS`): no allocation.
        let (mut list, mut first, mut second): (Option<TokenId>, Option<AccountRef>, _) =
            (None, None, None);
        let mut i = 0;
        for segment in e.shape().segments() {
            match segment {
                Segment::TokenId => list = Some(route.token_id(i)?),
                Segment::Account if first.is_none() => first = Some(route.account(i)?),
                Segment::Account => second = Some(route.account(i)?),
                Segment::Literal(_) => continue,
            }
            i += 1;
        }
        let (params, leader) = Params::parse(e.payload(), q, max_limit)?;
        let subjects = match (list, first, second) {
            (None, None, _) => Subjects::None,
            (Some(l), None, _) => Subjects::List(l),
            (Some(l), Some(a), _) => Subjects::ListAccount(l, a),
            (None, Some(a), Some(b)) => Subjects::Accounts(a, b),
            (None, Some(a), None) if e.payload() == Payload::Common => {
                Subjects::AccountLeader(a, leader)
            }
            (None, Some(a), None) => Subjects::Account(a),
        };
        Ok(Call {
            endpoint: e,
            subjects,
            params,
        })
    }

    /// Looks the subjects up in `g`, in path order: unknown names give 404
    /// "ENS name not valid or does not exist", lists that do not exist or
    /// have no user 404 "No User Found"; an unknown `leader` is 29's 400.
    pub fn resolve(self, g: &Graph) -> Result<Resolved, ApiError> {
        let list = |token_id| resolve_list(g, token_id);
        let subjects = match self.subjects {
            Subjects::None => Subjects::None,
            Subjects::Account(a) => Subjects::Account(a.resolve(g)?),
            Subjects::List(l) => Subjects::List(list(l)?),
            Subjects::Accounts(a, b) => Subjects::Accounts(a.resolve(g)?, b.resolve(g)?),
            Subjects::ListAccount(l, a) => Subjects::ListAccount(list(l)?, a.resolve(g)?),
            Subjects::AccountLeader(a, leader) => {
                let a = a.resolve(g)?;
                let leader = match leader {
                    Some(l) => l.resolve(g).map_err(|_| ApiError::InvalidQueryAddress)?,
                    None => a,
                };
                Subjects::AccountLeader(a, Some(leader))
            }
        };
        Ok(Call {
            endpoint: self.endpoint,
            subjects,
            params: self.params,
        })
    }
}

impl<A, L> Call<A, L> {
    pub fn endpoint(&self) -> Endpoint {
        self.endpoint
    }

    /// Whether rendering may hold a thread for many milliseconds:
    /// `/leaderboard/all`, which grows with the whole graph (tens of MB at
    /// a million accounts), and any page from `DEEP_OFFSET` on. A filtered
    /// page or a search reads every item it skips, so its cost grows with
    /// the offset; other answers are bounded by one account's or list's
    /// sets and their largest pages.
    pub fn may_render_long(&self) -> bool {
        self.endpoint == Endpoint::LeaderboardAll
            || self
                .page()
                .is_some_and(|(_, offset)| offset >= super::DEEP_OFFSET)
    }

    pub fn page(&self) -> Option<(Option<usize>, usize)> {
        self.params.page()
    }

    pub fn heap_bytes(&self) -> usize {
        self.params.heap_bytes()
    }
}

impl Subjects<Account, ListUser> {
    /// The account a call is about: the path's account, or the list's
    /// user (`None`: an account without data).
    pub fn target(&self) -> Option<AccountId> {
        match self {
            Subjects::Account(a) | Subjects::AccountLeader(a, _) => a.id,
            Subjects::List(l) | Subjects::ListAccount(l, _) => Some(l.user),
            Subjects::Accounts(a, _) => a.id,
            Subjects::None => None,
        }
    }

    /// The records a call reads: the account's primary list, or the
    /// list's own records.
    pub fn row<'g>(&self, g: &'g Graph) -> RecordRow<'g> {
        match self {
            Subjects::List(l) | Subjects::ListAccount(l, _) => g.list_records_row(l.token_id),
            _ => g.following_row(self.target()),
        }
    }
}
