//! wasm web-worker entry: the message loop between the app and the engine. Natively it compiles
//! to an empty `main`. With its submodules (`worker/*.rs`) the only code that touches web-sys /
//! js-sys; what the load worker decides (which load is current, when bytes are refused, when
//! `Progress` is due, how a large input is cut into parts for parse workers and joined, which
//! parse worker failed or went silent, a run's loads) is `kinetoscope::loader`, natively tested.
//! This file decodes messages, picks the worker's role and runs the clock.
//!
//! Inputs: `[json, File | File[] | ArrayBuffer?]` arrays whose JSON is a [`protocol::ToWorker`]:
//! a `File` comes only with `Read`, `File`s with `ReadRun`, the (transferred) `ArrayBuffer` of a
//! trace posted to the page only with `Bytes`. `Fetch` and `Read` make this worker read the
//! bytes itself (`worker/source.rs`).
//! Outputs: `[json, ArrayBuffer?]` arrays holding a [`protocol::FromWorker`]. The first message
//! posted is `Ready { protocol_version }`; tile answers carry their rect words as a transferred
//! `ArrayBuffer`.
//!
//! Roles: one binary, the role chosen by the worker's name: the load worker (spawned by the
//! app), a parse worker (`worker/pool.rs`, spawned by the load worker for a large input's
//! parts) or a download worker (`worker/pump.rs`, for a large URL's body).
//!
//! Nothing here panics on input: malformed messages become console errors, and a panic is
//! thrown as a JS error with its message (`worker/crash.rs`; the page names the worker that
//! died). A parse worker silent for `intake::SILENT_MS` is noticed by the clock (every second).
//!
//! Why not gloo-worker: its bincode codec copies byte buffers several times and cannot transfer
//! them. See docs/architecture.md and docs/contributing.md (no web in the engine, one protocol).

// `src/bin/worker/`, not `src/bin/`, so Cargo does not take it for another binary.
#[cfg(target_arch = "wasm32")]
#[path = "worker/crash.rs"]
mod crash;
#[cfg(target_arch = "wasm32")]
#[path = "worker/host.rs"]
mod host;
#[cfg(target_arch = "wasm32")]
#[path = "worker/pool.rs"]
mod pool;
#[cfg(target_arch = "wasm32")]
#[path = "worker/post.rs"]
mod post;
#[cfg(target_arch = "wasm32")]
#[path = "worker/pump.rs"]
mod pump;
#[cfg(target_arch = "wasm32")]
#[path = "worker/source.rs"]
mod source;

#[cfg(target_arch = "wasm32")]
fn main() {
    wasm::run();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}

#[cfg(target_arch = "wasm32")]
mod wasm {
    use crate::host::WebHost;
    use crate::post::console_error;
    use crate::{crash, pool, pump};
    use kinetoscope::budget::Budget;
    use kinetoscope::loader::{Attached, Loader};
    use protocol::ToWorker;
    use std::cell::RefCell;
    use std::rc::{Rc, Weak};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

    /// Installs the message handler and the clock, and posts `Ready`; in a sub-worker, runs its
    /// loop instead.
    pub fn run() {
        std::panic::set_hook(Box::new(crash::panic_hook));
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        if scope.name() == pool::PARSER_NAME {
            return pool::serve(scope);
        }
        if scope.name() == pump::NAME {
            return pump::serve(scope);
        }
        let state = Rc::new_cyclic(|me: &Weak<RefCell<Loader<WebHost>>>| {
            let weak = me.clone();
            let sink: pool::Sink = Rc::new(move |slot, event| {
                if let Some(state) = weak.upgrade() {
                    state.borrow_mut().parser(slot, event);
                }
            });
            let host = WebHost { scope: scope.clone(), me: me.clone(), pool: pool::Pool::default(), sink, pump: None };
            RefCell::new(Loader::new(host, Budget::TAB))
        });
        let watched = Rc::downgrade(&state);
        let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
            if let Some((msg, attached)) = decode(&ev.data()) {
                state.borrow_mut().message(msg, attached);
            }
        });
        scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        // The handler lives as long as the worker.
        on_message.forget();
        crash::every_second(&scope, move || {
            // Skipped if the state is borrowed (never, unless a trap left it so).
            if let Some(Ok(mut state)) = watched.upgrade().as_deref().map(RefCell::try_borrow_mut) {
                state.tick();
            }
        });
    }

    /// One `[json, File | File[] | ArrayBuffer?]` message; `None` (logged) if unreadable.
    fn decode(data: &JsValue) -> Option<(ToWorker, Attached<web_sys::File, js_sys::ArrayBuffer>)> {
        let parts = js_sys::Array::from(data);
        let Some(json) = parts.get(0).as_string() else {
            console_error("worker: message without a JSON string");
            return None;
        };
        let msg = match serde_json::from_str::<ToWorker>(&json) {
            Ok(msg) => msg,
            Err(e) => {
                console_error(&format!("worker: bad message {e}: {json:?}"));
                return None;
            }
        };
        let beside = parts.get(1);
        let attached = if let Some(file) = beside.dyn_ref::<web_sys::File>() {
            Attached::File(file.clone())
        } else if let Some(buffer) = beside.dyn_ref::<js_sys::ArrayBuffer>() {
            Attached::Buffer(buffer.clone())
        } else if js_sys::Array::is_array(&beside) {
            Attached::Files(js_sys::Array::from(&beside).iter().filter_map(|f| f.dyn_into::<web_sys::File>().ok()).collect())
        } else {
            Attached::None
        };
        Some((msg, attached))
    }
}
