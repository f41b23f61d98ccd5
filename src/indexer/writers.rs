//! One writer per indexer table: each turns the generated [`Tables`] into
//! that table's rows (placed as [`super::layout`] decides) and streams them
//! with [`copy_rows`], returning the row count PostgreSQL reports.

use std::fmt::Write as _;

use tokio_postgres::Transaction;

use super::copy_text::{copy_rows, CopyText};
use super::layout::{
    address_record, foreign_record, has_foreign_record, has_location_note, in_key_order,
    role_storage, slot_of, stale_address, RoleStorage,
};
use super::{
    IndexerError, ACCOUNT_METADATA_CONTRACT, LIST_CHAIN_ID, LIST_NFT_CONTRACT,
    LIST_RECORDS_CONTRACT,
};
use crate::json::push_hex;
use crate::snapshot::Tables;

/// Chain and contract of the older, superseded `primary-list` rows.
const OLD_ACCOUNT_METADATA_CHAIN_ID: i64 = 1;
const OLD_ACCOUNT_METADATA_CONTRACT: &str = "0x5289fe5dabc021d02fddf23d4a4df96f4e0f1700";
const ZERO_ADDRESS: &str = "0x0000000000000000000000000000000000000000";
/// `events.block_number` of the op with `seq` 0 (4 ops per block).
const FIRST_BLOCK: u64 = 10_000_000;

pub(super) async fn copy_lists(tx: &Transaction<'_>, tables: &Tables) -> Result<u64, IndexerError> {
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

pub(super) async fn copy_list_metadata(
    tx: &Transaction<'_>,
    tables: &Tables,
) -> Result<u64, IndexerError> {
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

pub(super) async fn copy_account_metadata(
    tx: &Transaction<'_>,
    tables: &Tables,
    created_at_ms: i64,
) -> Result<u64, IndexerError> {
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

pub(super) async fn copy_records(
    tx: &Transaction<'_>,
    tables: &Tables,
) -> Result<u64, IndexerError> {
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

pub(super) async fn copy_tags(tx: &Transaction<'_>, tables: &Tables) -> Result<u64, IndexerError> {
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

pub(super) async fn copy_events(
    tx: &Transaction<'_>,
    tables: &Tables,
) -> Result<u64, IndexerError> {
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
        return Err(IndexerError::OpsOutOfOrder(w[0].seq, w[1].seq));
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

pub(super) async fn copy_ens(tx: &Transaction<'_>, tables: &Tables) -> Result<u64, IndexerError> {
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

pub(super) async fn copy_recommended(
    tx: &Transaction<'_>,
    tables: &Tables,
) -> Result<u64, IndexerError> {
    const COLUMNS: &[&str] = &[
        "\"index\"",
        "name",
        "address",
        "avatar",
        "header",
        "class",
        "created_at",
    ];
    copy_rows(
        tx,
        "efp_recommended",
        COLUMNS,
        &tables.recommended,
        |out, r| {
            out.int(r.position);
            out.text(&r.name);
            out.address(&r.address);
            out.opt_text(r.avatar.as_deref());
            out.opt_text(r.header.as_deref());
            out.opt_text(r.class.as_deref());
            match r.created_at {
                Some(ms) => out.timestamp(ms),
                None => out.null(),
            }
            out.end();
        },
    )
    .await
}

pub(super) async fn copy_badges(
    tx: &Transaction<'_>,
    tables: &Tables,
) -> Result<(u64, u64), IndexerError> {
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
