//! The model of endpoints 43-47: the curated accounts a viewer does not
//! have yet, with or without their profile, counts and ranks, and the
//! accounts followed most recently. Same style as the parent: the API
//! reference (docs/openapi.yaml) read literally, straight scans of the raw
//! rows.

use followgraph::api::Endpoint as E;
use followgraph::snapshot::{Address, RecommendedRow};
use serde_json::{json, Value};

use super::{addr_text, iso, limit_offset, object_or_empty, page, Expected, Model};

impl Model<'_> {
    pub(super) fn recommended_family(
        &self,
        endpoint: E,
        param: &str,
        pairs: &[(String, String)],
    ) -> Result<Value, Expected> {
        if endpoint == E::Discover {
            let (limit, offset) = limit_offset(pairs)?;
            return Ok(self.discover(offset, limit));
        }
        // Path before query: a malformed token id or an unknown name first.
        let (own, excluded): (Address, Vec<Address>) = match endpoint {
            E::ListRecommended | E::ListRecommendedDetails => {
                let token = Self::token_id(param)?;
                limit_offset(pairs)?;
                let user = self.list_user(token)?;
                // 44: the list's own records (the entries of 18).
                let own = self
                    .t
                    .list_records
                    .iter()
                    .filter(|r| r.token_id == token)
                    .map(|r| r.address);
                (user, own.collect())
            }
            _ => {
                let a = self.account(param);
                limit_offset(pairs)?;
                let a = a?;
                // 43: the records of A's primary list (the entries of 16).
                let own = self.primary_of(&a).into_iter().flat_map(|p| {
                    self.t
                        .list_records
                        .iter()
                        .filter(move |r| r.token_id == p)
                        .map(|r| r.address)
                });
                (a, own.collect())
            }
        };
        let (limit, offset) = limit_offset(pairs)?;
        let mut rows: Vec<&RecommendedRow> = self
            .t
            .recommended
            .iter()
            .filter(|r| r.address != own && !excluded.contains(&r.address))
            .collect();
        rows.sort_by_key(|r| (r.position, r.address));
        let rows = page(rows, offset, limit);
        let details = matches!(
            endpoint,
            E::UserRecommendedDetails | E::ListRecommendedDetails
        );
        let out: Vec<Value> = rows
            .into_iter()
            .map(|r| {
                if details {
                    self.recommended_card(&r.address)
                } else {
                    json!({
                        "name": r.name,
                        "address": addr_text(&r.address),
                        "avatar": r.avatar,
                        "header": r.header,
                        "class": r.class,
                        "created_at": r.created_at.map(iso),
                    })
                }
            })
            .collect();
        Ok(json!({ "recommended": out }))
    }

    /// 45, 46: `ens` from the account's `ens` row, 11's counts as strings,
    /// 10's ranks.
    fn recommended_card(&self, a: &Address) -> Value {
        let ens = match self.ens(a) {
            Some(e) => json!({
                "name": e.name,
                "avatar": e.avatar,
                "records": object_or_empty(&e.records),
            }),
            None => json!({ "name": null, "avatar": null, "records": {} }),
        };
        let stats = self.user_stats(a);
        let details = self.details(a);
        json!({
            "address": addr_text(a),
            "ens": ens,
            "stats": {
                "followers_count": stats["followers_count"].to_string(),
                "following_count": stats["following_count"].to_string(),
            },
            "ranks": details["ranks"],
        })
    }

    /// 47: every account some primary list holds a record of carrying
    /// neither block nor mute, by the greatest `updated_at` of those
    /// records descending, then address ascending.
    fn discover(&self, offset: u64, limit: u64) -> Value {
        let mut members: Vec<(i64, Address)> = Vec::new();
        for x in &self.universe {
            let newest = self
                .universe
                .iter()
                .filter_map(|u| {
                    let r = self.record(u, x)?;
                    let tags = self.tags(u, x);
                    (!tags.iter().any(|g| g == "block" || g == "mute")).then_some(r.updated_at)
                })
                .max();
            if let Some(t) = newest {
                members.push((t, *x));
            }
        }
        members.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let rows: Vec<Value> = page(members, offset, limit)
            .into_iter()
            .map(|(_, x)| {
                let e = self.ens(&x);
                json!({
                    "address": addr_text(&x),
                    "name": e.map(|e| &e.name),
                    "avatar": e.and_then(|e| e.avatar.as_ref()),
                    "header": e.and_then(|e| e.header.as_ref()),
                    "followers": self.followers(&x).to_string(),
                    "following": self.following(&x).to_string(),
                })
            })
            .collect();
        json!({ "latestFollows": rows })
    }
}
