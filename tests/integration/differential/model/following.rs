//! The model of endpoints 15-18, 27 and 28: the records of an account's
//! primary list or of a list's own records, as following entries. Same
//! style as the parent: the API reference read literally, straight scans
//! of the raw rows.

use followgraph::api::Endpoint as E;
use followgraph::snapshot::{Address, RecordRow};
use serde_json::{json, Value};

use super::{addr_text, err, first, limit_offset, page, trim, wanted_tags, Expected, Model};

/// `include`'s values (case-sensitive).
const INCLUDE: [&str; 4] = ["ens", "mutuals", "blocked", "muted"];

impl<'a> Model<'a> {
    /// The records of list `token` (any list, primary or not), in table
    /// order.
    pub(super) fn records_of(&self, token: u64) -> Vec<&'a RecordRow> {
        (self.t.list_records.iter())
            .filter(|r| r.token_id == token)
            .collect()
    }

    /// A record's tags: the visible tags of list `token`'s record of `x`,
    /// ascending by bytes.
    pub(super) fn record_tags(&self, token: u64, x: &Address) -> Vec<String> {
        let mut tags: Vec<String> = (self.list_tags(token, x).into_iter())
            .map(str::to_owned)
            .collect();
        tags.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        tags
    }

    /// The records of `list` (none without one), less those carrying
    /// block or mute when `hide` (15, 17, 25, 26).
    pub(super) fn following_rows(&self, list: Option<u64>, hide: bool) -> Vec<&'a RecordRow> {
        let mut rows = list.map_or_else(Vec::new, |l| self.records_of(l));
        rows.retain(|r| {
            let tags = self.record_tags(r.token_id, &r.address);
            !(hide && tags.iter().any(|g| g == "block" || g == "mute"))
        });
        rows
    }

    /// A following entry (with the ens object when `ens`).
    pub(super) fn entry(&self, r: &RecordRow, ens: bool) -> Value {
        let a = addr_text(&r.address);
        let mut v = json!({
            "version": 1,
            "record_type": "address",
            "data": a,
            "address": a,
            "tags": self.record_tags(r.token_id, &r.address),
        });
        if ens {
            v["ens"] = self.ens_object(&r.address);
        }
        v
    }

    /// Every record of list `token`, `updated_at` descending, then address
    /// ascending (27 and 28).
    fn newest_first(&self, token: u64) -> Vec<&'a RecordRow> {
        let mut rows = self.records_of(token);
        rows.sort_by(|a, b| {
            (b.updated_at.cmp(&a.updated_at)).then_with(|| a.address.cmp(&b.address))
        });
        rows
    }

    /// Sections 15-18, 27 and 28.
    pub(super) fn following_family(
        &self,
        endpoint: E,
        param: &str,
        pairs: &[(String, String)],
    ) -> Result<Value, Expected> {
        match endpoint {
            E::UserFollowing | E::UserAllFollowing | E::ListFollowing | E::ListAllFollowing => {
                self.following_endpoint(endpoint, param, pairs)
            }
            _ => {
                let token = Self::token_id(param)?;
                self.list_user(token)?;
                let rows = self.newest_first(token);
                Ok(if endpoint == E::ListFollowingAddresses {
                    json!(rows
                        .iter()
                        .map(|r| addr_text(&r.address))
                        .collect::<Vec<_>>())
                } else {
                    let entries: Vec<Value> = rows.iter().map(|r| self.entry(r, false)).collect();
                    json!({ "following": entries })
                })
            }
        }
    }

    /// 15-18.
    fn following_endpoint(
        &self,
        endpoint: E,
        param: &str,
        pairs: &[(String, String)],
    ) -> Result<Value, Expected> {
        let by_list = matches!(endpoint, E::ListFollowing | E::ListAllFollowing);
        // 15 and 17 leave out records carrying block or mute.
        let hide = matches!(endpoint, E::UserFollowing | E::ListFollowing);
        // Path parameter, then the query in table order, then the subject.
        let token = by_list.then(|| Self::token_id(param)).transpose()?;
        let (limit, offset) = limit_offset(pairs)?;
        let wanted = wanted_tags(pairs);
        let sort = first(pairs, "sort").unwrap_or("").to_lowercase();
        let mut ens = false;
        // Every occurrence counts.
        for (_, value) in pairs.iter().filter(|(k, _)| k == "include") {
            for segment in value.split(',').map(trim).filter(|s| !s.is_empty()) {
                if !INCLUDE.contains(&segment) {
                    return Err(err(
                        400,
                        &format!(
                            "include must be ens, mutuals, blocked or muted (comma-separated), not {segment:?}"
                        ),
                    ));
                }
                ens |= segment == "ens";
            }
        }
        let list = match token {
            Some(token) => {
                self.list_user(token)?;
                Some(token)
            }
            None => self.primary_of(&self.account(param)?),
        };

        let mut rows = self.following_rows(list, hide);
        rows.retain(|r| {
            let tags = self.record_tags(r.token_id, &r.address);
            wanted.is_empty() || tags.iter().any(|g| wanted.contains(&g.as_str()))
        });
        rows.sort_by(|a, b| {
            let primary = match sort.as_str() {
                "earliest" => a.updated_at.cmp(&b.updated_at),
                "followers" => self.followers(&b.address).cmp(&self.followers(&a.address)),
                _ => b.updated_at.cmp(&a.updated_at),
            };
            primary.then_with(|| a.address.cmp(&b.address))
        });
        let entries: Vec<Value> = (page(rows, offset, limit).into_iter())
            .map(|r| self.entry(r, ens))
            .collect();
        Ok(json!({ "following": entries }))
    }
}
