//! The built-in queries: the indexer's tables, read in the export's one
//! transaction, mapped to snapshot rows by the rules of docs/export.md
//! ("Mapping to the snapshot tables"). Joins on a list's storage location
//! happen here, in hash maps, rather than in SQL: BYTEA columns may hold raw
//! bytes or their `0x` hex text, and decoding each value once on this side
//! matches both without casting every row in the database.

use tokio_postgres::Client;

use super::copy::{copy_out, int8, text, timestamp_ms, Tuple};
use super::error::ExportError;
use super::sink::TableSink;
use super::values::{
    address, bytea_bytes, fixed_bytes, hex_fixed, hex_text, hex_text_into, show_bytes, show_int,
    show_text, ContractCache,
};
use super::Skips;
use crate::graph::FastMap;
use crate::snapshot::{Address, ListRow, Op, OpError, OpRow, PrimaryListRow, RecordRow, TagRow};

/// A list storage location: (chain id, contract, slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lsl {
    pub chain_id: i64,
    pub contract: Address,
    pub slot: [u8; 32],
}

/// Storage location -> the exported lists stored there (almost always one).
#[derive(Default)]
pub struct ListIndex {
    one: FastMap<Lsl, u64>,
    more: FastMap<Lsl, Vec<u64>>,
}

impl ListIndex {
    /// Each storage location with its lists, ascending by token id.
    pub fn iter(&self) -> impl Iterator<Item = (Lsl, Vec<u64>)> + '_ {
        self.one.keys().map(|lsl| {
            let mut tokens = Vec::new();
            self.tokens(lsl, &mut tokens);
            (*lsl, tokens)
        })
    }

    pub(super) fn insert(&mut self, lsl: Lsl, token_id: u64) {
        match self.one.entry(lsl) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(token_id);
            }
            std::collections::hash_map::Entry::Occupied(_) => {
                self.more.entry(lsl).or_default().push(token_id)
            }
        }
    }

    /// The lists at the storage location in columns 0..3 (chain id,
    /// contract, slot) of `t`, into `out`; false when there are none.
    fn tokens_at(&self, t: &Tuple<'_>, contracts: &mut ContractCache, out: &mut Vec<u64>) -> bool {
        match lsl_at(t, contracts, 0, 1, 2) {
            Some(lsl) => self.tokens(&lsl, out),
            None => out.clear(),
        }
        !out.is_empty()
    }

    /// The lists at `lsl`, ascending by token id.
    pub(super) fn tokens(&self, lsl: &Lsl, out: &mut Vec<u64>) {
        out.clear();
        if let Some(&t) = self.one.get(lsl) {
            out.push(t);
            if let Some(rest) = self.more.get(lsl) {
                out.extend_from_slice(rest);
                out.sort_unstable();
            }
        }
    }
}

const ZERO: Address = [0; 20];

/// Reads the storage location in columns `chain`, `contract`, `slot`.
fn lsl_at(
    t: &Tuple<'_>,
    contracts: &mut ContractCache,
    chain: usize,
    contract: usize,
    slot: usize,
) -> Option<Lsl> {
    let chain_id = int8(t.get(chain), "chain_id").ok()??;
    let contract = contracts.get(t.get(contract))?;
    let slot = fixed_bytes::<32>(t.get(slot)?)?;
    Some(Lsl {
        chain_id,
        contract,
        slot,
    })
}

/// Which rows a built-in query reads: all (the export), or only those an
/// extra SQL predicate keeps (the tail's re-read of a few entities, through
/// the same mapping). The predicate is built from checked values only.
#[derive(Clone, Copy, Debug, Default)]
pub struct Only<'a>(pub Option<&'a str>);

impl Only<'_> {
    pub const ALL: Only<'static> = Only(None);

    /// ` WHERE (p)` or nothing.
    fn where_(&self) -> String {
        self.0.map_or(String::new(), |p| format!(" WHERE ({p})"))
    }

    /// ` AND (p)` or nothing.
    fn and(&self) -> String {
        self.0.map_or(String::new(), |p| format!(" AND ({p})"))
    }
}

/// Where an op came from in `events`: what the export orders ops by
/// (created_at in microseconds, chain, block, transaction, log).
pub type OpKey = (i64, i64, [u64; 3]);

/// Errors of the built-in queries name the source table.
pub(super) fn in_table(table: &'static str) -> impl Fn(ExportError) -> ExportError {
    move |e| ExportError::InTable {
        table,
        source: Box::new(e),
    }
}

