//! The command line: every flag also reads `FOLLOWGRAPH_<FLAG>`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "followgraph",
    version = crate::version::LONG,
    about = "Serves follow-graph lookups from Parquet snapshots, from memory"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Log lines as text, or as one JSON object per line (every command).
    #[arg(
        long,
        global = true,
        env = "FOLLOWGRAPH_LOG_FORMAT",
        value_enum,
        default_value_t = LogFormat::Text
    )]
    pub log_format: LogFormat,
}

/// `--log-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve a snapshot over HTTP (the default command).
    Serve(ServeConfig),
    /// Write a deterministic synthetic snapshot root (or the same graph
    /// into an indexer database).
    Generate(GenerateConfig),
    /// Export the protocol indexer's PostgreSQL database as a snapshot.
    Export(ExportConfig),
    /// Load a snapshot with the server's loader and report what it holds
    /// (exit 1 with the reason when the server would reject it).
    Check(CheckConfig),
    /// Publish a snapshot directory into a root (local or object storage)
    /// and point its CURRENT at it.
    Publish(PublishConfig),
    /// Inspect a snapshot root.
    Snapshots(SnapshotsConfig),
    /// Point a root's CURRENT at one of its published snapshots (rolling
    /// back is promoting an older one).
    Promote(PromoteConfig),
}

/// Where the committed default snapshot root lives.
pub const DEFAULT_SNAPSHOT: &str = "snapshots";

