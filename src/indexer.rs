//! `followgraph generate --indexer-database-url`: the generator's graph
//! written into the protocol indexer's tables (tests/indexer/schema.sql),
//! so that `followgraph export` of that database gives a snapshot that
//! serves exactly like the one `generate --out` writes.
//!
//! Mapping of the snapshot tables onto the indexer's (EXPORT.md):
//! - every list lives on [`LIST_CHAIN_ID`], its NFT in [`LIST_NFT_CONTRACT`],
//!   its storage location (LSL) in [`LIST_RECORDS_CONTRACT`] at slot
//!   [`slot_of`]`(token_id)`. `user` and `manager` are spread over the
//!   `efp_lists` columns and `efp_list_metadata` so that every rule of the
//!   export is used, by `token_id % 4`: 0 both hold the real values, 1 the
//!   columns hold the zero address, 2 there is no metadata, 3 the columns
//!   hold a stale non-zero address that the metadata overrides.
//! - `primary_lists` rows are `primary-list` account metadata; every 10th
//!   also has an older row in another contract naming another list.
//! - records, tags: `efp_list_records` / `efp_list_record_tags` at the LSL;
//!   a few lists also hold a record of another type that the export
//!   ignores.
//! - `list_ops` are `ListOp` rows of `events`, whose (block_number,
//!   transaction_index, log_index) follow `seq`; a few other events are
//!   mixed in.
//! - `ens` rows are `ens_metadata` rows (header only inside `records`,
//!   `chains` null); badges go to the tests' own `poap_events` /
//!   `poap_holdings` (tests/indexer/badge_tables.sql).

use std::fmt::Write as _;
use std::time::Instant;

use bytes::Bytes;
use futures_util::SinkExt;
use tokio_postgres::{Client, Transaction};

use crate::generate::{generate_tables, GenerateOptions};
use crate::pg::{connect, describe, redact_url};
use crate::snapshot::{push_hex, Address, Tables};

/// Chain id of every list, storage location and account-metadata row.
pub const LIST_CHAIN_ID: i64 = 8453;
/// The list NFT contract (`efp_lists.nft_contract_address`).
pub const LIST_NFT_CONTRACT: &str = "0x0e688f5dca4a0a4729946acbc44c792341714e08";
/// The list records contract: every list's storage location.
pub const LIST_RECORDS_CONTRACT: &str = "0x41aa48ef3c0446b46a5b1cc6337ff3d3716e2a33";
/// The account metadata contract holding `primary-list` rows.
pub const ACCOUNT_METADATA_CONTRACT: &str = "0x5289fe5dabc021d02fddf23d4a4df96f4e0f17ef";

/// Chain and contract of the older, superseded `primary-list` rows.
const OLD_ACCOUNT_METADATA_CHAIN_ID: i64 = 1;
const OLD_ACCOUNT_METADATA_CONTRACT: &str = "0x5289fe5dabc021d02fddf23d4a4df96f4e0f1700";
const ZERO_ADDRESS: &str = "0x0000000000000000000000000000000000000000";
/// `events.block_number` of the op with `seq` 0 (4 ops per block).
const FIRST_BLOCK: u64 = 10_000_000;

/// The schema the indexer database is given (same as the tests use).
const SCHEMA_SQL: &str = include_str!("../tests/indexer/schema.sql");
const BADGE_TABLES_SQL: &str = include_str!("../tests/indexer/badge_tables.sql");

/// COPY data is sent in chunks of about this many bytes.
const CHUNK_BYTES: usize = 1 << 20;

// ---------------------------------------------------------------------------
// Deterministic noise.

/// 64 bits of noise for lane `lane` of `token_id`.
fn noise(token_id: u64, lane: u64) -> u64 {
    crate::rng::keyed(token_id ^ 0x5107_5eed, lane)
}

/// A list's storage slot: 24 bytes of hash noise of the token id, then the
/// token id big-endian (so distinct token ids have distinct slots).
pub fn slot_of(token_id: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    for lane in 0..3 {
        let at = lane * 8;
        out[at..at + 8].copy_from_slice(&noise(token_id, lane as u64 + 1).to_be_bytes());
    }
    out[24..].copy_from_slice(&token_id.to_be_bytes());
    out
}

