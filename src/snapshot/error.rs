//! Why a snapshot was rejected. The text (`file row N: reason`) is what
//! operators see in the log and in `/snapshot`'s `last_error`; the kind is
//! what code decides on (retry a download, tolerate a missing file), so
//! no caller has to read the text.
use std::fmt;

use arrow_schema::{DataType, TimeUnit};

use super::tables::OpError;

/// The class of a [`SnapshotError`], following the reasons to reject a
/// snapshot in docs/snapshot.md ("Validation") plus the ways a load
/// itself can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SnapshotErrorKind {
    /// The path or root names no snapshot: `CURRENT` unreadable, invalid or
    /// naming no directory, or no snapshot directory at all.
    NoSnapshot,
    /// A file of the snapshot is absent.
    MissingFile,
    /// A file cannot be read: an I/O error, not Parquet, a corrupt footer
    /// or page, an incomplete download.
    Unreadable,
    /// The object store could not be reached while downloading: the same
    /// snapshot may load once it can.
    StoreUnreachable,
    /// `manifest.json` is malformed, of another format, or lacks a valid
    /// entry for a table.
    Manifest,
    /// A column is missing or of a type docs/snapshot.md does not list.
    Schema,
    /// A file's row count differs from the manifest's.
    RowCount,
    /// A file's sha256 differs from the manifest's.
    Checksum,
    /// A row breaks a rule: a null in a required column, a malformed
    /// value, a badge of an unknown event.
    InvalidRow,
    /// A uniqueness rule is broken.
    Duplicate,
    /// Valid by docs/snapshot.md but beyond what the loader or the graph
    /// holds.
    Limit,
    /// The load itself failed (it panicked, or could not encode tables).
    Internal,
}

/// Why a snapshot was rejected: the file (relative to the snapshot
/// directory, or the directory itself), the 0-based data row where there is
/// one, and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotError {
    pub kind: SnapshotErrorKind,
    pub file: String,
    pub row: Option<u64>,
    pub reason: String,
}

impl SnapshotError {
    pub fn new(
        kind: SnapshotErrorKind,
        file: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        SnapshotError {
            kind,
            file: file.into(),
            row: None,
            reason: reason.into(),
        }
    }

    pub fn at_row(
        kind: SnapshotErrorKind,
        file: impl Into<String>,
        row: u64,
        reason: impl Into<String>,
    ) -> Self {
        SnapshotError {
            kind,
            file: file.into(),
            row: Some(row),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.row {
            Some(row) => write!(f, "{} row {}: {}", self.file, row, self.reason),
            None => write!(f, "{}: {}", self.file, self.reason),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// Why a row breaks a rule of docs/snapshot.md. The caller adds the file
/// and row (a [`SnapshotError`] of kind `InvalidRow`), so a valid row
/// costs no allocation.
#[derive(Debug, thiserror::Error)]
pub enum RowError {
    #[error("null in required column `{0}`")]
    Null(&'static str),
    #[error("malformed address {text:?} in column `{column}`")]
    Address { column: &'static str, text: String },
    #[error("negative value {value} in column `{column}`")]
    Negative { column: &'static str, value: i64 },
    #[error("value {value} in column `{column}` does not fit a signed 64-bit integer")]
    TooLarge { column: &'static str, value: u64 },
    #[error("{0} must be > 0, got 0")]
    Zero(&'static str),
    #[error("column `{column}` is not valid JSON: {source}")]
    Json {
        column: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("column `{column}` must be a JSON object, found {found}")]
    NotObject {
        column: &'static str,
        found: &'static str,
    },
    #[error("tag is empty (must be 1 to {max} bytes)")]
    EmptyTag { max: usize },
    #[error("tag is {len} bytes, longer than {max}")]
    LongTag { len: usize, max: usize },
    #[error("malformed op: {0}")]
    Op(#[from] OpError),
}

/// Why a table file's column does not fit its spec (a [`SnapshotError`]
/// of kind `Schema`).
#[derive(Debug, thiserror::Error)]
pub enum ColumnError {
    #[error("missing column `{0}`")]
    Missing(&'static str),
    #[error(
        "column `{column}` has type Timestamp({unit:?}) without a time zone: it must be a \
         TIMESTAMP adjusted to UTC"
    )]
    NoTimeZone {
        column: &'static str,
        unit: TimeUnit,
    },
    #[error("column `{column}` has type {found}, expected {expected}")]
    Type {
        column: &'static str,
        found: DataType,
        expected: &'static str,
    },
}
