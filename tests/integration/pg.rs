//! A real PostgreSQL for the export tests, started from the installed
//! server binaries: `initdb` once per test process into a template data
//! directory, then every `Postgres::start` copies it and runs its own
//! postmaster on a free loopback port, so tests run in parallel and stay
//! independent. Stopped (and its directory removed) on drop.
//!
//! Postgres refuses to run as root: as root, the server programs run as
//! the `postgres` user. Without the server binaries the tests fail, naming
//! the package to install; they never skip.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The superuser's password (TCP connections use scram-sha-256).
pub const PASSWORD: &str = "fg-test-password";
const DATABASE: &str = "indexer";

struct Template {
    bin: PathBuf,
    /// `followgraph-pg-template-<pid>` in the system temp dir: nothing runs
    /// at process exit, so each process removes those of dead processes.
    dir: PathBuf,
}

fn remove_stale_templates() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix("followgraph-pg-template-") {
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { geteuid() == 0 }
}

extern "C" {
    fn geteuid() -> u32;
}

/// The directory of `initdb`, `pg_ctl` and `postgres`.
fn server_bindir() -> PathBuf {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        if out.status.success() {
            candidates.push(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
        }
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    versions.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    candidates.extend(versions.into_iter().rev());
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path));
    }
    candidates
        .into_iter()
        .find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
        .unwrap_or_else(|| {
            panic!(
                "the PostgreSQL server binaries (initdb, pg_ctl) are not installed: \
                 `apt-get install postgresql` (Debian package postgresql-15); .ci/run installs it"
            )
        })
}

/// Runs a server program, as `postgres` when this process is root.
fn server_command(program: &Path) -> Command {
    if is_root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(program);
        cmd
    } else {
        Command::new(program)
    }
}

