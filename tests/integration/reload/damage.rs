//! Breaking a snapshot on disk the ways the loader must reject (a bad
//! manifest, a replaced column, a malformed address), and checking that
//! an error message names the file and the reason.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use followgraph::snapshot::{table_batch, write_batch_file, Tables};
use serde_json::Value;

/// Whether `text` names `file` as a whole file name (`lists.parquet` must
/// not be found inside `primary_lists.parquet`).
pub(super) fn names_file(text: &str, file: &str) -> bool {
    text.match_indices(file).any(|(i, _)| {
        text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}

/// `mentions`: each entry must occur in `text` (case-insensitively); an
/// entry `a|b` is satisfied by either. The first entry is the file name.
pub(super) fn check_mentions(text: &str, mentions: &[&str]) -> Result<(), String> {
    let lower = text.to_lowercase();
    if let Some(file) = mentions.first() {
        if !names_file(text, file) {
            return Err(format!("{text:?} does not name the file {file:?}"));
        }
    }
    for m in mentions.iter().skip(1) {
        if !m.split('|').any(|alt| lower.contains(&alt.to_lowercase())) {
            return Err(format!("{text:?} does not mention {m:?}"));
        }
    }
    Ok(())
}

/// Rewrites `<dir>/manifest.json` through `edit` (temp file + rename).
pub(super) fn edit_manifest(dir: &Path, edit: impl FnOnce(&mut Value)) {
    let path = dir.join("manifest.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut v);
    let tmp = dir.join(".manifest.edit.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
}

/// `batch` with column `name` replaced by `array` (declared as `field`).
pub(super) fn with_column(
    batch: &RecordBatch,
    name: &str,
    field: Field,
    array: ArrayRef,
) -> RecordBatch {
    let schema = batch.schema();
    let idx = schema.index_of(name).unwrap();
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields[idx] = field;
    let mut columns = batch.columns().to_vec();
    columns[idx] = array;
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

/// The text values of column `name` of `batch`.
pub(super) fn texts_of(batch: &RecordBatch, name: &str) -> Vec<Option<String>> {
    let col = batch.column(batch.schema().index_of(name).unwrap());
    let col = col.as_any().downcast_ref::<StringArray>().unwrap();
    (0..col.len())
        .map(|i| (!col.is_null(i)).then(|| col.value(i).to_owned()))
        .collect()
}

/// Overwrites `<dir>/<table>.parquet` with `batch`.
pub(super) fn replace_table(dir: &Path, table: &str, batch: &RecordBatch) {
    write_batch_file(&dir.join(format!("{table}.parquet")), batch)
        .unwrap_or_else(|e| panic!("write {table}: {e}"));
}

/// `list_records` row 2's address is `0x12` (no checksums in the
/// manifest, same row count): `list_records.parquet row 2: malformed
/// address`.
pub(super) fn break_address(dir: &Path, tables: &Tables) {
    let batch = table_batch("list_records", tables);
    let mut addrs = texts_of(&batch, "address");
    addrs[2] = Some("0x12".to_owned());
    let batch = with_column(
        &batch,
        "address",
        Field::new("address", DataType::Utf8, false),
        Arc::new(StringArray::from(addrs)),
    );
    replace_table(dir, "list_records", &batch);
}
