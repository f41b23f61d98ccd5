//! HTTP integration tests: each test writes a small hand-made snapshot,
//! serves it and checks the answers against the API reference
//! (docs/openapi.yaml) byte for byte. The endpoint families drive the
//! server's request handling in process (`TestService`); what is about
//! the process (reload and signals, limits, hostile bytes, probes, S3,
//! export, the tail, the container) runs the real `followgraph serve`
//! binary on a free port (`TestServer`).

mod fixtures;
mod pg;
mod support;

mod account;
mod all_followers;
mod badges;
mod deploy;
mod details;
mod differential;
mod errors;
mod examples;
mod export;
mod followers;
mod following;
mod hostile;
mod leaderboard;
mod limits;
mod live;
mod notifications;
mod openapi;
mod protocol;
mod qr;
mod ranked;
mod recommended;
mod reload;
mod roots;
mod running;
mod s3;
mod search;
mod states;
mod states_batch;
mod stats;
mod tags;
