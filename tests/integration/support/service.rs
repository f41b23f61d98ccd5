//! `TestService`: the server's own request handling (the warp filter
//! `serve` runs behind hyper) driven in this process, without a socket,
//! over a snapshot written for the test and loaded as `serve` loads it.
//! The endpoint families' tests use it; what needs the process (reload
//! and signals, connection limits, hostile bytes, S3, export, the tail)
//! keeps `TestServer`. Its answers are the `Response`s of `http.rs`.
//!
//! What it leaves out is what hyper adds per connection (`Date`,
//! `Content-Length` from the body, dropping a HEAD's body, which it does
//! here as the client does).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use clap::Parser;
use followgraph::config::{Cli, Command};
use followgraph::http::{routes, AppState, Listener};
use followgraph::live::{Live, SnapshotSource};
use followgraph::snapshot::Tables;
use http_body_util::{BodyExt, Full};
use hyper::service::Service;

use super::http::{Requests, Response};
use super::process::serve_args_with;
use super::snapshots::{write_and_publish, CREATED_AT_MS};

pub struct TestService {
    runtime: tokio::runtime::Runtime,
    state: Arc<AppState>,
    /// Snapshot root (holds CURRENT and the snapshot directories; an
    /// empty directory when `open` serves one of the caller's).
    pub root: tempfile::TempDir,
}

impl TestService {
    /// Serves `tables` as `<root>/snap-1`, as `TestServer::start` does.
    pub fn start(tables: &Tables) -> TestService {
        Self::start_args(tables, &[])
    }

    /// `start` with the `extra` flags of `serve`.
    pub fn start_args(tables: &Tables, extra: &[&str]) -> TestService {
        let root = tempfile::tempdir().expect("tempdir");
        write_and_publish(root.path(), "snap-1", CREATED_AT_MS, tables);
        let mut service = Self::open(root.path(), extra);
        service.root = root;
        service
    }

    /// Serves the snapshot root (or snapshot directory) `snapshot` with
    /// the `extra` flags of `serve`.
    pub fn open(snapshot: &Path, extra: &[&str]) -> TestService {
        let root = tempfile::tempdir().expect("tempdir");
        let mut argv = vec!["followgraph".into()];
        argv.extend(serve_args_with(snapshot, extra));
        let config = match Cli::try_parse_from(argv).map(|cli| cli.command) {
            Ok(Some(Command::Serve(config))) => config,
            other => panic!("not a serve command line: {other:?}"),
        };
        let source: SnapshotSource = Arc::new(
            followgraph::root::SnapshotRoot::open_path(snapshot, &config.store)
                .unwrap_or_else(|e| panic!("open {}: {e}", snapshot.display())),
        );
        let (graph, _, took) = followgraph::live::build(&source)
            .unwrap_or_else(|e| panic!("the test's snapshot does not load: {e}"));
        let live = Arc::new(Live::default());
        live.publish(graph, took);
        let state = Arc::new(AppState::new(live, &config));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        TestService {
            runtime,
            state,
            root,
        }
    }
}

impl Requests for TestService {
    fn send(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<Response, String> {
        let label = format!("{method} {target}");
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(target)
            .header("Host", "127.0.0.1");
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .unwrap_or_else(|e| panic!("{label}: not a request: {e}"));
        let service = hyper_util::service::TowerToHyperService::new(warp::service(routes(
            self.state.clone(),
            Listener::All,
        )));
        self.runtime.block_on(async {
            let response = tokio::time::timeout(Duration::from_secs(30), service.call(request))
                .await
                .unwrap_or_else(|_| panic!("{label}: no answer after 30 s"))
                .unwrap_or_else(|e| match e {});
            let (parts, body) = response.into_parts();
            let mut bytes = body
                .collect()
                .await
                .unwrap_or_else(|e| panic!("{label}: body failed: {e}"))
                .to_bytes()
                .to_vec();
            if method == "HEAD" {
                bytes.clear();
            }
            Ok(Response {
                request: label,
                status: parts.status.as_u16(),
                headers: parts
                    .headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), String::from_utf8_lossy(v.as_bytes()).into()))
                    .collect(),
                body: bytes,
            })
        })
    }
}
