//! The live bench's writer: commits events and their derived rows the way
//! the protocol indexer does (docs/live.md, "What the indexer writes"),
//! one transaction per event, at a fixed rate, with the issue's mix
//! (follow 60%, unfollow 15%, tag 15%, untag 5%, primary-list switch 3%,
//! mint 2%). Each commit is handed to a probe with the request that shows
//! it and the answer's test.

use std::time::{Duration, Instant};

use followgraph::api::Endpoint as E;
use followgraph::indexer::{
    ACCOUNT_METADATA_CONTRACT, LIST_CHAIN_ID, LIST_NFT_CONTRACT, LIST_RECORDS_CONTRACT,
};
use followgraph::rng::SplitMix64;
use serde_json::Value;
use tokio_postgres::Client;

use crate::die;

const ZERO: &str = "0x0000000000000000000000000000000000000000";

/// A list the writer changes: its id, slot (64 hex digits), user.
#[derive(Clone)]
struct List {
    token: u64,
    slot: String,
    user: String,
}

/// What a committed event changed, as a request and the answer's test.
pub struct Change {
    pub kind: &'static str,
    pub committed: Instant,
    pub path: String,
    expect: Expect,
}

enum Expect {
    Follow(bool),
    Tagged(String, bool),
    Primary(String),
    HasList(String),
}

impl Change {
    /// Whether `other` changes the same thing (so a later one may hide
    /// this one for good).
    pub fn same_subject(&self, other: &Change) -> bool {
        self.path == other.path
            && match (&self.expect, &other.expect) {
                (Expect::Tagged(a, _), Expect::Tagged(b, _)) => a == b,
                _ => true,
            }
    }

    /// Whether `answer` (the JSON of `path`) shows the change.
    pub fn shown_in(&self, answer: &Value) -> bool {
        match &self.expect {
            Expect::Follow(f) => answer["state"]["follow"].as_bool() == Some(*f),
            Expect::Tagged(addr, present) => {
                let found = answer["taggedAddresses"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|e| e["address"] == addr.as_str()));
                found == *present
            }
            Expect::Primary(token) => answer["primary_list"] == token.as_str(),
            Expect::HasList(token) => answer["lists"]
                .as_array()
                .is_some_and(|l| l.iter().any(|t| t == token.as_str())),
        }
    }
}

pub struct Writer {
    runtime: tokio::runtime::Runtime,
    client: Client,
    rng: SplitMix64,
    lists: Vec<List>,
    /// Users with two lists or more, and those lists.
    switchers: Vec<(String, Vec<u64>)>,
    accounts: Vec<String>,
    block: i64,
    next_token: u64,
    pub retries: u64,
}

fn hex_addr(rng: &mut SplitMix64) -> String {
    format!(
        "0x{:016x}{:016x}{:08x}",
        rng.next_u64(),
        rng.next_u64(),
        rng.next_u64() as u32
    )
}

