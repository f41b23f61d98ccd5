//! Deterministic synthetic snapshots for tests and benchmarks.
//!
//! [`generate_tables`] builds every table from `(accounts, seed,
//! created_at)` alone: the same options always give identical tables,
//! whatever the number of rayon threads. [`generate`] writes them as a
//! snapshot root (`out/<name>/` + `out/CURRENT`).
//!
//! Shape of the data:
//! - accounts `0..accounts` are the protocol users; each has a distinct
//!   pseudo-random address. About 90% have a valid primary list; the rest
//!   have none, or a `primary_lists` row the primary-list rule ignores
//!   (naming someone else's list or a missing one), or a list that is not
//!   their primary. About 5% also hold extra, invisible lists.
//! - follow targets are drawn from a Zipf-like distribution over a random
//!   ranking of the accounts (a few hubs hold a large share of followers);
//!   out-degrees are Pareto distributed (median ~11, some thousands),
//!   averaging ~20 current records per account.
//! - every list has a time-ordered op history over the ~6 months before
//!   `created_at` (batched in "sessions" that share a timestamp, so ties are
//!   common); its current records and tags are derived by replaying it.
//! - `ens` for ~80% of accounts plus a few non-users, 10 badge events, and
//!   badges for ~20% of accounts; a `recommended` list of about twenty
//!   (`recommended`: account 0, the most followed, a few at random, an
//!   address nothing else names, positions tied in pairs).
//!
//! Files: `model` (addresses, popularity ranking, per-account plans),
//! `lists` (one list's op history and its current records and tags),
//! `ens`, `badges` and `recommended` (those tables' rows), `pipeline` (chunks in parallel,
//! handed on in order; `list_ops` numbered last), `write` (the streaming
//! writer of a snapshot directory, and the progress line), `tests`.

use std::path::PathBuf;

use crate::snapshot::{publish, Tables};

mod badges;
mod ens;
mod lists;
mod model;
mod pipeline;
mod recommended;
mod write;

#[cfg(test)]
mod tests;

/// What to generate and where to write it.
#[derive(Clone, Debug)]
pub struct GenerateOptions {
    /// Number of protocol users (accounts `0..accounts`).
    pub accounts: u64,
    pub seed: u64,
    /// The snapshot root: `out/<name>/` and `out/CURRENT` are written.
    pub out: PathBuf,
    /// The snapshot's `created_at`, epoch milliseconds.
    pub created_at_ms: i64,
    /// Print a one-line progress bar to stderr.
    pub progress: bool,
}

/// The `created_at` used when none is given.
pub const DEFAULT_CREATED_AT: &str = "2026-11-20T12:00:00.000Z";

/// [`DEFAULT_CREATED_AT`] in epoch milliseconds.
pub fn default_created_at_ms() -> i64 {
    crate::time::parse_iso_ms(DEFAULT_CREATED_AT).expect("valid default created_at")
}

/// The snapshot directory name for these options.
pub fn snapshot_name(opts: &GenerateOptions) -> String {
    format!("gen-{}-{}", opts.accounts, opts.seed)
}

/// Writes a snapshot root: `out/<name>/` (all tables and a manifest with
/// checksums) and `out/CURRENT` naming it. Returns the snapshot directory.
///
/// Streams: each batch of accounts' rows goes to the table files as it is
/// made, and `list_ops` (which needs a global sort for `seq`) is held in a
/// 24-byte form until written, so a 5M-account snapshot fits in memory.
pub fn generate(opts: &GenerateOptions) -> std::io::Result<PathBuf> {
    let name = snapshot_name(opts);
    let dir = opts.out.join(&name);
    std::fs::create_dir_all(&opts.out)?;
    let mut bar = write::ProgressBar::new(opts.progress);
    let result =
        write::write_generated(opts, &dir, &mut bar).and_then(|()| publish(&opts.out, &name));
    bar.finish(if result.is_ok() { "done" } else { "failed" });
    result.map(|()| dir)
}

/// Generates the tables deterministically (same options -> identical
/// tables, whatever the thread count). `progress(done, total)` is called
/// with the number of accounts done.
pub fn generate_tables(opts: &GenerateOptions, progress: &mut dyn FnMut(u64, u64)) -> Tables {
    let mut tables = Tables::default();
    let mut ops = Vec::new();
    pipeline::generate_with(
        opts,
        progress,
        &mut |mut chunk| {
            pipeline::append_tables(&mut tables, &mut chunk);
            Ok(())
        },
        &mut |mut batch, _| {
            ops.append(&mut batch);
            Ok(())
        },
    )
    .expect("the sinks never fail");
    tables.list_ops = ops;
    tables
}
