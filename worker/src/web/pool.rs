//! Parse workers (wasm only): the load worker's pool of nested dedicated workers. What the load
//! worker decides about them (which part goes where, when a pool is spawned, kept or terminated)
//! is `crate::loader`, their messages `crate::loader::parser`, the pieces of a posted part
//! `crate::loader::refill`; this is the transport. The loop a parse worker runs is
//! `web::parser`.
//!
//! Parts: [`Pool::parse`] posts a part's bytes (transferred); [`Pool::read_part`] a picked `File`
//! or a URL and a byte range, which the parse worker reads itself, or of a trace posted to the
//! page the first pieces of its range ([`Pool::refill`] fills each piece given back with the next
//! bytes). A message posted before the parse worker's `Ready` waits in its queue.
//!
//! A trap or a panic in a parse worker reaches the load worker as an `error` event
//! (`ParserEvent::Crashed`, cancelled there so it does not go on to the page as the load worker's),
//! and a part lost on the way as a `messageerror`, so no failure is silent.
//!
//! Why nested workers owned by the load worker, not workers owned by the app's bridge: the
//! bytes already sit in the load worker, so parts go straight to the parsers and parts come
//! straight back to the one place that assembles them; the page's main thread never sees a
//! part or a model, and Cancel (the bridge terminating the load worker) ends its parse workers
//! too.
//!
//! Lifetime: a pool serves one load and is terminated when that load ends: a wasm instance's
//! memory never shrinks, so a parser kept after its part would keep that part's memory. The next
//! pool is booted right after (`Loader::warm`), idle until a large load takes it
//! as it is; if none is idle, one is spawned for the load (when `Open`
//! announces a big file, so the parse workers boot while the bytes arrive).
//!
//! Cost per part: one copy out of the load worker's memory (or of a posted buffer, into pieces
//! reused as they come back: a fresh buffer costs a page fault per 4 KiB), one into the
//! parse worker's, one for the encoded part and one back, whose slice columns the join reads
//! straight into the model; small next to parsing. A parse worker is terminated as soon as its
//! part is back ([`Pool::retire`]), so its memory goes while the others still parse.

use super::post::{js_error, post_parts};
use super::spawn_worker;
use crate::load::Piece;
use crate::loader::parser::{self, ToParser, PARSER_NAME};
use crate::loader::refill::{self, Refill};
use crate::loader::ParserEvent;
use std::cell::Cell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker};

/// Where a parse worker reads its part from.
pub enum PartFrom {
    /// A picked file, cloned: a handle, not its bytes.
    File(web_sys::File),
    /// A posted buffer, copied out in pieces.
    Bytes(js_sys::ArrayBuffer),
    /// A URL whose server answers `Range`: the parse worker fetches its range itself.
    Url(String),
}

/// What a parse worker reported.
pub type Event = ParserEvent<js_sys::ArrayBuffer>;

/// Receives a parse worker's slot and event.
pub type Sink = Rc<dyn Fn(usize, Event)>;

/// What goes beside a message's JSON: part bytes (transferred) or a `File` (cloned).
pub enum Attached {
    /// Bytes, transferred: the sender's buffer is detached.
    Bytes(js_sys::ArrayBuffer),
    /// A picked file, cloned: a handle, not its bytes.
    File(web_sys::File),
    /// A URL (a string), its range fetched by the parse worker.
    Url(String),
    /// Nothing beside the message.
    Nothing,
}

/// One parse worker and its handlers; a message posted before `Ready` waits in `queued`.
struct Sub {
    worker: Worker,
    ready: bool,
    queued: Vec<(String, Attached)>,
    /// The rest of the posted part it reads, sent as pieces come back.
    refill: Option<Refill<js_sys::ArrayBuffer>>,
    _on_message: Closure<dyn Fn(MessageEvent)>,
    _on_error: Closure<dyn Fn(web_sys::Event)>,
    _on_message_error: Closure<dyn Fn(MessageEvent)>,
}

/// The load worker's parse workers for one load, booted before it or for it.
#[derive(Default)]
pub struct Pool {
    subs: Vec<Sub>,
    /// Set by [`Pool::terminate`]: the parse workers' handlers stop reporting (shared with them).
    ended: Rc<Cell<bool>>,
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.terminate();
        for sub in &self.subs {
            sub.worker.set_onerror(None);
        }
    }
}

impl Pool {
    /// Spawns parse workers until there are `n`; each reports to `sink` with its slot.
    ///
    /// # Errors
    /// The browser's message when a worker cannot be created.
    pub fn grow(&mut self, n: usize, sink: &Sink) -> Result<(), String> {
        while self.subs.len() < n {
            let slot = self.subs.len();
            self.subs.push(spawn(slot, sink.clone(), self.ended.clone())?);
        }
        Ok(())
    }

