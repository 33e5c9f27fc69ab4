//! The worker's messages out: posting replies (tile rects in a transferred buffer), progress
//! throttled per phase, and the browser facts replies carry (clock, cores, memory size).

use kinetoscope::intake::Throttle;
use protocol::{FromWorker, LoadError, Phase};
use wasm_bindgen::prelude::*;
use web_sys::DedicatedWorkerGlobalScope;

/// A progress reporter for load `id` (file `rank` of a run): posts at most every
/// `intake::PROGRESS_EVERY_MS` per phase; a new phase reports at once.
pub fn throttled(scope: DedicatedWorkerGlobalScope, id: u32, rank: Option<u32>) -> impl FnMut(Phase, u64, Option<u64>) {
    let mut last: Option<(Phase, Throttle)> = None;
    move |phase: Phase, done: u64, total: Option<u64>| {
        if last.as_ref().is_none_or(|(p, _)| *p != phase) {
            last = Some((phase, Throttle::default()));
        }
        if last.as_mut().is_some_and(|(_, t)| t.due(now_ms(&scope))) {
            post(&scope, &progress_msg(id, rank, phase, done, total));
        }
    }
}

/// `Progress` of load `id`, or `RankProgress` of file `rank` of run load `id`.
pub fn progress_msg(id: u32, rank: Option<u32>, phase: Phase, done_bytes: u64, total_bytes: Option<u64>) -> FromWorker {
    match rank {
        Some(index) => FromWorker::RankProgress { id, index, phase, done_bytes, total_bytes },
        None => FromWorker::Progress { id, phase, done_bytes, total_bytes },
    }
}

/// The size of this worker's wasm memory, bytes.
pub fn wasm_memory_bytes() -> Option<u64> {
    let memory = wasm_bindgen::memory();
    let buffer = js_sys::Reflect::get(&memory, &"buffer".into()).ok()?;
    let bytes = js_sys::Reflect::get(&buffer, &"byteLength".into()).ok()?.as_f64()?;
    Some(bytes as u64)
}

/// A load error of `kind` without a position.
pub fn load_error(kind: &str, message: String) -> LoadError {
    LoadError { kind: kind.into(), message, offset: None, line: None, column: None }
}

/// Milliseconds from the worker's time origin; 0 if `performance` is unavailable.
pub fn now_ms(scope: &DedicatedWorkerGlobalScope) -> f64 {
    scope.performance().map_or(0.0, |p| p.now())
}

/// Posts `[json]`; failures (never expected for a string) go to the console.
pub fn post(scope: &DedicatedWorkerGlobalScope, msg: &FromWorker) {
    post_with(scope, msg, None);
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
