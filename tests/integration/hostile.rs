//! Hostile clients: a seeded random sweep of malicious and malformed
//! requests against a live server (never a 5xx; every well-formed request
//! answered 2xx/4xx with a JSON body), and regression tests for inputs the
//! fuzzers (fuzz/, see FUZZING.md) found or that stress the same code.
//!
//! `hostile_sweep_short` runs in `cargo test` (~2,500 requests, a few
//! seconds). The long sweep is `#[ignore]`d:
//! `cargo test --test integration hostile_sweep_long -- --ignored --nocapture`
//! (`HOSTILE_REQUESTS` and `HOSTILE_SEED` override count and seed).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use followgraph::api::{parse, route};
use followgraph::snapshot::Op;

use crate::fixtures::*;
use crate::support::*;

// ------------------------------------------------------------ the cases

/// What a case may be answered with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// A well-formed request: 2xx/4xx with an `application/json` body (204
    /// without a body for OPTIONS; HEAD without a body but with the JSON
    /// content type).
    Json,
    /// A request line or head over the server's limits: 414 JSON, or any
    /// 4xx (414/431) from hyper, or the connection closed. A 2xx/4xx JSON
    /// answer (the request was within the limits after all) is counted and
    /// reported, not a failure.
    Oversized,
    /// Not valid HTTP/1.1 (raw bytes in the target, bad header syntax):
    /// any 4xx or the connection closed; a JSON answer (hyper was lenient)
    /// is counted and reported, not a failure.
    Malformed,
}

struct Case {
    method: String,
    bytes: Vec<u8>,
    expect: Expect,
    /// Short description for failure messages.
    label: String,
    /// `/metrics` answers Prometheus text, not JSON.
    plain_text_ok: bool,
}

const METHODS: [&str; 20] = [
    "GET", "GET", "GET", "GET", "GET", "GET", "HEAD", "HEAD", "OPTIONS", "POST", "PUT", "DELETE",
    "PATCH", "PROPFIND", "TRACE", "get", "Get", "FOO", "M-SEARCH", "MKCOL",
];

const ENDPOINT_SHAPES: [(&str, &str); 7] = [
    ("lists", "details"),
    ("users", "badges"),
    ("lists", "badges"),
    ("leaderboard", "search"),
    ("users", "notifications"),
    ("users", "followers"),
    ("lists", "followers"),
];

const TOKEN_IDS: [&str; 24] = [
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "99",
    "0",
    "007",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999999",
    "-1",
    "+1",
    "1.5",
    "1e3",
    "abc",
    "%31",
    "1%00",
    "%FF",
    "%D9%A1",
    "0x1",
    "%20%31",
];

const ACCOUNTS: [&str; 26] = [
    A,
    B,
    C,
    D,
    E,
    F,
    G,
    H,
    "0x1111111111111111111111111111111111111111",
    "0xAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    "0X1111111111111111111111111111111111111111",
    "0x11111111111111111111111111111111111111111",
    "0x111111111111111111111111111111111111111",
    "0x123",
    "0x",
    "alice.eth",
    "ALICE.ETH",
    "Alice.eth",
    "nobody.eth",
    "%C4%B0",
    "%E1%BA%9E",
    "%F0%9F%92%A9.eth",
    "%FF%FE",
    "%C3%28",
    "%ED%A0%80",
    "%00",
];

const NUMBERS: [&str; 30] = [
    "",
    "0",
    "1",
    "10",
    "999",
    "1000",
    "1001",
    "-1",
    "-0",
    "+1",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "9223372036854775807",
    "9223372036854775808",
    "00000000000000000000000000000000000000000000000001",
    "1e3",
    "0x10",
    "1.0",
    "%201",
    "1%20",
    "1+",
    "%31",
    "%FF",
    "%D9%A1",
    "%EF%BC%91",
    "NaN",
    "inf",
    "1%00",
    "%",
];

const PARAM_NAMES: [&str; 16] = [
    "limit", "offset", "start", "opcode", "interval", "tag", "tags", "sort", "term", "cache",
    "LIMIT", "limit%00", "li%6Dit", "", "=", "%FF",
];

const WORDS: [&str; 34] = [
    "",
    "hour",
    "day",
    "week",
    "month",
    "all",
    "ALL",
    "HoUr",
    "latest",
    "earliest",
    "followers",
    "FOLLOWERS",
    "fresh",
    "FRESH",
    "top8",
    "block",
    "mute",
    "a,b,,c",
    ",,,",
    "+top8+,+block+",
    "%2C%2C",
    "0x",
    "alice",
    "%FF",
    "%C3%28",
    "%E2%82",
    "%",
    "%%",
    "%2",
    "%zz",
    "+",
    "%2B",
    "&&&",
    "==",
];

