//! Hostile clients: a seeded random sweep of malicious and malformed
//! requests against a live server (never a 5xx; every well-formed request
//! answered 2xx/4xx with a JSON body), and regression tests for inputs the
//! fuzzers (fuzz/, see FUZZING.md) found or that stress the same code.
//!
//! `hostile_sweep_short` runs in `cargo test` (~2,500 requests, a few
//! seconds). The long sweep is `#[ignore]`d:
//! `cargo test --test integration hostile_sweep_long -- --ignored --nocapture`
//! (`HOSTILE_REQUESTS` and `HOSTILE_SEED` override count and seed).
//!
//! The sweep draws its requests from `vocabulary` through `cases` and
//! sends and checks them in `sweep`; `raised_limits` feeds huge parameters
//! to the engine, `fuzz_regressions` holds the fuzzers' findings.

mod cases;
mod fuzz_regressions;
mod raised_limits;
mod sweep;
mod vocabulary;
