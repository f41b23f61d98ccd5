//! Test harness: writes a snapshot, runs the real `followgraph` binary on a
//! free port and talks HTTP/1.1 to it over a plain `TcpStream`.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use followgraph::snapshot::{publish, write_snapshot, Tables, WriteOptions};

/// `2026-11-20T12:00:00.000Z` (date -u -d 2026-11-20T12:00:00Z +%s = 1795176000).
pub const CREATED_AT_MS: i64 = 1_795_176_000_000;
pub const CREATED_AT: &str = "2026-11-20T12:00:00.000Z";

/// Writes `tables` as snapshot `name` under `root` and points CURRENT at it.
pub fn write_and_publish(root: &Path, name: &str, created_at_ms: i64, tables: &Tables) {
    write_snapshot(
        &root.join(name),
        created_at_ms,
        tables,
        &WriteOptions::default(),
    )
    .unwrap_or_else(|e| panic!("write_snapshot({name}) failed: {e}"));
    publish(root, name).unwrap_or_else(|e| panic!("publish({name}) failed: {e}"));
}

/// How long `spawn` waits for `GET /ready` to answer 200.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

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
) -> (Option<std::process::ExitStatus>, String, String) {
    let logs = tempfile::tempdir().expect("tempdir");
    let out_path = logs.path().join("stdout.log");
    let err_path = logs.path().join("stderr.log");
    let mut child = followgraph_command(args, envs)
        .stdout(Stdio::from(File::create(&out_path).expect("stdout log")))
        .stderr(Stdio::from(File::create(&err_path).expect("stderr log")))
        .spawn()
        .expect("spawn followgraph");
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (
        status,
        std::fs::read_to_string(&out_path).unwrap_or_default(),
        std::fs::read_to_string(&err_path).unwrap_or_default(),
    )
}

pub struct TestServer {
    child: Child,
    pub port: u16,
    /// Snapshot root (holds CURRENT and the snapshot directories).
    pub root: tempfile::TempDir,
    /// Holds the server's stderr log.
    logs: tempfile::TempDir,
}

impl TestServer {
    /// Serves `tables` with the default `created_at` (CREATED_AT).
    pub fn start(tables: &Tables) -> TestServer {
        Self::start_with(tables, CREATED_AT_MS)
    }

    pub fn start_with(tables: &Tables, created_at_ms: i64) -> TestServer {
        let root = tempfile::tempdir().expect("tempdir");
        write_and_publish(root.path(), "snap-1", created_at_ms, tables);
        let snapshot = root.path().as_os_str().to_owned();
        Self::spawn(
            root,
            &[
                "serve".into(),
                "--snapshot".into(),
                snapshot,
                "--listen".into(),
                "127.0.0.1:0".into(),
            ],
            &[],
        )
    }

    /// Serves `tables` as `<root>/snap-1` (created at CREATED_AT) with
    /// `serve --snapshot <root> --listen 127.0.0.1:0` plus `extra` flags,
    /// and waits until it is ready.
    pub fn start_args(tables: &Tables, extra: &[&str]) -> TestServer {
        let root = tempfile::tempdir().expect("tempdir");
        write_and_publish(root.path(), "snap-1", CREATED_AT_MS, tables);
        let mut args = serve_args(root.path());
        args.extend(extra.iter().map(OsString::from));
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
        let logs = tempfile::tempdir().expect("tempdir");
        let stderr = File::create(logs.path().join("stderr.log")).expect("stderr log");

        let mut child = followgraph_command(args, envs)
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
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.exited() {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server's stderr so far (for diagnostics).
    pub fn stderr_log(&self) -> String {
        std::fs::read_to_string(self.logs.path().join("stderr.log")).unwrap_or_default()
    }

    pub fn get(&self, path_and_query: &str) -> Response {
        self.request("GET", path_and_query, &[])
    }

    pub fn head(&self, path_and_query: &str) -> Response {
        self.request("HEAD", path_and_query, &[])
    }

    pub fn request(&self, method: &str, target: &str, headers: &[(&str, &str)]) -> Response {
        let mut req = format!(
            "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n",
            self.port
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        if matches!(method, "POST" | "PUT" | "PATCH") {
            req.push_str("Content-Length: 0\r\n");
        }
        req.push_str("\r\n");
        self.raw(
            req.as_bytes(),
            method == "HEAD",
            &format!("{method} {target}"),
        )
    }

    /// Sends raw request bytes; `head` says the response has no body.
    pub fn raw(&self, bytes: &[u8], head: bool, label: &str) -> Response {
        self.try_raw(bytes, head, label)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// GET that reports connection failures instead of panicking.
    pub fn try_get(&self, target: &str) -> Result<Response, String> {
        let req = format!(
            "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            self.port
        );
        self.try_raw(req.as_bytes(), false, &format!("GET {target}"))
    }

    pub fn try_raw(&self, bytes: &[u8], head: bool, label: &str) -> Result<Response, String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))
            .map_err(|e| format!("{label}: connect failed: {e}"))?;
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream
            .write_all(bytes)
            .map_err(|e| format!("{label}: write failed: {e}"))?;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(resp) = try_parse(&buf, head, label, false) {
                return Ok(resp);
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{label}: response not complete after 30 s: {:?}",
                    String::from_utf8_lossy(&buf)
                ));
            }
            match stream.read(&mut chunk) {
                Ok(0) => {
                    return try_parse(&buf, head, label, true).ok_or_else(|| {
                        format!(
                            "{label}: connection closed before a complete response: {:?}",
                            String::from_utf8_lossy(&buf)
                        )
                    })
                }
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(format!(
                        "{label}: read failed: {e}; got so far {:?}",
                        String::from_utf8_lossy(&buf)
                    ))
                }
            }
        }
    }

    /// The child's exit status if it has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Clone, Debug)]
