//! The model of endpoints 8-14: who an account or a list's user is, its
//! details, counts, lists and primary list. Same style as the parent: the API
//! reference (docs/openapi.yaml) read literally, straight scans of the raw
//! rows.

use followgraph::api::Endpoint as E;
use followgraph::snapshot::Address;
use serde_json::{json, Value};

use super::{addr_text, object_or_empty, Expected, Model, ZERO};

impl Model<'_> {
    /// The ens object: the `ens` row without its address, or all null.
    pub(super) fn ens_object(&self, a: &Address) -> Value {
        match self.ens(a) {
            Some(e) => json!({
                "name": e.name,
                "avatar": e.avatar,
                "header": e.header,
                "display": e.display,
                "records": object_or_empty(&e.records),
                "chains": object_or_empty(&e.chains),
                "fresh": e.fresh,
                "resolver": e.resolver,
                "errors": object_or_empty(&e.errors),
            }),
            None => json!({
                "name": null, "avatar": null, "header": null, "display": null,
                "records": {}, "chains": {}, "fresh": null, "resolver": null, "errors": {},
            }),
        }
    }

    /// Every address any row mentions, ascending (the invariants' accounts).
    pub fn accounts(&self) -> &[Address] {
        &self.universe
    }

    /// Sections 8-14. None of them takes a parameter
    /// that can be wrong (`live` and `cache` are any text), so only the
    /// subject answers 400 or 404.
    pub(super) fn account_family(
        &self,
        endpoint: E,
        param: &str,
        _pairs: &[(String, String)],
    ) -> Result<Value, Expected> {
        match endpoint {
            E::ListAccount => {
                let token = Self::token_id(param)?;
                let user = self.list_user(token)?;
                Ok(self.list_account(token, &user))
            }
            E::ListStats => {
                let token = Self::token_id(param)?;
                let user = self.list_user(token)?;
                Ok(self.list_stats(token, &user))
            }
            _ => {
                let a = self.account(param)?;
                Ok(match endpoint {
                    E::UserAccount => {
                        json!({ "address": addr_text(&a), "ens": self.ens_object(&a) })
                    }
                    E::UserDetails => self.details(&a),
                    E::UserStats => self.user_stats(&a),
                    E::UserLists => self.user_lists(&a),
                    _ => json!({ "primary_list": self.primary_text(&a) }),
                })
            }
        }
    }

    fn primary_text(&self, a: &Address) -> Value {
        json!(self.primary_of(a).map(|t| t.to_string()))
    }

    /// The visible tags of list `token`'s record of `x` (any list, primary
    /// or not): none without the record.
    pub(super) fn list_tags(&self, token: u64, x: &Address) -> Vec<&str> {
        let has_record = self
            .t
            .list_records
            .iter()
            .any(|r| r.token_id == token && r.address == *x);
        if !has_record {
            return Vec::new();
        }
        self.t
            .list_record_tags
            .iter()
            .filter(|g| g.token_id == token && g.address == *x)
            .map(|g| g.tag.as_str())
            .collect()
    }

    /// Records of list `token` carrying neither `block` nor `mute`.
    fn shown_records(&self, token: u64) -> usize {
        self.t
            .list_records
            .iter()
            .filter(|r| r.token_id == token)
            .filter(|r| {
                let tags = self.list_tags(token, &r.address);
                !tags.contains(&"block") && !tags.contains(&"mute")
            })
            .count()
    }

    /// 9: the list's user; whether the list is its primary list.
    fn list_account(&self, token: u64, user: &Address) -> Value {
        json!({
            "address": addr_text(user),
            "ens": self.ens_object(user),
            "is_primary_list": self.primary_of(user) == Some(token),
            "primary_list": self.primary_text(user),
        })
    }

    /// 11: followers(X) (block/mute included) and X's primary list's
    /// records without block/mute (the entries of 15).
    pub(super) fn user_stats(&self, x: &Address) -> Value {
        let following = self.primary_of(x).map_or(0, |p| self.shown_records(p));
        json!({ "followers_count": self.followers(x), "following_count": following })
    }

    /// 12: accounts whose primary list holds a record of the user carrying
    /// neither block nor mute; the list's own records without them.
    fn list_stats(&self, token: u64, user: &Address) -> Value {
        let followers = self
            .universe
            .iter()
            .filter(|u| {
                let tags = self.tags(u, user);
                self.record(u, user).is_some() && !tags.iter().any(|g| g == "block" || g == "mute")
            })
            .count();
        json!({ "followers_count": followers, "following_count": self.shown_records(token) })
    }

    /// 13: lists whose user (not the zero address: no user), owner or
    /// manager is the account, each once, ascending numerically.
    fn user_lists(&self, a: &Address) -> Value {
        let mut ids: Vec<u64> = self
            .t
            .lists
            .iter()
            .filter(|l| (l.user == *a && l.user != ZERO) || l.owner == *a || l.manager == *a)
            .map(|l| l.token_id)
            .collect();
        ids.sort();
        ids.dedup();
        let ids: Vec<String> = ids.iter().map(|t| t.to_string()).collect();
        json!({ "primary_list": self.primary_text(a), "lists": ids })
    }
}
