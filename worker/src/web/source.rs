//! Where a load's bytes come from, read inside the worker: a fetch's body as it arrives
//! ([`FetchBody`]: a URL streamed into a load, a part of a URL answering `Range` as one ranged
//! request, a run's file for a parse worker), a local `File` read in slices ([`FileSlices`],
//! windowed by `loader::slices::read_slices`), or bytes another page posted (already in
//! memory). What the headers decide, the slices, the words of a failure are
//! `crate::loader::source` and `crate::loader::slices`; this is the browser's side.
//!
//! Inputs: a load id, and a URL or `File` from the app's `Fetch` / `Read`. Output: calls on a
//! [`Receiver`] (the worker's state): `open` once the size is known, `bytes` per piece as it
//! arrives, then `finish`; or `failed` with a message for network and file errors.
//!
//! Why here and not on the page: the page's main thread then never touches the bytes. Reading
//! a 1 GB response body there took tasks of 90–150 ms (`ReadableStreamDefaultReader.read`),
//! which froze the page while loading.

use super::post::{js_error, now_ms, worker_scope};
use crate::loader::ranges::{self, Reply};
use crate::loader::body::Body;
use crate::loader::slices::{self, read_slices, Reading, Reads, Shape};
use crate::loader::source::{self as sources, fetch_failure, http_error, with, Receiver};
use js_sys::{ArrayBuffer, Promise, Reflect, Uint8Array};
use std::cell::RefCell;
use std::rc::Weak;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, ReadableStreamDefaultReader, Response, Url, WorkerGlobalScope};

/// A receiver of the browser's bytes: fed `Uint8Array`s, waiting on a promise for room.
pub trait WebReceiver: Receiver<View = Uint8Array, Room = Promise> {}

impl<R: Receiver<View = Uint8Array, Room = Promise>> WebReceiver for R {}

/// Streams `url` into load `id` of `to`.
pub async fn fetch<R: WebReceiver>(to: Weak<RefCell<R>>, id: u32, url: String, name: String) {
    if let Err(message) = fetch_into(&to, id, &url, &name).await {
        with(&to, |r| r.failed(id, message));
    }
}

/// Reads `file` into load `id` of `to`.
pub async fn read<R: WebReceiver>(to: Weak<RefCell<R>>, id: u32, file: File) {
    if let Err(message) = read_into(&to, id, &file).await {
        with(&to, |r| r.failed(id, message));
    }
}

/// Feeds `buffer` (bytes posted to the page, named `name`) into load `id` of `to`
/// (`loader::source::take`): run as a task of its own, so the message that brought the bytes
/// has been handled and the receiver is free.
pub async fn take<R: WebReceiver>(to: Weak<RefCell<R>>, id: u32, name: String, buffer: ArrayBuffer) {
    sources::take(&to, id, &name, &Uint8Array::new(&buffer));
}

/// A plain GET of `url`, answered with a success status.
///
/// # Errors
/// Network failures and HTTP errors, in words (`loader::source`).
async fn get(url: &str) -> Result<Response, String> {
    let scope: WorkerGlobalScope = js_sys::global().unchecked_into();
    let failed = |e: JsValue| failure(&scope, url, &js_error(&e));
    let response: Response = JsFuture::from(scope.fetch_with_str(url)).await.map_err(failed)?.unchecked_into();
    if !response.ok() {
        return Err(http_error(response.status(), &response.status_text(), url));
    }
    Ok(response)
}

async fn fetch_into<R: WebReceiver>(to: &Weak<RefCell<R>>, id: u32, url: &str, name: &str) -> Result<(), String> {
    let scope: WorkerGlobalScope = js_sys::global().unchecked_into();
    let failed = |e: JsValue| failure(&scope, url, &js_error(&e));
    let response = get(url).await?;
    let headers = response.headers();
    let header = |name: &str| headers.get(name).ok().flatten();
    let size: Option<u64> = header("content-length").and_then(|s| s.trim().parse().ok());
    let final_url = Some(response.url()).filter(|u| !u.is_empty()).unwrap_or_else(|| url.to_owned());
    let (accept_ranges, content_encoding) = (header("accept-ranges"), header("content-encoding"));
    let reply = Reply { size, accept_ranges: accept_ranges.as_deref(), content_encoding: content_encoding.as_deref() };
    if !sources::headers(to, id, name, &final_url, &reply) {
        // Read in ranged parts, refused or dropped, or handed to a download worker: stop this
        // download. The promise needs no handling.
        if let Some(body) = response.body() {
            let _ = body.cancel();
        }
        return Ok(());
    }
    if let Some(body) = response.body() {
        let mut body = FetchBody::reading(&body, url, size.filter(|_| !ranges::encoded(reply.content_encoding)));
        loop {
            if let Some(room) = with(to, Receiver::room) {
                JsFuture::from(room).await.map_err(failed)?;
            }
            let Some(bytes) = body.next().await? else { break };
            if !with(to, |r| r.bytes(id, &bytes)) {
                // Dropped: `body` stops the download as it goes.
                return Ok(());
            }
        }
    }
    with(to, |r| r.finish(id));
    Ok(())
}

async fn read_into<R: WebReceiver>(to: &Weak<RefCell<R>>, id: u32, file: &File) -> Result<(), String> {
    // `File.size` is an integral byte count; the cast is exact below 2^53.
    let size = file.size() as u64;
    if !with(to, |r| r.open(id, &file.name(), Some(size))) {
        return Ok(());
    }
    if read_slices(&FileSlices(file), 0..size, |bytes| with(to, |r| r.bytes(id, bytes))).await?.is_some() {
        with(to, |r| r.finish(id));
    }
    Ok(())
}

/// A picked file read in slices (`slices::FILE`).
pub struct FileSlices<'a>(pub &'a File);

