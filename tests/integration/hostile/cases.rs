//! One random request of the sweep (`Case`): its raw bytes, drawn from
//! the vocabulary, and what it may be answered with (`Expect`).

use crate::fixtures::*;
use crate::support::*;

use super::vocabulary::{
    ACCOUNTS, ENDPOINT_SHAPES, METHODS, NUMBERS, ODD_HEADERS, PARAM_NAMES, SEGMENTS, TOKEN_IDS,
    WORDS,
};

/// What a case may be answered with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Expect {
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

pub(super) struct Case {
    pub(super) method: String,
    pub(super) bytes: Vec<u8>,
    pub(super) expect: Expect,
    /// Short description for failure messages.
    pub(super) label: String,
    /// `/metrics` answers Prometheus text, not JSON.
    pub(super) plain_text_ok: bool,
}

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

/// Builds one random case.
pub(super) fn random_case(rng: &mut Rng, port: u16) -> Case {
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
