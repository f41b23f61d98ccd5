//! The burst: 2,000 connections opened at once, each sending account and
//! users-details requests with `cache=fresh` for the scenario's time (the
//! profile calls that exhausted the database path's connection pool). It
//! reports connection errors, answers other than 200, latency and how
//! much the server's resident memory grew, sampled every 20 ms.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::die;
use crate::options::Opts;
use crate::server::Server;
use crate::wrk::{run_wrk, write_paths, write_script, WrkResult};

/// Connections the burst opens at once.
pub const BURST_CONNECTIONS: u32 = 2000;

pub struct BurstResult {
    pub connections: u32,
    pub seconds: u64,
    pub wrk: WrkResult,
    pub rss_before: u64,
    pub rss_peak: u64,
    pub rss_after: u64,
}

impl BurstResult {
    pub fn to_json(&self) -> Value {
        json!({
            "connections": self.connections,
            "duration_s": self.seconds,
            "requests": "GET /users/{a}/account and /users/{a}/details, half each, cache=fresh",
            "server": self.wrk.to_json(),
            "rss_before_bytes": self.rss_before,
            "rss_peak_bytes": self.rss_peak,
            "rss_after_bytes": self.rss_after,
            "rss_growth_bytes": self.rss_peak.saturating_sub(self.rss_before),
        })
    }
}

/// Runs the burst against `server` over `paths` (script and path file in
/// `work`).
pub fn run_burst(o: &Opts, server: &Server, paths: &[String], work: &Path) -> BurstResult {
    let paths_file = write_paths(work, "burst", paths);
    let script = write_script(work, "burst.lua", &paths_file, o.threads, 0.0);
    let seconds = if o.quick { 3 } else { 10 };
    eprintln!("burst: {BURST_CONNECTIONS} connections at once for {seconds} s");
    let rss_before = server.rss();
    let peak = Arc::new(AtomicU64::new(rss_before));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done, pid) = (peak.clone(), done.clone(), server.pid);
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                let rss = crate::server::proc_status_kib(pid, "VmRSS").unwrap_or(0) * 1024;
                peak.fetch_max(rss, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let wrk = run_wrk(o, &server.addr, &script, seconds, BURST_CONNECTIONS)
        .unwrap_or_else(|e| die(&format!("burst: {e}")));
    done.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let result = BurstResult {
        connections: BURST_CONNECTIONS,
        seconds,
        wrk,
        rss_before,
        rss_peak: peak.load(Ordering::Relaxed),
        rss_after: server.rss(),
    };
    eprintln!(
        "burst: {:.0} rps; p50 {} p99 {} p99.9 {} us; {} socket errors, {} non-2xx; RSS {} -> peak {} MiB",
        result.wrk.rps,
        result.wrk.p50_us,
        result.wrk.p99_us,
        result.wrk.p999_us,
        result.wrk.errors,
        result.wrk.non_2xx,
        result.rss_before >> 20,
        result.rss_peak >> 20
    );
    result
}