// ---------------------------------------------------------------------------
// lists

/// `user` and `manager` from list metadata, per storage location.
#[derive(Default, Clone, Copy)]
struct ListRoles {
    user: Option<Address>,
    manager: Option<Address>,
}

async fn list_roles(
    client: &Client,
    skips: &mut Skips,
    only: Only<'_>,
) -> Result<FastMap<Lsl, ListRoles>, ExportError> {
    const TABLE: &str = "efp_list_metadata";
    let mut roles: FastMap<Lsl, ListRoles> = FastMap::default();
    let query = format!(
        "SELECT chain_id, contract_address::text, slot, \"key\"::text, value \
         FROM efp_list_metadata WHERE \"key\" IN ('user', 'manager'){}",
        only.and()
    );
    let mut contracts = ContractCache::default();
    copy_out(client, &query, |t| {
        let key = || {
            format!(
                "(chain_id, contract_address, slot, key) = ({}, {}, {}, {})",
                show_int(t.get(0)),
                show_text(t.get(1)),
                show_bytes(t.get(2)),
                show_text(t.get(3)),
            )
        };
        let Some(lsl) = lsl_at(t, &mut contracts, 0, 1, 2) else {
            skips.add(
                TABLE,
                "storage location is not (chain, 20-byte contract, 32-byte slot)",
                key,
            );
            return Ok(());
        };
        let value = text(t.get(4), "value")?.and_then(hex_text);
        let Some(addr) = value.and_then(|v| <[u8; 20]>::try_from(v.as_slice()).ok()) else {
            skips.add(TABLE, "value is not a 20-byte address", key);
            return Ok(());
        };
        let entry = roles.entry(lsl).or_default();
        if t.get(3) == Some(b"user".as_slice()) {
            entry.user = Some(addr);
        } else {
            entry.manager = Some(addr);
        }
        Ok(())
    })
    .await
    .map_err(in_table(TABLE))?;
    Ok(roles)
}

/// Exports `lists` (unless `sink` is `None`: an override writes them) and
/// returns the storage-location index of the exported lists.
/// `only` restricts `efp_lists`, `roles_only` the `efp_list_metadata` rows
/// read for their user and manager.
pub async fn lists(
    client: &Client,
    mut sink: Option<&mut TableSink>,
    skips: &mut Skips,
    only: Only<'_>,
    roles_only: Only<'_>,
) -> Result<ListIndex, ExportError> {
    const TABLE: &str = "efp_lists";
    let roles = if sink.is_some() {
        list_roles(client, skips, roles_only).await?
    } else {
        FastMap::default()
    };
    let mut index = ListIndex::default();
    let mut last_token: Option<i64> = None;
    let query = format!(
        "SELECT token_id, owner::text, manager::text, \"user\"::text, \
         list_storage_location_chain_id, \
         list_storage_location_contract_address::text, list_storage_location_slot, \
         nft_chain_id, nft_contract_address::text \
         FROM efp_lists{} ORDER BY token_id, nft_chain_id, nft_contract_address",
        only.where_()
    );
    let mut contracts = ContractCache::default();
    copy_out(client, &query, |t| {
        let token = int8(t.get(0), "token_id")?;
        let key = || {
            format!(
                "(nft_chain_id, nft_contract_address, token_id) = ({}, {}, {})",
                show_int(t.get(7)),
                show_text(t.get(8)),
                token.map_or("NULL".into(), |v| v.to_string()),
            )
        };
        let Some(token) = token.filter(|&t| t > 0) else {
            skips.add(TABLE, "token_id is not > 0", key);
            return Ok(());
        };
        if last_token == Some(token) {
            skips.add(
                TABLE,
                "token_id already exported for another NFT chain or contract",
                key,
            );
            return Ok(());
        }
        last_token = Some(token);
        let token_id = token as u64;
        let lsl = lsl_at(t, &mut contracts, 4, 5, 6);
        if lsl.is_none() && (t.get(4).is_some() || t.get(5).is_some() || t.get(6).is_some()) {
            skips.add(
                TABLE,
                "storage location is not (chain, 20-byte contract, 32-byte slot): list exported without records",
                key,
            );
        }
        if let Some(sink) = sink.as_deref_mut() {
            let column = |i: usize| address(text(t.get(i), "address").ok().flatten());
            let Some(owner) = column(1) else {
                skips.add(TABLE, "owner is not a 20-byte address", key);
                return Ok(());
            };
            let meta = lsl.and_then(|l| roles.get(&l).copied()).unwrap_or_default();
            let nonzero = |a: Option<Address>| a.filter(|a| *a != ZERO);
            let user = meta.user.or_else(|| nonzero(column(3))).unwrap_or(ZERO);
            let manager = meta.manager.or_else(|| nonzero(column(2))).unwrap_or(ZERO);
            sink.chunk.lists.push(ListRow {
                token_id,
                user,
                owner,
                manager,
            });
            sink.pushed()?;
        }
        if let Some(lsl) = lsl {
            index.insert(lsl, token_id);
        }
        Ok(())
    })
    .await
    .map_err(in_table(TABLE))?;
    Ok(index)
}

