//! How a worker's death gets a name (wasm only): the panic hook that throws the panic's message
//! instead of trapping bare, and the clock that notices a parse worker gone silent.
//!
//! Why: a wasm panic with `panic = "abort"` ends in a trap whose `error` event says only
//! "RuntimeError: unreachable", and a worker that dies without an `error` event (or hangs) says
//! nothing at all. The page names the load worker from its `error` event (`app/src/bridge`), the
//! load worker its parse workers from theirs (`web::pool`) or from their silence
//! (`kinetoscope::intake::PartsJob::silent`, looked at every second).

use super::post::console_error;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::DedicatedWorkerGlobalScope;

/// Logs a panic with its stack, then throws it as a JS error: the `error` event the worker's
/// parent receives then carries the panic's message and place. The worker is dead either way
/// (its state may be mid-borrow); its parent terminates it.
pub fn panic_hook(info: &std::panic::PanicHookInfo) {
    console_error_panic_hook::hook(info);
    let text = info.to_string().replace('\n', " ");
    wasm_bindgen::throw_str(&text);
}

/// Calls `tick` every second for the worker's lifetime (a console error if the browser refuses).
pub fn every_second(scope: &DedicatedWorkerGlobalScope, tick: impl Fn() + 'static) {
    let tick = Closure::<dyn Fn()>::new(tick);
    let every = scope.set_interval_with_callback_and_timeout_and_arguments_0(tick.as_ref().unchecked_ref(), 1_000);
    if let Err(e) = every {
        console_error(&format!("worker: no watch on parse workers: {e:?}"));
    }
    // The tick lives as long as the worker.
    tick.forget();
}
