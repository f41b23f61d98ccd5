//! The bench's flags and environment variables (clap), and the defaults
//! `--quick` changes: fewer accounts, shorter runs, fewer paths, results
//! not saved. BENCHMARKS.md's "HTTP bench: options" table documents them.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{CommandFactory, Parser};

/// The release binary `cargo bench` built beside this harness.
const BUILT_BINARY: &str = env!("CARGO_BIN_EXE_followgraph");

/// HTTP load bench of the followgraph server against its static-body
/// baseline (see BENCHMARKS.md).
#[derive(Parser, Debug)]
#[command(bin_name = "cargo bench --bench http --", args_override_self = true)]
struct Args {
    /// Smoke run: 20,000 accounts, 3 s per scenario, 1,000 paths, not saved
    #[arg(long)]
    quick: bool,
    /// Snapshot size (generated or reused) [default: 1000000, quick: 20000]
    #[arg(long, value_name = "N", env = "FOLLOWGRAPH_BENCH_ACCOUNTS", value_parser = number)]
    accounts: Option<u64>,
    /// Seconds of measurement per scenario on the server, as much on the
    /// baseline, then as much paced on each [default: 12, quick: 3]
    #[arg(long, value_name = "S", env = "FOLLOWGRAPH_BENCH_DURATION", value_parser = number)]
    duration: Option<u64>,
    /// Seconds of each paced run at 50% load (server, then baseline)
    /// [default: --duration]
    #[arg(long, value_name = "S", env = "FOLLOWGRAPH_BENCH_PACED", value_parser = number)]
    paced: Option<u64>,
    /// Server and baseline alternate in R runs of S/R seconds each
    /// [default: 3, pinned ruler: 5]
    #[arg(long, value_name = "R", env = "FOLLOWGRAPH_BENCH_ROUNDS", value_parser = number)]
    rounds: Option<u64>,
    /// The ruler: `shared` (server, baseline and wrk share both cores; a
    /// target is judged on req/s over the baseline's) or `pinned` (the
    /// server and its baseline on core 0 with one request worker, wrk on
    /// core 1 with one thread; a target is judged on the baseline's
    /// server CPU per request over the server's)
    #[arg(long, value_name = "RULER", env = "FOLLOWGRAPH_BENCH_RULER", default_value = "shared", value_parser = ["shared", "pinned"])]
    ruler: String,
    /// Warm-up seconds of each server per scenario (discarded) [default: 2, quick: 1]
    #[arg(long, value_name = "S", env = "FOLLOWGRAPH_BENCH_WARMUP", value_parser = number)]
    warmup: Option<u64>,
    /// wrk connections (closed loop)
    #[arg(long, value_name = "C", env = "FOLLOWGRAPH_BENCH_CONNECTIONS", default_value_t = 32, value_parser = number)]
    connections: u64,
    /// wrk threads
    #[arg(long, value_name = "T", env = "FOLLOWGRAPH_BENCH_THREADS", default_value_t = 2, value_parser = number)]
    threads: u64,
    /// Request paths per scenario [default: 4000, quick: 1000]
    #[arg(long, value_name = "N", value_parser = number)]
    paths: Option<u64>,
    /// Seed of the subjects' and the paths' random draws
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = number)]
    seed: u64,
    /// Serve this snapshot root instead (no generation) [default:
    /// bench-data/m1 or bench-data/n<N>]
    #[arg(long, value_name = "DIR", env = "FOLLOWGRAPH_BENCH_SNAPSHOT")]
    snapshot: Option<PathBuf>,
    /// Run only these scenarios (comma-separated names) [default: all]
    #[arg(long, value_name = "a,b")]
    scenarios: Option<String>,
    /// Skip the reload-memory measurement (saves one load)
    #[arg(long)]
    no_reload: bool,
    /// Write the results into benches/results/ [default: full runs]
    #[arg(long, overrides_with = "no_save")]
    save: bool,
    /// Write the results under target/followgraph-bench/ only [default: quick runs]
    #[arg(long, overrides_with = "save")]
    no_save: bool,
    /// The load generator
    #[arg(long, value_name = "PATH", env = "WRK", default_value = "wrk")]
    wrk: String,
    /// Run wrk as SCHED_BATCH (`chrt -b 0`): its threads still share the
    /// cores but no longer preempt the server when a response wakes them,
    /// as a client on another machine cannot [default: off]
    #[arg(long, env = "FOLLOWGRAPH_BENCH_CLIENT_BATCH")]
    client_batch: bool,
    /// The slow request of `beside_slow`; `{hub}` stands for the
    /// most-followed account's address
    #[arg(long, value_name = "PATH", default_value = DEFAULT_SLOW_PATH)]
    slow_path: String,
    /// The followgraph binary to generate with, measure and use as the
    /// baseline (another build, to compare it under this same harness)
    /// [default: the one `cargo bench` built]
    #[arg(long, value_name = "PATH", env = "FOLLOWGRAPH_BENCH_BINARY")]
    binary: Option<PathBuf>,
    /// The live-data bench instead (`live.rs`): the graph in the
    /// indexer's tables of a PostgreSQL of its own, exported, served with
    /// the tail while a writer commits events [default: off]
    #[arg(long)]
    live: bool,
    /// Live bench: seconds of each phase with the writer running
    #[arg(long, value_name = "S", default_value_t = 60, value_parser = number)]
    live_seconds: u64,
    /// Live bench: events the writer commits per second
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = number)]
    live_rate: u64,
}

