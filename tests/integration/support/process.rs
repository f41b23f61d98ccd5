//! Running the `followgraph` binary: its command line for `serve`, a
//! command with a clean environment, and waiting for a process to exit.

use std::ffi::OsString;
use std::fs::File;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// `serve --snapshot <snapshot> --listen 127.0.0.1:0`.
pub fn serve_args(snapshot: &Path) -> Vec<OsString> {
    vec![
        "serve".into(),
        "--snapshot".into(),
        snapshot.as_os_str().to_owned(),
        "--listen".into(),
        "127.0.0.1:0".into(),
    ]
}

/// `serve_args(snapshot)` followed by the `extra` flags.
pub fn serve_args_with(snapshot: &Path, extra: &[&str]) -> Vec<OsString> {
    let mut args = serve_args(snapshot);
    args.extend(extra.iter().map(OsString::from));
    args
}

/// The binary with `args` and `envs`, stdin closed, and none of this
/// process's `FOLLOWGRAPH_*` variables (they would change its config).
pub fn followgraph_command(args: &[OsString], envs: &[(&str, OsString)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_followgraph"));
    cmd.args(args).stdin(Stdio::null());
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("FOLLOWGRAPH_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("NO_COLOR", "1");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd
}

/// Runs the binary with `args` (inherited `FOLLOWGRAPH_*` variables
/// removed) until it exits or `timeout` passes (then it is killed and the
/// status is None). Returns the status, stdout and stderr.
pub fn run_to_exit(
    args: &[OsString],
    envs: &[(&str, OsString)],
    timeout: Duration,
) -> (Option<ExitStatus>, String, String) {
    let logs = tempfile::tempdir().expect("tempdir");
    let out_path = logs.path().join("stdout.log");
    let err_path = logs.path().join("stderr.log");
    let mut child = followgraph_command(args, envs)
        .stdout(Stdio::from(File::create(&out_path).expect("stdout log")))
        .stderr(Stdio::from(File::create(&err_path).expect("stderr log")))
        .spawn()
        .expect("spawn followgraph");
    let status = wait_for_exit(&mut child, timeout);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    (
        status,
        std::fs::read_to_string(&out_path).unwrap_or_default(),
        std::fs::read_to_string(&err_path).unwrap_or_default(),
    )
}

/// Polls `child` every 50 ms until it exits (its status) or `timeout`
/// passes (None; the child is left running).
pub fn wait_for_exit(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
