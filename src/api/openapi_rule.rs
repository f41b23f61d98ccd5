//! The one rule that states HEAD and OPTIONS in the OpenAPI document:
//! `docs/openapi.yaml` writes each path's GET (or POST) alone, and
//! `build.rs` (which includes this file) adds to every path item the HEAD
//! of its GET and the CORS preflight of its method before the document is
//! served as endpoint 42, so schemathesis exercises all three. Every
//! endpoint answers HEAD and OPTIONS the same way (`api::call`), so one
//! rule says it for all of them.
//!
//! Only `serde_json` is used: the build script compiles this file too.

use serde_json::{json, Map, Value};

/// Adds `head` (for a `get`) and `options` to every path item of `doc`
/// that lacks them, right after the item's operations.
pub fn add_head_and_options(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        if let Some(get) = item.get("get").cloned() {
            if !item.contains_key("head") {
                item.insert("head".into(), head_of(&get));
            }
        }
        let (method, operation) = match (item.get("get"), item.get("post")) {
            (Some(get), _) => ("Get", get.clone()),
            (None, Some(post)) => ("Post", post.clone()),
            (None, None) => continue,
        };
        if !item.contains_key("options") {
            item.insert("options".into(), preflight_of(path, method, &operation));
        }
    }
}

/// The operation's identity (`operationId` with `suffix`, its endpoint
/// number, tags, summary with `(what)`).
fn named(operation: &Value, suffix: &str, what: &str) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(id) = operation["operationId"].as_str() {
        out.insert("operationId".into(), json!(format!("{id}{suffix}")));
    }
    for key in ["x-endpoint-number", "tags"] {
        if let Some(v) = operation.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(summary) = operation["summary"].as_str() {
        out.insert("summary".into(), json!(format!("{summary} ({what})")));
    }
    out
}

/// HEAD: GET's parameters and statuses, each answered without a body.
fn head_of(get: &Value) -> Value {
    let mut head = named(get, "_head", "HEAD");
    head.insert(
        "description".into(),
        json!("GET's status and headers without a body."),
    );
    if let Some(parameters) = get.get("parameters") {
        head.insert("parameters".into(), parameters.clone());
    }
    let responses: Map<String, Value> = get["responses"]
        .as_object()
        .map(|r| {
            r.keys()
                .map(|code| {
                    let name = if code == "200" { "HeadOk" } else { "HeadError" };
                    (code.clone(), reference(name))
                })
                .collect()
        })
        .unwrap_or_default();
    head.insert("responses".into(), Value::Object(responses));
    Value::Object(head)
}

/// OPTIONS: a preflight validates nothing, so each path parameter is any
/// text; it answers 204 (or 404 off the table, 414 for a long URI).
fn preflight_of(path: &str, method: &str, operation: &Value) -> Value {
    let mut options = named(operation, "_preflight", "CORS preflight");
    options.insert(
        "description".into(),
        json!(
            "A CORS preflight: validates nothing (any `token_id`, account or parameter), \
             answers 204."
        ),
    );
    let mut parameters: Vec<Value> = path
        .split('/')
        .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| {
            json!({
                "name": name,
                "in": "path",
                "required": true,
                "description": "Any non-empty text: a preflight validates nothing.",
                "schema": {"type": "string"},
            })
        })
        .collect();
    parameters.push(json!({
        "name": "Access-Control-Request-Headers",
        "in": "header",
        "required": false,
        "description": "Echoed as `Access-Control-Allow-Headers`.",
        "schema": {"type": "string"},
        "example": "content-type",
    }));
    options.insert("parameters".into(), Value::Array(parameters));
    options.insert(
        "responses".into(),
        json!({
            "204": reference(&format!("Preflight{method}")),
            "404": reference("PathNotFound"),
            "414": reference("UriTooLong"),
        }),
    );
    Value::Object(options)
}

fn reference(response: &str) -> Value {
    json!({ "$ref": format!("#/components/responses/{response}") })
}
