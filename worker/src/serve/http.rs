//! The HTTP side of `kinetoscope serve`: axum on a current-thread tokio runtime, connections
//! accepted and bounded by [`super::limits`] (connection limit, header and idle timeouts),
//! every request and response through [`super::headers`] (Host check, security headers,
//! same-origin redirects).
//!
//! Routes (GET and HEAD only; anything else is 405, nothing writes):
//! - `/index.json`: a fresh scan of the log directory on every request, so traces written
//!   while the server runs appear on reload (`Cache-Control: no-store`); step counts are
//!   those known so far (counted in the background, `super::steps`).
//! - `/logs/DIR/run.json`: the run manifest of a directory, from a fresh scan of it.
//! - `/logs/PATH`: a trace file, if [`super::guard`] lets it through, streamed by tower-http's
//!   `ServeFile` (HTTP Range, `ETag`-less conditional requests on `Last-Modified`); `.gz` files
//!   go out as stored (`application/gzip`, no `Content-Encoding`): the page inflates them.
//!   A trace a job is still writing goes out as long as it was when opened: `ServeFile`
//!   announces that length and hyper sends no body past a `Content-Length`
//!   (`tests/serve_live.rs` holds it to that).
//! - `/` and `/index.html` with a log directory: the site's page marked as having a listing
//!   ([`super::page`]);
//! - anything else: the built site (tower-http's `ServeDir`, which refuses traversal itself).
//!
//! Paths longer than any file's are 414 ([`guard::length`]), hidden `/logs/` paths 404.
//!
//! File-system work (scan, guard) runs on tokio's blocking pool so a slow disk never stalls
//! the accept loop.

use super::guard::{self, Refusal};
use super::headers::text;
use super::index::{self, LOGS, RUN_MANIFEST};
use super::limits::{self, Limits};
use super::scan;
use super::steps::StepCounts;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use tower::ServiceExt;
use tower_http::services::{ServeDir, ServeFile};

/// What the server serves.
#[derive(Clone, Debug)]
pub struct Served {
    /// The log directory and its listing; without one there is no `/index.json`, and the page
    /// opens its demo trace.
    pub logs: Option<Logs>,
    /// The built site (`index.html` and its assets).
    pub site: PathBuf,
}

/// A log directory the server lists (`/index.json`) and serves (`/logs/...`).
#[derive(Clone, Debug)]
pub struct Logs {
    /// The log directory, canonical.
    pub dir: PathBuf,
    /// Its name, shown for traces at its top level.
    pub root_name: String,
    /// Step counts, filled in the background ([`StepCounts::start`]).
    pub steps: StepCounts,
}

/// Binds `addr`, calls `ready` with the bound address (port 0 picks a free one), then serves
/// within `limits` until the process ends.
///
/// # Errors
/// The runtime cannot start or the address cannot be bound.
pub fn run(served: Served, addr: SocketAddr, limits: Limits, ready: impl FnOnce(SocketAddr)) -> Result<(), String> {
    // Timers: hyper's header-read timeout, the idle timeout and the accept back-off.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server runtime: {e}"))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let bound = listener.local_addr().map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        ready(bound);
        limits::serve(listener, router(served, addr.ip()), limits).await
    })
}

/// The routes over `served`, for a server listening on `host` (the Host check,
/// [`super::headers`]).
pub fn router(served: Served, host: IpAddr) -> Router {
    let site_dir = Arc::new(served.site);
    let site_files = Router::new().fallback(site).with_state(site_dir.clone());
    let routes = match served.logs {
        Some(served_logs) => Router::new()
            .route("/index.json", get(listing))
            .route(&format!("/{LOGS}/{{*path}}"), get(logs))
            .with_state(Arc::new(served_logs))
            .merge(Router::new().route("/", get(page)).route("/index.html", get(page)).with_state(site_dir))
            .merge(site_files),
        None => site_files,
    };
    routes.layer(axum::middleware::from_fn_with_state(host, super::headers::policy))
}

