//! `--query TABLE=FILE.sql`: a deployment's own SELECT for one snapshot
//! table. Its columns are checked by name and type before any row is read
//! (prepare, not execute); rows are then streamed like the built-in ones.

use tokio_postgres::types::{Kind as PgKind, Type};
use tokio_postgres::Client;

use super::copy::{copy_out, text, timestamp_ms};
use super::error::{ColumnMismatch, ExportError};
use super::sink::TableSink;
use super::Skips;
use crate::snapshot::{
    parse_address, BadgeEventRow, BadgeRow, ColumnKind as Kind, ColumnSpec, EnsRow, ListRow, Op,
    OpRow, PrimaryListRow, RecommendedRow, RecordRow, Table, TagRow,
};

fn base_type(t: &Type) -> &Type {
    match t.kind() {
        PgKind::Domain(base) => base_type(base),
        _ => t,
    }
}

/// Whether a `--query` column of PostgreSQL type `t` may fill a snapshot
/// column of `kind` (which may be NULL is the row builders' business).
fn accepts(kind: Kind, t: &Type) -> bool {
    let t = base_type(t);
    let text = [Type::TEXT, Type::VARCHAR, Type::BPCHAR, Type::NAME];
    let ints = [Type::INT2, Type::INT4, Type::INT8, Type::NUMERIC];
    match kind {
        Kind::Address | Kind::Text => text.contains(t),
        Kind::Json => text.contains(t) || *t == Type::JSON || *t == Type::JSONB,
        Kind::TokenId | Kind::Seq | Kind::Int64 | Kind::Int32 | Kind::Integer => ints.contains(t),
        Kind::Op => *t == Type::BYTEA,
        Kind::Timestamp => *t == Type::TIMESTAMPTZ,
    }
}

fn expected(kind: Kind) -> &'static str {
    match kind {
        Kind::Address => "text (an address)",
        Kind::Text => "text",
        Kind::Json => "jsonb, json or text",
        Kind::TokenId | Kind::Seq | Kind::Int64 | Kind::Int32 | Kind::Integer => {
            "bigint, integer, smallint or numeric"
        }
        Kind::Op => "bytea",
        Kind::Timestamp => "timestamptz",
    }
}

/// The SELECT of a query file: one statement, trailing `;` allowed.
pub fn statement(sql: &str) -> &str {
    sql.trim().trim_end_matches(';').trim_end()
}

/// Checks the query's result columns against the table's and returns the
/// COPY-able SELECT that reads them in the table's column order.
pub async fn checked_select(
    client: &Client,
    table: Table,
    sql: &str,
) -> Result<String, ExportError> {
    let sql = statement(sql);
    let prepared = client
        .prepare(sql)
        .await
        .map_err(ExportError::sql(format!("--query {table}")))?;
    let mismatch = |mismatch| ExportError::QueryColumns { table, mismatch };
    let got = prepared.columns();
    let mut select = Vec::new();
    for col in table.columns() {
        let matches: Vec<_> = got.iter().filter(|c| c.name() == col.name).collect();
        let found = match matches.as_slice() {
            [] => {
                let returned = got.iter().map(|c| format!("`{}`", c.name()));
                return Err(mismatch(ColumnMismatch::Missing {
                    column: col.name,
                    returned: returned.collect::<Vec<_>>().join(", "),
                }));
            }
            [one] => one,
            _ => return Err(mismatch(ColumnMismatch::Repeated(col.name))),
        };
        if !accepts(col.kind, found.type_()) {
            return Err(mismatch(ColumnMismatch::Type {
                column: col.name,
                found: found.type_().name().to_owned(),
                expected: expected(col.kind),
            }));
        }
        let cast = match col.kind {
            Kind::Op | Kind::Timestamp => "",
            _ => "::text",
        };
        select.push(format!("q.\"{}\"{cast}", col.name));
    }
    Ok(format!("SELECT {} FROM ({sql}) AS q", select.join(", ")))
}

