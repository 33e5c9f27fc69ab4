//! wasm web-worker entry: the message loop between the app and the engine, and the only file that
//! touches web-sys / js-sys. Natively it compiles to an empty `main`.
//!
//! Inputs: `[json, ArrayBuffer?]` arrays whose JSON is a [`protocol::ToWorker`]; the buffer comes
//! only with `Chunk` and is transferred (zero copy across threads). Outputs: `[json]` arrays holding
//! a [`protocol::FromWorker`]. The first message posted is `Ready { protocol_version }`.
//!
//! `Query { id, .. }` is answered at once with `Answer` or `QueryFailed` (same id) over the loaded
//! trace; tile answers carry their rect words as a transferred `ArrayBuffer`.
//!
//! Invariants: at most one load is pending; `Open` replaces it (latest wins, the app never
//! interleaves loads), and chunks or `Finish` for another id are ignored. Nothing here panics on
//! input: allocation failures and malformed messages become `Failed` replies or console errors.
//!
//! Cost: one copy per chunk, from the transferred buffer into the load's `Vec<u8>` (reserved once
//! from `Open.size`). `Progress` is posted at most every [`PROGRESS_EVERY_MS`] so a 1 GB file
//! streamed in 64 KiB chunks does not flood the main thread.
//!
//! Why not gloo-worker: its bincode codec copies byte buffers several times and cannot transfer
//! them (see shared TOOLCHAIN.md). References: issue 2, STYLE.md §2–3.

#[cfg(target_arch = "wasm32")]
fn main() {
    wasm::run();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}

#[cfg(target_arch = "wasm32")]
mod wasm {
    use kinetoscope::engine::Engine;
    use protocol::{FromWorker, LoadError, Phase, ToWorker, PROTOCOL_VERSION};
    use std::cell::RefCell;
    use std::rc::Rc;
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

    /// Minimum time between two `Progress` messages of one phase, in milliseconds.
    const PROGRESS_EVERY_MS: f64 = 50.0;

    /// The load being received: its id, name, declared size and the bytes so far.
    struct Pending {
        id: u32,
        name: String,
        size: Option<u64>,
        bytes: Vec<u8>,
        last_progress_ms: f64,
    }

    /// Worker-wide state: the engine (keeps the loaded trace) and the load being received.
    struct Worker {
        scope: DedicatedWorkerGlobalScope,
        engine: Engine,
        pending: Option<Pending>,
    }

