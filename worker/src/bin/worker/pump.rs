//! Download sub-worker (wasm only): reads a large URL's body on its own thread and hands the
//! pieces to the load worker, so the download never waits for the parse.
//!
//! Why: a fetch body is only read when its worker's thread is free. Read by the load worker,
//! the browser's network pipe fills while a piece is parsed and the download stalls until the
//! next read; on this 2-core machine a 1 GB load then waited 1.7-1.9 s for bytes and a 5 GB load
//! 15.5 s, while the download alone took 2-3 s and 11 s. Read here, the pipe is drained as fast
//! as the network fills it, and the load worker parses from its message queue.
//!
//! Roles and messages: like the parse workers (`pool.rs`), one binary, the role chosen by the
//! worker's name ([`NAME`]), messages `[json, ArrayBuffer?]`. The load worker, having seen a
//! body of at least [`source::HANDOFF_BYTES`] (`source::fetch`), cancels its own read and starts a pump
//! with the URL. The pump fetches it again and posts its pieces gathered by [`PIECE`] bytes (one
//! copy here, the buffer then transferred); the load worker parses each and answers `Consumed`. At most [`WINDOW`] bytes are in
//! flight, so a parse slower than the network holds 64 MiB, never the file.
//!
//! Failures: the pump's own fetch errors come back as `Failed` with the same words the load
//! worker would use (`source`), a crash as the `error` event; both end the load with a message.
//! A load that is dropped (replaced, cancelled) refuses the next piece, and the pump is
//! terminated, which cancels its download.

use crate::source::{self, with, Receiver};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, Worker, WorkerOptions};

/// Name given to the download sub-worker; `worker.rs` reads it to pick the role.
pub const NAME: &str = "kinetoscope-fetch";

/// Most bytes posted to the load worker and not yet parsed.
const WINDOW: u64 = 64 << 20;

/// Bytes gathered before a piece is posted: read as soon as they arrive, the network's pieces
/// are often a few KiB, and each message costs the load worker a task.
const PIECE: u32 = 1 << 20;

/// The loader scripts/build-site writes for this binary, relative to the load worker's own script.
const LOADER_URL: &str = "./worker_loader.js";

/// From the load worker to the pump.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type")]
enum ToPump {
    /// Download `url`.
    Fetch { url: String },
    /// `bytes` of the posted pieces were parsed.
    Consumed { bytes: u64 },
}

/// From the pump to the load worker.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type")]
enum FromPump {
    Ready,
    /// The next piece is the transferred buffer beside this message.
    Bytes,
    Finish,
    Failed { message: String },
}

/// A running pump, owned by the load worker until the next one replaces it. It terminates its
/// worker (and so the download) once the load finished, failed or was dropped, and when dropped;
/// it is never dropped from inside its own handlers.
pub struct Pump {
    worker: Worker,
    _on_message: Closure<dyn Fn(MessageEvent)>,
    _on_error: Closure<dyn Fn(web_sys::Event)>,
}

impl Drop for Pump {
    fn drop(&mut self) {
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.terminate();
    }
}

impl Pump {
    /// Starts a pump that downloads `url` into load `id` of `to`.
    ///
    /// # Errors
    /// The browser's message when the worker cannot be created.
    pub fn start<R: Receiver + 'static>(to: Weak<RefCell<R>>, id: u32, url: &str) -> Result<Self, String> {
        let options = WorkerOptions::new();
        options.set_name(NAME);
        let worker = Worker::new_with_options(LOADER_URL, &options).map_err(|e| source::js_error(&e))?;
        let (reply, url, on_message_to) = (worker.clone(), url.to_owned(), to.clone());
        let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
            let parts = js_sys::Array::from(&ev.data());
            let msg = parts.get(0).as_string().and_then(|json| serde_json::from_str::<FromPump>(&json).ok());
            let to = &on_message_to;
            let answer = match msg {
                Some(FromPump::Ready) => ToPump::Fetch { url: url.clone() },
                Some(FromPump::Bytes) => {
                    let Ok(buffer) = parts.get(1).dyn_into::<js_sys::ArrayBuffer>() else {
                        return with(to, |r| r.failed(id, "the download worker sent a piece without its bytes".into()));
                    };
                    let bytes = js_sys::Uint8Array::new(&buffer);
                    // Refused: the load was dropped, and so is the download.
                    if !with(to, |r| r.bytes(id, &bytes)) {
                        return reply.terminate();
                    }
                    ToPump::Consumed { bytes: u64::from(bytes.length()) }
                }
                Some(FromPump::Finish) => {
                    reply.terminate();
                    return with(to, |r| r.finish(id));
                }
                Some(FromPump::Failed { message }) => {
                    reply.terminate();
                    return with(to, |r| r.failed(id, message));
                }
                None => {
                    reply.terminate();
                    return with(to, |r| r.failed(id, "the download worker sent an unreadable message".into()));
                }
            };
            post(&reply, &answer, None);
        });
        // A crash of the pump (or its script failing to load) ends the load with words; cancelled
        // here so it does not reach the page as the load worker's own error.
        let on_error = Closure::<dyn Fn(web_sys::Event)>::new(move |ev: web_sys::Event| {
            ev.prevent_default();
            let message = js_sys::Reflect::get(&ev, &"message".into()).ok().and_then(|m| m.as_string());
            let why = message.unwrap_or_else(|| "its script could not be loaded".into());
            with(&to, |r| r.failed(id, format!("the download worker stopped: {why}")));
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(Self { worker, _on_message: on_message, _on_error: on_error })
    }
}

