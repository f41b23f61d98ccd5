//! The accept loop: warp's filter served through hyper directly, with the
//! limits warp's own server does not expose (connection cap, request head
//! size, header read timeout) and a graceful shutdown.

use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::{routes, AppState, Listener};
use crate::config::ServeConfig;

/// Connection-level limits.
#[derive(Clone, Debug)]
pub struct ConnectionLimits {
    pub max_connections: usize,
    pub header_read_timeout: Duration,
    pub max_header_bytes: usize,
}

impl ConnectionLimits {
    pub fn from_config(config: &ServeConfig) -> Self {
        ConnectionLimits {
            max_connections: config.max_connections.max(1),
            header_read_timeout: Duration::from_secs(config.header_read_timeout.max(1)),
            // hyper's minimum buffer is 8 KiB.
            max_header_bytes: config.max_header_bytes.max(8192),
        }
    }
}

/// How long shutdown waits for requests in flight.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves until `shutdown` resolves, then stops accepting and lets the
/// connections finish their requests in flight.
pub async fn serve(
    state: Arc<AppState>,
    listener: TcpListener,
    answers: Listener,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let service = warp::service(routes(state, answers));
    let graceful = GracefulShutdown::new();
    // A permit per connection: at the cap, accepting waits (the kernel's
    // backlog holds new connections) rather than refusing.
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: back off briefly.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            // The buffer bound stops reading; the header size check makes
            // the limit exact once a head is parsed.
            .max_buf_size(limits.max_header_bytes)
            .max_header_size(limits.max_header_bytes)
            .serve_connection(
                TokioIo::new(stream),
                TowerToHyperService::new(service.clone()),
            );
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(DRAIN_TIMEOUT) => {
            tracing::warn!("connections still open after the drain timeout");
        }
    }
}
