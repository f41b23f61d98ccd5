//! Test harness: writes a snapshot, then drives the server's request
//! handling in this process (`TestService`), or runs the real
//! `followgraph` binary on a free port and talks HTTP/1.1 to it
//! (`TestServer`). The test files take it all through
//! `use crate::support::*`.

mod agent;
mod asserts;
mod http;
mod metrics;
mod process;
mod qr;
mod rng;
mod server;
mod service;
mod snapshots;

pub use asserts::*;
pub use http::*;
pub use metrics::*;
pub use process::*;
pub use qr::*;
pub use rng::*;
pub use server::*;
pub use service::*;
pub use snapshots::*;
