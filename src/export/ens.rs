//! The `ens` table from `ens_metadata`: names as stored, one holder per
//! name (case-insensitively), JSON columns kept only when they are objects.

use std::collections::HashSet;

use tokio_postgres::Client;

use super::copy::{copy_out, int8, text};
use super::error::{ExportError, ValueError};
use super::sink::TableSink;
use super::source::in_table;
use super::values::{address, show_text};
use super::Skips;
use crate::snapshot::{fold_case, is_json_object, Address, EnsRow};

pub async fn ens(
    client: &Client,
    sink: &mut TableSink,
    skips: &mut Skips,
) -> Result<(), ExportError> {
    const TABLE: &str = "ens_metadata";
    // Read in the name precedence of docs/export.md ("ens"), so a name taken
    // case-insensitively by several addresses stays with the first row read:
    // newest updated_at, greatest fresh (NULL lowest: DESC alone puts NULLs
    // first), lowest address. Lower-cased and in byte order, addresses compare
    // by value whatever their case or the database's collation.
    let query = "SELECT address::text, name, avatar, display, records::text, \
                 records->>'header', fresh, resolver::text, errors \
                 FROM ens_metadata ORDER BY updated_at DESC NULLS LAST, fresh DESC NULLS LAST, \
                 lower(address::text) COLLATE \"C\", address::text COLLATE \"C\"";
    let mut names: HashSet<String> = HashSet::new();
    let mut addresses: HashSet<Address> = HashSet::new();
    copy_out(client, query, |t| {
        let key = || format!("address = {}", show_text(t.get(0)));
        let Some(addr) = address(text(t.get(0), "address")?) else {
            skips.add(TABLE, "address is not 20 bytes", key);
            return Ok(());
        };
        let name = text(t.get(1), "name")?.unwrap_or_default();
        if name.is_empty() {
            skips.add(TABLE, "empty name", key);
            return Ok(());
        }
        if !addresses.insert(addr) {
            skips.add(
                TABLE,
                "address already exported (differs only in case)",
                key,
            );
            return Ok(());
        }
        let folded = fold_case(name);
        if names.contains(folded.as_ref()) {
            skips.add(
                TABLE,
                "name already held by a newer row (case-insensitively)",
                key,
            );
            return Ok(());
        }
        names.insert(folded.into_owned());
        let opt = |i: usize, c: &str| -> Result<Option<String>, ValueError> {
            Ok(text(t.get(i), c)?.map(str::to_owned))
        };
        let mut object = |i: usize, column: &str| -> Result<Option<String>, ValueError> {
            match text(t.get(i), column)? {
                Some(v) if is_json_object(v) => Ok(Some(v.to_owned())),
                Some(_) => {
                    let reason = if column == "records" {
                        "records is not a JSON object: exported as null"
                    } else {
                        "errors is not a JSON object: exported as null"
                    };
                    skips.add(TABLE, reason, key);
                    Ok(None)
                }
                None => Ok(None),
            }
        };
        let records = object(4, "records")?;
        let errors = object(8, "errors")?;
        sink.chunk.ens.push(EnsRow {
            address: addr,
            name: name.to_owned(),
            avatar: opt(2, "avatar")?,
            header: if records.is_some() {
                opt(5, "header")?
            } else {
                None
            },
            display: opt(3, "display")?,
            records,
            chains: None,
            fresh: int8(t.get(6), "fresh")?,
            resolver: opt(7, "resolver")?,
            errors,
        });
        sink.pushed()
    })
    .await
    .map_err(in_table(TABLE))?;
    Ok(())
}
