//! The log's format (`--log-format`): text lines, or one JSON object per
//! line for log pipelines. Set once at start; what prints its own report
//! (the export's summary) asks which.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::config::LogFormat;

static JSON: AtomicBool = AtomicBool::new(false);

/// Installs the global subscriber: `RUST_LOG`'s levels (default `info`),
/// to standard error, in `format`.
pub fn init(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => logs.init(),
        // Time, level, target, the message and the event's fields at the
        // top level.
        LogFormat::Json => {
            JSON.store(true, Ordering::Relaxed);
            logs.json().flatten_event(true).init();
        }
    }
}

/// Whether the log is JSON.
pub fn json() -> bool {
    JSON.load(Ordering::Relaxed)
}
