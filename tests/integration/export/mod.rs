//! `followgraph export` against a real PostgreSQL started by the test
//! (`pg.rs`): mapping and skip rules with rows written out by hand, both
//! BYTEA encodings (`fixture`, `mapping`), atomic publishing and `--keep`
//! (`publishing`), consistency under a concurrent writer and SIGKILL
//! (`transactions`), `--every` across a database restart (`every`), bad
//! credentials and a missing table (`errors`), `--query` files
//! (`query_files`), the finer rules one small database each (`rules`), the
//! `recommended` table and its carry-forward (`recommended`), and
//! the round trip generate -> database -> export -> serve, byte-identical
//! to the generated Parquet snapshot (`round_trip`).
//! Below: running the exporter and reading what it published.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::{Child, ExitStatus, Stdio};
use std::time::Duration;

use followgraph::snapshot::{parse_address, Address, Tables};

use crate::pg::Postgres;
use crate::support::{followgraph_command, run_to_exit, wait_for_exit};

mod errors;
mod every;
mod fixture;
mod mapping;
mod publishing;
mod query_files;
mod recommended;
mod round_trip;
mod rules;
mod tls;
mod transactions;

const SCHEMA: &str = include_str!("../../indexer/schema.sql");
const EXPORT_TIMEOUT: Duration = Duration::from_secs(120);

const A: &str = "1111111111111111111111111111111111111111";
const B: &str = "2222222222222222222222222222222222222222";
const C: &str = "3333333333333333333333333333333333333333";
const D: &str = "4444444444444444444444444444444444444444";
const E: &str = "5555555555555555555555555555555555555555";
const F: &str = "abcdefabcdefabcdefabcdefabcdefabcdefabcd";
const Z: &str = "0000000000000000000000000000000000000000";
const NFT: &str = "0x0e688f5dca4a0a4729946acbc44c792341714e08";
const LR: &str = "0x41aa48ef3c0446b46a5b1cc6337ff3d3716e2a33";
const AM: &str = "0x5289fe5dabc021d02fddf23d4a4df96f4e0f17ef";

fn a(hex40: &str) -> Address {
    parse_address(&format!("0x{hex40}")).expect("address")
}

fn ms(iso: &str) -> i64 {
    followgraph::time::parse_iso_ms(iso).expect("ISO time")
}

fn slot(n: u8) -> String {
    format!("{n:02x}").repeat(32)
}

fn uint256(n: u64) -> String {
    format!("0x{n:064x}")
}

/// The SQL for a BYTEA value given as hex: raw bytes, or the ASCII text
/// `0x...` that some deployments store.
fn bytea(hex: &str, ascii: bool) -> String {
    if ascii {
        format!("convert_to('0x{hex}', 'UTF8')")
    } else {
        format!("decode('{hex}', 'hex')")
    }
}

fn export_args(url: &str, out: &Path, extra: &[&str]) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "export".into(),
        "--database-url".into(),
        url.into(),
        "--out".into(),
        out.as_os_str().to_owned(),
    ];
    args.extend(extra.iter().map(OsString::from));
    args
}

/// Runs `export` to its exit; returns (exit code, stderr).
fn export(url: &str, out: &Path, extra: &[&str]) -> (i32, String) {
    export_with_env(url, out, extra, &[])
}

/// `export` with environment variables set.
fn export_with_env(
    url: &str,
    out: &Path,
    extra: &[&str],
    envs: &[(&str, OsString)],
) -> (i32, String) {
    let (status, _, stderr) = run_to_exit(&export_args(url, out, extra), envs, EXPORT_TIMEOUT);
    let status = status.unwrap_or_else(|| panic!("export did not finish; stderr:\n{stderr}"));
    (status.code().unwrap_or(-1), stderr)
}

pub(crate) fn export_ok(url: &str, out: &Path, extra: &[&str]) -> String {
    let (code, stderr) = export(url, out, extra);
    assert_eq!(code, 0, "export failed; stderr:\n{stderr}");
    stderr
}

pub(crate) fn current(root: &Path) -> Option<String> {
    std::fs::read_to_string(root.join("CURRENT"))
        .ok()
        .map(|s| s.trim().to_owned())
}

/// The snapshot CURRENT names, loaded by the server's loader.
fn loaded(root: &Path) -> Tables {
    followgraph::snapshot::load(root)
        .unwrap_or_else(|e| panic!("exported snapshot rejected: {e}"))
        .tables
}

fn export_json(root: &Path) -> serde_json::Value {
    let dir = root.join(current(root).expect("CURRENT"));
    serde_json::from_slice(&std::fs::read(dir.join("export.json")).expect("export.json"))
        .expect("export.json is JSON")
}

/// (source, reason) -> count from `export.json`.
fn skipped(root: &Path) -> BTreeMap<(String, String), u64> {
    export_json(root)["skipped"]
        .as_array()
        .expect("skipped array")
        .iter()
        .map(|s| {
            (
                (
                    s["source"].as_str().unwrap().to_owned(),
                    s["reason"].as_str().unwrap().to_owned(),
                ),
                s["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// (source, reason) -> the source keys `export.json` shows for it.
fn skip_examples(root: &Path) -> BTreeMap<(String, String), Vec<String>> {
    export_json(root)["skipped"]
        .as_array()
        .expect("skipped array")
        .iter()
        .map(|s| {
            let examples = s["examples"].as_array().expect("examples array");
            (
                (
                    s["source"].as_str().unwrap().to_owned(),
                    s["reason"].as_str().unwrap().to_owned(),
                ),
                examples
                    .iter()
                    .map(|e| e.as_str().unwrap().to_owned())
                    .collect(),
            )
        })
        .collect()
}

/// Directory names under `root` (dot entries excluded).
fn snapshot_dirs(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn sorted<T: Ord + Clone>(v: &[T]) -> Vec<T> {
    let mut v = v.to_vec();
    v.sort();
    v
}

pub(crate) fn indexer(pg: &Postgres) {
    pg.execute(SCHEMA);
}

fn spawn_export(url: &str, out: &Path, extra: &[&str], log: &Path) -> Child {
    followgraph_command(&export_args(url, out, extra), &[])
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(log).unwrap()))
        .spawn()
        .expect("spawn export")
}

/// Waits for the export `child` to exit; kills it and panics after
/// `timeout`.
fn wait_exit(child: &mut Child, timeout: Duration) -> ExitStatus {
    wait_for_exit(child, timeout).unwrap_or_else(|| {
        let _ = child.kill();
        panic!("the export did not exit within {timeout:?}");
    })
}
