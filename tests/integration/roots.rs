//! One suite for both kinds of snapshot root, run against a local
//! directory and against a bucket on SeaweedFS: `publish` (the shrink
//! guard, a name published twice), `snapshots list`, `promote` (and
//! rolling back), and a server following the promoted `CURRENT`. Both runs
//! must also list the same snapshots with the same rows and bytes.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::s3::{Seaweed, BUCKET, SECRET};
use crate::support::{run_to_exit, serve_args_with, Requests, TestServer};

/// Three generated snapshots: `a` (older), `b` (newer, as large), `small`
/// (far fewer accounts, so every table shrinks).
struct Made {
    _dir: tempfile::TempDir,
    a: PathBuf,
    b: PathBuf,
    small: PathBuf,
}

fn make() -> Made {
    let dir = tempfile::tempdir().unwrap();
    let gen = |accounts: &str, seed: &str, at: &str| -> PathBuf {
        let out = dir.path().join(format!("out-{accounts}-{seed}"));
        let args: Vec<OsString> = [
            "generate",
            "--accounts",
            accounts,
            "--seed",
            seed,
            "--created-at",
            at,
            "--out",
        ]
        .iter()
        .map(OsString::from)
        .chain([out.clone().into_os_string()])
        .collect();
        let (status, _, stderr) = run_to_exit(&args, &[], Duration::from_secs(120));
        assert!(status.is_some_and(|s| s.success()), "{stderr}");
        out.join(format!("gen-{accounts}-{seed}"))
    };
    Made {
        a: gen("300", "1", "2026-11-20T10:00:00.000Z"),
        b: gen("300", "2", "2026-11-20T11:00:00.000Z"),
        small: gen("60", "3", "2026-11-20T12:00:00.000Z"),
        _dir: dir,
    }
}

fn run(env: &[(&str, OsString)], args: &[&str]) -> (i32, String, String) {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let (status, stdout, stderr) = run_to_exit(&args, env, Duration::from_secs(120));
    (status.and_then(|s| s.code()).unwrap_or(-1), stdout, stderr)
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn manifest_rows(dir: &Path) -> Vec<(String, u64)> {
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let mut rows: Vec<(String, u64)> = m["tables"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(t, e)| (t.clone(), e["rows"].as_u64().unwrap()))
        .collect();
    rows.sort();
    rows
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|f| f.unwrap().metadata().unwrap().len())
        .sum()
}

