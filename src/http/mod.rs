//! The thin HTTP layer: one warp filter that routes every request once
//! through the engine's table of endpoints, answers the operations
//! endpoints (operations.rs) and the API ones (the engine's pipeline with
//! the response cache between resolving and rendering), and maps every
//! `ApiError` to its status and JSON body (`error_response`). Every
//! response carries `Access-Control-Allow-Origin: *`. Routing rules,
//! validation and answers are the engine's (`crate::api`).

mod cache;
mod metrics;
mod operations;
mod server;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use warp::http::{header, HeaderValue, Method, Response, StatusCode};
use warp::path::FullPath;
use warp::reply::Response as WarpResponse;
use warp::Filter;

pub use cache::{CacheKey, ResponseCache};
pub use metrics::Metrics;
pub use server::{serve, ConnectionLimits};

use crate::api::{self, Operation, Route};
use crate::config::ServeConfig;
use crate::error::ApiError;
use crate::live::{now_ms, Live};

/// What every handler shares.
pub struct AppState {
    pub live: Arc<Live>,
    pub cache: Arc<ResponseCache>,
    /// Following the indexer's database (`--database-url`).
    pub tail: Option<crate::tail::Tail>,
    pub max_limit: u64,
    /// `--qr-url-prefix`.
    pub qr_url_prefix: String,
    pub metrics: Metrics,
    /// Benchmark baseline mode: every endpoint answers this body.
    pub static_body: Option<Bytes>,
    pub max_uri_bytes: usize,
    /// Test aid: serve `/debug/panic`.
    pub debug_panic_route: bool,
    /// Test aid: how long a possibly long render waits before it starts.
    pub debug_render_delay: Duration,
}

impl AppState {
    pub fn new(live: Arc<Live>, config: &ServeConfig) -> Self {
        AppState {
            live,
            cache: Arc::new(ResponseCache::new(
                Duration::from_secs(config.cache_ttl),
                config.cache_max_bytes,
            )),
            tail: None,
            max_limit: config.max_limit,
            qr_url_prefix: config.qr_url_prefix.clone(),
            metrics: Metrics::default(),
            static_body: (config.bench_static_body_bytes > 0)
                .then(|| static_body(config.bench_static_body_bytes)),
            max_uri_bytes: config.max_uri_bytes,
            debug_panic_route: config.debug_panic_route,
            debug_render_delay: Duration::from_millis(config.debug_render_delay_ms),
        }
    }
}

/// Which paths a listener answers (`--admin-listen`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listener {
    /// Everything: the only listener.
    All,
    /// The API, `/health` and `/ready` (for probes), beside an admin port.
    Public,
    /// The operations endpoints only.
    Admin,
}

impl Listener {
    fn serves_operation(self, op: Operation) -> bool {
        match self {
            Listener::All | Listener::Admin => true,
            Listener::Public => matches!(op, Operation::Health | Operation::Ready),
        }
    }
}

/// Every request: method, path, raw query, the preflight's requested
/// headers and (POST only) the body, answered by `respond`.
pub fn routes(
    state: Arc<AppState>,
    listener: Listener,
) -> impl Filter<Extract = (WarpResponse,), Error = Infallible> + Clone {
    warp::method()
        .and(warp::path::full())
        .and(raw_query())
        .and(requested_headers())
        .and(body_stream())
        .then(
            move |method: Method,
                  path: FullPath,
                  query: String,
                  requested: Option<String>,
                  body: Option<BodyStream>| {
                let state = state.clone();
                async move {
                    // Only a POST's body is read (only 32 takes one), and
                    // at most one byte past the limit.
                    let body = match body {
                        Some(stream) if method == Method::POST => {
                            Some(read_body(stream, MAX_BODY_BYTES).await)
                        }
                        _ => None,
                    };
                    // With a tail, `cache=fresh` is a read barrier: wait
                    // (no guard held) for a poll that started after now.
                    let barrier = match &state.tail {
                        Some(tail)
                            if listener != Listener::Admin
                                && wants_fresh(&method, path.as_str(), &query) =>
                        {
                            Some(tail.barrier().await)
                        }
                        _ => None,
                    };
                    let request = Incoming {
                        listener,
                        method: &method,
                        raw_path: path.as_str(),
                        query: &query,
                        requested_headers: requested.as_deref(),
                        body: body.as_ref(),
                    };
                    let mut r = respond(&state, &request);
                    let headers = r.headers_mut();
                    headers.insert(
                        header::ACCESS_CONTROL_ALLOW_ORIGIN,
                        HeaderValue::from_static("*"),
                    );
                    if let Some(lag) = barrier {
                        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
                        if let Some(ms) = lag {
                            headers.insert("x-followgraph-lag-ms", HeaderValue::from(ms));
                        }
                    }
                    r
                }
            },
        )
}

