//! The model of endpoints 19-26 and 29 (6 and 7's entries, 19 and 20 are
//! in the parent): latest followers, search within followers and within
//! following, and common followers. Same style as the parent: the API
//! reference read literally, straight scans of the raw rows.

use followgraph::api::Endpoint as E;
use followgraph::snapshot::{Address, RecordRow};
use serde_json::{json, Map, Value};

use super::{
    addr_text, err, first, iso, limit_offset, number, page, trim, Expected, Model, MAX_LIMIT,
};

impl<'a> Model<'a> {
    /// T's followers F (primary list holding a record of T) and F's record,
    /// less those whose record carries block or mute when `hide`.
    pub(super) fn follower_rows(&self, t: &Address, hide: bool) -> Vec<(Address, &'a RecordRow)> {
        let mut rows = Vec::new();
        for f in &self.universe {
            let Some(r) = self.record(f, t) else {
                continue;
            };
            let tags = self.tags(f, t);
            if hide && tags.iter().any(|g| g == "block" || g == "mute") {
                continue;
            }
            rows.push((*f, r));
        }
        rows
    }

    /// 6's entry of follower F of T (`updated_at` from F's record `r`,
    /// none without it; the short ens after `address` when `ens`).
    pub(super) fn follower_entry(&self, t: &Address, f: &Address, r: Option<&RecordRow>) -> Value {
        self.follower_object(t, f, r, false)
    }

    fn follower_object(&self, t: &Address, f: &Address, r: Option<&RecordRow>, ens: bool) -> Value {
        let back = self.record(t, f);
        let back_tags = self.tags(t, f);
        let blocked = back_tags.iter().any(|g| g == "block");
        let muted = back_tags.iter().any(|g| g == "mute");
        let mut o = Map::new();
        let mut put = |k: &str, v: Value| {
            o.insert(k.to_owned(), v);
        };
        put(
            "svc_list_nft_token_id",
            json!(self.primary_of(f).unwrap().to_string()),
        );
        put("address", json!(addr_text(f)));
        if ens {
            put("ens", self.short_ens(f));
        }
        put("tags", json!(self.tags(f, t)));
        put("is_following", json!(back.is_some() && !blocked && !muted));
        put("is_blocked", json!(blocked));
        put("is_muted", json!(muted));
        if let Some(r) = r {
            put("updated_at", json!(iso(r.updated_at)));
        }
        Value::Object(o)
    }

    /// `{"name", "avatar"}` from the `ens` row, both null without one.
    fn short_ens(&self, a: &Address) -> Value {
        let e = self.ens(a);
        json!({ "name": e.map(|e| e.name.clone()), "avatar": e.and_then(|e| e.avatar.clone()) })
    }

    /// `term` as in 4: a case-insensitive literal substring of the address
    /// or of the `ens` name (`term` already trimmed and lower-cased).
    fn term_matches(&self, a: &Address, term: &str) -> bool {
        let name = self.ens(a).map(|e| e.name.to_lowercase());
        addr_text(a).contains(term) || name.is_some_and(|n| n.contains(term))
    }

    /// The subject of a list (`by_list`) or user endpoint, its token.
    fn subject(&self, by_list: bool, param: &str) -> Result<(Address, Option<u64>), Expected> {
        if by_list {
            let token = Self::token_id(param)?;
            Ok((self.list_user(token)?, Some(token)))
        } else {
            Ok((self.account(param)?, None))
        }
    }

