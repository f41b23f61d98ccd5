//! The tail's database side (docs/live.md): the events committed since a
//! position, what each touches, and those entities re-read whole through
//! the export's own mapping (`source.rs`, restricted by [`Only`]
//! predicates), all inside the caller's `REPEATABLE READ, READ ONLY`
//! transaction. The one thing kept between polls, which lists each
//! storage location holds, is the caller's (`locations.rs`).

use std::collections::{BTreeMap, BTreeSet};

use tokio_postgres::Client;

use super::error::ExportError;
use super::locations::ListLocations;
use super::sink::TableSink;
use super::source::{self, position_of, ListIndex, Only};
pub use super::source::{Lsl, OpKey};
use super::values::{address, hex_fixed};
use super::Skips;
use crate::snapshot::{format_address, Address, ListState, OpRow, Position, Table};

/// The greatest event position of each chain in `events` that the
/// transaction sees: a loose index scan over the key (one index probe per
/// chain, whatever the table's size).
pub async fn event_positions(
    client: &Client,
) -> Result<std::collections::BTreeMap<i64, crate::snapshot::Position>, ExportError> {
    let query = "WITH RECURSIVE chains AS ( \
                   (SELECT chain_id FROM events ORDER BY chain_id LIMIT 1) \
                   UNION ALL \
                   SELECT (SELECT e.chain_id FROM events e WHERE e.chain_id > c.chain_id \
                           ORDER BY e.chain_id LIMIT 1) \
                   FROM chains c WHERE c.chain_id IS NOT NULL) \
                 SELECT c.chain_id, l.block_number, l.transaction_index::text, l.log_index::text \
                 FROM chains c CROSS JOIN LATERAL ( \
                   SELECT block_number, transaction_index, log_index FROM events e \
                   WHERE e.chain_id = c.chain_id \
                   ORDER BY block_number DESC, transaction_index DESC, log_index DESC LIMIT 1) l \
                 WHERE c.chain_id IS NOT NULL";
    let rows = client
        .query(query, &[])
        .await
        .map_err(ExportError::sql("events: cannot read the positions"))?;
    let mut positions = std::collections::BTreeMap::new();
    for row in rows {
        let chain: i64 = row.get(0);
        let block: i64 = row.get(1);
        let tx: String = row.get(2);
        let log: String = row.get(3);
        let Some(position) = position_of(block, &tx, &log) else {
            return Err(ExportError::BadPosition {
                chain,
                block,
                tx,
                log,
            });
        };
        positions.insert(chain, position);
    }
    Ok(positions)
}

/// One new event of `events`, as far as the tail needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub chain_id: i64,
    pub position: Position,
    pub touches: Touch,
}

/// What an event touches (docs/live.md, "The tail", step 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Touch {
    /// `ListOp`: a storage location, and its op is new.
    Op(Lsl),
    /// `UpdateListMetadata`: a storage location.
    Location(Lsl),
    /// `Transfer`, `UpdateListStorageLocation`: a list, whose ops are read
    /// again at its (maybe new) storage location.
    List(u64),
    /// `UpdateAccountMetadata`: an account's primary list.
    Account(Address),
    /// Any other event, or one whose arguments do not parse.
    Nothing,
}