// ---------------------------------------------------------------------------
// primary_lists

/// `0x` + 64 hex digits of a uint256 in 1..2^63-1.
fn primary_list_value(v: &str) -> Option<u64> {
    let hex = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X"))?;
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    if !hex[..48].bytes().all(|b| b == b'0') {
        return None;
    }
    let n = u64::from_str_radix(&hex[48..], 16).ok()?;
    (1..=i64::MAX as u64).contains(&n).then_some(n)
}

pub async fn primary_lists(
    client: &Client,
    sink: &mut TableSink,
    skips: &mut Skips,
    only: Only<'_>,
) -> Result<(), ExportError> {
    const TABLE: &str = "efp_account_metadata";
    // Newest first within each address: the first valid row wins.
    let query = format!(
        "SELECT address::text, value, chain_id, contract_address::text \
         FROM efp_account_metadata WHERE \"key\" = 'primary-list'{} \
         ORDER BY lower(address), updated_at DESC, chain_id, contract_address",
        only.and()
    );
    let mut current: Option<Vec<u8>> = None;
    let mut done = false;
    copy_out(client, &query, |t| {
        let raw = t.get(0).unwrap_or_default();
        if current.as_deref() != Some(&raw.to_ascii_lowercase()) {
            current = Some(raw.to_ascii_lowercase());
            done = false;
        }
        let key = || {
            format!(
                "(chain_id, contract_address, address) = ({}, {}, {})",
                show_int(t.get(2)),
                show_text(t.get(3)),
                show_text(t.get(0)),
            )
        };
        if done {
            return Ok(());
        }
        let Some(addr) = address(text(t.get(0), "address")?) else {
            skips.add(TABLE, "address is not 20 bytes", key);
            return Ok(());
        };
        let Some(token_id) = text(t.get(1), "value")?.and_then(primary_list_value) else {
            skips.add(
                TABLE,
                "primary-list value is not 0x + 64 hex digits of an id in 1..2^63-1",
                key,
            );
            return Ok(());
        };
        done = true;
        sink.chunk.primary_lists.push(PrimaryListRow {
            address: addr,
            token_id,
        });
        sink.pushed()
    })
    .await
    .map_err(in_table(TABLE))?;
    Ok(())
}

// ---------------------------------------------------------------------------
// list_records and list_record_tags

const NO_LIST: &str = "no exported list at its storage location";

pub async fn list_records(
    client: &Client,
    index: &ListIndex,
    sink: &mut TableSink,
    skips: &mut Skips,
    only: Only<'_>,
) -> Result<(), ExportError> {
    const TABLE: &str = "efp_list_records";
    let query = format!(
        "SELECT chain_id, contract_address::text, slot, record_data, updated_at, record \
         FROM efp_list_records WHERE record_version = 1 AND record_type = 1{}",
        only.and()
    );
    let mut tokens = Vec::with_capacity(2);
    let mut contracts = ContractCache::default();
    copy_out(client, &query, |t| {
        let key = || {
            format!(
                "(chain_id, contract_address, slot, record) = ({}, {}, {}, {})",
                show_int(t.get(0)),
                show_text(t.get(1)),
                show_bytes(t.get(2)),
                show_bytes(t.get(5)),
            )
        };
        if !index.tokens_at(t, &mut contracts, &mut tokens) {
            skips.add(TABLE, NO_LIST, key);
            return Ok(());
        }
        let Some(target) = t.get(3).and_then(fixed_bytes::<20>) else {
            skips.add(TABLE, "record_data is not a 20-byte address", key);
            return Ok(());
        };
        let Some(updated_at) = timestamp_ms(t.get(4), "updated_at")? else {
            skips.add(TABLE, "updated_at is NULL", key);
            return Ok(());
        };
        for &token_id in &tokens {
            sink.chunk.list_records.push(RecordRow {
                token_id,
                address: target,
                updated_at,
            });
            sink.pushed()?;
        }
        Ok(())
    })
    .await
    .map_err(in_table(TABLE))?;
    Ok(())
}