    /// Marks parse worker `slot` booted and posts what waited for it.
    ///
    /// # Errors
    /// The browser's message when posting fails.
    pub fn ready(&mut self, slot: usize) -> Result<(), String> {
        let Some(sub) = self.subs.get_mut(slot) else { return Ok(()) };
        sub.ready = true;
        for (json, attached) in std::mem::take(&mut sub.queued) {
            post(&sub.worker, &json, &attached)?;
        }
        Ok(())
    }

    /// Sends part `index` of load `job` (`bytes`, where `piece` says) to parse worker `slot`.
    ///
    /// # Errors
    /// The browser's message when the copy or the post fails.
    pub fn parse(&mut self, slot: usize, job: u32, index: usize, piece: Piece, bytes: &[u8]) -> Result<(), String> {
        let Some(sub) = self.subs.get_mut(slot) else { return Err(format!("no sub-worker {slot}")) };
        let json = ToParser::parse(job, index as u32, piece).encode();
        let len = u32::try_from(bytes.len()).map_err(|_| format!("part {index} is larger than 4 GiB"))?;
        let array = js_sys::Uint8Array::new_with_length(len);
        array.copy_from(bytes);
        sub.send(json, Attached::Bytes(array.buffer()))
    }

    /// Sends part `index` of load `job` (bytes `piece.start..end`) to parse worker `slot`: the
    /// file it reads them from, or of a posted buffer the first `refill::FED_AHEAD` pieces of
    /// `refill::FEED_BYTES`, copied (a transfer detaches the whole buffer); each piece it gives back
    /// parsed is filled with the next bytes ([`Pool::refill`]), so pieces are copied into
    /// memory already in use rather than into fresh buffers (faulted in page by page).
    ///
    /// # Errors
    /// The browser's message when a post fails.
    pub fn read_part(&mut self, slot: usize, job: u32, index: usize, piece: Piece, end: u64, from: PartFrom) -> Result<(), String> {
        let Some(sub) = self.subs.get_mut(slot) else { return Err(format!("no sub-worker {slot}")) };
        let read = ToParser::read_part(job, index as u32, piece, end);
        match from {
            PartFrom::File(file) => sub.send(read.encode(), Attached::File(file)),
            PartFrom::Url(url) => sub.send(read.encode(), Attached::Url(url)),
            PartFrom::Bytes(bytes) => {
                let mut refill = Refill::new(job, index as u32, bytes, piece.start, end);
                for (msg, piece) in refill.opening(read) {
                    sub.send(msg.encode(), Attached::Bytes(piece))?;
                }
                sub.refill = Some(refill);
                Ok(())
            }
        }
    }

    /// Sends file `index` of run load `job`, named `name`, to parse worker `slot` to load whole
    /// (`ToParser::Rank`): the `File` or URL it reads it from.
    ///
    /// # Errors
    /// The browser's message when the post fails.
    pub fn rank(&mut self, slot: usize, job: u32, index: usize, name: &str, from: PartFrom) -> Result<(), String> {
        let Some(sub) = self.subs.get_mut(slot) else { return Err(format!("no sub-worker {slot}")) };
        let json = ToParser::Rank { job, index: index as u32, name: name.to_owned() }.encode();
        match from {
            PartFrom::File(file) => sub.send(json, Attached::File(file)),
            PartFrom::Url(url) => sub.send(json, Attached::Url(url)),
            PartFrom::Bytes(_) => Err("a run's file is a File or a URL".into()),
        }
    }

    /// Posts `msg` to parse worker `slot`, `bytes` (transferred) beside it.
    ///
    /// # Errors
    /// The browser's message when the post fails.
    pub fn tell(&mut self, slot: usize, msg: &ToParser, bytes: Option<js_sys::ArrayBuffer>) -> Result<(), String> {
        let Some(sub) = self.subs.get_mut(slot) else { return Err(format!("no sub-worker {slot}")) };
        sub.send(msg.encode(), bytes.map_or(Attached::Nothing, Attached::Bytes))
    }

    /// Fills `buffer`, a piece parse worker `slot` gave back parsed, with the next bytes of its
    /// part of load `job` and posts it; nothing once the part was all sent.
    ///
    /// # Errors
    /// The browser's message when the post fails.
    pub fn refill(&mut self, slot: usize, job: u32, buffer: js_sys::ArrayBuffer) -> Result<(), String> {
        let Some(sub) = self.subs.get_mut(slot) else { return Ok(()) };
        match refill::refill(&mut sub.refill, job, buffer) {
            Some((more, piece)) => sub.send(more.encode(), Attached::Bytes(piece)),
            None => Ok(()),
        }
    }

