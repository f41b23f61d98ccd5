//! One scenario measured: its paths written out with a wrk script, the
//! mean body size over every path, a static-body baseline started with that size;
//! then warm-up, closed-loop rounds alternating between the server and the
//! baseline, and a paced run at half the server's throughput on each.

use std::path::Path;

use crate::client::http_get;
use crate::die;
use crate::options::Opts;
use crate::scenarios::Scenario;
use crate::server::Server;
use crate::wrk::{merge_runs, run_wrk, write_paths, write_script, WrkResult};

/// What one scenario measured, with its targets.
pub struct ScenarioResult {
    pub name: &'static str,
    pub describe: &'static str,
    pub cached: bool,
    pub paths: usize,
    pub mean_body: usize,
    pub main: WrkResult,
    pub baseline: WrkResult,
    pub ratio: f64,
    pub paced_target: f64,
    pub paced: WrkResult,
    pub paced_baseline: WrkResult,
    pub cache_hit_ratio: Option<f64>,
    pub min_ratio: Option<f64>,
    pub max_p99_us: Option<f64>,
    /// Server CPU (user + system) per request over the closed-loop rounds.
    pub cpu_us_per_request: f64,
    /// The baseline's, likewise.
    pub baseline_cpu_us_per_request: f64,
    /// Per round: req/s over the baseline's, and the baseline's CPU per
    /// request over the server's.
    pub round_ratios: Vec<f64>,
    pub round_cpu_ratios: Vec<f64>,
    /// Whether the pinned ruler measured it (targets on the CPU ratio).
    pub pinned: bool,
    /// Items per request (batches).
    pub items: Option<usize>,
}

impl ScenarioResult {
    /// Batch items answered per second of server CPU (per core).
    pub fn items_per_cpu_second(&self) -> Option<f64> {
        let items = self.items? as f64;
        (self.cpu_us_per_request > 0.0).then(|| items * 1e6 / self.cpu_us_per_request)
    }
}

impl ScenarioResult {
    /// The ratio a target is judged on: the median round's CPU ratio
    /// under the pinned ruler, else req/s over all rounds.
    pub fn judged_ratio(&self) -> f64 {
        if self.pinned {
            median(&self.round_cpu_ratios)
        } else {
            self.ratio
        }
    }
    pub fn ratio_pass(&self) -> Option<bool> {
        self.min_ratio.map(|m| self.judged_ratio() >= m)
    }
    /// (median, min, max) of the rounds' req/s ratios and CPU ratios.
    pub fn round_spread(&self) -> [(f64, f64, f64); 2] {
        let spread = |v: &[f64]| {
            let min = v.iter().copied().fold(f64::INFINITY, f64::min);
            let max = v.iter().copied().fold(0.0, f64::max);
            (median(v), if v.is_empty() { 0.0 } else { min }, max)
        };
        [spread(&self.round_ratios), spread(&self.round_cpu_ratios)]
    }
    pub fn p99_pass(&self) -> Option<bool> {
        self.max_p99_us.map(|m| self.paced.p99_us < m)
    }
}