const MAX_TAG_BYTES: usize = 255;

/// What a tag's record (`[version][type][data]`) is to the export.
enum TagRecord {
    /// Version 1, type 1: the followed address.
    Address(Address),
    /// Another version or type: out of the snapshot's scope, not a skip.
    OutOfScope,
    /// Version 1 type 1 without a 20-byte address, or no version and type.
    Malformed,
}

fn tag_record(v: Option<&[u8]>) -> TagRecord {
    let Some(v) = v else {
        return TagRecord::Malformed;
    };
    // Almost every record is 22 bytes: read without allocating.
    if let Some(r) = fixed_bytes::<22>(v) {
        return if r[..2] == [1, 1] {
            TagRecord::Address(r[2..].try_into().expect("20 bytes"))
        } else {
            TagRecord::OutOfScope
        };
    }
    match bytea_bytes(v).as_ref() {
        [1, 1, ..] | [] | [_] => TagRecord::Malformed,
        _ => TagRecord::OutOfScope,
    }
}

pub async fn list_record_tags(
    client: &Client,
    index: &ListIndex,
    sink: &mut TableSink,
    skips: &mut Skips,
    only: Only<'_>,
) -> Result<(), ExportError> {
    const TABLE: &str = "efp_list_record_tags";
    // textsend: the tag's bytes as stored, so a database whose encoding
    // lets invalid UTF-8 in cannot break the stream.
    let query = format!(
        "SELECT chain_id, contract_address::text, slot, record, textsend(tag), updated_at \
         FROM efp_list_record_tags{}",
        only.where_()
    );
    let mut tokens = Vec::with_capacity(2);
    let mut contracts = ContractCache::default();
    copy_out(client, &query, |t| {
        let key = || {
            format!(
                "(chain_id, contract_address, slot, record, tag) = ({}, {}, {}, {}, {})",
                show_int(t.get(0)),
                show_text(t.get(1)),
                show_bytes(t.get(2)),
                show_bytes(t.get(3)),
                show_text(t.get(4)),
            )
        };
        let record = tag_record(t.get(3));
        if matches!(record, TagRecord::OutOfScope) {
            return Ok(());
        }
        if !index.tokens_at(t, &mut contracts, &mut tokens) {
            skips.add(TABLE, NO_LIST, key);
            return Ok(());
        }
        let TagRecord::Address(target) = record else {
            skips.add(
                TABLE,
                "record is not a version-1 type-1 record of a 20-byte address",
                key,
            );
            return Ok(());
        };
        let Ok(tag) = std::str::from_utf8(t.get(4).unwrap_or_default()) else {
            skips.add(TABLE, "tag is not UTF-8", key);
            return Ok(());
        };
        if tag.is_empty() || tag.len() > MAX_TAG_BYTES {
            skips.add(TABLE, "tag is empty or longer than 255 bytes", key);
            return Ok(());
        }
        let Some(updated_at) = timestamp_ms(t.get(5), "updated_at")? else {
            skips.add(TABLE, "updated_at is NULL", key);
            return Ok(());
        };
        for &token_id in &tokens {
            sink.chunk.list_record_tags.push(TagRow {
                token_id,
                address: target,
                tag: tag.to_owned(),
                updated_at,
            });
            sink.pushed()?;
        }
        Ok(())
    })
    .await
    .map_err(in_table(TABLE))?;
    Ok(())
}

// ---------------------------------------------------------------------------
// list_ops

/// The skip reason for an op `Op::decode` rejects.
fn op_skip_reason(bytes: &[u8], decode_error: &OpError) -> &'static str {
    if bytes.first() != Some(&1) {
        return "op of another version";
    }
    match decode_error {
        OpError::RecordType(..) => "op on a record that is not version-1 type-1",
        OpError::UnknownOpcode(_) => "op with an unknown opcode",
        OpError::TagNotUtf8 => "op tag is not UTF-8",
        OpError::TooShort(_) | OpError::Version(_) | OpError::Length(..) | OpError::NoTag(_) => {
            "op of the wrong length"
        }
    }
}

