//! PostgreSQL's COPY text format: [`CopyText`] builds the rows of one
//! `COPY ... FROM STDIN` in a buffer, and [`copy_rows`] streams that buffer
//! to the server in chunks as it fills, so a table of millions of rows
//! never sits whole in memory.

use std::fmt::Write as _;

use bytes::Bytes;
use futures_util::SinkExt;
use tokio_postgres::Transaction;

use super::IndexerError;
use crate::json::push_hex;
use crate::snapshot::Address;

/// COPY data is sent in chunks of about this many bytes.
const CHUNK_BYTES: usize = 1 << 20;

/// Rows of one `COPY ... FROM STDIN` in PostgreSQL's text format, built in a
/// buffer that is handed off in chunks.
pub(super) struct CopyText {
    buf: String,
    columns: usize,
    fields: usize,
    rows: u64,
}

impl CopyText {
    pub(super) fn new(columns: usize) -> Self {
        CopyText {
            buf: String::with_capacity(CHUNK_BYTES + 64 * 1024),
            columns,
            fields: 0,
            rows: 0,
        }
    }

    pub(super) fn field(&mut self) -> &mut String {
        if self.fields > 0 {
            self.buf.push('\t');
        }
        self.fields += 1;
        &mut self.buf
    }

    /// A text value, escaped.
    pub(super) fn text(&mut self, value: &str) {
        let buf = self.field();
        push_escaped(buf, value);
    }

    pub(super) fn opt_text(&mut self, value: Option<&str>) {
        match value {
            Some(v) => self.text(v),
            None => self.null(),
        }
    }

    /// A value known to need no escaping (hex, digits, fixed words).
    pub(super) fn raw(&mut self, value: &str) {
        debug_assert!(!value.contains(['\\', '\t', '\n', '\r']));
        self.field().push_str(value);
    }

    pub(super) fn null(&mut self) {
        self.field().push_str("\\N");
    }

    pub(super) fn int(&mut self, value: i64) {
        let _ = write!(self.field(), "{value}");
    }

    pub(super) fn address(&mut self, address: &Address) {
        let buf = self.field();
        buf.push_str("0x");
        push_hex(buf, address);
    }

    /// A BYTEA in hex form: `\x…`, its backslash escaped for COPY.
    pub(super) fn bytea(&mut self, bytes: &[u8]) {
        let buf = self.field();
        buf.push_str("\\\\x");
        push_hex(buf, bytes);
    }

    /// A TIMESTAMPTZ from epoch milliseconds (`2026-11-20T12:00:00.000Z`).
    pub(super) fn timestamp(&mut self, ms: i64) {
        crate::time::write_iso_ms(self.field(), ms);
    }

    /// Ends the row.
    pub(super) fn end(&mut self) {
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
pub(super) fn push_escaped(out: &mut String, value: &str) {
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
pub(super) async fn copy_rows<T>(
    tx: &Transaction<'_>,
    table: &str,
    columns: &[&str],
    items: impl IntoIterator<Item = T>,
    mut write: impl FnMut(&mut CopyText, T),
) -> Result<u64, IndexerError> {
    let fail = |source| IndexerError::Sql {
        step: format!("COPY {table}"),
        source,
    };
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
        return Err(IndexerError::RowCount {
            table: table.to_owned(),
            copied,
            sent: out.rows,
        });
    }
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
