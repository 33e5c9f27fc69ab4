//! Download worker (wasm only): reads a large URL's body on its own thread and hands the
//! pieces to the load worker, so the download never waits for the parse.
//!
//! Why: a fetch body is only read when its worker's thread is free. Read by the load worker,
//! the browser's network pipe fills while a piece is parsed and the download stalls until the
//! next read; on this 2-core machine a 1 GB load then waited 1.7-1.9 s for bytes and a 5 GB load
//! 15.5 s, while the download alone took 2-3 s and 11 s. Read here, the pipe is drained as fast
//! as the network fills it, and the load worker parses from its message queue.
//!
//! Roles and messages: like the parse workers (`web::pool`), one binary, the role chosen by the
//! worker's name (`loader::download::PUMP_NAME`), messages `[json, ArrayBuffer?]`
//! (`loader::download`, with the piece and window accounting). The load worker, having seen a
//! body of at least `loader::source::HANDOFF_BYTES` (`web::source::fetch`), cancels its own read
//! and starts a pump with the URL. The pump fetches it again and posts its pieces (one copy
//! here, the buffer then transferred); the load worker parses each and answers `Consumed`.
//!
//! A gzip body, when the load worker sent a plan (`loader::inflate`), is inflated here by the
//! browser (`web::gunzip`) and its JSON posted in pieces, which the load worker cuts into parts
//! for the parse workers; they are answered `Consumed` once parsed.
//!
//! Failures: the pump's own fetch errors come back as `Failed` with the same words the load
//! worker would use (`web::source`), a crash as the `error` event; both end the load with a
//! message. A load that is dropped (replaced, cancelled) refuses the next piece, and the pump is
//! terminated, which cancels its download.

use super::post::{console_error, post_parts, Target};
use super::source::{self, WebReceiver};
use super::spawn_worker;
use crate::input::is_gzip;
use crate::loader::download::{self, from_pump, FromPump, Gather, ToPump, PUMP_NAME};
use super::gunzip::{Gunzip, Inflated};
use crate::loader::inflate::Inflate;
use crate::loader::source::{with, Receiver};
use serde::Serialize;
use std::cell::RefCell;
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, Worker};

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
    pub fn start<R: WebReceiver + 'static>(to: Weak<RefCell<R>>, id: u32, url: &str, inflate: Option<Inflate>) -> Result<Self, String> {
        let worker = spawn_worker(PUMP_NAME)?;
        let (reply, url, on_message_to) = (worker.clone(), url.to_owned(), to.clone());
        let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
            let parts = js_sys::Array::from(&ev.data());
            let beside = parts.get(1).dyn_into::<js_sys::ArrayBuffer>().ok().map(|buffer| js_sys::Uint8Array::new(&buffer));
            let json = parts.get(0).as_string();
            if let Some(answer) = from_pump(&on_message_to, id, (&url, inflate), json.as_deref(), beside, &|| reply.terminate()) {
                post(&reply, &answer, None);
            }
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

    /// Tells the pump `bytes` of its inflated pieces were parsed.
    pub fn consumed(&self, bytes: u64) {
        post(&self.worker, &ToPump::Consumed { bytes }, None);
    }
}

/// Posts `[json, buffer?]` to `target` (the pump or the load worker), transferring `buffer`.
fn post<M: Serialize>(target: &impl Target, msg: &M, buffer: Option<&js_sys::ArrayBuffer>) {
    if post_parts(target, &download::encode(msg), buffer.map(AsRef::as_ref), true).is_err() {
        console_error("download worker: postMessage failed");
    }
}

/// The pump's side: what it posts, and the wait for room.
struct Sender {
    scope: DedicatedWorkerGlobalScope,
    /// Itself, for the inflating task.
    me: Weak<RefCell<Sender>>,
    /// Pieces read and not posted, bytes posted and not parsed.
    gather: Gather<js_sys::Uint8Array>,
    /// Resolves the wait for room when the load worker reports bytes consumed.
    wake: Option<js_sys::Function>,
    /// The load worker's plan for a gzip body, until its first bytes say whether it is one.
    plan: Option<Inflate>,
    /// The gzip being inflated and cut, if the body is one and a plan came.
    gunzip: Option<Gunzip>,
}

impl Receiver for Sender {
    type View = js_sys::Uint8Array;
    type Room = js_sys::Promise;

    fn open(&mut self, _id: u32, _name: &str, _size: Option<u64>) -> bool {
        true
    }

