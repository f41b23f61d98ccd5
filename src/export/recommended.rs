//! The `recommended` table from `efp_recommended` (docs/export.md,
//! "recommended"): `position` = `"index"`, `header` from the row or else
//! from the address's name-service records. The services job that fills
//! the source rebuilds it outside a transaction, so an empty read, or one
//! whose rows all share one `index`, is a rebuild caught half-way: the
//! rows of the snapshot `CURRENT` names are carried forward instead.

use std::collections::HashSet;

use tokio_postgres::Client;

use super::copy::{copy_out, int8, text, timestamp_ms};
use super::error::ExportError;
use super::source::in_table;
use super::values::{address, show_text};
use super::Skips;
use crate::root::SnapshotRoot;
use crate::snapshot::{Address, RecommendedRow};

const TABLE: &str = "efp_recommended";

/// The rows of `efp_recommended`, mapped; `None` when the database has no
/// such table.
pub async fn read(
    client: &Client,
    skips: &mut Skips,
) -> Result<Option<Vec<RecommendedRow>>, ExportError> {
    let columns = client
        .query(
            "SELECT column_name::text FROM information_schema.columns \
             WHERE table_schema = 'public' AND table_name = $1",
            &[&TABLE],
        )
        .await
        .map_err(ExportError::sql("cannot read efp_recommended's columns"))?;
    if columns.is_empty() {
        return Ok(None);
    }
    let has_header = columns.iter().any(|r| r.get::<_, String>(0) == "header");
    // Older deployments have no `header` column: the profile's alone.
    let profile_header = "(SELECT e.records->>'header' FROM ens_metadata e \
                          WHERE e.address = r.address)";
    let header = if has_header {
        format!("COALESCE(r.header, {profile_header})")
    } else {
        profile_header.to_owned()
    };
    // Lower-cased and in byte order, addresses compare by value whatever
    // their case or the database's collation: the first of two spellings
    // of one address is kept.
    let query = format!(
        "SELECT r.\"index\", r.address::text, r.name, r.avatar, {header}, r.class, r.created_at \
         FROM efp_recommended r \
         ORDER BY r.\"index\", lower(r.address::text) COLLATE \"C\", r.address::text COLLATE \"C\""
    );
    let mut rows = Vec::new();
    let mut seen: HashSet<Address> = HashSet::new();
    copy_out(client, &query, |t| {
        let key = || format!("address = {}", show_text(t.get(1)));
        let Some(addr) = address(text(t.get(1), "address")?) else {
            skips.add(TABLE, "address is not 20 bytes", key);
            return Ok(());
        };
        let Some(position) = int8(t.get(0), "index")? else {
            skips.add(TABLE, "index is NULL", key);
            return Ok(());
        };
        let Some(name) = text(t.get(2), "name")? else {
            skips.add(TABLE, "name is NULL", key);
            return Ok(());
        };
        if !seen.insert(addr) {
            skips.add(
                TABLE,
                "address already exported (differs only in case)",
                key,
            );
            return Ok(());
        }
        let opt = |i: usize, c: &str| Ok::<_, ExportError>(text(t.get(i), c)?.map(str::to_owned));
        rows.push(RecommendedRow {
            position,
            address: addr,
            name: name.to_owned(),
            avatar: opt(3, "avatar")?,
            header: opt(4, "header")?,
            class: opt(5, "class")?,
            created_at: timestamp_ms(t.get(6), "created_at")?,
        });
        Ok(())
    })
    .await
    .map_err(in_table(TABLE))?;
    Ok(Some(rows))
}

/// Why rows read from the database look like a rebuild caught half-way:
/// none at all, or several that all share one `index`.
pub fn half_built(rows: &[RecommendedRow]) -> Option<&'static str> {
    match rows {
        [] => Some("empty"),
        [first, rest @ ..]
            if !rest.is_empty() && rest.iter().all(|r| r.position == first.position) =>
        {
            Some("unordered")
        }
        _ => None,
    }
}

/// The `recommended` rows of the snapshot `CURRENT` names (none without
/// a `CURRENT`).
pub fn current_rows(root: &SnapshotRoot) -> Result<Vec<RecommendedRow>, String> {
    let Some(name) = root.current().map_err(|e| e.to_string())? else {
        return Ok(Vec::new());
    };
    let opened = root.open_snapshot(Some(&name)).map_err(|e| e.to_string())?;
    opened
        .with_files(crate::snapshot::read_recommended_rows)
        .map_err(|e| e.to_string())
}
