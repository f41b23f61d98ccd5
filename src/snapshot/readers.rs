//! The table readers: each row's validation (`record_in`, `tag_in`
//! and `op_in` are shared by the row reader and the streaming scans, so
//! both apply the same rules) and each table's uniqueness rules. Decoded
//! columns are indexed in [`Table::columns`] order.
use std::borrow::Cow;

use rayon::prelude::*;

use super::column::Column;
use super::error::RowError;
use super::files::SnapshotFiles;
use super::row_groups::{read_table, scan_table, stream_table};
use super::schema::Table;
use super::tables::*;
use super::unique::{first_duplicate, fold_case, unique, Mix};
use super::{SnapshotError, SnapshotErrorKind, TableEntry};

const MAX_TAG_BYTES: usize = 255;

pub(crate) fn read_lists(
    dir: &dyn SnapshotFiles,
    e: &TableEntry,
) -> Result<Vec<ListRow>, SnapshotError> {
    let rows = read_table(dir, e, Table::Lists.columns(), |c, i| {
        Ok(ListRow {
            token_id: c[0].token_id(i)?,
            user: c[1].address(i)?,
            owner: c[2].address(i)?,
            manager: c[3].address(i)?,
        })
    })?;
    unique(
        &e.file,
        &rows,
        |r| Mix::new().word(r.token_id).finish(),
        |a, b| a.token_id == b.token_id,
        |r| format!("token_id {}", r.token_id),
    )?;
    Ok(rows)
}

pub(crate) fn read_primary_lists(
    dir: &dyn SnapshotFiles,
    e: &TableEntry,
) -> Result<Vec<PrimaryListRow>, SnapshotError> {
    let rows = read_table(dir, e, Table::PrimaryLists.columns(), |c, i| {
        Ok(PrimaryListRow {
            address: c[0].address(i)?,
            token_id: c[1].token_id(i)?,
        })
    })?;
    unique_by_address(&e.file, &rows, |r| &r.address)?;
    Ok(rows)
}

/// One validated `list_records` row (it owns nothing: the streaming
/// loader and the row reader take the same struct).
fn record_in(c: &[Column<'_>], i: usize) -> Result<RecordRow, RowError> {
    Ok(RecordRow {
        token_id: c[0].token_id(i)?,
        address: c[1].address(i)?,
        updated_at: c[2].timestamp_ms(i)?,
    })
}

/// One validated `list_record_tags` row, the tag borrowed from its batch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TagIn<'a> {
    pub token_id: u64,
    pub address: Address,
    pub tag: &'a str,
    pub updated_at: i64,
}

fn tag_in<'a>(c: &[Column<'a>], i: usize) -> Result<TagIn<'a>, RowError> {
    let token_id = c[0].token_id(i)?;
    let address = c[1].address(i)?;
    let tag = c[2].text(i)?;
    if tag.is_empty() {
        return Err(RowError::EmptyTag { max: MAX_TAG_BYTES });
    }
    if tag.len() > MAX_TAG_BYTES {
        return Err(RowError::LongTag {
            len: tag.len(),
            max: MAX_TAG_BYTES,
        });
    }
    Ok(TagIn {
        token_id,
        address,
        tag,
        updated_at: c[3].timestamp_ms(i)?,
    })
}

/// One validated `list_ops` row, its op parsed, the tag borrowed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpIn<'a> {
    pub token_id: u64,
    pub seq: u64,
    pub opcode: u8,
    pub target: Address,
    /// "" for follow and un-follow.
    pub tag: &'a str,
    pub updated_at: i64,
}

fn op_in<'a>(c: &[Column<'a>], i: usize) -> Result<OpIn<'a>, RowError> {
    let token_id = c[0].token_id(i)?;
    let seq = c[1].u64(i)?;
    let (opcode, target, tag) = Op::parse(c[2].bytes(i)?)?;
    Ok(OpIn {
        token_id,
        seq,
        opcode,
        target,
        tag,
        updated_at: c[3].timestamp_ms(i)?,
    })
}

/// The items `keep` makes of a table's rows, per table for the streaming
/// loader (see [`scan_table`]). Every per-row rule is checked as the row
/// readers check it; rules across rows (uniqueness) are the caller's.
pub(crate) fn scan_list_records<T: Send, X: Send>(
    src: &dyn SnapshotFiles,
    entry: &TableEntry,
    init: impl Fn() -> X + Sync,
    keep: impl Fn(&mut X, RecordRow) -> Option<T> + Sync,
    finish: impl Fn(&mut X, &mut [T]) + Sync,
) -> Result<(Vec<T>, Vec<X>), SnapshotError> {
    scan_table(
        src,
        entry,
        Table::ListRecords.columns(),
        init,
        |x, c, i| Ok(keep(x, record_in(c, i)?)),
        finish,
    )
}