pub struct Response {
    /// `METHOD target`, for messages.
    pub request: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// First header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone())
            .unwrap_or_else(|_| panic!("{}: body is not UTF-8: {:?}", self.request, self.body))
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "{}: body is not JSON ({e}): {:?}",
                self.request,
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Parses a complete response from `buf`, or None when more bytes are
/// needed. `eof`: the peer closed, so a body without a length ends here.
pub fn try_parse(buf: &[u8], head: bool, label: &str, eof: bool) -> Option<Response> {
    let end = find(buf, b"\r\n\r\n")?;
    let head_text = std::str::from_utf8(&buf[..end])
        .unwrap_or_else(|_| panic!("{label}: response head is not UTF-8"));
    let mut lines = head_text.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    assert!(
        version.starts_with("HTTP/1."),
        "{label}: bad status line {status_line:?}"
    );
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{label}: bad status line {status_line:?}"));
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (k, v) = l
                .split_once(':')
                .unwrap_or_else(|| panic!("{label}: bad header line {l:?}"));
            (k.trim().to_owned(), v.trim().to_owned())
        })
        .collect();
    let rest = &buf[end + 4..];
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let make = |body: Vec<u8>| Response {
        request: label.to_owned(),
        status,
        headers: headers.clone(),
        body,
    };
    if head || status == 204 || status == 304 || (100..200).contains(&status) {
        if head && !rest.is_empty() {
            panic!(
                "{label}: HEAD response carries body bytes {:?}",
                String::from_utf8_lossy(rest)
            );
        }
        return Some(make(Vec::new()));
    }
    let chunked = get("transfer-encoding")
        .map(|v| v.to_ascii_lowercase().contains("chunked"))
        .unwrap_or(false);
    if chunked {
        let mut body = Vec::new();
        let mut pos = 0usize;
        loop {
            let line_end = pos + find(&rest[pos..], b"\r\n")?;
            let size_text = std::str::from_utf8(&rest[pos..line_end]).unwrap();
            let size_text = size_text.split(';').next().unwrap().trim();
            let size = usize::from_str_radix(size_text, 16)
                .unwrap_or_else(|_| panic!("{label}: bad chunk size {size_text:?}"));
            pos = line_end + 2;
            if size == 0 {
                // Trailers end with an empty line.
                loop {
                    let l_end = pos + find(&rest[pos..], b"\r\n")?;
                    if l_end == pos {
                        return Some(make(body));
                    }
                    pos = l_end + 2;
                }
            }
            if rest.len() < pos + size + 2 {
                return None;
            }
            body.extend_from_slice(&rest[pos..pos + size]);
            pos += size + 2;
        }
    }
    if let Some(len) = get("content-length") {
        let len: usize = len
            .parse()
            .unwrap_or_else(|_| panic!("{label}: bad Content-Length {len:?}"));
        if rest.len() < len {
            return None;
        }
        return Some(make(rest[..len].to_vec()));
    }
    if eof {
        Some(make(rest.to_vec()))
    } else {
        None
    }
}

