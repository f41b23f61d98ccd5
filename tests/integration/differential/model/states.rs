//! The model of endpoints 30-33: the state of one record, as the follow
//! button asks it, and 32's batch of 31 for a POSTed array. Same style as
//! the parent: the API reference read literally, straight scans of the
//! raw rows.

use followgraph::api::Endpoint as E;
use followgraph::snapshot::Address;
use serde_json::{json, Value};

use super::{addr_text, err, Expected, Model};

/// Most items 32's body may hold.
const MAX_ITEMS: usize = 1000;

impl Model<'_> {
    /// The state of list `token`'s record of `x` (all false without one,
    /// or without a list).
    fn state(&self, token: Option<u64>, x: &Address) -> Value {
        let record = token.and_then(|token| {
            (self.t.list_records.iter()).find(|r| r.token_id == token && r.address == *x)
        });
        let tags = match record {
            Some(r) => self.record_tags(r.token_id, x),
            None => Vec::new(),
        };
        let block = tags.iter().any(|g| g == "block");
        let mute = tags.iter().any(|g| g == "mute");
        json!({ "follow": record.is_some() && !block && !mute, "block": block, "mute": mute })
    }

    /// `{"token_id", "address", "state"}` of 31 and 33.
    fn list_state(&self, token: u64, x: &Address, state: Value) -> Value {
        json!({ "token_id": token.to_string(), "address": addr_text(x), "state": state })
    }

    /// Sections 30-33; `param2` is the account after
    /// the first path parameter, `body` 32's.
    pub(super) fn states_family(
        &self,
        endpoint: E,
        param: &str,
        param2: &str,
        body: Option<&[u8]>,
    ) -> Result<Value, Expected> {
        if endpoint == E::FollowerState {
            // Does B follow A: A resolves before B.
            let a = self.account(param)?;
            let b = self.account(param2)?;
            return Ok(json!({
                "addressUser": addr_text(&a),
                "addressFollower": addr_text(&b),
                "state": self.state(self.primary_of(&b), &a),
            }));
        }
        let token = Self::token_id(param)?;
        if endpoint == E::ButtonStateBatch {
            // The body is read before the list is looked up.
            let items = batch_items(body.unwrap_or_default())?;
            self.list_user(token)?;
            let out: Vec<Value> = items
                .into_iter()
                .map(|item| match item.as_str().map(|s| self.account(s)) {
                    Some(Ok(x)) => self.list_state(token, &x, self.state(Some(token), &x)),
                    _ => json!({ "token_id": token.to_string(), "address": item, "state": null }),
                })
                .collect();
            return Ok(Value::Array(out));
        }
        // The list before the account.
        let user = self.list_user(token)?;
        let x = self.account(param2)?;
        Ok(if endpoint == E::ButtonState {
            // 31: the list's own record of the account.
            self.list_state(token, &x, self.state(Some(token), &x))
        } else {
            // 33: the account's primary list's record of the list's user.
            self.list_state(token, &x, self.state(self.primary_of(&x), &user))
        })
    }
}

/// 32's body: UTF-8 JSON holding an array of at most 1,000 items, else
/// 400 saying what is wrong (the API reference leaves the text free;
/// these are the README's choices).
fn batch_items(body: &[u8]) -> Result<Vec<Value>, Expected> {
    let Ok(text) = std::str::from_utf8(body) else {
        return Err(err(400, "the body is not UTF-8 text"));
    };
    // `<parser's reason>`: serde_json's, parsing a value without
    // building it (its reasons differ from building a `Value`: `[1,]` is
    // "expected value" there, "trailing comma" here).
    if let Err(e) = serde_json::from_str::<&serde_json::value::RawValue>(text) {
        return Err(err(400, &format!("the body is not JSON: {e}")));
    }
    match serde_json::from_str::<Value>(text) {
        Err(e) => Err(err(400, &format!("the body is not JSON: {e}"))),
        Ok(Value::Array(items)) if items.len() > MAX_ITEMS => Err(err(
            400,
            &format!("the body holds {} items; at most {MAX_ITEMS}", items.len()),
        )),
        Ok(Value::Array(items)) => Ok(items),
        Ok(_) => Err(err(
            400,
            "the body must be a JSON array of addresses or names",
        )),
    }
}
