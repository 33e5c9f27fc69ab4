//! The wasm worker's transport (wasm only): the only code that touches web-sys / js-sys. It does
//! what `crate::loader` decides with `postMessage` (transferring buffers), `fetch`, XHR,
//! `FileReaderSync` and nested `Worker`s, and feeds what the browser reports back in; every
//! decision, message format and byte count is the loader's, natively tested. The binary
//! (`src/bin/worker.rs`) picks the role and runs the load worker's message loop.
//!
//! Roles: one binary, the role chosen by the worker's name: the load worker (spawned by the app,
//! [`host::WebHost`]), a parse worker ([`parser`], spawned by the load worker's [`pool`] for a
//! large input's parts) or a download worker ([`pump`], for a large URL's body, a gzip one
//! inflated there by [`gunzip`]).
//!
//! Why not gloo-worker: its bincode codec copies byte buffers several times and cannot transfer
//! them. See docs/architecture.md.

pub mod bytes;
pub mod crash;
pub mod gunzip;
pub mod host;
pub mod parser;
pub mod pool;
pub mod post;
pub mod pump;
pub mod source;

use wasm_bindgen::JsValue;
use web_sys::{Worker, WorkerOptions};

/// The loader scripts/build-site writes for this binary, relative to the load worker's own script.
const LOADER_URL: &str = "./worker_loader.js";

/// Spawns a nested worker running this binary, named `name` (its role).
///
/// # Errors
/// The browser's message when the worker cannot be created.
pub fn spawn_worker(name: &str) -> Result<Worker, String> {
    let options = WorkerOptions::new();
    options.set_name(name);
    Worker::new_with_options(LOADER_URL, &options).map_err(|e: JsValue| post::js_error(&e))
}
