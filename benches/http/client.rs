//! The bench's HTTP client (ureq) for its setup requests:
//! readiness, `/snapshot`, `/metrics`, the subjects and each scenario's
//! body sizes. The load itself is wrk's.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::Value;

use crate::die;

#[path = "../../tests/integration/support/agent.rs"]
mod agent;

pub struct HttpAnswer {
    pub status: u16,
    /// The status line and headers.
    pub head: String,
    pub body: Vec<u8>,
}

impl HttpAnswer {
    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// `GET path` on a connection of its own (`Connection: close`); a
/// scenario's `POST <path> <body>` line is sent as that POST.
pub fn http_get(addr: &str, path: &str) -> Result<HttpAnswer, String> {
    let (method, target, body) = match path
        .strip_prefix("POST ")
        .and_then(|rest| rest.split_once(' '))
    {
        Some((target, body)) => ("POST", target, body.as_bytes().to_vec()),
        None => ("GET", path, Vec::new()),
    };
    let mut request = ureq::http::Request::builder()
        .method(method)
        .uri(format!("http://{addr}{target}"))
        .header("Connection", "close");
    if method == "POST" {
        request = request.header("Content-Type", "application/json");
    }
    let request = request.body(body).map_err(|e| e.to_string())?;
    let mut response = agent::agent(Duration::from_secs(120))
        .run(request)
        .map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let mut head = format!("HTTP/1.1 {}", response.status());
    for (k, v) in response.headers() {
        let _ = write!(head, "\r\n{k}: {}", String::from_utf8_lossy(v.as_bytes()));
    }
    let body = response
        .body_mut()
        .with_config()
        .limit(u64::MAX)
        .read_to_vec()
        .map_err(|e| format!("read: {e}"))?;
    Ok(HttpAnswer { status, head, body })
}

/// The JSON body of a 200 answer; anything else stops the bench.
pub fn get_ok(addr: &str, path: &str) -> Value {
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
pub fn enc(s: &str) -> String {
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