/// A GET (or HEAD) of an API endpoint with `cache=fresh`: what the tail's
/// read barrier applies to.
fn wants_fresh(method: &Method, raw_path: &str, query: &str) -> bool {
    (method == Method::GET || method == Method::HEAD)
        && api::Query::parse(query).fresh() == Ok(true)
        && Operation::at(raw_path).is_none()
        && api::route(raw_path).1.is_some()
}

/// Largest body 32 takes; above: 413.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// How long a body may take to arrive.
const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

type BodyStream =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<Bytes, warp::Error>> + Send>>;

fn body_stream() -> impl Filter<Extract = (Option<BodyStream>,), Error = Infallible> + Clone {
    warp::body::stream()
        .map(boxed_body)
        .or(warp::any().map(|| None))
        .unify()
}

fn boxed_body<S, B>(stream: S) -> Option<BodyStream>
where
    S: futures_util::Stream<Item = Result<B, warp::Error>> + Send + 'static,
    B: bytes::Buf,
{
    use futures_util::StreamExt;
    let chunks = stream.map(|chunk| chunk.map(|mut buf| buf.copy_to_bytes(buf.remaining())));
    Some(Box::pin(chunks))
}

/// A POST body as read.
enum BodyRead {
    Complete(Vec<u8>),
    TooLarge,
    /// Broken off, or not received within `BODY_READ_TIMEOUT`.
    Failed,
}

async fn read_body(mut stream: BodyStream, max: usize) -> BodyRead {
    use futures_util::StreamExt;
    let read = async {
        let mut body = Vec::new();
        while let Some(chunk) = stream.next().await {
            let Ok(chunk) = chunk else {
                return BodyRead::Failed;
            };
            if body.len() + chunk.len() > max {
                return BodyRead::TooLarge;
            }
            body.extend_from_slice(&chunk);
        }
        BodyRead::Complete(body)
    };
    tokio::time::timeout(BODY_READ_TIMEOUT, read)
        .await
        .unwrap_or(BodyRead::Failed)
}

fn raw_query() -> impl Filter<Extract = (String,), Error = Infallible> + Clone {
    warp::query::raw().or(warp::any().map(String::new)).unify()
}

/// A preflight's `Access-Control-Request-Headers`, echoed in its answer
/// (one that is not visible ASCII is as if absent).
fn requested_headers() -> impl Filter<Extract = (Option<String>,), Error = Infallible> + Clone {
    warp::header::optional::<String>("access-control-request-headers")
        .or(warp::any().map(|| None))
        .unify()
}

/// What `respond` reads of a request.
struct Incoming<'a> {
    listener: Listener,
    method: &'a Method,
    raw_path: &'a str,
    query: &'a str,
    requested_headers: Option<&'a str>,
    /// A POST's body.
    body: Option<&'a BodyRead>,
}

/// The URI limit (414, before routing, uncounted), then the operations
/// endpoint or API endpoint the path names, else 404.
fn respond(state: &AppState, request: &Incoming<'_>) -> WarpResponse {
    let (method, raw_path, query) = (request.method, request.raw_path, request.query);
    let max = state.max_uri_bytes;
    if raw_path.len() + query.len() > max {
        return error_response(&ApiError::UriTooLong { max });
    }
    if let Some(op) = Operation::at(raw_path) {
        if request.listener.serves_operation(op) {
            return operations::respond(state, op, request);
        }
    }
    let (decoded, route) = api::route(raw_path);
    let route = route.filter(|_| request.listener != Listener::Admin);
    let Some(route) = route else {
        state.metrics.observe(None, 404, Duration::ZERO);
        return error_response(&ApiError::UnknownPath(decoded));
    };
    let started = Instant::now();
    if method == Method::OPTIONS {
        let r = preflight(route.endpoint.method(), request.requested_headers);
        state
            .metrics
            .observe(Some(route.endpoint), 204, started.elapsed());
        return r;
    }
    let result = guarded(raw_path, || answer(state, request, decoded, &route));
    state
        .metrics
        .observe(Some(route.endpoint), status_of(&result), started.elapsed());
    result.unwrap_or_else(|e| error_response(&e))
}

