use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use followgraph::config::{
    CheckConfig, Cli, Command, GenerateConfig, ServeConfig, SnapshotsCommand, DEFAULT_SNAPSHOT,
};
use followgraph::http::{self, AppState, Listener};
use followgraph::live::{Live, ReloadOptions, Reloader, SnapshotSource, Trigger};

fn main() {
    let cli = Cli::parse();
    followgraph::logs::init(cli.log_format);
    followgraph::allocator::tune();
    let result = match cli.command {
        Some(Command::Generate(config)) => generate(&config),
        Some(Command::Serve(config)) => serve(config),
        Some(Command::Export(config)) => {
            followgraph::export::run(&config).map_err(|e| e.to_string())
        }
        Some(Command::Check(config)) => check(&config),
        Some(Command::Publish(config)) => {
            followgraph::root::commands::publish(&config).map_err(|e| e.to_string())
        }
        Some(Command::Snapshots(config)) => match &config.command {
            SnapshotsCommand::List(list) => {
                followgraph::root::commands::list(list).map_err(|e| e.to_string())
            }
        },
        Some(Command::Promote(config)) => {
            followgraph::root::commands::promote(&config).map_err(|e| e.to_string())
        }
        None => serve(ServeConfig::default()),
    };
    if let Err(message) = result {
        eprintln!("followgraph: {message}");
        std::process::exit(1);
    }
}

/// `snapshots` relative to the working directory, else the one committed
/// beside Cargo.toml (so the binary works from any directory).
fn snapshot_path(config: &ServeConfig) -> PathBuf {
    if config.snapshot.as_os_str() == DEFAULT_SNAPSHOT && !config.snapshot.exists() {
        return PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_SNAPSHOT);
    }
    config.snapshot.clone()
}

fn serve(config: ServeConfig) -> Result<(), String> {
    let root: SnapshotSource = Arc::new(
        followgraph::root::SnapshotRoot::open_path(&snapshot_path(&config), &config.store)
            .map_err(|e| e.to_string())?,
    );
    followgraph::process::raise_open_files();
    let live = Arc::new(Live::default());
    let mut app = AppState::new(live.clone(), &config);
    if let Some(options) = followgraph::tail::TailOptions::from_config(&config) {
        tracing::info!(
            database = %followgraph::pg::redact_url(&options.database_url),
            "following the indexer's database between snapshots"
        );
        let cache = app.cache.clone();
        app.tail = Some(
            followgraph::tail::Tail::start(options, live.clone(), move |_| cache.clear())
                .map_err(|e| format!("cannot start the tail: {e}"))?,
        );
    }
    let state = Arc::new(app);
    let limits = http::ConnectionLimits::from_config(&config);
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if config.worker_threads > 0 {
        runtime.worker_threads(config.worker_threads);
    }
    let runtime = runtime
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async move {
        let listener = http::bind(&config)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot read the bound address: {e}"))?;
        let admin = match config.admin_listen {
            Some(at) => Some(
                tokio::net::TcpListener::bind(at)
                    .await
                    .map_err(|e| format!("cannot listen on {at} (--admin-listen): {e}"))?,
            ),
            None => None,
        };
        // Registered before anything can be signalled: from here on SIGHUP
        // reloads instead of killing the process.
        let hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
            .map_err(|e| format!("cannot listen for SIGHUP: {e}"))?;
        let cache_owner = state.clone();
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let options = ReloadOptions {
            first_load_threads: cores,
            reload_threads: config.reload_threads(),
            delay: Duration::from_millis(config.debug_load_delay_ms),
        };
        if config.bench_static_body_bytes > 0 {
            announce(addr);
            http::serve(state, listener, Listener::All, limits, shutdown_signal()).await;
            return Ok(());
        }
        // With a database, the tail takes every loaded snapshot and is
        // the one that swaps (docs/live.md).
        let hand_off: Option<followgraph::live::HandOff> = match state.tail.clone() {
            Some(tail) => Some(Arc::new(move |graph, origin, took| {
                tail.hand_off(graph, origin, took)
            })),
            None => None,
        };
        // The first load runs in the background: /health answers and
        // /ready says 503 meanwhile; a first snapshot that fails to load
        // ends the process.
        let reloader = Arc::new(
            Reloader::start(
                root,
                live,
                options,
                hand_off,
                move |_| cache_owner.cache.clear(),
                |e| {
                    eprintln!("followgraph: cannot load snapshot: {e}");
                    std::process::exit(1);
                },
            )
            .map_err(|e| format!("cannot start the reloader: {e}"))?,
        );
        if config.poll_interval > 0 {
            reloader
                .poll_every(Duration::from_secs(config.poll_interval))
                .map_err(|e| format!("cannot start the poller: {e}"))?;
        }
        tokio::spawn(reload_on_sighup(hangup, reloader));
        announce(addr);
        let tail = state.tail.clone();
        serve_all(state, listener, admin, limits).await;
        if let Some(tail) = tail {
            tail.remove_compactions();
        }
        tracing::info!("stopped");
        Ok(())
    })
}