#[derive(Clone, Debug, Args)]
pub struct ServeConfig {
    /// Snapshot root (with CURRENT) or one snapshot directory; or a root on
    /// object storage, `s3://bucket/prefix`.
    #[arg(long, env = "FOLLOWGRAPH_SNAPSHOT", default_value = DEFAULT_SNAPSHOT)]
    pub snapshot: PathBuf,
    #[command(flatten)]
    pub store: crate::root::StoreOptions,
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, env = "FOLLOWGRAPH_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// A second address for the operations endpoints (`/metrics`,
    /// `/snapshot`, `/version`, `/health`, `/ready`); the main one then
    /// keeps only the API, `/health` and `/ready`.
    #[arg(long, env = "FOLLOWGRAPH_ADMIN_LISTEN")]
    pub admin_listen: Option<SocketAddr>,
    /// Response cache time-to-live in seconds (0 disables the cache).
    #[arg(long, env = "FOLLOWGRAPH_CACHE_TTL", default_value_t = 300)]
    pub cache_ttl: u64,
    /// Upper bound of the response cache in bytes.
    #[arg(long, env = "FOLLOWGRAPH_CACHE_MAX_BYTES", default_value_t = 256 << 20)]
    pub cache_max_bytes: usize,
    /// Largest `limit` a request may ask for.
    #[arg(long, env = "FOLLOWGRAPH_MAX_LIMIT", default_value_t = 1000)]
    pub max_limit: u64,
    /// Threads that answer requests (0: one per core). While one renders
    /// an answer that may take long (`/leaderboard/all`, a page from
    /// offset 10,000 on), its other requests move to a spare thread.
    #[arg(long, env = "FOLLOWGRAPH_WORKER_THREADS", default_value_t = 0)]
    pub worker_threads: usize,
    /// Most connections served at once; further ones wait in the backlog.
    /// Each takes a file descriptor: the open-files limit (`ulimit -n`)
    /// must be above it (the server warns at start when it is not).
    #[arg(long, env = "FOLLOWGRAPH_MAX_CONNECTIONS", default_value_t = 10_000)]
    pub max_connections: usize,
    /// Seconds a client may take to send a request's headers (also how
    /// long an idle keep-alive connection is kept).
    #[arg(long, env = "FOLLOWGRAPH_HEADER_READ_TIMEOUT", default_value_t = 10)]
    pub header_read_timeout: u64,
    /// Largest request head (request line + headers) in bytes; above: 431
    /// (or 414 when the request line alone is over 64 KiB). At least 8192.
    #[arg(long, env = "FOLLOWGRAPH_MAX_HEADER_BYTES", default_value_t = 65536)]
    pub max_header_bytes: usize,
    /// Longest path + query in bytes; above: 414 with a JSON body.
    #[arg(long, env = "FOLLOWGRAPH_MAX_URI_BYTES", default_value_t = 16384)]
    pub max_uri_bytes: usize,
    /// Seconds between checks of the snapshot root for a new snapshot
    /// (0 disables polling; SIGHUP always reloads).
    #[arg(long, env = "FOLLOWGRAPH_POLL_INTERVAL", default_value_t = 30)]
    pub poll_interval: u64,
    /// Threads of the reload pool, which compactions use too (0: half the
    /// cores, at least 1); the first load, with nothing to serve yet, uses
    /// every core.
    #[arg(long, env = "FOLLOWGRAPH_LOAD_THREADS", default_value_t = 0)]
    pub load_threads: usize,
    /// The indexer's database, to follow between snapshots (docs/live.md;
    /// a read-only role). Also `DATABASE_URL`. The password is never
    /// printed.
    #[arg(long, env = "FOLLOWGRAPH_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// Milliseconds between the starts of two polls of the database.
    #[arg(long, env = "FOLLOWGRAPH_TAIL_INTERVAL", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub tail_interval: u64,
    /// Blocks per chain read again behind the tail's position (events the
    /// indexer inserts late).
    #[arg(long, env = "FOLLOWGRAPH_TAIL_LOOKBACK", default_value_t = 256)]
    pub tail_lookback: u64,
    /// Seconds after a changing poll until its entities are compacted into
    /// a new base (0: after every changing poll).
    #[arg(long, env = "FOLLOWGRAPH_COMPACT_INTERVAL", default_value_t = 60)]
    pub compact_interval: u64,
    /// Seconds a base made from files serves before a compaction folds
    /// the held entities into new files (as a reload: a load's time and
    /// memory); compactions in between refresh the compacted values in
    /// memory (0: every compaction folds).
    #[arg(long, env = "FOLLOWGRAPH_FOLD_INTERVAL", default_value_t = 600)]
    pub fold_interval: u64,
    /// Where compactions write the snapshot they load (in a directory of
    /// the process's own, removed as bases are replaced): about one
    /// snapshot's size on disk. Default: the system's temporary directory.
    #[arg(long, env = "FOLLOWGRAPH_COMPACT_DIR")]
    pub compact_dir: Option<std::path::PathBuf>,
    /// Milliseconds a `cache=fresh` request waits at most for a poll that
    /// started after it arrived.
    #[arg(long, env = "FOLLOWGRAPH_FRESH_WAIT", default_value_t = 2000)]
    pub fresh_wait: u64,
    /// The QR code's payload (`/users/{a}/qr`): this prefix, then the
    /// account's address. 1 to 128 bytes of printable ASCII.
    #[arg(
        long,
        env = "FOLLOWGRAPH_QR_URL_PREFIX",
        default_value = crate::api::DEFAULT_QR_URL_PREFIX,
        value_parser = parse_qr_url_prefix
    )]
    pub qr_url_prefix: String,
    /// Benchmark baseline: answer every endpoint (after routing and the
    /// method check, before parameters) with a fixed body of this many
    /// bytes, and load no snapshot. 0 = off.
    #[arg(
        long,
        env = "FOLLOWGRAPH_BENCH_STATIC_BODY_BYTES",
        default_value_t = 0,
        hide = true
    )]
    pub bench_static_body_bytes: usize,
    /// Test aid: serve `GET /debug/panic`, whose handler panics.
    #[arg(long, env = "FOLLOWGRAPH_DEBUG_PANIC_ROUTE", hide = true)]
    pub debug_panic_route: bool,
    /// Test aid: wait this many milliseconds before every snapshot load.
    #[arg(
        long,
        env = "FOLLOWGRAPH_DEBUG_LOAD_DELAY_MS",
        default_value_t = 0,
        hide = true
    )]
    pub debug_load_delay_ms: u64,
    /// Test aid: wait this many milliseconds before a render that may be
    /// long (`Call::may_render_long`), once it is handed off.
    #[arg(
        long,
        env = "FOLLOWGRAPH_DEBUG_RENDER_DELAY_MS",
        default_value_t = 0,
        hide = true
    )]
    pub debug_render_delay_ms: u64,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig::parse_from_args(&[])
    }
}

