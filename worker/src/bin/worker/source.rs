//! Where a load's bytes come from, read inside the worker: a URL streamed with `fetch`, a local
//! `File` read in [`SLICE_BYTES`] slices, or bytes another page posted (already in memory).
//!
//! Inputs: a load id, and a URL or `File` from the app's `Fetch` / `Read`. Output: calls on a
//! [`Receiver`] (the worker's state): `open` once the size is known, `bytes` per piece as it
//! arrives, then `finish`; or `failed` with a message for network and file errors.
//!
//! Why here and not on the page: the page's main thread then never touches the bytes. Reading
//! a 1 GB response body there took tasks of 90–150 ms (`ReadableStreamDefaultReader.read`),
//! which froze the page while loading.
//!
//! Invariants: a source stops (and cancels its fetch) as soon as the receiver refuses a piece
//! (the load was cancelled or replaced), so a dropped load never keeps the network or the disk
//! busy; at most [`SLICES_AHEAD`] slices of a file are held here at a time (the one being parsed
//! and the next ones, read meanwhile).

use crate::post::now_ms;
use kinetoscope::loader::ranges::{self, Reply};
use js_sys::{ArrayBuffer, Reflect, Uint8Array};
use std::cell::RefCell;
use std::rc::Weak;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{DedicatedWorkerGlobalScope, File, ReadableStreamDefaultReader, Response, Url, WorkerGlobalScope};

/// Bodies this large (declared by `Content-Length`) are offered to [`Receiver::handoff`], to be
/// downloaded by a `pump`: below it the stall costs little and a second request and a worker's
/// boot would cost more.
pub const HANDOFF_BYTES: u64 = 32 << 20;

/// Bytes read from a file per slice (8 MiB).
const SLICE_BYTES: u64 = 8 << 20;

/// Slices of a file being read at once, the one parsed next included.
const SLICES_AHEAD: usize = 4;

/// What a source feeds; every call names its load, and `false` means "stop, not current".
pub trait Receiver {
    /// Load `id` has `size` bytes (if known) named `name`.
    fn open(&mut self, id: u32, name: &str, size: Option<u64>) -> bool;
    /// The next bytes of load `id`.
    fn bytes(&mut self, id: u32, bytes: &Uint8Array) -> bool;
    /// Load `id` has all its bytes.
    fn finish(&mut self, id: u32);
    /// Load `id` cannot be read: `message` says why.
    fn failed(&mut self, id: u32, message: String);
    /// A promise to wait for before reading on, when too many bytes are still unparsed.
    fn room(&mut self) -> Option<js_sys::Promise> {
        None
    }
    /// Load `id`'s body (at `url`, large) could be downloaded by a `pump` instead; true if
    /// one took it over (the fetch here then stops).
    fn handoff(&mut self, _id: u32, _url: &str) -> bool {
        false
    }
    /// Load `id`'s response from `url` has `reply`'s headers: true if it is read in ranged
    /// parts instead (the fetch here then stops), before `open`.
    fn ranged(&mut self, _id: u32, _name: &str, _url: &str, _reply: &Reply) -> bool {
        false
    }
}

/// Streams `url` into load `id` of `to`.
pub async fn fetch<R: Receiver>(to: Weak<RefCell<R>>, id: u32, url: String, name: String) {
    if let Err(message) = fetch_into(&to, id, &url, &name).await {
        with(&to, |r| r.failed(id, message));
    }
}

/// Reads `file` into load `id` of `to`.
pub async fn read<R: Receiver>(to: Weak<RefCell<R>>, id: u32, file: File) {
    if let Err(message) = read_into(&to, id, &file).await {
        with(&to, |r| r.failed(id, message));
    }
}

/// Feeds `buffer` (bytes posted to the page, named `name`) into load `id` of `to`, in
/// [`SLICE_BYTES`] views of it: run as a task of its own, so the message that brought the bytes
/// has been handled and the receiver is free.
pub async fn take<R: Receiver>(to: Weak<RefCell<R>>, id: u32, name: String, buffer: ArrayBuffer) {
    let size = u64::from(buffer.byte_length());
    if !with(&to, |r| r.open(id, &name, Some(size))) {
        return;
    }
    let mut at = 0;
    while at < size {
        let len = SLICE_BYTES.min(size - at);
        // Both below 4 GiB: `byte_length` is a u32 here.
        let view = Uint8Array::new_with_byte_offset_and_length(&buffer, at as u32, len as u32);
        if !with(&to, |r| r.bytes(id, &view)) {
            return;
        }
        at += len;
    }
    with(&to, |r| r.finish(id));
}