/// The events of `chain_id` from block `from_block` on, in position order.
pub async fn events_since(
    client: &Client,
    chain_id: i64,
    from_block: u64,
) -> Result<Vec<Event>, ExportError> {
    let rows = client
        .query(
            "SELECT block_number, transaction_index::text, log_index::text, event_name::text, \
             contract_address::text, event_args->>'slot', event_args->>'tokenId', \
             event_args->>'addr' \
             FROM events WHERE chain_id = $1 AND block_number >= $2 \
             ORDER BY block_number, transaction_index, log_index",
            &[&chain_id, &(from_block.min(i64::MAX as u64) as i64)],
        )
        .await
        .map_err(ExportError::sql("events"))?;
    let mut events = Vec::with_capacity(rows.len());
    for row in rows {
        let block: i64 = row.get(0);
        let (tx, log): (String, String) = (row.get(1), row.get(2));
        let Some(position) = position_of(block, &tx, &log) else {
            continue;
        };
        let name: String = row.get(3);
        let contract: Option<String> = row.get(4);
        let text = |i: usize| row.get::<_, Option<String>>(i);
        let lsl = || {
            let contract = address(contract.as_deref())?;
            let slot = hex_fixed::<32>(text(5)?.as_bytes())?;
            Some(Lsl {
                chain_id,
                contract,
                slot,
            })
        };
        let touches = match name.as_str() {
            "ListOp" => lsl().map_or(Touch::Nothing, Touch::Op),
            "UpdateListMetadata" => lsl().map_or(Touch::Nothing, Touch::Location),
            "Transfer" | "UpdateListStorageLocation" => text(6)
                .as_deref()
                .and_then(token_id)
                .map_or(Touch::Nothing, Touch::List),
            "UpdateAccountMetadata" => address(text(7).as_deref())
                .or_else(|| text(7).and_then(|a| address(Some(&a.to_ascii_lowercase()))))
                .map_or(Touch::Nothing, Touch::Account),
            _ => Touch::Nothing,
        };
        events.push(Event {
            chain_id,
            position,
            touches,
        });
    }
    Ok(events)
}

/// A uint256 token id as the indexer writes it (`0x` + 64 hex digits) or
/// as decimal text (what older servers' triggers leave); ids outside
/// 1..2^63-1 name no exportable list.
pub fn token_id(text: &str) -> Option<u64> {
    let n = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => {
            let digits = hex.trim_start_matches('0');
            if hex.is_empty() || digits.len() > 16 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            u64::from_str_radix(if digits.is_empty() { "0" } else { digits }, 16).ok()?
        }
        None => text.parse::<u64>().ok()?,
    };
    (1..=i64::MAX as u64).contains(&n).then_some(n)
}

/// What a poll re-reads: the entities its new events touched.
#[derive(Debug, Default)]
pub struct Touched {
    pub locations: BTreeSet<(i64, Address, [u8; 32])>,
    pub lists: BTreeSet<u64>,
    /// Lists whose ops are read again whole (a storage location set or
    /// moved, a mint, or an op the base may already hold).
    pub rescan: BTreeSet<u64>,
    pub accounts: BTreeSet<Address>,
    /// New `ListOp` events to add as ops: (chain, position).
    pub ops: Vec<(i64, Position)>,
    /// Storage locations of ops the base may already hold: their lists'
    /// ops are read again whole instead.
    pub rescan_locations: BTreeSet<(i64, Address, [u8; 32])>,
}

impl Touched {
    pub fn is_empty(&self) -> bool {
        self.locations.is_empty() && self.lists.is_empty() && self.accounts.is_empty()
    }
}

/// The touched entities re-read.
#[derive(Debug, Default)]
pub struct Reread {
    pub lists: BTreeMap<u64, ListState>,
    /// Each touched account's primary list now (`None`: none valid).
    pub primary: BTreeMap<Address, Option<u64>>,
    /// New ops, each with its key.
    pub ops: Vec<(OpRow, OpKey)>,
    /// Lists whose ops were read again whole.
    pub rescanned: BTreeMap<u64, Vec<(OpRow, OpKey)>>,
    /// Where each re-read list is now (`None`: no location, or no such
    /// list), for [`ListLocations::set`].
    pub located: Vec<(u64, Option<Lsl>)>,
}

/// A slot as the indexer may store it, as `bytea` literals: its raw 32
/// bytes, and the ASCII of its `0x` hex.
fn slot_literals(slot: &[u8; 32]) -> [String; 2] {
    let bytea = |bytes: &[u8]| format!("'\\x{}'::bytea", faster_hex::hex_string(bytes));
    [
        bytea(slot),
        bytea(format!("0x{}", faster_hex::hex_string(slot)).as_bytes()),
    ]
}

fn lsl_of(&(chain_id, contract, slot): &(i64, Address, [u8; 32])) -> Lsl {
    Lsl {
        chain_id,
        contract,
        slot,
    }
}

