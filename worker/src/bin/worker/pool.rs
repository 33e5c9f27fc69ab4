//! Parse sub-workers (wasm only): the load worker's pool of nested dedicated workers, and the
//! loop a sub-worker runs. What the load worker decides about them (which part goes where, when a
//! pool is spawned, kept or terminated) is `kinetoscope::loader`; this is the transport.
//!
//! Roles: one wasm binary, two roles chosen by the worker's name. The load worker (spawned by
//! the app) spawns up to `load::MAX_PARTS` sub-workers from the same `worker_loader.js` with the
//! name [`PARSER_NAME`]; each posts [`FromParser::Ready`], then parses the part it is sent (of a
//! file or posted bytes, the load worker parses the first part itself: [`stream_part`]).
//!
//! Messages: `[json, ArrayBuffer?]` arrays like the app's protocol, but internal to this binary
//! (both ends are the same build, so no version handshake). [`ToParser::Parse`] carries one
//! part's bytes (transferred); the sub-worker answers `Progress` (bytes of its part done, every
//! few MB), then `Parsed` with the part encoded by `load::Part::encode` (transferred), or
//! `Failed`. [`ToParser::ReadPart`] carries a picked `File` and a byte range of it instead: the
//! sub-worker reads the range itself with reads in flight (`source::read_slices`), parses it as
//! it reads (`load::Stream::part`) and answers the same way with a `load::StreamedPart` encoded
//! and how long it waited for bytes, so a large file's bytes never pass through the load
//! worker's wasm memory. With a URL string beside it (a server answering `Range`), the
//! sub-worker fetches its range in ranged requests the same way. Of a trace posted to the page, `ReadPart` carries the range's first
//! bytes and each [`ToParser::More`] the next (copies, transferred), parsed as they come; each
//! piece parsed goes back ([`FromParser::Spent`]) and the load worker fills it with the next
//! bytes ([`Pool::refill`]), looking at its messages between steps of its own part.
//!
//! A trap or a panic in a sub-worker reaches the load worker as an `error` event
//! (`ParserEvent::Crashed`, cancelled there so it does not go on to the page as the load worker's),
//! and a part lost on the way as a `messageerror`, so no failure is silent.
//!
//! Why nested workers owned by the load worker, not workers owned by the app's bridge: the
//! bytes already sit in the load worker, so parts go straight to the parsers and parts come
//! straight back to the one place that assembles them; the page's main thread never sees a
//! part or a model, and Cancel (the bridge terminating the load worker) ends its sub-workers too.
//!
//! Lifetime: a pool serves one load and is terminated when that load ends: a wasm instance's
//! memory never shrinks, so a parser kept after its part would keep that part's memory. The next
//! pool is booted right after (`Loader::warm`), idle until a large load takes it
//! as it is; if none is idle, one is spawned for the load (when `Open`
//! announces a big file, so the sub-workers boot while the bytes arrive).
//!
//! Cost per part: one copy out of the load worker's memory (or of a posted buffer, into pieces
//! reused as they come back: a fresh buffer costs a page fault per 4 KiB), one into the
//! sub-worker's, one for the encoded part and one back, whose slice columns the join reads
//! straight into the model; small next to parsing. A sub-worker is terminated as soon as its
//! part is back ([`Pool::retire`]), so its memory goes while the others still parse.

use crate::post::now_ms;
use crate::source::{js_error, let_messages_run, read_slices, Slices};
use kinetoscope::load::{parse_piece, Piece, Stream, StreamedPart};
use kinetoscope::loader::ParserEvent;
use kinetoscope::json::Form;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, Worker, WorkerOptions};

/// Name given to sub-workers; `worker.rs` reads it to pick the role.
pub const PARSER_NAME: &str = "kinetoscope-parse";

/// Bytes of a posted part parsed between two `Progress` reports (8 MiB, as a file's slices).
const REPORT_BYTES: u64 = 8 << 20;

/// Bytes of a posted buffer copied and posted to a parse worker at a time.
const FEED_BYTES: u64 = 16 << 20;

