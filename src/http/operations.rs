//! The operations endpoints, outside `/api/v1`: liveness (`/health`),
//! readiness (`/ready`, 503 until a snapshot is live), Prometheus metrics,
//! the live snapshot's facts (`/snapshot`), the build (`/version`) and the
//! panic route tests use
//! (`/debug/panic`, an unknown path unless enabled). They answer their
//! method (GET and HEAD) and OPTIONS as a preflight, like the API, and are
//! counted under `other`.

use std::time::Instant;

use bytes::Bytes;
use warp::http::{header, HeaderValue, Method, Response, StatusCode};
use warp::reply::Response as WarpResponse;

use super::{error_response, guarded, json_response, preflight, status_of, AppState, Incoming};
use crate::api::Operation;
use crate::error::ApiError;

pub(super) fn respond(state: &AppState, op: Operation, request: &Incoming<'_>) -> WarpResponse {
    let started = Instant::now();
    let method = request.method;
    let path = op.path();
    let allowed = op.method();
    let result = if op == Operation::DebugPanic && !state.debug_panic_route {
        Err(ApiError::UnknownPath(path.to_owned()))
    } else if allowed.accepts(method.as_str()) {
        guarded(path, || Ok(render(state, op)))
    } else if method == Method::OPTIONS {
        Ok(preflight(allowed, request.requested_headers))
    } else {
        Err(allowed.not_allowed(method.as_str(), path.to_owned()))
    };
    state
        .metrics
        .observe(None, status_of(&result), started.elapsed());
    result.unwrap_or_else(|e| error_response(&e))
}

fn render(state: &AppState, op: Operation) -> WarpResponse {
    match op {
        Operation::Health => {
            json_response(StatusCode::OK, Bytes::from_static(br#"{"status":"ok"}"#))
        }
        Operation::Ready => ready(state),
        Operation::Metrics => metrics_text(state),
        Operation::Snapshot => snapshot_info(state),
        Operation::Version => json_response(StatusCode::OK, Bytes::from(crate::version::json())),
        Operation::DebugPanic => panic!("deliberate panic (--debug-panic-route)"),
    }
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
    let mut text = state
        .metrics
        .render(&state.live, state.cache.len(), state.cache.bytes());
    if let Some(tail) = &state.tail {
        super::metrics::render_tail(tail, &mut text);
    }
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
    let tables: serde_json::Map<String, serde_json::Value> = g
        .table_counts
        .iter()
        .map(|(table, rows)| (table.name().to_owned(), rows.into()))
        .collect();
    // The graph's heap by index (estimates: capacities times sizes).
    let memory: serde_json::Map<String, serde_json::Value> = g
        .memory_by_part()
        .into_iter()
        .map(|(part, bytes)| (part.to_owned(), (bytes as u64).into()))
        .collect();
    let body = serde_json::json!({
        "name": g.name,
        "generation": served.generation,
        "created_at": g.created_at,
        "loaded_at": crate::time::format_iso_ms(served.loaded_at_ms),
        "load_duration_ms": served.load_duration.as_millis() as u64,
        "tables": tables,
        "memory_bytes": memory,
        "last_error": state.live.last_error(),
    });
    let mut body = body;
    if let Some(anchor) = &g.anchor {
        body["source"] = serde_json::to_value(anchor.to_json()).expect("serialises");
    }
    if let Some(tail) = &state.tail {
        body["tail"] = tail.to_json();
    }
    json_response(StatusCode::OK, Bytes::from(body.to_string()))
}