fn push_op(
    sink: &mut TableSink,
    token_id: u64,
    seq: u64,
    op: Op,
    updated_at: i64,
) -> Result<(), ExportError> {
    sink.chunk.list_ops.push(OpRow {
        token_id,
        seq,
        op,
        updated_at,
    });
    sink.pushed()
}

/// The ops, numbered from 1; with `keys`, each pushed op's [`OpKey`] too
/// (the tail orders its new ops among the snapshot's by it).
pub async fn list_ops(
    client: &Client,
    index: &ListIndex,
    sink: &mut TableSink,
    skips: &mut Skips,
    only: Only<'_>,
    mut keys: Option<&mut Vec<OpKey>>,
) -> Result<(), ExportError> {
    const TABLE: &str = "events";
    // Output columns must not shadow the NUMERIC sort keys: ORDER BY a
    // name prefers the output column, whose text order puts 10 before 9.
    let query = format!(
        "SELECT chain_id, contract_address::text, event_args->>'slot', \
         event_args->>'op', created_at, block_number, \
         transaction_index::text AS transaction_index_text, \
         log_index::text AS log_index_text \
         FROM events WHERE event_name = 'ListOp'{} \
         ORDER BY created_at, chain_id, block_number, transaction_index, log_index",
        only.and()
    );
    let mut tokens = Vec::with_capacity(2);
    let mut seq = 0u64;
    let mut contracts = ContractCache::default();
    let mut bytes: Vec<u8> = Vec::with_capacity(64);
    copy_out(client, &query, |t| {
        let key = || {
            format!(
                "(chain_id, block_number, transaction_index, log_index) = ({}, {}, {}, {})",
                show_int(t.get(0)),
                show_int(t.get(5)),
                String::from_utf8_lossy(t.get(6).unwrap_or(b"NULL")),
                String::from_utf8_lossy(t.get(7).unwrap_or(b"NULL")),
            )
        };
        let slot = t.get(2).and_then(hex_fixed::<32>);
        let contract = contracts.get(t.get(1));
        let chain_id = int8(t.get(0), "chain_id")?;
        let (Some(slot), Some(contract), Some(chain_id)) = (slot, contract, chain_id) else {
            skips.add(TABLE, "ListOp slot is not 0x + 64 hex digits", key);
            return Ok(());
        };
        index.tokens(
            &Lsl {
                chain_id,
                contract,
                slot,
            },
            &mut tokens,
        );
        if tokens.is_empty() {
            skips.add(TABLE, NO_LIST, key);
            return Ok(());
        }
        if t.get(3)
            .and_then(|v| hex_text_into(v, &mut bytes))
            .is_none()
        {
            skips.add(TABLE, "ListOp op is not 0x + hex", key);
            return Ok(());
        }
        let op = match Op::decode(&bytes) {
            Ok(op) => op,
            Err(e) => {
                skips.add(TABLE, op_skip_reason(&bytes, &e), key);
                return Ok(());
            }
        };
        let Some(updated_at) = timestamp_ms(t.get(4), "created_at")? else {
            skips.add(TABLE, "created_at is NULL", key);
            return Ok(());
        };
        if let Some(keys) = keys.as_deref_mut() {
            let at = int8(t.get(4), "created_at")?.unwrap_or_default();
            let block = int8(t.get(5), "block_number")?.unwrap_or_default();
            let text = |i: usize| std::str::from_utf8(t.get(i).unwrap_or_default()).unwrap_or("");
            let position = position_of(block, text(6), text(7)).unwrap_or_default();
            keys.extend(tokens.iter().map(|_| (at, chain_id, position)));
        }
        // Almost always one list: the op is moved into the last row.
        let (&last, rest) = tokens.split_last().expect("tokens is not empty");
        for &token_id in rest {
            seq += 1;
            push_op(sink, token_id, seq, op.clone(), updated_at)?;
        }
        seq += 1;
        push_op(sink, last, seq, op, updated_at)?;
        Ok(())
    })
    .await
    .map_err(in_table(TABLE))?;
    Ok(())
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod tests;

/// (block, transaction_index, log_index) as read; `None` unless all are
/// non-negative integers.
pub fn position_of(block: i64, tx: &str, log: &str) -> Option<crate::snapshot::Position> {
    Some([
        u64::try_from(block).ok()?,
        tx.parse().ok()?,
        log.parse().ok()?,
    ])
}