/// Pieces of a posted part sent before the first comes back: the parse worker has these to
/// parse (some 0.15 s) while the load worker parses its own part and refills returned ones.
const FED_AHEAD: u64 = 4;

/// Bytes the load worker parses of its own posted part between two looks at its messages
/// (pieces given back to refill).
const OWN_STEP: u32 = 16 << 20;

/// The loader scripts/build-site writes for this binary, relative to the load worker's own script.
const LOADER_URL: &str = "./worker_loader.js";

/// From the load worker to a sub-worker.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type")]
enum ToParser {
    /// Parse the transferred bytes as part `index` of load `job`.
    Parse { job: u32, index: u32, start: u64, object: bool, first: bool },
    /// Read bytes `start..end` of the `File` beside this message as part `index` of load
    /// `job`, parsing them as they are read (`load::Stream::part`); or, with an `ArrayBuffer`
    /// beside it, parse those bytes as they come: it holds the first of them, each
    /// [`ToParser::More`] the next.
    ReadPart { job: u32, index: u32, start: u64, end: u64, object: bool, first: bool },
    /// The next bytes of the part `ReadPart` started, in the `ArrayBuffer` beside this message.
    More { job: u32, index: u32 },
}

/// Where a sub-worker reads its part from.
pub enum PartFrom {
    /// A picked file, cloned: a handle, not its bytes.
    File(web_sys::File),
    /// A posted buffer, copied out in pieces.
    Bytes(js_sys::ArrayBuffer),
    /// A URL whose server answers `Range`: the sub-worker fetches its range itself.
    Url(String),
}

/// From a sub-worker to the load worker.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type")]
enum FromParser {
    Ready,
    Progress { job: u32, index: u32, done: u64 },
    /// The encoded part is the transferred buffer beside this message; `waited_ms` is how
    /// long the sub-worker waited for its file's bytes.
    Parsed { job: u32, index: u32, waited_ms: f64 },
    Failed { job: u32, index: u32, message: String },
    /// The transferred buffer beside this message held bytes of part `index` that are now
    /// parsed: given back to be filled with the next ones.
    Spent { job: u32, index: u32 },
}

/// What a sub-worker reported.
pub type Event = ParserEvent<js_sys::ArrayBuffer>;

/// Receives a sub-worker's slot and event.
pub type Sink = Rc<dyn Fn(usize, Event)>;

/// What goes beside a message's JSON: part bytes (transferred) or a `File` (cloned).
pub enum Attached {
    /// Bytes, transferred: the sender's buffer is detached.
    Bytes(js_sys::ArrayBuffer),
    /// A picked file, cloned: a handle, not its bytes.
    File(web_sys::File),
    /// A URL (a string), its range fetched by the sub-worker.
    Url(String),
}

/// One sub-worker and its handlers; a message posted before `Ready` waits in `queued`.
struct Sub {
    worker: Worker,
    ready: bool,
    queued: Vec<(String, Attached)>,
    /// The rest of the posted part it reads, sent as pieces come back.
    refill: Option<Refill>,
    _on_message: Closure<dyn Fn(MessageEvent)>,
    _on_error: Closure<dyn Fn(web_sys::Event)>,
    _on_message_error: Closure<dyn Fn(MessageEvent)>,
}

/// The load worker's sub-workers for one load, booted before it or for it.
#[derive(Default)]
pub struct Pool {
    subs: Vec<Sub>,
    /// Set by [`Pool::terminate`]: the sub-workers' handlers stop reporting (shared with them).
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
    /// Spawns sub-workers until there are `n`; each reports to `sink` with its slot.
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

    /// Marks sub-worker `slot` booted and posts what waited for it.
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