const SEGMENTS: [&str; 28] = [
    "api",
    "v1",
    "v2",
    "lists",
    "users",
    "leaderboard",
    "search",
    "details",
    "badges",
    "followers",
    "notifications",
    "snapshot",
    "health",
    "",
    ".",
    "..",
    "%2E%2E",
    "%2F",
    "a%2Fb",
    "%FF",
    "%",
    "%F",
    "%C3",
    "%00",
    "%20",
    "~",
    "*",
    "1",
];

/// Characters that are safe raw in a request target (RFC 3986 unreserved,
/// sub-delims, `:`, `@`, `/`, `%` deliberately left unvalidated).
const SAFE_RAW: &[u8] =
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$'()*+,;=:@/%";

fn percent_encode_all(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("%{b:02X}")).collect()
}

/// Random bytes made fit for a target: raw where safe, else encoded.
fn random_segment(rng: &mut Rng, max_len: usize) -> String {
    let len = rng.below(max_len + 1);
    let mut out = String::new();
    for _ in 0..len {
        let b = (rng.next() & 0xff) as u8;
        if rng.chance(50) && SAFE_RAW.contains(&b) && b != b'/' && b != b'?' {
            out.push(b as char);
        } else if rng.chance(5) {
            // A truncated or invalid escape.
            out.push_str(rng.pick(&["%", "%F", "%G1", "%%"]));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn random_number(rng: &mut Rng) -> String {
    if rng.chance(20) {
        (rng.next() >> rng.below(64)).to_string()
    } else if rng.chance(10) {
        "9".repeat(1 + rng.below(60))
    } else {
        rng.pick(&NUMBERS).to_owned()
    }
}

fn random_value(rng: &mut Rng, name: &str) -> String {
    match name {
        "limit" | "offset" | "start" | "opcode" => random_number(rng),
        _ if rng.chance(60) => rng.pick(&WORDS).to_owned(),
        "tags" if rng.chance(50) => {
            let n = rng.below(40);
            (0..n)
                .map(|_| rng.pick(&["top8", "block", "mute", "x", " ", "%FF", "é"]))
                .collect::<Vec<_>>()
                .join(",")
        }
        _ => random_segment(rng, 24),
    }
}

fn random_query(rng: &mut Rng) -> String {
    let n = rng.below(8);
    let mut pairs = Vec::with_capacity(n);
    for _ in 0..n {
        let name = rng.pick(&PARAM_NAMES).to_owned();
        let pair = match rng.below(10) {
            0 => name,               // `?limit` without `=`
            1 => format!("{name}="), // empty value
            2 => random_segment(rng, 12),
            _ => {
                let value = random_value(rng, &name);
                format!("{name}={value}")
            }
        };
        // Repeated parameters.
        let copies = if rng.chance(10) { 2 + rng.below(5) } else { 1 };
        for _ in 0..copies {
            pairs.push(pair.clone());
        }
    }
    let sep = if rng.chance(10) { "&&" } else { "&" };
    pairs.join(sep)
}

fn random_path(rng: &mut Rng) -> String {
    match rng.below(10) {
        // A known endpoint's shape with a hostile parameter.
        0..=5 => {
            let (kind, tail) = ENDPOINT_SHAPES[rng.below(ENDPOINT_SHAPES.len())];
            let param = match kind {
                "leaderboard" => return "/api/v1/leaderboard/search".to_owned(),
                "lists" if rng.chance(80) => rng.pick(&TOKEN_IDS).to_owned(),
                "users" if rng.chance(80) => rng.pick(&ACCOUNTS).to_owned(),
                _ => random_segment(rng, 40),
            };
            format!("/api/v1/{kind}/{param}/{tail}")
        }
        // Random segments from the vocabulary and random bytes.
        6..=8 => {
            let n = rng.below(7);
            let mut path = String::new();
            if rng.chance(70) {
                path.push_str("/api/v1");
            }
            for _ in 0..n {
                path.push('/');
                if rng.chance(70) {
                    path.push_str(rng.pick(&SEGMENTS));
                } else {
                    path.push_str(&random_segment(rng, 30));
                }
            }
            if path.is_empty() || rng.chance(10) {
                path.push('/');
            }
            path
        }
        // Operations endpoints and odd roots.
        _ => rng
            .pick(&[
                "/",
                "/health",
                "/ready",
                "/metrics",
                "/snapshot",
                "/debug/panic",
                "//",
                "/api/v1/",
                "/%2e%2e/%2e%2e/etc/passwd",
                "/api/v1/lists/1/details/..",
                "/api/v1/./lists/1/details",
            ])
            .to_owned(),
    }
}

const ODD_HEADERS: [&str; 22] = [
    "Origin: https://evil.example",
    "Access-Control-Request-Method: DELETE",
    "Access-Control-Request-Headers: x-evil",
    "Accept: text/html",
    "Accept-Encoding: gzip, br, zstd",
    "Range: bytes=0-1",
    "If-None-Match: *",
    "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT",
    "Cookie: a=b; c=d",
    "X-Forwarded-For: 127.0.0.1, ::1",
    "Content-Type: application/json",
    "Content-Length: 0",
    "Transfer-Encoding: chunked",
    "Expect: 100-continue",
    "Upgrade: websocket",
    "Connection: upgrade",
    "Authorization: Bearer x",
    "Cache-Control: no-cache",
    "X-Empty:",
    "X-Spaces:      ",
    "Host: example.org",
    "Accept-Language: \u{e9}",
];

/// Builds one random case.
fn random_case(rng: &mut Rng, port: u16) -> Case {
    let method = rng.pick(&METHODS).to_owned();
    let mut expect = Expect::Json;
    let mut target = random_path(rng);
    let roll = rng.below(100);
    if roll < 75 {
        let q = random_query(rng);
        if !q.is_empty() || rng.chance(20) {
            target.push('?');
            target.push_str(&q);
        }
    } else if roll < 79 {
        // 10,000 tags: over the default URI limit (16 KiB) -> 414 JSON.
        let tags: Vec<String> = (0..10_000).map(|i| format!("t{i}")).collect();
        target = format!(
            "/api/v1/users/{A}/followers?tags={}&limit=1000",
            tags.join(",")
        );
        expect = Expect::Oversized;
    } else if roll < 83 {
        // A 100 KB query string (over the head limit too).
        let big = if rng.chance(50) {
            "a".repeat(100_000)
        } else {
            percent_encode_all(&vec![0xC3; 33_000])
        };
        target = format!("/api/v1/leaderboard/search?term={big}");
        expect = Expect::Oversized;
    } else if roll < 86 {
        // Just under / around the URI limit: JSON either way (200/4xx/414).
        let len = 16_000 + rng.below(800);
        target = format!("/api/v1/leaderboard/search?term={}", "b".repeat(len));
    } else if roll < 88 {
        target = format!("http://127.0.0.1:{port}{target}");
    } else if roll < 90 {
        target = "*".to_owned();
    } else if roll < 95 {
        // Raw bytes that are not allowed in a target.
        let bad = rng.pick(&[
            "\u{e9}", "\"", "<", ">", "{", "}", "|", "\\", "^", "`", "\x7f", "\x01", "#frag",
        ]);
        target.push_str(bad);
        expect = Expect::Malformed;
    } else {
        target = rng
            .pick(&["", "api/v1/lists/1/details", "/a b", "//x//", "/?", "?x=1"])
            .to_owned();
        if !target.starts_with('/') {
            expect = Expect::Malformed;
        }
    }
    let version = match rng.below(20) {
        0 => "HTTP/1.0",
        1 => {
            expect = Expect::Malformed;
            "HTTP/2.0"
        }
        2 => {
            expect = Expect::Malformed;
            "HTTP/9.9"
        }
        _ => "HTTP/1.1",
    };
    if target.is_empty() || target.contains(' ') {
        expect = Expect::Malformed;
    }
    let mut head = format!("{method} {target} {version}\r\n");
    if rng.chance(95) {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    let mut body = String::new();
    let n_headers = if rng.chance(30) { rng.below(6) } else { 0 };
    for _ in 0..n_headers {
        let h = rng.pick(&ODD_HEADERS);
        if h == "Transfer-Encoding: chunked" {
            if body.is_empty() && !head.contains("Content-Length") {
                body = "0\r\n\r\n".to_owned();
            } else {
                continue;
            }
        }
        if h.starts_with("Content-Length") && (!body.is_empty() || head.contains(h)) {
            continue;
        }
        head.push_str(h);
        head.push_str("\r\n");
    }
    match rng.below(100) {
        0..=1 => {
            // Many headers, within hyper's limit of 100.
            for i in 0..50 {
                head.push_str(&format!("X-H{i}: {i}\r\n"));
            }
        }
        2 => {
            // More headers than hyper takes (100): 431.
            for i in 0..200 {
                head.push_str(&format!("X-H{i}: {i}\r\n"));
            }
            if expect == Expect::Json {
                expect = Expect::Oversized;
            }
        }
        3 => {
            // One header over the head limit.
            head.push_str(&format!("X-Big: {}\r\n", "h".repeat(70_000)));
            if expect == Expect::Json {
                expect = Expect::Oversized;
            }
        }
        4 => {
            head.push_str("Bad Header: x\r\n");
            expect = Expect::Malformed;
        }
        5 => {
            head.push_str("NoColon\r\n");
            expect = Expect::Malformed;
        }
        6 => {
            head.push_str("X-Nul: a\0b\r\n");
            expect = Expect::Malformed;
        }
        // A GET with a body (answered; the body is not read).
        7 if body.is_empty() && !head.contains("Content-Length") => {
            head.push_str("Content-Length: 5\r\n");
            body = "hello".to_owned();
        }
        8 => {
            head.push_str("Content-Length: 1\r\nContent-Length: 2\r\n");
            expect = Expect::Malformed;
        }
        _ => {}
    }
    if matches!(method.as_str(), "POST" | "PUT" | "PATCH")
        && body.is_empty()
        && !head.contains("Content-Length")
        && !head.contains("Transfer-Encoding")
    {
        head.push_str("Content-Length: 0\r\n");
    }
    if version == "HTTP/1.0" && head.contains("Transfer-Encoding") {
        // Chunked framing does not exist in HTTP/1.0: hyper answers 400.
        expect = Expect::Malformed;
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    let shown: String = target.chars().take(120).collect();
    let origin = format!("http://127.0.0.1:{port}");
    let path = target.strip_prefix(origin.as_str()).unwrap_or(&target);
    let plain_text_ok = path == "/metrics" || path.starts_with("/metrics?");
    Case {
        label: format!("{method} {shown} {version}"),
        plain_text_ok,
        method,
        bytes,
        expect,
    }
}

// ------------------------------------------------------------- sending

enum Outcome {
    Answer(Response),
    /// The server closed (or reset) the connection without a complete
    /// response.
    Closed(String),
}

/// A client that keeps one keep-alive connection for well-formed cases
/// and uses a fresh connection for every other one.
struct Client {
    port: u16,
    kept: Option<TcpStream>,
    connects: u64,
}

impl Client {
    fn connect(&mut self) -> std::io::Result<TcpStream> {
        let s = TcpStream::connect(("127.0.0.1", self.port))?;
        s.set_read_timeout(Some(Duration::from_secs(15)))?;
        s.set_write_timeout(Some(Duration::from_secs(15)))?;
        let _ = s.set_nodelay(true);
        self.connects += 1;
        Ok(s)
    }

    fn send(&mut self, case: &Case) -> Outcome {
        let head = case.method == "HEAD";
        let keep = case.expect == Expect::Json;
        for attempt in 0..2 {
            let reused = keep && self.kept.is_some();
            let mut stream = match self.kept.take().filter(|_| keep) {
                Some(s) => s,
                None => match self.connect() {
                    Ok(s) => s,
                    Err(e) => return Outcome::Closed(format!("connect failed: {e}")),
                },
            };
            let wrote = stream.write_all(&case.bytes);
            let (buf, outcome) = read_response(&mut stream, head, &case.label);
            match outcome {
                Some(resp) => {
                    let close = resp
                        .header("connection")
                        .is_some_and(|v| v.eq_ignore_ascii_case("close"));
                    if keep && !close && wrote.is_ok() {
                        self.kept = Some(stream);
                    }
                    return Outcome::Answer(resp);
                }
                // A kept connection the server had already closed: retry
                // once on a fresh one.
                None if reused && buf.is_empty() && attempt == 0 => continue,
                None => {
                    return Outcome::Closed(format!(
                        "write: {wrote:?}; got {} bytes: {:?}",
                        buf.len(),
                        String::from_utf8_lossy(&buf[..buf.len().min(200)])
                    ))
                }
            }
        }
        unreachable!()
    }
}

fn read_response(stream: &mut TcpStream, head: bool, label: &str) -> (Vec<u8>, Option<Response>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(resp) = try_parse(&buf, head, label, false) {
            return (buf, Some(resp));
        }
        match stream.read(&mut chunk) {
            Ok(0) => {
                let resp = try_parse(&buf, head, label, true);
                return (buf, resp);
            }
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => {
                let resp = try_parse(&buf, head, label, true);
                return (buf, resp);
            }
        }
    }
}

// ------------------------------------------------------------- checking

#[derive(Default, Debug)]
struct Tally {
    sent: u64,
    json: u64,
    oversized: u64,
    malformed: u64,
    server_errors: u64,
    closed: u64,
    /// Oversized/malformed cases answered without a JSON body.
    non_json_4xx: u64,
    /// Oversized cases answered normally (within the limits after all).
    oversized_answered: u64,
    /// Malformed cases hyper let through (answered normally).
    malformed_answered: u64,
    /// Examples of the two above.
    lenient: Vec<String>,
    statuses: std::collections::BTreeMap<u16, u64>,
    failures: Vec<String>,
}

impl Tally {
    fn fail(&mut self, msg: String) {
        if self.failures.len() < 30 {
            self.failures.push(msg);
        }
    }

    fn fail_case(&mut self, case: &Case, msg: String) {
        let raw = if case.bytes.len() <= 1000 {
            format!("{:?}", String::from_utf8_lossy(&case.bytes))
        } else {
            format!("{} bytes", case.bytes.len())
        };
        self.fail(format!("{msg}\n    request: {raw}"));
    }

    fn check(&mut self, case: &Case, outcome: Outcome) {
        self.sent += 1;
        match case.expect {
            Expect::Json => self.json += 1,
            Expect::Oversized => self.oversized += 1,
            Expect::Malformed => self.malformed += 1,
        }
        let resp = match outcome {
            Outcome::Answer(resp) => resp,
            Outcome::Closed(why) => {
                self.closed += 1;
                if case.expect == Expect::Json {
                    self.fail_case(case, format!("{}: connection closed: {why}", case.label));
                }
                return;
            }
        };
        *self.statuses.entry(resp.status).or_default() += 1;
        if resp.status >= 500 {
            self.server_errors += 1;
            self.fail_case(
                case,
                format!(
                    "{}: {} {}",
                    case.label,
                    resp.status,
                    String::from_utf8_lossy(&resp.body)
                ),
            );
            return;
        }
        let ct = resp.header("content-type").unwrap_or("");
        let is_json_ct = ct.starts_with("application/json");
        match case.expect {
            Expect::Json => {
                if !(200..300).contains(&resp.status) && !(400..500).contains(&resp.status) {
                    self.fail_case(case, format!("{}: status {}", case.label, resp.status));
                } else if resp.status == 204 {
                    if case.method != "OPTIONS" || !resp.body.is_empty() {
                        self.fail_case(case, format!("{}: 204 for {}", case.label, case.method));
                    }
                } else if !is_json_ct && (!case.plain_text_ok || resp.status != 200) {
                    self.fail_case(
                        case,
                        format!(
                            "{}: {} with Content-Type {ct:?}: {:?}",
                            case.label,
                            resp.status,
                            String::from_utf8_lossy(&resp.body[..resp.body.len().min(200)])
                        ),
                    );
                } else if case.method != "HEAD"
                    && !case.plain_text_ok
                    && serde_json::from_slice::<serde_json::Value>(&resp.body).is_err()
                {
                    self.fail_case(
                        case,
                        format!(
                            "{}: {} body is not JSON: {:?}",
                            case.label,
                            resp.status,
                            String::from_utf8_lossy(&resp.body[..resp.body.len().min(200)])
                        ),
                    );
                }
            }
            Expect::Oversized | Expect::Malformed => {
                let limit_status = matches!(resp.status, 400 | 413 | 414 | 431);
                if limit_status && !is_json_ct {
                    self.non_json_4xx += 1;
                } else if !(200..300).contains(&resp.status) && !(400..500).contains(&resp.status) {
                    self.fail_case(
                        case,
                        format!("{} ({:?}): status {}", case.label, case.expect, resp.status),
                    );
                } else if !limit_status || resp.status == 400 && is_json_ct {
                    // Answered as an ordinary request.
                    if case.expect == Expect::Oversized {
                        self.oversized_answered += 1;
                    } else {
                        self.malformed_answered += 1;
                    }
                    if self.lenient.len() < 10 {
                        self.lenient.push(format!(
                            "{} ({:?}, {} bytes): {}",
                            case.label,
                            case.expect,
                            case.bytes.len(),
                            resp.status
                        ));
                    }
                }
            }
        }
    }
}

/// Sends up to `count` random cases (stopping at `budget`) and checks
/// every answer, then that the server is still healthy and answers a
/// normal request as before.
fn sweep(seed: u64, count: u64, budget: Duration) {
    let srv = TestServer::start(&graph());
    let normal = [
        "/api/v1/lists/1/followers",
        "/api/v1/leaderboard/search?term=0x&limit=3",
        "/api/v1/users/alice.eth/badges",
    ];
    let before: Vec<Response> = normal.iter().map(|t| srv.get(t)).collect();
    for resp in &before {
        assert_eq!(resp.status, 200, "{}", resp.request);
    }
    let mut rng = Rng(seed);
    let mut client = Client {
        port: srv.port,
        kept: None,
        connects: 0,
    };
    let mut tally = Tally::default();
    let started = Instant::now();
    while tally.sent < count && started.elapsed() < budget {
        let case = random_case(&mut rng, srv.port);
        let outcome = client.send(&case);
        tally.check(&case, outcome);
    }
    let elapsed = started.elapsed();
    eprintln!(
        "hostile sweep (seed {seed:#x}): {} requests in {elapsed:.1?} over {} connections: \
         {} well-formed, {} oversized, {} malformed; {} 5xx, {} closed without an answer, \
         {} oversized/malformed answered 4xx without JSON, {} oversized and {} malformed \
         answered as ordinary requests {:?}; statuses {:?}",
        tally.sent,
        client.connects,
        tally.json,
        tally.oversized,
        tally.malformed,
        tally.server_errors,
        tally.closed,
        tally.non_json_4xx,
        tally.oversized_answered,
        tally.malformed_answered,
        tally.lenient,
        tally.statuses
    );
    let mut srv = srv;
    assert!(srv.exited().is_none(), "the server exited during the sweep");
    assert_eq!(srv.get("/health").status, 200, "/health after the sweep");
    for (t, was) in normal.iter().zip(&before) {
        let now = srv.get(t);
        assert_eq!(
            (now.status, &now.body),
            (was.status, &was.body),
            "{t} changed after the sweep"
        );
    }
    let log = srv.stderr_log();
    assert!(
        !log.contains("panicked"),
        "the server logged a panic:\n{log}"
    );
    assert!(
        tally.failures.is_empty() && tally.server_errors == 0,
        "{} bad answers (5xx: {}); first ones:\n{}",
        tally.failures.len(),
        tally.server_errors,
        tally.failures.join("\n")
    );
    assert!(
        tally.sent >= count.min(500),
        "only {} requests in {elapsed:?}",
        tally.sent
    );
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

#[test]
fn hostile_sweep_short() {
    sweep(
        env_u64("HOSTILE_SEED").unwrap_or(0x5eed_0001),
        2_500,
        Duration::from_secs(60),
    );
}

#[test]
#[ignore = "long: ~60,000 requests; run with --ignored"]
fn hostile_sweep_long() {
    sweep(
        env_u64("HOSTILE_SEED").unwrap_or(0x5eed_0002),
        env_u64("HOSTILE_REQUESTS").unwrap_or(60_000),
        Duration::from_secs(20 * 60),
    );
}

// ------------------------------------------- huge parameters, raised limits

/// With the URI and head limits raised, the engine itself gets 10,000
/// tags, a 60 KB search term and 5,000 repeated parameters, and answers
/// them normally.
#[test]
fn huge_parameters_reach_the_engine_when_limits_allow() {
    let srv = TestServer::start_args(
        &graph(),
        &[
            "--max-uri-bytes",
            "4194304",
            "--max-header-bytes",
            "4194304",
        ],
    );
    let tags: Vec<String> = (0..10_000).map(|i| format!("t{i}")).collect();
    let mut tags = tags.join(",");
    tags.push_str(",top8");
    let resp = srv.get(&format!("/api/v1/users/{D}/followers?tags={tags}"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_json_content_type(&resp);
    let followers = addresses(&resp.json(), "followers");
    assert_eq!(followers.len(), 3, "{followers:?}");

    // hyper itself refuses request targets over 65,534 bytes (414), so
    // ~60 KB is the most that can reach the engine.
    let resp = srv.get(&format!(
        "/api/v1/leaderboard/search?term={}",
        "a".repeat(60_000)
    ));
    assert_json(
        &resp,
        200,
        serde_json::json!({"last_updated": CREATED_AT, "results": []}),
    );

    let resp = srv.get(&format!(
        "/api/v1/leaderboard/search?term={}",
        "%C3%A9".repeat(10_000)
    ));
    assert_eq!(resp.status, 200, "{}", resp.text());

    let repeated = "limit=1&".repeat(5_000);
    let resp = srv.get(&format!("/api/v1/lists/1/followers?{repeated}limit=x"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(addresses(&resp.json(), "followers").len(), 1);

    let resp = srv.get(&format!("/api/v1/users/{}/badges", "%FF".repeat(20_000)));
    assert_400(&resp, "path is not valid UTF-8");
    assert_eq!(srv.get("/health").status, 200);
}

// ------------------------------------------------- engine-level regressions

/// `route` + `parse` on targets in the spirit of the fuzzer's
/// corpus: truncated escapes at every position, overlong numbers, lone
/// `%` and `+`, names whose lower case is longer than themselves.
#[test]
fn request_parsing_survives_hostile_targets() {
    let paths = [
        "",
        "/",
        "%",
        "/%",
        "/%2",
        "/api/v1/lists/%",
        "/api/v1/lists/1%/details",
        "/api/v1/lists/%3/details",
        "/api/v1/users/%C4%B0%C4%B0/followers",
        "/api/v1/users/%E2%84%AA/badges",
        "api/v1/leaderboard/search",
        "/api/v1/leaderboard/search",
        "/api/v1/users/\u{fffd}/notifications",
    ];
    let queries = [
        "",
        "%",
        "&",
        "=",
        "==&&==",
        "limit",
        "limit=%",
        "limit=%3",
        "limit=%31%30%30%31",
        "limit=18446744073709551616",
        "offset=18446744073709551615",
        "start=18446744073709551615&interval=hour",
        "opcode=18446744073709551615",
        "tags=,,,%2C,+,%FF",
        "term=%C4%B0",
        "sort=%E2%84%AA",
        "interval=%C4%B0",
        "tag=%00",
    ];
    for p in paths {
        let (_, found) = route(p);
        let Some(found) = found else { continue };
        for q in queries {
            for max in [0, 1, 1000, u64::MAX] {
                if let Ok(req) = parse(&found, q, max) {
                    assert_eq!(req.call.endpoint(), found.endpoint);
                }
            }
        }
    }
}

/// `Op::decode` accepts exactly what `encode` reproduces.
#[test]
fn op_decode_round_trips_or_rejects() {
    let mut inputs: Vec<Vec<u8>> = vec![vec![], vec![1], vec![1; 23], vec![1; 24], vec![1; 25]];
    for opcode in 0..=5u8 {
        for extra in [&b""[..], b"x", b"\xff", b"\xc3", b"\xc3\xa9", b"\0"] {
            let mut v = vec![1, opcode, 1, 1];
            v.extend_from_slice(&[0xab; 20]);
            v.extend_from_slice(extra);
            inputs.push(v);
        }
    }
    for input in inputs {
        if let Ok(op) = Op::decode(&input) {
            assert_eq!(op.encode(), input, "{op:?}");
        }
    }
}

/// fuzz/snapshot_table crash (minimized), the `list_ops` file: a data page
/// that is dictionary-encoded in a column chunk without a dictionary page.
/// parquet 60 panicked on it ("Decoder for dict should have been set").
const DICT_PAGE_WITHOUT_DICTIONARY: &str = concat!(
    "1502160a160101868216265c26081c36002808630000000000000018080100000000000000111100192c150415001502",
    "00150015101502000016e0051514169e03153e0030001c150c1935000610191807616464726573731502160a16dc0216",
    "840126e001268a011c3600282a3078303330333033303330333033303330333033303330333033303330333033303330",
    "33303330333033182a30783016980104504152311504151015144c15021500120000081c010000000000000015001504",
    "15082c15021510150615060000020400021504151015144c15021500120000081c01000000000000001500150415082c",
    "150215101506150600000204000215041538151c4c1502150012030000191c16a206152a1600191c16c00d152a160000",
    "19163000191c169a0e152a160000001502195c480c6172726f775f736368656d61150800150425001808746f6b656e5f",
    "6964251c4cac134012000000150425001803736571251c4cac134012000000150c250018026f700015042500180a7570",
    "64617465645f617425124c8c111c1c0000000000160a195c194c26001c15041935000610191808746f6b656e5f696415",
    "0216021652165a263826081c36002808010000000000000018080100000000000000111100192c150415001502001500",
    "15101502000016fc1a151416c40e153e0026001c15041935000610191803736571150216021652165a26920126621c36",
    "002808010000000000000018080100000000000000111100192c15041500150200150015101502000016901b15161682",
    "0f153e0026001c150c19350006101918026f7015021602167a166226f40126bc011c3600281801010101020202020202",
    "02020202020202020202020202021818010101010202020202020202020202020202020202020202111100192c150415",
    "00150200150015101502003c1630000016a61b151c16c00f157e0026001c1504193500061019180a757064617465645f",
    "6174150216021652165a26ce02269e021c18080018538892010000180800185388920100001600280800185388920100",
    "0018080018538892010000111100192c15041500150200150015101502000016c21b151616be10153e0016f002160226",
    "0816f002140000194c26001c15041935000610191808746f6b656e5f6964150216021652165a26a80326f8021c360028",
    "08010000000000000018080100000000000000111100192c15041500150200150015101502000016d81b151616fc1015",
    "3e0026001c15041935000610191803736571150216021652165a26820426d2031c360028080200000000000000180802",
    "00000000000000111100192c15041500150200150015101502000016ee1b151616ba11153e0026001c150c1935000610",
    "1918026f7015021602168201166c26ee0426ac041c3600281c0102010102020202020202020202020202020202020202",
    "02746f7038181c010301010202020202020202020202020202020202020202746f7038111100192c1504150015020015",
    "0015101502003c1638000016841c151c16f811158e010026001c1504193500061019180a757064617465645f61741502",
    "16021652165a26c8052698051c1808011853889201000018080118538892010000160028080118538892010000180801",
    "18538892010000111100192c15041500150200150015101502000016a01c1516168613153e0016f802160226f80216fa",
    "02140200194c26001c15041935000610191808746f6b656e5f6964150216021652165a26a20626f2051c360028080200",
    "00000000000018080200000000000000111100192c15041500150200150015101502000016b61c151616c413153e0026",
    "001c15041935000610191803736571150216021652165a26fc0626cc061c360028080300000000000000180803000000",
    "00000000111100192c15041500150200150015101502000016cc1c1516168214153e0026001c150c1935000610191802",
    "6f7015021602167a165a26d60726a6071c36002818010101010101010101010101010101010101010101010101181801",
    "0101010101010101010101010101010101010101010101111100192c15041500150200150015101502003c1630000016",
    "e21c151c16c014157e0026001c1504193500061019180a757064617465645f6174150216021652165a26b0082680081c",
    "180802185388920100001808021853889201000016002808021853889201000018080218538892010000111100192c15",
    "041500150200150015101502000016fe1c151616be15153e0016f002160226f20516e802140400194c26001c15041935",
    "000610191808746f6b656e5f6964150216021652165a268a0926da081c36002808010000000000000018080100000000",
    "000000111100192c15041500150200150015101502000016941d151616fc15153e0026001c1504193500061019180373",
    "6571150216021652165a26e40926b4091c36002808040000000000000018080400000000000000111100192c15041500",
    "150200150015101502000016aa1d151616ba16153e0026001c150c19350006101918026f7015021602168201166c26d0",
    "0a268e0a1c3600281c010401010202020202020202020202020202020202020202746f7038181c010401010202020202",
    "020202020202020202020202020202746f7038111100192c15041500150200150015101502003c1638000016c01d151c",
    "16f816158e010026001c1504193500061019180a757064617465645f6174150216021652165a26aa0b26fa0a1c180803",
    "185388920100001808031853889201000016002808031853889201000018080318538892010000111100192c15041500",
    "150200150015101502000016dc1d1516168618153e0016f802160226da0816fa02140600194c26001c15041935000610",
    "191808746f6b656e5f6964150216021652165a26840c26d40b1c36002808010000000000000018080100000000000000",
    "111100192c15041500150200150015101502000016f21d151616c418153e0026001c1504193500061019180373657115",
    "0216021652165a26de0c26ae0c1c36002808050000000000000018080500000000000000111100192c15041500150200",
    "150015101502000016881e1516168219153e0026001c150c19350006101918026f7015021602167a166226c00d26880d",
    "1c3600281801020101030303030303030303030303030303030303030318180102010103030303030303030303030303",
    "03030303030303111100192c15041500150200150015101502003c16300000169e1e151c16c019157e0026001c150419",
    "3500061019180a757064617465645f6174150216021652165a269a0e26ea0d1c18080418538892010000180804185388",
    "9201000016002808041853889201000018080418538892010000111100192c15041500150200150015101502000016ba",
    "1e151616be1a153e0016f002160226d40b16f002140800191c180c4152524f573a736368656d61189c032f2f2f2f2f79",
    "774241414151414141414141414b414177414367414a4141514143674141414241414141414141515141434141494141",
    "4141424141494141414142414141414151414141444541414141694141414145774141414145414141416c502f2f2f78",
    "77414141414d41414141414141414369514141414141414141414341414d41416f414241414941414141434141414141",
    "414141514144414141415656524441416f4141414231634752686447566b58324630414144592f2f2f2f474141414141",
    "774141414141414141454541414141414141414141454141514142414141414149414141427663414141454141554142",
    "41414141415041415141414141494142414141414151414141414641414141414141414149514141414178762f2f2f30",
    "414141414141414141414177414141484e6c635141514142594145414141414138414241414141416741454141414142",
    "674141414163414141414141414141686741414141414141594143414145414159414141424141414141414141414141",
    "6741414142306232746c626c39705a4141414141413d001819706172717565742d72732076657273696f6e2036302e31",
    "2e30194c1c00001c00001c00001c000000820a000050415231",
);

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Writes the `graph()` snapshot, replaces `table`'s file with `bytes`
/// and fixes the manifest up as the fuzz target does (no sha256; `rows` as
/// the file's own footer says), then loads it.
fn load_with_table_file(
    table: &str,
    bytes: &[u8],
) -> Result<followgraph::snapshot::LoadedSnapshot, followgraph::snapshot::SnapshotError> {
    use followgraph::snapshot::{read_snapshot, write_snapshot, Manifest, WriteOptions};
    let dir = tempfile::tempdir().expect("tempdir");
    write_snapshot(
        dir.path(),
        CREATED_AT_MS,
        &graph(),
        &WriteOptions::default(),
    )
    .expect("write snapshot");
    let manifest_path = dir.path().join("manifest.json");
    let mut manifest: Manifest =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    let rows = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&bytes::Bytes::copy_from_slice(bytes))
        .map(|m| m.file_metadata().num_rows() as u64)
        .unwrap_or(0);
    let entry = manifest.tables.get_mut(table).expect("table entry");
    entry.sha256 = None;
    entry.rows = rows;
    std::fs::write(dir.path().join(&entry.file), bytes).unwrap();
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    read_snapshot(dir.path())
}

/// Regression (fuzz/snapshot_table): the panic inside parquet is an
/// ordinary "unreadable file" rejection, not a crash of the loader.
#[test]
fn a_file_that_makes_parquet_panic_is_rejected_not_a_crash() {
    let bytes = unhex(DICT_PAGE_WITHOUT_DICTIONARY);
    let err = load_with_table_file("list_ops", &bytes).expect_err("the snapshot must be rejected");
    assert_eq!(err.file, "list_ops.parquet", "{err}");
    assert!(
        err.reason.starts_with("not a readable Parquet file"),
        "{err}"
    );
}