/// An API endpoint: the preflight, the method, then (unless in static-body
/// mode) parse, resolve against the live snapshot, the cache, render.
fn answer(
    state: &AppState,
    incoming: &Incoming<'_>,
    decoded_path: String,
    route: &Route,
) -> Result<WarpResponse, ApiError> {
    let method = incoming.method;
    let allowed = route.endpoint.method();
    if !allowed.accepts(method.as_str()) {
        return Err(allowed.not_allowed(method.as_str(), decoded_path));
    }
    if let Some(body) = &state.static_body {
        return Ok(json_response(StatusCode::OK, body.clone()));
    }
    let mut request = api::parse(route, incoming.query, state.max_limit)?;
    if route.endpoint.method() == api::Method::Post {
        request = match incoming.body {
            Some(BodyRead::Complete(body)) => request.with_body(body)?,
            Some(BodyRead::TooLarge) => {
                return Err(ApiError::BodyTooLarge {
                    max: MAX_BODY_BYTES,
                })
            }
            Some(BodyRead::Failed) | None => {
                return Err(ApiError::BadBody("the body could not be read".into()))
            }
        };
    }
    // `answer` is synchronous: the guard never crosses an `.await`.
    let guard = state.live.guard();
    let Some(served) = guard.as_ref() else {
        return Err(ApiError::NotReady);
    };
    let graph = &served.graph;
    let fresh = request.fresh;
    // Taken before `resolve` consumes the request.
    let cacheable = request.cacheable();
    let key = CacheKey {
        generation: served.generation,
        call: request.resolve(graph)?,
    };
    if !fresh && cacheable {
        if let Some(body) = state.cache.get(&key) {
            state.metrics.cache_hits.add(1);
            return Ok(ok_response(route.endpoint, body));
        }
    }
    state.metrics.cache_misses.add(1);
    let cache = cacheable.then_some(&*state.cache);
    let env = api::RenderEnv {
        now_ms: now_ms(),
        qr_url_prefix: &state.qr_url_prefix,
    };
    let body = if key.call.may_render_long() {
        render_off_worker(|| {
            std::thread::sleep(state.debug_render_delay);
            render_body(graph, key, env, cache)
        })
    } else {
        render_body(graph, key, env, cache)
    };
    Ok(ok_response(route.endpoint, body))
}

/// Bodies up to this size are copied out of the thread's render buffer.
const COPIED_BODY_MAX: usize = 16 * 1024;

thread_local! {
    static RENDER_BUFFER: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Renders into this worker thread's reused buffer, then stores the
/// body in `cache` (when the answer is cached).
/// - A small body is copied out at its exact size, rather than rendered
///   into a fresh `String`: that cost a 1 KiB allocation a request (glibc
///   consolidates its small free chunks on every request of that size)
///   and a shrink before the cache, whose bound counts lengths. When the
///   cache already holds the same bytes, `ResponseCache::store` answers
///   those and copies nothing.
/// - A large body is handed over whole and the buffer starts again, so no
///   thread keeps a large one.
fn render_body(
    graph: &crate::graph::Graph,
    key: CacheKey,
    env: api::RenderEnv<'_>,
    cache: Option<&ResponseCache>,
) -> Bytes {
    RENDER_BUFFER.with(|buffer| {
        let mut buffer = buffer.borrow_mut();
        buffer.clear();
        api::render_into(graph, &key.call, env, &mut buffer);
        if buffer.len() <= COPIED_BODY_MAX {
            return match cache {
                Some(cache) => cache.store(key, buffer.as_bytes()),
                None => Bytes::copy_from_slice(buffer.as_bytes()),
            };
        }
        let mut body = std::mem::take(&mut *buffer);
        if body.capacity() - body.len() > body.len() / 8 {
            body.shrink_to_fit();
        }
        let body = Bytes::from(body);
        if let Some(cache) = cache {
            cache.insert(key, body.clone());
        }
        body
    })
}

/// Runs a render that may be long (`Call::may_render_long`) with this
/// worker's other tasks handed to another thread first. Rendered in
/// place, it would hold every connection queued on this worker for as
/// long as it takes (a task waiting in a worker's LIFO slot is not
/// stolen), so quick requests queued behind it would wait for the whole
/// render (docs/performance.md, "Rendering a long answer in place").
fn render_off_worker(render: impl FnOnce() -> Bytes) -> Bytes {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(render),
        // A single-threaded runtime has no other worker to hand them to.
        _ => render(),
    }
}

