//! Section 42: the OpenAPI 3.1 document of the API. `docs/openapi.yaml` is
//! its one source; `build.rs` converts it to JSON (keys in the file's
//! order) and fails the build when it does not convert, so the served
//! bytes are fixed at build time and the same for every snapshot.

/// The document as served by `GET /api/v1/openapi.json`.
pub const DOCUMENT: &str = include_str!(concat!(env!("OUT_DIR"), "/openapi.json"));

/// 42: the document, whatever the snapshot.
pub fn render(out: &mut String) {
    out.push_str(DOCUMENT);
}

#[cfg(test)]
mod tests {
    use super::DOCUMENT;

    /// The build's JSON parses, is an OpenAPI 3.1 document, and keeps the
    /// YAML's key order (`openapi` first, as the file has it).
    #[test]
    fn the_document_is_openapi_3_1_json() {
        let doc: serde_json::Value = serde_json::from_str(DOCUMENT).expect("valid JSON");
        assert_eq!(doc["openapi"].as_str().map(|v| &v[..4]), Some("3.1."));
        let keys: Vec<&str> = doc
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(keys.first(), Some(&"openapi"));
        assert!(doc["paths"].as_object().is_some_and(|p| !p.is_empty()));
    }
}
