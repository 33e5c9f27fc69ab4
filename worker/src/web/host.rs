//! The load worker's transport (wasm only): [`WebHost`] does what `crate::loader` decides
//! with `postMessage`, `fetch`, `FileReader`, the parse workers' [`Pool`] and the
//! download [`Pump`], and the sources feed the loader through its [`Receiver`] side.

use super::parser::stream_part;
use super::pool::{self, PartFrom, Pool};
use super::post::{console_error, js_error, now_ms, post_with, wasm_memory_bytes};
use super::pump::Pump;
use super::source;
use crate::load::{self, Piece, Stream};
use crate::loader::feed::ViewRead;
use crate::loader::inflate::{Inflate, Inflating};
use crate::loader::parser::ToParser;
use crate::loader::ranges::Reply;
use crate::loader::source::{with, Receiver};
use crate::loader::{Host, Loader, Source};
use protocol::FromWorker;
use std::cell::RefCell;
use std::ops::Range;
use std::rc::Weak;
use web_sys::{DedicatedWorkerGlobalScope, File};

/// An input read in parts, as this worker holds it.
type Whole = crate::loader::Whole<File, js_sys::ArrayBuffer>;

/// The browser side of the load worker.
pub struct WebHost {
    /// The worker's global scope.
    pub scope: DedicatedWorkerGlobalScope,
    /// The loader this host serves, for the tasks it starts.
    pub me: Weak<RefCell<Loader<WebHost>>>,
    /// The parse workers of the current or next load.
    pub pool: Pool,
    /// Hands parse worker events to the loader.
    pub sink: pool::Sink,
    /// The download worker of the last large URL load, if any.
    pub pump: Option<Pump>,
}

impl Host for WebHost {
    type File = File;
    type Buffer = js_sys::ArrayBuffer;

    fn now_ms(&self) -> f64 {
        now_ms(&self.scope)
    }

    fn cores(&self) -> usize {
        self.scope.navigator().hardware_concurrency() as usize
    }

    fn memory_bytes(&self) -> Option<u64> {
        wasm_memory_bytes()
    }

    fn post(&self, msg: &FromWorker, words: Option<&[u32]>) {
        post_with(&self.scope, msg, words);
    }

    fn console_error(&self, msg: &str) {
        console_error(msg);
    }

    fn file_name(file: &File) -> String {
        file.name()
    }

    fn file_size(file: &File) -> u64 {
        // `File.size` is an integral byte count; the cast is exact below 2^53.
        file.size() as u64
    }

    fn buffer_size(buffer: &js_sys::ArrayBuffer) -> u64 {
        u64::from(buffer.byte_length())
    }

    fn copy_out(buffer: &js_sys::ArrayBuffer) -> Vec<u8> {
        js_sys::Uint8Array::new(buffer).to_vec()
    }

    fn buffer_of(bytes: &[u8]) -> js_sys::ArrayBuffer {
        js_sys::Uint8Array::from(bytes).buffer()
    }

    fn fetch(&mut self, id: u32, url: String, name: String) {
        wasm_bindgen_futures::spawn_local(source::fetch(self.me.clone(), id, url, name));
    }

