//! `TestServer`: the real `followgraph serve` on a free port, started on a
//! snapshot written for the test, waited for until it is ready, signalled,
//! and killed when dropped. Its requests are in `http.rs`.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use followgraph::snapshot::Tables;

use super::http::Requests;
use super::process::{followgraph_command, serve_args_with, wait_for_exit};
use super::snapshots::{write_and_publish, CREATED_AT_MS};

/// How long `spawn` waits for `GET /ready` to answer 200.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct TestServer {
    child: Child,
    pub port: u16,
    /// Snapshot root (holds CURRENT and the snapshot directories).
    pub root: tempfile::TempDir,
    /// Holds the server's stderr log.
    logs: tempfile::TempDir,
}

impl TestServer {
    /// Serves `tables` as `<root>/snap-1` (created at CREATED_AT) with
    /// `serve --snapshot <root> --listen 127.0.0.1:0`, and waits until it
    /// is ready.
    pub fn start(tables: &Tables) -> TestServer {
        Self::start_args(tables, &[])
    }

    /// `start` with the `extra` flags.
    pub fn start_args(tables: &Tables, extra: &[&str]) -> TestServer {
        let root = tempfile::tempdir().expect("tempdir");
        write_and_publish(root.path(), "snap-1", CREATED_AT_MS, tables);
        let args = serve_args_with(root.path(), extra);
        Self::spawn(root, &args, &[])
    }

    /// Runs the binary with `args` and extra environment `envs` (every
    /// inherited `FOLLOWGRAPH_*` variable is removed first); `root` is kept
    /// alive as long as the server. Returns once the server printed its
    /// listening line AND `GET /ready` answers 200 (its first snapshot is
    /// loaded).
    pub fn spawn(
        root: tempfile::TempDir,
        args: &[OsString],
        envs: &[(&str, OsString)],
    ) -> TestServer {
        let mut srv = Self::spawn_unready(root, args, envs);
        srv.wait_ready(READY_TIMEOUT);
        srv
    }

    /// Polls `GET /ready` until it answers 200; panics (with the server's
    /// stderr) when the server exits or `timeout` passes first.
    pub fn wait_ready(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.exited() {
                panic!(
                    "the server exited ({status}) before /ready answered 200; stderr:\n{}",
                    self.stderr_log()
                );
            }
            let last = self.try_get("/ready");
            if let Ok(resp) = &last {
                if resp.status == 200 {
                    return;
                }
            }
            if Instant::now() > deadline {
                panic!(
                    "GET /ready still {:?} after {timeout:?}; server stderr:\n{}",
                    last.map(|r| format!("{} {}", r.status, String::from_utf8_lossy(&r.body))),
                    self.stderr_log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Like `spawn`, but returns as soon as the listening line is printed,
    /// without waiting for the first snapshot to be loaded.
    pub fn spawn_unready(
        root: tempfile::TempDir,
        args: &[OsString],
        envs: &[(&str, OsString)],
    ) -> TestServer {
        Self::spawn_command(root, followgraph_command(args, envs))
    }

    /// [`TestServer::spawn_unready`] of a command of the caller's (the
    /// binary under a wrapper).
    pub fn spawn_command(root: tempfile::TempDir, mut command: Command) -> TestServer {
        let logs = tempfile::tempdir().expect("tempdir");
        let stderr = File::create(logs.path().join("stderr.log")).expect("stderr log");

        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .expect("spawn followgraph");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let res = reader.read_line(&mut line).map(|_| line);
            let _ = tx.send(res);
            // Keep draining so that later output never hits a closed pipe.
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        let line = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(line)) if !line.is_empty() => line,
            other => {
                let _ = child.kill();
                let _ = child.wait();
                let log =
                    std::fs::read_to_string(logs.path().join("stderr.log")).unwrap_or_default();
                panic!("server did not print its listening line ({other:?}); stderr:\n{log}");
            }
        };
        let line = line.trim_end();
        let port = line
            .strip_prefix("listening on http://127.0.0.1:")
            .and_then(|p| p.parse::<u16>().ok())
            .unwrap_or_else(|| {
                let _ = child.kill();
                panic!("unexpected first stdout line {line:?}")
            });
        TestServer {
            child,
            port,
            root,
            logs,
        }
    }

    /// Sends `signal` (e.g. "HUP", "TERM") to the server process.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} failed");
    }

    /// Waits up to `timeout` for the process to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        wait_for_exit(&mut self.child, timeout)
    }

    /// The server's stderr so far (for diagnostics).
    pub fn stderr_log(&self) -> String {
        std::fs::read_to_string(self.logs.path().join("stderr.log")).unwrap_or_default()
    }

    /// The temporary directory the server was given.
    pub fn root(&self) -> &std::path::Path {
        self.root.path()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The child's exit status if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