/// The source an override's skipped rows are counted under.
fn skip_label(table: Table) -> &'static str {
    match table {
        Table::Lists => "--query lists",
        Table::PrimaryLists => "--query primary_lists",
        Table::ListRecords => "--query list_records",
        Table::ListRecordTags => "--query list_record_tags",
        Table::ListOps => "--query list_ops",
        Table::Ens => "--query ens",
        Table::BadgeEvents => "--query badge_events",
        Table::Badges => "--query badges",
        Table::Recommended => "--query recommended",
    }
}

/// Streams the override's rows into `sink`, skipping rows a snapshot
/// cannot hold (docs/snapshot.md; counted under `--query TABLE`).
pub async fn export(
    client: &Client,
    table: Table,
    sql: &str,
    sink: &mut TableSink,
    skips: &mut Skips,
) -> Result<(), ExportError> {
    let select = checked_select(client, table, sql).await?;
    let label = skip_label(table);
    let cols = table.columns();
    let mut row_number = 0u64;
    copy_out(client, &select, |t| {
        row_number += 1;
        let mut values = Values { t, cols, bad: None };
        let pushed = push_row(table, &mut values, sink);
        match values.bad {
            Some(reason) => {
                skips.add(label, reason, || format!("result row {row_number}"));
                Ok(())
            }
            None => pushed.and_then(|()| sink.pushed()),
        }
    })
    .await
    .map_err(|e| ExportError::InQuery {
        table,
        source: Box::new(e),
    })?;
    Ok(())
}

/// Typed access to one result row; the first value that a snapshot
/// cannot hold (docs/snapshot.md) is recorded in `bad` (and a placeholder
/// returned).
struct Values<'r, 'a> {
    t: &'r super::copy::Tuple<'a>,
    cols: &'static [ColumnSpec],
    bad: Option<&'static str>,
}

impl Values<'_, '_> {
    fn fail<T: Default>(&mut self, reason: &'static str) -> T {
        self.bad.get_or_insert(reason);
        T::default()
    }

    fn opt_text(&mut self, i: usize) -> Option<String> {
        match text(self.t.get(i), self.cols[i].name) {
            Ok(v) => v.map(str::to_owned),
            Err(_) => self.fail("a text value is not UTF-8"),
        }
    }

    fn text(&mut self, i: usize) -> String {
        match self.opt_text(i) {
            Some(v) => v,
            None => self.fail("NULL in a required column"),
        }
    }

    fn address(&mut self, i: usize) -> [u8; 20] {
        let v = self.text(i);
        match parse_address(&v) {
            Some(a) => a,
            None if self.bad.is_some() => [0; 20],
            None => self.fail("an address is not 0x + 40 hex digits"),
        }
    }

    fn opt_json(&mut self, i: usize) -> Option<String> {
        let v = self.opt_text(i)?;
        if crate::snapshot::is_json_object(&v) {
            Some(v)
        } else {
            self.fail("a JSON column is not a JSON object")
        }
    }

    fn opt_int<T: std::str::FromStr>(&mut self, i: usize) -> Option<T> {
        let v = self.opt_text(i)?;
        match v.parse::<T>() {
            Ok(n) => Some(n),
            Err(_) => self.fail("an integer is out of its column's range"),
        }
    }

    fn int<T: std::str::FromStr + Default>(&mut self, i: usize) -> T {
        match self.opt_int(i) {
            Some(v) => v,
            None => self.fail("NULL in a required column"),
        }
    }

    fn token_id(&mut self, i: usize) -> u64 {
        let v: u64 = self.int(i);
        if v == 0 && self.bad.is_none() {
            return self.fail("token_id is not > 0");
        }
        v
    }

    fn timestamp(&mut self, i: usize) -> i64 {
        match timestamp_ms(self.t.get(i), self.cols[i].name) {
            Ok(Some(ms)) => ms,
            Ok(None) => self.fail("NULL in a required column"),
            Err(_) => self.fail("a timestamp is infinite"),
        }
    }

