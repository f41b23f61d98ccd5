//! Converts `docs/openapi.yaml`, the one source of the API's OpenAPI
//! document, to the JSON that endpoint 42 serves (`src/api/openapi.rs`
//! includes it). Keys keep the file's order (serde_json's
//! `preserve_order`). A document that is not valid YAML, or that does not
//! map to JSON (a non-string key, an alias cycle), fails the build.

use std::path::Path;

const SOURCE: &str = "docs/openapi.yaml";

fn main() {
    println!("cargo::rerun-if-changed={SOURCE}");
    let text =
        std::fs::read_to_string(SOURCE).unwrap_or_else(|e| panic!("{SOURCE}: cannot read it: {e}"));
    let doc: serde_json::Value = serde_yaml_ng::from_str(&text)
        .unwrap_or_else(|e| panic!("{SOURCE} is not a JSON-compatible YAML document: {e}"));
    assert!(doc.is_object(), "{SOURCE}: the document must be a mapping");
    let json = serde_json::to_string(&doc).expect("a serde_json::Value serialises");
    // What is served must read back as the same document.
    let back: serde_json::Value = serde_json::from_str(&json).expect("the JSON parses");
    assert_eq!(back, doc, "{SOURCE}: the JSON does not read back");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out).join("openapi.json"), json).expect("write openapi.json");
}