    /// Installs the message handler and posts `Ready`.
    pub fn run() {
        console_error_panic_hook::set_once();
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let state = Rc::new(RefCell::new(Worker {
            scope: scope.clone(),
            engine: Engine::new(),
            pending: None,
        }));
        let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
            state.borrow_mut().handle(&ev.data());
        });
        scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        // The handler lives as long as the worker.
        on_message.forget();
        post(
            &scope,
            &FromWorker::Ready {
                protocol_version: PROTOCOL_VERSION,
            },
        );
    }

    impl Worker {
        /// Decodes one `[json, ArrayBuffer?]` message and dispatches it.
        fn handle(&mut self, data: &JsValue) {
            let parts = js_sys::Array::from(data);
            let Some(json) = parts.get(0).as_string() else {
                console_error("worker: message without a JSON string");
                return;
            };
            match serde_json::from_str::<ToWorker>(&json) {
                Ok(ToWorker::Open { id, name, size }) => self.open(id, name, size),
                Ok(ToWorker::Chunk { id }) => self.chunk(id, &parts.get(1)),
                Ok(ToWorker::Finish { id }) => self.finish(id),
                Ok(ToWorker::Cancel { id }) => {
                    if self.pending.as_ref().is_some_and(|p| p.id == id) {
                        self.pending = None;
                    }
                }
                Ok(ToWorker::Query { id, query }) => match self.engine.query(&query) {
                    Ok((answer, words)) => {
                        let reply = FromWorker::Answer {
                            id,
                            answer: Box::new(answer),
                        };
                        post_with(&self.scope, &reply, words.as_deref());
                    }
                    Err(message) => post(&self.scope, &FromWorker::QueryFailed { id, message }),
                },
                Err(e) => console_error(&format!("worker: bad message {e}: {json:?}")),
            }
        }

        fn open(&mut self, id: u32, name: String, size: Option<u64>) {
            self.pending = None;
            let mut bytes = Vec::new();
            let want = size.and_then(|s| usize::try_from(s).ok()).unwrap_or(0);
            if bytes.try_reserve_exact(want).is_err() {
                return self.fail(
                    id,
                    "io",
                    format!("cannot allocate {want} bytes for {name:?}"),
                );
            }
            self.pending = Some(Pending {
                id,
                name,
                size,
                bytes,
                last_progress_ms: f64::MIN,
            });
            self.progress(id, Phase::Reading, 0, size);
        }

        fn chunk(&mut self, id: u32, buffer: &JsValue) {
            let Some(pending) = self.pending.as_mut().filter(|p| p.id == id) else {
                return;
            };
            let Some(buffer) = buffer.dyn_ref::<js_sys::ArrayBuffer>() else {
                self.pending = None;
                return self.fail(
                    id,
                    "protocol",
                    "Chunk message without an ArrayBuffer".into(),
                );
            };
            let view = js_sys::Uint8Array::new(buffer);
            let start = pending.bytes.len();
            let len = view.length() as usize;
            if pending.bytes.try_reserve(len).is_err() {
                self.pending = None;
                let msg = format!("out of memory after {start} bytes");
                return self.fail(id, "io", msg);
            }
            pending.bytes.resize(start + len, 0);
            view.copy_to(&mut pending.bytes[start..]);
            let (done, total) = (pending.bytes.len() as u64, pending.size);
            let now = now_ms(&self.scope);
            if now - pending.last_progress_ms >= PROGRESS_EVERY_MS {
                pending.last_progress_ms = now;
                self.progress(id, Phase::Reading, done, total);
            }
        }

        fn finish(&mut self, id: u32) {
            let Some(Pending { name, bytes, .. }) = self.pending.take_if(|p| p.id == id) else {
                return;
            };
            let total = bytes.len() as u64;
            self.progress(id, Phase::Reading, total, Some(total));
            let scope = self.scope.clone();
            let started = now_ms(&scope);
            let mut last: Option<(Phase, f64)> = None;
            let mut report = |phase: Phase, done: u64, total: Option<u64>| {
                let now = now_ms(&scope);
                let due = last.is_none_or(|(p, t)| p != phase || now - t >= PROGRESS_EVERY_MS);
                if due {
                    last = Some((phase, now));
                    let msg = FromWorker::Progress {
                        id,
                        phase,
                        done_bytes: done,
                        total_bytes: total,
                    };
                    post(&scope, &msg);
                }
            };
            let reply = match self.engine.load(&name, bytes, &mut report) {
                Ok(mut summary) => {
                    let layout = self.engine.layout().unwrap_or_default();
                    self.engine.warm_tiles();
                    summary.parse_ms = now_ms(&scope) - started;
                    FromWorker::Loaded {
                        id,
                        summary: Box::new(summary),
                        layout: Box::new(layout),
                    }
                }
                Err(error) => FromWorker::Failed { id, error },
            };
            post(&scope, &reply);
        }

        fn progress(&self, id: u32, phase: Phase, done_bytes: u64, total_bytes: Option<u64>) {
            post(
                &self.scope,
                &FromWorker::Progress {
                    id,
                    phase,
                    done_bytes,
                    total_bytes,
                },
            );
        }

        fn fail(&self, id: u32, kind: &str, message: String) {
            let error = LoadError {
                kind: kind.into(),
                message,
                offset: None,
                line: None,
                column: None,
            };
            post(&self.scope, &FromWorker::Failed { id, error });
        }
    }

    /// Milliseconds from the worker's time origin; 0 if `performance` is unavailable.
    fn now_ms(scope: &DedicatedWorkerGlobalScope) -> f64 {
        scope.performance().map_or(0.0, |p| p.now())
    }

    /// Posts `[json]`; failures (never expected for a string) go to the console.
    fn post(scope: &DedicatedWorkerGlobalScope, msg: &FromWorker) {
        post_with(scope, msg, None);
    }

    /// Posts `[json, ArrayBuffer?]`, transferring a buffer holding `words` when given.
    fn post_with(scope: &DedicatedWorkerGlobalScope, msg: &FromWorker, words: Option<&[u32]>) {
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

    fn console_error(msg: &str) {
        web_sys::console::error_1(&JsValue::from_str(msg));
    }
}
