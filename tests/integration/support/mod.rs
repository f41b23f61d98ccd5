//! Test harness: writes a snapshot, runs the real `followgraph` binary on a
//! free port and talks HTTP/1.1 to it over a plain `TcpStream`. The test
//! files take it all through `use crate::support::*`.

mod asserts;
mod http;
mod metrics;
mod process;
mod rng;
mod server;
mod snapshots;

pub use asserts::*;
pub use http::*;
pub use metrics::*;
pub use process::*;
pub use rng::*;
pub use server::*;
pub use snapshots::*;