    /// Endpoints 21-26 and 29.
    pub(super) fn followers_family(
        &self,
        endpoint: E,
        param: &str,
        pairs: &[(String, String)],
    ) -> Result<Value, Expected> {
        if endpoint == E::UserCommonFollowers {
            return self.common_followers(param, pairs);
        }
        let by_list = endpoint.path().starts_with("/lists/");
        // A malformed token_id first, then the query in table order, then
        // the subject.
        if by_list {
            Self::token_id(param)?;
        }
        let term = trim(first(pairs, "term").unwrap_or("")).to_lowercase();
        let (limit, offset) = limit_offset(pairs)?;
        let (t, token) = self.subject(by_list, param)?;
        match endpoint {
            // 21, 22: every follower, blocked and muted ones included.
            E::UserLatestFollowers | E::ListLatestFollowers => {
                let mut rows = self.follower_rows(&t, false);
                rows.sort_by(|(fa, ra), (fb, rb)| {
                    (rb.updated_at.cmp(&ra.updated_at)).then_with(|| fa.cmp(fb))
                });
                let out: Vec<Value> = (page(rows, offset, limit).into_iter())
                    .map(|(f, r)| {
                        json!({
                            "address": addr_text(&f),
                            "svc_list_nft_token_id": self.primary_of(&f).unwrap().to_string(),
                            "updated_at": iso(r.updated_at),
                        })
                    })
                    .collect();
                Ok(json!({ "followers": out }))
            }
            // 23, 24: the entries of 6 or 7 matching `term`.
            E::UserSearchFollowers | E::ListSearchFollowers => {
                let mut rows = self.follower_rows(&t, by_list);
                rows.retain(|(f, _)| !term.is_empty() && self.term_matches(f, &term));
                rows.sort_by_key(|(f, _)| *f);
                let out: Vec<Value> = (page(rows, offset, limit).into_iter())
                    .map(|(f, _)| self.follower_object(&t, &f, None, true))
                    .collect();
                Ok(json!({ "followers": out }))
            }
            // 25, 26: the entries of 15 or 17 matching `term`.
            _ => {
                let list = token.or_else(|| self.primary_of(&t));
                let mut rows = self.following_rows(list, true);
                rows.retain(|r| !term.is_empty() && self.term_matches(&r.address, &term));
                rows.sort_by_key(|r| r.address);
                let out: Vec<Value> = (page(rows, offset, limit).into_iter())
                    .map(|r| {
                        let mut entry = self.entry(r, false);
                        entry["ens"] = self.short_ens(&r.address);
                        entry
                    })
                    .collect();
                Ok(json!({ "following": out }))
            }
        }
    }

    /// 29: C such that A's primary list has C and C's primary list has L,
    /// neither record carrying block or mute.
    fn common_followers(&self, param: &str, pairs: &[(String, String)]) -> Result<Value, Expected> {
        let leader = first(pairs, "leader").unwrap_or("");
        let term = trim(first(pairs, "term").unwrap_or("")).to_lowercase();
        // Missing or empty: every member (above the maximum: 400).
        let limit = match number(pairs, "limit")? {
            Some(n) if n > MAX_LIMIT => {
                return Err(err(400, &format!("limit must be at most {MAX_LIMIT}")))
            }
            n => n.unwrap_or(u64::MAX),
        };
        let offset = number(pairs, "offset")?.unwrap_or(0);
        let a = self.account(param)?;
        let l = if leader.is_empty() {
            a
        } else {
            self.account(leader)
                .map_err(|_| err(404, "Invalid query address"))?
        };
        let shown = |u: &Address, x: &Address| {
            let tags = self.tags(u, x);
            self.record(u, x).is_some() && !tags.iter().any(|g| g == "block" || g == "mute")
        };
        let mut members: Vec<Address> = (self.universe.iter())
            .filter(|c| shown(&a, c) && shown(c, &l))
            .filter(|c| term.is_empty() || self.term_matches(c, &term))
            .copied()
            .collect();
        members.sort_by(|x, y| (self.mutuals(y).cmp(&self.mutuals(x))).then_with(|| x.cmp(y)));
        let length = members.len();
        let out: Vec<Value> = (page(members, offset, limit).into_iter())
            .map(|c| {
                let e = self.ens(&c);
                json!({
                    "address": addr_text(&c),
                    "name": e.map(|e| e.name.clone()),
                    "avatar": e.and_then(|e| e.avatar.clone()),
                    "header": e.and_then(|e| e.header.clone()),
                    "mutuals_rank": self.rank(|x| self.mutuals(x), &c),
                })
            })
            .collect();
        Ok(json!({ "results": out, "length": length }))
    }
}
