//! The subjects a path names and their resolution against a graph:
//! `{addressOrENS}` and `{token_id}` parsed (the path's 400s), then
//! resolved to an account or a list's user (the 404s), as the resolving
//! rules of the API reference (docs/openapi.yaml) say.

use crate::error::ApiError;
use crate::graph::{AccountId, Graph};
use crate::snapshot::{parse_address, Address};

/// An `addressOrENS` path parameter, not yet looked up.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AccountRef {
    Address(Address),
    /// A name, lower-cased.
    Name(String),
}

impl AccountRef {
    pub fn parse(text: &str) -> AccountRef {
        match parse_address(text) {
            Some(a) => AccountRef::Address(a),
            None => AccountRef::Name(text.to_lowercase()),
        }
    }

    /// From a decoded path segment: text that is not UTF-8 is a 400.
    pub fn from_segment(segment: &[u8]) -> Result<AccountRef, ApiError> {
        std::str::from_utf8(segment)
            .map(AccountRef::parse)
            .map_err(|_| ApiError::PathNotUtf8)
    }

    /// Unknown names give 404 "ENS name not valid or does not exist"; any
    /// address resolves, known to the snapshot or not.
    pub fn resolve(&self, g: &Graph) -> Result<Account, ApiError> {
        match self {
            AccountRef::Address(address) => Ok(Account {
                address: *address,
                id: g.account_id(address),
            }),
            AccountRef::Name(lower) => {
                let id = g
                    .account_by_lower_name(lower)
                    .ok_or(ApiError::UnknownName)?;
                Ok(Account {
                    address: *g.address(id),
                    id: Some(id),
                })
            }
        }
    }
}

/// A `token_id` path parameter, validated but not yet looked up.
pub type TokenId = u64;

/// Parses a `token_id`: digits only, > 0, fits in u64.
pub fn parse_token_id(text: &str) -> Result<TokenId, ApiError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::InvalidListId);
    }
    match text.parse::<u64>() {
        Ok(id) if id > 0 => Ok(id),
        _ => Err(ApiError::InvalidListId),
    }
}

/// A `token_id` from a decoded path segment: digits only, so text that is
/// not UTF-8 is an invalid list id too.
pub fn token_id_from_segment(segment: &[u8]) -> Result<TokenId, ApiError> {
    parse_token_id(std::str::from_utf8(segment).map_err(|_| ApiError::InvalidListId)?)
}

/// A resolved account.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Account {
    pub address: Address,
    /// `None` when the snapshot has no data for the address (not an error:
    /// it has no followers, badges or notifications).
    pub id: Option<AccountId>,
}

impl Account {
    /// The account with id `id`.
    pub fn of(g: &Graph, id: AccountId) -> Account {
        Account {
            address: *g.address(id),
            id: Some(id),
        }
    }
}

/// A resolved list: one that has a user (primary list or not), and its
/// user.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ListUser {
    pub token_id: TokenId,
    pub user: AccountId,
}

/// A list that does not exist or whose user is the zero address gives
/// 404 "No User Found".
pub fn resolve_list(g: &Graph, token_id: TokenId) -> Result<ListUser, ApiError> {
    let user = g.list_user(token_id).ok_or(ApiError::NoUserFound)?;
    Ok(ListUser { token_id, user })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_ids() {
        assert_eq!(parse_token_id("007"), Ok(7));
        assert_eq!(parse_token_id("18446744073709551615"), Ok(u64::MAX));
        for bad in [
            "0",
            "-1",
            "+1",
            "1.5",
            "abc",
            "18446744073709551616",
            "",
            " 1",
        ] {
            assert_eq!(parse_token_id(bad), Err(ApiError::InvalidListId), "{bad}");
        }
        assert_eq!(
            token_id_from_segment(b"\xff1"),
            Err(ApiError::InvalidListId)
        );
    }

    #[test]
    fn accounts_from_segments() {
        assert_eq!(
            AccountRef::from_segment(b"\xff"),
            Err(ApiError::PathNotUtf8)
        );
        assert_eq!(
            AccountRef::from_segment("Bob.ETH".as_bytes()),
            Ok(AccountRef::Name("bob.eth".into()))
        );
        assert!(matches!(
            AccountRef::from_segment(b"0xC2fcb9cec9d51330421d9d07439999849dab9b9c"),
            Ok(AccountRef::Address(_))
        ));
    }
}