    /// Sends part `index` of load `job` (`bytes`, where `piece` says) to sub-worker `slot`.
    ///
    /// # Errors
    /// The browser's message when the copy or the post fails.
    pub fn parse(&mut self, slot: usize, job: u32, index: usize, piece: Piece, bytes: &[u8]) -> Result<(), String> {
        let Some(sub) = self.subs.get_mut(slot) else { return Err(format!("no sub-worker {slot}")) };
        let msg = ToParser::Parse { job, index: index as u32, start: piece.start, object: piece.form == Form::Object, first: piece.first };
        let json = serde_json::to_string(&msg).map_err(|e| e.to_string())?;
        let len = u32::try_from(bytes.len()).map_err(|_| format!("part {index} is larger than 4 GiB"))?;
        let array = js_sys::Uint8Array::new_with_length(len);
        array.copy_from(bytes);
        sub.send(json, Attached::Bytes(array.buffer()))
    }

    /// Sends part `index` of load `job` (bytes `piece.start..end`) to sub-worker `slot`: the
    /// file it reads them from, or of a posted buffer the first [`FED_AHEAD`] pieces of
    /// [`FEED_BYTES`], copied (a transfer detaches the whole buffer); each piece it gives back
    /// parsed is filled with the next bytes ([`Pool::refill`]), so pieces are copied into
    /// memory already in use rather than into fresh buffers (faulted in page by page).
    ///
    /// # Errors
    /// The browser's message when a post fails.
    pub fn read_part(&mut self, slot: usize, job: u32, index: usize, piece: Piece, end: u64, from: PartFrom) -> Result<(), String> {
        let Some(sub) = self.subs.get_mut(slot) else { return Err(format!("no sub-worker {slot}")) };
        let (start, object, first, index) = (piece.start, piece.form == Form::Object, piece.first, index as u32);
        let read = serde_json::to_string(&ToParser::ReadPart { job, index, start, end, object, first }).map_err(|e| e.to_string())?;
        match from {
            PartFrom::File(file) => sub.send(read, Attached::File(file)),
            PartFrom::Url(url) => sub.send(read, Attached::Url(url)),
            PartFrom::Bytes(bytes) => {
                let mut refill = Refill { job, index, bytes, next: start, end };
                let mut msg = read;
                for _ in 0..FED_AHEAD {
                    let Some(piece) = refill.next_piece(None) else { break };
                    sub.send(msg, Attached::Bytes(piece))?;
                    msg = more(job, index)?;
                }
                sub.refill = Some(refill);
                Ok(())
            }
        }
    }

    /// Fills `buffer`, a piece sub-worker `slot` gave back parsed, with the next bytes of its
    /// part of load `job` and posts it; nothing once the part was all sent.
    ///
    /// # Errors
    /// The browser's message when the post fails.
    pub fn refill(&mut self, slot: usize, job: u32, buffer: js_sys::ArrayBuffer) -> Result<(), String> {
        let Some(sub) = self.subs.get_mut(slot) else { return Ok(()) };
        let Some(refill) = sub.refill.as_mut().filter(|r| r.job == job) else { return Ok(()) };
        let index = refill.index;
        match refill.next_piece(Some(buffer)) {
            Some(piece) => sub.send(more(job, index)?, Attached::Bytes(piece)),
            None => {
                sub.refill = None;
                Ok(())
            }
        }
    }

    /// Terminates every sub-worker. Their `error` handlers stay until the pool is dropped,
    /// silent but still cancelling: a sub-worker's error already queued when it is terminated
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

    /// Terminates sub-worker `slot` once its part is back: its memory (a wasm instance's
    /// never shrinks) is freed while the others still parse.
    pub fn retire(&mut self, slot: usize) {
        if let Some(sub) = self.subs.get(slot) {
            sub.worker.set_onmessage(None);
            sub.worker.set_onmessageerror(None);
            sub.worker.terminate();
        }
    }
}

/// The message announcing the next piece of part `index` of load `job`.
fn more(job: u32, index: u32) -> Result<String, String> {
    serde_json::to_string(&ToParser::More { job, index }).map_err(|e| e.to_string())
}

/// What is left to send of a posted part: bytes `next..end` of `bytes`.
struct Refill {
    job: u32,
    index: u32,
    bytes: js_sys::ArrayBuffer,
    next: u64,
    end: u64,
}