/// The out-of-date (non-zero) `user`/`manager` column value of lists whose
/// metadata overrides it.
fn stale_address(token_id: u64) -> Address {
    let mut out = [0u8; 20];
    out[..8].copy_from_slice(&noise(token_id, 4).to_be_bytes());
    out[8..16].copy_from_slice(&noise(token_id, 5).to_be_bytes());
    out[16..].copy_from_slice(&noise(token_id, 6).to_be_bytes()[..4]);
    out[0] |= 0x80;
    out
}

/// How a list's `user` and `manager` are stored (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RoleStorage {
    /// Columns and metadata both hold the real values.
    Both,
    /// Columns hold the zero address; metadata the real values.
    MetadataOverZero,
    /// Only the columns (no metadata rows).
    ColumnsOnly,
    /// Columns hold a stale non-zero address; metadata the real values.
    MetadataOverStale,
}

fn role_storage(token_id: u64) -> RoleStorage {
    match token_id % 4 {
        0 => RoleStorage::Both,
        1 => RoleStorage::MetadataOverZero,
        2 => RoleStorage::ColumnsOnly,
        _ => RoleStorage::MetadataOverStale,
    }
}

/// Lists that also get a `location-note` metadata row.
fn has_location_note(token_id: u64) -> bool {
    token_id % 97 == 5
}

/// Lists that also hold a record of record type 2.
fn has_foreign_record(token_id: u64) -> bool {
    token_id % 53 == 7
}

/// The 22 bytes of a version-1 type-1 (address) record.
fn address_record(address: &Address) -> [u8; 22] {
    let mut out = [0u8; 22];
    out[0] = 1;
    out[1] = 1;
    out[2..].copy_from_slice(address);
    out
}

// ---------------------------------------------------------------------------
// COPY text format.

/// Rows of one `COPY ... FROM STDIN` in PostgreSQL's text format, built in a
/// buffer that is handed off in chunks.
pub(crate) struct CopyText {
    buf: String,
    columns: usize,
    fields: usize,
    rows: u64,
}

impl CopyText {
    pub(crate) fn new(columns: usize) -> Self {
        CopyText {
            buf: String::with_capacity(CHUNK_BYTES + 64 * 1024),
            columns,
            fields: 0,
            rows: 0,
        }
    }

    fn field(&mut self) -> &mut String {
        if self.fields > 0 {
            self.buf.push('\t');
        }
        self.fields += 1;
        &mut self.buf
    }

    /// A text value, escaped.
    pub(crate) fn text(&mut self, value: &str) {
        let buf = self.field();
        push_escaped(buf, value);
    }

    pub(crate) fn opt_text(&mut self, value: Option<&str>) {
        match value {
            Some(v) => self.text(v),
            None => self.null(),
        }
    }

    /// A value known to need no escaping (hex, digits, fixed words).
    fn raw(&mut self, value: &str) {
        debug_assert!(!value.contains(['\\', '\t', '\n', '\r']));
        self.field().push_str(value);
    }

    pub(crate) fn null(&mut self) {
        self.field().push_str("\\N");
    }

    pub(crate) fn int(&mut self, value: i64) {
        let _ = write!(self.field(), "{value}");
    }

    fn address(&mut self, address: &Address) {
        let buf = self.field();
        buf.push_str("0x");
        push_hex(buf, address);
    }

    /// A BYTEA in hex form: `\x…`, its backslash escaped for COPY.
    pub(crate) fn bytea(&mut self, bytes: &[u8]) {
        let buf = self.field();
        buf.push_str("\\\\x");
        push_hex(buf, bytes);
    }

    /// A TIMESTAMPTZ from epoch milliseconds (`2026-11-20T12:00:00.000Z`).
    pub(crate) fn timestamp(&mut self, ms: i64) {
        crate::time::write_iso_ms(self.field(), ms);
    }

    /// Ends the row.
    pub(crate) fn end(&mut self) {
        assert_eq!(
            self.fields, self.columns,
            "COPY row with a wrong field count"
        );
        self.buf.push('\n');
        self.fields = 0;
        self.rows += 1;
    }

