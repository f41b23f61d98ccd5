//! Watching a reloading server from outside: `/snapshot` and `/metrics`
//! read with or without panicking, and waits for a generation or a count
//! of failed loads.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::*;

/// `GET /snapshot` as JSON, or why not.
pub(super) fn try_info(srv: &TestServer) -> Result<Value, String> {
    let resp = srv.try_get("/snapshot")?;
    if resp.status != 200 {
        return Err(format!(
            "GET /snapshot: {} {}",
            resp.status,
            String::from_utf8_lossy(&resp.body)
        ));
    }
    serde_json::from_slice(&resp.body).map_err(|e| {
        format!(
            "GET /snapshot: not JSON ({e}): {}",
            String::from_utf8_lossy(&resp.body)
        )
    })
}

#[track_caller]
pub(super) fn info(srv: &TestServer) -> Value {
    try_info(srv).unwrap_or_else(|e| panic!("{e}"))
}

/// `GET /metrics` parsed, or why not.
pub(super) fn try_metrics(srv: &TestServer) -> Result<Vec<Sample>, String> {
    let resp = srv.try_get("/metrics")?;
    if resp.status != 200 {
        return Err(format!(
            "GET /metrics: {} {}",
            resp.status,
            String::from_utf8_lossy(&resp.body)
        ));
    }
    Ok(parse_metrics(&String::from_utf8_lossy(&resp.body)))
}

#[track_caller]
pub(super) fn metrics(srv: &TestServer) -> Vec<Sample> {
    try_metrics(srv).unwrap_or_else(|e| panic!("{e}"))
}

/// The value of an unlabelled metric.
#[track_caller]
pub(super) fn gauge(samples: &[Sample], name: &str) -> f64 {
    metric(samples, name, &[]).unwrap_or_else(|| {
        panic!(
            "/metrics has no sample {name}; names: {:?}",
            samples.iter().map(|s| &s.name).collect::<Vec<_>>()
        )
    })
}

pub(super) fn failures(srv: &TestServer) -> Result<f64, String> {
    let samples = try_metrics(srv)?;
    metric(&samples, "followgraph_snapshot_load_failures_total", &[])
        .ok_or_else(|| "/metrics has no followgraph_snapshot_load_failures_total".to_owned())
}

/// Calls `probe` every 50 ms until it gives Ok; panics with its last error
/// (and the server's stderr) after `timeout` or when the server exits.
pub(super) fn wait_until<T>(
    srv: &mut TestServer,
    timeout: Duration,
    what: &str,
    mut probe: impl FnMut(&TestServer) -> Result<T, String>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = srv.exited() {
            panic!(
                "{what}: the server exited ({status}); stderr:\n{}",
                srv.stderr_log()
            );
        }
        match probe(srv) {
            Ok(v) => return v,
            Err(last) if Instant::now() > deadline => panic!(
                "{what}: still not so after {timeout:?}; last: {last}\nserver stderr:\n{}",
                srv.stderr_log()
            ),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Waits until `/snapshot` reports `generation`; returns the info.
pub(super) fn wait_generation(srv: &mut TestServer, generation: u64, timeout: Duration) -> Value {
    wait_until(srv, timeout, &format!("generation {generation}"), |srv| {
        let v = try_info(srv)?;
        if v["generation"] == json!(generation) {
            Ok(v)
        } else {
            Err(v.to_string())
        }
    })
}

/// Waits until `followgraph_snapshot_load_failures_total` is `n`.
pub(super) fn wait_failures(srv: &mut TestServer, n: u64, timeout: Duration) {
    wait_until(
        srv,
        timeout,
        &format!("load_failures_total == {n}"),
        |srv| {
            let have = failures(srv)?;
            if have == n as f64 {
                Ok(())
            } else {
                Err(format!(
                    "load_failures_total {have}; /snapshot {:?}",
                    try_info(srv)
                ))
            }
        },
    )
}
