//! A gzip body inflated by the browser (`DecompressionStream`) in the download worker, its JSON
//! fed as it comes to `loader::inflate::Cuts` (budget, cuts, pieces) and what they hand on
//! given to the pump to post. Why the browser's inflater and what happens when it cannot
//! inflate a gzip whole: `loader::inflate`.
//!
//! Flow: each compressed chunk of the download is written to the stream (`write`); a task reads
//! the JSON out of it in the browser's pieces (64 KiB), copies each into this worker's memory
//! and cuts it. The download waits while the stream's queue is full (`room`), so compressed
//! bytes do not pile up ahead of inflating.

use super::post::js_error;
use crate::budget::TooBig;
use crate::loader::inflate::{Cuts, Inflate, Out};
use js_sys::{Promise, Reflect, Uint8Array};
use std::cell::Cell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, WritableStreamDefaultWriter};

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

/// What the inflating task hands the pump to post.
pub enum Inflated {
    /// Parts and pieces, `read` bytes of the gzip having been written.
    Cut(Vec<Out>, u64),
    /// The gzip inflated whole to this many bytes of JSON.
    Done(u64),
    /// The JSON passed the budget.
    TooBig(TooBig),
    /// The browser could not inflate it whole: its words.
    Failed(String),
}

/// A gzip being inflated by the browser; see the module docs.
pub struct Gunzip {
    writer: WritableStreamDefaultWriter,
    /// Compressed bytes written so far.
    written: Rc<Cell<u64>>,
    /// Inflating ended early (too big, or the browser failed): the download stops.
    stopped: Rc<Cell<bool>>,
    /// Settles the writer's promises: their failures are the reading task's to report.
    settle: Closure<dyn FnMut(JsValue)>,
}

impl Gunzip {
    /// Starts inflating a gzip of `size` bytes (if declared), cut as `plan` says; `hand` gets
    /// what to post, from a task of its own.
    ///
    /// # Errors
    /// The browser's words when it has no `DecompressionStream`.
    pub fn start(plan: Inflate, size: Option<u64>, mut hand: impl FnMut(Inflated) + 'static) -> Result<Self, String> {
        let stream = DecompressionStream::new("gzip").map_err(|e| js_error(&e))?;
        let writer = stream.writable().get_writer().map_err(|e| js_error(&e))?;
        let reader: ReadableStreamDefaultReader = stream.readable().get_reader().unchecked_into();
        let (written, stopped) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(false)));
        let (read, stop) = (written.clone(), stopped.clone());
        wasm_bindgen_futures::spawn_local(async move {
            let ended = inflate(&reader, Cuts::new(plan, size), &read, &mut hand).await;
            if !matches!(ended, Inflated::Done(_)) {
                stop.set(true);
                let _ = reader.cancel();
            }
            hand(ended);
        });
        Ok(Self { writer, written, stopped, settle: Closure::new(|_: JsValue| {}) })
    }

    /// Writes the download's next compressed `chunk`; false once inflating stopped early.
    pub fn write(&self, chunk: &Uint8Array) -> bool {
        if self.stopped.get() {
            return false;
        }
        self.written.set(self.written.get() + u64::from(chunk.length()));
        let _ = self.writer.write_with_chunk(chunk).catch(&self.settle);
        true
    }

    /// The download ended: the rest inflates, then the task posts the end.
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

/// Reads the JSON out of `reader` into `cuts`, handing on what they cut; how it ended.
async fn inflate(reader: &ReadableStreamDefaultReader, mut cuts: Cuts, written: &Cell<u64>, hand: &mut impl FnMut(Inflated)) -> Inflated {
    let mut json = Vec::new();
    loop {
        let step = match JsFuture::from(reader.read()).await {
            Ok(step) => step,
            Err(e) => return Inflated::Failed(js_error(&e)),
        };
        if Reflect::get(&step, &"done".into()).map_or(true, |d| d.is_truthy()) {
            let mut outs = Vec::new();
            let json_bytes = cuts.finish(&mut |out| outs.push(out));
            hand(Inflated::Cut(outs, written.get()));
            return Inflated::Done(json_bytes);
        }
        let Ok(view) = Reflect::get(&step, &"value".into()).and_then(|v| v.dyn_into::<Uint8Array>().map_err(JsValue::from)) else {
            return Inflated::Failed("the browser's inflater yielded a non-byte chunk".into());
        };
        json.resize(view.length() as usize, 0);
        view.copy_to(&mut json);
        let (mut outs, read) = (Vec::new(), written.get());
        let pushed = cuts.push(&json, read, &mut |out| outs.push(out));
        hand(Inflated::Cut(outs, read));
        if let Err(too_big) = pushed {
            return Inflated::TooBig(too_big);
        }
    }
}
