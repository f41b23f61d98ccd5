//! The documentation's examples, run against the committed default
//! snapshot (`snapshots/`, what `cargo run --release` serves):
//! - README's "Try it" lines, as the shell reads them: each answers with
//!   the status its flags imply, a JSON body where it has one, and
//!   something to show (no list in a demo's answer is empty; 48's QR code
//!   decodes);
//! - every example of `docs/openapi.yaml` whose summary is a request
//!   (`GET /api/v1/…`) is that request's answer, keys in order.
//!
//! Docs whose examples drift from the snapshot (a renamed account, a
//! search that finds nothing, a field added) fail here rather than in a
//! new user's terminal.

use std::path::Path;

use serde_json::Value;

use crate::openapi::document;
use crate::support::*;

/// One `curl` line of the block, as the shell would see it.
#[derive(Debug)]
struct Curl {
    line: String,
    method: String,
    headers: Vec<(String, String)>,
    body: Option<String>,
    /// Path and query on the server.
    target: String,
}

/// The shell words of `line` up to a comment or a pipe, quotes removed.
fn words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut in_word) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            // A comment starts a word; a pipe or a list ends the command anywhere.
            (None, '#') if !in_word => break,
            (None, '|' | ';' | '&') => break,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    assert!(quote.is_none(), "unclosed quote in {line:?}");
    if in_word {
        words.push(word);
    }
    words
}

/// The `sh` block after "## Try it": its `B=` base and its curl lines
/// (continuation lines joined).
fn try_it_lines(readme: &str) -> Vec<Curl> {
    let section = readme
        .split_once("## Try it")
        .expect("README has a \"## Try it\" section")
        .1;
    let block = section
        .split_once("```sh\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .expect("\"Try it\" has a sh block")
        .0;
    let joined = block.replace("\\\n", " ");
    let mut base = None;
    let mut lines = Vec::new();
    for line in joined.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(b) = line.strip_prefix("B=") {
            base = Some(b.to_owned());
            continue;
        }
        let base = base.as_deref().expect("B= comes before the curl lines");
        lines.push(parse_curl(line, base));
    }
    lines
}

fn parse_curl(line: &str, base: &str) -> Curl {
    let words = words(line);
    assert_eq!(words.first().map(String::as_str), Some("curl"), "{line}");
    let (mut method, mut headers, mut body, mut url) = ("GET".to_owned(), Vec::new(), None, None);
    let mut it = words[1..].iter();
    while let Some(w) = it.next() {
        let mut value = || {
            it.next()
                .unwrap_or_else(|| panic!("{w} without a value: {line}"))
        };
        match w.as_str() {
            "-s" | "-i" => {}
            "-I" => method = "HEAD".to_owned(),
            "-X" => method = value().clone(),
            "-H" => {
                let (k, v) = value().split_once(':').expect("a header is name: value");
                headers.push((k.trim().to_owned(), v.trim().to_owned()));
            }
            "-d" => body = Some(value().clone()),
            // Where curl writes the body: the test reads it instead.
            "-o" => {
                value();
            }
            flag if flag.starts_with('-') => panic!("unknown curl flag {flag}: {line}"),
            u => url = Some(u.replace("$B", base)),
        }
    }
    let url = url.unwrap_or_else(|| panic!("no URL: {line}"));
    let target = url
        .strip_prefix("http://127.0.0.1:8080")
        .unwrap_or_else(|| panic!("a URL of the README's server: {line}"))
        .to_owned();
    Curl {
        line: line.to_owned(),
        method,
        headers,
        body,
        target,
    }
}