/// Runs a handler, turning a panic (a bug) into a 500 JSON answer and an
/// error log line instead of a dropped connection.
fn guarded(
    what: &str,
    handler: impl FnOnce() -> Result<WarpResponse, ApiError>,
) -> Result<WarpResponse, ApiError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(handler)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        tracing::error!(request = what, panic = %message, "handler panicked");
        Err(ApiError::Internal)
    })
}

fn status_of(result: &Result<WarpResponse, ApiError>) -> u16 {
    match result {
        Ok(r) => r.status().as_u16(),
        Err(e) => e.status(),
    }
}

/// The one mapping of an `ApiError` to a response: its status and JSON
/// body, and `Allow` on a 405.
fn error_response(error: &ApiError) -> WarpResponse {
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let mut r = json_response(status, Bytes::from(error.body()));
    if let ApiError::MethodNotAllowed { allow, .. } = error {
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static(allow));
    }
    r
}

fn json_response(status: StatusCode, body: Bytes) -> WarpResponse {
    typed_response(status, "application/json", body)
}

/// A 200 answering `endpoint`, typed as its family's answers are.
fn ok_response(endpoint: api::Endpoint, body: Bytes) -> WarpResponse {
    typed_response(StatusCode::OK, endpoint.family().content_type(), body)
}

fn typed_response(status: StatusCode, content_type: &'static str, body: Bytes) -> WarpResponse {
    let mut r = Response::new(body.into());
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

/// A valid JSON body of exactly `len` bytes (at least 11), for the
/// benchmark baseline: same stack and routes, no engine work.
fn static_body(len: usize) -> Bytes {
    let mut body = String::with_capacity(len.max(11));
    body.push_str("{\"pad\":\"");
    while body.len() + 2 < len {
        body.push('x');
    }
    body.push_str("\"}");
    Bytes::from(body)
}

/// 204 to a CORS preflight, which validates nothing; the headers asked
/// for are allowed as sent.
fn preflight(allowed: api::Method, requested_headers: Option<&str>) -> WarpResponse {
    let mut r = Response::new(Bytes::new().into());
    *r.status_mut() = StatusCode::NO_CONTENT;
    let h = r.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(allowed.allowed()),
    );
    if let Some(value) = requested_headers.and_then(|v| HeaderValue::from_str(v).ok()) {
        h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, value);
    }
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("86400"),
    );
    r
}

/// Connections the kernel may queue before they are accepted (it caps
/// this at `net.core.somaxconn`): a burst of thousands of connections
/// opened at once queues while the accept loop drains it.
const LISTEN_BACKLOG: u32 = 4096;

/// Binds `config.listen`, and warns when the open-files limit is below
/// what `max_connections` connections need.
pub async fn bind(config: &ServeConfig) -> std::io::Result<tokio::net::TcpListener> {
    let socket = match config.listen {
        std::net::SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        std::net::SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(config.listen)?;
    let listener = socket.listen(LISTEN_BACKLOG)?;
    if let Some((limit, _)) = crate::process::open_files() {
        // Descriptors besides connections: the listener, snapshot files
        // during a reload, logs.
        let needed = config.max_connections as u64 + 64;
        if limit < needed {
            tracing::warn!(
                open_files_limit = limit,
                max_connections = config.max_connections,
                "the open-files limit is below --max-connections: connections past it fail to be accepted; raise it (ulimit -n {needed}) or lower --max-connections"
            );
        }
    }
    Ok(listener)
}
