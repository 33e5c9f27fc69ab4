//! Message framing between the app and the worker: `[json, File | ArrayBuffer?]` arrays to the
//! worker, `[json, ArrayBuffer?]` back.
//!
//! Control messages are [`ToWorker`] / [`FromWorker`] JSON strings. A `Read`'s `File` travels as
//! the array's second element (cloned: a handle, the worker reads the bytes); a tile answer's
//! rect words come back the same way, in a transferred buffer. See `worker/protocol` and
//! `worker/src/bin/worker.rs`.

use js_sys::{Array, ArrayBuffer};
use protocol::{FromWorker, ToWorker};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::Worker;

/// Posts `msg`, with `file` (a `File`, an array of them for a run, or the `ArrayBuffer` of a
/// posted trace, transferred) beside it if given.
///
/// # Errors
/// The browser's message when posting fails.
pub fn post(worker: &Worker, msg: &ToWorker, file: Option<&JsValue>) -> Result<(), String> {
    let json = serde_json::to_string(msg).map_err(|e| e.to_string())?;
    let parts = Array::of1(&JsValue::from_str(&json));
    if let Some(file) = file {
        parts.push(file);
    }
    let sent = match file.and_then(|f| f.dyn_ref::<ArrayBuffer>()) {
        // Moved, not copied: a trace's bytes can be most of what the tab holds.
        Some(buffer) => worker.post_message_with_transfer(&parts, &Array::of1(buffer)),
        None => worker.post_message(&parts),
    };
    sent.map_err(|e| js_error(&e))
}

/// Decodes a worker message's `data`: the reply and the `u32` words of its buffer, if any.
///
/// # Errors
/// A description of what was wrong when the data is not a `[json, ArrayBuffer?]` array holding
/// a `FromWorker`.
pub fn decode(data: &JsValue) -> Result<(FromWorker, Option<Vec<u32>>), String> {
    let parts = Array::from(data);
    let json = parts.get(0).as_string().ok_or("message without a JSON string")?;
    let msg = serde_json::from_str(&json)
        .map_err(|e| format!("bad message from worker: {e}: {json:?}"))?;
    let words = parts
        .get(1)
        .dyn_ref::<ArrayBuffer>()
        .map(|b| js_sys::Uint32Array::new(b).to_vec());
    Ok((msg, words))
}

/// The message of a JS exception or rejection value, or its debug form.
pub fn js_error(e: &JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}
