//! The tests' requests (`Requests`): to a `TestServer` through ureq (the
//! benches' client too), and, where the bytes on the wire are the point
//! (hostile requests, limits, one keep-alive connection), over a plain
//! `TcpStream` (`Conn`) with its response parser.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use super::server::TestServer;

/// The requests a test sends, to a process (`TestServer`) or in process
/// (`TestService`): each implements `send`.
pub trait Requests {
    /// One request; `Err` when it got no answer (a process that is gone).
    fn send(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<Response, String>;

    fn get(&self, path_and_query: &str) -> Response {
        self.request("GET", path_and_query, &[])
    }

    fn head(&self, path_and_query: &str) -> Response {
        self.request("HEAD", path_and_query, &[])
    }

    fn request(&self, method: &str, target: &str, headers: &[(&str, &str)]) -> Response {
        self.send(method, target, headers, Vec::new())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// POST with `body` (and a JSON content type).
    fn post(&self, target: &str, body: &[u8]) -> Response {
        let json = [("Content-Type", "application/json")];
        self.send("POST", target, &json, body.to_vec())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// GET that reports a missing answer instead of panicking.
    fn try_get(&self, target: &str) -> Result<Response, String> {
        self.send("GET", target, &[], Vec::new())
    }
}

impl Requests for TestServer {
    /// One request on a connection of its own (`Connection: close`, so no
    /// idle connection holds one of the server's connection permits).
    fn send(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<Response, String> {
        let label = format!("{method} {target}");
        let mut request = ureq::http::Request::builder()
            .method(method)
            .uri(format!("http://127.0.0.1:{}{target}", self.port))
            .header("Connection", "close");
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let request = request
            .body(body)
            .map_err(|e| format!("{label}: not a request: {e}"))?;
        let mut response = super::agent::agent(Duration::from_secs(30))
            .run(request)
            .map_err(|e| format!("{label}: {e}"))?;
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), String::from_utf8_lossy(v.as_bytes()).into()))
            .collect();
        let body = if method == "HEAD" {
            Vec::new()
        } else {
            response
                .body_mut()
                .with_config()
                .limit(u64::MAX)
                .read_to_vec()
                .map_err(|e| format!("{label}: body failed: {e}"))?
        };
        Ok(Response {
            request: label,
            status: response.status().as_u16(),
            headers,
            body,
        })
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
