//! The parse worker's role (wasm only): the loop a nested worker named
//! [`PARSER_NAME`](crate::loader::parser::PARSER_NAME) runs. It posts `Ready`, then parses the
//! part it is sent and posts it back encoded (`load::Part::encode`, transferred) with `Progress`
//! every few MB on the way, or `Failed`; the messages are `crate::loader::parser`'s.
//!
//! A part comes three ways: its bytes transferred (`Parse`); a `File` or a URL and a byte range
//! (`ReadPart`), read here as it arrives ([`stream_part`]) so a large file's bytes never
//! pass through the load worker's wasm memory; or, of a trace posted to the page, in pieces
//! (`ReadPart`, then `More`) parsed as they come ([`crate::loader::feed::Feed`]), each given back
//! (`Spent`) to be refilled; or, of a gzip inflated and cut as it downloads, in pieces
//! (`Open`, `More`, then `End`), each given back parsed to count as consumed. The load worker
//! parses its own first part with [`stream_part`] too.
//! It also loads whole ranks of a run (`Rank`), answering with what the run keeps of each.

use super::post::{console_error, js_error, now_ms, post_parts};
use super::source::{let_messages_run, FetchBody, FileSlices};
use crate::load::{parse_piece, Piece, Stream, StreamedPart};
use crate::loader::body::{self, Body};
use crate::loader::feed::{self, Fed, Feed};
use crate::loader::rank::RankLoad;
use crate::loader::parser::{piece, FromParser, ToParser};
use crate::loader::slices::read_slices;
use crate::run::summary::RankSummary;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