/// `snapshots list --json`: (name, created_at, rows, bytes, current).
fn list(env: &[(&str, OsString)], root: &str) -> Vec<(String, String, u64, u64, bool)> {
    let (code, stdout, stderr) = run(env, &["snapshots", "list", "--json", root]);
    assert_eq!(code, 0, "{stderr}");
    stdout
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            (
                v["name"].as_str().unwrap().to_owned(),
                v["created_at"].as_str().unwrap().to_owned(),
                v["rows"].as_u64().unwrap(),
                v["bytes"].as_u64().unwrap(),
                v["current"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// The suite; returns the final listing for the cross-check.
fn suite(env: &[(&str, OsString)], root: &str) -> Vec<(String, String, u64, u64, bool)> {
    let made = make();
    let rows = |dir: &Path| manifest_rows(dir).iter().map(|(_, r)| r).sum::<u64>();

    // An empty root lists nothing (the header only, in the table form).
    assert_eq!(list(env, root), vec![]);
    let (code, stdout, stderr) = run(env, &["snapshots", "list", root]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("NAME "), "{stdout}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");

    for dir in [&made.a, &made.b] {
        let (code, _, stderr) = run(env, &["publish", path(dir), root]);
        assert_eq!(code, 0, "{stderr}");
    }
    let (code, _, stderr) = run(env, &["publish", path(&made.a), root]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("gen-300-1 is already published"),
        "{stderr}"
    );

    let a = (
        "gen-300-1".to_owned(),
        "2026-11-20T10:00:00.000Z".to_owned(),
        rows(&made.a),
        dir_bytes(&made.a),
    );
    let b = (
        "gen-300-2".to_owned(),
        "2026-11-20T11:00:00.000Z".to_owned(),
        rows(&made.b),
        dir_bytes(&made.b),
    );
    let with = |(n, c, r, by): &(String, String, u64, u64), current: bool| {
        (n.clone(), c.clone(), *r, *by, current)
    };
    assert_eq!(list(env, root), vec![with(&b, true), with(&a, false)]);
    let (_, table, _) = run(env, &["snapshots", "list", root]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(
        lines[1].starts_with("gen-300-2  2026-11-20T11:00:00.000Z"),
        "{table}"
    );
    assert!(
        lines[1].ends_with('*') && !lines[2].ends_with('*'),
        "{table}"
    );

    // The guard: the first table (by name) that fell by more than 20%,
    // found here by the rule itself over the two manifests.
    let was = manifest_rows(&made.b);
    let now = manifest_rows(&made.small);
    let (table, from, to) = was
        .iter()
        .zip(&now)
        .find(|((_, w), (_, n))| *w > 0 && (*w - *n) as f64 / *w as f64 > 0.2)
        .map(|((t, w), (_, n))| (t.clone(), *w, *n))
        .expect("the small snapshot shrinks some table");
    let (code, _, stderr) = run(env, &["publish", path(&made.small), root]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!("{table} fell from {from} to {to} rows")),
        "{stderr}"
    );
    assert!(stderr.contains("--allow-shrink"), "{stderr}");
    assert_eq!(
        list(env, root).len(),
        2,
        "a refused snapshot is not published"
    );
    assert!(list(env, root)[0].4, "CURRENT is unchanged");
    let (code, _, stderr) = run(
        env,
        &["publish", "--max-shrink", "100%", path(&made.small), root],
    );
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(env, &["promote", root, "gen-300-2"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("CURRENT: gen-60-3 -> gen-300-2"),
        "{stderr}"
    );

    // Promote, roll back, and a name that is not published.
    let server = TestServer::spawn(
        tempfile::tempdir().unwrap(),
        &serve_args_with(Path::new(root), &["--poll-interval", "1"]),
        env,
    );
    let name = |s: &TestServer| {
        s.get("/snapshot").json()["name"]
            .as_str()
            .map(str::to_owned)
    };
    assert_eq!(name(&server).as_deref(), Some("gen-300-2"));
    let (code, _, stderr) = run(env, &["promote", root, "gen-300-1"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("CURRENT: gen-300-2 -> gen-300-1"),
        "{stderr}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while name(&server).as_deref() != Some("gen-300-1") {
        assert!(
            std::time::Instant::now() < deadline,
            "the server never followed the promotion:\n{}",
            server.stderr_log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (code, _, stderr) = run(env, &["promote", root, "gen-9"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("gen-9 is not a published snapshot"),
        "{stderr}"
    );
    let (code, _, stderr) = run(env, &["promote", root, "../x"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("not a valid snapshot name"), "{stderr}");
    assert_eq!(name(&server).as_deref(), Some("gen-300-1"));
    drop(server);

    // Retention (`publish --keep 2`) keeps the newest two and always the
    // current one.
    let c = made.a.parent().unwrap().join("c");
    copy_dir(&made.small, &c);
    let (code, _, stderr) = run(
        env,
        &["publish", "--keep", "2", "--allow-shrink", path(&c), root],
    );
    assert_eq!(code, 0, "{stderr}");
    let names: Vec<(String, bool)> = list(env, root).into_iter().map(|s| (s.0, s.4)).collect();
    // c and gen-60-3 share the newest created_at (then by name, greatest
    // first); the two older ones go, the once-current gen-300-1 with them.
    assert_eq!(
        names,
        [("gen-60-3".to_owned(), false), ("c".to_owned(), true)]
    );
    let (code, _, stderr) = run(env, &["promote", root, "gen-300-1"]);
    assert_eq!(code, 1, "deleted: {stderr}");
    let (code, _, stderr) = run(env, &["promote", root, "gen-60-3"]);
    assert_eq!(code, 0, "{stderr}");
    list(env, root)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in std::fs::read_dir(from).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
    }
}

#[test]
fn one_suite_on_a_local_root_and_on_a_bucket() {
    let local = tempfile::tempdir().unwrap();
    let root = local.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let on_disk = suite(&[], path(&root));

    let weed = Seaweed::start();
    let env = weed.env(SECRET);
    let in_bucket = suite(&env, &format!("s3://{BUCKET}/roots"));
    assert_eq!(on_disk, in_bucket);
    assert_eq!(
        on_disk
            .iter()
            .map(|s| (s.0.as_str(), s.4))
            .collect::<Vec<_>>(),
        [("gen-60-3", true), ("c", false)]
    );
}

#[test]
fn a_local_root_has_one_publisher_at_a_time() {
    let made = make();
    let local = tempfile::tempdir().unwrap();
    let root = local.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let held = std::fs::File::create(root.join(".export.lock")).unwrap();
    held.try_lock().unwrap();
    let (code, _, stderr) = run(&[], &["publish", path(&made.a), path(&root)]);
    assert_eq!(code, 1);
    assert!(stderr.contains("another publisher holds"), "{stderr}");
    let (code, _, stderr) = run(&[], &["promote", path(&root), "gen-300-1"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("another publisher holds"), "{stderr}");
    drop(held);
    let (code, _, stderr) = run(&[], &["publish", path(&made.a), path(&root)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(root.join("CURRENT")).unwrap(),
        "gen-300-1\n"
    );
}
