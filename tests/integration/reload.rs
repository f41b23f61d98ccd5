//! Snapshot hot-swapping: the loading phase (`/ready`), reload triggers
//! (SIGHUP, the CURRENT poller), rejected snapshots that keep the old one
//! live, swaps under load, `/snapshot` and `/metrics`.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use followgraph::snapshot::{
    publish, table_batch, write_batch_file, write_snapshot, EnsRow, ListRow, Op, OpRow,
    PrimaryListRow, Tables, WriteOptions,
};
use serde_json::{json, Value};

use crate::fixtures::*;
use crate::support::*;

// ================================================================ helpers

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// `GET /snapshot` as JSON, or why not.
fn try_info(srv: &TestServer) -> Result<Value, String> {
    let resp = srv.try_get("/snapshot")?;
    if resp.status != 200 {
        return Err(format!(
            "GET /snapshot: {} {}",
            resp.status,
            String::from_utf8_lossy(&resp.body)
        ));
    }
    serde_json::from_slice(&resp.body).map_err(|e| {
        format!(
            "GET /snapshot: not JSON ({e}): {}",
            String::from_utf8_lossy(&resp.body)
        )
    })
}

#[track_caller]
fn info(srv: &TestServer) -> Value {
    try_info(srv).unwrap_or_else(|e| panic!("{e}"))
}

/// `GET /metrics` parsed, or why not.
fn try_metrics(srv: &TestServer) -> Result<Vec<Sample>, String> {
    let resp = srv.try_get("/metrics")?;
    if resp.status != 200 {
        return Err(format!(
            "GET /metrics: {} {}",
            resp.status,
            String::from_utf8_lossy(&resp.body)
        ));
    }
    Ok(parse_metrics(&String::from_utf8_lossy(&resp.body)))
}

#[track_caller]
fn metrics(srv: &TestServer) -> Vec<Sample> {
    try_metrics(srv).unwrap_or_else(|e| panic!("{e}"))
}

/// The value of an unlabelled metric.
#[track_caller]
fn gauge(samples: &[Sample], name: &str) -> f64 {
    metric(samples, name, &[]).unwrap_or_else(|| {
        panic!(
            "/metrics has no sample {name}; names: {:?}",
            samples.iter().map(|s| &s.name).collect::<Vec<_>>()
        )
    })
}

fn failures(srv: &TestServer) -> Result<f64, String> {
    let samples = try_metrics(srv)?;
    metric(&samples, "followgraph_snapshot_load_failures_total", &[])
        .ok_or_else(|| "/metrics has no followgraph_snapshot_load_failures_total".to_owned())
}

