//! A stand-in for the protocol indexer (docs/live.md, "What the indexer
//! writes, per event"): each call commits one event row of `events` and
//! its derived rows in one transaction, as the indexer does, and keeps a
//! model of the records each storage location holds.

use std::collections::{BTreeMap, BTreeSet};

use crate::pg::Postgres;

pub const NFT: &str = "0x0e688f5dca4a0a4729946acbc44c792341714e08";
pub const LR: &str = "0x41aa48ef3c0446b46a5b1cc6337ff3d3716e2a33";
pub const AM: &str = "0x5289fe5dabc021d02fddf23d4a4df96f4e0f17ef";
pub const ZERO: &str = "0x0000000000000000000000000000000000000000";
/// The chain of every list NFT and account metadata row.
pub const BASE: i64 = 8453;

/// `n`-th test account.
pub fn account(n: u64) -> String {
    format!("0x{n:040x}")
}

/// A storage location: (chain, slot as 64 hex digits).
pub type Slot = (i64, String);

pub fn slot(n: u64) -> String {
    format!("{n:064x}")
}

pub struct Indexer<'a> {
    pg: &'a Postgres,
    /// The next block per chain.
    blocks: BTreeMap<i64, u64>,
    late: u64,
    pub lists: BTreeMap<u64, Option<Slot>>,
    pub records: BTreeMap<Slot, BTreeSet<String>>,
    pub tags: BTreeMap<Slot, BTreeSet<(String, String)>>,
}