impl Writer {
    pub fn connect(url: &str, seed: u64) -> Writer {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| die(&format!("runtime: {e}")));
        let client = runtime
            .block_on(followgraph::pg::connect(url, "followgraph-bench-writer"))
            .unwrap_or_else(|e| die(&format!("writer: {e}")));
        let mut w = Writer {
            runtime,
            client,
            rng: SplitMix64::new(seed),
            lists: Vec::new(),
            switchers: Vec::new(),
            accounts: Vec::new(),
            block: 0,
            next_token: 0,
            retries: 0,
        };
        // Lists whose `user` column holds the real user (the generator's
        // token_id % 4 == 0; docs of src/indexer).
        for row in w.query(
            "SELECT token_id::int8, encode(list_storage_location_slot, 'hex'), \"user\" \
             FROM efp_lists WHERE token_id % 4 = 0 AND list_storage_location_slot IS NOT NULL \
             AND \"user\" <> '0x0000000000000000000000000000000000000000' \
             ORDER BY token_id LIMIT 4000",
        ) {
            w.lists.push(List {
                token: row.get::<_, i64>(0) as u64,
                slot: row.get(1),
                user: row.get(2),
            });
        }
        if w.lists.is_empty() {
            die("no list with a storage location and a user in the database");
        }
        let mut by_user: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
        for l in &w.lists {
            by_user.entry(l.user.clone()).or_default().push(l.token);
        }
        w.accounts = by_user.keys().cloned().collect();
        w.switchers = by_user.into_iter().filter(|(_, t)| t.len() > 1).collect();
        let row = &w.query(&format!(
            "SELECT coalesce(max(block_number), 0)::int8 FROM events WHERE chain_id = {LIST_CHAIN_ID}"
        ))[0];
        w.block = row.get::<_, i64>(0);
        let row = &w.query("SELECT coalesce(max(token_id), 0)::int8 FROM efp_lists")[0];
        w.next_token = row.get::<_, i64>(0) as u64 + 1;
        w
    }

    fn query(&self, sql: &str) -> Vec<tokio_postgres::Row> {
        self.runtime
            .block_on(self.client.query(sql, &[]))
            .unwrap_or_else(|e| die(&format!("writer: {sql}: {e}")))
    }

    /// Commits the event row and its derived rows in one transaction;
    /// false when the database refused them (a duplicate: nothing
    /// committed).
    fn commit(&mut self, name: &str, contract: &str, args: &str, derived: &[String]) -> bool {
        self.block += 1;
        let sql = format!(
            "BEGIN; INSERT INTO events (chain_id, block_number, transaction_index, log_index, \
             contract_address, event_name, event_args) VALUES ({LIST_CHAIN_ID}, {}, 0, 0, \
             '{contract}', '{name}', '{args}'::jsonb); {}; COMMIT",
            self.block,
            derived.join("; ")
        );
        match self.runtime.block_on(self.client.batch_execute(&sql)) {
            Ok(()) => true,
            Err(_) => {
                let _ = self.runtime.block_on(self.client.batch_execute("ROLLBACK"));
                self.retries += 1;
                false
            }
        }
    }

    /// A random record (address) of `list`, if it has one.
    fn a_record(&self, list: &List) -> Option<String> {
        self.query(&format!(
            "SELECT '0x' || encode(record_data, 'hex') FROM efp_list_records \
             WHERE chain_id = {LIST_CHAIN_ID} AND contract_address = '{LIST_RECORDS_CONTRACT}' \
             AND slot = decode('{}', 'hex') AND record_type = 1 \
             AND length(record_data) = 20 ORDER BY random() LIMIT 1",
            list.slot
        ))
        .first()
        .map(|r| r.get(0))
    }

    fn a_tag(&self, list: &List) -> Option<(String, String)> {
        self.query(&format!(
            "SELECT '0x' || encode(substring(record FROM 3), 'hex'), tag FROM efp_list_record_tags \
             WHERE chain_id = {LIST_CHAIN_ID} AND contract_address = '{LIST_RECORDS_CONTRACT}' \
             AND slot = decode('{}', 'hex') AND length(record) = 22 \
             AND tag ~ '^[a-z0-9]+$' ORDER BY random() LIMIT 1",
            list.slot
        ))
        .first()
        .map(|r| (r.get(0), r.get(1)))
    }

    /// One `ListOp` with its derived row.
    fn list_op(&mut self, list: &List, opcode: u8, target: &str, tag: &str) -> bool {
        let tag_hex: String = tag.bytes().map(|b| format!("{b:02x}")).collect();
        let args = format!(
            r#"{{"slot": "0x{}", "op": "0x01{opcode:02x}0101{}{tag_hex}"}}"#,
            list.slot,
            &target[2..]
        );
        let at = format!(
            "chain_id = {LIST_CHAIN_ID} AND contract_address = '{LIST_RECORDS_CONTRACT}' \
             AND slot = decode('{}', 'hex') AND record = decode('0101{}', 'hex')",
            list.slot,
            &target[2..]
        );
        let derived = match opcode {
            1 => format!(
                "INSERT INTO efp_list_records (chain_id, contract_address, slot, record, \
                 record_version, record_type, record_data) VALUES ({LIST_CHAIN_ID}, \
                 '{LIST_RECORDS_CONTRACT}', decode('{}', 'hex'), decode('0101{t}', 'hex'), 1, 1, \
                 decode('{t}', 'hex'))",
                list.slot,
                t = &target[2..]
            ),
            2 => format!("DELETE FROM efp_list_records WHERE {at}"),
            3 => format!(
                "INSERT INTO efp_list_record_tags (chain_id, contract_address, slot, record, tag) \
                 VALUES ({LIST_CHAIN_ID}, '{LIST_RECORDS_CONTRACT}', decode('{}', 'hex'), \
                 decode('0101{}', 'hex'), '{tag}')",
                list.slot,
                &target[2..]
            ),
            _ => format!("DELETE FROM efp_list_record_tags WHERE {at} AND tag = '{tag}'"),
        };
        self.commit("ListOp", LIST_RECORDS_CONTRACT, &args, &[derived])
    }

    /// Commits one event of the mix; returns what it changed.
    pub fn next_event(&mut self) -> Change {
        loop {
            if let Some(c) = self.try_event() {
                return c;
            }
        }
    }

    fn try_event(&mut self) -> Option<Change> {
        let list = self.lists[self.rng.below(self.lists.len() as u64) as usize].clone();
        let roll = self.rng.below(100);
        let change = |kind, path: String, expect| Change {
            kind,
            committed: Instant::now(),
            path,
            expect,
        };
        let token = list.token.to_string();
        let button = |t: &str| E::ButtonState.target(&[&token, t]);
        let tags = |tag: &str| format!("{}?include={tag}", E::ListTags.target(&[&token]));
        match roll {
            0..60 => {
                // Mostly accounts the graph knows; one in ten new.
                let target = if self.rng.below(10) == 0 {
                    hex_addr(&mut self.rng)
                } else {
                    self.accounts[self.rng.below(self.accounts.len() as u64) as usize].clone()
                };
                self.list_op(&list, 1, &target, "")
                    .then(|| change("follow", button(&target), Expect::Follow(true)))
            }
            60..75 => {
                let target = self.a_record(&list)?;
                self.list_op(&list, 2, &target, "")
                    .then(|| change("unfollow", button(&target), Expect::Follow(false)))
            }
            75..90 => {
                let target = self.a_record(&list)?;
                let tag = format!("b{}", self.rng.below(50));
                self.list_op(&list, 3, &target, &tag)
                    .then(|| change("tag", tags(&tag), Expect::Tagged(target.clone(), true)))
            }
            90..95 => {
                let (target, tag) = self.a_tag(&list)?;
                self.list_op(&list, 4, &target, &tag)
                    .then(|| change("untag", tags(&tag), Expect::Tagged(target.clone(), false)))
            }
            95..98 => {
                if self.switchers.is_empty() {
                    return None;
                }
                let i = self.rng.below(self.switchers.len() as u64) as usize;
                let (user, tokens) = self.switchers[i].clone();
                let token = *self.rng.pick(&tokens);
                let value = format!("0x{token:064x}");
                let upsert = format!(
                    "INSERT INTO efp_account_metadata (chain_id, contract_address, address, \
                     \"key\", value) VALUES ({LIST_CHAIN_ID}, '{ACCOUNT_METADATA_CONTRACT}', \
                     '{user}', 'primary-list', '{value}') ON CONFLICT (chain_id, \
                     contract_address, address, \"key\") DO UPDATE SET value = EXCLUDED.value, \
                     updated_at = now()"
                );
                let args =
                    format!(r#"{{"addr": "{user}", "key": "primary-list", "value": "{value}"}}"#);
                self.commit(
                    "UpdateAccountMetadata",
                    ACCOUNT_METADATA_CONTRACT,
                    &args,
                    &[upsert],
                )
                .then(|| {
                    change(
                        "primary",
                        E::UserPrimaryList.target(&[&user]),
                        Expect::Primary(token.to_string()),
                    )
                })
            }
            _ => {
                let token = self.next_token;
                self.next_token += 1;
                let owner = list.user.clone();
                let args = format!(
                    r#"{{"from": "{ZERO}", "to": "{owner}", "tokenId": "0x{token:064x}"}}"#
                );
                let row = format!(
                    "INSERT INTO efp_lists (nft_chain_id, nft_contract_address, token_id, owner, \
                     manager, \"user\") VALUES ({LIST_CHAIN_ID}, '{LIST_NFT_CONTRACT}', {token}, \
                     '{owner}', '{ZERO}', '{ZERO}')"
                );
                self.commit("Transfer", LIST_NFT_CONTRACT, &args, &[row])
                    .then(|| {
                        change(
                            "mint",
                            E::UserLists.target(&[&owner]),
                            Expect::HasList(token.to_string()),
                        )
                    })
            }
        }
    }
}

/// Paces a loop to `rate` iterations per second.
pub struct Pace {
    start: Instant,
    every: Duration,
    n: u32,
}

impl Pace {
    pub fn new(rate: u64) -> Pace {
        Pace {
            start: Instant::now(),
            every: Duration::from_secs(1) / rate.max(1) as u32,
            n: 0,
        }
    }

    pub fn wait(&mut self) {
        self.n += 1;
        let due = self.start + self.every * self.n;
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
    }
}
