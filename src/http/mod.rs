//! The thin HTTP layer: one warp filter per endpoint, a fallback for
//! unknown paths, and one `recover` mapping `ApiError` to status + JSON.
//! Everything else (routing rules, validation, answers) is the engine's.

mod cache;
mod metrics;
mod server;

use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use warp::http::{header, HeaderValue, Method, Response, StatusCode};
use warp::path::FullPath;
use warp::reply::Response as WarpResponse;
use warp::{Filter, Rejection};

pub use cache::{CacheKey, ResponseCache};
pub use metrics::Metrics;
pub use server::{serve, ConnectionLimits};

use crate::config::ServeConfig;
use crate::error::ApiError;
use crate::live::{now_ms, Live};
use crate::query;
use crate::request::{self, Endpoint, Route};

impl warp::reject::Reject for ApiError {}

/// What every handler shares.
pub struct AppState {
    pub live: Arc<Live>,
    pub cache: ResponseCache,
    pub max_limit: u64,
    pub metrics: Metrics,
    /// Benchmark baseline mode: every endpoint answers this body.
    pub static_body: Option<Bytes>,
    pub max_uri_bytes: usize,
    /// Test aid: serve `/debug/panic`.
    pub debug_panic_route: bool,
}

impl AppState {
    pub fn new(live: Arc<Live>, config: &ServeConfig) -> Self {
        AppState {
            live,
            cache: ResponseCache::new(
                Duration::from_secs(config.cache_ttl),
                config.cache_max_bytes,
            ),
            max_limit: config.max_limit,
            metrics: Metrics::default(),
            static_body: (config.bench_static_body_bytes > 0)
                .then(|| static_body(config.bench_static_body_bytes)),
            max_uri_bytes: config.max_uri_bytes,
            debug_panic_route: config.debug_panic_route,
        }
    }
}