    fn bytes(&mut self, _id: u32, bytes: &js_sys::Uint8Array) -> bool {
        if self.plan.take().is_some() {
            let head = [bytes.get_index(0), bytes.get_index(1)];
            if bytes.length() >= 2 && is_gzip(&head) {
                self.gunzip = self.inflate();
            }
        }
        if let Some(gunzip) = &self.gunzip {
            return gunzip.write(bytes);
        }
        if let Some(pieces) = self.gather.add(bytes.clone()) {
            self.post_piece(pieces, &FromPump::Bytes);
        }
        true
    }

    fn finish(&mut self, _id: u32) {
        if let Some(gunzip) = &self.gunzip {
            // The inflating task posts the end.
            return gunzip.close();
        }
        self.flush();
        post(&self.scope, &FromPump::Finish, None);
    }

    fn failed(&mut self, _id: u32, message: String) {
        if let Some(gunzip) = self.gunzip.take() {
            gunzip.abort();
        }
        self.flush();
        post(&self.scope, &FromPump::Failed { message }, None);
    }

    fn room(&mut self) -> Option<js_sys::Promise> {
        if !self.gather.full() {
            return self.gunzip.as_ref().and_then(Gunzip::room);
        }
        let mut wake = None;
        let promise = js_sys::Promise::new(&mut |resolve, _| wake = Some(resolve));
        self.wake = wake;
        Some(promise)
    }
}

impl Sender {
    /// Starts inflating the gzip body with the browser's inflater; `None` (the body posted as
    /// it comes, inflated by the load worker) where the browser has none.
    fn inflate(&self) -> Option<Gunzip> {
        let me = self.me.clone();
        let hand = move |inflated| {
            with(&me, |sender: &mut Sender| sender.post_gunzipped(inflated));
        };
        match Gunzip::start(hand) {
            Ok(gunzip) => Some(gunzip),
            Err(e) => {
                console_error(&format!("download worker: no DecompressionStream ({e}): the gzip goes to the load worker as it is"));
                None
            }
        }
    }

    /// Gathers the JSON the browser inflated and posts it in pieces (transferred, counted in
    /// flight), then the end; or why it failed.
    fn post_gunzipped(&mut self, inflated: Inflated) {
        match inflated {
            Inflated::Json(json, read) => {
                if let Some(pieces) = self.gather.add(json) {
                    self.post_piece(pieces, &FromPump::Piece { read });
                }
            }
            Inflated::Done(json_bytes, read) => {
                if let Some(pieces) = self.gather.flush() {
                    self.post_piece(pieces, &FromPump::Piece { read });
                }
                post(&self.scope, &FromPump::Inflated { json_bytes }, None);
            }
            Inflated::Failed(message) => post(&self.scope, &FromPump::Uninflatable { message }, None),
        }
    }

    /// Posts the pieces gathered, if any.
    fn flush(&mut self) {
        if let Some(pieces) = self.gather.flush() {
            self.post_piece(pieces, &FromPump::Bytes);
        }
    }

    /// Posts `pieces` (`len` bytes) as one buffer beside `msg` (transferred, so the load worker
    /// gets it without another copy).
    fn post_piece(&self, (pieces, len): (Vec<js_sys::Uint8Array>, u32), msg: &FromPump) {
        let piece = js_sys::Uint8Array::new_with_length(len);
        let mut at = 0;
        for part in pieces {
            piece.set(&part, at);
            at += part.length();
        }
        post(&self.scope, msg, Some(&piece.buffer()));
    }
}

/// The pump's loop: waits for the URL, downloads it into messages, counts what was consumed.
pub fn serve(scope: DedicatedWorkerGlobalScope) {
    let sender = Rc::new_cyclic(|me| RefCell::new(Sender { scope: scope.clone(), me: me.clone(), gather: Gather::default(), wake: None, plan: None, gunzip: None }));
    let me = sender.clone();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
        let parts = js_sys::Array::from(&ev.data());
        match download::decode::<ToPump>(parts.get(0).as_string().as_deref()) {
            Some(ToPump::Fetch { url, inflate }) => {
                me.borrow_mut().plan = inflate;
                wasm_bindgen_futures::spawn_local(source::fetch(Rc::downgrade(&me), 0, url, String::new()));
            }
            Some(ToPump::Consumed { bytes }) => {
                let mut sender = me.borrow_mut();
                if sender.gather.consumed(bytes) {
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