/// The one line on standard output, once connections are accepted.
fn announce(addr: std::net::SocketAddr) {
    use std::io::Write;
    println!("listening on http://{addr}");
    let _ = std::io::stdout().flush();
}

/// Serves the listener, and the admin one when there is one, until
/// SIGTERM or Ctrl-C; both then drain.
async fn serve_all(
    state: Arc<AppState>,
    listener: tokio::net::TcpListener,
    admin: Option<tokio::net::TcpListener>,
    limits: http::ConnectionLimits,
) {
    let Some(admin) = admin else {
        http::serve(state, listener, Listener::All, limits, shutdown_signal()).await;
        return;
    };
    if let Ok(at) = admin.local_addr() {
        println!("admin listening on http://{at}");
    }
    let (stop, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = stop.send(true);
    });
    let until = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let admin_side = tokio::spawn(http::serve(
        state.clone(),
        admin,
        Listener::Admin,
        limits.clone(),
        until(stopped.clone()),
    ));
    http::serve(state, listener, Listener::Public, limits, until(stopped)).await;
    let _ = admin_side.await;
}

async fn reload_on_sighup(mut hangup: tokio::signal::unix::Signal, reloader: Arc<Reloader>) {
    while hangup.recv().await.is_some() {
        tracing::info!("SIGHUP: reloading the snapshot");
        reloader.request(Trigger::Signal);
    }
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    tracing::info!("shutting down: finishing requests in flight");
}

fn generate(config: &GenerateConfig) -> Result<(), String> {
    use std::io::IsTerminal;
    let created_at_ms = followgraph::time::parse_iso_ms(&config.created_at)
        .ok_or_else(|| format!("--created-at {:?} is not ISO 8601 UTC", config.created_at))?;
    let options = followgraph::generate::GenerateOptions {
        accounts: config.accounts,
        seed: config.seed,
        out: config.out.clone().unwrap_or_default(),
        created_at_ms,
        progress: std::io::stderr().is_terminal(),
    };
    let started = std::time::Instant::now();
    if let Some(url) = &config.indexer_database_url {
        let summary = followgraph::indexer::generate_into_database(url, &options)
            .map_err(|e| format!("generate: {e}"))?;
        eprintln!(
            "wrote {summary} into {} in {:.1} s",
            followgraph::pg::redact_url(url),
            started.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    // An object-store root: written locally first, then published.
    let remote = match options.out.to_str().filter(|o| o.starts_with("s3://")) {
        Some(url) => Some(
            followgraph::root::SnapshotRoot::open(url, &config.store).map_err(|e| e.to_string())?,
        ),
        None => None,
    };
    let mut options = options;
    let staging = std::env::temp_dir().join(format!("followgraph-generate-{}", std::process::id()));
    if remote.is_some() {
        options.out = staging.clone();
    }
    let dir = followgraph::generate::generate(&options).map_err(|e| format!("generate: {e}"));
    let dir = match (&remote, dir) {
        (Some(root), Ok(dir)) => {
            let name = followgraph::snapshot::snapshot_name(&dir);
            let published = root.publish(&dir, &name, followgraph::root::ShrinkGuard::OFF, true);
            let _ = std::fs::remove_dir_all(&staging);
            published.map_err(|e| e.to_string())?;
            root.location(&name)
        }
        (None, dir) => dir?,
        (Some(_), Err(e)) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    eprintln!(
        "wrote {} in {:.1} s",
        dir.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `followgraph check PATH`: the server's whole load (validation and graph
/// build), then one line of counts on standard output.
fn check(config: &CheckConfig) -> Result<(), String> {
    let started = std::time::Instant::now();
    let graph =
        followgraph::graph::Graph::load_path(&config.snapshot).map_err(|e| e.to_string())?;
    let counts: Vec<String> = graph
        .table_counts
        .iter()
        .map(|(table, rows)| format!("{table}={rows}"))
        .collect();
    let name = graph.name.clone();
    drop(graph);
    let peak = followgraph::process::peak_rss_bytes().unwrap_or(0);
    println!(
        "ok {name} {} in {:.1} s peak_rss_bytes={peak}",
        counts.join(" "),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