/// The parse worker's loop: parse each part it is sent and post it back encoded.
pub fn serve(scope: DedicatedWorkerGlobalScope) {
    let reply_scope = scope.clone();
    let feed: RefCell<Option<Feed>> = RefCell::new(None);
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
        let parts = js_sys::Array::from(&ev.data());
        let bytes = parts.get(1).dyn_into::<js_sys::ArrayBuffer>().ok();
        let fed = |job, index, buffer: &js_sys::ArrayBuffer| {
            let mut progress = |done| reply(&reply_scope, &FromParser::Progress { job, index, done }, None);
            let now = || now_ms(&reply_scope);
            match feed::feed(&mut feed.borrow_mut(), job, index, js_sys::Uint8Array::new(buffer), &now, &mut progress) {
                Fed::Done(encoded) => answer(&reply_scope, job, index, encoded),
                // Parsed: back to be filled with the next bytes.
                Fed::Spent => send(&reply_scope, &FromParser::Spent { job, index }, Some(buffer)),
            }
        };
        match ToParser::decode(parts.get(0).as_string().as_deref()) {
            Some(ToParser::Parse { job, index, start, object, first }) => {
                let mut progress = |done| reply(&reply_scope, &FromParser::Progress { job, index, done }, None);
                let encoded = parse_bytes(&parts.get(1), piece(start, object, first), &mut progress);
                answer(&reply_scope, job, index, encoded.map(|part| (part, 0.0)));
            }
            Some(ToParser::ReadPart { job, index, start, end, object, first }) => match bytes {
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
            // Read as it arrives, so the answer comes from a task of its own.
            Some(ToParser::Rank { job, index, name }) => {
                let (scope, from) = (reply_scope.clone(), parts.get(1));
                wasm_bindgen_futures::spawn_local(async move {
                    let mut progress = |done| reply(&scope, &FromParser::Progress { job, index, done }, None);
                    let msg = match load_rank(&from, &name, &mut progress).await {
                        Ok(summary) => FromParser::Ranked { job, index, summary: Box::new(summary) },
                        Err(message) => FromParser::Failed { job, index, message },
                    };
                    reply(&scope, &msg, None);
                });
            }
            Some(ToParser::Open { job, index, start, object, first }) => {
                *feed.borrow_mut() = Some(Feed::open(job, index, piece(start, object, first), now_ms(&reply_scope)));
            }
            Some(ToParser::End { job, index, end }) => {
                if let Some(encoded) = feed::end(&mut feed.borrow_mut(), job, index, end) {
                    answer(&reply_scope, job, index, encoded);
                }
            }
            Some(ToParser::More { job, index }) => match bytes {
                Some(buffer) => fed(job, index, &buffer),
                None => answer(&reply_scope, job, index, Err("more bytes sent without them".into())),
            },
            None => reply(&reply_scope, &FromParser::Failed { job: 0, index: 0, message: "bad message to a parse worker".into() }, None),
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the parse worker.
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

/// Reads the part a parse worker was sent from its `File` or URL with [`stream_part`]; the part
/// encoded, and the ms spent waiting for reads.
async fn read_part(file: &JsValue, piece: Piece, end: u64, progress: &mut dyn FnMut(u64)) -> Result<(Vec<u8>, f64), String> {
    let stream = Stream::part(piece).expecting(end.saturating_sub(piece.start));
    let read = stream_part(file, stream, piece.start..end, progress, &mut || true).await?;
    let (part, waited_ms) = read.ok_or("part stopped")?;
    Ok((part.encode(), waited_ms))
}

/// Parses bytes `range` into `stream` (a part's, `load::Stream::part`) as they are read from
/// `from`: a URL string (those bytes of it, one ranged request parsed as its body arrives,
/// `loader::body::read_body_into`), a `File` (those bytes of it, read with reads in flight by
/// `loader::feed::read_into`: read one at a time with `FileReaderSync`, each of the two parse
/// workers of a 1 GB pick spent 1.7-1.9 s of its 4.2-4.5 s blocked on reads,
/// docs/performance.md), or a `Uint8Array` holding exactly
/// those bytes (`loader::feed::parse_own`, looking at this worker's messages between steps).
/// `progress(bytes done)` every 8 MiB or so, and the read stops (`None`) once `go_on()` is
/// false. The part, and the ms spent waiting for reads.
///
/// # Errors
/// The browser's message when the file or URL cannot be read (or the server sends other
/// bytes than asked); `from` being none of the three.
pub async fn stream_part(
    from: &JsValue,
    stream: Stream,
    range: std::ops::Range<u64>,
    progress: &mut dyn FnMut(u64),
    go_on: &mut dyn FnMut() -> bool,
) -> Result<Option<(StreamedPart, f64)>, String> {
    if let Some(view) = from.dyn_ref::<js_sys::Uint8Array>() {
        // The parse workers' spent pieces wait in this worker's queue to be refilled.
        return feed::parse_own(view, stream, progress, go_on, let_messages_run).await;
    }
    if let Some(file) = from.dyn_ref::<web_sys::File>() {
        return feed::read_into(&FileSlices(file), stream, range, progress, go_on).await;
    }
    let url = from.as_string().ok_or("part sent without its file, URL or bytes")?;
    let len = range.end.saturating_sub(range.start);
    let mut body = FetchBody::range(&url, range).await?;
    body::read_body_into(&mut body, stream, len, progress, go_on).await
}

/// Loads a run's file whole from `from` (a `File` read in slices, or a URL whose body is
/// parsed as it arrives) and summarizes it (`loader::rank::RankLoad`); `progress(bytes done)`
/// every `feed::REPORT_BYTES`.
async fn load_rank(from: &JsValue, name: &str, progress: &mut dyn FnMut(u64)) -> Result<RankSummary, String> {
    let mut done = 0u64;
    let mut pushed = |load: &mut RankLoad, view: &js_sys::Uint8Array| {
        load.push_with(view.length() as usize, |into| view.copy_to(into))?;
        let before = done;
        done += u64::from(view.length());
        if feed::report_due(before, done) {
            progress(done);
        }
        Ok::<(), String>(())
    };
    if let Some(file) = from.dyn_ref::<web_sys::File>() {
        // `File.size` is an integral byte count; the cast is exact below 2^53.
        let size = file.size() as u64;
        let mut load = RankLoad::begin(name, Some(size))?;
        let mut failed = None;
        read_slices(&FileSlices(file), 0..size, |view| match pushed(&mut load, view) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        })
        .await?;
        return match failed {
            Some(e) => Err(e),
            None => load.finish(),
        };
    }
    let url = from.as_string().ok_or("a rank sent without its file or URL")?;
    let mut body = FetchBody::whole(&url).await?;
    let mut load = RankLoad::begin(name, body.size)?;
    while let Some(view) = body.next().await? {
        pushed(&mut load, &view)?;
    }
    load.finish()
}

/// Posts `[json, ArrayBuffer?]` from a parse worker, transferring a copy of `bytes` if given.
fn reply(scope: &DedicatedWorkerGlobalScope, msg: &FromParser, bytes: Option<&[u8]>) {
    send(scope, msg, bytes.map(|b| js_sys::Uint8Array::from(b).buffer()).as_ref());
}

/// Posts `msg` with `buffer` (transferred) beside it, if any.
fn send(scope: &DedicatedWorkerGlobalScope, msg: &FromParser, buffer: Option<&js_sys::ArrayBuffer>) {
    if let Err(e) = post_parts(scope, &msg.encode(), buffer.map(AsRef::as_ref), true) {
        console_error(&format!("parse worker: postMessage failed: {}", js_error(&e)));
    }
}
