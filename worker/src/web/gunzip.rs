//! A gzip body inflated by the browser (`DecompressionStream`) in the download worker, its JSON
//! handed to the pump, which gathers it into pieces (`loader::download::Gather`) and posts them;
//! the load worker cuts them into parts (`loader::inflate`, which says why the browser's inflater, and what happens
//! when it cannot inflate a gzip whole).
//!
//! Flow: each compressed chunk of the download is written to the stream (`write`); the stream
//! pipes the JSON, in the browser's pieces (64 KiB), into a sink that hands each on. The JSON
//! never enters this worker's wasm memory. The download
//! waits while the stream's queue is full (`room`), so compressed bytes do not pile up ahead of
//! inflating.

use super::post::js_error;
use js_sys::{Promise, Reflect, Uint8Array};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::WritableStreamDefaultWriter;

// `DecompressionStream` is behind web-sys's unstable flag; these three members are all it takes.
#[wasm_bindgen]
extern "C" {
    /// The browser's inflater: compressed bytes written in, the bytes they inflate to read out.
    #[wasm_bindgen(js_name = DecompressionStream)]
    type DecompressionStream;

    #[wasm_bindgen(constructor, js_class = "DecompressionStream", catch)]
    fn new(format: &str) -> Result<DecompressionStream, JsValue>;

    #[wasm_bindgen(method, getter)]
    fn readable(this: &DecompressionStream) -> web_sys::ReadableStream;

    #[wasm_bindgen(method, getter)]
    fn writable(this: &DecompressionStream) -> web_sys::WritableStream;
}

/// What the browser hands out, for the pump to gather and post.
pub enum Inflated {
    /// The next JSON (a 64 KiB piece, the browser's), `read` bytes of the gzip having been
    /// written.
    Json(Uint8Array, u64),
    /// The gzip inflated whole to this many bytes of JSON, `read` bytes of it written.
    Done(u64, u64),
    /// The browser could not inflate it whole: its words.
    Failed(String),
}

/// The handlers the pipe calls: the sink's `write` and `close`, and its failure.
type Sink = (Closure<dyn FnMut(Uint8Array)>, Closure<dyn FnMut()>, Closure<dyn FnMut(JsValue)>);

/// A gzip being inflated by the browser; see the module docs.
pub struct Gunzip {
    writer: WritableStreamDefaultWriter,
    /// Compressed bytes written so far.
    written: Rc<Cell<u64>>,
    /// Inflating ended early (the browser failed): the download stops.
    stopped: Rc<Cell<bool>>,
    /// Settles the writer's promises: their failures are the pipe's to report.
    settle: Closure<dyn FnMut(JsValue)>,
    /// The sink's `write` and `close`, and what a failed pipe runs.
    _sink: Sink,
}

impl Gunzip {
    /// Starts inflating; `hand` gets the JSON as the browser hands it out, then the end.
    ///
    /// # Errors
    /// The browser's words when it has no `DecompressionStream`.
    pub fn start(hand: impl FnMut(Inflated) + 'static) -> Result<Self, String> {
        let stream = DecompressionStream::new("gzip").map_err(|e| js_error(&e))?;
        let writer = stream.writable().get_writer().map_err(|e| js_error(&e))?;
        let (written, stopped, total) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(false)), Rc::new(Cell::new(0)));
        let hand = Rc::new(RefCell::new(hand));
        // The JSON goes straight into a sink whose `write` is ours, not a promise awaited per
        // 64 KiB piece.
        let (to, read, count) = (hand.clone(), written.clone(), total.clone());
        let write = Closure::<dyn FnMut(Uint8Array)>::new(move |json: Uint8Array| {
            count.set(count.get() + u64::from(json.length()));
            (to.borrow_mut())(Inflated::Json(json, read.get()));
        });
        let (to, read) = (hand.clone(), written.clone());
        let close = Closure::<dyn FnMut()>::new(move || (to.borrow_mut())(Inflated::Done(total.get(), read.get())));
        let sink = js_sys::Object::new();
        Reflect::set(&sink, &"write".into(), write.as_ref()).map_err(|e| js_error(&e))?;
        Reflect::set(&sink, &"close".into(), close.as_ref()).map_err(|e| js_error(&e))?;
        let into = web_sys::WritableStream::new_with_underlying_sink(&sink).map_err(|e| js_error(&e))?;
        let stop = stopped.clone();
        let fail = Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| {
            stop.set(true);
            (hand.borrow_mut())(Inflated::Failed(js_error(&e)));
        });
        let _ = stream.readable().pipe_to(&into).catch(&fail);
        Ok(Self { writer, written, stopped, settle: Closure::new(|_: JsValue| {}), _sink: (write, close, fail) })
    }

    /// Writes the download's next compressed `chunk`; false once inflating failed.
    pub fn write(&self, chunk: &Uint8Array) -> bool {
        if self.stopped.get() {
            return false;
        }
        self.written.set(self.written.get() + u64::from(chunk.length()));
        let _ = self.writer.write_with_chunk(chunk).catch(&self.settle);
        true
    }

    /// The download ended: the rest inflates, then the task hands on the end.
    pub fn close(&self) {
        let _ = self.writer.close().catch(&self.settle);
    }

    /// The download failed: inflating stops.
    pub fn abort(&self) {
        self.stopped.set(true);
        let _ = self.writer.abort().catch(&self.settle);
    }

    /// Something to wait for before the next chunk, while the stream's queue is full.
    pub fn room(&self) -> Option<Promise> {
        let full = self.writer.desired_size().ok().flatten().is_some_and(|room| room <= 0.0);
        full.then(|| self.writer.ready().catch(&self.settle))
    }
}
