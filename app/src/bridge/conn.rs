//! One live worker: spawning it with handlers that route its messages and errors back to the
//! [`Bridge`], and terminating it when the connection is dropped (replaced, refused or crashed).

use super::{wire, Bridge, Shared};
use std::rc::Weak;
use wasm_bindgen::prelude::*;
use web_sys::{Event, MessageEvent, Worker};

/// The loader of the `worker` binary scripts/build-site writes (worker files are not hashed).
const WORKER_URL: &str = "./worker_loader.js";

/// A live worker and its handlers (removed and the worker terminated on drop).
pub(super) struct Conn {
    pub(super) worker: Worker,
    _on_message: Closure<dyn Fn(MessageEvent)>,
    _on_error: Closure<dyn Fn(Event)>,
    _on_message_error: Closure<dyn Fn(MessageEvent)>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.set_onmessageerror(None);
        self.worker.terminate();
    }
}

/// Creates the worker; its handlers hold a weak reference so dropping the bridge frees it.
pub(super) fn spawn_worker(shared: Weak<Shared>) -> Result<Conn, String> {
    let worker = Worker::new(WORKER_URL).map_err(|e| wire::js_error(&e))?;
    let weak = shared.clone();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
        if let Some(shared) = weak.upgrade() {
            Bridge(shared).on_message(&ev.data());
        }
    });
    // A reply that could not be received leaves its load or query waiting forever: the worker
    // is treated as dead, like one that crashed.
    let lost = shared.clone();
    let on_message_error = Closure::<dyn Fn(MessageEvent)>::new(move |_: MessageEvent| {
        if let Some(shared) = lost.upgrade() {
            Bridge(shared).on_error("a reply could not be received (messageerror)".into());
        }
    });
    // An `ErrorEvent` for an uncaught exception (a trap, or a panic the worker's hook threw
    // with its message), a plain `Event` when the script could not be loaded: read `message`
    // without assuming which.
    let on_error = Closure::<dyn Fn(Event)>::new(move |ev: Event| {
        let message = js_sys::Reflect::get(&ev, &"message".into())
            .ok()
            .and_then(|m| m.as_string());
        if let Some(shared) = shared.upgrade() {
            Bridge(shared)
                .on_error(message.unwrap_or_else(|| "its script could not be loaded".into()));
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    worker.set_onmessageerror(Some(on_message_error.as_ref().unchecked_ref()));
    Ok(Conn {
        worker,
        _on_message: on_message,
        _on_error: on_error,
        _on_message_error: on_message_error,
    })
}