/// All routes, errors recovered, CORS header on every response.
pub fn routes(
    state: Arc<AppState>,
) -> impl Filter<Extract = (WarpResponse,), Error = Infallible> + Clone {
    let always = |_: &AppState| true;
    let api = operation(OPERATIONS[0], &state, always, |_| {
        json_response(StatusCode::OK, Bytes::from_static(br#"{"status":"ok"}"#))
    })
    .or(operation(
        OPERATIONS[1],
        &state,
        |state| state.debug_panic_route,
        |_| panic!("deliberate panic (--debug-panic-route)"),
    ))
    .unify()
    .or(operation(OPERATIONS[2], &state, always, ready))
    .unify()
    .or(operation(OPERATIONS[3], &state, always, metrics_text))
    .unify()
    .or(operation(OPERATIONS[4], &state, always, snapshot_info))
    .unify()
    .or(endpoint(Endpoint::ListDetails, &state))
    .unify()
    .or(endpoint(Endpoint::UserBadges, &state))
    .unify()
    .or(endpoint(Endpoint::ListBadges, &state))
    .unify()
    .or(endpoint(Endpoint::LeaderboardSearch, &state))
    .unify()
    .or(endpoint(Endpoint::UserNotifications, &state))
    .unify()
    .or(endpoint(Endpoint::UserFollowers, &state))
    .unify()
    .or(endpoint(Endpoint::ListFollowers, &state))
    .unify()
    .or(unknown_path(&state))
    .unify();
    uri_limit(state.max_uri_bytes)
        .and(api)
        .recover(recover)
        .unify()
        .map(|mut r: WarpResponse| {
            r.headers_mut().insert(
                header::ACCESS_CONTROL_ALLOW_ORIGIN,
                HeaderValue::from_static("*"),
            );
            r
        })
}

/// The operations endpoints' paths, outside the seven API routes and the
/// `/api/v1` namespace.
const OPERATIONS: [&str; 5] = ["/health", "/debug/panic", "/ready", "/metrics", "/snapshot"];

/// Rejects a path + query longer than `max` bytes (414) before routing.
fn uri_limit(max: usize) -> impl Filter<Extract = (), Error = Rejection> + Clone {
    warp::path::full()
        .and(raw_query())
        .and_then(move |path: FullPath, query: String| async move {
            if path.as_str().len() + query.len() > max {
                Err(warp::reject::custom(ApiError::UriTooLong { max }))
            } else {
                Ok(())
            }
        })
        .untuple_one()
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

fn raw_query() -> impl Filter<Extract = (String,), Error = Infallible> + Clone {
    warp::query::raw().or(warp::any().map(String::new)).unify()
}

/// The filter of one endpoint: matches its path (else rejects as not
/// found, so the next endpoint is tried) and answers it.
fn endpoint(ep: Endpoint, state: &Arc<AppState>) -> warp::filters::BoxedFilter<(WarpResponse,)> {
    let state = state.clone();
    // The cheap shape check runs first, so the other endpoints' filters
    // neither decode the path nor copy the query.
    let this_shape = warp::path::full().and_then(move |path: FullPath| async move {
        if ep.may_match(path.as_str()) {
            Ok(path)
        } else {
            Err(warp::reject::not_found())
        }
    });
    this_shape
        .and(warp::method())
        .and(raw_query())
        .and_then(move |path: FullPath, method: Method, query: String| {
            let state = state.clone();
            async move {
                let (decoded, route) = match request::route(path.as_str()) {
                    (decoded, Some(route)) if route.endpoint == ep => (decoded, route),
                    _ => return Err(warp::reject::not_found()),
                };
                let started = Instant::now();
                let result = guarded(path.as_str(), || {
                    answer(&state, &method, decoded, &route, &query)
                });
                state
                    .metrics
                    .observe(Some(ep), status_of(&result), started.elapsed());
                result.map_err(warp::reject::custom)
            }
        })
        .boxed()
}

fn status_of(result: &Result<WarpResponse, ApiError>) -> u16 {
    match result {
        Ok(r) => r.status().as_u16(),
        Err(e) => e.status(),
    }
}

/// Runs last: the path matched no endpoint.
fn unknown_path(
    state: &Arc<AppState>,
) -> impl Filter<Extract = (WarpResponse,), Error = Rejection> + Clone {
    let state = state.clone();
    warp::path::full().and_then(move |path: FullPath| {
        let state = state.clone();
        async move {
            // Each request gets at most one custom rejection (warp would
            // otherwise pick among them): paths that a filter above owns
            // are not this filter's to report.
            Err::<WarpResponse, _>(match request::route(path.as_str()) {
                _ if OPERATIONS.contains(&path.as_str()) => warp::reject::not_found(),
                (decoded, None) => {
                    state.metrics.observe(None, 404, Duration::ZERO);
                    warp::reject::custom(ApiError::UnknownPath(decoded))
                }
                (_, Some(_)) => warp::reject::not_found(),
            })
        }
    })
}

/// An operations endpoint at exactly `path` (GET and HEAD; OPTIONS is a
/// preflight like the API's). A disabled one is an unknown path for every
/// method.
fn operation(
    path: &'static str,
    state: &Arc<AppState>,
    enabled: fn(&AppState) -> bool,
    render: fn(&AppState) -> WarpResponse,
) -> warp::filters::BoxedFilter<(WarpResponse,)> {
    let state = state.clone();
    warp::method()
        .and(warp::path::full())
        .and_then(move |method: Method, full: FullPath| {
            let state = state.clone();
            async move {
                if full.as_str() != path {
                    return Err(warp::reject::not_found());
                }
                let started = Instant::now();
                let result = if !enabled(&state) {
                    Err(ApiError::UnknownPath(path.to_owned()))
                } else if method == Method::GET || method == Method::HEAD {
                    guarded(path, || Ok(render(&state)))
                } else if method == Method::OPTIONS {
                    Ok(preflight())
                } else {
                    Err(ApiError::MethodNotAllowed {
                        method: method.as_str().to_owned(),
                        path: path.to_owned(),
                    })
                };
                state
                    .metrics
                    .observe(None, status_of(&result), started.elapsed());
                result.map_err(warp::reject::custom)
            }
        })
        .boxed()
}

fn ready(state: &AppState) -> WarpResponse {
    match state.live.current() {
        Some(_) => json_response(StatusCode::OK, Bytes::from_static(br#"{"status":"ready"}"#)),
        None => json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            Bytes::from_static(br#"{"status":"loading"}"#),
        ),
    }
}

fn metrics_text(state: &AppState) -> WarpResponse {
    let text = state
        .metrics
        .render(&state.live, state.cache.len(), state.cache.bytes());
    let mut r = Response::new(Bytes::from(text).into());
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    r
}

fn snapshot_info(state: &AppState) -> WarpResponse {
    let Some(served) = state.live.current() else {
        let e = ApiError::NotReady;
        return json_response(StatusCode::SERVICE_UNAVAILABLE, Bytes::from(e.body()));
    };
    let g = &served.graph;
    let tables: serde_json::Map<String, serde_json::Value> = crate::snapshot::TABLE_NAMES
        .iter()
        .zip(g.table_counts.as_array())
        .map(|(name, rows)| (name.to_string(), rows.into()))
        .collect();
    let body = serde_json::json!({
        "name": g.name,
        "generation": served.generation,
        "created_at": g.created_at,
        "loaded_at": crate::time::format_iso_ms(served.loaded_at_ms),
        "load_duration_ms": served.load_duration.as_millis() as u64,
        "tables": tables,
        "last_error": state.live.last_error(),
    });
    json_response(StatusCode::OK, Bytes::from(body.to_string()))
}

fn json_response(status: StatusCode, body: Bytes) -> WarpResponse {
    let mut r = Response::new(body.into());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

const ALLOWED: &str = "GET, HEAD, OPTIONS";

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

/// 204 to a CORS preflight, which validates nothing.
fn preflight() -> WarpResponse {
    let mut r = Response::new(Bytes::new().into());
    *r.status_mut() = StatusCode::NO_CONTENT;
    let h = r.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(ALLOWED),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("*"),
    );
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("86400"),
    );
    r
}

fn answer(
    state: &AppState,
    method: &Method,
    decoded_path: String,
    route: &Route,
    query: &str,
) -> Result<WarpResponse, ApiError> {
    if method == Method::OPTIONS {
        return Ok(preflight());
    }
    if method != Method::GET && method != Method::HEAD {
        return Err(ApiError::MethodNotAllowed {
            method: method.as_str().to_owned(),
            path: decoded_path,
        });
    }
    if let Some(body) = &state.static_body {
        return Ok(json_response(StatusCode::OK, body.clone()));
    }
    let req = request::parse_request(route, query, state.max_limit)?;
    let Some(served) = state.live.current() else {
        return Err(ApiError::NotReady);
    };
    let graph = &served.graph;
    let target = query::resolve(graph, &req.subject)?;
    let key = CacheKey {
        generation: served.generation,
        endpoint: req.endpoint,
        target,
        params: req.params.clone(),
    };
    if !req.fresh {
        if let Some(body) = state.cache.get(&key) {
            state.metrics.cache_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(json_response(StatusCode::OK, body));
        }
    }
    state.metrics.cache_misses.fetch_add(1, Ordering::Relaxed);
    let body = Bytes::from(query::render(graph, &req, &target, now_ms()));
    state.cache.insert(key, body.clone());
    Ok(json_response(StatusCode::OK, body))
}

async fn recover(rejection: Rejection) -> Result<WarpResponse, Infallible> {
    let error = if let Some(e) = rejection.find::<ApiError>() {
        e.clone()
    } else if rejection.is_not_found() {
        ApiError::UnknownPath(String::new())
    } else {
        // warp's own rejections (e.g. a malformed query it parsed) are
        // still the client's fault.
        ApiError::BadParameter(format!("bad request: {rejection:?}"))
    };
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let mut r = json_response(status, Bytes::from(error.body()));
    if let ApiError::MethodNotAllowed { .. } = error {
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static(ALLOWED));
    }
    Ok(r)
}

/// Binds `config.listen`.
pub async fn bind(config: &ServeConfig) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(config.listen).await
}
