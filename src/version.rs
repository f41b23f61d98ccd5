//! What this build is: the package version, the git commit it was built
//! from and the day it was built (set by `build.rs`), shown by
//! `followgraph --version`, `GET /version` and the
//! `followgraph_build_info` metric.

/// The package version (SemVer; README, "Releases").
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The commit built (12 hex digits; `unknown` outside a git checkout).
/// Uncommitted changes are not marked.
pub const COMMIT: &str = env!("FOLLOWGRAPH_COMMIT");
/// `YYYY-MM-DD` (UTC), from `SOURCE_DATE_EPOCH` when it is set.
pub const BUILD_DATE: &str = env!("FOLLOWGRAPH_BUILD_DATE");
/// `followgraph --version`'s text after the program name.
pub const LONG: &str = env!("FOLLOWGRAPH_LONG_VERSION");

/// `GET /version`'s body.
pub fn json() -> String {
    serde_json::json!({"version": VERSION, "commit": COMMIT, "build_date": BUILD_DATE}).to_string()
}