/// The empty lists of a demo's answer: the top-level array, or an array
/// that is a field of the top-level object.
fn empty_lists(value: &Value) -> Vec<String> {
    match value {
        Value::Array(a) if a.is_empty() => vec!["the answer".to_owned()],
        Value::Object(fields) => fields
            .iter()
            .filter(|(_, v)| v.as_array().is_some_and(Vec::is_empty))
            .map(|(k, _)| format!("\"{k}\""))
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn every_try_it_line_answers_on_the_default_snapshot() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let lines = try_it_lines(&readme);
    assert!(
        lines.len() >= 40,
        "{} lines: the block was not read",
        lines.len()
    );
    let srv = TestService::open(&root.join("snapshots"), &[]);
    let mut failures = Vec::new();
    for curl in &lines {
        let headers: Vec<(&str, &str)> = curl
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let resp = match &curl.body {
            Some(body) => srv.post(&curl.target, body.as_bytes()),
            None => srv.request(&curl.method, &curl.target, &headers),
        };
        let wanted = if curl.method == "OPTIONS" { 204 } else { 200 };
        if resp.status != wanted {
            failures.push(format!("{}: {} {}", curl.line, resp.status, resp.text()));
            continue;
        }
        if matches!(curl.method.as_str(), "HEAD" | "OPTIONS") {
            continue;
        }
        if resp.header("content-type") == Some("image/svg+xml; charset=utf-8") {
            // 48: a QR code that decodes (else `read_qr` panics).
            read_qr(&resp.text());
            continue;
        }
        match serde_json::from_slice::<Value>(&resp.body) {
            Ok(value) => {
                let empty = empty_lists(&value);
                if !empty.is_empty() {
                    failures.push(format!("{}: {} empty", curl.line, empty.join(", ")));
                }
            }
            Err(e) => failures.push(format!("{}: not JSON ({e})", curl.line)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_try_it_line_is_read_as_the_shell_reads_it() {
    let base = "http://127.0.0.1:8080/api/v1";
    let post = parse_curl(
        r#"curl -s -X POST -H 'Content-Type: application/json'      -d '["a.eth", null]' "$B/lists/1/buttonStateBatch"   # 32. comment"#,
        base,
    );
    assert_eq!(post.method, "POST");
    assert_eq!(
        post.headers,
        [("Content-Type".to_owned(), "application/json".to_owned())]
    );
    assert_eq!(post.body.as_deref(), Some(r#"["a.eth", null]"#));
    assert_eq!(post.target, "/api/v1/lists/1/buttonStateBatch");
    let piped = parse_curl(r#"curl -s "$B/leaderboard/all"| head -c 300; echo"#, base);
    assert_eq!(
        (piped.method.as_str(), piped.target.as_str()),
        ("GET", "/api/v1/leaderboard/all")
    );
    let head = parse_curl(r#"curl -s -I "$B/lists/1/details#top""#, base);
    assert_eq!(
        (head.method.as_str(), head.target.as_str()),
        ("HEAD", "/api/v1/lists/1/details#top")
    );
    assert_eq!(
        parse_curl("curl -s http://127.0.0.1:8080/snapshot", base).target,
        "/snapshot"
    );
    assert_eq!(
        empty_lists(&serde_json::json!({"tags": [], "n": 1, "a": [1]})),
        ["\"tags\""]
    );
    assert_eq!(empty_lists(&serde_json::json!([])), ["the answer"]);
    assert!(empty_lists(&serde_json::json!({"primary_list": null})).is_empty());
}

/// The server on the committed default snapshot.
fn default_server() -> TestService {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    TestService::open(&root.join("snapshots"), &[])
}

/// An example of the OpenAPI document whose summary is a request.
struct DocExample<'a> {
    /// Where it sits in the document, for messages.
    at: String,
    /// The response code it is listed under (none in a shared response).
    status: Option<u16>,
    method: &'a str,
    target: &'a str,
    value: &'a Value,
}

fn request_examples<'a>(
    v: &'a Value,
    at: &str,
    status: Option<u16>,
    out: &mut Vec<DocExample<'a>>,
) {
    match v {
        Value::Object(fields) => {
            let summary = fields.get("summary").and_then(Value::as_str);
            if let (Some(summary), Some(value)) = (summary, fields.get("value")) {
                match summary.split_once(' ') {
                    Some((method @ ("GET" | "POST"), target)) if target.starts_with('/') => {
                        out.push(DocExample {
                            at: at.to_owned(),
                            status,
                            method,
                            target,
                            value,
                        });
                    }
                    _ => {}
                }
                return;
            }
            for (key, child) in fields {
                let code = key.parse().ok().filter(|c| (100..600).contains(c));
                request_examples(child, &format!("{at}/{key}"), code.or(status), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                request_examples(child, &format!("{at}/{i}"), status, out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_request_example_of_the_openapi_document_is_its_answer() {
    let doc = document();
    let mut examples = Vec::new();
    request_examples(&doc, "", None, &mut examples);
    assert!(
        examples.len() >= 40,
        "{} request examples: the document was not walked",
        examples.len()
    );
    // A POST example answers the body the document gives as its example.
    let batch = &doc["paths"]["/lists/{token_id}/buttonStateBatch"]["post"]["requestBody"]
        ["content"]["application/json"]["example"];
    assert!(batch.is_array(), "32's request body example");
    let batch = serde_json::to_vec(batch).expect("serialises");
    let srv = default_server();
    let mut failures = Vec::new();
    for example in &examples {
        let resp = match example.method {
            "POST" => srv.post(example.target, &batch),
            _ => srv.get(example.target),
        };
        let request = format!("{} {} ({})", example.method, example.target, example.at);
        if example.status.is_some_and(|s| s != resp.status) {
            failures.push(format!(
                "{request}: status {} against {:?}",
                resp.status, example.status
            ));
            continue;
        }
        // Compared as text, so that the keys' order counts too.
        let answer = serde_json::from_slice::<Value>(&resp.body)
            .map(|v| v.to_string())
            .unwrap_or_else(|_| resp.text());
        let documented = example.value.to_string();
        if answer != documented {
            failures.push(format!(
                "{request}:\n  answer     {answer}\n  documented {documented}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
