//! Byte sources: stream a URL (fetch body reader) or a local file (`Blob.slice`) into a load.
//!
//! Inputs: a load id from [`Bridge::begin`] and a URL or `File`. Output: `Open`, one `Chunk` per
//! piece as it arrives (each buffer transferred to the worker), then `Finish`; or a `Failed`
//! reply through [`Bridge::fail`] for network or file errors (kind `io`).
//!
//! Invariants: a source stops (and cancels its fetch) as soon as its id is no longer current, so
//! a superseded load never keeps the network or the disk busy. The main thread only moves buffers:
//! at most one [`SLICE_BYTES`] slice of a file is in memory here at a time.
//!
//! Why slices and streams rather than `File.arrayBuffer()` / `Response.arrayBuffer()`: progress
//! while reading, and no second full-size copy on the main thread. Only `http:`/`https:` URLs
//! (or relative ones) are fetched.

use super::wire::js_error;
use super::Bridge;
use js_sys::{ArrayBuffer, Reflect, Uint8Array};
use protocol::LoadError;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, ReadableStreamDefaultReader, Response, Url};

/// Bytes read from a file per slice (8 MiB).
pub const SLICE_BYTES: f64 = 8.0 * 1024.0 * 1024.0;

/// A URL checked by [`resolve_url`]: absolute `href` and the file name shown to the user.
#[derive(Clone, Debug)]
pub struct Target {
    /// Absolute `http:` or `https:` URL.
    pub href: String,
    /// Last path segment, decoded (the host if the path is empty).
    pub name: String,
}

/// Resolves `url` against the page and checks its scheme.
///
/// # Errors
/// An `io` error for an unparsable URL or a scheme other than `http:` / `https:`.
pub fn resolve_url(url: &str) -> Result<Target, LoadError> {
    let base = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default();
    let parsed = Url::new_with_base(url, &base).map_err(|_| io(format!("invalid URL {url:?}")))?;
    let scheme = parsed.protocol();
    if scheme != "http:" && scheme != "https:" {
        return Err(io(format!(
            "only http(s) or relative URLs can be loaded, not {url:?}"
        )));
    }
    let path = parsed.pathname();
    let segment = path.rsplit('/').find(|s| !s.is_empty()).unwrap_or_default();
    let decoded = js_sys::decode_uri_component(segment).map(String::from);
    let name = match decoded.unwrap_or_else(|_| segment.to_owned()) {
        n if n.is_empty() => parsed.host(),
        n => n,
    };
    Ok(Target {
        href: parsed.href(),
        name,
    })
}

/// Streams `target` into load `id`, reporting failures through the bridge.
pub async fn stream_url(bridge: Bridge, id: u32, target: Target) {
    if let Err(error) = fetch_into(&bridge, id, &target).await {
        bridge.fail(id, error);
    }
}

/// Streams `file` into load `id` in [`SLICE_BYTES`] slices, reporting failures through the bridge.
pub async fn stream_file(bridge: Bridge, id: u32, file: File) {
    if let Err(error) = read_into(&bridge, id, &file).await {
        bridge.fail(id, error);
    }
}

async fn fetch_into(bridge: &Bridge, id: u32, target: &Target) -> Result<(), LoadError> {
    let window = web_sys::window().ok_or_else(|| io("no window to fetch from".into()))?;
    let failed = |e: JsValue| io(fetch_failure(&target.href, &js_error(&e)));
    let response: Response = JsFuture::from(window.fetch_with_str(&target.href))
        .await
        .map_err(failed)?
        .unchecked_into();
    if !response.ok() {
        let (code, text) = (response.status(), response.status_text());
        let hint = match code {
            404 => " (no such file on that server: check the ?url= link)",
            401 | 403 => " (the server refuses to share this file)",
            _ => "",
        };
        return Err(io(format!("HTTP {code} {text} fetching {:?}{hint}", target.href)));
    }
    let size = response.headers().get("content-length").ok().flatten();
    if !bridge.open(id, &target.name, size.and_then(|s| s.trim().parse().ok())) {
        return Ok(());
    }
    if let Some(body) = response.body() {
        let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
        loop {
            let step = JsFuture::from(reader.read()).await.map_err(failed)?;
            if Reflect::get(&step, &"done".into()).map_or(true, |d| d.is_truthy()) {
                break;
            }
            let value = Reflect::get(&step, &"value".into()).map_err(failed)?;
            let Some(bytes) = value.dyn_ref::<Uint8Array>() else {
                return Err(io("fetch body yielded a non-byte chunk".into()));
            };
            if !bridge.chunk(id, own_buffer(bytes)) {
                // Superseded: stop downloading. The returned promise needs no handling.
                let _ = reader.cancel();
                return Ok(());
            }
        }
    }
    bridge.finish(id);
    Ok(())
}

async fn read_into(bridge: &Bridge, id: u32, file: &File) -> Result<(), LoadError> {
    let name = file.name();
    let size = file.size();
    let failed = |e: JsValue| io(format!("reading {name:?} failed: {}", js_error(&e)));
    // `File.size` is an integral byte count; the cast is exact below 2^53.
    if !bridge.open(id, &name, Some(size as u64)) {
        return Ok(());
    }
    let mut start = 0.0;
    while start < size {
        if !bridge.is_current(id) {
            return Ok(());
        }
        let end = (start + SLICE_BYTES).min(size);
        let blob = file.slice_with_f64_and_f64(start, end).map_err(failed)?;
        let buffer = JsFuture::from(blob.array_buffer()).await.map_err(failed)?;
        if !bridge.chunk(id, buffer.unchecked_into()) {
            return Ok(());
        }
        start = end;
    }
    bridge.finish(id);
    Ok(())
}

/// The chunk's bytes as a buffer that can be transferred whole: its own buffer when the view
/// covers all of it, else a copy of just the viewed bytes.
fn own_buffer(bytes: &Uint8Array) -> ArrayBuffer {
    let buffer = bytes.buffer();
    if bytes.byte_offset() == 0 && bytes.byte_length() == buffer.byte_length() {
        buffer
    } else {
        bytes.slice(0, bytes.length()).buffer()
    }
}

/// Why a fetch was rejected, in words: the browser only says "Failed to fetch", which for
/// another origin is almost always CORS (or the server being down).
fn fetch_failure(href: &str, why: &str) -> String {
    let page = web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default();
    let same_origin = Url::new(href).is_ok_and(|u| u.origin() == page);
    if same_origin {
        format!("fetching {href:?} failed: {why} (is the server running?)")
    } else {
        format!(
            "fetching {href:?} failed: {why}. The server did not answer, or it does not let this \
             page read the file (CORS): it must send the header `Access-Control-Allow-Origin: \
             {page}` (or `*`) with the trace."
        )
    }
}

fn io(message: String) -> LoadError {
    LoadError {
        kind: "io".into(),
        message,
        offset: None,
        line: None,
        column: None,
    }
}