fn check(what: &str, out: std::io::Result<Output>) -> Output {
    let out = out.unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A directory the postgres user may own and enter.
fn owned_dir(path: &Path) {
    std::fs::create_dir_all(path).unwrap();
    if is_root() {
        check(
            "chown",
            Command::new("chown")
                .arg("-R")
                .arg("postgres")
                .arg(path)
                .output(),
        );
    }
}

fn template() -> &'static Template {
    static TEMPLATE: OnceLock<Template> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let bin = server_bindir();
        remove_stale_templates();
        let dir =
            std::env::temp_dir().join(format!("followgraph-pg-template-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        owned_dir(&dir);
        let pwfile = dir.join("pwfile");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        owned_dir(&dir);
        check(
            "initdb",
            server_command(&bin.join("initdb"))
                .arg("-D")
                .arg(dir.join("data"))
                .args([
                    "-U",
                    "postgres",
                    "--auth-local=trust",
                    "--auth-host=scram-sha-256",
                ])
                .arg(format!("--pwfile={}", pwfile.display()))
                .args(["-E", "UTF8", "--locale=C", "--no-sync"])
                .output(),
        );
        Template { bin, dir }
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

pub struct Postgres {
    dir: tempfile::TempDir,
    port: u16,
    running: bool,
}

impl Postgres {
    /// A fresh cluster on a free loopback port, with database `indexer`.
    pub fn start() -> Postgres {
        let t = template();
        let dir = tempfile::Builder::new()
            .prefix("followgraph-pg-")
            .tempdir()
            .expect("tempdir");
        let copied = Command::new("cp")
            .arg("-a")
            .arg(t.dir.join("data"))
            .arg(dir.path().join("data"))
            .output();
        check("cp -a template", copied);
        owned_dir(dir.path());
        let mut pg = Postgres {
            dir,
            port: 0,
            running: false,
        };
        let mut last = String::new();
        for _ in 0..5 {
            pg.port = free_port();
            match pg.try_start() {
                Ok(()) => {
                    pg.psql("postgres", &format!("CREATE DATABASE {DATABASE}"));
                    return pg;
                }
                Err(e) => last = e,
            }
        }
        panic!("PostgreSQL did not start:\n{last}");
    }

    fn try_start(&mut self) -> Result<(), String> {
        let t = template();
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} \
             -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
             -c shared_buffers=32MB -c max_connections=30",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("postgres.log");
        let out = server_command(&t.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .arg("-l")
            .arg(&log)
            .args(["-w", "-t", "60", "-o", &options, "start"])
            .output()
            .map_err(|e| format!("cannot run pg_ctl: {e}"))?;
        if out.status.success() {
            self.running = true;
            return Ok(());
        }
        let log_text = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = log_text.lines().rev().take(20).collect();
        Err(format!(
            "pg_ctl start: {}\n{}\nlog tail:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ))
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        self.url_with_password(PASSWORD)
    }

    pub fn url_with_password(&self, password: &str) -> String {
        format!(
            "postgres://postgres:{password}@127.0.0.1:{}/{DATABASE}",
            self.port
        )
    }

    fn psql(&self, database: &str, sql: &str) -> String {
        let out = Command::new("psql")
            .args([
                "-X",
                "-q",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
            ])
            .args(["-p", &self.port.to_string(), "-d", database])
            .env("PGPASSWORD", PASSWORD)
            .env("PGCONNECT_TIMEOUT", "10")
            .arg("-c")
            .arg(sql)
            .output()
            .expect("run psql (Debian package postgresql-client)");
        assert!(
            out.status.success(),
            "psql failed: {}\nSQL: {}",
            String::from_utf8_lossy(&out.stderr),
            sql.chars().take(2000).collect::<String>()
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs `sql` (any number of statements) in database `indexer`.
    pub fn execute(&self, sql: &str) {
        self.psql(DATABASE, sql);
    }

    /// The first column of the first row, as text.
    pub fn query_one(&self, sql: &str) -> String {
        self.psql(DATABASE, sql)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    /// Turns TLS on (a reload): a CA and a server certificate for
    /// `localhost` made with the `openssl` command; returns the CA's PEM
    /// file.
    pub fn enable_tls(&self) -> PathBuf {
        let dir = self.dir.path().join("tls");
        std::fs::create_dir_all(&dir).unwrap();
        let ssl = |args: &[&str]| {
            check(
                "openssl",
                Command::new("openssl")
                    .args(args)
                    .current_dir(&dir)
                    .output(),
            )
        };
        make_ca(&dir, "ca");
        ssl(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ]);
        std::fs::write(
            dir.join("ext.cnf"),
            "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        ssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
            "-out",
            "server.crt",
        ]);
        owned_dir(&dir);
        check(
            "chmod",
            Command::new("chmod")
                .arg("600")
                .arg(dir.join("server.key"))
                .output(),
        );
        // One statement per call: ALTER SYSTEM refuses a transaction block.
        for (key, value) in [
            (
                "ssl_cert_file",
                dir.join("server.crt").display().to_string(),
            ),
            ("ssl_key_file", dir.join("server.key").display().to_string()),
            ("ssl", "on".to_owned()),
        ] {
            self.psql("postgres", &format!("ALTER SYSTEM SET {key} = '{value}'"));
        }
        self.psql("postgres", "SELECT pg_reload_conf()");
        dir.join("ca.pem")
    }

    /// Refuses connections without TLS from now on (after `enable_tls`).
    pub fn require_tls(&self) {
        let hba = self.dir.path().join("data").join("pg_hba.conf");
        let text = std::fs::read_to_string(&hba).unwrap();
        std::fs::write(&hba, format!("hostnossl all all all reject\n{text}")).unwrap();
        self.psql("postgres", "SELECT pg_reload_conf()");
    }

    /// Fast shutdown; the data directory stays for `restart`.
    pub fn stop(&mut self) {
        if !self.running {
            return;
        }
        let _ = server_command(&template().bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "fast", "-w", "stop"])
            .output();
        self.running = false;
    }

    /// Starts again on the same port and data directory.
    pub fn restart(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self.try_start() {
                Ok(()) => return,
                Err(e) if Instant::now() > deadline => panic!("restart failed: {e}"),
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.running {
            let _ = server_command(&template().bin.join("pg_ctl"))
                .arg("-D")
                .arg(self.dir.path().join("data"))
                .args(["-m", "immediate", "-w", "stop"])
                .output();
        }
    }
}

/// A throwaway CA in `dir`: `<stem>.pem` and `<stem>.key`.
pub fn make_ca(dir: &Path, stem: &str) {
    check(
        "openssl",
        Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
            ])
            .args([
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN=followgraph test {stem}"),
            ])
            .args([
                "-keyout",
                &format!("{stem}.key"),
                "-out",
                &format!("{stem}.pem"),
            ])
            .current_dir(dir)
            .output(),
    );
}

/// `SELECT 1` over TCP with `password`, whatever happens.
fn try_connect(port: u16, password: &str) -> Output {
    Command::new("psql")
        .args([
            "-X",
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-p",
            &port.to_string(),
        ])
        .args(["-c", "SELECT 1", DATABASE])
        .env("PGPASSWORD", password)
        .env("PGCONNECT_TIMEOUT", "3")
        .output()
        .unwrap()
}

#[test]
fn postgres_harness_starts_stops_and_checks_passwords() {
    let mut pg = Postgres::start();
    pg.execute("CREATE TABLE t (x int); INSERT INTO t VALUES (41), (1)");
    assert_eq!(pg.query_one("SELECT sum(x) FROM t"), "42");
    let wrong = try_connect(pg.port(), "wrong");
    assert!(!wrong.status.success());
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("password authentication failed"),
        "{}",
        String::from_utf8_lossy(&wrong.stderr)
    );
    pg.stop();
    let down = try_connect(pg.port(), PASSWORD);
    assert!(!down.status.success(), "connected to a stopped server");
    pg.restart();
    assert_eq!(
        pg.query_one("SELECT sum(x) FROM t"),
        "42",
        "same data after a restart"
    );
}
