//! A slow answer beside quick ones: `/users/{a}/stats` with
//! `cache=fresh`, paced at half its closed-loop rate, first alone, then
//! while another client asks for a slow request over and over (by default
//! `/leaderboard/all?cache=fresh`, the one answer that grows with the
//! whole graph; `--slow-path`). The two
//! runs' latency percentiles side by side show whether the slow render
//! holds up the requests queued behind it.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::client::http_get;
use crate::options::Opts;
use crate::round1;
use crate::server::Server;
use crate::wrk::{run_wrk, write_paths, write_script, WrkResult};
use crate::{die, API};

pub struct BesideResult {
    pub seconds: u64,
    pub rate: f64,
    pub slow_path: String,
    pub alone: WrkResult,
    pub beside: WrkResult,
    /// Slow answers completed during the second run, and their mean time.
    pub slow_answers: usize,
    pub slow_mean_ms: f64,
}

impl BesideResult {
    pub fn to_json(&self) -> Value {
        json!({
            "duration_s": self.seconds,
            "requests": "GET /users/{a}/stats?cache=fresh",
            "slow_request": format!("GET {}", self.slow_path),
            "target_rps": round1(self.rate),
            "alone": self.alone.to_json(),
            "beside_slow": self.beside.to_json(),
            "slow_answers": self.slow_answers,
            "slow_mean_ms": round1(self.slow_mean_ms),
        })
    }
}

/// Runs both measurements against `server` over `paths` (scripts and
/// path file in `work`); `top` is the most-followed account's address.
pub fn run_beside(
    o: &Opts,
    server: &Server,
    paths: &[String],
    top: &str,
    work: &Path,
) -> BesideResult {
    let slow_path = o.slow_path.replace("{hub}", top);
    let paths_file = write_paths(work, "beside", paths);
    let script = |name: &str, rate: f64| write_script(work, name, &paths_file, o.threads, rate);
    let wrk = |script: &Path, seconds: u64| {
        run_wrk(o, &server.addr, script, seconds, o.connections)
            .unwrap_or_else(|e| die(&format!("beside_slow: {e}")))
    };
    let closed = wrk(&script("beside.lua", 0.0), o.warmup.max(2));
    let rate = closed.rps / 2.0;
    let paced = script("beside.paced.lua", rate);
    let seconds = o.duration;
    eprintln!(
        "beside_slow: {rate:.0} req/s paced, {seconds} s alone, then as long beside {slow_path}"
    );
    let alone = wrk(&paced, seconds);

    let done = Arc::new(AtomicBool::new(false));
    let slow = {
        let (done, addr, slow_path) = (done.clone(), server.addr.clone(), slow_path.clone());
        std::thread::spawn(move || {
            let mut times = Vec::new();
            while !done.load(Ordering::Relaxed) {
                let started = Instant::now();
                match http_get(&addr, &format!("{API}{slow_path}")) {
                    Ok(a) if a.status == 200 => times.push(started.elapsed()),
                    Ok(a) => die(&format!("beside_slow: {slow_path} answered {}", a.status)),
                    Err(e) => die(&format!("beside_slow: {slow_path}: {e}")),
                }
            }
            times
        })
    };
    // The first slow request starts rendering before the measurement.
    std::thread::sleep(Duration::from_millis(100));
    let beside = wrk(&paced, seconds);
    done.store(true, Ordering::Relaxed);
    let times = slow.join().unwrap_or_default();
    let slow_mean_ms =
        times.iter().map(Duration::as_secs_f64).sum::<f64>() * 1000.0 / times.len().max(1) as f64;
    let result = BesideResult {
        seconds,
        rate,
        slow_path,
        alone,
        beside,
        slow_answers: times.len(),
        slow_mean_ms,
    };
    eprintln!(
        "beside_slow: alone p99 {} p99.9 {} max {} us; beside {} slow answers ({:.0} ms mean): p99 {} p99.9 {} max {} us",
        result.alone.p99_us,
        result.alone.p999_us,
        result.alone.max_us,
        result.slow_answers,
        result.slow_mean_ms,
        result.beside.p99_us,
        result.beside.p999_us,
        result.beside.max_us,
    );
    result
}