/// The command line without the arguments this harness does not know:
/// `cargo bench` passes `--bench` to every bench binary, and a run of
/// every bench passes the others' filters and flags; all are ignored.
fn own_args() -> Vec<OsString> {
    let cmd = Args::command();
    let mut args = std::env::args_os();
    let mut kept: Vec<OsString> = args.next().into_iter().collect();
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy();
        let Some(long) = text.strip_prefix("--") else {
            if text == "-h" {
                kept.push(arg);
            }
            continue;
        };
        let (name, inline_value) = match long.split_once('=') {
            Some((name, _)) => (name, true),
            None => (long, false),
        };
        if name == "help" {
            kept.push(arg);
            continue;
        }
        let Some(known) = cmd.get_arguments().find(|a| a.get_long() == Some(name)) else {
            continue;
        };
        let takes_value = known.get_action().takes_values() && !inline_value;
        kept.push(arg);
        if takes_value {
            kept.extend(args.next());
        }
    }
    kept
}

/// `beside_slow`'s slow request by default: the one answer that grows
/// with the whole graph.
pub const DEFAULT_SLOW_PATH: &str = "/leaderboard/all?cache=fresh";

/// A number, surrounding whitespace allowed (environment values).
fn number(text: &str) -> Result<u64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))
}

/// What one run does, the `--quick` defaults applied.
#[derive(Clone, Debug)]
pub struct Opts {
    pub quick: bool,
    pub accounts: u64,
    pub duration: u64,
    /// Seconds of each paced run (`--paced`).
    pub paced: u64,
    pub warmup: u64,
    pub connections: u32,
    pub threads: u32,
    pub rounds: u64,
    /// The pinned ruler (`--ruler pinned`).
    pub pinned: bool,
    pub paths: usize,
    pub snapshot: Option<PathBuf>,
    pub scenarios: Option<Vec<String>>,
    pub reload: bool,
    pub save: bool,
    pub wrk: String,
    /// wrk runs under `chrt -b 0` (SCHED_BATCH).
    pub client_batch: bool,
    pub seed: u64,
    /// `beside_slow`'s slow request (`{hub}`: the top account).
    pub slow_path: String,
    /// The followgraph binary run for `generate`, the server and the
    /// baseline.
    pub binary: PathBuf,
    pub live: bool,
    pub live_seconds: u64,
    pub live_rate: u64,
}

impl Opts {
    /// Whether `--scenarios` (if given) names this scenario.
    pub fn runs(&self, scenario: &str) -> bool {
        self.scenarios
            .as_ref()
            .is_none_or(|only| only.iter().any(|n| n == scenario))
    }

    /// Parses the command line and the environment; `--help` prints the
    /// options and exits 0, a bad value exits 2 with the reason.
    pub fn parse() -> Opts {
        Opts::from_args(Args::parse_from(own_args()))
    }

    fn from_args(a: Args) -> Opts {
        let quick = a.quick;
        let pinned = a.ruler == "pinned";
        let mut o = Opts {
            quick,
            accounts: a.accounts.unwrap_or(if quick { 20_000 } else { 1_000_000 }),
            duration: a.duration.unwrap_or(if quick { 3 } else { 12 }),
            paced: 0,
            warmup: a.warmup.unwrap_or(if quick { 1 } else { 2 }),
            connections: a.connections as u32,
            threads: a.threads as u32,
            rounds: a.rounds.unwrap_or(if pinned { 5 } else { 3 }),
            pinned,
            paths: a.paths.unwrap_or(if quick { 1000 } else { 4000 }) as usize,
            snapshot: a.snapshot,
            scenarios: a
                .scenarios
                .map(|names| names.split(',').map(str::to_owned).collect()),
            reload: !a.no_reload,
            save: if a.save || a.no_save { a.save } else { !quick },
            wrk: a.wrk,
            client_batch: a.client_batch,
            seed: a.seed,
            slow_path: a.slow_path,
            binary: a.binary.unwrap_or_else(|| PathBuf::from(BUILT_BINARY)),
            live: a.live,
            live_seconds: a.live_seconds.max(1),
            live_rate: a.live_rate.max(1),
        };
        o.threads = o.threads.clamp(1, o.connections.max(1));
        if pinned {
            o.threads = 1;
        }
        o.duration = o.duration.max(1);
        o.paced = a.paced.unwrap_or(o.duration).max(1);
        o.rounds = o.rounds.clamp(1, o.duration);
        o
    }
}