impl Reads for FileSlices<'_> {
    type View = Uint8Array;

    fn shape(&self) -> Shape {
        slices::FILE
    }

    fn start(&self, range: std::ops::Range<u64>) -> Result<Reading<Uint8Array>, String> {
        let name = self.0.name();
        let failed = move |e: JsValue| format!("reading {name:?} failed: {}", js_error(&e));
        // Offsets are exact as f64 below 2^53.
        let promise = self.0.slice_with_f64_and_f64(range.start as f64, range.end as f64).map_err(&failed)?.array_buffer();
        Ok(Box::pin(async move { JsFuture::from(promise).await.map(|buffer| Uint8Array::new(&buffer)).map_err(failed) }))
    }

    fn now_ms(&self) -> f64 {
        now_ms(&worker_scope())
    }
}

/// A fetch's body read as it arrives (`loader::body::Body`): of a ranged request for a URL's
/// part, or of a whole run file a parse worker loads. Dropped before its end (the load
/// stopped), it cancels the download.
pub struct FetchBody {
    reader: ReadableStreamDefaultReader,
    url: String,
    /// The JSON's size, when the response declares it and is not encoded on the wire.
    pub size: Option<u64>,
}

impl FetchBody {
    /// Asks `url` for bytes `range` with one `Range` request.
    ///
    /// # Errors
    /// Network failures, and a reply that is not those bytes (`ranges::check_reply`).
    pub async fn range(url: &str, range: std::ops::Range<u64>) -> Result<Self, String> {
        let scope: WorkerGlobalScope = js_sys::global().unchecked_into();
        let failed = |e: JsValue| failure(&scope, url, &js_error(&e));
        let header = ranges::range_header(&range).ok_or("an empty range")?;
        let headers = web_sys::Headers::new().map_err(failed)?;
        headers.set("range", &header).map_err(failed)?;
        let init = web_sys::RequestInit::new();
        init.set_headers(&headers);
        let response: Response = JsFuture::from(scope.fetch_with_str_and_init(url, &init)).await.map_err(failed)?.unchecked_into();
        let content_range = response.headers().get("content-range").ok().flatten();
        let body = response.body();
        if let Err(why) = ranges::check_reply(response.status(), content_range.as_deref(), None, &range) {
            // Not the bytes asked for (a whole file, perhaps): stop its download.
            if let Some(body) = body {
                let _ = body.cancel();
            }
            return Err(format!("{url:?}: {why}"));
        }
        let body = body.ok_or_else(|| format!("{url:?}: a reply without a body"))?;
        Ok(Self::reading(&body, url, Some(range.end - range.start)))
    }

    /// Asks for `url` whole.
    ///
    /// # Errors
    /// Network failures and HTTP errors, in words (`loader::source`).
    pub async fn whole(url: &str) -> Result<Self, String> {
        let response = get(url).await?;
        let headers = response.headers();
        let header = |name: &str| headers.get(name).ok().flatten();
        let (length, encoding) = (header("content-length"), header("content-encoding"));
        let size = ranges::json_size(length.as_deref(), encoding.as_deref());
        let body = response.body().ok_or_else(|| format!("{url:?}: a reply without a body"))?;
        Ok(Self::reading(&body, url, size))
    }

    /// Reads `body`, the response of `url` holding `size` bytes (if known).
    fn reading(body: &web_sys::ReadableStream, url: &str, size: Option<u64>) -> Self {
        Self { reader: body.get_reader().unchecked_into(), url: url.to_owned(), size }
    }
}

impl Body for FetchBody {
    type View = Uint8Array;

    fn next(&mut self) -> Reading<Option<Uint8Array>> {
        let (read, url) = (self.reader.read(), self.url.clone());
        Box::pin(async move {
            // In the words of a failed fetch (what a load streamed by URL always said).
            let failed = |e: JsValue| failure(&worker_scope(), &url, &js_error(&e));
            let step = JsFuture::from(read).await.map_err(failed)?;
            if Reflect::get(&step, &"done".into()).map_or(true, |d| d.is_truthy()) {
                return Ok(None);
            }
            let value = Reflect::get(&step, &"value".into()).map_err(failed)?;
            value.dyn_into::<Uint8Array>().map(Some).map_err(|_| "fetch body yielded a non-byte chunk".into())
        })
    }

    fn now_ms(&self) -> f64 {
        now_ms(&worker_scope())
    }
}

impl Drop for FetchBody {
    fn drop(&mut self) {
        // Stops the download of a body not read to its end (a no-op after it); the promise needs
        // no handling.
        let _ = self.reader.cancel();
    }
}

/// Lets the tasks queued for this worker run (messages, fetch bodies read): resumes in a task
/// of its own (a message posted to itself), not a microtask, which would run before them.
pub async fn let_messages_run() {
    let Ok(channel) = web_sys::MessageChannel::new() else { return };
    let promise = Promise::new(&mut |resolve, _| channel.port1().set_onmessage(Some(&resolve)));
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

/// Why a fetch of `href` was rejected, in words (`loader::source::fetch_failure`).
fn failure(scope: &WorkerGlobalScope, href: &str, why: &str) -> String {
    // A dedicated worker has its page's origin.
    let page = scope.location().origin();
    let same_origin = Url::new(href).is_ok_and(|u| u.origin() == page);
    fetch_failure(href, why, &page, same_origin)
}

/// The text at `url` (a run manifest: small, read whole).
///
/// # Errors
/// Network failures and HTTP errors, in words.
pub async fn fetch_text(url: &str) -> Result<String, String> {
    let scope: WorkerGlobalScope = js_sys::global().unchecked_into();
    let failed = |e: JsValue| failure(&scope, url, &js_error(&e));
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