pub(crate) fn scan_list_record_tags<T: Send, X: Send>(
    src: &dyn SnapshotFiles,
    entry: &TableEntry,
    init: impl Fn() -> X + Sync,
    keep: impl Fn(&mut X, TagIn<'_>) -> Option<T> + Sync,
    finish: impl Fn(&mut X, &mut [T]) + Sync,
) -> Result<(Vec<T>, Vec<X>), SnapshotError> {
    scan_table(
        src,
        entry,
        Table::ListRecordTags.columns(),
        init,
        |x, c, i| Ok(keep(x, tag_in(c, i)?)),
        finish,
    )
}

pub(crate) fn scan_list_ops<T: Send, X: Send>(
    src: &dyn SnapshotFiles,
    entry: &TableEntry,
    init: impl Fn() -> X + Sync,
    keep: impl Fn(&mut X, OpIn<'_>) -> Option<T> + Sync,
    finish: impl Fn(&mut X, &mut [T]) + Sync,
) -> Result<(Vec<T>, Vec<X>), SnapshotError> {
    scan_table(
        src,
        entry,
        Table::ListOps.columns(),
        init,
        |x, c, i| Ok(keep(x, op_in(c, i)?)),
        finish,
    )
}

pub(super) fn read_list_records(
    dir: &dyn SnapshotFiles,
    e: &TableEntry,
) -> Result<Vec<RecordRow>, SnapshotError> {
    let rows = read_table(dir, e, Table::ListRecords.columns(), record_in)?;
    unique(
        &e.file,
        &rows,
        |r| Mix::new().word(r.token_id).address(&r.address).finish(),
        |a, b| a.token_id == b.token_id && a.address == b.address,
        |r| {
            format!(
                "(token_id, address) ({}, {})",
                r.token_id,
                format_address(&r.address)
            )
        },
    )?;
    Ok(rows)
}

pub(super) fn read_list_record_tags(
    dir: &dyn SnapshotFiles,
    e: &TableEntry,
) -> Result<Vec<TagRow>, SnapshotError> {
    let rows = read_table(dir, e, Table::ListRecordTags.columns(), |c, i| {
        let t = tag_in(c, i)?;
        Ok(TagRow {
            token_id: t.token_id,
            address: t.address,
            tag: t.tag.to_owned(),
            updated_at: t.updated_at,
        })
    })?;
    unique(
        &e.file,
        &rows,
        |r| {
            Mix::new()
                .word(r.token_id)
                .address(&r.address)
                .bytes(r.tag.as_bytes())
                .finish()
        },
        |a, b| a.token_id == b.token_id && a.address == b.address && a.tag == b.tag,
        |r| {
            format!(
                "(token_id, address, tag) ({}, {}, {:?})",
                r.token_id,
                format_address(&r.address),
                r.tag
            )
        },
    )?;
    Ok(rows)
}

pub(super) fn read_list_ops(
    dir: &dyn SnapshotFiles,
    e: &TableEntry,
) -> Result<Vec<OpRow>, SnapshotError> {
    let rows = read_table(dir, e, Table::ListOps.columns(), |c, i| {
        let o = op_in(c, i)?;
        Ok(OpRow {
            token_id: o.token_id,
            seq: o.seq,
            op: Op {
                opcode: o.opcode,
                target: o.target,
                tag: o.tag.to_owned(),
            },
            updated_at: o.updated_at,
        })
    })?;
    // Producers write ops in seq order: strictly increasing seqs are unique
    // without a sort.
    if !rows.par_windows(2).all(|w| w[0].seq < w[1].seq) {
        unique(
            &e.file,
            &rows,
            |r| Mix::new().word(r.seq).finish(),
            |a, b| a.seq == b.seq,
            |r| format!("seq {}", r.seq),
        )?;
    }
    Ok(rows)
}

pub(super) fn read_ens(
    dir: &dyn SnapshotFiles,
    e: &TableEntry,
) -> Result<Vec<EnsRow>, SnapshotError> {
    let rows = read_table(dir, e, Table::Ens.columns(), |c, i| {
        Ok(EnsRow {
            address: c[0].address(i)?,
            name: c[1].text(i)?.to_owned(),
            avatar: c[2].opt_string(i),
            header: c[3].opt_string(i),
            display: c[4].opt_string(i),
            records: c[5].json_object(i)?,
            chains: c[6].json_object(i)?,
            fresh: c[7].opt_i64(i),
            resolver: c[8].opt_string(i),
            errors: c[9].json_object(i)?,
        })
    })?;
    unique(
        &e.file,
        &rows,
        |r| Mix::new().address(&r.address).finish(),
        |a, b| a.address == b.address,
        |r| format!("address {}", format_address(&r.address)),
    )?;
    let folded: Vec<Cow<'_, str>> = rows.par_iter().map(|r| fold_case(&r.name)).collect();
    if let Some((first, dup)) = first_duplicate(
        &folded,
        |n| Mix::new().bytes(n.as_bytes()).finish(),
        |a, b| a == b,
    ) {
        return Err(SnapshotError::at_row(
            SnapshotErrorKind::Duplicate,
            &e.file,
            dup as u64,
            format!(
                "duplicate name {:?} (names are unique case-insensitively), first at row {first} ({:?})",
                rows[dup].name, rows[first].name
            ),
        ));
    }
    Ok(rows)
}

pub(super) fn read_badge_events(
    dir: &dyn SnapshotFiles,
    e: &TableEntry,
) -> Result<Vec<BadgeEventRow>, SnapshotError> {
    let rows = read_table(dir, e, Table::BadgeEvents.columns(), |c, i| {
        Ok(BadgeEventRow {
            event_id: c[0].i64(i)?,
            position: c[1].i32(i)?,
            fancy_id: c[2].text(i)?.to_owned(),
            name: c[3].text(i)?.to_owned(),
            event_url: c[4].text(i)?.to_owned(),
            image_url: c[5].text(i)?.to_owned(),
            country: c[6].text(i)?.to_owned(),
            city: c[7].text(i)?.to_owned(),
            description: c[8].text(i)?.to_owned(),
            year: c[9].i32(i)?,
            start_date: c[10].text(i)?.to_owned(),
            end_date: c[11].text(i)?.to_owned(),
            expiry_date: c[12].text(i)?.to_owned(),
        })
    })?;
    unique(
        &e.file,
        &rows,
        |r| Mix::new().word(r.event_id as u64).finish(),
        |a, b| a.event_id == b.event_id,
        |r| format!("event_id {}", r.event_id),
    )?;
    unique(
        &e.file,
        &rows,
        |r| Mix::new().word(r.position as u64).finish(),
        |a, b| a.position == b.position,
        |r| format!("position {}", r.position),
    )?;
    Ok(rows)
}

pub(super) fn read_badges(
    dir: &dyn SnapshotFiles,
    e: &TableEntry,
) -> Result<Vec<BadgeRow>, SnapshotError> {
    let rows = read_table(dir, e, Table::Badges.columns(), |c, i| {
        Ok(BadgeRow {
            address: c[0].address(i)?,
            event_id: c[1].i64(i)?,
            token_id: c[2].text(i)?.to_owned(),
            owner: c[3].text(i)?.to_owned(),
        })
    })?;
    unique(
        &e.file,
        &rows,
        |r| {
            Mix::new()
                .address(&r.address)
                .word(r.event_id as u64)
                .finish()
        },
        |a, b| a.address == b.address && a.event_id == b.event_id,
        |r| {
            format!(
                "(address, event_id) ({}, {})",
                format_address(&r.address),
                r.event_id
            )
        },
    )?;
    Ok(rows)
}

pub(super) fn read_recommended(
    dir: &dyn SnapshotFiles,
    e: &TableEntry,
) -> Result<Vec<RecommendedRow>, SnapshotError> {
    let rows = read_table(dir, e, Table::Recommended.columns(), |c, i| {
        Ok(RecommendedRow {
            position: c[0].integer(i)?,
            address: c[1].address(i)?,
            name: c[2].text(i)?.to_owned(),
            avatar: c[3].opt_string(i),
            header: c[4].opt_string(i),
            class: c[5].opt_string(i),
            created_at: c[6].opt_timestamp_ms(i),
        })
    })?;
    unique_by_address(&e.file, &rows, |r| &r.address)?;
    Ok(rows)
}

/// The rule of `primary_lists` and `recommended`: one row per address.
fn unique_by_address<T: Sync>(
    file: &str,
    rows: &[T],
    address: impl Fn(&T) -> &Address + Sync,
) -> Result<(), SnapshotError> {
    unique(
        file,
        rows,
        |r| Mix::new().address(address(r)).finish(),
        |a, b| address(a) == address(b),
        |r| format!("address {}", format_address(address(r))),
    )
}

/// `list_records` in file order, a decoded batch at a time (`each`).
pub(crate) fn stream_list_records(
    src: &dyn SnapshotFiles,
    entry: &TableEntry,
    each: impl FnMut(Vec<RecordRow>) -> Result<(), SnapshotError>,
) -> Result<(), SnapshotError> {
    stream_table(src, entry, Table::ListRecords.columns(), record_in, each)
}

/// `list_record_tags` in file order, a decoded batch at a time.
pub(crate) fn stream_list_record_tags(
    src: &dyn SnapshotFiles,
    entry: &TableEntry,
    each: impl FnMut(Vec<TagRow>) -> Result<(), SnapshotError>,
) -> Result<(), SnapshotError> {
    let row = |c: &[Column<'_>], i: usize| {
        tag_in(c, i).map(|t| TagRow {
            token_id: t.token_id,
            address: t.address,
            tag: t.tag.to_owned(),
            updated_at: t.updated_at,
        })
    };
    stream_table(src, entry, Table::ListRecordTags.columns(), row, each)
}

/// `list_ops` in file order, a decoded batch at a time.
pub(crate) fn stream_list_ops(
    src: &dyn SnapshotFiles,
    entry: &TableEntry,
    each: impl FnMut(Vec<OpRow>) -> Result<(), SnapshotError>,
) -> Result<(), SnapshotError> {
    let row = |c: &[Column<'_>], i: usize| {
        op_in(c, i).map(|o| OpRow {
            token_id: o.token_id,
            seq: o.seq,
            op: Op {
                opcode: o.opcode,
                target: o.target,
                tag: o.tag.to_owned(),
            },
            updated_at: o.updated_at,
        })
    };
    stream_table(src, entry, Table::ListOps.columns(), row, each)
}
