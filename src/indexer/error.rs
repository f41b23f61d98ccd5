//! Why `generate --indexer-database-url` failed: the step that failed and
//! PostgreSQL's own error, or the rows the indexer's schema cannot hold.

use crate::pg::describe;

#[derive(Debug, thiserror::Error)]
pub enum IndexerError {
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// `pg::connect`'s text (the URL redacted).
    #[error("{0}")]
    Connect(String),
    #[error("cannot inspect {database}: {}", describe(.source))]
    Inspect {
        database: String,
        #[source]
        source: tokio_postgres::Error,
    },
    #[error(
        "{database} already has a table public.efp_lists: generate writes only into an empty database"
    )]
    NotEmpty { database: String },
    /// A generated row the indexer's schema cannot hold as it is.
    #[error("ens row {name}: {why}")]
    Unrepresentable { name: String, why: &'static str },
    #[error("list_ops seq {0} and {1} are not in updated_at order")]
    OpsOutOfOrder(u64, u64),
    /// A statement of the write failed; `step` names it (`BEGIN`,
    /// `COPY table`, …).
    #[error("{step}: {}", describe(.source))]
    Sql {
        step: String,
        #[source]
        source: tokio_postgres::Error,
    },
    #[error("COPY {table}: PostgreSQL reports {copied} rows, {sent} were sent")]
    RowCount {
        table: String,
        copied: u64,
        sent: u64,
    },
}

impl IndexerError {
    /// `map_err` of a statement named `step`.
    pub(super) fn sql(step: impl Into<String>) -> impl FnOnce(tokio_postgres::Error) -> Self {
        let step = step.into();
        move |source| IndexerError::Sql { step, source }
    }
}
