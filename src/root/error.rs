//! Why an operation on a snapshot root failed. The text is what the
//! `snapshots` commands print and the export reports; the variant is what
//! code can decide on (a lock held elsewhere, a guard that refused).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RootError {
    /// A local file or directory could not be read, written or locked.
    #[error("cannot {action} {what}: {source}")]
    Io {
        action: &'static str,
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// A request to the object store failed (object_store's messages carry
    /// the request, never the credentials).
    #[error("cannot {action} {what}: {source}")]
    Store {
        action: &'static str,
        what: String,
        #[source]
        source: object_store::Error,
    },
    /// The object store's client could not be built.
    #[error("cannot open {url}: {source}")]
    Open {
        url: String,
        #[source]
        source: object_store::Error,
    },
    #[error("{url:?} is not s3://bucket[/prefix]")]
    NotS3Url { url: String },
    #[error("cannot start the store's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// A `manifest.json` that does not parse.
    #[error("{what} is malformed: {source}")]
    Malformed {
        what: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("{name:?} is not a valid snapshot name ([A-Za-z0-9._-]+)")]
    InvalidName { name: String },
    /// `CURRENT` holds no valid snapshot name.
    #[error("{current}: {name:?} is not a valid snapshot name ([A-Za-z0-9._-]+)")]
    InvalidCurrent { current: String, name: String },
    #[error("{location} is already published (a published snapshot is never replaced)")]
    AlreadyPublished { location: String },
    /// The target directory exists without being a published snapshot.
    #[error("{} already exists (a published snapshot is never replaced)", .path.display())]
    Exists { path: PathBuf },
    #[error("{location} is not a published snapshot (see `followgraph snapshots list {root}`)")]
    NotPublished { location: String, root: String },
    #[error("{} holds no manifest.json", .dir.display())]
    NoManifest { dir: PathBuf },
    #[error("{} has no snapshot name", .dir.display())]
    NoSnapshotName { dir: PathBuf },
    #[error("another publisher holds {} (one exporter per snapshot root)", .lock.display())]
    Locked { lock: PathBuf },
    /// The conditional write of `CURRENT` lost to another publisher.
    #[error("{current} changed while publishing {name} (another publisher): not replaced")]
    CurrentChanged { current: String, name: String },
    #[error(transparent)]
    Shrunk(#[from] Shrunk),
    /// Retention deleted what it could; these deletions failed.
    #[error("{}", join(.0))]
    Retain(Vec<RootError>),
    /// Retention after a publish that itself succeeded.
    #[error("--keep: {0}")]
    Keep(#[source] Box<RootError>),
}

/// A table's rows fell by more than `--max-shrink` allows.
#[derive(Debug, PartialEq, thiserror::Error)]
#[error(
    "{table} fell from {was} to {now} rows ({:.1}% fewer), more than --max-shrink {}% allows \
     against the current snapshot: not published (--allow-shrink publishes it anyway)",
    .fell * 100.0,
    .max * 100.0
)]
pub struct Shrunk {
    pub table: String,
    pub was: u64,
    pub now: u64,
    /// The share of rows gone, and the greatest share allowed.
    pub fell: f64,
    pub max: f64,
}

fn join(errors: &[RootError]) -> String {
    let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
    texts.join("; ")
}

impl RootError {
    pub(super) fn io(
        action: &'static str,
        what: impl Into<String>,
        source: std::io::Error,
    ) -> Self {
        RootError::Io {
            action,
            what: what.into(),
            source,
        }
    }

    pub(super) fn store(
        action: &'static str,
        what: impl Into<String>,
        source: object_store::Error,
    ) -> Self {
        RootError::Store {
            action,
            what: what.into(),
            source,
        }
    }
}
