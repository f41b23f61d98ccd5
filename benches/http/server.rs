//! The followgraph server process under test (or its static-body
//! baseline): start it on port 0 and read the address it announces, wait
//! for `/ready`, read its memory from `/proc`, its counters from
//! `/metrics`, signal it, stop it.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::client::http_get;
use crate::die;

/// A `kB` field (`VmRSS`, `VmHWM`) of `/proc/<pid>/status`.
pub fn proc_status_kib(pid: u32, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find(|l| l.starts_with(key) && l[key.len()..].starts_with(':'))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// Sends `sig` (`TERM`, `HUP`) to `pid`.
pub fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status();
}

/// `serve`'s flags for `root` on a free loopback port, no polling of the
/// root (the harness sends SIGHUP when it wants a reload).
pub fn serve_args(root: &Path) -> Vec<String> {
    vec![
        "--snapshot".into(),
        root.display().to_string(),
        "--listen".into(),
        "127.0.0.1:0".into(),
        "--poll-interval".into(),
        "0".into(),
    ]
}

pub struct Server {
    child: Child,
    pub pid: u32,
    /// `host:port` it listens on.
    pub addr: String,
    spawned: Instant,
}

impl Server {
    /// `binary serve ARGS`, standard error to `log`.
    pub fn start(binary: &Path, args: &[String], log: &Path) -> Server {
        let log_file = std::fs::File::create(log)
            .unwrap_or_else(|e| die(&format!("cannot create {}: {e}", log.display())));
        let spawned = Instant::now();
        let mut child = crate::wrk::raised_open_files(binary)
            .arg("serve")
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file))
            .spawn()
            .unwrap_or_else(|e| die(&format!("cannot start {}: {e}", binary.display())));
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
    pub fn wait_ready(&mut self, timeout: Duration) -> Duration {
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

    /// Resident memory now (VmRSS), bytes.
    pub fn rss(&self) -> u64 {
        proc_status_kib(self.pid, "VmRSS").unwrap_or(0) * 1024
    }

    /// Peak resident memory (VmHWM), bytes.
    pub fn hwm(&self) -> u64 {
        proc_status_kib(self.pid, "VmHWM").unwrap_or(0) * 1024
    }

    /// The sum of a metric's series in `/metrics` (0 when unreachable).
    pub fn metric(&self, name: &str) -> f64 {
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

    /// SIGTERM, then SIGKILL if it has not exited within 10 s.
    pub fn stop(&mut self) {
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