// ---------------------------------------------------------------- asserts

/// Asserts the status and the exact body text.
#[track_caller]
pub fn assert_text(resp: &Response, status: u16, body: &str) {
    let text = String::from_utf8_lossy(&resp.body);
    assert!(
        resp.status == status && text == body,
        "{}\n  expected: {status} {body}\n  actual:   {} {text}",
        resp.request,
        resp.status
    );
    if !body.is_empty() {
        assert_json_content_type(resp);
    }
}

/// Asserts the status and that the body is exactly the compact
/// serialisation of `expected` (keys in the order written: serde_json is
/// built with `preserve_order`), so key order is checked too.
#[track_caller]
pub fn assert_json(resp: &Response, status: u16, expected: serde_json::Value) {
    let want = expected.to_string();
    let text = String::from_utf8_lossy(&resp.body).into_owned();
    if resp.status == status && text == want {
        assert_json_content_type(resp);
        return;
    }
    let same_value = serde_json::from_str::<serde_json::Value>(&text)
        .map(|v| v == expected)
        .unwrap_or(false);
    panic!(
        "{}\n  expected: {status} {want}\n  actual:   {} {text}{}",
        resp.request,
        resp.status,
        if same_value && resp.status == status {
            "\n  (same JSON value: key order or formatting differs)"
        } else {
            ""
        }
    );
}

#[track_caller]
pub fn assert_json_content_type(resp: &Response) {
    let ct = resp.header("content-type").unwrap_or("");
    assert!(
        ct.starts_with("application/json"),
        "{}: Content-Type is {ct:?}, expected application/json",
        resp.request
    );
}

/// 400 with `{"response":"<text>"}`.
#[track_caller]
pub fn assert_400(resp: &Response, text: &str) {
    assert_json(resp, 400, serde_json::json!({ "response": text }));
}

