//! The model of endpoints 34-37: the (record, tag) pairs of a list's
//! records, 35's tag search, and the tags an account's followers put on
//! it. Same style as the parent: the API reference read literally,
//! straight scans of the raw rows.

use followgraph::api::Endpoint as E;
use followgraph::snapshot::Address;
use serde_json::{json, Map, Value};

use super::{addr_text, first, trim, Expected, Model};

fn by_bytes(a: &str, b: &str) -> std::cmp::Ordering {
    a.as_bytes().cmp(b.as_bytes())
}

impl Model<'_> {
    /// The (record's account, tag) pairs of list `token`'s records (none
    /// without a list).
    fn record_pairs(&self, token: Option<u64>) -> Vec<(Address, String)> {
        let mut pairs = Vec::new();
        for r in token.map_or_else(Vec::new, |t| self.records_of(t)) {
            for tag in self.record_tags(r.token_id, &r.address) {
                pairs.push((r.address, tag));
            }
        }
        pairs
    }

    /// The (follower F, tag of F's record of `x`) pairs, for every
    /// follower (blocked and muted ones included).
    fn tagged_as_pairs(&self, x: &Address) -> Vec<(Address, String)> {
        let mut pairs = Vec::new();
        for f in &self.universe {
            for tag in self.tags(f, x) {
                pairs.push((*f, tag));
            }
        }
        pairs
    }

    /// Sections 34-37.
    pub(super) fn tags_family(
        &self,
        endpoint: E,
        param: &str,
        pairs: &[(String, String)],
    ) -> Result<Value, Expected> {
        match endpoint {
            E::UserTags => {
                let a = self.account(param)?;
                let found = self.record_pairs(self.primary_of(&a));
                Ok(tag_answer(("address", json!(addr_text(&a))), found))
            }
            E::ListTags => {
                let token = Self::token_id(param)?;
                // 35's include: parsed as 6's tags (first occurrence), the
                // segments in order without repeats.
                let mut search: Vec<&str> = Vec::new();
                for s in first(pairs, "include").unwrap_or("").split(',').map(trim) {
                    if !s.is_empty() && !search.contains(&s) {
                        search.push(s);
                    }
                }
                self.list_user(token)?;
                let id = ("token_id", json!(token.to_string()));
                if search.is_empty() {
                    return Ok(tag_answer(id, self.record_pairs(Some(token))));
                }
                let mut records = self.records_of(token);
                records.sort_by_key(|r| r.address);
                let mut found = Vec::new();
                for r in records {
                    let tags = self.record_tags(token, &r.address);
                    if tags.iter().any(|g| search.contains(&g.as_str())) {
                        found.push(json!({ "address": addr_text(&r.address), "tags": tags }));
                    }
                }
                Ok(json!({ "token_id": id.1, "tagsToSearch": search, "taggedAddresses": found }))
            }
            E::UserTaggedAs => {
                let a = self.account(param)?;
                let found = self.tagged_as_pairs(&a);
                Ok(tag_answer(("address", json!(addr_text(&a))), found))
            }
            _ => {
                let token = Self::token_id(param)?;
                let user = self.list_user(token)?;
                let found = self.tagged_as_pairs(&user);
                Ok(tag_answer(("token_id", json!(token.to_string())), found))
            }
        }
    }
}

/// `{subject, "tags", "tagCounts", "taggedAddresses"}`: the distinct tags
/// ascending by bytes, a count per tag, the pairs by address then tag.
fn tag_answer(subject: (&str, Value), mut pairs: Vec<(Address, String)>) -> Value {
    pairs.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| by_bytes(&a.1, &b.1)));
    let mut tags: Vec<&str> = pairs.iter().map(|p| p.1.as_str()).collect();
    tags.sort_by(|a, b| by_bytes(a, b));
    tags.dedup();
    let counts: Vec<Value> = tags
        .iter()
        .map(|t| json!({ "tag": t, "count": pairs.iter().filter(|p| p.1 == *t).count() }))
        .collect();
    let tagged: Vec<Value> = pairs
        .iter()
        .map(|(a, t)| json!({ "address": addr_text(a), "tag": t }))
        .collect();
    let mut out = Map::new();
    out.insert(subject.0.to_owned(), subject.1);
    out.insert("tags".to_owned(), json!(tags));
    out.insert("tagCounts".to_owned(), json!(counts));
    out.insert("taggedAddresses".to_owned(), json!(tagged));
    Value::Object(out)
}
