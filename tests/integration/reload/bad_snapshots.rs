//! Rejected reloads: each way a snapshot can be broken is reported in
//! `/snapshot`'s `last_error`, in the log and in `/metrics`, while the old
//! snapshot keeps answering; a good snapshot afterwards clears the error.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{BinaryArray, StringArray};
use arrow_schema::{DataType, Field};
use followgraph::snapshot::{publish, table_batch};
use serde_json::{json, Value};

use crate::support::*;

use super::damage::{
    break_address, check_mentions, edit_manifest, names_file, replace_table, texts_of, with_column,
};
use super::probes::{failures, gauge, info, metrics, try_info, wait_generation};
use super::{graph_with_ops, renamed};

struct Fault {
    what: &'static str,
    /// Creates the broken snapshot under the root; returns the name to
    /// publish in CURRENT.
    make: fn(&Path, &str) -> String,
    /// What `last_error` must mention: the file first, then words of the
    /// reason (`a|b`: either).
    mentions: &'static [&'static str],
}

fn good_dir(root: &Path, name: &str, checksums: bool) -> PathBuf {
    let t = renamed(graph_with_ops(), "broken.eth", "Broken");
    write_unpublished(root, name, CREATED_AT_MS + 9000, &t, checksums)
}

fn faults() -> Vec<Fault> {
    vec![
        Fault {
            what: "CURRENT names a missing directory",
            make: |_, _| "snap-missing".to_owned(),
            mentions: &["CURRENT", "snap-missing"],
        },
        Fault {
            what: "truncated Parquet file",
            make: |root, name| {
                let dir = good_dir(root, name, false);
                let path = dir.join("list_ops.parquet");
                let len = std::fs::metadata(&path).unwrap().len();
                let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                f.set_len(len / 2).unwrap();
                name.to_owned()
            },
            mentions: &[
                "list_ops.parquet",
                "parquet file|readable|corrupt|eof|truncat|invalid|footer|magic|metadata",
            ],
        },
        Fault {
            what: "missing table file",
            make: |root, name| {
                let dir = good_dir(root, name, false);
                std::fs::remove_file(dir.join("badges.parquet")).unwrap();
                name.to_owned()
            },
            mentions: &["badges.parquet", "missing|not found|no such|exist"],
        },
        Fault {
            what: "missing column",
            make: |root, name| {
                let dir = good_dir(root, name, false);
                let t = graph_with_ops();
                let batch = table_batch("list_records", &t);
                let keep: Vec<usize> = ["token_id", "address"]
                    .iter()
                    .map(|c| batch.schema().index_of(c).unwrap())
                    .collect();
                replace_table(&dir, "list_records", &batch.project(&keep).unwrap());
                name.to_owned()
            },
            mentions: &[
                "list_records.parquet",
                "updated_at",
                "missing|not found|no column",
            ],
        },
        Fault {
            what: "wrong column type",
            make: |root, name| {
                let dir = good_dir(root, name, false);
                let t = graph_with_ops();
                let ids: Vec<String> = t.lists.iter().map(|l| l.token_id.to_string()).collect();
                let batch = with_column(
                    &table_batch("lists", &t),
                    "token_id",
                    Field::new("token_id", DataType::Utf8, false),
                    Arc::new(StringArray::from(ids)),
                );
                replace_table(&dir, "lists", &batch);
                name.to_owned()
            },
            mentions: &["lists.parquet", "token_id", "type"],
        },
        Fault {
            what: "null in a required column",
            make: |root, name| {
                let dir = good_dir(root, name, false);
                let t = graph_with_ops();
                let batch = table_batch("ens", &t);
                let mut names = texts_of(&batch, "name");
                names[1] = None;
                let batch = with_column(
                    &batch,
                    "name",
                    Field::new("name", DataType::Utf8, true),
                    Arc::new(StringArray::from(names)),
                );
                replace_table(&dir, "ens", &batch);
                name.to_owned()
            },
            mentions: &["ens.parquet", "null", "name"],
        },
        Fault {
            what: "malformed address",
            make: |root, name| {
                let dir = good_dir(root, name, false);
                break_address(&dir, &graph_with_ops());
                name.to_owned()
            },
            mentions: &["list_records.parquet", "row 2", "address", "0x12"],
        },
        Fault {
            what: "malformed op",
            make: |root, name| {
                let dir = good_dir(root, name, false);
                let t = graph_with_ops();
                let mut ops: Vec<Vec<u8>> = t.list_ops.iter().map(|r| r.op.encode()).collect();
                ops[1][0] = 2; // version 2
                let batch = with_column(
                    &table_batch("list_ops", &t),
                    "op",
                    Field::new("op", DataType::Binary, false),
                    Arc::new(BinaryArray::from_iter_values(ops.iter())),
                );
                replace_table(&dir, "list_ops", &batch);
                name.to_owned()
            },
            mentions: &["list_ops.parquet", "row 1", "version|malformed|invalid"],
        },
        Fault {
            what: "duplicate key",
            make: |root, name| {
                let mut t = renamed(graph_with_ops(), "broken.eth", "Broken");
                let dup = t.lists[2].clone();
                t.lists.push(dup);
                write_unpublished(root, name, CREATED_AT_MS + 9000, &t, true);
                name.to_owned()
            },
            mentions: &["lists.parquet", "duplicate|unique"],
        },
        Fault {
            what: "manifest row count mismatch",
            make: |root, name| {
                let dir = good_dir(root, name, true);
                edit_manifest(&dir, |m| {
                    let rows = m["tables"]["list_records"]["rows"].as_u64().unwrap();
                    m["tables"]["list_records"]["rows"] = json!(rows + 1);
                });
                name.to_owned()
            },
            mentions: &["list_records.parquet", "row|count", "manifest"],
        },
        Fault {
            what: "checksum mismatch",
            make: |root, name| {
                let dir = good_dir(root, name, true);
                edit_manifest(&dir, |m| {
                    m["tables"]["ens"]["sha256"] = json!("0".repeat(64));
                });
                name.to_owned()
            },
            mentions: &["ens.parquet", "checksum|sha256"],
        },
        Fault {
            what: "unknown format version",
            make: |root, name| {
                let dir = good_dir(root, name, true);
                edit_manifest(&dir, |m| m["format"] = json!("graph-snapshot/9"));
                name.to_owned()
            },
            mentions: &["manifest.json", "format|graph-snapshot/9"],
        },
    ]
}

