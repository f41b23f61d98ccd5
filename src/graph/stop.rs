//! Why a streaming build stops, and the helpers the index builders share
//! to say so (kept apart from `build.rs`, which orders the phases and
//! imports every index).

use crate::snapshot::{SnapshotError, SnapshotErrorKind};
pub(super) use crate::sync::lock;

/// Why the streaming build stopped.
pub(super) enum Stop {
    /// The snapshot is invalid, or breaks a limit; the row reader names
    /// the first fault when it is one of docs/snapshot.md's.
    Invalid(SnapshotError),
    /// Valid so far, but `list_ops` is not in `seq` order in the file: the
    /// notification order (ties by `seq`) needs the rows sorted first.
    OpsOutOfOrder,
}

impl From<SnapshotError> for Stop {
    fn from(e: SnapshotError) -> Self {
        Stop::Invalid(e)
    }
}

/// A snapshot beyond what the graph's id widths hold.
pub(super) fn limit(file: &str, reason: impl Into<String>) -> Stop {
    Stop::Invalid(SnapshotError::new(SnapshotErrorKind::Limit, file, reason))
}

/// A uniqueness rule broken (found on the compact forms).
pub(super) fn duplicate(file: &str, reason: impl Into<String>) -> Stop {
    Stop::Invalid(SnapshotError::new(
        SnapshotErrorKind::Duplicate,
        file,
        reason,
    ))
}