/// `/` with a listing: the site's `index.html` marked so the page asks for it
/// ([`super::page`]), read per request so a rebuilt site is served as built.
async fn page(State(site): State<Arc<PathBuf>>) -> Response {
    let path = site.join("index.html");
    match tokio::fs::read_to_string(&path).await {
        Ok(html) => ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], super::page::with_gallery(&html)).into_response(),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("cannot read {}: {e}", path.display())),
    }
}

/// Anything else: a file of the built site.
async fn site(State(site): State<Arc<PathBuf>>, request: Request) -> Response {
    if let Err(refusal) = guard::length(request.uri().path()) {
        return refused(refusal);
    }
    match ServeDir::new(site.as_path()).try_call(request).await {
        Ok(response) => response.into_response(),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("cannot read the site: {e}")),
    }
}

/// `/index.json`.
async fn listing(State(served): State<Arc<Logs>>) -> Response {
    let scanned = tokio::task::spawn_blocking(move || {
        let mut listing = scan::scan(&served.dir)?;
        for trace in listing.runs.iter_mut().flat_map(|r| r.traces.iter_mut()) {
            let counted = served.steps.get(served.dir.join(&trace.path), trace.size, trace.mtime_ms);
            trace.steps = counted.map(|c| c.steps);
            trace.writing |= counted.is_some_and(|c| !c.complete);
        }
        Ok::<_, String>(index::index(&listing, &served.root_name))
    })
    .await;
    match scanned {
        Ok(Ok(value)) => json(&value),
        Ok(Err(reason)) => text(StatusCode::INTERNAL_SERVER_ERROR, reason),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("the scan failed: {e}")),
    }
}

/// `/logs/...`: a run manifest or a trace file.
async fn logs(State(served): State<Arc<Logs>>, request: Request) -> Response {
    let prefix = format!("/{LOGS}/");
    let raw = request.uri().path().strip_prefix(prefix.as_str()).unwrap_or_default().to_owned();
    let looked_up = tokio::task::spawn_blocking(move || lookup(&served.dir, &raw)).await;
    match looked_up {
        Ok(Ok(Found::Manifest(value))) => json(&value),
        Ok(Ok(Found::Trace(path))) => match ServeFile::new(path).oneshot(request).await {
            Ok(response) => response.into_response(),
            Err(never) => match never {},
        },
        Ok(Err(refusal)) => refused(refusal),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("the lookup failed: {e}")),
    }
}

/// The answer to a refused path: its status and reason.
fn refused(refusal: Refusal) -> Response {
    let status = StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::FORBIDDEN);
    text(status, refusal.reason)
}

/// What a `/logs/` path names.
enum Found {
    Manifest(serde_json::Value),
    Trace(PathBuf),
}

/// Resolves a raw `/logs/` path: `DIR/run.json` (or `run.json`) is the directory's manifest,
/// anything else must be a trace file under `logdir`.
fn lookup(logdir: &std::path::Path, raw: &str) -> Result<Found, Refusal> {
    let segments = guard::segments(raw)?;
    if segments.last().is_some_and(|s| s == RUN_MANIFEST) {
        let dir_segments = segments.get(..segments.len() - 1).unwrap_or_default();
        let dir = guard::directory(logdir, dir_segments)?;
        let rel = dir_segments.join("/");
        let listing = scan::scan_dir(logdir, &dir, &rel);
        return match listing.runs.first() {
            Some(run) => Ok(Found::Manifest(index::run_manifest(run))),
            None => Err(Refusal { status: 404, reason: "no trace in this directory".into() }),
        };
    }
    guard::trace_file(logdir, &segments).map(Found::Trace)
}

fn json(value: &serde_json::Value) -> Response {
    let headers = [(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")];
    (headers, Body::from(value.to_string())).into_response()
}
