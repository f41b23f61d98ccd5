//! followgraph: serves follow-protocol social-graph lookups from an
//! immutable in-memory graph built from Parquet snapshots.
//!
//! Engine (no HTTP): [`snapshot`] reads and validates tables, [`graph`]
//! builds the graph and its indexes, [`api`] routes, validates, resolves
//! and answers a request target from a graph. [`http`] is the thin warp
//! layer on top, [`live`] holds the snapshot being served, [`allocator`]
//! sets the C allocator's thresholds.

pub mod allocator;
pub mod api;
pub mod config;
pub mod error;
pub mod export;
pub mod generate;
pub mod graph;
pub mod http;
pub mod indexer;
pub mod json;
pub mod live;
pub mod logs;
pub mod pg;
pub mod process;
pub mod rng;
pub mod root;
pub mod snapshot;
pub mod sync;
pub mod tail;
pub mod time;
pub mod version;
