//! The worker's messages out: `[json, beside?]` arrays posted to a worker or to this worker's
//! parent ([`post_parts`], the one place that calls `postMessage`), replies to the app (tile rects
//! in a transferred buffer), and the browser facts replies carry (clock, memory size, an
//! exception's words).

use protocol::FromWorker;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, Worker};

/// What `postMessage` is called on: a nested worker, or this worker's scope (to its parent).
pub trait Target {
    /// Posts `parts`, transferring `transfer`'s objects.
    ///
    /// # Errors
    /// The browser's exception.
    fn post(&self, parts: &js_sys::Array, transfer: Option<&js_sys::Array>) -> Result<(), JsValue>;
}

/// `Target` for the types with typed `postMessage` methods of the same names.
macro_rules! target {
    ($($t:ty),*) => {$(
        impl Target for $t {
            fn post(&self, parts: &js_sys::Array, transfer: Option<&js_sys::Array>) -> Result<(), JsValue> {
                match transfer {
                    Some(transfer) => self.post_message_with_transfer(parts, transfer),
                    None => self.post_message(parts),
                }
            }
        }
    )*};
}

target!(Worker, DedicatedWorkerGlobalScope);

/// Posts `[json, beside?]` to `target`, transferring `beside` when `transfer` (a buffer; a
/// `File` or a string is cloned).
///
/// # Errors
/// The browser's exception.
pub fn post_parts(target: &impl Target, json: &str, beside: Option<&JsValue>, transfer: bool) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(json));
    let Some(beside) = beside else { return target.post(&parts, None) };
    parts.push(beside);
    target.post(&parts, transfer.then(|| js_sys::Array::of1(beside)).as_ref())
}

/// The size of this worker's wasm memory, bytes.
pub fn wasm_memory_bytes() -> Option<u64> {
    let memory = wasm_bindgen::memory();
    let buffer = js_sys::Reflect::get(&memory, &"buffer".into()).ok()?;
    let bytes = js_sys::Reflect::get(&buffer, &"byteLength".into()).ok()?.as_f64()?;
    Some(bytes as u64)
}

/// This worker's global scope.
pub fn worker_scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

/// Milliseconds from the worker's time origin; 0 if `performance` is unavailable.
pub fn now_ms(scope: &DedicatedWorkerGlobalScope) -> f64 {
    scope.performance().map_or(0.0, |p| p.now())
}

/// Posts `[json, ArrayBuffer?]` to the app, transferring a buffer holding `words` when given.
pub fn post_with(scope: &DedicatedWorkerGlobalScope, msg: &FromWorker, words: Option<&[u32]>) {
    let json = match serde_json::to_string(msg) {
        Ok(json) => json,
        Err(e) => return console_error(&format!("worker: cannot encode reply: {e}")),
    };
    let buffer = words.map(|words| {
        let array = js_sys::Uint32Array::new_with_length(words.len() as u32);
        array.copy_from(words);
        array.buffer()
    });
    if let Err(e) = post_parts(scope, &json, buffer.as_ref().map(AsRef::as_ref), true) {
        console_error(&format!("worker: postMessage failed: {e:?}"));
    }
}

/// Logs `msg` to the browser console (errors with no reply to carry them).
pub fn console_error(msg: &str) {
    web_sys::console::error_1(&JsValue::from_str(msg));
}

/// The message of a JS exception or rejection value, or its debug form.
pub fn js_error(e: &JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}
