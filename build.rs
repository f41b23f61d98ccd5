//! Converts `docs/openapi.yaml`, the one source of the API's OpenAPI
//! document, to the JSON that endpoint 42 serves (`src/api/openapi.rs`
//! includes it), each path's HEAD and OPTIONS added by one rule
//! (`src/api/openapi_rule.rs`), and names the build (`src/version.rs`): the git commit
//! and the build day. Keys keep the file's order (serde_json's
//! `preserve_order`). A document that is not valid YAML, or that does not
//! map to JSON (a non-string key, an alias cycle), fails the build.

use std::path::Path;
use std::process::Command;

#[path = "src/api/openapi_rule.rs"]
mod openapi_rule;

const SOURCE: &str = "docs/openapi.yaml";

fn main() {
    build_identity();
    println!("cargo::rerun-if-changed={SOURCE}");
    println!("cargo::rerun-if-changed=src/api/openapi_rule.rs");
    let text =
        std::fs::read_to_string(SOURCE).unwrap_or_else(|e| panic!("{SOURCE}: cannot read it: {e}"));
    let mut doc: serde_json::Value = serde_yaml_ng::from_str(&text)
        .unwrap_or_else(|e| panic!("{SOURCE} is not a JSON-compatible YAML document: {e}"));
    assert!(doc.is_object(), "{SOURCE}: the document must be a mapping");
    openapi_rule::add_head_and_options(&mut doc);
    let json = serde_json::to_string(&doc).expect("a serde_json::Value serialises");
    // What is served must read back as the same document.
    let back: serde_json::Value = serde_json::from_str(&json).expect("the JSON parses");
    assert_eq!(back, doc, "{SOURCE}: the JSON does not read back");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out).join("openapi.json"), json).expect("write openapi.json");
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// `FOLLOWGRAPH_COMMIT`, `FOLLOWGRAPH_BUILD_DATE` and
/// `FOLLOWGRAPH_LONG_VERSION` for `src/version.rs`; the script runs again
/// when HEAD moves (a commit, a checkout), not for uncommitted edits.
fn build_identity() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".to_owned());
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!(
            "cargo::rerun-if-changed={}",
            Path::new(&dir).join("HEAD").display()
        );
        if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!(
                "cargo::rerun-if-changed={}",
                Path::new(&dir).join(head).display()
            );
        }
    }
    println!("cargo::rerun-if-env-changed=SOURCE_DATE_EPOCH");
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64)
        });
    let date = civil_date(secs.div_euclid(86_400));
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    println!("cargo::rustc-env=FOLLOWGRAPH_COMMIT={commit}");
    println!("cargo::rustc-env=FOLLOWGRAPH_BUILD_DATE={date}");
    println!("cargo::rustc-env=FOLLOWGRAPH_LONG_VERSION={version} (commit {commit}, built {date})");
}

/// `YYYY-MM-DD` of a day number since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
