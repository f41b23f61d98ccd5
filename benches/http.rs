//! HTTP load benchmark of the `followgraph` server (`harness = false`).
//!
//! ```sh
//! cargo bench --bench http                 # full run: 1,000,000 accounts, 10 s per scenario
//! cargo bench --bench http -- --quick      # smoke run: 20,000 accounts, 3 s per scenario
//! ```
//!
//! What it does, in one process and one run:
//!
//! 1. Generates (with the binary's `generate` subcommand) or reuses a
//!    snapshot root under `bench-data/` (`bench-data/m1` for 1,000,000
//!    accounts, `bench-data/n<N>` otherwise).
//! 2. Starts the release binary on 127.0.0.1 (port 0), measures the load
//!    (spawn to `/ready` 200, and the server's own `load_duration_ms`) and
//!    the resident memory after load (`/proc/<pid>/status` VmRSS), then
//!    sends SIGHUP and samples VmRSS / VmHWM until the generation changes
//!    (peak memory during a reload).
//! 3. Collects real subjects through the API itself (random list ids for
//!    accounts, the leaderboard top for hubs, names from the answers) and
//!    writes, per scenario, a file of a few thousand request paths drawn at
//!    random (hubs included) and a wrk Lua script cycling through them.
//! 4. Per scenario: a closed-loop wrk run (fixed connections, fixed time)
//!    against the server; the same script against the *static-body
//!    baseline* (the same binary with `--bench-static-body-bytes <the
//!    scenario's mean body size>`: same stack, routing and method check, a
//!    pre-serialised body, no snapshot); the ratio of the two; then a paced
//!    run at 50% of the scenario's throughput for the latency target, on the
//!    server and at the same rate on the baseline
//!    (pacing: a Lua `delay()` holding a per-thread schedule on
//!    CLOCK_MONOTONIC through LuaJIT's ffi; latency is measured by wrk from
//!    the send, i.e. not corrected for coordinated omission).
//! 5. Prints a markdown table and writes JSON + markdown + an SVG latency
//!    plot (full runs: `benches/results/` and the results section of
//!    `BENCHMARKS.md`; quick runs: `target/followgraph-bench/` unless
//!    `--save`).
//!
//! Flags (after `--`) and environment variables:
//!
//! | flag | env | default (quick) |
//! |---|---|---|
//! | `--accounts N` | `FOLLOWGRAPH_BENCH_ACCOUNTS` | 1000000 (20000) |
//! | `--duration S` | `FOLLOWGRAPH_BENCH_DURATION` | 12 (3) seconds of measurement per server and scenario (closed loop; then as long paced on each) |
//! | `--rounds R` | `FOLLOWGRAPH_BENCH_ROUNDS` | 3: server and baseline alternate in R runs of S/R seconds |
//! | `--warmup S` | `FOLLOWGRAPH_BENCH_WARMUP` | 2 (1) |
//! | `--connections C` | `FOLLOWGRAPH_BENCH_CONNECTIONS` | 32 |
//! | `--threads T` | `FOLLOWGRAPH_BENCH_THREADS` | 2 (wrk threads) |
//! | `--paths N` | | 4000 (1000) paths per scenario |
//! | `--snapshot DIR` | `FOLLOWGRAPH_BENCH_SNAPSHOT` | `bench-data/m1` or `bench-data/n<N>` |
//! | `--scenarios a,b` | | all |
//! | `--no-reload` | | reload measured |
//! | `--save` / `--no-save` | | full: save, quick: don't |
//! | `--wrk PATH` | `WRK` | `wrk` |

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_followgraph");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const API: &str = "/api/v1";

// ---------------------------------------------------------------------------
// Options

#[derive(Clone, Debug)]
struct Opts {
    quick: bool,
    accounts: u64,
    duration: u64,
    warmup: u64,
    connections: u32,
    threads: u32,
    rounds: u64,
    paths: usize,
    snapshot: Option<PathBuf>,
    scenarios: Option<Vec<String>>,
    reload: bool,
    save: bool,
    wrk: String,
    seed: u64,
}

