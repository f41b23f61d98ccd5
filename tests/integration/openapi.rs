//! Endpoint 42 and `docs/openapi.yaml`: the document names exactly the
//! routes of the server's table of endpoints (method, path template with
//! its parameter names, operationId, query parameters in the table's
//! order), the server serves the file's content (with the HEAD and
//! OPTIONS its one rule adds) byte for byte as JSON, and 42 answers GET,
//! HEAD and OPTIONS as every endpoint does.

use std::collections::BTreeSet;

use followgraph::api::openapi::DOCUMENT;
use followgraph::api::{Endpoint, Method};
use serde_json::Value;

use crate::fixtures::*;
use crate::support::*;

const YAML: &str = "docs/openapi.yaml";

pub(crate) fn document() -> Value {
    serde_json::from_str(DOCUMENT).expect("the built document is JSON")
}

/// `{name}`s of a path template, in order.
fn template_params(path: &str) -> Vec<&str> {
    path.split('/')
        .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
        .collect()
}

/// The names of an operation's parameters `in` one location (`$ref`s to
/// components resolved).
fn param_names(doc: &Value, params: Option<&Value>, location: &str) -> Vec<String> {
    let Some(params) = params.and_then(Value::as_array) else {
        return Vec::new();
    };
    params
        .iter()
        .map(|p| match p.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let name = r.strip_prefix("#/components/parameters/").expect(r);
                &doc["components"]["parameters"][name]
            }
            None => p,
        })
        .filter(|p| p["in"] == location)
        .map(|p| p["name"].as_str().expect("a parameter's name").to_owned())
        .collect()
}

#[test]
fn the_document_names_exactly_the_routes_of_the_table() {
    let doc = document();
    let paths = doc["paths"].as_object().expect("paths");
    let mut from_table = BTreeSet::new();
    for e in Endpoint::ALL {
        let method = match e.method() {
            Method::Get => "get",
            Method::Post => "post",
        };
        from_table.insert((method.to_owned(), e.path().to_owned()));
        let item = paths
            .get(e.path())
            .unwrap_or_else(|| panic!("{YAML} has no path {}", e.path()));
        let op = &item[method];
        assert!(op.is_object(), "{YAML}: no {method} {}", e.path());
        assert_eq!(op["operationId"], e.name(), "{method} {}", e.path());
        // Path parameters: declared on the path item, named as in the template.
        assert_eq!(
            param_names(&doc, item.get("parameters"), "path"),
            template_params(e.path()),
            "{}",
            e.path()
        );
        assert_eq!(
            param_names(&doc, op.get("parameters"), "query"),
            e.query_params(),
            "{}: query parameters in the table's order",
            e.name()
        );
        // HEAD wherever GET is; OPTIONS (the preflight) everywhere.
        assert_eq!(item.get("head").is_some(), method == "get", "{}", e.path());
        assert!(item.get("options").is_some(), "{}", e.path());
    }
    let mut from_doc = BTreeSet::new();
    let mut numbers = BTreeSet::new();
    for (path, item) in paths {
        for (method, op) in item.as_object().expect("a path item") {
            match method.as_str() {
                "parameters" | "head" | "options" => continue,
                "get" | "post" => {}
                other => panic!("{YAML}: {other} {path} is no method of the API"),
            }
            let number = op["x-endpoint-number"].as_u64().expect("x-endpoint-number");
            assert!(numbers.insert(number), "x-endpoint-number {number} twice");
            from_doc.insert((method.clone(), path.clone()));
        }
    }
    assert_eq!(
        from_doc, from_table,
        "{YAML} and src/api/endpoints.rs differ"
    );
    let all = Endpoint::ALL.len() as u64;
    assert_eq!(
        numbers,
        (1..=all).collect(),
        "the {all} endpoints, each once"
    );
}

#[test]
fn the_served_document_is_the_file() {
    let mut file: Value = serde_yaml_ng::from_str(&std::fs::read_to_string(YAML).expect(YAML))
        .expect("the YAML parses");
    followgraph::api::openapi_rule::add_head_and_options(&mut file);
    let srv = TestService::start(&graph());
    let resp = srv.get("/api/v1/openapi.json");
    assert_eq!(resp.status, 200);
    // (`assert!`, not `assert_eq!`: the document is too long to print.)
    assert!(
        resp.body == DOCUMENT.as_bytes(),
        "42 serves the built document"
    );
    let served: Value = serde_json::from_slice(&resp.body).expect("JSON");
    // Equal, key order included (serde_json keeps it).
    let (served, file) = (served.to_string(), file.to_string());
    if served != file {
        let at = served
            .bytes()
            .zip(file.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(served.len().min(file.len()));
        let near = |s: &str| {
            s[s.floor_char_boundary(at.saturating_sub(80))..]
                .chars()
                .take(160)
                .collect::<String>()
        };
        panic!(
            "the served document is not {YAML} (rebuild?); first difference near\nserved: {}\nfile:   {}",
            near(&served),
            near(&file)
        );
    }
}

#[test]
fn openapi_json_answers_get_head_options_and_cache_like_any_endpoint() {
    let srv = TestService::start(&graph());
    let other = TestService::start(&followers());
    let path = "/api/v1/openapi.json";
    let get = srv.get(path);
    assert_eq!(get.status, 200);
    assert_eq!(get.header("content-type"), Some("application/json"));
    assert_eq!(get.header("access-control-allow-origin"), Some("*"));
    assert_eq!(get.body, DOCUMENT.as_bytes());
    // The same bytes for every snapshot, fresh or cached.
    assert_eq!(other.get(path).body, get.body);
    assert_eq!(srv.get(&format!("{path}?cache=fresh")).body, get.body);
    assert_eq!(srv.get(&format!("{path}?limit=x&sort=1")).body, get.body);

    let head = srv.head(path);
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    for h in [
        "content-type",
        "content-length",
        "access-control-allow-origin",
    ] {
        assert_eq!(head.header(h), get.header(h), "{h}");
    }

    let pre = srv.request(
        "OPTIONS",
        path,
        &[("Access-Control-Request-Headers", "content-type")],
    );
    assert_eq!(pre.status, 204);
    assert_eq!(
        pre.header("access-control-allow-methods"),
        Some("GET, HEAD, OPTIONS")
    );
    assert_eq!(
        pre.header("access-control-allow-headers"),
        Some("content-type")
    );
    assert_eq!(pre.header("access-control-allow-origin"), Some("*"));

    let bad = srv.get(&format!("{path}?cache=%FF"));
    assert_eq!(bad.status, 400);
    assert_eq!(bad.body, br#"{"response":"cache is not valid UTF-8"}"#);
    let post = srv.request("POST", path, &[]);
    assert_eq!(post.status, 405);
    assert_eq!(post.header("allow"), Some("GET, HEAD, OPTIONS"));
    let slash = srv.get("/api/v1/openapi.json/");
    assert_eq!(slash.status, 404);
}