    fn take(&mut self) -> Bytes {
        let next = String::with_capacity(CHUNK_BYTES + 64 * 1024);
        Bytes::from(std::mem::replace(&mut self.buf, next))
    }
}

/// Appends `value` escaped for COPY's text format: backslash, tab, newline
/// and carriage return are the only characters that need it.
pub(crate) fn push_escaped(out: &mut String, value: &str) {
    if !value
        .bytes()
        .any(|b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r'))
    {
        out.push_str(value);
        return;
    }
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

/// Streams `items` into `table (columns)`: `write` turns one item into zero
/// or more rows. Returns the number of rows PostgreSQL reports.
async fn copy_rows<T>(
    tx: &Transaction<'_>,
    table: &str,
    columns: &[&str],
    items: impl IntoIterator<Item = T>,
    mut write: impl FnMut(&mut CopyText, T),
) -> Result<u64, String> {
    let fail = |e: tokio_postgres::Error| format!("COPY {table}: {}", describe(&e));
    let sql = format!("COPY {table} ({}) FROM STDIN", columns.join(", "));
    let sink = tx.copy_in::<_, Bytes>(&sql).await.map_err(fail)?;
    futures_util::pin_mut!(sink);
    let mut out = CopyText::new(columns.len());
    for item in items {
        write(&mut out, item);
        if out.buf.len() >= CHUNK_BYTES {
            sink.send(out.take()).await.map_err(fail)?;
        }
    }
    if !out.buf.is_empty() {
        sink.send(out.take()).await.map_err(fail)?;
    }
    let copied = sink.as_mut().finish().await.map_err(fail)?;
    if copied != out.rows {
        return Err(format!(
            "COPY {table}: PostgreSQL reports {copied} rows, {} were sent",
            out.rows
        ));
    }
    Ok(copied)
}

// ---------------------------------------------------------------------------
// The command.

/// Writes the graph `generate` would write for `opts` into the empty
/// database at `url`; returns a one-line summary of the rows written.
pub fn generate_into_database(url: &str, opts: &GenerateOptions) -> Result<String, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let shown = redact_url(url);
    let mut client = runtime.block_on(async {
        let client = connect(url, "followgraph-generate").await?;
        check_empty(&client, &shown).await?;
        Ok::<_, String>(client)
    })?;

    let tables = generate_with_progress(opts);
    check_representable(&tables)?;

    runtime.block_on(write_tables(&mut client, &tables, opts))
}

/// Refuses a database that already holds the indexer's tables.
async fn check_empty(client: &Client, shown: &str) -> Result<(), String> {
    let row = client
        .query_one("SELECT to_regclass('public.efp_lists') IS NOT NULL", &[])
        .await
        .map_err(|e| format!("cannot inspect {shown}: {}", describe(&e)))?;
    if row.get::<_, bool>(0) {
        return Err(format!(
            "{shown} already has a table public.efp_lists: generate writes only into an empty database"
        ));
    }
    Ok(())
}

fn generate_with_progress(opts: &GenerateOptions) -> Tables {
    let mut last_pct = None;
    let tables = generate_tables(opts, &mut |done, total| {
        if !opts.progress {
            return;
        }
        let pct = (done * 100).checked_div(total).unwrap_or(100);
        if last_pct != Some(pct) {
            last_pct = Some(pct);
            eprint!("\rgenerating {pct:3}% {done}/{total} accounts");
        }
    });
    if opts.progress {
        eprintln!();
    }
    tables
}

/// The rows the indexer's schema cannot hold as they are.
fn check_representable(tables: &Tables) -> Result<(), String> {
    for e in &tables.ens {
        if e.chains.is_some() {
            return Err(format!(
                "ens row {}: chains cannot be stored in the indexer (exported as null)",
                e.name
            ));
        }
        if e.header.is_some() && e.records.is_none() {
            return Err(format!(
                "ens row {}: a header without records cannot be stored in the indexer",
                e.name
            ));
        }
    }
    Ok(())
}

/// Counts per indexer table, for the summary.
#[derive(Default)]
struct Counts {
    lists: u64,
    list_metadata: u64,
    account_metadata: u64,
    records: u64,
    tags: u64,
    events: u64,
    ens: u64,
    badge_events: u64,
    badges: u64,
}

impl Counts {
    fn total(&self) -> u64 {
        self.lists
            + self.list_metadata
            + self.account_metadata
            + self.records
            + self.tags
            + self.events
            + self.ens
            + self.badge_events
            + self.badges
    }
}

async fn write_tables(
    client: &mut Client,
    tables: &Tables,
    opts: &GenerateOptions,
) -> Result<String, String> {
    let tx = client
        .transaction()
        .await
        .map_err(|e| format!("BEGIN: {}", describe(&e)))?;
    tx.batch_execute("SET LOCAL synchronous_commit = off")
        .await
        .map_err(|e| format!("SET: {}", describe(&e)))?;
    tx.batch_execute(SCHEMA_SQL)
        .await
        .map_err(|e| format!("creating the indexer's tables: {}", describe(&e)))?;
    tx.batch_execute(BADGE_TABLES_SQL)
        .await
        .map_err(|e| format!("creating the badge tables: {}", describe(&e)))?;

    let mut c = Counts::default();
    let progress = |table: &str, rows: u64, started: Instant| {
        if opts.progress {
            eprintln!(
                "{table}: {rows} rows in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
    };

    let t = Instant::now();
    c.lists = copy_lists(&tx, tables).await?;
    progress("efp_lists", c.lists, t);
    let t = Instant::now();
    c.list_metadata = copy_list_metadata(&tx, tables).await?;
    progress("efp_list_metadata", c.list_metadata, t);
    let t = Instant::now();
    c.account_metadata = copy_account_metadata(&tx, tables, opts.created_at_ms).await?;
    progress("efp_account_metadata", c.account_metadata, t);
    let t = Instant::now();
    c.records = copy_records(&tx, tables).await?;
    progress("efp_list_records", c.records, t);
    let t = Instant::now();
    c.tags = copy_tags(&tx, tables).await?;
    progress("efp_list_record_tags", c.tags, t);
    let t = Instant::now();
    c.events = copy_events(&tx, tables).await?;
    progress("events", c.events, t);
    let t = Instant::now();
    c.ens = copy_ens(&tx, tables).await?;
    progress("ens_metadata", c.ens, t);
    let t = Instant::now();
    (c.badge_events, c.badges) = copy_badges(&tx, tables).await?;
    progress("poap_events, poap_holdings", c.badge_events + c.badges, t);

    let t = Instant::now();
    tx.commit()
        .await
        .map_err(|e| format!("COMMIT: {}", describe(&e)))?;
    progress("commit", 0, t);
    Ok(format!(
        "{} lists ({} list metadata), {} account metadata, {} records, {} tags, \
         {} events ({} ops), {} ens, {} badge events, {} badges ({} rows)",
        c.lists,
        c.list_metadata,
        c.account_metadata,
        c.records,
        c.tags,
        c.events,
        tables.list_ops.len(),
        c.ens,
        c.badge_events,
        c.badges,
        c.total()
    ))
}

async fn copy_lists(tx: &Transaction<'_>, tables: &Tables) -> Result<u64, String> {
    const COLUMNS: &[&str] = &[
        "nft_chain_id",
        "nft_contract_address",
        "token_id",
        "owner",
        "manager",
        "\"user\"",
        "list_storage_location",
        "list_storage_location_chain_id",
        "list_storage_location_contract_address",
        "list_storage_location_slot",
    ];
    let mut lsl = String::with_capacity(256);
    copy_rows(tx, "efp_lists", COLUMNS, &tables.lists, |out, l| {
        let slot = slot_of(l.token_id);
        out.int(LIST_CHAIN_ID);
        out.raw(LIST_NFT_CONTRACT);
        out.int(l.token_id as i64);
        out.address(&l.owner);
        match role_storage(l.token_id) {
            RoleStorage::Both | RoleStorage::ColumnsOnly => {
                out.address(&l.manager);
                out.address(&l.user);
            }
            RoleStorage::MetadataOverZero => {
                out.raw(ZERO_ADDRESS);
                out.raw(ZERO_ADDRESS);
            }
            RoleStorage::MetadataOverStale => {
                let stale = stale_address(l.token_id);
                out.address(&stale);
                out.address(&stale);
            }
        }
        // The location as the contract encodes it: version 1, type 1,
        // uint256 chain id, contract, slot.
        lsl.clear();
        let _ = write!(lsl, "0x0101{LIST_CHAIN_ID:064x}");
        lsl.push_str(&LIST_RECORDS_CONTRACT[2..]);
        push_hex(&mut lsl, &slot);
        out.raw(&lsl);
        out.int(LIST_CHAIN_ID);
        out.raw(LIST_RECORDS_CONTRACT);
        out.bytea(&slot);
        out.end();
    })
    .await
}

async fn copy_list_metadata(tx: &Transaction<'_>, tables: &Tables) -> Result<u64, String> {
    const COLUMNS: &[&str] = &["chain_id", "contract_address", "slot", "\"key\"", "value"];
    copy_rows(tx, "efp_list_metadata", COLUMNS, &tables.lists, |out, l| {
        let slot = slot_of(l.token_id);
        let mut row = |key: &str, value: &[u8]| {
            out.int(LIST_CHAIN_ID);
            out.raw(LIST_RECORDS_CONTRACT);
            out.bytea(&slot);
            out.raw(key);
            let buf = out.field();
            buf.push_str("0x");
            push_hex(buf, value);
            out.end();
        };
        if role_storage(l.token_id) != RoleStorage::ColumnsOnly {
            row("user", &l.user);
            row("manager", &l.manager);
        }
        if has_location_note(l.token_id) {
            row("location-note", &slot[..8]);
        }
    })
    .await
}

async fn copy_account_metadata(
    tx: &Transaction<'_>,
    tables: &Tables,
    created_at_ms: i64,
) -> Result<u64, String> {
    const COLUMNS: &[&str] = &[
        "chain_id",
        "contract_address",
        "address",
        "\"key\"",
        "value",
        "updated_at",
    ];
    let rows = tables.primary_lists.iter().enumerate();
    copy_rows(tx, "efp_account_metadata", COLUMNS, rows, |out, (i, p)| {
        let i = i as u64;
        let updated_at = created_at_ms - 86_400_000 - (i % 100_000) as i64 * 60_000;
        let mut row = |chain_id: i64, contract: &str, key: &str, value: &str, at: i64| {
            out.int(chain_id);
            out.raw(contract);
            out.address(&p.address);
            out.raw(key);
            out.raw(value);
            out.timestamp(at);
            out.end();
        };
        let value = format!("0x{:064x}", p.token_id);
        row(
            LIST_CHAIN_ID,
            ACCOUNT_METADATA_CONTRACT,
            "primary-list",
            &value,
            updated_at,
        );
        if i.is_multiple_of(10) {
            // An older choice in another contract: the newest row wins.
            let older = format!("0x{:064x}", p.token_id + 1);
            row(
                OLD_ACCOUNT_METADATA_CHAIN_ID,
                OLD_ACCOUNT_METADATA_CONTRACT,
                "primary-list",
                &older,
                updated_at - 30 * 86_400_000,
            );
        }
        if i % 50 == 3 {
            let mut name = String::from("0x");
            push_hex(&mut name, format!("account {i}").as_bytes());
            row(
                LIST_CHAIN_ID,
                ACCOUNT_METADATA_CONTRACT,
                "display-name",
                &name,
                updated_at,
            );
        }
    })
    .await
}

/// The rows of `rows` grouped by list (a list's rows are contiguous in the
/// generated tables), lists in slot order and each list's rows sorted by
/// `order`: the order of the (chain_id, contract_address, slot, record…)
/// primary keys, so PostgreSQL appends to those indexes instead of
/// inserting at random pages of an index far larger than its buffers.
fn in_key_order<'a, T>(
    rows: &'a [T],
    token_id: impl Fn(&T) -> u64,
    order: impl Fn(&T, &T) -> std::cmp::Ordering + Copy + 'a,
) -> impl Iterator<Item = (u64, [u8; 32], Vec<&'a T>)> + 'a {
    let mut lists: Vec<([u8; 32], u64, usize, usize)> = Vec::new();
    let mut start = 0;
    for i in 1..=rows.len() {
        let token = token_id(&rows[start]);
        if i == rows.len() || token_id(&rows[i]) != token {
            lists.push((slot_of(token), token, start, i));
            start = i;
        }
    }
    lists.sort_unstable();
    lists.into_iter().map(move |(slot, token, start, end)| {
        let mut list: Vec<&T> = rows[start..end].iter().collect();
        list.sort_by(|a, b| order(a, b));
        (token, slot, list)
    })
}

async fn copy_records(tx: &Transaction<'_>, tables: &Tables) -> Result<u64, String> {
    const COLUMNS: &[&str] = &[
        "chain_id",
        "contract_address",
        "slot",
        "record",
        "record_version",
        "record_type",
        "record_data",
        "updated_at",
    ];
    let lists = in_key_order(
        &tables.list_records,
        |r| r.token_id,
        |a, b| a.address.cmp(&b.address),
    );
    copy_rows(
        tx,
        "efp_list_records",
        COLUMNS,
        lists,
        |out, (token, slot, list)| {
            let record =
                |out: &mut CopyText, record: &[u8], record_type: i64, data: &[u8], at: i64| {
                    out.int(LIST_CHAIN_ID);
                    out.raw(LIST_RECORDS_CONTRACT);
                    out.bytea(&slot);
                    out.bytea(record);
                    out.int(1);
                    out.int(record_type);
                    out.bytea(data);
                    out.timestamp(at);
                    out.end();
                };
            for r in &list {
                record(
                    out,
                    &address_record(&r.address),
                    1,
                    &r.address,
                    r.updated_at,
                );
            }
            if has_foreign_record(token) {
                // A record of another type (its bytes sort after the address
                // records' 0x0101…), which the export ignores.
                let (bytes, data) = foreign_record(token);
                let at = list.iter().map(|r| r.updated_at).max().unwrap_or(0);
                record(out, &bytes, 2, &data, at);
            }
        },
    )
    .await
}

/// The (record, record_data) of a type-2 record: 32 bytes of data.
fn foreign_record(token_id: u64) -> (Vec<u8>, [u8; 32]) {
    let mut data = [0u8; 32];
    for lane in 0..4 {
        let at = lane * 8;
        data[at..at + 8].copy_from_slice(&noise(token_id, 10 + lane as u64).to_be_bytes());
    }
    let mut record = vec![1, 2];
    record.extend_from_slice(&data);
    (record, data)
}

async fn copy_tags(tx: &Transaction<'_>, tables: &Tables) -> Result<u64, String> {
    const COLUMNS: &[&str] = &[
        "chain_id",
        "contract_address",
        "slot",
        "record",
        "tag",
        "updated_at",
    ];
    // No tags on the type-2 records: the export would skip and report them,
    // and a generated database exports without a single skipped row.
    let lists = in_key_order(
        &tables.list_record_tags,
        |g| g.token_id,
        |a, b| (a.address, &a.tag).cmp(&(b.address, &b.tag)),
    );
    copy_rows(
        tx,
        "efp_list_record_tags",
        COLUMNS,
        lists,
        |out, (_, slot, list)| {
            for g in list {
                out.int(LIST_CHAIN_ID);
                out.raw(LIST_RECORDS_CONTRACT);
                out.bytea(&slot);
                out.bytea(&address_record(&g.address));
                out.text(&g.tag);
                out.timestamp(g.updated_at);
                out.end();
            }
        },
    )
    .await
}

async fn copy_events(tx: &Transaction<'_>, tables: &Tables) -> Result<u64, String> {
    const COLUMNS: &[&str] = &[
        "chain_id",
        "block_number",
        "transaction_index",
        "log_index",
        "contract_address",
        "event_name",
        "event_args",
        "created_at",
    ];
    // The export orders ops by (created_at, chain_id, block_number,
    // transaction_index, log_index) and numbers them; seq grows with
    // updated_at, so these positions give back the same seq.
    if let Some(w) = tables
        .list_ops
        .windows(2)
        .find(|w| w[0].seq >= w[1].seq || w[0].updated_at > w[1].updated_at)
    {
        return Err(format!(
            "list_ops seq {} and {} are not in updated_at order",
            w[0].seq, w[1].seq
        ));
    }
    let mut op_bytes = Vec::with_capacity(64);
    copy_rows(tx, "events", COLUMNS, &tables.list_ops, |out, o| {
        let slot = slot_of(o.token_id);
        let block = (FIRST_BLOCK + o.seq / 4) as i64;
        let transaction = ((o.seq % 4) / 2) as i64;
        let event = |out: &mut CopyText, log: i64, name: &str| {
            out.int(LIST_CHAIN_ID);
            out.int(block);
            out.int(transaction);
            out.int(log);
            out.raw(LIST_RECORDS_CONTRACT);
            out.raw(name);
        };
        event(out, (o.seq % 2) as i64, "ListOp");
        op_bytes.clear();
        op_bytes.extend_from_slice(&[1, o.op.opcode, 1, 1]);
        op_bytes.extend_from_slice(&o.op.target);
        op_bytes.extend_from_slice(o.op.tag.as_bytes());
        let args = out.field();
        args.push_str("{\"slot\": \"0x");
        push_hex(args, &slot);
        args.push_str("\", \"op\": \"0x");
        push_hex(args, &op_bytes);
        args.push_str("\"}");
        out.timestamp(o.updated_at);
        out.end();

        if o.seq.is_multiple_of(1000) {
            // Another event of the same contract (log index 9 is never an
            // op's), which the export ignores.
            event(out, 9, "UpdateListMetadata");
            let args = out.field();
            args.push_str("{\"slot\": \"0x");
            push_hex(args, &slot);
            args.push_str("\", \"key\": \"location-note\", \"value\": \"0x");
            push_hex(args, &slot[..8]);
            args.push_str("\"}");
            out.timestamp(o.updated_at);
            out.end();
        }
    })
    .await
}

async fn copy_ens(tx: &Transaction<'_>, tables: &Tables) -> Result<u64, String> {
    const COLUMNS: &[&str] = &[
        "address", "name", "avatar", "display", "records", "chains", "fresh", "resolver", "errors",
    ];
    copy_rows(tx, "ens_metadata", COLUMNS, &tables.ens, |out, e| {
        out.address(&e.address);
        out.text(&e.name);
        out.opt_text(e.avatar.as_deref());
        out.opt_text(e.display.as_deref());
        // JSON keeps the text as given: key order and spacing survive.
        out.opt_text(e.records.as_deref());
        out.null();
        match e.fresh {
            Some(f) => out.int(f),
            None => out.null(),
        }
        out.opt_text(e.resolver.as_deref());
        out.opt_text(e.errors.as_deref());
        out.end();
    })
    .await
}

async fn copy_badges(tx: &Transaction<'_>, tables: &Tables) -> Result<(u64, u64), String> {
    const EVENT_COLUMNS: &[&str] = &[
        "id",
        "display_order",
        "fancy_id",
        "name",
        "event_url",
        "image_url",
        "country",
        "city",
        "description",
        "year",
        "start_date",
        "end_date",
        "expiry_date",
    ];
    let events = copy_rows(
        tx,
        "poap_events",
        EVENT_COLUMNS,
        &tables.badge_events,
        |out, e| {
            out.int(e.event_id);
            out.int(i64::from(e.position));
            out.text(&e.fancy_id);
            out.text(&e.name);
            out.text(&e.event_url);
            out.text(&e.image_url);
            out.text(&e.country);
            out.text(&e.city);
            out.text(&e.description);
            out.int(i64::from(e.year));
            out.text(&e.start_date);
            out.text(&e.end_date);
            out.text(&e.expiry_date);
            out.end();
        },
    )
    .await?;
    const HOLDING_COLUMNS: &[&str] = &["holder", "event_id", "poap_token_id", "owner_as_reported"];
    let badges = copy_rows(
        tx,
        "poap_holdings",
        HOLDING_COLUMNS,
        &tables.badges,
        |out, b| {
            out.address(&b.address);
            out.int(b.event_id);
            out.text(&b.token_id);
            out.text(&b.owner);
            out.end();
        },
    )
    .await?;
    Ok((events, badges))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn slots_are_distinct_and_end_with_the_token_id() {
        let mut seen = HashSet::new();
        for token in (0..20_000u64).chain([u64::MAX, 1 << 40, (1 << 63) - 1]) {
            let slot = slot_of(token);
            assert_eq!(slot[24..], token.to_be_bytes());
            assert!(seen.insert(slot), "slot of {token} repeats");
            // The 24 noise bytes differ between neighbours.
            assert_ne!(slot[..24], slot_of(token ^ 1)[..24]);
        }
        assert_eq!(slot_of(42), slot_of(42), "deterministic");
    }

    #[test]
    fn stale_addresses_are_not_zero() {
        assert!((0..10_000).all(|t| stale_address(t) != [0u8; 20]));
    }

    #[test]
    fn copy_text_escapes_and_encodes() {
        let mut out = CopyText::new(7);
        out.text("a\\b\tc\nd\re \u{1f525} \"q\"");
        out.null();
        out.opt_text(None);
        out.int(-42);
        out.bytea(&[0x00, 0xab, 0x10]);
        out.timestamp(123);
        out.address(&[0xAB; 20]);
        out.end();
        out.text("");
        out.opt_text(Some("\\N"));
        out.int(0);
        out.bytea(&[]);
        out.raw("x");
        out.timestamp(1_700_000_000_001);
        out.text("plain");
        out.end();
        assert_eq!(out.rows, 2);
        let text = String::from_utf8(out.take().to_vec()).unwrap();
        let mut lines = text.split('\n');
        assert_eq!(
            lines.next().unwrap(),
            format!(
                "a\\\\b\\tc\\nd\\re \u{1f525} \"q\"\t\\N\t\\N\t-42\t\\\\x00ab10\t\
                 1970-01-01T00:00:00.123Z\t0x{}",
                "ab".repeat(20)
            )
        );
        assert_eq!(
            lines.next().unwrap(),
            "\t\\\\N\t0\t\\\\x\tx\t2023-11-14T22:13:20.001Z\tplain"
        );
        assert_eq!(lines.next(), Some(""));
        assert_eq!(lines.next(), None);
        assert!(out.buf.is_empty() && out.rows == 2);
    }

    #[test]
    #[should_panic(expected = "wrong field count")]
    fn copy_text_checks_the_field_count() {
        let mut out = CopyText::new(2);
        out.int(1);
        out.end();
    }

    #[test]
    fn rows_come_in_primary_key_order() {
        let rows: Vec<(u64, u8)> = vec![(5, 3), (5, 1), (9, 2), (2, 7), (2, 0), (2, 4)];
        let out: Vec<_> = in_key_order(&rows, |r| r.0, |a, b| a.1.cmp(&b.1)).collect();
        assert_eq!(out.len(), 3);
        assert!(out.windows(2).all(|w| w[0].1 < w[1].1), "slot order");
        for (token, slot, list) in &out {
            assert_eq!(*slot, slot_of(*token));
            assert!(list.iter().all(|r| r.0 == *token));
            assert!(list.windows(2).all(|w| w[0].1 < w[1].1));
        }
        assert_eq!(out.iter().map(|l| l.2.len()).sum::<usize>(), rows.len());
        assert_eq!(
            in_key_order(&rows[..0], |r| r.0, |a, b| a.cmp(b)).count(),
            0
        );
    }

    #[test]
    fn role_storage_uses_every_path() {
        let kinds: HashSet<_> = (1..=4).map(role_storage).map(|k| k as u8).collect();
        assert_eq!(kinds.len(), 4);
        assert_eq!(address_record(&[7; 20])[..2], [1, 1]);
        let (record, data) = foreign_record(7);
        assert_eq!(record[..2], [1, 2]);
        assert_eq!(record[2..], data);
    }
}