impl ServeConfig {
    /// Threads of reloads and compactions, which run beside live traffic:
    /// `--load-threads`, else half the cores (at least 1).
    pub fn reload_threads(&self) -> usize {
        match self.load_threads {
            0 => (std::thread::available_parallelism().map_or(2, |n| n.get()) / 2).max(1),
            n => n,
        }
    }

    /// `--database-url`, else `FOLLOWGRAPH_DATABASE_URL`, else `DATABASE_URL`.
    pub fn database_url(&self) -> Option<String> {
        self.database_url
            .clone()
            .or_else(|| std::env::var("DATABASE_URL").ok())
            .filter(|url| !url.is_empty())
    }

    fn parse_from_args(args: &[&str]) -> Self {
        #[derive(Parser)]
        struct Wrapper {
            #[command(flatten)]
            serve: ServeConfig,
        }
        let argv = std::iter::once("followgraph").chain(args.iter().copied());
        Wrapper::parse_from(argv).serve
    }
}

#[derive(Clone, Debug, Args)]
pub struct GenerateConfig {
    /// Number of accounts.
    #[arg(long, env = "FOLLOWGRAPH_ACCOUNTS", default_value_t = 10_000)]
    pub accounts: u64,
    /// Random seed; the same seed gives the same snapshot.
    #[arg(long, env = "FOLLOWGRAPH_SEED", default_value_t = 1)]
    pub seed: u64,
    /// Snapshot root to write (created; CURRENT is pointed at the new snapshot).
    #[arg(
        long,
        env = "FOLLOWGRAPH_OUT",
        required_unless_present = "indexer_database_url"
    )]
    pub out: Option<PathBuf>,
    /// Instead of Parquet, write the same graph into the protocol
    /// indexer's tables of this (empty) PostgreSQL database.
    #[arg(long, env = "FOLLOWGRAPH_INDEXER_DATABASE_URL", conflicts_with = "out")]
    pub indexer_database_url: Option<String>,
    #[command(flatten)]
    pub store: crate::root::StoreOptions,
    /// The snapshot's created_at (ISO 8601 UTC).
    #[arg(
        long,
        env = "FOLLOWGRAPH_CREATED_AT",
        default_value = "2026-11-20T12:00:00.000Z"
    )]
    pub created_at: String,
}

#[derive(Clone, Debug, Args)]
pub struct ExportConfig {
    /// `postgres://user:password@host:port/db` of the indexer's database
    /// (the password is never printed).
    #[arg(long, env = "FOLLOWGRAPH_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// Snapshot root to publish into (created if missing), or a root on
    /// object storage, `s3://bucket/prefix`.
    #[arg(long, env = "FOLLOWGRAPH_OUT")]
    pub out: PathBuf,
    /// Directory name of the new snapshot (default `snap-<UTC yyyymmddThhmmssZ>`
    /// of the export's transaction time).
    #[arg(long, env = "FOLLOWGRAPH_NAME")]
    pub name: Option<String>,
    /// Snapshots kept in the root after publishing (the one CURRENT names
    /// is never deleted).
    #[arg(long, env = "FOLLOWGRAPH_KEEP", default_value_t = 3)]
    pub keep: usize,
    /// `TABLE=FILE.sql`: run FILE's SELECT instead of the built-in one for
    /// that snapshot table (repeatable; in the environment, comma-separated).
    #[arg(
        long = "query",
        value_name = "TABLE=FILE.sql",
        env = "FOLLOWGRAPH_QUERIES",
        value_delimiter = ','
    )]
    pub queries: Vec<String>,
    /// Export, publish, sleep this many seconds, repeat (0: once).
    #[arg(long, env = "FOLLOWGRAPH_EVERY", default_value_t = 0)]
    pub every: u64,
    /// Per-statement timeout in seconds (0: none).
    #[arg(long, env = "FOLLOWGRAPH_STATEMENT_TIMEOUT", default_value_t = 600)]
    pub statement_timeout: u64,
    #[command(flatten)]
    pub shrink: ShrinkOptions,
    #[command(flatten)]
    pub store: crate::root::StoreOptions,
}