async fn fetch_into<R: Receiver>(to: &Weak<RefCell<R>>, id: u32, url: &str, name: &str) -> Result<(), String> {
    let scope: WorkerGlobalScope = js_sys::global().unchecked_into();
    let failed = |e: JsValue| fetch_failure(&scope, url, &js_error(&e));
    let response: Response = JsFuture::from(scope.fetch_with_str(url)).await.map_err(failed)?.unchecked_into();
    if !response.ok() {
        let (code, text) = (response.status(), response.status_text());
        let hint = match code {
            404 => " (no such file on that server: check the ?url= link)",
            401 | 403 => " (the server refuses to share this file)",
            _ => "",
        };
        return Err(format!("HTTP {code} {text} fetching {url:?}{hint}"));
    }
    let headers = response.headers();
    let header = |name: &str| headers.get(name).ok().flatten();
    let size: Option<u64> = header("content-length").and_then(|s| s.trim().parse().ok());
    let final_url = Some(response.url()).filter(|u| !u.is_empty()).unwrap_or_else(|| url.to_owned());
    let (accept_ranges, content_encoding) = (header("accept-ranges"), header("content-encoding"));
    let reply = Reply { size, accept_ranges: accept_ranges.as_deref(), content_encoding: content_encoding.as_deref() };
    // A large body on a server that answers `Range` is read in parts by every core instead.
    if with(to, |r| r.ranged(id, name, &final_url, &reply)) {
        if let Some(body) = response.body() {
            let _ = body.cancel();
        }
        return Ok(());
    }
    if !with(to, |r| r.open(id, name, size)) {
        // Refused (too big, or dropped): stop the download. The promise needs no handling.
        if let Some(body) = response.body() {
            let _ = body.cancel();
        }
        return Ok(());
    }
    // A large body goes to a download worker (`pump`) that reads it while this worker parses.
    if size.is_some_and(|s| s >= HANDOFF_BYTES) && with(to, |r| r.handoff(id, &final_url)) {
        if let Some(body) = response.body() {
            let _ = body.cancel();
        }
        return Ok(());
    }
    if let Some(body) = response.body() {
        let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
        loop {
            if let Some(room) = with(to, Receiver::room) {
                JsFuture::from(room).await.map_err(failed)?;
            }
            let step = JsFuture::from(reader.read()).await.map_err(failed)?;
            if Reflect::get(&step, &"done".into()).map_or(true, |d| d.is_truthy()) {
                break;
            }
            let value = Reflect::get(&step, &"value".into()).map_err(failed)?;
            let Some(bytes) = value.dyn_ref::<Uint8Array>() else {
                return Err("fetch body yielded a non-byte chunk".into());
            };
            if !with(to, |r| r.bytes(id, bytes)) {
                // Dropped: stop downloading. The returned promise needs no handling.
                let _ = reader.cancel();
                return Ok(());
            }
        }
    }
    with(to, |r| r.finish(id));
    Ok(())
}

async fn read_into<R: Receiver>(to: &Weak<RefCell<R>>, id: u32, file: &File) -> Result<(), String> {
    // `File.size` is an integral byte count; the cast is exact below 2^53.
    let size = file.size() as u64;
    if !with(to, |r| r.open(id, &file.name(), Some(size))) {
        return Ok(());
    }
    if read_slices(&Slices::File(file), 0..size, |bytes| with(to, |r| r.bytes(id, bytes))).await?.is_some() {
        with(to, |r| r.finish(id));
    }
    Ok(())
}

/// Where a part's bytes are read from in slices: a picked file, or a URL whose server
/// answers `Range`.
pub enum Slices<'a> {
    /// A picked file: slices of [`SLICE_BYTES`], [`SLICES_AHEAD`] in flight.
    File(&'a File),
    /// A URL: ranged requests of `ranges::SLICE_BYTES`, `ranges::SLICES_AHEAD` in flight.
    Url(&'a str),
}

impl Slices<'_> {
    /// What names the input in messages.
    fn name(&self) -> String {
        match self {
            Slices::File(file) => file.name(),
            Slices::Url(url) => (*url).to_owned(),
        }
    }

    /// The slice length, how many are read at once, and the bytes handed on between two
    /// yields to the worker's event loop.
    fn shape(&self) -> (u64, usize, u32) {
        match self {
            Slices::File(_) => (SLICE_BYTES, SLICES_AHEAD, u32::MAX),
            Slices::Url(_) => (ranges::SLICE_BYTES, ranges::SLICES_AHEAD, ranges::STEP_BYTES),
        }
    }

    /// Starts reading `range`: a promise of its bytes as an `ArrayBuffer`.
    fn start(&self, range: std::ops::Range<u64>) -> Result<js_sys::Promise, JsValue> {
        match self {
            // Offsets are exact as f64 below 2^53.
            Slices::File(file) => Ok(file.slice_with_f64_and_f64(range.start as f64, range.end as f64)?.array_buffer()),
            // Run at once (not when awaited), so the slices ahead download while one is parsed.
            Slices::Url(url) => {
                let url = (*url).to_owned();
                Ok(wasm_bindgen_futures::future_to_promise(async move { fetch_range(&url, range).await.map(JsValue::from).map_err(|e| JsValue::from_str(&e)) }))
            }
        }
    }
}

