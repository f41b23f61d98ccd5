//! The first load and a reload of the snapshot: time from spawn to
//! `/ready`, resident memory after the load, and the peak resident memory
//! while a SIGHUP reload builds a second graph beside the live one.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::client::{get_ok, http_get};
use crate::die;
use crate::options::Opts;
use crate::round3;
use crate::server::{proc_status_kib, serve_args, signal, Server};

/// What the first load measured.
pub struct Load {
    /// Spawn to the first `/ready` 200.
    pub to_ready: Duration,
    /// VmRSS 0.5 s after ready, bytes.
    pub rss_after_load: u64,
    /// VmHWM after the first load, bytes.
    pub hwm_first_load: u64,
    /// The `/snapshot` answer once ready.
    pub snapshot: Value,
    /// Its rows per table.
    pub tables: Value,
    pub records: u64,
    pub ops: u64,
    /// Rows of all eight tables.
    pub all_rows: u64,
    /// The server's own `load_duration_ms`.
    pub load_ms: f64,
    pub created_at: String,
}

/// Starts the server on `root` (port 0, polling off), waits until it is
/// ready and measures the load.
pub fn measure_load(o: &Opts, root: &Path, work: &Path) -> (Server, Load) {
    eprintln!("load: starting the server on {}", root.display());
    let mut args = serve_args(root);
    if o.pinned {
        args.extend(["--worker-threads".into(), "1".into()]);
    }
    let mut server = Server::start(&o.binary, &args, &work.join("server.log"));
    let to_ready = server.wait_ready(Duration::from_secs(1800));
    std::thread::sleep(Duration::from_millis(500));
    let rss_after_load = server.rss();
    let hwm_first_load = server.hwm();
    let snapshot = get_ok(&server.addr, "/snapshot");
    let tables = snapshot["tables"].clone();
    let rows = |t: &str| tables[t].as_u64().unwrap_or(0);
    let records = rows("list_records");
    let ops = rows("list_ops");
    let all_rows: u64 = tables
        .as_object()
        .map(|m| m.values().filter_map(Value::as_u64).sum())
        .unwrap_or(0);
    let load_ms = snapshot["load_duration_ms"].as_f64().unwrap_or(0.0);
    let created_at = snapshot["created_at"].as_str().unwrap_or("").to_owned();
    eprintln!(
        "load: ready {:.1} s after spawn (server load_duration_ms {load_ms}); RSS {:.0} MiB = {:.1} B/record",
        to_ready.as_secs_f64(),
        rss_after_load as f64 / 1048576.0,
        rss_after_load as f64 / records.max(1) as f64
    );
    let load = Load {
        to_ready,
        rss_after_load,
        hwm_first_load,
        snapshot,
        tables,
        records,
        ops,
        all_rows,
        load_ms,
        created_at,
    };
    (server, load)
}

/// SIGHUP, then the reload's wall time and peak memory: VmHWM reset before
/// (Linux `clear_refs`), VmRSS sampled every 10 ms until the next
/// generation is live; the peak is the larger of the two.
pub fn measure_reload(server: &Server) -> Value {
    let addr = server.addr.as_str();
    let before = get_ok(addr, "/snapshot");
    let generation = before["generation"].as_u64().unwrap_or(0);
    // Reset VmHWM to the current RSS (Linux: clear_refs 5), so VmHWM after
    // the reload is the reload's peak; the sampler is the fallback.
    let hwm_reset = std::fs::write(format!("/proc/{}/clear_refs", server.pid), "5").is_ok();
    let rss_before = server.rss();
    let stop = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(rss_before));
    let sampler = {
        let (stop, peak, pid) = (stop.clone(), peak.clone(), server.pid);
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Some(kib) = proc_status_kib(pid, "VmRSS") {
                    peak.fetch_max(kib * 1024, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    eprintln!(
        "reload: SIGHUP; sampling VmRSS until generation {} is live",
        generation + 1
    );
    let t0 = Instant::now();
    signal(server.pid, "HUP");
    let after = loop {
        std::thread::sleep(Duration::from_millis(50));
        if let Ok(a) = http_get(addr, "/snapshot") {
            let v = a.json();
            if v["generation"].as_u64().unwrap_or(0) > generation {
                break v;
            }
        }
        if t0.elapsed() > Duration::from_secs(1800) {
            die("reload did not finish in 30 min");
        }
    };
    let wall = t0.elapsed();
    // The old graph is freed on the reload thread once requests let go.
    std::thread::sleep(Duration::from_secs(2));
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let hwm = server.hwm();
    let sampled = peak.load(Ordering::Relaxed);
    let peak_bytes = if hwm_reset { hwm.max(sampled) } else { sampled };
    let rss_after = server.rss();
    eprintln!(
        "reload: {:.1} s; peak RSS {:.0} MiB (before {:.0} MiB, after {:.0} MiB)",
        wall.as_secs_f64(),
        peak_bytes as f64 / 1048576.0,
        rss_before as f64 / 1048576.0,
        rss_after as f64 / 1048576.0
    );
    json!({
        "wall_s": round3(wall.as_secs_f64()),
        "server_load_duration_ms": after["load_duration_ms"],
        "rss_before_bytes": rss_before,
        "peak_rss_bytes": peak_bytes,
        "peak_rss_sampled_bytes": sampled,
        "vmhwm_reset": hwm_reset,
        "rss_after_bytes": rss_after,
        "peak_over_steady": round3(peak_bytes as f64 / rss_before.max(1) as f64),
    })
}
