//! wasm web-worker entry: picks the worker's role and runs the load worker's message loop
//! between the app and the engine. Natively it compiles to an empty `main`. What the load worker
//! decides (which load is current, when bytes are refused, when `Progress` is due, how a large
//! input is cut into parts for parse workers and joined, which parse worker failed or went
//! silent, a run's loads) and every message format is `kinetoscope::loader`, natively tested;
//! the browser transport is `kinetoscope::web`. This file reads messages, picks the role and
//! runs the clock.
//!
//! Inputs: `[json, File | File[] | ArrayBuffer?]` arrays whose JSON is a [`protocol::ToWorker`]
//! (`loader::inbox`): a `File` comes only with `Read`, `File`s with `ReadRun`, the (transferred)
//! `ArrayBuffer` of a trace posted to the page only with `Bytes`. `Fetch` and `Read` make this
//! worker read the bytes itself (`web::source`).
//! Outputs: `[json, ArrayBuffer?]` arrays holding a [`protocol::FromWorker`]. The first message
//! posted is `Ready { protocol_version }`; tile answers carry their rect words as a transferred
//! `ArrayBuffer`.
//!
//! Roles: one binary, the role chosen by the worker's name: the load worker (spawned by the
//! app), a parse worker (`web::parser`, spawned by the load worker's `web::pool` for a large
//! input's parts) or a download worker (`web::pump`, for a large URL's body).
//!
//! Nothing here panics on input: malformed messages become console errors, and a panic is
//! thrown as a JS error with its message (`web::crash`; the page names the worker that died). A
//! parse worker silent for `intake::SILENT_MS` is noticed by the clock (every second).
//!
//! See docs/architecture.md and docs/contributing.md (no web in the engine, one protocol).

#[cfg(target_arch = "wasm32")]
fn main() {
    wasm::run();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}

#[cfg(target_arch = "wasm32")]
mod wasm {
    use kinetoscope::budget::Budget;
    use kinetoscope::loader::download::PUMP_NAME;
    use kinetoscope::loader::parser::PARSER_NAME;
    use kinetoscope::loader::{inbox, Attached, Loader};
    use kinetoscope::web::host::WebHost;
    use kinetoscope::web::post::console_error;
    use kinetoscope::web::{crash, parser, pool, pump};
    use protocol::ToWorker;
    use std::cell::RefCell;
    use std::rc::{Rc, Weak};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

    /// Installs the message handler and the clock, and posts `Ready`; in a nested worker, runs
    /// its loop instead.
    pub fn run() {
        std::panic::set_hook(Box::new(crash::panic_hook));
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        if scope.name() == PARSER_NAME {
            return parser::serve(scope);
        }
        if scope.name() == PUMP_NAME {
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
        inbox::decode(parts.get(0).as_string().as_deref(), attached).map_err(|e| console_error(&e)).ok()
    }
}