impl<'a> Indexer<'a> {
    pub fn new(pg: &'a Postgres) -> Indexer<'a> {
        Indexer {
            pg,
            blocks: BTreeMap::new(),
            late: 0,
            lists: BTreeMap::new(),
            records: BTreeMap::new(),
            tags: BTreeMap::new(),
        }
    }

    /// The event row at the next block of `chain` (or, `late`, a few
    /// blocks below the greatest one, as an insert the indexer made late).
    fn event(&mut self, chain: i64, name: &str, contract: &str, args: &str, late: bool) -> String {
        let next = self.blocks.entry(chain).or_insert(1000);
        let (block, tx) = if late && *next > 1003 {
            self.late += 1;
            (*next - 3, 1000 + self.late)
        } else {
            *next += 1;
            (*next, 0)
        };
        format!(
            "INSERT INTO events (chain_id, block_number, transaction_index, log_index, \
             contract_address, event_name, event_args) VALUES \
             ({chain}, {block}, {tx}, 0, '{contract}', '{name}', '{args}'::jsonb)"
        )
    }

    fn commit(&self, statements: &[String]) {
        self.pg
            .execute(&format!("BEGIN; {}; COMMIT;", statements.join("; ")));
    }

    /// Moves `chain` on by `n` blocks without events (what came before
    /// falls out of the tail's lookback).
    pub fn skip_blocks(&mut self, chain: i64, n: u64) {
        *self.blocks.entry(chain).or_insert(1000) += n;
    }

    /// A mint: `Transfer` from the zero address.
    pub fn mint(&mut self, token: u64, owner: &str) {
        let e = self.event(
            BASE,
            "Transfer",
            NFT,
            &format!(r#"{{"from": "{ZERO}", "to": "{owner}", "tokenId": "0x{token:064x}"}}"#),
            false,
        );
        let row = format!(
            "INSERT INTO efp_lists (nft_chain_id, nft_contract_address, token_id, owner, manager, \"user\") \
             VALUES ({BASE}, '{NFT}', {token}, '{owner}', '{ZERO}', '{ZERO}')"
        );
        self.commit(&[e, row]);
        self.lists.insert(token, None);
    }

    pub fn transfer(&mut self, token: u64, from: &str, to: &str) {
        let e = self.event(
            BASE,
            "Transfer",
            NFT,
            &format!(r#"{{"from": "{from}", "to": "{to}", "tokenId": "0x{token:064x}"}}"#),
            false,
        );
        let row = format!("UPDATE efp_lists SET owner = '{to}' WHERE token_id = {token}");
        self.commit(&[e, row]);
    }

    pub fn set_location(&mut self, token: u64, at: &Slot) {
        let lsl = format!("0x0101{:064x}{}{}", at.0, &LR[2..], at.1);
        let e = self.event(
            BASE,
            "UpdateListStorageLocation",
            NFT,
            &format!(r#"{{"tokenId": "0x{token:064x}", "listStorageLocation": "{lsl}"}}"#),
            false,
        );
        let row = format!(
            "UPDATE efp_lists SET list_storage_location_chain_id = {}, \
             list_storage_location_contract_address = '{LR}', \
             list_storage_location_slot = decode('{}', 'hex') WHERE token_id = {token}",
            at.0, at.1
        );
        self.commit(&[e, row]);
        self.lists.insert(token, Some(at.clone()));
    }

    /// `user` or `manager` of the lists at `at`.
    pub fn set_role(&mut self, at: &Slot, key: &str, value: &str) {
        let e = self.event(
            at.0,
            "UpdateListMetadata",
            LR,
            &format!(
                r#"{{"slot": "0x{}", "key": "{key}", "value": "{value}"}}"#,
                at.1
            ),
            false,
        );
        let upsert = format!(
            "INSERT INTO efp_list_metadata (chain_id, contract_address, slot, \"key\", value) \
             VALUES ({}, '{LR}', decode('{}', 'hex'), '{key}', '{value}') \
             ON CONFLICT (chain_id, contract_address, slot, \"key\") \
             DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
            at.0, at.1
        );
        let column = format!(
            "UPDATE efp_lists SET \"{key}\" = '{value}' WHERE list_storage_location_chain_id = {} \
             AND list_storage_location_slot = decode('{}', 'hex')",
            at.0, at.1
        );
        self.commit(&[e, upsert, column]);
    }

    pub fn set_primary(&mut self, addr: &str, token: u64) {
        let value = format!("0x{token:064x}");
        let e = self.event(
            BASE,
            "UpdateAccountMetadata",
            AM,
            &format!(r#"{{"addr": "{addr}", "key": "primary-list", "value": "{value}"}}"#),
            false,
        );
        let upsert = format!(
            "INSERT INTO efp_account_metadata (chain_id, contract_address, address, \"key\", value) \
             VALUES ({BASE}, '{AM}', '{addr}', 'primary-list', '{value}') \
             ON CONFLICT (chain_id, contract_address, address, \"key\") \
             DO UPDATE SET value = EXCLUDED.value, updated_at = now()"
        );
        self.commit(&[e, upsert]);
    }

    /// One `ListOp` (1 follow, 2 unfollow, 3 tag, 4 untag) at `at`; the
    /// caller keeps the indexer's rule that a duplicate is never
    /// committed. `late`: inserted below the greatest block.
    pub fn op(&mut self, at: &Slot, opcode: u8, target: &str, tag: &str, late: bool) {
        let tag_hex: String = tag.bytes().map(|b| format!("{b:02x}")).collect();
        let op = format!("0x01{opcode:02x}0101{}{tag_hex}", &target[2..]);
        let e = self.event(
            at.0,
            "ListOp",
            LR,
            &format!(r#"{{"slot": "0x{}", "op": "{op}"}}"#, at.1),
            late,
        );
        let record = format!("decode('0101{}', 'hex')", &target[2..]);
        let slot = format!("decode('{}', 'hex')", at.1);
        let chain = at.0;
        let derived = match opcode {
            1 => {
                self.records
                    .entry(at.clone())
                    .or_default()
                    .insert(target.to_owned());
                format!(
                    "INSERT INTO efp_list_records (chain_id, contract_address, slot, record, \
                     record_version, record_type, record_data) VALUES \
                     ({chain}, '{LR}', {slot}, {record}, 1, 1, decode('{}', 'hex'))",
                    &target[2..]
                )
            }
            2 => {
                self.records.entry(at.clone()).or_default().remove(target);
                format!(
                    "DELETE FROM efp_list_records WHERE chain_id = {chain} AND slot = {slot} \
                     AND record = {record}"
                )
            }
            3 => {
                self.tags
                    .entry(at.clone())
                    .or_default()
                    .insert((target.to_owned(), tag.to_owned()));
                format!(
                    "INSERT INTO efp_list_record_tags (chain_id, contract_address, slot, record, tag) \
                     VALUES ({chain}, '{LR}', {slot}, {record}, '{tag}')"
                )
            }
            _ => {
                self.tags
                    .entry(at.clone())
                    .or_default()
                    .remove(&(target.to_owned(), tag.to_owned()));
                format!(
                    "DELETE FROM efp_list_record_tags WHERE chain_id = {chain} AND slot = {slot} \
                     AND record = {record} AND tag = '{tag}'"
                )
            }
        };
        self.commit(&[e, derived]);
    }

    pub fn follows(&self, at: &Slot, target: &str) -> bool {
        self.records.get(at).is_some_and(|r| r.contains(target))
    }

    pub fn tagged(&self, at: &Slot, target: &str, tag: &str) -> bool {
        self.tags
            .get(at)
            .is_some_and(|t| t.contains(&(target.to_owned(), tag.to_owned())))
    }
}