    fn opt_timestamp(&mut self, i: usize) -> Option<i64> {
        match timestamp_ms(self.t.get(i), self.cols[i].name) {
            Ok(ms) => ms,
            Err(_) => self.fail("a timestamp is infinite"),
        }
    }

    fn op(&mut self, i: usize) -> Op {
        match self.t.get(i).map(Op::decode) {
            Some(Ok(op)) => op,
            Some(Err(_)) => self.fail("malformed op"),
            None => self.fail("NULL in a required column"),
        }
    }
}

/// Makes `table`'s row of the result row `v` and pushes it unless `v` found a
/// value a snapshot cannot hold (docs/snapshot.md). Columns are indexed in
/// [`Table::columns`] order, the order [`checked_select`] selects them in.
fn push_row(table: Table, v: &mut Values<'_, '_>, sink: &mut TableSink) -> Result<(), ExportError> {
    let c = &mut sink.chunk;
    match table {
        Table::Lists => {
            let row = ListRow {
                token_id: v.token_id(0),
                user: v.address(1),
                owner: v.address(2),
                manager: v.address(3),
            };
            if v.bad.is_none() {
                c.lists.push(row);
            }
        }
        Table::PrimaryLists => {
            let row = PrimaryListRow {
                address: v.address(0),
                token_id: v.token_id(1),
            };
            if v.bad.is_none() {
                c.primary_lists.push(row);
            }
        }
        Table::ListRecords => {
            let row = RecordRow {
                token_id: v.token_id(0),
                address: v.address(1),
                updated_at: v.timestamp(2),
            };
            if v.bad.is_none() {
                c.list_records.push(row);
            }
        }
        Table::ListRecordTags => {
            let row = TagRow {
                token_id: v.token_id(0),
                address: v.address(1),
                tag: v.text(2),
                updated_at: v.timestamp(3),
            };
            if row.tag.is_empty() || row.tag.len() > 255 {
                v.fail::<()>("tag is empty or longer than 255 bytes");
            }
            if v.bad.is_none() {
                c.list_record_tags.push(row);
            }
        }
        Table::ListOps => {
            let row = OpRow {
                token_id: v.token_id(0),
                seq: v.int(1),
                op: v.op(2),
                updated_at: v.timestamp(3),
            };
            if v.bad.is_none() {
                c.list_ops.push(row);
            }
        }
        Table::Ens => {
            let row = EnsRow {
                address: v.address(0),
                name: v.text(1),
                avatar: v.opt_text(2),
                header: v.opt_text(3),
                display: v.opt_text(4),
                records: v.opt_json(5),
                chains: v.opt_json(6),
                fresh: v.opt_int(7),
                resolver: v.opt_text(8),
                errors: v.opt_json(9),
            };
            if v.bad.is_none() {
                c.ens.push(row);
            }
        }
        Table::BadgeEvents => {
            let row = BadgeEventRow {
                event_id: v.int(0),
                position: v.int(1),
                fancy_id: v.text(2),
                name: v.text(3),
                event_url: v.text(4),
                image_url: v.text(5),
                country: v.text(6),
                city: v.text(7),
                description: v.text(8),
                year: v.int(9),
                start_date: v.text(10),
                end_date: v.text(11),
                expiry_date: v.text(12),
            };
            if v.bad.is_none() {
                c.badge_events.push(row);
            }
        }
        Table::Badges => {
            let row = BadgeRow {
                address: v.address(0),
                event_id: v.int(1),
                token_id: v.text(2),
                owner: v.text(3),
            };
            if v.bad.is_none() {
                c.badges.push(row);
            }
        }
        Table::Recommended => {
            let row = RecommendedRow {
                position: v.int(0),
                address: v.address(1),
                name: v.text(2),
                avatar: v.opt_text(3),
                header: v.opt_text(4),
                class: v.opt_text(5),
                created_at: v.opt_timestamp(6),
            };
            if v.bad.is_none() {
                c.recommended.push(row);
            }
        }
    }
    Ok(())
}