/// Bytes `range` of `url`, with a `Range` request; an error unless the server sent exactly those.
async fn fetch_range(url: &str, range: std::ops::Range<u64>) -> Result<ArrayBuffer, String> {
    let scope: WorkerGlobalScope = js_sys::global().unchecked_into();
    let failed = |e: JsValue| fetch_failure(&scope, url, &js_error(&e));
    let header = ranges::range_header(&range).ok_or("an empty range")?;
    let headers = web_sys::Headers::new().map_err(failed)?;
    headers.set("range", &header).map_err(failed)?;
    let init = web_sys::RequestInit::new();
    init.set_headers(&headers);
    let response: Response = JsFuture::from(scope.fetch_with_str_and_init(url, &init)).await.map_err(failed)?.unchecked_into();
    let content_range = response.headers().get("content-range").ok().flatten();
    if let Err(why) = ranges::check_reply(response.status(), content_range.as_deref(), None, &range) {
        // Not the bytes asked for (a whole file, perhaps): stop its download.
        if let Some(body) = response.body() {
            let _ = body.cancel();
        }
        return Err(format!("{url:?}: {why}"));
    }
    let buffer: ArrayBuffer = JsFuture::from(response.array_buffer().map_err(failed)?).await.map_err(failed)?.unchecked_into();
    ranges::check_reply(206, None, Some(u64::from(buffer.byte_length())), &range).map_err(|why| format!("{url:?}: {why}"))?;
    Ok(buffer)
}

/// Reads `range` of `from` in slices, several in flight ([`Slices`]), and calls `each` with
/// every slice in order until it returns false. The ms spent waiting for reads, or `None` when
/// `each` stopped the read.
///
/// Slices are read ahead while one is parsed: the browser reads a file for a worker through its
/// own process, so a single slice ahead kept the parse waiting for bytes (1.8-2.1 s of a 1 GB
/// load). A fetch body is read only when this thread is free, so a URL's slice is handed on in
/// `ranges::STEP_BYTES` steps with a yield between them, in which the slices ahead download.
///
/// # Errors
/// The browser's message when a slice cannot be read.
pub async fn read_slices(from: &Slices<'_>, range: std::ops::Range<u64>, mut each: impl FnMut(&Uint8Array) -> bool) -> Result<Option<f64>, String> {
    let failed = |e: JsValue| format!("reading {:?} failed: {}", from.name(), js_error(&e));
    let (slice, in_flight, step) = from.shape();
    let mut slices = ranges::slices(range, slice);
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let (mut ahead, mut waited_ms) = (std::collections::VecDeque::new(), 0.0);
    for first in slices.by_ref().take(in_flight) {
        ahead.push_back(from.start(first).map_err(failed)?);
    }
    while let Some(reading) = ahead.pop_front() {
        let asked = now_ms(&scope);
        let buffer = JsFuture::from(reading).await.map_err(failed)?;
        waited_ms += now_ms(&scope) - asked;
        if let Some(next) = slices.next() {
            ahead.push_back(from.start(next).map_err(failed)?);
        }
        let (view, mut at) = (Uint8Array::new(&buffer), 0);
        while at < view.length() {
            let to = at.saturating_add(step).min(view.length());
            if !each(&view.subarray(at, to)) {
                return Ok(None);
            }
            at = to;
            // The slices ahead download only while this thread is free to read their bodies.
            if at < view.length() {
                let_messages_run().await;
            }
        }
    }
    Ok(Some(waited_ms))
}

/// Lets the tasks queued for this worker run (messages, fetch bodies read): resumes in a task
/// of its own (a message posted to itself), not a microtask, which would run before them.
pub async fn let_messages_run() {
    let Ok(channel) = web_sys::MessageChannel::new() else { return };
    let promise = js_sys::Promise::new(&mut |resolve, _| channel.port1().set_onmessage(Some(&resolve)));
    if channel.port2().post_message(&JsValue::NULL).is_ok() {
        // The channel is held until the message arrives.
        let _ = JsFuture::from(promise).await;
    }
}

