//! The live bench's database: a PostgreSQL cluster of its own under
//! `bench-data/export-<N>/` (the one `benches/export.sh` uses), holding the
//! generator's graph in the indexer's tables (`generate
//! --indexer-database-url`, once), with `pg_stat_statements` on so the
//! tail's queries can be counted, and a `SELECT`-only role for the tail.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::options::Opts;
use crate::{die, ROOT};

/// The tail's role: it may read the indexer's tables, nothing else.
pub const TAIL_ROLE: &str = "followgraph_tail";

pub struct IndexerDb {
    bin: PathBuf,
    pub dir: PathBuf,
    pub port: u16,
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// Runs a server program, as `postgres` when this process is root
/// (PostgreSQL refuses to run as root).
fn server_command(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn run(what: &str, c: &mut Command) {
    match c.output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => die(&format!(
            "{what}: {}\n{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => die(&format!("{what}: cannot run: {e}")),
    }
}

fn bindir() -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs.into_iter()
        .rev()
        .find(|d| d.join("initdb").is_file())
        .unwrap_or_else(|| die("no initdb: apt-get install postgresql"))
}

impl IndexerDb {
    /// Starts the cluster (created and filled on the first run).
    pub fn start(o: &Opts) -> IndexerDb {
        let dir = Path::new(ROOT)
            .join("bench-data")
            .join(format!("export-{}", o.accounts));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| die(&format!("{}: {e}", dir.display())));
        if is_root() {
            run("chown", Command::new("chown").arg("postgres").arg(&dir));
        }
        let bin = bindir();
        if !dir.join("data").is_dir() {
            run(
                "initdb",
                server_command(&bin.join("initdb"))
                    .arg("-D")
                    .arg(dir.join("data"))
                    .args(["-U", "postgres", "--auth=trust"]),
            );
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_or(54329, |a| a.port());
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c shared_buffers=1GB \
             -c max_wal_size=8GB -c shared_preload_libraries=pg_stat_statements \
             -c pg_stat_statements.max=50000",
            dir.display()
        );
        run(
            "pg_ctl start",
            server_command(&bin.join("pg_ctl"))
                .arg("-D")
                .arg(dir.join("data"))
                .arg("-l")
                .arg(dir.join("postgres.log"))
                .args(["-w", "-o", &options, "start"]),
        );
        let db = IndexerDb { bin, dir, port };
        if !db.dir.join("generated").is_file() {
            eprintln!(
                "live: generating {} accounts into the indexer's tables",
                o.accounts
            );
            run(
                "generate",
                Command::new(&o.binary)
                    .args(["generate", "--accounts", &o.accounts.to_string()])
                    .args(["--seed", "1", "--indexer-database-url", &db.url()]),
            );
            db.sql("VACUUM ANALYZE");
            let _ = std::fs::write(db.dir.join("generated"), "");
        }
        db.sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        db.sql(&format!(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{TAIL_ROLE}') \
             THEN CREATE ROLE {TAIL_ROLE} LOGIN; END IF; END $$; \
             GRANT SELECT ON ALL TABLES IN SCHEMA public TO {TAIL_ROLE}"
        ));
        db
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    pub fn tail_url(&self) -> String {
        format!("postgres://{TAIL_ROLE}@127.0.0.1:{}/postgres", self.port)
    }

    /// One statement through psql (setup only).
    pub fn sql(&self, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "postgres", "-d", "postgres", "-c", sql])
            .output()
            .unwrap_or_else(|e| die(&format!("psql: {e}")));
        if !out.status.success() {
            die(&format!(
                "psql {sql}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// `followgraph export` into `<dir>/live-snapshots`; returns the root.
    pub fn export(&self, o: &Opts) -> PathBuf {
        let root = self.dir.join("live-snapshots");
        eprintln!("live: exporting into {}", root.display());
        let queries = Path::new(ROOT).join("tests/indexer/queries");
        run(
            "export",
            Command::new(&o.binary)
                .args(["export", "--database-url", &self.url(), "--keep", "1"])
                .arg("--out")
                .arg(&root)
                .arg("--query")
                .arg(format!(
                    "badge_events={}",
                    queries.join("badge_events.sql").display()
                ))
                .arg("--query")
                .arg(format!("badges={}", queries.join("badges.sql").display())),
        );
        root
    }

    /// Forgets the statements counted so far (a phase's figures are then
    /// its own: a diff of totals goes wrong once entries are evicted).
    pub fn reset_statements(&self) {
        self.sql("SELECT pg_stat_statements_reset()");
    }

    /// The tail role's statements so far: (calls, total execution ms).
    pub fn tail_statements(&self) -> (u64, f64) {
        let row = self.sql(&format!(
            "SELECT coalesce(sum(calls), 0)::int8 || ' ' || coalesce(sum(total_exec_time), 0) \
             FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid \
             WHERE r.rolname = '{TAIL_ROLE}'"
        ));
        let mut parts = row.split_whitespace();
        let calls = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0);
        let ms = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0.0);
        (calls, ms)
    }
}

impl Drop for IndexerDb {
    fn drop(&mut self) {
        let _ = server_command(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "fast", "stop"])
            .output();
    }
}