/// Posts `[json, buffer?]` to `target` (the pump or the load worker), transferring `buffer`.
fn post<M: Serialize>(target: &JsValue, msg: &M, buffer: Option<&js_sys::ArrayBuffer>) {
    let Ok(json) = serde_json::to_string(msg) else { return };
    let parts = js_sys::Array::of1(&JsValue::from_str(&json));
    let transfer = js_sys::Array::new();
    if let Some(buffer) = buffer {
        parts.push(buffer);
        transfer.push(buffer);
    }
    let posted = js_sys::Reflect::get(target, &"postMessage".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .map(|f| f.call2(target, &parts, &transfer));
    if !matches!(posted, Some(Ok(_))) {
        web_sys::console::error_1(&JsValue::from_str("download worker: postMessage failed"));
    }
}

/// The pump's side: what it posts and how many posted bytes are not parsed yet.
struct Sender {
    scope: DedicatedWorkerGlobalScope,
    /// Pieces read and not posted yet, and their bytes.
    gathered: Vec<js_sys::Uint8Array>,
    gathered_bytes: u32,
    in_flight: u64,
    /// Resolves the wait for room when the load worker reports bytes consumed.
    wake: Option<js_sys::Function>,
}

impl Receiver for Sender {
    fn open(&mut self, _id: u32, _name: &str, _size: Option<u64>) -> bool {
        true
    }

    fn bytes(&mut self, _id: u32, bytes: &js_sys::Uint8Array) -> bool {
        self.gathered_bytes = self.gathered_bytes.saturating_add(bytes.length());
        self.gathered.push(bytes.clone());
        if self.gathered_bytes >= PIECE {
            self.flush();
        }
        true
    }

    fn finish(&mut self, _id: u32) {
        self.flush();
        post(&self.scope, &FromPump::Finish, None);
    }

    fn failed(&mut self, _id: u32, message: String) {
        self.flush();
        post(&self.scope, &FromPump::Failed { message }, None);
    }

    fn room(&mut self) -> Option<js_sys::Promise> {
        if self.in_flight <= WINDOW {
            return None;
        }
        let mut wake = None;
        let promise = js_sys::Promise::new(&mut |resolve, _| wake = Some(resolve));
        self.wake = wake;
        Some(promise)
    }
}

impl Sender {
    /// Posts the gathered pieces as one buffer (transferred, so the load worker gets it without
    /// another copy).
    fn flush(&mut self) {
        if self.gathered.is_empty() {
            return;
        }
        let piece = js_sys::Uint8Array::new_with_length(self.gathered_bytes);
        let mut at = 0;
        for part in self.gathered.drain(..) {
            piece.set(&part, at);
            at += part.length();
        }
        self.in_flight += u64::from(self.gathered_bytes);
        self.gathered_bytes = 0;
        post(&self.scope, &FromPump::Bytes, Some(&piece.buffer()));
    }
}

/// The pump's loop: waits for the URL, downloads it into messages, counts what was consumed.
pub fn serve(scope: DedicatedWorkerGlobalScope) {
    let sender = Rc::new(RefCell::new(Sender { scope: scope.clone(), gathered: Vec::new(), gathered_bytes: 0, in_flight: 0, wake: None }));
    let me = sender.clone();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
        let parts = js_sys::Array::from(&ev.data());
        match parts.get(0).as_string().and_then(|json| serde_json::from_str::<ToPump>(&json).ok()) {
            Some(ToPump::Fetch { url }) => {
                wasm_bindgen_futures::spawn_local(source::fetch(Rc::downgrade(&me), 0, url, String::new()));
            }
            Some(ToPump::Consumed { bytes }) => {
                let mut sender = me.borrow_mut();
                sender.in_flight = sender.in_flight.saturating_sub(bytes);
                if sender.in_flight <= WINDOW {
                    if let Some(wake) = sender.wake.take() {
                        let _ = wake.call0(&JsValue::UNDEFINED);
                    }
                }
            }
            None => post(&me.borrow().scope, &FromPump::Failed { message: "bad message to the download worker".into() }, None),
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler and the sender live as long as the pump.
    on_message.forget();
    post(&scope, &FromPump::Ready, None);
}