fn env_num(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

fn parse_opts() -> Opts {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let mut o = Opts {
        quick,
        accounts: env_num("FOLLOWGRAPH_BENCH_ACCOUNTS").unwrap_or(if quick {
            20_000
        } else {
            1_000_000
        }),
        duration: env_num("FOLLOWGRAPH_BENCH_DURATION").unwrap_or(if quick { 3 } else { 12 }),
        warmup: env_num("FOLLOWGRAPH_BENCH_WARMUP").unwrap_or(if quick { 1 } else { 2 }),
        connections: env_num("FOLLOWGRAPH_BENCH_CONNECTIONS").unwrap_or(32) as u32,
        threads: env_num("FOLLOWGRAPH_BENCH_THREADS").unwrap_or(2) as u32,
        rounds: env_num("FOLLOWGRAPH_BENCH_ROUNDS").unwrap_or(3),
        paths: if quick { 1000 } else { 4000 },
        snapshot: std::env::var_os("FOLLOWGRAPH_BENCH_SNAPSHOT").map(PathBuf::from),
        scenarios: None,
        reload: true,
        save: !quick,
        wrk: std::env::var("WRK").unwrap_or_else(|_| "wrk".to_owned()),
        seed: 1,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |what: &str| -> String {
            it.next()
                .unwrap_or_else(|| die(&format!("{a} needs {what}")))
                .clone()
        };
        let num = |s: String| -> u64 {
            s.parse()
                .unwrap_or_else(|_| die(&format!("{a}: {s:?} is not a number")))
        };
        match a.as_str() {
            "--quick" => {}
            // cargo bench passes --bench to every bench binary.
            "--bench" => {}
            "--accounts" => o.accounts = num(value("a number")),
            "--duration" => o.duration = num(value("seconds")),
            "--warmup" => o.warmup = num(value("seconds")),
            "--rounds" => o.rounds = num(value("a number")),
            "--connections" => o.connections = num(value("a number")) as u32,
            "--threads" => o.threads = num(value("a number")) as u32,
            "--paths" => o.paths = num(value("a number")) as usize,
            "--seed" => o.seed = num(value("a number")),
            "--snapshot" => o.snapshot = Some(PathBuf::from(value("a directory"))),
            "--scenarios" => {
                o.scenarios = Some(value("names").split(',').map(str::to_owned).collect())
            }
            "--no-reload" => o.reload = false,
            "--save" => o.save = true,
            "--no-save" => o.save = false,
            "--wrk" => o.wrk = value("a path"),
            "-h" | "--help" => {
                println!("{}", HELP);
                std::process::exit(0);
            }
            // Other harness flags cargo may pass (filters etc.) are ignored.
            _ => {}
        }
    }
    o.threads = o.threads.clamp(1, o.connections.max(1));
    o.duration = o.duration.max(1);
    o.rounds = o.rounds.clamp(1, o.duration);
    o
}

const HELP: &str = "cargo bench --bench http -- [--quick] [--accounts N] [--duration S] \
[--warmup S] [--connections C] [--threads T] [--paths N] [--snapshot DIR] \
[--scenarios a,b] [--no-reload] [--save|--no-save] [--wrk PATH]";

fn die(msg: &str) -> ! {
    eprintln!("http bench: {msg}");
    std::process::exit(2);
}

// ---------------------------------------------------------------------------
// A tiny deterministic RNG (no rand dependency)

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

// ---------------------------------------------------------------------------
// A minimal HTTP/1.1 client for setup requests (not for load)

struct HttpAnswer {
    status: u16,
    body: Vec<u8>,
}

impl HttpAnswer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

fn http_get(addr: &str, path: &str) -> Result<HttpAnswer, String> {
    let mut s = TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(120))).ok();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAccept: */*\r\n\r\n"
    )
    .map_err(|e| format!("write: {e}"))?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| format!("read: {e}"))?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no end of headers")?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut body = raw[split + 4..].to_vec();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line in {head:?}"))?;
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    if chunked {
        body = dechunk(&body)?;
    }
    Ok(HttpAnswer { status, body })
}

fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let eol = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("bad chunk")?;
        let size_text = String::from_utf8_lossy(&data[..eol]);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| "bad chunk size")?;
        data = &data[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        if data.len() < size + 2 {
            return Err("truncated chunk".into());
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

fn get_ok(addr: &str, path: &str) -> Value {
    match http_get(addr, path) {
        Ok(a) if a.status == 200 => a.json(),
        Ok(a) => die(&format!(
            "GET {path}: status {} {}",
            a.status,
            String::from_utf8_lossy(&a.body)
        )),
        Err(e) => die(&format!("GET {path}: {e}")),
    }
}

/// Percent-encodes a path segment or query value (unreserved kept).
fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Processes and /proc

fn proc_status_kib(pid: u32, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find(|l| l.starts_with(key) && l[key.len()..].starts_with(':'))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status();
}

struct Server {
    child: Child,
    pid: u32,
    addr: String,
    spawned: Instant,
}

impl Server {
    fn start(args: &[String], log: &Path) -> Server {
        let log_file = std::fs::File::create(log)
            .unwrap_or_else(|e| die(&format!("cannot create {}: {e}", log.display())));
        let spawned = Instant::now();
        let mut child = Command::new(BIN)
            .arg("serve")
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file))
            .spawn()
            .unwrap_or_else(|e| die(&format!("cannot start {BIN}: {e}")));
        let pid = child.id();
        let mut out = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut line = String::new();
        let _ = out.read_line(&mut line);
        let Some(addr) = line.trim().strip_prefix("listening on http://") else {
            let _ = child.kill();
            die(&format!(
                "server did not announce its address (got {line:?}); log: {}",
                log.display()
            ));
        };
        let addr = addr.to_owned();
        // Keep draining stdout so the server never blocks or gets EPIPE.
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = out.read_to_end(&mut sink);
        });
        Server {
            child,
            pid,
            addr,
            spawned,
        }
    }

    /// Waits for `/ready` 200; returns the time since spawn.
    fn wait_ready(&mut self, timeout: Duration) -> Duration {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                die(&format!("server exited while loading: {status}"));
            }
            if let Ok(a) = http_get(&self.addr, "/ready") {
                if a.status == 200 {
                    return self.spawned.elapsed();
                }
            }
            if Instant::now() > deadline {
                die("server not ready in time");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn rss(&self) -> u64 {
        proc_status_kib(self.pid, "VmRSS").unwrap_or(0) * 1024
    }

    fn hwm(&self) -> u64 {
        proc_status_kib(self.pid, "VmHWM").unwrap_or(0) * 1024
    }

    fn metric(&self, name: &str) -> f64 {
        let Ok(a) = http_get(&self.addr, "/metrics") else {
            return 0.0;
        };
        let text = String::from_utf8_lossy(&a.body);
        text.lines()
            .filter(|l| {
                l.strip_prefix(name)
                    .is_some_and(|r| r.starts_with(' ') || r.starts_with('{'))
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        signal(self.pid, "TERM");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

// ---------------------------------------------------------------------------
// wrk

fn ensure_wrk(o: &mut Opts) {
    let works = |p: &str| {
        Command::new(p)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    };
    if works(&o.wrk) {
        return;
    }
    eprintln!(
        "http bench: `{}` not found; trying apt-get install -y wrk",
        o.wrk
    );
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let sudo: &[&str] = if root { &[] } else { &["sudo", "-n"] };
    let run = |args: &[&str]| {
        let mut all: Vec<&str> = sudo.to_vec();
        all.extend_from_slice(args);
        Command::new(all[0])
            .args(&all[1..])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    if run(&["apt-get", "update"]) && run(&["apt-get", "install", "-y", "wrk"]) && works("wrk") {
        o.wrk = "wrk".into();
        return;
    }
    die(
        "wrk is needed: install it with `sudo apt-get update && sudo apt-get install -y wrk` \
         (or build https://github.com/wg/wrk and pass --wrk PATH / WRK=PATH)",
    );
}

fn wrk_version(wrk: &str) -> String {
    Command::new(wrk)
        .arg("--version")
        .output()
        .map(|o| {
            let text = String::from_utf8_lossy(&o.stdout).into_owned()
                + &String::from_utf8_lossy(&o.stderr);
            let line = text.lines().next().unwrap_or("");
            line.split(" Copyright")
                .next()
                .unwrap_or(line)
                .trim()
                .to_owned()
        })
        .unwrap_or_default()
}

/// The wrk script: cycles through the pre-generated request paths (each
/// thread from its own offset), optionally paced to `rate` requests/s in
/// total, and prints one JSON line in `done()`.
fn lua_script(paths_file: &Path, threads: u32, rate: f64) -> String {
    let mut s = format!(
        r#"-- generated by benches/http.rs
local paths_file = "{paths}"
local nthreads = {threads}
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end
local reqs = {{}}
local n = 0
local i = 0
function init(args)
  for line in io.lines(paths_file) do
    if #line > 0 then
      n = n + 1
      reqs[n] = wrk.format("GET", line)
    end
  end
  i = math.floor((tid or 0) * n / nthreads)
end
function request()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end
function done(summary, latency, requests)
  local e = summary.errors
  local pct = {{}}
  for _, q in ipairs({{50, 75, 90, 99, 99.9, 99.99}}) do
    pct[#pct + 1] = string.format('"%s":%d', tostring(q), math.floor(latency:percentile(q)))
  end
  io.write(string.format('FGJSON {{"duration_us":%d,"requests":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"min_us":%d,"max_us":%d,"mean_us":%.3f,"stdev_us":%.3f,"pct":{{%s}}}}\n',
    math.floor(summary.duration), math.floor(summary.requests), math.floor(summary.bytes),
    e.connect, e.read, e.write, e.status, e.timeout,
    math.floor(latency.min), math.floor(latency.max), latency.mean, latency.stdev,
    table.concat(pct, ",")))
end
"#,
        paths = paths_file.display(),
        threads = threads,
    );
    if rate > 0.0 {
        let _ = write!(
            s,
            r#"
-- Pacing (wrk2-like, without coordinated-omission correction): each
-- thread keeps a schedule of send times {interval:.6} ms apart on
-- CLOCK_MONOTONIC; delay() makes the next send wait for its slot. A thread
-- that falls more than 100 ms behind drops the missed slots (no burst).
local ffi = require("ffi")
ffi.cdef[[
typedef struct {{ long tv_sec; long tv_nsec; }} fg_timespec;
int clock_gettime(int clk_id, fg_timespec *tp);
]]
local ts = ffi.new("fg_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end
local interval = {interval:.6}
local next_at = nil
function delay()
  local now = now_ms()
  if next_at == nil or next_at < now - 100 then next_at = now end
  local d = next_at - now
  next_at = next_at + interval
  return math.floor(d + 0.5)
end
"#,
            interval = threads as f64 * 1000.0 / rate,
        );
    }
    s
}

#[derive(Clone, Debug, Default)]
struct WrkResult {
    duration_s: f64,
    requests: u64,
    bytes: u64,
    errors: u64,
    non_2xx: u64,
    rps: f64,
    mean_us: f64,
    max_us: f64,
    p50_us: f64,
    p75_us: f64,
    p90_us: f64,
    p99_us: f64,
    p999_us: f64,
    /// req/s of each round when merged.
    rounds_rps: Vec<f64>,
}

impl WrkResult {
    fn to_json(&self) -> Value {
        json!({
            "duration_s": round3(self.duration_s),
            "requests": self.requests,
            "bytes": self.bytes,
            "socket_errors": self.errors,
            "non_2xx": self.non_2xx,
            "rps": round1(self.rps),
            "rounds_rps": self.rounds_rps.iter().map(|r| round1(*r)).collect::<Vec<_>>(),
            "latency_us": {
                "mean": round1(self.mean_us), "p50": self.p50_us, "p75": self.p75_us,
                "p90": self.p90_us, "p99": self.p99_us, "p99.9": self.p999_us,
                "max": self.max_us,
            },
        })
    }
}

/// Rounds of one measurement merged: requests, bytes and errors summed,
/// req/s over the summed duration, mean weighted by requests, max of the
/// maxima, and each latency percentile the median of the rounds' values.
fn merge_runs(runs: &[WrkResult]) -> WrkResult {
    let median = |f: &dyn Fn(&WrkResult) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        match v.len() {
            0 => 0.0,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    };
    let requests: u64 = runs.iter().map(|r| r.requests).sum();
    let duration_s: f64 = runs.iter().map(|r| r.duration_s).sum();
    WrkResult {
        duration_s,
        requests,
        bytes: runs.iter().map(|r| r.bytes).sum(),
        errors: runs.iter().map(|r| r.errors).sum(),
        non_2xx: runs.iter().map(|r| r.non_2xx).sum(),
        rps: if duration_s > 0.0 {
            requests as f64 / duration_s
        } else {
            0.0
        },
        mean_us: runs
            .iter()
            .map(|r| r.mean_us * r.requests as f64)
            .sum::<f64>()
            / requests.max(1) as f64,
        max_us: runs.iter().map(|r| r.max_us).fold(0.0, f64::max),
        p50_us: median(&|r| r.p50_us),
        p75_us: median(&|r| r.p75_us),
        p90_us: median(&|r| r.p90_us),
        p99_us: median(&|r| r.p99_us),
        p999_us: median(&|r| r.p999_us),
        rounds_rps: runs.iter().map(|r| r.rps).collect(),
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn run_wrk(
    o: &Opts,
    addr: &str,
    script: &Path,
    seconds: u64,
    connections: u32,
) -> Result<WrkResult, String> {
    let out = Command::new(&o.wrk)
        .arg(format!("-t{}", o.threads))
        .arg(format!("-c{}", connections.max(o.threads)))
        .arg(format!("-d{seconds}s"))
        .arg("--timeout")
        .arg("10s")
        .arg("-s")
        .arg(script)
        .arg(format!("http://{addr}"))
        .output()
        .map_err(|e| format!("cannot run {}: {e}", o.wrk))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    parse_wrk(&stdout).ok_or_else(|| {
        format!(
            "no result line from wrk (exit {}): {}{}",
            out.status, stdout, stderr
        )
    })
}

fn parse_wrk(stdout: &str) -> Option<WrkResult> {
    let line = stdout.lines().rev().find_map(|l| {
        l.find("FGJSON ")
            .map(|at| l[at + "FGJSON ".len()..].trim().to_owned())
    })?;
    let v: Value = serde_json::from_str(&line).ok()?;
    let f = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let p = |k: &str| {
        v.get("pct")
            .and_then(|p| p.get(k))
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    };
    let duration_s = f("duration_us") / 1e6;
    let requests = f("requests") as u64;
    Some(WrkResult {
        duration_s,
        requests,
        bytes: f("bytes") as u64,
        errors: (f("connect") + f("read") + f("write") + f("timeout")) as u64,
        non_2xx: f("status") as u64,
        rps: if duration_s > 0.0 {
            requests as f64 / duration_s
        } else {
            0.0
        },
        mean_us: f("mean_us"),
        max_us: f("max_us"),
        p50_us: p("50"),
        p75_us: p("75"),
        p90_us: p("90"),
        p99_us: p("99"),
        p999_us: p("99.9"),
        rounds_rps: Vec::new(),
    })
}

// ---------------------------------------------------------------------------
// Subjects and scenarios

#[derive(Clone, Debug)]
struct Account {
    address: String,
    name: Option<String>,
    list: Option<u64>,
}

impl Account {
    /// How a client names the account: its name half of the time when it
    /// has one, else its address.
    fn ident(&self, rng: &mut Rng) -> String {
        match &self.name {
            Some(n) if rng.chance(0.5) => enc(n),
            _ => self.address.clone(),
        }
    }
}

struct Subjects {
    accounts: Vec<Account>,
    hubs: Vec<Account>,
    /// Accounts (random or hub) with a primary list.
    listed: Vec<Account>,
    listed_hubs: Vec<Account>,
    names: Vec<String>,
    created_at_s: i64,
}

impl Subjects {
    /// 10% hubs (the leaderboard top), 90% accounts drawn at random.
    fn account(&self, rng: &mut Rng) -> &Account {
        if !self.hubs.is_empty() && rng.chance(0.10) {
            rng.pick(&self.hubs)
        } else {
            rng.pick(&self.accounts)
        }
    }
    fn list(&self, rng: &mut Rng) -> u64 {
        let a = if !self.listed_hubs.is_empty() && rng.chance(0.10) {
            rng.pick(&self.listed_hubs)
        } else {
            rng.pick(&self.listed)
        };
        a.list.expect("listed accounts have a list")
    }
}

fn collect_subjects(o: &Opts, addr: &str, tables: &Value, created_at: &str) -> Subjects {
    let started = Instant::now();
    let mut rng = Rng(o.seed ^ 0x5eed);
    let lists = tables["lists"].as_u64().unwrap_or(0).max(1);
    let want = if o.quick { 600 } else { 1500 };
    let mut accounts = Vec::new();
    let mut tries = 0;
    while accounts.len() < want && tries < want * 4 {
        tries += 1;
        let id = 1 + rng.below(lists);
        let Ok(a) = http_get(addr, &format!("{API}/lists/{id}/details?cache=fresh")) else {
            continue;
        };
        if a.status != 200 {
            continue;
        }
        let v = a.json();
        let Some(address) = v["address"].as_str() else {
            continue;
        };
        accounts.push(Account {
            address: address.to_owned(),
            name: v["ens"]["name"].as_str().map(str::to_owned),
            list: v["primary_list"].as_str().and_then(|s| s.parse().ok()),
        });
    }
    if accounts.is_empty() {
        die("found no primary list among random list ids");
    }
    // Hubs: the leaderboard top (every address contains "0x").
    let nhubs = if o.quick { 30 } else { 100 };
    let top = get_ok(
        addr,
        &format!("{API}/leaderboard/search?term=0x&limit={nhubs}&cache=fresh"),
    );
    let top: Vec<(String, Option<String>)> = top["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            Some((
                r["address"].as_str()?.to_owned(),
                r["name"].as_str().map(str::to_owned),
            ))
        })
        .collect();
    let lists_of = hub_lists(addr, &top);
    let hubs: Vec<Account> = top
        .into_iter()
        .map(|(address, name)| Account {
            list: lists_of.get(&address).copied(),
            address,
            name,
        })
        .collect();
    let listed: Vec<Account> = accounts
        .iter()
        .filter(|a| a.list.is_some())
        .cloned()
        .collect();
    let listed_hubs: Vec<Account> = hubs.iter().filter(|a| a.list.is_some()).cloned().collect();
    let names: Vec<String> = accounts
        .iter()
        .chain(&hubs)
        .filter_map(|a| a.name.clone())
        .collect();
    let created_at_s = followgraph::time::parse_iso_ms(created_at).unwrap_or(0) / 1000;
    eprintln!(
        "subjects: {} random accounts ({} named), {} hubs ({} with a list found) in {:.1} s",
        accounts.len(),
        names.len(),
        hubs.len(),
        listed_hubs.len(),
        started.elapsed().as_secs_f64()
    );
    Subjects {
        accounts,
        hubs,
        listed,
        listed_hubs,
        names,
        created_at_s,
    }
}

/// The hubs' primary lists, found through the API: hubs follow hubs, so
/// the followers of the top hubs sorted by follower count (hubs first)
/// carry most hubs' `svc_list_nft_token_id`.
fn hub_lists(
    addr: &str,
    hubs: &[(String, Option<String>)],
) -> std::collections::HashMap<String, u64> {
    let mut found = std::collections::HashMap::new();
    for (hub, _) in hubs.iter().take(20) {
        let Ok(a) = http_get(
            addr,
            &format!("{API}/users/{hub}/followers?sort=followers&limit=1000&cache=fresh"),
        ) else {
            continue;
        };
        for e in a.json()["followers"].as_array().into_iter().flatten() {
            if let (Some(f), Some(list)) = (
                e["address"].as_str(),
                e["svc_list_nft_token_id"]
                    .as_str()
                    .and_then(|s| s.parse::<u64>().ok()),
            ) {
                found.insert(f.to_owned(), list);
            }
        }
        if hubs.iter().all(|(h, _)| found.contains_key(h)) {
            break;
        }
    }
    found
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Details,
    UserBadges,
    ListBadges,
    Search,
    Notifications,
    UserFollowers(&'static str),
    ListFollowers(&'static str),
    Mix,
}

struct Scenario {
    name: String,
    kind: Kind,
    cached: bool,
    /// The issue's targets for this scenario: minimum ratio to the baseline
    /// and the p99 bound at 50% load (µs).
    min_ratio: Option<f64>,
    max_p99_us: Option<f64>,
    describe: &'static str,
}

fn scenarios() -> Vec<Scenario> {
    let sc = |name: &str, kind, min_ratio, max_p99_us, describe| Scenario {
        name: name.to_owned(),
        kind,
        cached: false,
        min_ratio,
        max_p99_us,
        describe,
    };
    let f = Some(0.8);
    let l = Some(2000.0);
    let mut v = vec![
        sc("user_followers_latest", Kind::UserFollowers("latest"), f, l, "GET /users/{a}/followers?sort=latest&limit=10 (offset 0 mostly, pages 2-5 20%, tags filter 5%)"),
        sc("user_followers_earliest", Kind::UserFollowers("earliest"), f, l, "same, sort=earliest"),
        sc("user_followers_followers", Kind::UserFollowers("followers"), f, l, "same, sort=followers"),
        sc("list_followers_latest", Kind::ListFollowers("latest"), f, l, "GET /lists/{id}/followers?sort=latest&limit=10 (same offsets/tags)"),
        sc("list_followers_earliest", Kind::ListFollowers("earliest"), f, l, "same, sort=earliest"),
        sc("list_followers_followers", Kind::ListFollowers("followers"), f, l, "same, sort=followers"),
        sc("notifications", Kind::Notifications, f, l, "GET /users/{a}/notifications?interval=week|month|all|day&limit=10 (opcode 30%, start=created_at 50%)"),
        sc("list_details", Kind::Details, f, l, "GET /lists/{id}/details"),
        sc("user_badges", Kind::UserBadges, f, l, "GET /users/{a}/badges"),
        sc("list_badges", Kind::ListBadges, f, l, "GET /lists/{id}/badges"),
        sc("search", Kind::Search, Some(0.5), None, "GET /leaderboard/search?term=<3-6 chars of a name, or 0x+2-6 hex>&limit=10"),
        sc("mix", Kind::Mix, None, None, "weighted mix: user followers 25%, list followers 10%, notifications 20%, details 15%, user badges 10%, list badges 5%, search 15%"),
    ];
    v.push(Scenario {
        name: "mix_cached".into(),
        kind: Kind::Mix,
        cached: true,
        min_ratio: None,
        max_p99_us: None,
        describe: "the mix's paths without cache=fresh, after a pass over every path",
    });
    v
}

fn followers_params(rng: &mut Rng, sort: &str) -> String {
    let mut q = format!("sort={sort}&limit=10");
    if rng.chance(0.20) {
        let _ = write!(q, "&offset={}", 10 * (1 + rng.below(4)));
    }
    if rng.chance(0.05) {
        q.push_str("&tags=top8%2Cfriend");
    }
    q
}

fn search_term(s: &Subjects, rng: &mut Rng) -> String {
    if !s.names.is_empty() && rng.chance(0.8) {
        let name = rng.pick(&s.names);
        let stem: Vec<char> = name
            .split('.')
            .next()
            .unwrap_or(name)
            .to_lowercase()
            .chars()
            .collect();
        if stem.len() >= 3 {
            let len = (3 + rng.below(4) as usize).min(stem.len());
            let start = rng.below((stem.len() - len + 1) as u64) as usize;
            return stem[start..start + len].iter().collect();
        }
    }
    let a = &rng.pick(&s.accounts).address;
    let len = 2 + rng.below(5) as usize;
    format!("0x{}", &a[2..2 + len])
}

fn make_path(kind: Kind, s: &Subjects, rng: &mut Rng) -> String {
    match kind {
        Kind::Details => format!("{API}/lists/{}/details", s.list(rng)),
        Kind::ListBadges => format!("{API}/lists/{}/badges", s.list(rng)),
        Kind::UserBadges => format!("{API}/users/{}/badges", s.account(rng).ident(rng)),
        Kind::Search => format!(
            "{API}/leaderboard/search?term={}&limit=10",
            enc(&search_term(s, rng))
        ),
        Kind::Notifications => {
            let who = s.account(rng).ident(rng);
            let interval = match rng.below(10) {
                0..=3 => "week",
                4..=6 => "month",
                7..=8 => "all",
                _ => "day",
            };
            let mut q = format!("interval={interval}&limit=10");
            if rng.chance(0.3) {
                let _ = write!(q, "&opcode={}", 1 + rng.below(4));
            }
            if rng.chance(0.5) {
                let _ = write!(q, "&start={}", s.created_at_s);
            }
            format!("{API}/users/{who}/notifications?{q}")
        }
        Kind::UserFollowers(sort) => {
            let who = s.account(rng).ident(rng);
            format!(
                "{API}/users/{who}/followers?{}",
                followers_params(rng, sort)
            )
        }
        Kind::ListFollowers(sort) => {
            let list = s.list(rng);
            format!(
                "{API}/lists/{list}/followers?{}",
                followers_params(rng, sort)
            )
        }
        Kind::Mix => {
            let sort = *rng.pick(&["latest", "latest", "earliest", "followers"]);
            let k = match rng.below(100) {
                0..=24 => Kind::UserFollowers(sort),
                25..=34 => Kind::ListFollowers(sort),
                35..=54 => Kind::Notifications,
                55..=69 => Kind::Details,
                70..=79 => Kind::UserBadges,
                80..=84 => Kind::ListBadges,
                _ => Kind::Search,
            };
            make_path(k, s, rng)
        }
    }
}

fn with_fresh(path: &str) -> String {
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{path}{sep}cache=fresh")
}

// ---------------------------------------------------------------------------
// Snapshot

fn snapshot_root(o: &Opts) -> PathBuf {
    if let Some(p) = &o.snapshot {
        return p.clone();
    }
    let name = if o.accounts == 1_000_000 {
        "m1".to_owned()
    } else {
        format!("n{}", o.accounts)
    };
    Path::new(ROOT).join("bench-data").join(name)
}

fn ensure_snapshot(o: &Opts) -> (PathBuf, Option<f64>) {
    let root = snapshot_root(o);
    if o.snapshot.is_some() {
        return (root, None);
    }
    let name = format!("gen-{}-1", o.accounts);
    let current = std::fs::read_to_string(root.join("CURRENT")).unwrap_or_default();
    if current.trim() == name && root.join(&name).join("manifest.json").is_file() {
        eprintln!("snapshot: reusing {}", root.join(&name).display());
        return (root, None);
    }
    eprintln!(
        "snapshot: generating {} accounts into {} (1M: ~1 min, ~1.8 GB)",
        o.accounts,
        root.display()
    );
    let started = Instant::now();
    let status = Command::new(BIN)
        .args([
            "generate",
            "--accounts",
            &o.accounts.to_string(),
            "--seed",
            "1",
        ])
        .arg("--out")
        .arg(&root)
        .status()
        .unwrap_or_else(|e| die(&format!("cannot run generate: {e}")));
    if !status.success() {
        die("generate failed");
    }
    (root, Some(started.elapsed().as_secs_f64()))
}

// ---------------------------------------------------------------------------
// Main

struct ScenarioResult {
    name: String,
    describe: &'static str,
    cached: bool,
    paths: usize,
    mean_body: usize,
    main: WrkResult,
    baseline: WrkResult,
    ratio: f64,
    paced_target: f64,
    paced: WrkResult,
    paced_baseline: WrkResult,
    cache_hit_ratio: Option<f64>,
    min_ratio: Option<f64>,
    max_p99_us: Option<f64>,
}

impl ScenarioResult {
    fn ratio_pass(&self) -> Option<bool> {
        self.min_ratio.map(|m| self.ratio >= m)
    }
    fn p99_pass(&self) -> Option<bool> {
        self.max_p99_us.map(|m| self.paced.p99_us < m)
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn cmd_out(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .current_dir(ROOT)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .unwrap_or("")
        .trim()
        .to_owned();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kib: u64 = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    json!({
        "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "cpu_model": model,
        "mem_total_bytes": mem_kib * 1024,
        "kernel": cmd_out("uname", &["-sr"]),
        "note": "shared, noisy machine: compare ratios to the baseline, not absolute figures",
    })
}

fn main() {
    let mut o = parse_opts();
    ensure_wrk(&mut o);
    let started = Instant::now();
    let date_ms = now_ms();
    let date = followgraph::time::format_iso_ms(date_ms);
    let day = &date[..10];
    let work = Path::new(ROOT).join("target").join("followgraph-bench");
    std::fs::create_dir_all(&work).unwrap_or_else(|e| die(&format!("{}: {e}", work.display())));
    let (root, generated_s) = ensure_snapshot(&o);
    // The paths bench (benches/paths.rs) answers these paths from this
    // snapshot.
    let _ = std::fs::write(work.join("snapshot"), root.display().to_string());

    // --- load and memory -------------------------------------------------
    eprintln!("load: starting the server on {}", root.display());
    let mut server = Server::start(
        &[
            "--snapshot".into(),
            root.display().to_string(),
            "--listen".into(),
            "127.0.0.1:0".into(),
            "--poll-interval".into(),
            "0".into(),
        ],
        &work.join("server.log"),
    );
    let addr = server.addr.clone();
    let to_ready = server.wait_ready(Duration::from_secs(1800));
    std::thread::sleep(Duration::from_millis(500));
    let rss_after_load = server.rss();
    let hwm_first_load = server.hwm();
    let snap = get_ok(&addr, "/snapshot");
    let tables = snap["tables"].clone();
    let rows = |t: &str| tables[t].as_u64().unwrap_or(0);
    let records = rows("list_records");
    let ops = rows("list_ops");
    let all_rows: u64 = tables
        .as_object()
        .map(|m| m.values().filter_map(Value::as_u64).sum())
        .unwrap_or(0);
    let load_ms = snap["load_duration_ms"].as_f64().unwrap_or(0.0);
    let created_at = snap["created_at"].as_str().unwrap_or("").to_owned();
    eprintln!(
        "load: ready {:.1} s after spawn (server load_duration_ms {load_ms}); RSS {:.0} MiB = {:.1} B/record",
        to_ready.as_secs_f64(),
        rss_after_load as f64 / 1048576.0,
        rss_after_load as f64 / records.max(1) as f64
    );

    let mut reload = Value::Null;
    if o.reload {
        reload = measure_reload(&server, &addr);
    }

    // --- scenarios --------------------------------------------------------
    let subjects = collect_subjects(&o, &addr, &tables, &created_at);
    let mut results: Vec<ScenarioResult> = Vec::new();
    let mut rng = Rng(o.seed);
    let mut mix_paths: Option<Vec<String>> = None;
    for sc in scenarios() {
        if let Some(only) = &o.scenarios {
            if !only.contains(&sc.name) {
                continue;
            }
        }
        let base_paths: Vec<String> = if sc.kind == Kind::Mix && mix_paths.is_some() {
            mix_paths.clone().unwrap_or_default()
        } else {
            (0..o.paths)
                .map(|_| make_path(sc.kind, &subjects, &mut rng))
                .collect()
        };
        if sc.kind == Kind::Mix {
            mix_paths = Some(base_paths.clone());
        }
        let paths: Vec<String> = if sc.cached {
            base_paths
        } else {
            base_paths.iter().map(|p| with_fresh(p)).collect()
        };
        // Mean body size (and a status check) over a sample of the paths.
        let sample = paths.len().min(if o.quick { 200 } else { 400 });
        let (mut bytes, mut n) = (0usize, 0usize);
        for p in paths.iter().take(sample) {
            match http_get(&addr, p) {
                Ok(a) if a.status == 200 => {
                    bytes += a.body.len();
                    n += 1;
                }
                Ok(a) => die(&format!(
                    "{}: GET {p} answered {} {}",
                    sc.name,
                    a.status,
                    String::from_utf8_lossy(&a.body)
                )),
                Err(e) => die(&format!("{}: GET {p}: {e}", sc.name)),
            }
        }
        let mean_body = (bytes / n.max(1)).max(16);
        let paths_file = work.join(format!("{}.paths", sc.name));
        std::fs::write(&paths_file, paths.join("\n") + "\n")
            .unwrap_or_else(|e| die(&format!("{}: {e}", paths_file.display())));
        let script = work.join(format!("{}.lua", sc.name));
        std::fs::write(&script, lua_script(&paths_file, o.threads, 0.0))
            .unwrap_or_else(|e| die(&format!("{}: {e}", script.display())));

        if sc.cached {
            // Fill the cache: one pass over every path, then the warm-up.
            for p in &paths {
                let _ = http_get(&addr, p);
            }
        }
        let wrk = |a: &str, script: &Path, secs: u64| {
            run_wrk(&o, a, script, secs, o.connections)
                .unwrap_or_else(|e| die(&format!("{}: {e}", sc.name)))
        };
        let round_s = (o.duration / o.rounds).max(1);
        eprintln!(
            "{}: {} paths, mean body {} B; {} x ({} s server + {} s baseline), then {} s paced x2",
            sc.name,
            paths.len(),
            mean_body,
            o.rounds,
            round_s,
            round_s,
            o.duration
        );
        let static_server = Server::start(
            &[
                "--listen".into(),
                "127.0.0.1:0".into(),
                "--bench-static-body-bytes".into(),
                mean_body.to_string(),
            ],
            &work.join("baseline.log"),
        );
        let check = http_get(&static_server.addr, &paths[0])
            .unwrap_or_else(|e| die(&format!("baseline: {e}")));
        if check.status != 200 || check.body.len() != mean_body {
            die(&format!(
                "baseline answered {} with {} bytes (wanted 200 with {mean_body})",
                check.status,
                check.body.len()
            ));
        }
        wrk(&addr, &script, o.warmup);
        wrk(&static_server.addr, &script, o.warmup);
        // Server and baseline alternate in rounds, so that drift of this
        // shared machine hits both alike.
        let (mut main_runs, mut base_runs) = (Vec::new(), Vec::new());
        let (mut hits, mut lookups) = (0.0, 0.0);
        for _ in 0..o.rounds {
            let (hits0, misses0) = (
                server.metric("followgraph_cache_hits_total"),
                server.metric("followgraph_cache_misses_total"),
            );
            main_runs.push(wrk(&addr, &script, round_s));
            let (hits1, misses1) = (
                server.metric("followgraph_cache_hits_total"),
                server.metric("followgraph_cache_misses_total"),
            );
            hits += hits1 - hits0;
            lookups += (hits1 - hits0) + (misses1 - misses0);
            base_runs.push(wrk(&static_server.addr, &script, round_s));
        }
        let cache_hit_ratio = (lookups > 0.0).then(|| hits / lookups);
        let main = merge_runs(&main_runs);
        let baseline = merge_runs(&base_runs);
        let ratio = if baseline.rps > 0.0 {
            main.rps / baseline.rps
        } else {
            0.0
        };

        let paced_target = (main.rps * 0.5).max(1.0);
        let paced_script = work.join(format!("{}.paced.lua", sc.name));
        std::fs::write(
            &paced_script,
            lua_script(&paths_file, o.threads, paced_target),
        )
        .unwrap_or_else(|e| die(&format!("{}: {e}", paced_script.display())));
        let paced = wrk(&addr, &paced_script, o.duration);
        // The same paced script on the baseline: the latency floor of this
        // machine, stack and client at that request rate.
        let paced_baseline = wrk(&static_server.addr, &paced_script, o.duration);
        drop(static_server);

        eprintln!(
            "{}: {:.0} rps (baseline {:.0}, ratio {:.2}); p50 {} p99 {} p99.9 {} us; at {:.0} rps: p99 {} us (baseline {} us){}",
            sc.name,
            main.rps,
            baseline.rps,
            ratio,
            main.p50_us,
            main.p99_us,
            main.p999_us,
            paced.rps,
            paced.p99_us,
            paced_baseline.p99_us,
            if main.non_2xx + main.errors > 0 {
                format!(" ({} non-2xx, {} socket errors)", main.non_2xx, main.errors)
            } else {
                String::new()
            }
        );
        results.push(ScenarioResult {
            name: sc.name.clone(),
            describe: sc.describe,
            cached: sc.cached,
            paths: paths.len(),
            mean_body,
            main,
            baseline,
            ratio,
            paced_target,
            paced_baseline,
            paced,
            cache_hit_ratio,
            min_ratio: sc.min_ratio,
            max_p99_us: sc.max_p99_us,
        });
    }
    let rss_after_run = server.rss();
    server.stop();

    // --- report -------------------------------------------------------------
    let command = {
        let mut c = "cargo bench --bench http".to_owned();
        let extra: Vec<String> = std::env::args()
            .skip(1)
            .filter(|a| a != "--bench")
            .collect();
        if !extra.is_empty() {
            c.push_str(" -- ");
            c.push_str(&extra.join(" "));
        }
        c
    };
    let at_1m = o.accounts == 1_000_000 && o.snapshot.is_none();
    let load_s = to_ready.as_secs_f64();
    let bpr = rss_after_load as f64 / records.max(1) as f64;
    let bpro = rss_after_load as f64 / (records + ops).max(1) as f64;
    let mut targets: Vec<Value> = Vec::new();
    for r in &results {
        if let (Some(m), Some(pass)) = (r.min_ratio, r.ratio_pass()) {
            targets.push(
                json!({"target": format!("{} throughput >= {m}x baseline", r.name),
                "measured": format!("{:.2}x", r.ratio), "pass": pass}),
            );
        }
        if let (Some(m), Some(pass)) = (r.max_p99_us, r.p99_pass()) {
            targets.push(json!({"target": format!("{} p99 < {} ms at 50% of its throughput", r.name, m / 1000.0),
                "measured": format!("{:.2} ms at {:.0} rps", r.paced.p99_us / 1000.0, r.paced.rps), "pass": pass}));
        }
    }
    targets.push(json!({"target": "load <= 10 s wall (spawn to /ready)",
        "measured": format!("{load_s:.1} s"), "pass": load_s <= 10.0}));
    targets.push(
        json!({"target": "RSS after load <= 64 B per list_records row",
        "measured": format!("{bpr:.1} B"), "pass": bpr <= 64.0}),
    );

    let report = json!({
        "date": date,
        "command": command,
        "machine": machine(),
        "git": {
            "commit": cmd_out("git", &["rev-parse", "HEAD"]),
            "dirty": !cmd_out("git", &["status", "--porcelain", "--untracked-files=no"]).is_empty(),
        },
        "config": {
            "accounts": o.accounts,
            "snapshot": root.display().to_string(),
            "duration_s": o.duration,
            "rounds": o.rounds,
            "warmup_s": o.warmup,
            "connections": o.connections,
            "wrk_threads": o.threads,
            "paths_per_scenario": o.paths,
            "load_generator": wrk_version(&o.wrk),
            "pacing": "wrk Lua delay() with a per-thread CLOCK_MONOTONIC schedule at 50% of the scenario's measured rps; latency from the send (not corrected for coordinated omission)",
            "baseline": "same binary, --bench-static-body-bytes <scenario mean body>, same script and paths",
            "targets_apply": at_1m,
        },
        "snapshot": {"name": snap["name"], "created_at": created_at, "tables": tables,
                      "generated_in_s": generated_s},
        "load": {
            "wall_to_ready_s": round3(load_s),
            "server_load_duration_ms": load_ms,
            "s_per_million_list_records": round3(load_s / (records.max(1) as f64 / 1e6)),
            "s_per_million_rows": round3(load_s / (all_rows.max(1) as f64 / 1e6)),
            "rss_after_load_bytes": rss_after_load,
            "vmhwm_first_load_bytes": hwm_first_load,
            "rss_bytes_per_list_record": round1(bpr),
            "rss_bytes_per_record_and_op": round1(bpro),
            "rss_after_run_bytes": rss_after_run,
            "reload": reload,
        },
        "scenarios": results.iter().map(|r| json!({
            "name": r.name,
            "request": r.describe,
            "cached": r.cached,
            "paths": r.paths,
            "mean_body_bytes": r.mean_body,
            "cache_hit_ratio": r.cache_hit_ratio.map(round3),
            "server": r.main.to_json(),
            "baseline": r.baseline.to_json(),
            "ratio_to_baseline": round3(r.ratio),
            "paced": {"target_rps": round1(r.paced_target), "result": r.paced.to_json(),
                       "baseline": r.paced_baseline.to_json()},
            "target_min_ratio": r.min_ratio,
            "target_p99_us_at_half_load": r.max_p99_us,
            "pass_ratio": r.ratio_pass(),
            "pass_p99": r.p99_pass(),
        })).collect::<Vec<_>>(),
        "targets": targets,
        "elapsed_s": round1(started.elapsed().as_secs_f64()),
    });

    let stem = format!("http-{day}");
    let (dir, json_name, svg_name) = if o.save {
        (
            Path::new(ROOT).join("benches").join("results"),
            format!("{stem}.json"),
            format!("{stem}.svg"),
        )
    } else {
        (work.clone(), format!("{stem}.json"), format!("{stem}.svg"))
    };
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| die(&format!("{}: {e}", dir.display())));
    let md = markdown(&report, &results, &json_name, &svg_name);
    let text = serde_json::to_string_pretty(&report).expect("json") + "\n";
    std::fs::write(dir.join(&json_name), text).expect("write json");
    std::fs::write(dir.join(&svg_name), svg(&results, &report)).expect("write svg");
    // Beside the JSON and SVG, links are relative to benches/results/.
    std::fs::write(
        dir.join(format!("{stem}.md")),
        md.replace("](benches/results/", "]("),
    )
    .expect("write md");
    if o.save {
        update_benchmarks_md(&md);
    }
    println!("{md}");
    eprintln!(
        "wrote {} ({}, {}, {stem}.md){}",
        dir.display(),
        json_name,
        svg_name,
        if o.save {
            "; BENCHMARKS.md results section updated"
        } else {
            ""
        }
    );
}

fn measure_reload(server: &Server, addr: &str) -> Value {
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

// ---------------------------------------------------------------------------
// Markdown, BENCHMARKS.md, SVG

fn ms(us: f64) -> String {
    if us >= 100_000.0 {
        format!("{:.0}", us / 1000.0)
    } else if us >= 10_000.0 {
        format!("{:.1}", us / 1000.0)
    } else {
        format!("{:.2}", us / 1000.0)
    }
}

fn mib(b: u64) -> String {
    format!("{:.0} MiB", b as f64 / 1048576.0)
}

fn mark(p: Option<bool>) -> &'static str {
    match p {
        Some(true) => "pass",
        Some(false) => "**FAIL**",
        None => "-",
    }
}

fn markdown(r: &Value, results: &[ScenarioResult], json_name: &str, svg_name: &str) -> String {
    let mut m = String::new();
    let c = &r["config"];
    let l = &r["load"];
    let _ = writeln!(
        m,
        "Run of {} on {} ({} cores, {} GiB; {}), commit `{}`{}.\n",
        r["date"].as_str().unwrap_or(""),
        r["machine"]["cpu_model"].as_str().unwrap_or("?"),
        r["machine"]["cpus"],
        r["machine"]["mem_total_bytes"].as_u64().unwrap_or(0) >> 30,
        r["machine"]["kernel"].as_str().unwrap_or(""),
        &r["git"]["commit"].as_str().unwrap_or("")
            [..r["git"]["commit"].as_str().map_or(0, |s| s.len().min(10))],
        if r["git"]["dirty"].as_bool() == Some(true) {
            " + uncommitted changes"
        } else {
            ""
        },
    );
    let _ = writeln!(m, "```sh\n{}\n```\n", r["command"].as_str().unwrap_or(""));
    let t = &r["snapshot"]["tables"];
    let _ = writeln!(
        m,
        "Snapshot `{}`: {} accounts, {} lists, {} list_records, {} list_ops. \
         wrk ({}): {} threads, {} connections, {} request paths per scenario; per scenario \
         {} s warm-up of each server, then {} alternating rounds of {} s on the server and {} s on \
         its static-body baseline (req/s over all rounds, percentiles the median of the rounds), \
         then {} s paced at 50% of the scenario's req/s on the server and as long at the same rate on \
         the baseline (\"at 50%\" columns). \
         Machine-readable: [`{json_name}`](benches/results/{json_name}).\n",
        r["snapshot"]["name"].as_str().unwrap_or(""),
        c["accounts"],
        t["lists"],
        t["list_records"],
        t["list_ops"],
        c["load_generator"].as_str().unwrap_or("wrk"),
        c["wrk_threads"],
        c["connections"],
        c["paths_per_scenario"],
        c["warmup_s"],
        c["rounds"],
        c["duration_s"].as_u64().unwrap_or(0) / c["rounds"].as_u64().unwrap_or(1).max(1),
        c["duration_s"].as_u64().unwrap_or(0) / c["rounds"].as_u64().unwrap_or(1).max(1),
        c["duration_s"],
    );
    if c["targets_apply"].as_bool() != Some(true) {
        let _ = writeln!(
            m,
            "*Not a 1,000,000-account run: pass/fail marks are indicative only.*\n"
        );
    }
    let _ = writeln!(m, "| scenario | req/s | baseline req/s | ratio | p50 ms | p90 ms | p99 ms | p99.9 ms | body B | at 50%: req/s | p50 ms | p99 ms | baseline p99 ms | ratio target | p99 target |");
    let _ = writeln!(
        m,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
    );
    for s in results {
        let _ = writeln!(
            m,
            "| {}{} | {:.0} | {:.0} | **{:.2}** | {} | {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {} |",
            s.name,
            match s.cache_hit_ratio {
                Some(h) if s.cached => format!(" (hits {:.0}%)", h * 100.0),
                _ => String::new(),
            },
            s.main.rps,
            s.baseline.rps,
            s.ratio,
            ms(s.main.p50_us),
            ms(s.main.p90_us),
            ms(s.main.p99_us),
            ms(s.main.p999_us),
            s.mean_body,
            s.paced.rps,
            ms(s.paced.p50_us),
            ms(s.paced.p99_us),
            ms(s.paced_baseline.p99_us),
            match s.min_ratio {
                Some(x) => format!("≥ {x}x: {}", mark(s.ratio_pass())),
                None => "-".into(),
            },
            match s.max_p99_us {
                Some(x) => format!("< {} ms: {}", x / 1000.0, mark(s.p99_pass())),
                None => "-".into(),
            },
        );
    }
    let bad: Vec<String> = results
        .iter()
        .filter(|s| s.main.non_2xx + s.main.errors + s.baseline.errors > 0)
        .map(|s| {
            format!(
                "{}: {} non-2xx, {} socket errors (baseline {})",
                s.name, s.main.non_2xx, s.main.errors, s.baseline.errors
            )
        })
        .collect();
    if !bad.is_empty() {
        let _ = writeln!(m, "\nErrors during the runs: {}.", bad.join("; "));
    }
    let _ = writeln!(
        m,
        "\nLatency percentiles of every scenario (closed loop) beside its baseline: \
         [`{svg_name}`](benches/results/{svg_name})\n\n![latency](benches/results/{svg_name})\n"
    );
    let rl = &l["reload"];
    let _ = writeln!(m, "| load and memory | measured |\n|---|---:|");
    let _ = writeln!(
        m,
        "| load, spawn to `/ready` 200 (wall) | {:.1} s |",
        l["wall_to_ready_s"].as_f64().unwrap_or(0.0)
    );
    let _ = writeln!(
        m,
        "| load, server's `load_duration_ms` | {:.1} s |",
        l["server_load_duration_ms"].as_f64().unwrap_or(0.0) / 1000.0
    );
    let _ = writeln!(
        m,
        "| load per million list_records / per million rows (all tables) | {:.2} s / {:.2} s |",
        l["s_per_million_list_records"].as_f64().unwrap_or(0.0),
        l["s_per_million_rows"].as_f64().unwrap_or(0.0)
    );
    let _ = writeln!(
        m,
        "| RSS after load | {} |",
        mib(l["rss_after_load_bytes"].as_u64().unwrap_or(0))
    );
    let _ = writeln!(
        m,
        "| RSS after load / list_records rows | {:.1} B |",
        l["rss_bytes_per_list_record"].as_f64().unwrap_or(0.0)
    );
    let _ = writeln!(
        m,
        "| RSS after load / (list_records + list_ops rows) | {:.1} B |",
        l["rss_bytes_per_record_and_op"].as_f64().unwrap_or(0.0)
    );
    let _ = writeln!(
        m,
        "| peak RSS during the first load (VmHWM) | {} |",
        mib(l["vmhwm_first_load_bytes"].as_u64().unwrap_or(0))
    );
    if !rl.is_null() {
        let _ = writeln!(
            m,
            "| reload (SIGHUP to new generation live) | {:.1} s |",
            rl["wall_s"].as_f64().unwrap_or(0.0)
        );
        let _ = writeln!(
            m,
            "| peak RSS during the reload | {} ({:.2}x the steady RSS) |",
            mib(rl["peak_rss_bytes"].as_u64().unwrap_or(0)),
            rl["peak_over_steady"].as_f64().unwrap_or(0.0)
        );
        let _ = writeln!(
            m,
            "| RSS after the reload | {} |",
            mib(rl["rss_after_bytes"].as_u64().unwrap_or(0))
        );
    }
    let _ = writeln!(
        m,
        "| RSS after all scenarios (response cache filled) | {} |",
        mib(l["rss_after_run_bytes"].as_u64().unwrap_or(0))
    );
    let _ = writeln!(m, "\n| target | measured | result |\n|---|---|---|");
    for t in r["targets"].as_array().into_iter().flatten() {
        let _ = writeln!(
            m,
            "| {} | {} | {} |",
            t["target"].as_str().unwrap_or(""),
            t["measured"].as_str().unwrap_or(""),
            mark(t["pass"].as_bool())
        );
    }
    m
}

const BEGIN: &str = "<!-- BEGIN http-results (written by `cargo bench --bench http`) -->";
const END: &str = "<!-- END http-results -->";

fn update_benchmarks_md(md: &str) {
    let path = Path::new(ROOT).join("BENCHMARKS.md");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let block = format!("{BEGIN}\n{md}{END}");
    let new = match (text.find(BEGIN), text.find(END)) {
        (Some(a), Some(b)) if b > a => format!("{}{}{}", &text[..a], block, &text[b + END.len()..]),
        _ => format!("{text}\n## HTTP results\n\n{block}\n"),
    };
    if let Err(e) = std::fs::write(&path, new) {
        eprintln!("http bench: cannot update {}: {e}", path.display());
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A hand-written SVG: per scenario, the latency percentiles p50-p90-p99-
/// p99.9 of the server (blue) and of its static-body baseline (grey) on a
/// log axis, the 2 ms line, and req/s with the ratio on the right.
fn svg(results: &[ScenarioResult], r: &Value) -> String {
    let (left, right, top, row) = (190.0, 200.0, 70.0, 34.0);
    let plot_w = 560.0;
    let width = left + plot_w + right;
    let height = top + row * results.len() as f64 + 50.0;
    let all: Vec<f64> = results
        .iter()
        .flat_map(|s| {
            [
                s.main.p50_us,
                s.main.p999_us,
                s.baseline.p50_us,
                s.baseline.p999_us,
            ]
        })
        .filter(|v| *v > 0.0)
        .collect();
    let lo = all.iter().cloned().fold(f64::INFINITY, f64::min).max(1.0);
    let hi = all.iter().cloned().fold(0.0, f64::max).max(2000.0);
    let (d0, d1) = (
        lo.log10().floor(),
        hi.log10().ceil().max(lo.log10().floor() + 1.0),
    );
    let x = |us: f64| left + (us.max(1.0).log10() - d0) / (d1 - d0) * plot_w;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="10" y="20" font-size="15" font-weight="bold">followgraph HTTP latency, {} accounts, {} connections (closed loop)</text>"#,
        r["config"]["accounts"], r["config"]["connections"]
    );
    let _ = writeln!(
        s,
        r##"<text x="10" y="38" fill="#555">{} · commit {} · thick bar p50-p90, thin p90-p99, whisker p99-p99.9 (log scale)</text>"##,
        xml(r["date"].as_str().unwrap_or("")),
        xml(&r["git"]["commit"]
            .as_str()
            .unwrap_or("")
            .chars()
            .take(10)
            .collect::<String>())
    );
    let _ = writeln!(
        s,
        r##"<rect x="{left}" y="46" width="12" height="8" fill="#1f77b4"/><text x="{}" y="54">server</text><rect x="{}" y="46" width="12" height="8" fill="#999"/><text x="{}" y="54">static-body baseline (same mean body size)</text>"##,
        left + 16.0,
        left + 70.0,
        left + 86.0
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="54" font-weight="bold">req/s (ratio)</text>"#,
        left + plot_w + 12.0
    );
    // Grid: decades and 1-2-5.
    let mut d = d0 as i32;
    while d as f64 <= d1 {
        for m in [1.0, 2.0, 5.0] {
            let us = m * 10f64.powi(d);
            if us.log10() > d1 + 1e-9 {
                break;
            }
            let gx = x(us);
            let _ = writeln!(
                s,
                r##"<line x1="{gx:.1}" y1="{top}" x2="{gx:.1}" y2="{:.1}" stroke="{}" stroke-width="1"/>"##,
                height - 40.0,
                if m == 1.0 { "#ccc" } else { "#eee" }
            );
            let label = if us >= 1000.0 {
                format!("{} ms", us / 1000.0)
            } else {
                format!("{us} µs")
            };
            let _ = writeln!(
                s,
                r##"<text x="{gx:.1}" y="{:.1}" text-anchor="middle" fill="#555">{label}</text>"##,
                height - 25.0
            );
        }
        d += 1;
    }
    let tx = x(2000.0);
    let _ = writeln!(
        s,
        r##"<line x1="{tx:.1}" y1="{top}" x2="{tx:.1}" y2="{:.1}" stroke="#d62728" stroke-dasharray="4 3"/><text x="{:.1}" y="{:.1}" fill="#d62728">2 ms</text>"##,
        height - 40.0,
        tx + 3.0,
        top - 3.0
    );
    for (i, r) in results.iter().enumerate() {
        let y0 = top + row * i as f64;
        if i % 2 == 1 {
            let _ = writeln!(
                s,
                r##"<rect x="0" y="{y0}" width="{width}" height="{row}" fill="#f6f8fa" fill-opacity="0.6"/>"##
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            left - 8.0,
            y0 + row / 2.0 + 4.0,
            xml(&r.name)
        );
        for (w, color, dy) in [(&r.main, "#1f77b4", 11.0), (&r.baseline, "#999", 24.0)] {
            let y = y0 + dy;
            let (a, b, c, e) = (x(w.p50_us), x(w.p90_us), x(w.p99_us), x(w.p999_us));
            let _ = writeln!(
                s,
                r#"<line x1="{c:.1}" y1="{y:.1}" x2="{e:.1}" y2="{y:.1}" stroke="{color}" stroke-width="1.5"/><line x1="{e:.1}" y1="{:.1}" x2="{e:.1}" y2="{:.1}" stroke="{color}" stroke-width="1.5"/>"#,
                y - 3.0,
                y + 3.0
            );
            let _ = writeln!(
                s,
                r#"<rect x="{b:.1}" y="{:.1}" width="{:.1}" height="4" fill="{color}"/>"#,
                y - 2.0,
                (c - b).max(1.0)
            );
            let _ = writeln!(
                s,
                r#"<rect x="{a:.1}" y="{:.1}" width="{:.1}" height="8" fill="{color}"><title>p50 {} µs, p90 {} µs, p99 {} µs, p99.9 {} µs</title></rect>"#,
                y - 4.0,
                (b - a).max(1.5),
                w.p50_us,
                w.p90_us,
                w.p99_us,
                w.p999_us
            );
        }
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{:.1}">{:.0} <tspan fill="#999">/ {:.0}</tspan> ({:.2}x)</text>"##,
            left + plot_w + 12.0,
            y0 + row / 2.0 + 4.0,
            r.main.rps,
            r.baseline.rps,
            r.ratio
        );
    }
    s.push_str("</svg>\n");
    s
}
