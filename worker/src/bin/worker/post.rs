//! The worker's messages out: posting replies (tile rects in a transferred buffer), and the
//! browser facts replies carry (clock, memory size).

use protocol::FromWorker;
use wasm_bindgen::prelude::*;
use web_sys::DedicatedWorkerGlobalScope;

/// The size of this worker's wasm memory, bytes.
pub fn wasm_memory_bytes() -> Option<u64> {
    let memory = wasm_bindgen::memory();
    let buffer = js_sys::Reflect::get(&memory, &"buffer".into()).ok()?;
    let bytes = js_sys::Reflect::get(&buffer, &"byteLength".into()).ok()?.as_f64()?;
    Some(bytes as u64)
}

/// Milliseconds from the worker's time origin; 0 if `performance` is unavailable.
pub fn now_ms(scope: &DedicatedWorkerGlobalScope) -> f64 {
    scope.performance().map_or(0.0, |p| p.now())
}

/// Posts `[json, ArrayBuffer?]`, transferring a buffer holding `words` when given.
pub fn post_with(scope: &DedicatedWorkerGlobalScope, msg: &FromWorker, words: Option<&[u32]>) {
    let json = match serde_json::to_string(msg) {
        Ok(json) => json,
        Err(e) => return console_error(&format!("worker: cannot encode reply: {e}")),
    };
    let parts = js_sys::Array::of1(&JsValue::from_str(&json));
    let sent = match words {
        Some(words) => {
            let array = js_sys::Uint32Array::new_with_length(words.len() as u32);
            array.copy_from(words);
            let buffer = array.buffer();
            parts.push(&buffer);
            scope.post_message_with_transfer(&parts, &js_sys::Array::of1(&buffer))
        }
        None => scope.post_message(&parts),
    };
    if let Err(e) = sent {
        console_error(&format!("worker: postMessage failed: {e:?}"));
    }
}

/// Logs `msg` to the browser console (errors with no reply to carry them).
pub fn console_error(msg: &str) {
    web_sys::console::error_1(&JsValue::from_str(msg));
}
