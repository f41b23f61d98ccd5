//! `followgraph generate --indexer-database-url`: the generator's graph
//! written into the protocol indexer's tables (tests/indexer/schema.sql),
//! so that `followgraph export` of that database gives a snapshot that
//! serves exactly like the one `generate --out` writes.
//!
//! Mapping of the snapshot tables onto the indexer's (docs/export.md):
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
//!
//! The work is split by concern: [`layout`] decides where each generated
//! row goes (slots, how roles are stored, the extra rows the export must
//! ignore), [`copy_text`] streams rows through `COPY ... FROM STDIN`, and
//! [`writers`] holds one writer per indexer table. This file holds the
//! command: the empty-database check, the schema, and the transaction.

mod copy_text;
mod error;
mod layout;
mod writers;

use std::time::Instant;

use tokio_postgres::Client;

use crate::generate::{generate_tables, GenerateOptions};
use crate::pg::{connect, redact_url};
use crate::snapshot::Tables;
use writers::{
    copy_account_metadata, copy_badges, copy_ens, copy_events, copy_list_metadata, copy_lists,
    copy_recommended, copy_records, copy_tags,
};

pub use error::IndexerError;
pub use layout::slot_of;

/// Chain id of every list, storage location and account-metadata row.
pub const LIST_CHAIN_ID: i64 = 8453;
/// The list NFT contract (`efp_lists.nft_contract_address`).
pub const LIST_NFT_CONTRACT: &str = "0x0e688f5dca4a0a4729946acbc44c792341714e08";
/// The list records contract: every list's storage location.
pub const LIST_RECORDS_CONTRACT: &str = "0x41aa48ef3c0446b46a5b1cc6337ff3d3716e2a33";
/// The account metadata contract holding `primary-list` rows.
pub const ACCOUNT_METADATA_CONTRACT: &str = "0x5289fe5dabc021d02fddf23d4a4df96f4e0f17ef";

/// The schema the indexer database is given (same as the tests use).
const SCHEMA_SQL: &str = include_str!("../../tests/indexer/schema.sql");
const BADGE_TABLES_SQL: &str = include_str!("../../tests/indexer/badge_tables.sql");

/// Writes the graph `generate` would write for `opts` into the empty
/// database at `url`; returns a one-line summary of the rows written.
pub fn generate_into_database(url: &str, opts: &GenerateOptions) -> Result<String, IndexerError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(IndexerError::Runtime)?;
    let shown = redact_url(url);
    let mut client = runtime.block_on(async {
        let client = connect(url, "followgraph-generate")
            .await
            .map_err(IndexerError::Connect)?;
        check_empty(&client, &shown).await?;
        Ok::<_, IndexerError>(client)
    })?;

    let tables = generate_with_progress(opts);
    check_representable(&tables)?;

    runtime.block_on(write_tables(&mut client, &tables, opts))
}

/// Refuses a database that already holds the indexer's tables.
async fn check_empty(client: &Client, shown: &str) -> Result<(), IndexerError> {
    let row = client
        .query_one("SELECT to_regclass('public.efp_lists') IS NOT NULL", &[])
        .await
        .map_err(|source| IndexerError::Inspect {
            database: shown.to_owned(),
            source,
        })?;
    if row.get::<_, bool>(0) {
        return Err(IndexerError::NotEmpty {
            database: shown.to_owned(),
        });
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
fn check_representable(tables: &Tables) -> Result<(), IndexerError> {
    for e in &tables.ens {
        let why = if e.chains.is_some() {
            "chains cannot be stored in the indexer (exported as null)"
        } else if e.header.is_some() && e.records.is_none() {
            "a header without records cannot be stored in the indexer"
        } else {
            continue;
        };
        return Err(IndexerError::Unrepresentable {
            name: e.name.clone(),
            why,
        });
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
    recommended: u64,
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
            + self.recommended
    }
}

async fn write_tables(
    client: &mut Client,
    tables: &Tables,
    opts: &GenerateOptions,
) -> Result<String, IndexerError> {
    let tx = client
        .transaction()
        .await
        .map_err(IndexerError::sql("BEGIN"))?;
    tx.batch_execute("SET LOCAL synchronous_commit = off")
        .await
        .map_err(IndexerError::sql("SET"))?;
    tx.batch_execute(SCHEMA_SQL)
        .await
        .map_err(IndexerError::sql("creating the indexer's tables"))?;
    tx.batch_execute(BADGE_TABLES_SQL)
        .await
        .map_err(IndexerError::sql("creating the badge tables"))?;

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
    c.recommended = copy_recommended(&tx, tables).await?;
    progress("efp_recommended", c.recommended, t);

    let t = Instant::now();
    tx.commit().await.map_err(IndexerError::sql("COMMIT"))?;
    progress("commit", 0, t);
    Ok(format!(
        "{} lists ({} list metadata), {} account metadata, {} records, {} tags, \
         {} events ({} ops), {} ens, {} badge events, {} badges, {} recommended ({} rows)",
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
        c.recommended,
        c.total()
    ))
}