/// The NFT chains and contracts `efp_lists` stores (its key's prefix),
/// by a loose index scan: one probe each.
async fn list_keys(client: &Client) -> Result<(Vec<i64>, Vec<String>), ExportError> {
    let rows = client
        .query(
            "WITH RECURSIVE c AS ( \
               (SELECT nft_chain_id, nft_contract_address FROM efp_lists \
                ORDER BY nft_chain_id, nft_contract_address LIMIT 1) \
               UNION ALL \
               SELECT n.nft_chain_id, n.nft_contract_address FROM c, LATERAL \
                (SELECT nft_chain_id, nft_contract_address FROM efp_lists t \
                 WHERE (t.nft_chain_id, t.nft_contract_address) \
                     > (c.nft_chain_id, c.nft_contract_address) \
                 ORDER BY nft_chain_id, nft_contract_address LIMIT 1) n) \
             SELECT DISTINCT nft_chain_id, nft_contract_address::text FROM c",
            &[],
        )
        .await
        .map_err(ExportError::sql("efp_lists"))?;
    let mut chains: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
    let mut contracts: Vec<String> = rows.iter().map(|r| r.get(1)).collect();
    chains.sort_unstable();
    chains.dedup();
    contracts.sort_unstable();
    contracts.dedup();
    Ok((chains, contracts))
}

/// The lists `tokens` of `efp_lists`, as a predicate its primary key
/// answers (every stored chain and contract: a token stored under two
/// is read under both, and the export's rule picks one).
fn by_key((chains, contracts): &(Vec<i64>, Vec<String>), tokens: &BTreeSet<u64>) -> String {
    if chains.is_empty() || tokens.is_empty() {
        return "FALSE".into();
    }
    let texts = contracts
        .iter()
        .map(|c| format!("'{}'", c.replace('\'', "''")));
    format!(
        "nft_chain_id = ANY(ARRAY[{}]::int8[]) AND \
         nft_contract_address::text = ANY(ARRAY[{}]::text[]) AND \
         token_id = ANY(ARRAY[{}]::int8[])",
        list_of(chains),
        list_of(texts),
        list_of(tokens)
    )
}

/// The rows of `table` (keyed `(chain_id, contract_address, slot, …)`)
/// at `locations`, as a predicate its primary key answers: each
/// location's contract in every spelling the table stores it (found by a
/// loose index scan, one probe per stored contract), each slot in both
/// encodings. The export matches contracts case-insensitively; a
/// predicate on `lower(contract_address)` would scan the whole table.
async fn at_locations(
    client: &Client,
    table: &str,
    locations: &BTreeSet<(i64, Address, [u8; 32])>,
) -> Result<String, ExportError> {
    let stored = client
        .query(
            &format!(
                "WITH RECURSIVE c AS ( \
                   (SELECT chain_id, contract_address FROM {table} \
                    ORDER BY chain_id, contract_address LIMIT 1) \
                   UNION ALL \
                   SELECT n.chain_id, n.contract_address FROM c, LATERAL \
                    (SELECT chain_id, contract_address FROM {table} t \
                     WHERE (t.chain_id, t.contract_address) > (c.chain_id, c.contract_address) \
                     ORDER BY chain_id, contract_address LIMIT 1) n) \
                 SELECT chain_id, contract_address::text FROM c"
            ),
            &[],
        )
        .await
        .map_err(ExportError::sql(table))?;
    let mut values = Vec::new();
    for (chain, contract, slot) in locations {
        let want = format_address(contract);
        for row in &stored {
            let (c, raw): (i64, String) = (row.get(0), row.get(1));
            if c != *chain || raw.to_ascii_lowercase() != want {
                continue;
            }
            let raw = raw.replace('\'', "''");
            for literal in slot_literals(slot) {
                values.push(format!("({c}, '{raw}', {literal})"));
            }
        }
    }
    if values.is_empty() {
        return Ok("FALSE".into());
    }
    Ok(format!(
        "(chain_id, contract_address, slot) IN (VALUES {})",
        values.join(", ")
    ))
}