#[track_caller]
pub fn assert_invalid_list_id(resp: &Response) {
    assert_text(resp, 400, r#"{"response":"Invalid list id"}"#);
}

#[track_caller]
pub fn assert_no_user_found(resp: &Response) {
    assert_text(resp, 404, r#"{"response":"No User Found"}"#);
}

#[track_caller]
pub fn assert_bad_ens(resp: &Response) {
    assert_text(
        resp,
        404,
        r#"{"response":"ENS name not valid or does not exist"}"#,
    );
}

/// 404 `{"error":"<path> is not a valid path"}`.
#[track_caller]
pub fn assert_unknown_path(resp: &Response, decoded_path: &str) {
    assert_json(
        resp,
        404,
        serde_json::json!({ "error": format!("{decoded_path} is not a valid path") }),
    );
}

/// The addresses of a followers / leaderboard / notifications array, in order.
pub fn addresses(value: &serde_json::Value, array: &str) -> Vec<String> {
    value[array]
        .as_array()
        .unwrap_or_else(|| panic!("no array {array:?} in {value}"))
        .iter()
        .map(|e| e["address"].as_str().expect("address").to_owned())
        .collect()
}

// ------------------------------------------------------ keep-alive client

/// One persistent HTTP/1.1 connection (keep-alive), for tests that send
/// many requests: no connection per request, so no ephemeral-port churn.
pub struct Conn {
    port: u16,
    stream: Option<TcpStream>,
    /// How many times the connection was (re)opened.
    pub connects: u64,
}

impl Conn {
    pub fn new(port: u16) -> Conn {
        Conn {
            port,
            stream: None,
            connects: 0,
        }
    }

    fn connect(&mut self) -> Result<&mut TcpStream, String> {
        if self.stream.is_none() {
            let stream = TcpStream::connect(("127.0.0.1", self.port))
                .map_err(|e| format!("connect failed: {e}"))?;
            stream
                .set_read_timeout(Some(Duration::from_secs(30)))
                .unwrap();
            let _ = stream.set_nodelay(true);
            self.connects += 1;
            self.stream = Some(stream);
        }
        Ok(self.stream.as_mut().unwrap())
    }

    /// GET `target` on the connection. A connection the server closed
    /// before sending any byte of the response (an idle keep-alive
    /// connection it dropped) is reopened once and the request resent.
    pub fn get(&mut self, target: &str) -> Result<Response, String> {
        let label = format!("GET {target}");
        let req = format!(
            "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
            self.port
        );
        for attempt in 0..2 {
            let reused = self.stream.is_some();
            let stream = self.connect().map_err(|e| format!("{label}: {e}"))?;
            if let Err(e) = stream.write_all(req.as_bytes()) {
                self.stream = None;
                if reused && attempt == 0 {
                    continue;
                }
                return Err(format!("{label}: write failed: {e}"));
            }
            let mut buf = Vec::new();
            let mut chunk = [0u8; 16 * 1024];
            let resp = loop {
                if let Some(resp) = try_parse(&buf, false, &label, false) {
                    break Ok(resp);
                }
                match stream.read(&mut chunk) {
                    Ok(0) if buf.is_empty() => break Err(None),
                    Ok(0) => {
                        break try_parse(&buf, false, &label, true).ok_or_else(|| {
                            Some(format!(
                                "{label}: connection closed inside a response: {:?}",
                                String::from_utf8_lossy(&buf)
                            ))
                        })
                    }
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) if buf.is_empty() && e.kind() == std::io::ErrorKind::ConnectionReset => {
                        break Err(None)
                    }
                    Err(e) => {
                        break Err(Some(format!(
                            "{label}: read failed: {e}; got so far {:?}",
                            String::from_utf8_lossy(&buf)
                        )))
                    }
                }
            };
            match resp {
                Ok(resp) => {
                    let close = resp
                        .header("connection")
                        .is_some_and(|v| v.eq_ignore_ascii_case("close"));
                    if close {
                        self.stream = None;
                    }
                    return Ok(resp);
                }
                Err(None) if reused && attempt == 0 => {
                    self.stream = None;
                }
                Err(None) => {
                    self.stream = None;
                    return Err(format!(
                        "{label}: connection closed before any response byte"
                    ));
                }
                Err(Some(e)) => {
                    self.stream = None;
                    return Err(e);
                }
            }
        }
        unreachable!()
    }
}

// ------------------------------------------------------------- /metrics

/// One sample line of the Prometheus text format.
#[derive(Clone, Debug)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

/// The samples of a Prometheus text exposition (comments skipped).
/// Panics on a line that is not `name[{labels}] value [timestamp]`.
pub fn parse_metrics(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name_end = line
            .find(|c: char| c == '{' || c.is_ascii_whitespace())
            .unwrap_or_else(|| bad_metrics_line(line));
        let name = line[..name_end].to_owned();
        let mut rest = &line[name_end..];
        let mut labels = Vec::new();
        if let Some(r) = rest.strip_prefix('{') {
            let mut r = r;
            loop {
                r = r.trim_start_matches([',', ' ']);
                if let Some(after) = r.strip_prefix('}') {
                    r = after;
                    break;
                }
                let eq = r.find('=').unwrap_or_else(|| bad_metrics_line(line));
                let key = r[..eq].trim().to_owned();
                let v = r[eq + 1..]
                    .strip_prefix('"')
                    .unwrap_or_else(|| bad_metrics_line(line));
                let mut value = String::new();
                let mut chars = v.char_indices();
                let end = loop {
                    match chars.next() {
                        Some((i, '"')) => break i,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, 'n')) => value.push('\n'),
                            Some((_, c)) => value.push(c),
                            None => bad_metrics_line(line),
                        },
                        Some((_, c)) => value.push(c),
                        None => bad_metrics_line(line),
                    }
                };
                labels.push((key, value));
                r = &v[end + 1..];
            }
            rest = r;
        }
        let value_text = rest
            .split_whitespace()
            .next()
            .unwrap_or_else(|| bad_metrics_line(line));
        let value = match value_text {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            "NaN" => f64::NAN,
            v => v.parse().unwrap_or_else(|_| bad_metrics_line(line)),
        };
        out.push(Sample {
            name,
            labels,
            value,
        });
    }
    out
}

fn bad_metrics_line(line: &str) -> ! {
    panic!("bad metrics line {line:?}")
}

/// The value of the sample `name` whose label set is exactly `labels`
/// (in any order).
pub fn metric(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|s| {
            s.name == name
                && s.labels.len() == labels.len()
                && labels
                    .iter()
                    .all(|(k, v)| s.labels.iter().any(|(sk, sv)| sk == k && sv == v))
        })
        .map(|s| s.value)
}

/// SplitMix64: deterministic, no crates (request draws of the hostile and
/// round-trip tests).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform-ish in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub fn pick<'a, T: ?Sized>(&mut self, items: &[&'a T]) -> &'a T {
        items[self.below(items.len())]
    }

    pub fn pick_item<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}