/// Calls `probe` every 50 ms until it gives Ok; panics with its last error
/// (and the server's stderr) after `timeout` or when the server exits.
fn wait_until<T>(
    srv: &mut TestServer,
    timeout: Duration,
    what: &str,
    mut probe: impl FnMut(&TestServer) -> Result<T, String>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = srv.exited() {
            panic!(
                "{what}: the server exited ({status}); stderr:\n{}",
                srv.stderr_log()
            );
        }
        match probe(srv) {
            Ok(v) => return v,
            Err(last) if Instant::now() > deadline => panic!(
                "{what}: still not so after {timeout:?}; last: {last}\nserver stderr:\n{}",
                srv.stderr_log()
            ),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Waits until `/snapshot` reports `generation`; returns the info.
fn wait_generation(srv: &mut TestServer, generation: u64, timeout: Duration) -> Value {
    wait_until(srv, timeout, &format!("generation {generation}"), |srv| {
        let v = try_info(srv)?;
        if v["generation"] == json!(generation) {
            Ok(v)
        } else {
            Err(v.to_string())
        }
    })
}

/// Waits until `followgraph_snapshot_load_failures_total` is `n`.
fn wait_failures(srv: &mut TestServer, n: u64, timeout: Duration) {
    wait_until(
        srv,
        timeout,
        &format!("load_failures_total == {n}"),
        |srv| {
            let have = failures(srv)?;
            if have == n as f64 {
                Ok(())
            } else {
                Err(format!(
                    "load_failures_total {have}; /snapshot {:?}",
                    try_info(srv)
                ))
            }
        },
    )
}

/// Whether `text` names `file` as a whole file name (`lists.parquet` must
/// not be found inside `primary_lists.parquet`).
fn names_file(text: &str, file: &str) -> bool {
    text.match_indices(file).any(|(i, _)| {
        text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}

/// `mentions`: each entry must occur in `text` (case-insensitively); an
/// entry `a|b` is satisfied by either. The first entry is the file name.
fn check_mentions(text: &str, mentions: &[&str]) -> Result<(), String> {
    let lower = text.to_lowercase();
    if let Some(file) = mentions.first() {
        if !names_file(text, file) {
            return Err(format!("{text:?} does not name the file {file:?}"));
        }
    }
    for m in mentions.iter().skip(1) {
        if !m.split('|').any(|alt| lower.contains(&alt.to_lowercase())) {
            return Err(format!("{text:?} does not mention {m:?}"));
        }
    }
    Ok(())
}

/// Writes `tables` as `<root>/<name>` without publishing it.
fn write_unpublished(
    root: &Path,
    name: &str,
    created_at_ms: i64,
    tables: &Tables,
    checksums: bool,
) -> PathBuf {
    let dir = root.join(name);
    write_snapshot(
        &dir,
        created_at_ms,
        tables,
        &WriteOptions {
            checksums,
            ..WriteOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("write_snapshot({name}) failed: {e}"));
    dir
}

/// Rewrites `<dir>/manifest.json` through `edit` (temp file + rename).
fn edit_manifest(dir: &Path, edit: impl FnOnce(&mut Value)) {
    let path = dir.join("manifest.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut v);
    let tmp = dir.join(".manifest.edit.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
}

/// `batch` with column `name` replaced by `array` (declared as `field`).
fn with_column(batch: &RecordBatch, name: &str, field: Field, array: ArrayRef) -> RecordBatch {
    let schema = batch.schema();
    let idx = schema.index_of(name).unwrap();
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields[idx] = field;
    let mut columns = batch.columns().to_vec();
    columns[idx] = array;
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

/// The text values of column `name` of `batch`.
fn texts_of(batch: &RecordBatch, name: &str) -> Vec<Option<String>> {
    let col = batch.column(batch.schema().index_of(name).unwrap());
    let col = col.as_any().downcast_ref::<StringArray>().unwrap();
    (0..col.len())
        .map(|i| (!col.is_null(i)).then(|| col.value(i).to_owned()))
        .collect()
}

/// Overwrites `<dir>/<table>.parquet` with `batch`.
fn replace_table(dir: &Path, table: &str, batch: &RecordBatch) {
    write_batch_file(&dir.join(format!("{table}.parquet")), batch)
        .unwrap_or_else(|e| panic!("write {table}: {e}"));
}

/// `list_records` row 2's address is `0x12` (no checksums in the
/// manifest, same row count): `list_records.parquet row 2: malformed
/// address`.
fn break_address(dir: &Path, tables: &Tables) {
    let batch = table_batch("list_records", tables);
    let mut addrs = texts_of(&batch, "address");
    addrs[2] = Some("0x12".to_owned());
    let batch = with_column(
        &batch,
        "address",
        Field::new("address", DataType::Utf8, false),
        Arc::new(StringArray::from(addrs)),
    );
    replace_table(dir, "list_records", &batch);
}

/// `graph()` (see fixtures) with two list ops, so that `list_ops` has rows.
fn graph_with_ops() -> Tables {
    let mut t = graph();
    t.list_ops = vec![
        OpRow {
            token_id: 2,
            seq: 1,
            op: Op {
                opcode: 1,
                target: addr(D),
                tag: String::new(),
            },
            updated_at: S,
        },
        OpRow {
            token_id: 3,
            seq: 2,
            op: Op {
                opcode: 3,
                target: addr(D),
                tag: "top8".into(),
            },
            updated_at: S + 1,
        },
    ];
    t
}

/// `graph()` with A's ens row replaced by a bare `name` (display `display`).
fn renamed(mut t: Tables, name: &str, display: &str) -> Tables {
    for row in t.ens.iter_mut() {
        if row.address == addr(A) {
            *row = EnsRow {
                address: row.address,
                name: name.into(),
                display: Some(display.into()),
                ..Default::default()
            };
        }
    }
    t
}

fn table_rows(t: &Tables) -> Value {
    json!({
        "lists": t.lists.len(),
        "primary_lists": t.primary_lists.len(),
        "list_records": t.list_records.len(),
        "list_record_tags": t.list_record_tags.len(),
        "list_ops": t.list_ops.len(),
        "ens": t.ens.len(),
        "badge_events": t.badge_events.len(),
        "badges": t.badges.len(),
    })
}

fn args_with(root: &Path, extra: &[&str]) -> Vec<OsString> {
    let mut args = serve_args(root);
    args.extend(extra.iter().map(OsString::from));
    args
}

// ================================================== 5. the loading phase

#[test]
fn ready_is_503_until_the_first_snapshot_is_loaded() {
    let root = tempfile::tempdir().unwrap();
    write_and_publish(root.path(), "snap-1", CREATED_AT_MS, &graph());
    let args = args_with(
        root.path(),
        &["--debug-load-delay-ms", "1500", "--poll-interval", "0"],
    );
    let started = Instant::now();
    let mut srv = TestServer::spawn_unready(root, &args, &[]);

    // The listening line is out; the load sleeps 1.5 s first.
    let health = srv.get("/health");
    assert_text(&health, 200, r#"{"status":"ok"}"#);
    let ready = srv.get("/ready");
    assert_text(&ready, 503, r#"{"status":"loading"}"#);
    assert_eq!(ready.header("access-control-allow-origin"), Some("*"));
    for target in [
        "/api/v1/lists/1/details",
        "/api/v1/leaderboard/search?term=alice",
        "/api/v1/users/alice.eth/followers",
    ] {
        let resp = srv.get(target);
        assert_text(&resp, 503, r#"{"error":"no snapshot is loaded yet"}"#);
        assert_eq!(
            resp.header("access-control-allow-origin"),
            Some("*"),
            "{}",
            resp.request
        );
    }
    assert!(
        started.elapsed() < Duration::from_millis(1400),
        "the loading-phase checks took {:?}: too slow to be meaningful",
        started.elapsed()
    );

    srv.wait_ready(Duration::from_secs(30));
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(1500),
        "/ready was 200 after {waited:?}, before --debug-load-delay-ms 1500 passed"
    );
    assert_text(&srv.get("/ready"), 200, r#"{"status":"ready"}"#);
    assert_text(&srv.get("/health"), 200, r#"{"status":"ok"}"#);
    let details = srv.get("/api/v1/lists/1/details");
    assert_eq!(details.status, 200, "{}", details.text());
    assert_eq!(details.json()["ens"]["name"], "alice.eth");
    assert_eq!(info(&srv)["generation"], 1);
}

#[test]
fn reload_flags_have_environment_variables() {
    let root = tempfile::tempdir().unwrap();
    write_and_publish(root.path(), "snap-1", CREATED_AT_MS, &graph());
    let path = root.path().as_os_str().to_owned();
    let mut srv = TestServer::spawn_unready(
        root,
        &["serve".into()],
        &[
            ("FOLLOWGRAPH_SNAPSHOT", path),
            ("FOLLOWGRAPH_LISTEN", "127.0.0.1:0".into()),
            ("FOLLOWGRAPH_POLL_INTERVAL", "1".into()),
            ("FOLLOWGRAPH_LOAD_THREADS", "1".into()),
            ("FOLLOWGRAPH_DEBUG_LOAD_DELAY_MS", "1000".into()),
        ],
    );
    assert_text(&srv.get("/ready"), 503, r#"{"status":"loading"}"#);
    srv.wait_ready(Duration::from_secs(30));
    // Polling every second, no signal.
    let t = renamed(graph(), "alice2.eth", "Alice 2");
    write_and_publish(srv.root.path(), "snap-2", CREATED_AT_MS + 2000, &t);
    let v = wait_generation(&mut srv, 2, Duration::from_secs(10));
    assert_eq!(v["name"], "snap-2", "{v}");
    assert_eq!(
        srv.get("/api/v1/lists/1/details").json()["ens"]["name"],
        "alice2.eth"
    );
}

// ============================================ 6. a broken first snapshot

#[test]
fn broken_first_snapshot_exits_with_code_1_naming_file_and_reason() {
    // A row-level error.
    let root = tempfile::tempdir().unwrap();
    let t = graph();
    let dir = write_unpublished(root.path(), "snap-1", CREATED_AT_MS, &t, false);
    break_address(&dir, &t);
    publish(root.path(), "snap-1").unwrap();
    let (status, stdout, stderr) =
        run_to_exit(&serve_args(root.path()), &[], Duration::from_secs(30));
    let status = status.unwrap_or_else(|| {
        panic!("still running 30 s after start on a broken snapshot; stdout {stdout:?}; stderr:\n{stderr}")
    });
    assert_eq!(
        status.code(),
        Some(1),
        "exit status {status}; stderr:\n{stderr}"
    );
    check_mentions(
        &stderr,
        &["list_records.parquet", "row 2", "address", "0x12"],
    )
    .unwrap_or_else(|e| panic!("stderr: {e}"));

    // A file-level error: checksum mismatch.
    let root = tempfile::tempdir().unwrap();
    let dir = write_unpublished(root.path(), "snap-1", CREATED_AT_MS, &graph(), true);
    edit_manifest(&dir, |m| {
        m["tables"]["ens"]["sha256"] = json!("0".repeat(64))
    });
    publish(root.path(), "snap-1").unwrap();
    let (status, _, stderr) = run_to_exit(&serve_args(root.path()), &[], Duration::from_secs(30));
    let status = status.expect("still running 30 s after start on a bad checksum");
    assert_eq!(
        status.code(),
        Some(1),
        "exit status {status}; stderr:\n{stderr}"
    );
    check_mentions(&stderr, &["ens.parquet", "checksum|sha256"])
        .unwrap_or_else(|e| panic!("stderr: {e}"));

    // CURRENT naming a directory that does not exist.
    let root = tempfile::tempdir().unwrap();
    write_unpublished(root.path(), "snap-1", CREATED_AT_MS, &graph(), true);
    publish(root.path(), "snap-gone").unwrap();
    let (status, _, stderr) = run_to_exit(&serve_args(root.path()), &[], Duration::from_secs(30));
    let status = status.expect("still running 30 s after start on a dangling CURRENT");
    assert_eq!(
        status.code(),
        Some(1),
        "exit status {status}; stderr:\n{stderr}"
    );
    check_mentions(&stderr, &["CURRENT", "snap-gone"]).unwrap_or_else(|e| panic!("stderr: {e}"));
}

// ========================================================= 4. SIGHUP

#[test]
fn sighup_reloads_snapshot_and_drops_cache() {
    let mut srv = TestServer::start_args(&graph(), &["--poll-interval", "0"]);
    let before = srv.get("/api/v1/lists/1/details");
    assert_eq!(before.json()["ens"]["name"], "alice.eth");
    assert_no_user_found(&srv.get("/api/v1/lists/50/details"));
    let lb = srv.get("/api/v1/leaderboard/search?term=alice");
    assert_eq!(lb.json()["last_updated"], CREATED_AT);
    // Cached now: asking again gives the same.
    assert_text(&srv.get("/api/v1/lists/1/details"), 200, &before.text());

    // Snapshot 2: A renamed, list 50 for a new account, one second later.
    let mut tables = graph();
    for row in tables.ens.iter_mut() {
        if row.name == "alice.eth" {
            *row = EnsRow {
                address: row.address,
                name: "alice2.eth".into(),
                ..Default::default()
            };
        }
    }
    let newcomer = "0x5050505050505050505050505050505050505050";
    tables.lists.push(ListRow {
        token_id: 50,
        user: addr(newcomer),
        owner: addr(newcomer),
        manager: addr(newcomer),
    });
    tables.primary_lists.push(PrimaryListRow {
        address: addr(newcomer),
        token_id: 50,
    });
    write_and_publish(srv.root.path(), "snap-2", CREATED_AT_MS + 1000, &tables);
    srv.signal("HUP");

    let v = wait_generation(&mut srv, 2, Duration::from_secs(20));
    assert_eq!(v["name"], "snap-2", "{v}");
    assert_eq!(v["created_at"], "2026-11-20T12:00:01.000Z", "{v}");
    assert_eq!(v["last_error"], Value::Null, "{v}");
    assert_eq!(srv.get("/api/v1/lists/50/details").status, 200);
    // The same request as before the swap: the cached answer is gone.
    let after = srv.get("/api/v1/lists/1/details");
    assert_eq!(after.status, 200, "{}", after.text());
    assert_eq!(
        after.json()["ens"]["name"],
        "alice2.eth",
        "{}",
        after.text()
    );
    assert_eq!(
        after.json()["ens"]["avatar"],
        Value::Null,
        "{}",
        after.text()
    );
    let lb = srv.get("/api/v1/leaderboard/search?term=alice");
    assert_eq!(
        lb.json()["last_updated"],
        "2026-11-20T12:00:01.000Z",
        "{}",
        lb.text()
    );
    assert_eq!(
        lb.json()["results"][0]["name"],
        "alice2.eth",
        "{}",
        lb.text()
    );
    assert_eq!(
        lb.json()["results"][0]["updated_at"],
        "2026-11-20T12:00:01.000Z"
    );
}

#[test]
fn sighup_reloads_even_when_nothing_changed() {
    let mut srv = TestServer::start_args(&graph(), &["--poll-interval", "0"]);
    let first = info(&srv);
    assert_eq!(first["generation"], 1, "{first}");
    let details = srv.get("/api/v1/lists/1/details");
    for generation in [2u64, 3] {
        std::thread::sleep(Duration::from_millis(20));
        srv.signal("HUP");
        let v = wait_generation(&mut srv, generation, Duration::from_secs(20));
        assert_eq!(v["name"], "snap-1", "{v}");
        assert_eq!(v["created_at"], CREATED_AT, "{v}");
        assert_eq!(v["last_error"], Value::Null, "{v}");
        let loaded = |v: &Value| {
            followgraph::time::parse_iso_ms(v["loaded_at"].as_str().unwrap_or(""))
                .unwrap_or_else(|| panic!("loaded_at is not ISO ms: {v}"))
        };
        assert!(loaded(&v) >= loaded(&first), "{first} then {v}");
        assert_text(&srv.get("/api/v1/lists/1/details"), 200, &details.text());
    }
}

#[test]
fn triggers_during_a_load_queue_at_most_one_more_and_the_old_snapshot_serves_meanwhile() {
    let mut srv = TestServer::start_args(
        &graph(),
        &["--poll-interval", "0", "--debug-load-delay-ms", "1000"],
    );
    let before = srv.get("/api/v1/lists/1/details");
    assert_eq!(before.status, 200);
    let t = renamed(graph(), "alice2.eth", "Alice 2");
    write_and_publish(srv.root.path(), "snap-2", CREATED_AT_MS + 2000, &t);

    let hup = Instant::now();
    srv.signal("HUP");
    std::thread::sleep(Duration::from_millis(300));
    // The load sleeps 1 s: these four arrive while it runs.
    for _ in 0..4 {
        srv.signal("HUP");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Still loading: the old snapshot answers, no 503.
    let during = srv.get("/api/v1/lists/1/details");
    let v = info(&srv);
    if hup.elapsed() < Duration::from_millis(950) {
        assert_text(&during, 200, &before.text());
        assert_eq!(v["generation"], 1, "{v}");
        assert_text(&srv.get("/ready"), 200, r#"{"status":"ready"}"#);
    }

    let v = wait_generation(&mut srv, 2, Duration::from_secs(20));
    assert_eq!(v["name"], "snap-2", "{v}");
    assert_eq!(
        srv.get("/api/v1/lists/1/details").json()["ens"]["name"],
        "alice2.eth"
    );
    // Exactly one more load was queued by the four signals.
    wait_generation(&mut srv, 3, Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(2500));
    let v = info(&srv);
    assert_eq!(
        v["generation"], 3,
        "more than one reload was queued during a load: {v}"
    );
}

// ========================================================== 3. polling

#[test]
fn poller_picks_up_new_snapshots_and_reports_a_broken_one_once() {
    let mut srv =
        TestServer::start_args(&graph(), &["--poll-interval", "1", "--load-threads", "1"]);
    assert_eq!(info(&srv)["generation"], 1);

    // A new snapshot, no signal.
    let t2 = renamed(graph(), "alice2.eth", "Alice 2");
    write_and_publish(srv.root.path(), "snap-2", CREATED_AT_MS + 2000, &t2);
    let published = Instant::now();
    let v = wait_generation(&mut srv, 2, Duration::from_secs(10));
    assert!(
        published.elapsed() < Duration::from_secs(5),
        "the poller took {:?} with --poll-interval 1",
        published.elapsed()
    );
    assert_eq!(v["name"], "snap-2", "{v}");
    assert_eq!(v["last_error"], Value::Null, "{v}");
    let served = srv.get("/api/v1/lists/1/details");
    assert_eq!(
        served.json()["ens"]["name"],
        "alice2.eth",
        "{}",
        served.text()
    );

    // A broken one: reported once, not retried while unchanged.
    let t3 = renamed(graph(), "alice3.eth", "Alice 3");
    let dir = write_unpublished(srv.root.path(), "snap-3", CREATED_AT_MS + 3000, &t3, false);
    break_address(&dir, &t3);
    publish(srv.root.path(), "snap-3").unwrap();
    wait_failures(&mut srv, 1, Duration::from_secs(10));
    let v = info(&srv);
    assert_eq!(v["generation"], 2, "{v}");
    assert_eq!(v["name"], "snap-2", "{v}");
    let err = v["last_error"].as_str().unwrap_or_else(|| panic!("{v}"));
    check_mentions(err, &["list_records.parquet", "address"]).unwrap();
    std::thread::sleep(Duration::from_millis(3000));
    assert_eq!(
        failures(&srv).unwrap(),
        1.0,
        "the poller retried an unchanged broken snapshot; /snapshot {}",
        info(&srv)
    );
    assert_eq!(info(&srv)["generation"], 2);
    assert_text(&srv.get("/api/v1/lists/1/details"), 200, &served.text());

    // SIGHUP does retry it.
    srv.signal("HUP");
    wait_failures(&mut srv, 2, Duration::from_secs(10));
    assert_eq!(info(&srv)["generation"], 2);

    // Fixed by publishing a new good snapshot.
    let t4 = renamed(graph(), "alice4.eth", "Alice 4");
    write_and_publish(srv.root.path(), "snap-4", CREATED_AT_MS + 4000, &t4);
    let v = wait_generation(&mut srv, 3, Duration::from_secs(10));
    assert_eq!(v["name"], "snap-4", "{v}");
    assert_eq!(v["last_error"], Value::Null, "{v}");
    assert_eq!(failures(&srv).unwrap(), 2.0);
    assert_eq!(
        srv.get("/api/v1/lists/1/details").json()["ens"]["name"],
        "alice4.eth"
    );
}

#[test]
fn poller_reloads_when_the_manifest_of_the_current_snapshot_changes() {
    let mut srv = TestServer::start_args(&graph(), &["--poll-interval", "1"]);
    // snap-2 is published with a wrong row count in its manifest...
    let t2 = renamed(graph(), "alice2.eth", "Alice 2");
    let dir = write_unpublished(srv.root.path(), "snap-2", CREATED_AT_MS + 2000, &t2, true);
    let rows = t2.lists.len() as u64;
    edit_manifest(&dir, |m| m["tables"]["lists"]["rows"] = json!(rows + 1000));
    publish(srv.root.path(), "snap-2").unwrap();
    wait_failures(&mut srv, 1, Duration::from_secs(10));
    assert_eq!(info(&srv)["generation"], 1);
    // ...then repaired in place: CURRENT is unchanged, manifest.json changed.
    edit_manifest(&dir, |m| m["tables"]["lists"]["rows"] = json!(rows));
    let v = wait_generation(&mut srv, 2, Duration::from_secs(10));
    assert_eq!(v["name"], "snap-2", "{v}");
    assert_eq!(v["last_error"], Value::Null, "{v}");
    assert_eq!(
        srv.get("/api/v1/lists/1/details").json()["ens"]["name"],
        "alice2.eth"
    );
}

#[test]
fn poll_interval_0_disables_polling() {
    let mut srv = TestServer::start_args(&graph(), &["--poll-interval", "0"]);
    let before = srv.get("/api/v1/lists/1/details");
    let t2 = renamed(graph(), "alice2.eth", "Alice 2");
    write_and_publish(srv.root.path(), "snap-2", CREATED_AT_MS + 2000, &t2);
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(info(&srv)["generation"], 1);
    assert_text(&srv.get("/api/v1/lists/1/details"), 200, &before.text());
    srv.signal("HUP");
    let v = wait_generation(&mut srv, 2, Duration::from_secs(20));
    assert_eq!(v["name"], "snap-2", "{v}");
}

// ===================================================== 2. fault cases

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

// ================================================ 1. swaps under load

/// The account the swap test asks about (no `N(i)` address collides).
const ALICE: &str = "0xf0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0";
const SWAPS: u64 = 40;

/// Snapshot k of the swap test: ALICE (list 1, primary, ens `alice.eth`
/// displayed `Alice {k}`) is followed by N(1)..N(k) (list 100+i, record
/// of ALICE at S + i s); created at CREATED_AT + k s.
fn swap_tables(k: u64) -> Tables {
    let mut b = Builder::new();
    b.primary_list(1, ALICE);
    b.ens(EnsRow {
        address: addr(ALICE),
        name: "alice.eth".into(),
        display: Some(format!("Alice {k}")),
        ..Default::default()
    });
    for i in 1..=k {
        b.primary_list(100 + i, &n(i as u8))
            .record(100 + i, ALICE, S + i as i64 * 1000);
    }
    b.build()
}

// ALICE has k followers (rank 1, the only account with any), follows no
// one, and has no mutuals, blocks or top8.
fn expected_details(k: u64) -> String {
    format!(
        r#"{{"address":"{ALICE}","ens":{{"name":"alice.eth","avatar":null,"header":null,"display":"Alice {k}","records":{{}},"chains":{{}},"fresh":null,"resolver":null,"errors":{{}}}},"ranks":{{"mutuals_rank":"0","followers_rank":"1","following_rank":"0","top8_rank":"0","blocks_rank":"0"}},"primary_list":"1"}}"#
    )
}

// Latest first: N(k), N(k-1), N(k-2).
fn expected_followers(k: u64) -> String {
    let entries: Vec<String> = (k.saturating_sub(2).max(1)..=k)
        .rev()
        .map(|i| {
            format!(
                r#"{{"svc_list_nft_token_id":"{}","address":"{}","tags":[],"is_following":false,"is_blocked":false,"is_muted":false,"updated_at":"2024-10-14T00:00:{:02}.000Z"}}"#,
                100 + i,
                n(i as u8),
                i
            )
        })
        .collect();
    format!(r#"{{"followers":[{}]}}"#, entries.join(","))
}

fn expected_search(k: u64) -> String {
    let at = format!("2026-11-20T12:00:{k:02}.000Z");
    format!(
        r#"{{"last_updated":"{at}","results":[{{"address":"{ALICE}","name":"alice.eth","avatar":null,"header":null,"mutuals_rank":"0","followers_rank":"1","following_rank":"0","blocks_rank":"0","mutuals":"0","following":"0","followers":"{k}","blocks":"0","updated_at":"{at}"}}]}}"#
    )
}

const SWAP_TARGETS: [&str; 3] = [
    "/api/v1/lists/1/details",
    "/api/v1/lists/1/followers?limit=3",
    "/api/v1/leaderboard/search?term=alice",
];

fn expected_swap(target: usize, k: u64) -> String {
    match target {
        0 => expected_details(k),
        1 => expected_followers(k),
        _ => expected_search(k),
    }
}

struct ClientReport {
    requests: u64,
    last_k: u64,
    connects: u64,
    seen: BTreeMap<u64, u64>,
}

#[test]
fn snapshots_swap_under_load_without_mixed_or_failed_answers() {
    let root = tempfile::tempdir().unwrap();
    write_and_publish(root.path(), "snap-1", CREATED_AT_MS + 1000, &swap_tables(1));
    let args = args_with(root.path(), &["--poll-interval", "0"]);
    let mut srv = TestServer::spawn(root, &args, &[]);
    for (i, target) in SWAP_TARGETS.iter().enumerate() {
        assert_text(&srv.get(target), 200, &expected_swap(i, 1));
    }

    // body -> k, per target.
    let known: Arc<Vec<HashMap<String, u64>>> = Arc::new(
        (0..SWAP_TARGETS.len())
            .map(|i| (1..=SWAPS).map(|k| (expected_swap(i, k), k)).collect())
            .collect(),
    );
    let done = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let clients: Vec<_> = (0..4)
        .map(|t| {
            let known = known.clone();
            let done = done.clone();
            let port = srv.port;
            std::thread::spawn(move || -> Result<ClientReport, String> {
                let mut conn = Conn::new(port);
                let mut report = ClientReport {
                    requests: 0,
                    last_k: 0,
                    connects: 0,
                    seen: BTreeMap::new(),
                };
                let begun = Instant::now();
                // Until the publisher is done (a request cap let fast
                // release-mode clients stop before the last swaps).
                while !done.load(Ordering::SeqCst) && begun.elapsed() < Duration::from_secs(60) {
                    let which = (t + report.requests as usize) % SWAP_TARGETS.len();
                    let target = SWAP_TARGETS[which];
                    let resp = conn
                        .get(target)
                        .map_err(|e| format!("client {t}, request {}: {e}", report.requests))?;
                    let body = String::from_utf8_lossy(&resp.body).into_owned();
                    if resp.status != 200 {
                        return Err(format!(
                            "client {t}: GET {target}: {} {body} (after snapshot {})",
                            resp.status, report.last_k
                        ));
                    }
                    let k = *known[which].get(&body).ok_or_else(|| {
                        format!(
                            "client {t}: GET {target}: body matches no snapshot (after snapshot {}): {body}",
                            report.last_k
                        )
                    })?;
                    if k < report.last_k {
                        return Err(format!(
                            "client {t}: GET {target}: answer of snapshot {k} after one of snapshot {} (a stale answer after a swap)",
                            report.last_k
                        ));
                    }
                    report.last_k = k;
                    *report.seen.entry(k).or_default() += 1;
                    report.requests += 1;
                }
                report.connects = conn.connects;
                Ok(report)
            })
        })
        .collect();

    let mut publisher_error = None;
    for k in 2..=SWAPS {
        if clients.iter().all(|c| c.is_finished()) {
            break;
        }
        let name = format!("snap-{k}");
        write_and_publish(
            srv.root.path(),
            &name,
            CREATED_AT_MS + k as i64 * 1000,
            &swap_tables(k),
        );
        srv.signal("HUP");
        let v = wait_generation(&mut srv, k, Duration::from_secs(20));
        if v["name"] != json!(name) || v["last_error"] != Value::Null {
            publisher_error = Some(format!("after swap {k}: /snapshot {v}"));
            break;
        }
        // The same request as the clients': the answer of snapshot k.
        let resp = srv.get(SWAP_TARGETS[0]);
        if resp.status != 200 || resp.text() != expected_details(k) {
            publisher_error = Some(format!(
                "after swap {k}: GET {}: {} {} (expected {})",
                SWAP_TARGETS[0],
                resp.status,
                String::from_utf8_lossy(&resp.body),
                expected_details(k)
            ));
            break;
        }
    }
    done.store(true, Ordering::SeqCst);
    let publish_time = started.elapsed();
    let mut errors: Vec<String> = publisher_error.into_iter().collect();
    let mut total = 0;
    for (t, client) in clients.into_iter().enumerate() {
        match client.join() {
            Ok(Ok(r)) => {
                eprintln!(
                    "client {t}: {} requests on {} connection(s), last snapshot {}, per snapshot {:?}",
                    r.requests, r.connects, r.last_k, r.seen
                );
                total += r.requests;
                if r.requests == 0 {
                    errors.push(format!("client {t} sent no request"));
                }
            }
            Ok(Err(e)) => errors.push(e),
            Err(_) => errors.push(format!("client {t} panicked")),
        }
    }
    eprintln!("{} swaps in {publish_time:?}, {total} requests", SWAPS - 1);
    assert!(
        errors.is_empty(),
        "swaps under load:\n  {}\nserver stderr:\n{}",
        errors.join("\n  "),
        srv.stderr_log()
    );
    let v = info(&srv);
    assert_eq!(v["generation"], SWAPS, "{v}");
    for (i, target) in SWAP_TARGETS.iter().enumerate() {
        assert_text(&srv.get(target), 200, &expected_swap(i, SWAPS));
    }
}

// ============================== 7. /snapshot, /metrics, ops endpoints

#[test]
fn snapshot_endpoint_reports_the_served_snapshot() {
    let t = graph_with_ops();
    let t0 = now_ms();
    let srv = TestServer::start_args(&t, &["--poll-interval", "0"]);
    let t1 = now_ms();
    let resp = srv.get("/snapshot");
    assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));
    assert_eq!(resp.header("access-control-allow-origin"), Some("*"));
    let v = resp.json();
    let loaded_at = v["loaded_at"]
        .as_str()
        .unwrap_or_else(|| panic!("loaded_at is not a string: {v}"));
    let ms = followgraph::time::parse_iso_ms(loaded_at)
        .unwrap_or_else(|| panic!("loaded_at {loaded_at:?} is not ISO 8601"));
    assert_eq!(
        followgraph::time::format_iso_ms(ms),
        loaded_at,
        "loaded_at is not in the canonical millisecond form"
    );
    assert!(
        t0 - 1000 <= ms && ms <= t1 + 1000,
        "loaded_at {loaded_at} is not between the start ({t0}) and ready ({t1})"
    );
    let took = v["load_duration_ms"]
        .as_f64()
        .unwrap_or_else(|| panic!("load_duration_ms is not a number: {v}"));
    assert!(
        took >= 0.0 && took <= (t1 - t0) as f64 + 1000.0,
        "load_duration_ms {took}, start to ready took {} ms",
        t1 - t0
    );
    let expected = json!({
        "name": "snap-1",
        "generation": 1,
        "created_at": CREATED_AT,
        "loaded_at": v["loaded_at"],
        "load_duration_ms": v["load_duration_ms"],
        "tables": table_rows(&t),
        "last_error": null,
    });
    assert_json(&resp, 200, expected);
    let head = srv.head("/snapshot");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
}

/// Only the seven endpoints live under `/api/v1`: the snapshot info is at
/// `/snapshot`, and `/api/v1/snapshot` is an ordinary unknown path.
#[test]
fn snapshot_endpoint_is_outside_the_api_namespace() {
    let srv = TestServer::start_args(&graph(), &["--poll-interval", "0"]);
    let resp = srv.get("/snapshot");
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["name"], "snap-1", "{}", resp.text());
    assert_eq!(resp.json()["generation"], 1, "{}", resp.text());
    let old = r#"{"error":"/api/v1/snapshot is not a valid path"}"#;
    assert_text(&srv.get("/api/v1/snapshot"), 404, old);
    assert_text(&srv.get("/api/v1/snapshot?cache=fresh"), 404, old);
    for method in ["HEAD", "OPTIONS", "POST"] {
        let resp = srv.request(method, "/api/v1/snapshot", &[]);
        assert_eq!(resp.status, 404, "{}", resp.request);
        assert_eq!(resp.header("access-control-allow-origin"), Some("*"));
    }
}

const ENDPOINTS: [&str; 7] = [
    "list_details",
    "user_badges",
    "list_badges",
    "leaderboard_search",
    "user_notifications",
    "user_followers",
    "list_followers",
];

#[test]
fn metrics_count_requests_cache_and_snapshot() {
    let t = graph_with_ops();
    let srv = TestServer::start_args(&t, &["--poll-interval", "0"]);
    let sent: &[(&str, &str, u16, u64)] = &[
        ("/api/v1/lists/1/details", "list_details", 200, 3),
        ("/api/v1/lists/5/details", "list_details", 404, 2),
        ("/api/v1/users/alice.eth/badges", "user_badges", 200, 2),
        ("/api/v1/lists/1/badges", "list_badges", 200, 1),
        (
            "/api/v1/leaderboard/search?term=alice",
            "leaderboard_search",
            200,
            1,
        ),
        (
            "/api/v1/leaderboard/search?limit=x",
            "leaderboard_search",
            400,
            1,
        ),
        (
            "/api/v1/users/dave.eth/notifications?interval=all",
            "user_notifications",
            200,
            1,
        ),
        ("/api/v1/users/dave.eth/followers", "user_followers", 200, 1),
        ("/api/v1/lists/4/followers", "list_followers", 200, 1),
        ("/api/v1/nope", "other", 404, 1),
    ];
    for &(target, _, status, times) in sent {
        for _ in 0..times {
            let resp = srv.get(target);
            assert_eq!(resp.status, status, "{}: {}", resp.request, resp.text());
        }
    }

    let resp = srv.get("/metrics");
    assert_eq!(resp.status, 200);
    let ct = resp.header("content-type").unwrap_or("");
    assert!(
        ct.starts_with("text/plain; version=0.0.4"),
        "/metrics Content-Type {ct:?}"
    );
    assert_eq!(resp.header("access-control-allow-origin"), Some("*"));
    let text = resp.text();
    let m = parse_metrics(&text);
    let mut problems = Vec::new();

    // Requests per endpoint and status.
    let mut per_endpoint: BTreeMap<&str, u64> = BTreeMap::new();
    for &(_, endpoint, status, times) in sent {
        *per_endpoint.entry(endpoint).or_default() += times;
        let have = metric(
            &m,
            "followgraph_requests_total",
            &[("endpoint", endpoint), ("status", &status.to_string())],
        );
        if have != Some(times as f64) {
            problems.push(format!(
                "followgraph_requests_total{{endpoint=\"{endpoint}\",status=\"{status}\"}}: {have:?}, expected {times}"
            ));
        }
    }
    for s in m.iter().filter(|s| s.name == "followgraph_requests_total") {
        let endpoint = s
            .labels
            .iter()
            .find(|(k, _)| k == "endpoint")
            .map(|(_, v)| v.as_str());
        if !endpoint.is_some_and(|e| e == "other" || ENDPOINTS.contains(&e)) {
            problems.push(format!("unexpected request sample {s:?}"));
        }
    }
    // Latency histogram per endpoint: cumulative buckets, +Inf = count.
    for endpoint in ENDPOINTS {
        let count = metric(
            &m,
            "followgraph_request_duration_seconds_count",
            &[("endpoint", endpoint)],
        );
        let want = per_endpoint[endpoint] as f64;
        if count != Some(want) {
            problems.push(format!(
                "followgraph_request_duration_seconds_count{{endpoint=\"{endpoint}\"}}: {count:?}, expected {want}"
            ));
        }
        let sum = metric(
            &m,
            "followgraph_request_duration_seconds_sum",
            &[("endpoint", endpoint)],
        );
        if !sum.is_some_and(|s| s >= 0.0) {
            problems.push(format!(
                "followgraph_request_duration_seconds_sum{{endpoint=\"{endpoint}\"}}: {sum:?}"
            ));
        }
        let mut buckets: Vec<(f64, f64)> = m
            .iter()
            .filter(|s| s.name == "followgraph_request_duration_seconds_bucket")
            .filter(|s| {
                s.labels
                    .iter()
                    .any(|(k, v)| k == "endpoint" && v == endpoint)
            })
            .filter_map(|s| {
                let le = s.labels.iter().find(|(k, _)| k == "le")?;
                let le = if le.1 == "+Inf" {
                    f64::INFINITY
                } else {
                    le.1.parse().ok()?
                };
                Some((le, s.value))
            })
            .collect();
        buckets.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        let cumulative = buckets.windows(2).all(|w| w[0].1 <= w[1].1);
        let inf = buckets.last().filter(|b| b.0.is_infinite()).map(|b| b.1);
        if buckets.len() < 2 || !cumulative || inf != Some(want) {
            problems.push(format!(
                "followgraph_request_duration_seconds_bucket{{endpoint=\"{endpoint}\"}}: {buckets:?} (expected cumulative, +Inf = {want})"
            ));
        }
    }
    // Cache: details asked 3 times and user badges twice -> 3 hits; seven
    // distinct successful answers stored; errors are not cached.
    let expect = |problems: &mut Vec<String>, name: &str, ok: &dyn Fn(f64) -> bool, want: &str| {
        let have = metric(&m, name, &[]);
        if !have.is_some_and(ok) {
            problems.push(format!("{name}: {have:?}, expected {want}"));
        }
    };
    expect(
        &mut problems,
        "followgraph_cache_hits_total",
        &|v| v == 3.0,
        "3",
    );
    expect(
        &mut problems,
        "followgraph_cache_misses_total",
        &|v| v >= 7.0,
        ">= 7",
    );
    expect(
        &mut problems,
        "followgraph_cache_entries",
        &|v| v == 7.0,
        "7",
    );
    expect(
        &mut problems,
        "followgraph_cache_bytes",
        &|v| v > 0.0,
        "> 0",
    );
    // Snapshot.
    expect(
        &mut problems,
        "followgraph_snapshot_generation",
        &|v| v == 1.0,
        "1",
    );
    expect(
        &mut problems,
        "followgraph_snapshot_created_at_seconds",
        &|v| v == (CREATED_AT_MS / 1000) as f64,
        "1795176000",
    );
    expect(
        &mut problems,
        "followgraph_snapshot_load_duration_seconds",
        &|v| (0.0..60.0).contains(&v),
        "0..60",
    );
    expect(
        &mut problems,
        "followgraph_snapshot_loads_total",
        &|v| v >= 1.0,
        ">= 1",
    );
    expect(
        &mut problems,
        "followgraph_snapshot_load_failures_total",
        &|v| v == 0.0,
        "0",
    );
    expect(&mut problems, "followgraph_accounts", &|v| v > 0.0, "> 0");
    expect(&mut problems, "followgraph_records", &|v| v > 0.0, "> 0");
    expect(&mut problems, "followgraph_ops", &|v| v >= 0.0, ">= 0");
    let rows = table_rows(&t);
    for (table, n) in rows.as_object().unwrap() {
        let have = metric(&m, "followgraph_snapshot_rows", &[("table", table)]);
        if have != n.as_f64() {
            problems.push(format!(
                "followgraph_snapshot_rows{{table=\"{table}\"}}: {have:?}, expected {n}"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "/metrics:\n  {}\n--- /metrics was:\n{text}",
        problems.join("\n  ")
    );
}

#[test]
fn ops_endpoints_answer_get_and_head_with_cors() {
    let srv = TestServer::start_args(&graph(), &["--poll-interval", "0"]);
    for path in ["/health", "/ready", "/metrics", "/snapshot"] {
        let get = srv.request("GET", path, &[("Origin", "https://example.org")]);
        assert_eq!(get.status, 200, "{}: {}", get.request, get.text());
        assert_eq!(
            get.header("access-control-allow-origin"),
            Some("*"),
            "{}: {:?}",
            get.request,
            get.headers
        );
        assert!(!get.body.is_empty(), "{}", get.request);
        let head = srv.request("HEAD", path, &[("Origin", "https://example.org")]);
        assert_eq!(head.status, 200, "{}", head.request);
        assert_eq!(
            head.header("access-control-allow-origin"),
            Some("*"),
            "{}: {:?}",
            head.request,
            head.headers
        );
        assert_eq!(
            head.header("content-type"),
            get.header("content-type"),
            "{}",
            head.request
        );
        assert!(head.body.is_empty(), "{}", head.request);
    }
    assert_text(&srv.get("/health"), 200, r#"{"status":"ok"}"#);
    assert_text(&srv.get("/ready"), 200, r#"{"status":"ready"}"#);
    // Ops endpoints are counted under endpoint="other".
    let m = metrics(&srv);
    let other = metric(
        &m,
        "followgraph_requests_total",
        &[("endpoint", "other"), ("status", "200")],
    );
    assert!(
        other.is_some_and(|v| v >= 6.0),
        "followgraph_requests_total{{endpoint=\"other\",status=\"200\"}}: {other:?}"
    );
}
