//! The model of endpoints 38-41 (the ranked leaderboard, its size, every
//! member, the snapshot's counts) and the leaderboard row 4 and 38 share. Same
//! style as the parent: the API reference (docs/openapi.yaml) read literally,
//! straight scans.

use followgraph::api::Endpoint as E;
use std::collections::BTreeSet;

use followgraph::snapshot::Address;
use serde_json::{json, Value};

use super::{addr_text, first, iso, limit, number, page, Expected, Model};

impl Model<'_> {
    /// A leaderboard row of 4, or of 38 (`top8`: `top8_rank` after
    /// `blocks_rank` and `top8` after `blocks`).
    pub(super) fn board_row(&self, a: &Address, top8: bool) -> Value {
        let e = self.ens(a);
        let mut row = serde_json::Map::new();
        let mut put = |k: &str, v: Value| {
            row.insert(k.to_owned(), v);
        };
        put("address", json!(addr_text(a)));
        put("name", json!(e.map(|e| e.name.clone())));
        put("avatar", json!(e.and_then(|e| e.avatar.clone())));
        put("header", json!(e.and_then(|e| e.header.clone())));
        put("mutuals_rank", json!(self.rank(|a| self.mutuals(a), a)));
        put("followers_rank", json!(self.rank(|a| self.followers(a), a)));
        put("following_rank", json!(self.rank(|a| self.following(a), a)));
        put("blocks_rank", json!(self.rank(|a| self.blocks(a), a)));
        if top8 {
            put("top8_rank", json!(self.rank(|a| self.top8(a), a)));
        }
        put("mutuals", json!(self.mutuals(a).to_string()));
        put("following", json!(self.following(a).to_string()));
        put("followers", json!(self.followers(a).to_string()));
        put("blocks", json!(self.blocks(a).to_string()));
        if top8 {
            put("top8", json!(self.top8(a).to_string()));
        }
        put("updated_at", json!(iso(self.created_at_ms)));
        Value::Object(row)
    }

    /// The leaderboard: every account that is the user of a primary list
    /// or the target of a record in one, address ascending.
    fn board(&self) -> Vec<Address> {
        self.universe
            .iter()
            .filter(|a| self.on_leaderboard(a))
            .copied()
            .collect()
    }

    /// Sections 38-41.
    pub(super) fn leaderboard_family(
        &self,
        endpoint: E,
        pairs: &[(String, String)],
    ) -> Result<Value, Expected> {
        Ok(match endpoint {
            E::LeaderboardRanked => self.ranked(pairs)?,
            E::LeaderboardCount => json!({ "leaderboardCount": self.board().len().to_string() }),
            E::LeaderboardAll => {
                let rows: Vec<Value> = self
                    .board()
                    .iter()
                    .map(|a| json!({ "address": addr_text(a), "name": self.ens(a).map(|e| e.name.clone()) }))
                    .collect();
                json!({ "results": rows })
            }
            _ => self.global_stats(),
        })
    }

    /// 38: parameters in table order (limit, offset, sort, direction); an
    /// unknown sort or direction is the default.
    fn ranked(&self, pairs: &[(String, String)]) -> Result<Value, Expected> {
        let limit = limit(pairs, 50)?;
        let offset = number(pairs, "offset")?.unwrap_or(0);
        let sort = first(pairs, "sort").unwrap_or("").to_lowercase();
        let count = |a: &Address| match sort.as_str() {
            "followers" => self.followers(a),
            "following" => self.following(a),
            "blocked" => self.blocks(a),
            "top8" => self.top8(a),
            _ => self.mutuals(a),
        };
        let ascending = first(pairs, "direction").unwrap_or("").to_lowercase() == "asc";
        let mut members: Vec<Address> = self.board().into_iter().filter(|a| count(a) > 0).collect();
        members.sort_by(|x, y| {
            let by_count = if ascending {
                count(x).cmp(&count(y))
            } else {
                count(y).cmp(&count(x))
            };
            by_count.then_with(|| x.cmp(y))
        });
        let results: Vec<Value> = page(members, offset, limit)
            .iter()
            .map(|a| self.board_row(a, true))
            .collect();
        Ok(json!({ "last_updated": iso(self.created_at_ms), "results": results }))
    }

    /// 41: records and ops count only in lists in `lists`, primary or not.
    fn global_stats(&self) -> Value {
        let listed = |token: u64| self.t.lists.iter().any(|l| l.token_id == token);
        let addresses: BTreeSet<Address> = self
            .t
            .list_records
            .iter()
            .filter(|r| listed(r.token_id))
            .map(|r| r.address)
            .collect();
        let ops = self
            .t
            .list_ops
            .iter()
            .filter(|o| listed(o.token_id))
            .count();
        let owners: BTreeSet<Address> = self.t.lists.iter().map(|l| l.owner).collect();
        json!({ "stats": {
            "address_count": addresses.len().to_string(),
            "list_count": self.t.lists.len().to_string(),
            "list_op_count": ops.to_string(),
            "user_count": owners.len().to_string(),
        }})
    }
}