    fn fetch_manifest(&mut self, id: u32, workers: Option<u32>, url: String) {
        let me = self.me.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let text = source::fetch_text(&url).await;
            let sources = text.and_then(|t| crate::ranks::manifest(&t)).and_then(|entries| {
                entries.iter().map(|e| source::resolve(&e.url, &url).map(|(url, name)| Source::Url { url, name })).collect()
            });
            with(&me, |l| l.manifest_in(id, workers, sources));
        });
    }

    fn read(&mut self, id: u32, file: File) {
        wasm_bindgen_futures::spawn_local(source::read(self.me.clone(), id, file));
    }

    fn take(&mut self, id: u32, name: String, buffer: js_sys::ArrayBuffer) {
        wasm_bindgen_futures::spawn_local(source::take(self.me.clone(), id, name, buffer));
    }

    fn start_pump(&mut self, id: u32, url: &str, inflate: Option<Inflate>) -> Result<(), String> {
        self.pump = Some(Pump::start(self.me.clone(), id, url, inflate)?);
        Ok(())
    }

    fn consumed(&mut self, bytes: u64) {
        if let Some(pump) = &self.pump {
            pump.consumed(bytes);
        }
    }

    fn stop_pump(&mut self) {
        self.pump = None;
    }

    fn cut(&self, whole: &Whole, shares: &[u32]) -> Result<Vec<(Piece, Range<u64>)>, String> {
        match whole {
            Whole::File(file) => web_sys::FileReaderSync::new().map_err(|e| js_error(&e)).and_then(|reader| {
                let mut read = |at, into: &mut [u8]| pool::read_at(&reader, file, at, into).map_err(std::io::Error::other);
                load::cut_by(Self::file_size(file), shares, &mut read).map_err(|e| e.to_string())
            }),
            Whole::Bytes { buffer, .. } => {
                let mut read = |at, into: &mut [u8]| std::io::Read::read(&mut ViewRead::new(js_sys::Uint8Array::new(buffer), at), into);
                load::cut_by(Self::buffer_size(buffer), shares, &mut read).map_err(|e| e.to_string())
            }
            Whole::Url { url, size, .. } => {
                let mut read = |at, into: &mut [u8]| source::read_url_at(url, *size, at, into).map_err(std::io::Error::other);
                load::cut_by(*size, shares, &mut read).map_err(|e| e.to_string())
            }
        }
    }

    fn parse_here(&mut self, id: u32, whole: &Whole, stream: Stream, range: Range<u64>) {
        let from: wasm_bindgen::JsValue = match whole {
            Whole::File(file) => file.clone().into(),
            // Both below 4 GiB.
            Whole::Bytes { buffer, .. } => js_sys::Uint8Array::new_with_byte_offset_and_length(buffer, range.start as u32, (range.end - range.start) as u32).into(),
            Whole::Url { url, .. } => url.as_str().into(),
        };
        let me = self.me.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let mut progress = |done| with(&me, |l| l.job_progress(0, done));
            let read = stream_part(&from, stream, range, &mut progress, &mut || with(&me, |l| l.parsing(id))).await;
            with(&me, |l| l.part_here(id, read));
        });
    }

    fn spawn_parser(&mut self, slot: usize) -> Result<(), String> {
        self.pool.grow(slot + 1, &self.sink)
    }

    fn new_pool(&mut self) {
        self.pool = Pool::default();
    }

    fn terminate_parsers(&mut self) {
        self.pool.terminate();
    }

    fn retire_parser(&mut self, slot: usize) {
        self.pool.retire(slot);
    }

    fn parser_ready(&mut self, slot: usize) -> Result<(), String> {
        self.pool.ready(slot)
    }

    fn send_part(&mut self, slot: usize, job: u32, index: usize, piece: Piece, bytes: &[u8]) -> Result<(), String> {
        self.pool.parse(slot, job, index, piece, bytes)
    }

    fn send_range(&mut self, slot: usize, job: u32, index: usize, piece: Piece, end: u64, whole: &Whole) -> Result<(), String> {
        let from = match whole {
            Whole::File(file) => PartFrom::File(file.clone()),
            Whole::Bytes { buffer, .. } => PartFrom::Bytes(buffer.clone()),
            Whole::Url { url, .. } => PartFrom::Url(url.clone()),
        };
        self.pool.read_part(slot, job, index, piece, end, from)
    }

    fn tell_parser(&mut self, slot: usize, msg: &ToParser, bytes: Option<js_sys::ArrayBuffer>) -> Result<(), String> {
        self.pool.tell(slot, msg, bytes)
    }

    fn refill(&mut self, slot: usize, job: u32, buffer: js_sys::ArrayBuffer) -> Result<(), String> {
        self.pool.refill(slot, job, buffer)
    }

    fn send_rank(&mut self, slot: usize, job: u32, index: usize, source: &Source<File>) -> Result<(), String> {
        match source {
            Source::File(file) => self.pool.rank(slot, job, index, &file.name(), PartFrom::File(file.clone())),
            Source::Url { url, name } => self.pool.rank(slot, job, index, name, PartFrom::Url(url.clone())),
        }
    }
}

/// The sources started by `Fetch` / `Read` feed the load through these.
impl Receiver for Loader<WebHost> {
    type View = js_sys::Uint8Array;
    type Room = js_sys::Promise;

    fn open(&mut self, id: u32, name: &str, size: Option<u64>) -> bool {
        Loader::open(self, id, name, size)
    }

    fn handoff(&mut self, id: u32, url: &str) -> bool {
        Loader::handoff(self, id, url)
    }

    fn ranged(&mut self, id: u32, name: &str, url: &str, reply: &Reply) -> bool {
        Loader::ranged(self, id, name, url, reply)
    }

    fn bytes(&mut self, id: u32, view: &js_sys::Uint8Array) -> bool {
        self.arrived(id, view.length() as usize, |into| view.copy_to(into))
    }

    fn finish(&mut self, id: u32) {
        Loader::finish(self, id);
    }

    fn failed(&mut self, id: u32, message: String) {
        Loader::failed(self, id, message);
    }

    fn inflating(&mut self, id: u32, event: Inflating<js_sys::Uint8Array>) -> bool {
        // The pump's pieces are whole transferred buffers: handed on as they are.
        Loader::inflating(self, id, event.map(|view| view.buffer()))
    }
}