/// Fills `into` from byte `at` of `url` (of `size` bytes; fewer only at its end) with a
/// synchronous ranged request: a worker may block, and cutting a URL into parts
/// (`load::cut_by`) reads only its head and a window at each cut.
///
/// # Errors
/// The request failing, or a reply that is not those bytes (`ranges::check_reply`).
pub fn read_url_at(url: &str, size: u64, at: u64, into: &mut [u8]) -> Result<usize, String> {
    let range = at.min(size)..(at + into.len() as u64).min(size);
    let Some(header) = ranges::range_header(&range) else { return Ok(0) };
    let failed = |e: JsValue| format!("reading {url:?} failed: {}", js_error(&e));
    let xhr = web_sys::XmlHttpRequest::new().map_err(failed)?;
    xhr.open_with_async("GET", url, false).map_err(failed)?;
    xhr.set_request_header("range", &header).map_err(failed)?;
    xhr.set_response_type(web_sys::XmlHttpRequestResponseType::Arraybuffer);
    xhr.send().map_err(failed)?;
    let content_range = xhr.get_response_header("content-range").ok().flatten();
    ranges::check_reply(xhr.status().map_err(failed)?, content_range.as_deref(), None, &range).map_err(|why| format!("{url:?}: {why}"))?;
    let buffer: ArrayBuffer = xhr.response().map_err(failed)?.dyn_into().map_err(failed)?;
    let array = Uint8Array::new(&buffer);
    ranges::check_reply(206, None, Some(u64::from(array.length())), &range).map_err(|why| format!("{url:?}: {why}"))?;
    let got = (array.length() as usize).min(into.len());
    array.subarray(0, got as u32).copy_to(&mut into[..got]);
    Ok(got)
}

/// Runs `f` on the receiver if it still exists; false if it does not or `f` says stop.
pub fn with<R, T: Default>(to: &Weak<RefCell<R>>, f: impl FnOnce(&mut R) -> T) -> T {
    to.upgrade().map(|r| f(&mut r.borrow_mut())).unwrap_or_default()
}

/// Why a fetch was rejected, in words: the browser only says "Failed to fetch", which for
/// another origin is almost always CORS (or the server being down).
fn fetch_failure(scope: &WorkerGlobalScope, href: &str, why: &str) -> String {
    // A dedicated worker has its page's origin.
    let page = scope.location().origin();
    let same_origin = Url::new(href).is_ok_and(|u| u.origin() == page);
    if same_origin {
        format!("fetching {href:?} failed: {why} (is the server running?)")
    } else {
        format!(
            "fetching {href:?} failed: {why}. The server did not answer, or it does not let this \
             page read the file (CORS): it must send the header `Access-Control-Allow-Origin: \
             {page}` (or `*`) with the trace."
        )
    }
}

/// The message of a JS exception or rejection value, or its debug form.
pub fn js_error(e: &JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

/// The text at `url` (a run manifest: small, read whole).
///
/// # Errors
/// Network failures and HTTP errors, in words.
pub async fn fetch_text(url: &str) -> Result<String, String> {
    let scope: WorkerGlobalScope = js_sys::global().unchecked_into();
    let failed = |e: JsValue| fetch_failure(&scope, url, &js_error(&e));
    let response: Response = JsFuture::from(scope.fetch_with_str(url)).await.map_err(failed)?.unchecked_into();
    if !response.ok() {
        return Err(format!("HTTP {} {} fetching the run manifest {url:?}", response.status(), response.status_text()));
    }
    let text = JsFuture::from(response.text().map_err(failed)?).await.map_err(failed)?;
    text.as_string().ok_or_else(|| format!("the run manifest {url:?} is not text"))
}

/// `url` resolved against `base` (a manifest's URL): the absolute http(s) URL and its file
/// name (last path segment, decoded).
///
/// # Errors
/// An unparsable URL or another scheme.
pub fn resolve(url: &str, base: &str) -> Result<(String, String), String> {
    let parsed = Url::new_with_base(url, base).map_err(|_| format!("invalid URL {url:?} in the run manifest"))?;
    if parsed.protocol() != "http:" && parsed.protocol() != "https:" {
        return Err(format!("only http(s) or relative URLs can be loaded, not {url:?}"));
    }
    let path = parsed.pathname();
    let segment = path.rsplit('/').find(|s| !s.is_empty()).unwrap_or_default();
    let name = js_sys::decode_uri_component(segment).map_or_else(|_| segment.to_owned(), String::from);
    Ok((parsed.href(), name))
}