impl Refill {
    /// The next piece: copied into `reuse` when it is a spent piece of the same length, else
    /// into a new buffer (the first pieces, and the last, shorter one). `None` once all sent.
    fn next_piece(&mut self, reuse: Option<js_sys::ArrayBuffer>) -> Option<js_sys::ArrayBuffer> {
        if self.next >= self.end {
            return None;
        }
        let to = (self.next + FEED_BYTES).min(self.end);
        // Posted buffers are below 4 GiB (the page refuses larger ones), so offsets fit u32.
        let (at, len) = (self.next as u32, (to - self.next) as u32);
        self.next = to;
        Some(match reuse.filter(|b| b.byte_length() == len) {
            Some(buffer) => {
                js_sys::Uint8Array::new(&buffer).set(&js_sys::Uint8Array::new_with_byte_offset_and_length(&self.bytes, at, len), 0);
                buffer
            }
            None => self.bytes.slice_with_end(at, at + len),
        })
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

fn post(worker: &Worker, json: &str, attached: &Attached) -> Result<(), String> {
    let sent = match attached {
        Attached::Bytes(buffer) => {
            let parts = js_sys::Array::of2(&JsValue::from_str(json), buffer);
            worker.post_message_with_transfer(&parts, &js_sys::Array::of1(buffer))
        }
        Attached::File(file) => worker.post_message(&js_sys::Array::of2(&JsValue::from_str(json), file)),
        Attached::Url(url) => worker.post_message(&js_sys::Array::of2(&JsValue::from_str(json), &JsValue::from_str(url))),
    };
    sent.map_err(|e| js_error(&e))
}

fn spawn(slot: usize, sink: Sink, ended: Rc<Cell<bool>>) -> Result<Sub, String> {
    let options = WorkerOptions::new();
    options.set_name(PARSER_NAME);
    let worker = Worker::new_with_options(LOADER_URL, &options).map_err(|e| js_error(&e))?;
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
        sink(slot, Event::Crashed(message.map_or_else(|| "its script could not be loaded".into(), |m| explain_trap(&m))));
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

/// `message` with what a bare wasm trap means: the engine aborted, which (panics being thrown
/// with their message) is almost always an allocation that failed.
fn explain_trap(message: &str) -> String {
    if message.contains("RuntimeError: unreachable") {
        format!("{message} (the engine aborted: most often its 4 GiB of memory ran out)")
    } else {
        message.to_owned()
    }
}

/// A sub-worker's message as an [`Event`]; anything unreadable is a crash.
fn decode(data: &JsValue) -> Event {
    let parts = js_sys::Array::from(data);
    let Some(json) = parts.get(0).as_string() else { return Event::Crashed("message without a JSON string".into()) };
    match serde_json::from_str::<FromParser>(&json) {
        Ok(FromParser::Ready) => Event::Ready,
        Ok(FromParser::Progress { job, index, done }) => Event::Progress { job, index: index as usize, done },
        Ok(FromParser::Failed { job, index, message }) => Event::Failed { job, index: index as usize, message },
        Ok(FromParser::Spent { job, index }) => match parts.get(1).dyn_into::<js_sys::ArrayBuffer>() {
            Ok(buffer) => Event::Spent { job, buffer },
            Err(_) => Event::Failed { job, index: index as usize, message: "piece given back without its buffer".into() },
        },
        Ok(FromParser::Parsed { job, index, waited_ms }) => match parts.get(1).dyn_ref::<js_sys::ArrayBuffer>() {
            Some(buffer) => Event::Parsed { job, index: index as usize, bytes: js_sys::Uint8Array::new(buffer).to_vec(), waited_ms },
            None => Event::Failed { job, index: index as usize, message: "part sent without its bytes".into() },
        },
        Err(e) => Event::Crashed(format!("bad message {e}: {json:?}")),
    }
}

/// A part whose bytes come in messages (`ReadPart`, then `More`), parsed as each arrives.
struct Feed {
    job: u32,
    index: u32,
    stream: Stream,
    /// Bytes of the part, and of them arrived.
    len: u64,
    done: u64,
    /// When the last bytes were parsed, and the ms spent since the first waiting for the next.
    idle_since: f64,
    waited_ms: f64,
}

impl Feed {
    fn new(job: u32, index: u32, piece: Piece, end: u64, now: f64) -> Self {
        let len = end.saturating_sub(piece.start);
        let stream = Stream::part(piece).expecting(len);
        Self { job, index, stream, len, done: 0, idle_since: now, waited_ms: 0.0 }
    }

    /// Parses the bytes of `buffer`, the part's next; `Some` with the part encoded once it has
    /// them all, and the ms waited for them.
    fn take(&mut self, scope: &DedicatedWorkerGlobalScope, buffer: &js_sys::ArrayBuffer) -> Option<Result<(Vec<u8>, f64), String>> {
        if self.done > 0 {
            self.waited_ms += now_ms(scope) - self.idle_since;
        }
        let (job, index) = (self.job, self.index);
        let mut report = |done| {
            reply(scope, &FromParser::Progress { job, index, done }, None);
            true
        };
        match parse_bytes_of(&mut self.stream, js_sys::Uint8Array::new(buffer), self.done, &mut report) {
            Ok(read) => self.done += read.unwrap_or(0),
            Err(e) => return Some(Err(e)),
        }
        self.idle_since = now_ms(scope);
        (self.done >= self.len).then(|| {
            let stream = std::mem::take(&mut self.stream);
            Ok((stream.finish_part().encode(), self.waited_ms))
        })
    }
}

/// The sub-worker role: parse each part it is sent and post it back encoded.
pub fn serve(scope: DedicatedWorkerGlobalScope) {
    let reply_scope = scope.clone();
    let feed: RefCell<Option<Feed>> = RefCell::new(None);
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
        let parts = js_sys::Array::from(&ev.data());
        let piece = |start, object, first| Piece { start, form: if object { Form::Object } else { Form::Array }, first };
        let bytes = parts.get(1).dyn_into::<js_sys::ArrayBuffer>().ok();
        let fed = |job, index, buffer: &js_sys::ArrayBuffer| {
            let mut feed = feed.borrow_mut();
            let taken = match feed.as_mut().filter(|f| f.job == job && f.index == index) {
                Some(f) => f.take(&reply_scope, buffer),
                None => Some(Err("bytes for a part it was not sent".into())),
            };
            match taken {
                Some(encoded) => {
                    *feed = None;
                    answer(&reply_scope, job, index, encoded);
                }
                // Parsed: back to be filled with the next bytes.
                None => send(&reply_scope, &FromParser::Spent { job, index }, Some(buffer)),
            }
        };
        match parts.get(0).as_string().map(|json| serde_json::from_str::<ToParser>(&json)) {
            Some(Ok(ToParser::Parse { job, index, start, object, first })) => {
                let mut progress = |done| reply(&reply_scope, &FromParser::Progress { job, index, done }, None);
                let encoded = parse_bytes(&parts.get(1), piece(start, object, first), &mut progress);
                answer(&reply_scope, job, index, encoded.map(|part| (part, 0.0)));
            }
            Some(Ok(ToParser::ReadPart { job, index, start, end, object, first })) => match bytes {
                Some(buffer) => {
                    *feed.borrow_mut() = Some(Feed::new(job, index, piece(start, object, first), end, now_ms(&reply_scope)));
                    fed(job, index, &buffer);
                }
                // Read with reads in flight, so the answer comes from a task of its own.
                None => {
                    let (scope, file) = (reply_scope.clone(), parts.get(1));
                    wasm_bindgen_futures::spawn_local(async move {
                        let mut progress = |done| reply(&scope, &FromParser::Progress { job, index, done }, None);
                        let encoded = read_part(&file, piece(start, object, first), end, &mut progress).await;
                        answer(&scope, job, index, encoded);
                    });
                }
            },
            Some(Ok(ToParser::More { job, index })) => match bytes {
                Some(buffer) => fed(job, index, &buffer),
                None => answer(&reply_scope, job, index, Err("more bytes sent without them".into())),
            },
            _ => reply(&reply_scope, &FromParser::Failed { job: 0, index: 0, message: "bad message to a parse worker".into() }, None),
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the sub-worker.
    on_message.forget();
    reply(&scope, &FromParser::Ready, None);
}

/// Posts part `index` of load `job` back, encoded with the ms waited for its bytes, or why not.
fn answer(scope: &DedicatedWorkerGlobalScope, job: u32, index: u32, encoded: Result<(Vec<u8>, f64), String>) {
    match encoded {
        Ok((part, waited_ms)) => reply(scope, &FromParser::Parsed { job, index, waited_ms }, Some(&part)),
        Err(message) => reply(scope, &FromParser::Failed { job, index, message }, None),
    }
}

/// Parses the transferred bytes (`attached`, an `ArrayBuffer`) as `piece`; `progress(bytes
/// done)` every few MB. The part, encoded.
fn parse_bytes(attached: &JsValue, piece: Piece, progress: &mut dyn FnMut(u64)) -> Result<Vec<u8>, String> {
    let buffer = attached.dyn_ref::<js_sys::ArrayBuffer>().ok_or("part sent without its bytes")?;
    let bytes = js_sys::Uint8Array::new(buffer).to_vec();
    let part = parse_piece(&bytes, piece, &mut |offset| progress(offset.saturating_sub(piece.start)));
    drop(bytes);
    Ok(part.encode())
}

/// Reads the part a sub-worker was sent from its `File` or URL with [`stream_part`]; the part
/// encoded, and the ms spent waiting for reads.
async fn read_part(file: &JsValue, piece: Piece, end: u64, progress: &mut dyn FnMut(u64)) -> Result<(Vec<u8>, f64), String> {
    let stream = Stream::part(piece).expecting(end.saturating_sub(piece.start));
    let read = stream_part(file, stream, piece.start..end, progress, &mut || true).await?;
    let (part, waited_ms) = read.ok_or("part stopped")?;
    Ok((part.encode(), waited_ms))
}

/// Parses bytes `range` into `stream` (a part's, `load::Stream::part`) as they are read from
/// `from`: a URL string (those bytes of it, fetched in ranged requests in flight), a `File` (those bytes of it, read with reads in flight by `source::read_slices`, as
/// the load worker reads a streamed file: read one at a time with `FileReaderSync`, each of the
/// two parse workers of a 1 GB pick spent 1.7-1.9 s of its 4.2-4.5 s blocked on reads,
/// docs/performance.md) or a `Uint8Array` holding exactly those bytes. `progress(bytes done)`
/// every 8 MiB or so, and the read stops (`None`) once `go_on()` is false. The part, and the ms
/// spent waiting for reads.
///
/// # Errors
/// The browser's message when the file cannot be read; `from` being neither.
pub async fn stream_part(
    from: &JsValue,
    mut stream: Stream,
    range: std::ops::Range<u64>,
    progress: &mut dyn FnMut(u64),
    go_on: &mut dyn FnMut() -> bool,
) -> Result<Option<(StreamedPart, f64)>, String> {
    if let Some(view) = from.dyn_ref::<js_sys::Uint8Array>() {
        let mut report = |done| {
            let going = go_on();
            if going {
                progress(done);
            }
            going
        };
        let (mut at, len) = (0, view.length());
        while at < len {
            let to = at.saturating_add(OWN_STEP).min(len);
            if parse_bytes_of(&mut stream, view.subarray(at, to), u64::from(at), &mut report)?.is_none() {
                return Ok(None);
            }
            at = to;
            // The parse workers' spent pieces wait in this worker's queue to be refilled.
            if at < len {
                let_messages_run().await;
            }
        }
        return Ok(go_on().then(|| (stream.finish_part(), 0.0)));
    }
    let url = from.as_string();
    let slices = match (from.dyn_ref::<web_sys::File>(), url.as_deref()) {
        (Some(file), _) => Slices::File(file),
        (None, Some(url)) => Slices::Url(url),
        (None, None) => return Err("part sent without its file, URL or bytes".into()),
    };
    let (mut bytes, mut done) = (Vec::new(), 0);
    let waited_ms = read_slices(&slices, range, |slice| {
        if !go_on() {
            return false;
        }
        bytes.resize(slice.length() as usize, 0);
        slice.copy_to(&mut bytes);
        stream.push(&bytes);
        done += bytes.len() as u64;
        progress(done);
        true
    })
    .await?;
    Ok(waited_ms.map(|ms| (stream.finish_part(), ms)))
}

/// Parses all of `bytes` into `stream`, `done` bytes of the part having come before them;
/// `report(bytes done)` as each 8 MiB (as a file's slices) is passed, which stops the read
/// (`None`) by returning false. The bytes read.
///
/// # Errors
/// A read out of `bytes` that failed.
fn parse_bytes_of(stream: &mut Stream, bytes: js_sys::Uint8Array, done: u64, report: &mut dyn FnMut(u64) -> bool) -> Result<Option<u64>, String> {
    let mut bytes = BufferRead::new(bytes, 0);
    loop {
        match stream.fill_from(&mut bytes) {
            Ok(0) => return Ok(Some(bytes.at)),
            Ok(got) => {
                let now = done + bytes.at;
                if (now - got as u64) / REPORT_BYTES != now / REPORT_BYTES && !report(now) {
                    return Ok(None);
                }
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Bytes outside wasm memory read in order: each read copies the next ones into wasm memory,
/// where the stream parses them (`Stream::fill_from`) while they are in cache.
pub struct BufferRead {
    bytes: js_sys::Uint8Array,
    /// Bytes read so far.
    pub at: u64,
}

impl BufferRead {
    /// Reads `bytes` from byte `at`.
    pub fn new(bytes: js_sys::Uint8Array, at: u64) -> Self {
        Self { bytes, at }
    }
}

impl std::io::Read for BufferRead {
    fn read(&mut self, into: &mut [u8]) -> std::io::Result<usize> {
        // Posted buffers are below 4 GiB (the page refuses larger ones, `control/posted.rs`), so
        // offsets fit u32.
        let at = u32::try_from(self.at).map_err(std::io::Error::other)?;
        let len = self.bytes.length().saturating_sub(at).min(u32::try_from(into.len()).unwrap_or(u32::MAX));
        self.bytes.subarray(at, at + len).copy_to(&mut into[..len as usize]);
        self.at += u64::from(len);
        Ok(len as usize)
    }
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

/// Posts `[json, ArrayBuffer?]` from a sub-worker, transferring a copy of `bytes` if given.
fn reply(scope: &DedicatedWorkerGlobalScope, msg: &FromParser, bytes: Option<&[u8]>) {
    send(scope, msg, bytes.map(|b| js_sys::Uint8Array::from(b).buffer()).as_ref());
}

/// Posts `msg` with `buffer` (transferred) beside it, if any.
fn send(scope: &DedicatedWorkerGlobalScope, msg: &FromParser, buffer: Option<&js_sys::ArrayBuffer>) {
    let json = match serde_json::to_string(msg) {
        Ok(json) => json,
        Err(e) => return web_sys::console::error_1(&JsValue::from_str(&format!("parse worker: {e}"))),
    };
    let parts = js_sys::Array::of1(&JsValue::from_str(&json));
    let sent = match buffer {
        Some(buffer) => {
            parts.push(buffer);
            scope.post_message_with_transfer(&parts, &js_sys::Array::of1(buffer))
        }
        None => scope.post_message(&parts),
    };
    if let Err(e) = sent {
        web_sys::console::error_1(&JsValue::from_str(&format!("parse worker: postMessage failed: {}", js_error(&e))));
    }
}
