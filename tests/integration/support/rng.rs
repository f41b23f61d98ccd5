//! The tests' deterministic random numbers: the crate's one SplitMix64
//! stream, drawn by modulo as the request mixes always were.

pub use followgraph::rng::ModuloRng as Rng;