/// Measures scenario `sc` over `paths` against `server`; the scripts,
/// path files and the baseline's log go to `work`.
pub fn run_scenario(
    o: &Opts,
    server: &Server,
    sc: &Scenario,
    paths: Vec<String>,
    work: &Path,
) -> ScenarioResult {
    let addr = server.addr.as_str();
    // Mean body size (and a status check) over every path: in a skewed
    // scenario a sample misses the few large answers that hold most of
    // the bytes (`tagged_as`'s hubs), and the baseline then sends less.
    // In a cached scenario this pass also fills the cache.
    let (mut bytes, mut n) = (0usize, 0usize);
    for p in &paths {
        match http_get(addr, p) {
            Ok(a) if a.status == 200 => {
                bytes += a.body.len();
                n += 1;
            }
            Ok(a) => die(&format!(
                "{}: GET {p} answered {} {}",
                sc.name,
                a.status,
                String::from_utf8_lossy(&a.body)
            )),
            Err(e) => die(&format!("{}: GET {p}: {e}", sc.name)),
        }
    }
    let mean_body = (bytes / n.max(1)).max(16);
    let paths_file = write_paths(work, sc.name, &paths);
    let script = write_script(
        work,
        &format!("{}.lua", sc.name),
        &paths_file,
        o.threads,
        0.0,
    );

    let wrk = |a: &str, script: &Path, secs: u64| {
        run_wrk(o, a, script, secs, o.connections)
            .unwrap_or_else(|e| die(&format!("{}: {e}", sc.name)))
    };
    let round_s = (o.duration / o.rounds).max(1);
    eprintln!(
        "{}: {} paths, mean body {} B; {} x ({} s server + {} s baseline), then {} s paced x2",
        sc.name,
        paths.len(),
        mean_body,
        o.rounds,
        round_s,
        round_s,
        o.paced
    );
    let mut baseline_args = vec![
        "--listen".into(),
        "127.0.0.1:0".into(),
        "--bench-static-body-bytes".into(),
        mean_body.to_string(),
    ];
    if o.pinned {
        baseline_args.extend(["--worker-threads".into(), "1".into()]);
    }
    let static_server = Server::start(&o.binary, &baseline_args, &work.join("baseline.log"));
    if o.pinned {
        crate::wrk::pin_server(static_server.pid);
    }
    let check =
        http_get(&static_server.addr, &paths[0]).unwrap_or_else(|e| die(&format!("baseline: {e}")));
    if check.status != 200 || check.body.len() != mean_body {
        die(&format!(
            "baseline answered {} with {} bytes (wanted 200 with {mean_body})",
            check.status,
            check.body.len()
        ));
    }
    wrk(addr, &script, o.warmup);
    wrk(&static_server.addr, &script, o.warmup);
    // Server and baseline alternate in rounds, so that drift of this
    // shared machine hits both alike.
    let (mut main_runs, mut base_runs) = (Vec::new(), Vec::new());
    let (mut hits, mut lookups) = (0.0, 0.0);
    let mut cpu_ticks = 0u64;
    let mut base_ticks = 0u64;
    let (mut round_ratios, mut round_cpu_ratios) = (Vec::new(), Vec::new());
    for _ in 0..o.rounds {
        let cpu0 = cpu_ticks_of(server.pid);
        let (hits0, misses0) = (
            server.metric("followgraph_cache_hits_total"),
            server.metric("followgraph_cache_misses_total"),
        );
        main_runs.push(wrk(addr, &script, round_s));
        let ticks = cpu_ticks_of(server.pid).saturating_sub(cpu0);
        cpu_ticks += ticks;
        let (hits1, misses1) = (
            server.metric("followgraph_cache_hits_total"),
            server.metric("followgraph_cache_misses_total"),
        );
        hits += hits1 - hits0;
        lookups += (hits1 - hits0) + (misses1 - misses0);
        let base0 = cpu_ticks_of(static_server.pid);
        base_runs.push(wrk(&static_server.addr, &script, round_s));
        let base = cpu_ticks_of(static_server.pid).saturating_sub(base0);
        base_ticks += base;
        let (m, b) = (
            &main_runs[main_runs.len() - 1],
            &base_runs[base_runs.len() - 1],
        );
        round_ratios.push(if b.rps > 0.0 { m.rps / b.rps } else { 0.0 });
        // CPU per request of each, baseline over server.
        let per = |ticks: u64, requests: u64| ticks as f64 / requests.max(1) as f64;
        let server_per = per(ticks, m.requests);
        round_cpu_ratios.push(if server_per > 0.0 {
            per(base, b.requests) / server_per
        } else {
            0.0
        });
    }
    let cache_hit_ratio = (lookups > 0.0).then(|| hits / lookups);
    let main = merge_runs(&main_runs);
    // Clock ticks are 10 ms (USER_HZ 100).
    let cpu_us_per_request = cpu_ticks as f64 * 10_000.0 / main.requests.max(1) as f64;
    let baseline = merge_runs(&base_runs);
    let baseline_cpu_us_per_request =
        base_ticks as f64 * 10_000.0 / baseline.requests.max(1) as f64;
    let ratio = if baseline.rps > 0.0 {
        main.rps / baseline.rps
    } else {
        0.0
    };

    let paced_target = (main.rps * 0.5).max(1.0);
    let paced_script = write_script(
        work,
        &format!("{}.paced.lua", sc.name),
        &paths_file,
        o.threads,
        paced_target,
    );
    let paced = wrk(addr, &paced_script, o.paced);
    // The same paced script on the baseline: the latency floor of this
    // machine, stack and client at that request rate.
    let paced_baseline = wrk(&static_server.addr, &paced_script, o.paced);
    drop(static_server);

    eprintln!(
        "{}: {:.0} rps (baseline {:.0}, ratio {:.2}); p50 {} p99 {} p99.9 {} us; at {:.0} rps: p99 {} us (baseline {} us){}",
        sc.name,
        main.rps,
        baseline.rps,
        ratio,
        main.p50_us,
        main.p99_us,
        main.p999_us,
        paced.rps,
        paced.p99_us,
        paced_baseline.p99_us,
        if main.non_2xx + main.errors > 0 {
            format!(" ({} non-2xx, {} socket errors)", main.non_2xx, main.errors)
        } else {
            String::new()
        }
    );
    ScenarioResult {
        name: sc.name,
        describe: sc.describe,
        cached: sc.cached,
        paths: paths.len(),
        mean_body,
        main,
        baseline,
        ratio,
        paced_target,
        paced_baseline,
        paced,
        cache_hit_ratio,
        min_ratio: sc.min_ratio,
        max_p99_us: sc.max_p99_us,
        cpu_us_per_request,
        baseline_cpu_us_per_request,
        round_ratios,
        round_cpu_ratios,
        pinned: o.pinned,
        items: sc.items,
    }
}

/// The median (the mean of the two middle values for an even count).
fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// utime + stime of a process, in clock ticks (0 when unreadable).
fn cpu_ticks_of(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after_name
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum()
}