fn list_of<T: ToString>(items: impl IntoIterator<Item = T>) -> String {
    items
        .into_iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn tokens_at(index: &ListIndex, location: &(i64, Address, [u8; 32])) -> Vec<u64> {
    let mut out = Vec::new();
    index.tokens(&lsl_of(location), &mut out);
    out
}

/// Re-reads every entity `touched` names, whole, with the export's
/// mapping; skipped rows are counted in `skips` as the export counts them.
pub async fn reread(
    client: &Client,
    touched: &Touched,
    known: &ListLocations,
    skips: &mut Skips,
) -> Result<Reread, ExportError> {
    let mut out = Reread::default();
    // 1. The lists: those named, and every list at a touched location
    // (`known` says which); their own locations join the touched ones,
    // and the lists there, until no list is new. Read by their key.
    let mut locations = touched.locations.clone();
    let mut tokens = touched.lists.clone();
    for l in &locations {
        known.tokens_at(&lsl_of(l), &mut tokens);
    }
    if tokens.is_empty() && locations.is_empty() {
        return primary_lists(client, touched, skips, out).await;
    }
    let keys = list_keys(client).await?;
    let mut asked: BTreeSet<u64> = BTreeSet::new();
    let mut ignored = Skips::default();
    while tokens.len() > asked.len() {
        let new: BTreeSet<u64> = tokens.difference(&asked).copied().collect();
        let sql = by_key(&keys, &new);
        let index = source::lists(client, None, &mut ignored, Only(Some(&sql)), Only::ALL).await?;
        asked.extend(new);
        for (lsl, at) in index.iter() {
            if locations.insert((lsl.chain_id, lsl.contract, lsl.slot)) {
                known.tokens_at(&lsl, &mut tokens);
            }
            tokens.extend(at);
        }
    }
    let lists_sql = by_key(&keys, &tokens);
    let roles_sql = if locations.is_empty() {
        None
    } else {
        Some(at_locations(client, "efp_list_metadata", &locations).await?)
    };
    let mut sink = TableSink::memory(Table::Lists);
    let index = source::lists(
        client,
        Some(&mut sink),
        skips,
        Only(Some(&lists_sql)),
        Only(Some(roles_sql.as_deref().unwrap_or("FALSE"))),
    )
    .await?;
    for &token in &tokens {
        out.lists.insert(token, ListState::default());
    }
    let mut at: BTreeMap<u64, Lsl> = BTreeMap::new();
    for (lsl, there) in index.iter() {
        at.extend(there.into_iter().map(|t| (t, lsl)));
    }
    out.located = tokens.iter().map(|t| (*t, at.get(t).copied())).collect();
    for row in sink.into_rows().lists {
        let token = row.token_id;
        out.lists.entry(token).or_default().row = Some(row);
    }

    // 2. Records and tags at those locations, for the lists there.
    if !locations.is_empty() {
        let at = at_locations(client, "efp_list_records", &locations).await?;
        let mut sink = TableSink::memory(Table::ListRecords);
        source::list_records(client, &index, &mut sink, skips, Only(Some(&at))).await?;
        for row in sink.into_rows().list_records {
            if let Some(list) = out.lists.get_mut(&row.token_id) {
                list.records.push(row);
            }
        }
        let at = at_locations(client, "efp_list_record_tags", &locations).await?;
        let mut sink = TableSink::memory(Table::ListRecordTags);
        source::list_record_tags(client, &index, &mut sink, skips, Only(Some(&at))).await?;
        for row in sink.into_rows().list_record_tags {
            if let Some(list) = out.lists.get_mut(&row.token_id) {
                list.tags.push(row);
            }
        }
    }

    // 3. The new ops, for the lists at their locations now.
    if !touched.ops.is_empty() {
        let keys = touched
            .ops
            .iter()
            .map(|(chain, [b, t, l])| format!("({chain}, {b}, {t}, {l})"));
        let at = format!(
            "(chain_id, block_number, transaction_index, log_index) IN ({})",
            list_of(keys)
        );
        out.ops = ops(client, &index, skips, &at).await?;
    }
    // 4. Whole op histories: lists set to or moved to a location, minted,
    // or at a location whose new op the base may already hold.
    let mut rescan: BTreeSet<u64> = touched.rescan.clone();
    for location in &touched.rescan_locations {
        rescan.extend(tokens_at(&index, location));
    }
    let mut only = ListIndex::default();
    let mut slots = BTreeSet::new();
    for (lsl, at) in index.iter() {
        for token in at.into_iter().filter(|t| rescan.contains(t)) {
            only.insert(lsl, token);
            slots.insert(format!(
                "({}, '0x{}')",
                lsl.chain_id,
                faster_hex::hex_string(&lsl.slot)
            ));
        }
    }
    for &token in &rescan {
        out.rescanned.insert(token, Vec::new());
    }
    if !slots.is_empty() {
        // One linear scan: the hashed `= ANY` first, then the pairs.
        let texts = slots
            .iter()
            .map(|s| s.split_once(", ").map_or("", |p| p.1).trim_end_matches(')'));
        let at = format!(
            "lower(event_args->>'slot') = ANY(ARRAY[{}]::text[]) AND \
             (chain_id, lower(event_args->>'slot')) IN ({})",
            list_of(texts),
            list_of(&slots)
        );
        for (row, key) in ops(client, &only, &mut Skips::default(), &at).await? {
            out.rescanned
                .entry(row.token_id)
                .or_default()
                .push((row, key));
        }
    }
    // New ops of rescanned lists are in their histories already.
    out.ops
        .retain(|(row, _)| !out.rescanned.contains_key(&row.token_id));
    primary_lists(client, touched, skips, out).await
}

async fn ops(
    client: &Client,
    index: &ListIndex,
    skips: &mut Skips,
    at: &str,
) -> Result<Vec<(OpRow, OpKey)>, ExportError> {
    let mut sink = TableSink::memory(Table::ListOps);
    let mut keys = Vec::new();
    source::list_ops(
        client,
        index,
        &mut sink,
        skips,
        Only(Some(at)),
        Some(&mut keys),
    )
    .await?;
    Ok(sink.into_rows().list_ops.into_iter().zip(keys).collect())
}

async fn primary_lists(
    client: &Client,
    touched: &Touched,
    skips: &mut Skips,
    mut out: Reread,
) -> Result<Reread, ExportError> {
    if touched.accounts.is_empty() {
        return Ok(out);
    }
    let at = format!(
        "lower(address) IN ({})",
        list_of(
            touched
                .accounts
                .iter()
                .map(|a| format!("'{}'", format_address(a)))
        )
    );
    let mut sink = TableSink::memory(Table::PrimaryLists);
    source::primary_lists(client, &mut sink, skips, Only(Some(&at))).await?;
    for a in &touched.accounts {
        out.primary.insert(*a, None);
    }
    for row in sink.into_rows().primary_lists {
        out.primary.insert(row.address, Some(row.token_id));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_ids_in_hex_and_decimal() {
        assert_eq!(token_id(&format!("0x{:064x}", 42)), Some(42));
        assert_eq!(token_id("42"), Some(42));
        assert_eq!(token_id(&format!("0x{:064x}", 0)), None);
        assert_eq!(token_id("0"), None);
        assert_eq!(token_id(&format!("0x1{}", "0".repeat(63))), None);
        assert_eq!(token_id("9223372036854775808"), None);
        assert_eq!(token_id("0x"), None);
        assert_eq!(token_id("-1"), None);
    }

    #[test]
    fn slots_match_both_encodings() {
        let [raw, text] = slot_literals(&[0xab; 32]);
        assert_eq!(raw, format!("'\\x{}'::bytea", "ab".repeat(32)));
        let hex = faster_hex::hex_string(format!("0x{}", "ab".repeat(32)).as_bytes());
        assert_eq!(text, format!("'\\x{hex}'::bytea"));
    }
}