#[test]
fn rejected_snapshots_keep_the_old_one_live_and_are_reported() {
    let t1 = graph_with_ops();
    let mut srv = TestServer::start_args(&t1, &["--poll-interval", "0"]);
    let before = srv.get("/api/v1/lists/1/details");
    assert_eq!(before.status, 200, "{}", before.text());
    assert_eq!(before.json()["ens"]["name"], "alice.eth");
    let first = info(&srv);
    assert_eq!(first["generation"], 1, "{first}");
    assert_eq!(first["last_error"], Value::Null, "{first}");
    assert_eq!(
        gauge(&metrics(&srv), "followgraph_snapshot_load_failures_total"),
        0.0
    );

    let root = srv.root.path().to_path_buf();
    let mut problems = Vec::new();
    for (i, fault) in faults().iter().enumerate() {
        let n = i as u64 + 1;
        let name = (fault.make)(&root, &format!("bad-{n}"));
        publish(&root, &name).unwrap();
        srv.signal("HUP");
        // Wait for the failure to be counted and reported.
        let reported = {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                if let Some(status) = srv.exited() {
                    panic!(
                        "{}: the server exited ({status}); stderr:\n{}",
                        fault.what,
                        srv.stderr_log()
                    );
                }
                let f = failures(&srv);
                let v = try_info(&srv);
                let ok = matches!(&f, Ok(x) if *x == n as f64)
                    && matches!(&v, Ok(v) if v["last_error"].is_string());
                if ok {
                    break Ok(v.unwrap());
                }
                if Instant::now() > deadline {
                    break Err(format!(
                        "{}: after 20 s load_failures_total {f:?}, /snapshot {v:?}",
                        fault.what
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        let v = match reported {
            Ok(v) => v,
            Err(e) => {
                // The failure count is off from here on: stop.
                panic!("{e}\nserver stderr:\n{}", srv.stderr_log());
            }
        };
        let err = v["last_error"].as_str().unwrap().to_owned();
        if let Err(e) = check_mentions(&err, fault.mentions) {
            problems.push(format!("{}: last_error {e}", fault.what));
        }
        if !names_file(&srv.stderr_log(), fault.mentions[0]) {
            problems.push(format!(
                "{}: stderr does not log the error naming {}",
                fault.what, fault.mentions[0]
            ));
        }
        let mut expected = first.clone();
        expected["last_error"] = json!(err);
        for key in ["name", "generation", "created_at", "loaded_at", "tables"] {
            if v[key] != expected[key] {
                problems.push(format!(
                    "{}: /snapshot {key} is {} (was {})",
                    fault.what, v[key], expected[key]
                ));
            }
        }
        for target in [
            "/api/v1/lists/1/details",
            "/api/v1/lists/1/details?cache=fresh",
        ] {
            let resp = srv.get(target);
            if resp.status != 200 || resp.body != before.body {
                problems.push(format!(
                    "{}: GET {target}: {} {} (expected the old answer)",
                    fault.what,
                    resp.status,
                    String::from_utf8_lossy(&resp.body)
                ));
            }
        }
        let ready = srv.get("/ready");
        if ready.status != 200 {
            problems.push(format!("{}: /ready is {}", fault.what, ready.status));
        }
    }
    assert!(
        problems.is_empty(),
        "rejected snapshots:\n  {}\nserver stderr:\n{}",
        problems.join("\n  "),
        srv.stderr_log()
    );

    // A good snapshot after all that swaps in and clears last_error.
    let loads_before = gauge(&metrics(&srv), "followgraph_snapshot_loads_total");
    let good = renamed(graph_with_ops(), "alice2.eth", "Alice 2");
    write_and_publish(&root, "snap-good", CREATED_AT_MS + 10_000, &good);
    srv.signal("HUP");
    let v = wait_generation(&mut srv, 2, Duration::from_secs(20));
    assert_eq!(v["name"], "snap-good", "{v}");
    assert_eq!(v["created_at"], "2026-11-20T12:00:10.000Z", "{v}");
    assert_eq!(v["last_error"], Value::Null, "{v}");
    let after = srv.get("/api/v1/lists/1/details");
    assert_eq!(
        after.json()["ens"]["name"],
        "alice2.eth",
        "{}",
        after.text()
    );
    let m = metrics(&srv);
    let n = faults().len() as f64;
    assert_eq!(gauge(&m, "followgraph_snapshot_load_failures_total"), n);
    assert_eq!(
        gauge(&m, "followgraph_snapshot_loads_total"),
        loads_before + 1.0
    );
    assert_eq!(gauge(&m, "followgraph_snapshot_generation"), 2.0);
}