/// The guard against publishing a much smaller snapshot than the current.
#[derive(Clone, Debug, Args)]
pub struct ShrinkOptions {
    /// Refuse to publish when a table has more than this many percent fewer
    /// rows than in the current snapshot (naming the table).
    #[arg(
        long = "max-shrink",
        env = "FOLLOWGRAPH_MAX_SHRINK",
        value_name = "PERCENT",
        default_value = "20",
        value_parser = parse_percent
    )]
    pub max_shrink: f64,
    /// Publish even when a table shrank by more than --max-shrink.
    #[arg(long = "allow-shrink", env = "FOLLOWGRAPH_ALLOW_SHRINK")]
    pub allow_shrink: bool,
}

impl ShrinkOptions {
    pub fn guard(&self) -> crate::root::ShrinkGuard {
        crate::root::ShrinkGuard((!self.allow_shrink).then_some(self.max_shrink / 100.0))
    }
}

fn parse_qr_url_prefix(text: &str) -> Result<String, String> {
    crate::api::check_qr_url_prefix(text).map(|()| text.to_owned())
}

/// `20` or `20%`: a share in [0, 100].
fn parse_percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%');
    match number.parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!("{text:?} is not a percentage from 0 to 100")),
    }
}

impl ExportConfig {
    /// `--database-url`, else `FOLLOWGRAPH_DATABASE_URL`, else `DATABASE_URL`.
    pub fn database_url(&self) -> Option<String> {
        self.database_url
            .clone()
            .or_else(|| std::env::var("DATABASE_URL").ok())
            .filter(|url| !url.is_empty())
    }
}

#[derive(Clone, Debug, Args)]
pub struct CheckConfig {
    /// A snapshot root (with CURRENT) or one snapshot directory.
    pub snapshot: PathBuf,
}

#[derive(Clone, Debug, Args)]
pub struct PublishConfig {
    /// The snapshot directory to publish (its name becomes the snapshot's).
    pub dir: PathBuf,
    /// The root: a local directory or `s3://bucket/prefix`.
    pub root: String,
    /// Then keep only the N newest snapshots of the root (the one CURRENT
    /// names is never deleted); none are deleted without it.
    #[arg(long)]
    pub keep: Option<usize>,
    #[command(flatten)]
    pub shrink: ShrinkOptions,
    #[command(flatten)]
    pub store: crate::root::StoreOptions,
}

#[derive(Clone, Debug, Args)]
pub struct SnapshotsConfig {
    #[command(subcommand)]
    pub command: SnapshotsCommand,
}

#[derive(Clone, Debug, Subcommand)]
pub enum SnapshotsCommand {
    /// The root's snapshots, newest first: name, created, rows, bytes, and
    /// which one CURRENT names.
    List(ListConfig),
}

#[derive(Clone, Debug, Args)]
pub struct ListConfig {
    /// The root: a local directory or `s3://bucket/prefix`.
    pub root: String,
    /// One JSON object per snapshot and line, for scripts.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: crate::root::StoreOptions,
}

#[derive(Clone, Debug, Args)]
pub struct PromoteConfig {
    /// The root: a local directory or `s3://bucket/prefix`.
    pub root: String,
    /// The published snapshot CURRENT is to name.
    pub name: String,
    #[command(flatten)]
    pub store: crate::root::StoreOptions,
}
