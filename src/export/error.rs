//! Why an export (or a tail's re-read, which runs the export's queries)
//! failed. The text is what `followgraph export` prints and logs and what
//! the tail reports as its last error.

use std::path::PathBuf;

use crate::pg::describe;
use crate::root::RootError;
use crate::snapshot::Table;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("--database-url (or FOLLOWGRAPH_DATABASE_URL or DATABASE_URL) is required")]
    NoDatabaseUrl,
    #[error("--name {0:?} is not a valid snapshot name ([A-Za-z0-9._-]+)")]
    InvalidName(String),
    #[error(
        "--name {name:?}: names starting with {prefix:?} are an export's work in progress, \
         never served"
    )]
    WorkInProgressName { name: String, prefix: &'static str },
    #[error("--query {0:?} is not TABLE=FILE.sql")]
    QueryForm(String),
    #[error("--query {arg:?}: unknown table `{table}` (one of {known})")]
    QueryTable {
        arg: String,
        table: String,
        known: String,
    },
    #[error("--query {table}: cannot read {file}: {source}")]
    QueryRead {
        table: Table,
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("--query {table}: {file} holds no SELECT")]
    QueryEmpty { table: Table, file: String },
    #[error("--query {0} is given twice")]
    QueryTwice(Table),
    /// An override query's result columns do not fit the table's.
    #[error("--query {table}: {mismatch}")]
    QueryColumns {
        table: Table,
        mismatch: ColumnMismatch,
    },
    /// An override query failed as it ran.
    #[error("--query {table}: {source}")]
    InQuery {
        table: Table,
        #[source]
        source: Box<ExportError>,
    },
    /// A built-in query of a source table failed.
    #[error("{table}: {source}")]
    InTable {
        table: &'static str,
        #[source]
        source: Box<ExportError>,
    },
    #[error("cannot find this program to verify the export: {0}")]
    NoProgram(#[source] std::io::Error),
    #[error("cannot start the runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("cannot handle {signal}: {source}")]
    Signal {
        signal: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start the writer thread: {0}")]
    WriterThread(#[source] std::io::Error),
    /// The writer thread of a table file failed.
    #[error("writing {table}.parquet: {source}")]
    Write {
        table: Table,
        #[source]
        source: std::io::Error,
    },
    #[error("writing {0}.parquet: the writer thread panicked")]
    WriterPanicked(Table),
    /// The writer thread already gone (finished or failed before).
    #[error("writing {0}.parquet failed")]
    WriterGone(Table),
    #[error(transparent)]
    Root(#[from] RootError),
    /// `pg::connect`'s text (the URL redacted).
    #[error("{0}")]
    Connect(String),
    /// A statement failed; `what` says which.
    #[error("{what}: {}", describe(.source))]
    Sql {
        what: String,
        #[source]
        source: tokio_postgres::Error,
    },
    /// The COPY of a query failed in the database.
    #[error("{}", describe(.0))]
    Database(#[source] tokio_postgres::Error),
    #[error(transparent)]
    Copy(#[from] CopyError),
    #[error(transparent)]
    Value(#[from] ValueError),
    #[error(
        "events: the last event of chain {chain} is at ({block}, {tx}, {log}), not a position \
         of non-negative integers"
    )]
    BadPosition {
        chain: i64,
        block: i64,
        tx: String,
        log: String,
    },
    #[error("cannot run {} check: {source}", .program.display())]
    RunCheck {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The exported directory fails the server's own load.
    #[error("the server's loader rejects the export: {0}")]
    Rejected(String),
}

impl ExportError {
    pub(super) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| ExportError::Io {
            action,
            path,
            source,
        }
    }

    pub(super) fn sql(what: impl Into<String>) -> impl FnOnce(tokio_postgres::Error) -> Self {
        let what = what.into();
        move |source| ExportError::Sql { what, source }
    }
}

/// How an override query's columns differ from its table's.
#[derive(Debug, thiserror::Error)]
pub enum ColumnMismatch {
    #[error("the query has no column `{column}` (it returns {returned})")]
    Missing {
        column: &'static str,
        returned: String,
    },
    #[error("the query returns column `{0}` more than once")]
    Repeated(&'static str),
    #[error("column `{column}` has type {found}, expected {expected}")]
    Type {
        column: &'static str,
        found: String,
        expected: &'static str,
    },
}

/// A binary COPY stream that is not one.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error("the COPY stream ended without its trailer")]
    NoTrailer,
    #[error("not a binary COPY stream")]
    NotBinary,
    #[error("data after the COPY trailer")]
    AfterTrailer,
    #[error("bad field count {0}")]
    FieldCount(i16),
    #[error("{count} columns, more than {max}")]
    TooManyFields { count: usize, max: usize },
}

/// Why a value of a row could not be read; the caller adds the table.
#[derive(Debug, thiserror::Error)]
pub enum ValueError {
    #[error("column `{column}` is not an int8 ({len} bytes)")]
    NotInt8 { column: String, len: usize },
    #[error("column `{0}` is not valid UTF-8")]
    NotUtf8(String),
    #[error("column `{0}` is an infinite timestamp")]
    InfiniteTimestamp(String),
}