    /// Terminates every parse worker. Their `error` handlers stay until the pool is dropped,
    /// silent but still cancelling: a parse worker's error already queued when it is terminated
    /// (the second of two that crashed together) would otherwise go on to this worker's scope
    /// and reach the page as the load worker's own. The handlers stay allocated too, so this may
    /// run inside one of them.
    pub fn terminate(&mut self) {
        if self.ended.replace(true) {
            return;
        }
        for sub in &self.subs {
            sub.worker.set_onmessage(None);
            sub.worker.set_onmessageerror(None);
            sub.worker.terminate();
        }
    }

    /// Terminates parse worker `slot` once its part is back: its memory (a wasm instance's
    /// never shrinks) is freed while the others still parse.
    pub fn retire(&mut self, slot: usize) {
        if let Some(sub) = self.subs.get(slot) {
            sub.worker.set_onmessage(None);
            sub.worker.set_onmessageerror(None);
            sub.worker.terminate();
        }
    }
}

impl Sub {
    /// Posts now if booted, else when it reports `Ready`.
    fn send(&mut self, json: String, attached: Attached) -> Result<(), String> {
        if self.ready {
            post(&self.worker, &json, &attached)
        } else {
            self.queued.push((json, attached));
            Ok(())
        }
    }
}

/// Posts `[json, attached]` to `worker`, transferring bytes.
fn post(worker: &Worker, json: &str, attached: &Attached) -> Result<(), String> {
    let sent = match attached {
        Attached::Bytes(buffer) => post_parts(worker, json, Some(buffer), true),
        Attached::File(file) => post_parts(worker, json, Some(file), false),
        Attached::Url(url) => post_parts(worker, json, Some(&JsValue::from_str(url)), false),
        Attached::Nothing => post_parts(worker, json, None, false),
    };
    sent.map_err(|e| js_error(&e))
}

/// Spawns parse worker `slot`, reporting to `sink` until `ended`.
fn spawn(slot: usize, sink: Sink, ended: Rc<Cell<bool>>) -> Result<Sub, String> {
    let worker = spawn_worker(PARSER_NAME)?;
    let on_message_sink = sink.clone();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
        on_message_sink(slot, decode(&ev.data()));
    });
    // A message that could not be received (its part lost on the way) leaves the load waiting
    // for that part forever: it ends the load like a crash.
    let lost_sink = sink.clone();
    let on_message_error = Closure::<dyn Fn(MessageEvent)>::new(move |_: MessageEvent| {
        lost_sink(slot, Event::Crashed("its message could not be received (messageerror)".into()));
    });
    // An `ErrorEvent` for a trap or a panic (thrown with its message by the panic hook), a plain
    // `Event` when the script could not load.
    // Handled here: not cancelled, the error would go on to the load worker's own scope as if
    // uncaught there, and the page would take the load worker for dead.
    let on_error = Closure::<dyn Fn(web_sys::Event)>::new(move |ev: web_sys::Event| {
        ev.prevent_default();
        if ended.get() {
            return;
        }
        let message = js_sys::Reflect::get(&ev, &"message".into()).ok().and_then(|m| m.as_string());
        sink(slot, Event::Crashed(parser::crashed(message.as_deref())));
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    worker.set_onmessageerror(Some(on_message_error.as_ref().unchecked_ref()));
    Ok(Sub {
        worker,
        ready: false,
        queued: Vec::new(),
        refill: None,
        _on_message: on_message,
        _on_error: on_error,
        _on_message_error: on_message_error,
    })
}

/// A parse worker's `[json, ArrayBuffer?]` message as an [`Event`] (`loader::parser::decode`).
fn decode(data: &JsValue) -> Event {
    let parts = js_sys::Array::from(data);
    let beside = parts.get(1).dyn_into::<js_sys::ArrayBuffer>().ok();
    parser::decode(parts.get(0).as_string().as_deref(), beside, |buffer| js_sys::Uint8Array::new(buffer).to_vec())
}

/// Fills `into` from byte `start` of `file` (fewer bytes only at its end); the bytes read.
pub fn read_at(reader: &web_sys::FileReaderSync, file: &web_sys::File, start: u64, into: &mut [u8]) -> Result<usize, String> {
    let failed = |e: JsValue| format!("reading {:?} failed: {}", file.name(), js_error(&e));
    // Offsets are exact as f64 below 2^53.
    let end = start + into.len() as u64;
    let blob = file.slice_with_f64_and_f64(start as f64, end as f64).map_err(failed)?;
    let buffer = reader.read_as_array_buffer(&blob).map_err(failed)?;
    let array = js_sys::Uint8Array::new(&buffer);
    let got = (array.length() as usize).min(into.len());
    array.subarray(0, got as u32).copy_to(&mut into[..got]);
    Ok(got)
}
