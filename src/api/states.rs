//! Sections 30-33: the state of one record, as
//! the follow button asks it. `followerState` (30): does B's primary list
//! follow A; `buttonState` (31): does the list follow the account;
//! `/lists/{id}/{a}/followerState` (33): does the account's primary list
//! follow the list's user; 32, 31 for every item of a POSTed array. Each
//! state is one binary search in one row.

use serde_json::value::RawValue;

use crate::error::ApiError;
use crate::graph::{Graph, Record, FLAG_BLOCK, FLAG_MUTE};
use crate::json::{push_key, push_num_str};

use super::rows::push_address;
use super::subject::{Account, AccountRef, ListUser};

/// `{"follow": …, "block": …, "mute": …}` of a record (all false without
/// one).
fn push_state(g: &Graph, record: Option<Record>, out: &mut String) {
    let flags = record.map_or(0, |r| g.tagset_flags(r.tagset));
    let follow = record.is_some() && flags & (FLAG_BLOCK | FLAG_MUTE) == 0;
    let bool_text = |b: bool| if b { "true" } else { "false" };
    out.push_str("{\"follow\":");
    out.push_str(bool_text(follow));
    out.push_str(",\"block\":");
    out.push_str(bool_text(flags & FLAG_BLOCK != 0));
    out.push_str(",\"mute\":");
    out.push_str(bool_text(flags & FLAG_MUTE != 0));
    out.push('}');
}

/// 30: B's primary list's record of A.
pub fn render_follower_state(g: &Graph, user: &Account, follower: &Account, out: &mut String) {
    let record = match (follower.id, user.id) {
        (Some(b), Some(a)) => g.following_row(Some(b)).find(a),
        _ => None,
    };
    out.push('{');
    push_key(out, "addressUser");
    push_address(out, &user.address);
    out.push(',');
    push_key(out, "addressFollower");
    push_address(out, &follower.address);
    out.push(',');
    push_key(out, "state");
    push_state(g, record, out);
    out.push('}');
}

/// 31: the list's own record of the account.
pub fn render_button_state(g: &Graph, list: &ListUser, account: &Account, out: &mut String) {
    let record = account
        .id
        .and_then(|a| g.list_records_row(list.token_id).find(a));
    push_list_state(g, list, account, record, out);
}

/// 33: the account's primary list's record of the list's user.
pub fn render_list_follower_state(g: &Graph, list: &ListUser, account: &Account, out: &mut String) {
    let record = g.following_row(account.id).find(list.user);
    push_list_state(g, list, account, record, out);
}

/// `{"token_id": "3", "address": …, "state": …}`.
fn push_list_state(
    g: &Graph,
    list: &ListUser,
    account: &Account,
    record: Option<Record>,
    out: &mut String,
) {
    out.push('{');
    push_key(out, "token_id");
    push_num_str(out, list.token_id);
    out.push(',');
    push_key(out, "address");
    push_address(out, &account.address);
    out.push(',');
    push_key(out, "state");
    push_state(g, record, out);
    out.push('}');
}

/// Most items 32's body may hold.
pub const MAX_BATCH_ITEMS: usize = 1000;

/// 32's body: its items, each as sent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Batch {
    /// Each item's JSON text as sent, and the account it names when it is
    /// a string (not yet looked up).
    pub items: Vec<(String, Option<AccountRef>)>,
}

impl Batch {
    /// A UTF-8 JSON array of at most `MAX_BATCH_ITEMS` items of any JSON
    /// value, else 400 saying what is wrong.
    pub fn parse(body: &[u8]) -> Result<Batch, ApiError> {
        let text = std::str::from_utf8(body)
            .map_err(|_| ApiError::BadBody("the body is not UTF-8 text".into()))?;
        let bad = |what: &str| ApiError::BadBody(what.to_owned());
        let value: &RawValue = serde_json::from_str(text)
            .map_err(|e| ApiError::BadBody(format!("the body is not JSON: {e}")))?;
        if !value.get().starts_with('[') {
            return Err(bad("the body must be a JSON array of addresses or names"));
        }
        let raw: Vec<&RawValue> = serde_json::from_str(value.get())
            .map_err(|e| ApiError::BadBody(format!("the body is not JSON: {e}")))?;
        if raw.len() > MAX_BATCH_ITEMS {
            return Err(ApiError::BadBody(format!(
                "the body holds {} items; at most {MAX_BATCH_ITEMS}",
                raw.len()
            )));
        }
        let items = raw
            .into_iter()
            .map(|item| {
                let text = item.get();
                let account = serde_json::from_str::<String>(text)
                    .ok()
                    .map(|s| AccountRef::parse(&s));
                (text.to_owned(), account)
            })
            .collect();
        Ok(Batch { items })
    }

    pub fn heap_bytes(&self) -> usize {
        self.items.iter().map(|(t, _)| t.len() * 2 + 64).sum()
    }
}

/// 32: per item, 31's answer for it, or the item as sent with a null
/// state when it is not a string naming an address or a known name.
pub fn render_batch(g: &Graph, list: &ListUser, batch: &Batch, out: &mut String) {
    let row = g.list_records_row(list.token_id);
    out.push('[');
    for (i, (text, account)) in batch.items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match account.as_ref().and_then(|a| a.resolve(g).ok()) {
            Some(account) => {
                let record = account.id.and_then(|a| row.find(a));
                push_list_state(g, list, &account, record, out);
            }
            None => {
                out.push('{');
                push_key(out, "token_id");
                push_num_str(out, list.token_id);
                out.push_str(",\"address\":");
                out.push_str(text);
                out.push_str(",\"state\":null}");
            }
        }
    }
    out.push(']');
}
