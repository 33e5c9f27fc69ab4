//! The load worker's decisions (`kinetoscope::loader`) driven natively through a recording
//! [`Host`], as the wasm binary drives them with the browser's: the latest load wins and a
//! dropped load's bytes are refused, `Progress` is throttled, a large file's parts come back in
//! any order and are joined in order, a failed, crashed or silent parse worker ends the load with
//! a message naming it, and a part that did not end at its cut sends the file back to be read
//! as one stream; a URL held whole for `?workers=2` loads once both its parts are back; a large
//! URL on a server answering `Range` is read in ranged parts (streamed as today otherwise); a
//! gzip URL handed to a download worker is inflated and cut there, its parts parsed by every
//! parse worker in turn, and joined to what the streamed load gives.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use kinetoscope::budget::Budget;
use kinetoscope::intake::SILENT_MS;
use kinetoscope::load::{cut_by, Piece, Stream, MIN_SPLIT_BYTES};
use kinetoscope::loader::ranges::{check_reply, json_size, range_header, ranged_size, Reply, Unranged, MAX_REQUESTS};
use kinetoscope::loader::slices::{split, SLICE_BYTES};
use kinetoscope::loader::feed::{self, Fed, Feed};
use kinetoscope::loader::inflate::{Inflate, Inflating, CUT_EVERY};
use kinetoscope::loader::parser::{decode, FromParser, ToParser};
use kinetoscope::loader::rank::RankLoad;
use kinetoscope::loader::{Attached, Host, Loader, ParserEvent, Source, Whole};
use kinetoscope::run::summary::RankSummary;
use protocol::{FromWorker, Phase, ToWorker};
use std::cell::{Cell, RefCell};
use std::ops::Range;
use std::rc::Rc;

/// A picked file: its name and bytes.
type File = Rc<(String, Vec<u8>)>;

/// What the loader asked the transport to do.
#[derive(Debug, Clone, PartialEq)]
enum Cmd {
    Fetch(u32),
    Read(u32),
    Spawn(usize),
    Terminate,
    Retire(usize),
    /// Parse worker `slot` sent part `index` of load `job`: its piece and end.
    Range { slot: usize, job: u32, index: usize, piece: Piece, end: u64 },
    /// Parse worker `slot` sent file `index` of run load `job` to load whole.
    Rank { slot: usize, job: u32, index: usize },
    /// A download worker started for load `id`, to inflate and cut a gzip as `plan` says.
    Pump { id: u32, plan: Inflate },
    /// The download worker told bytes were parsed.
    Consumed(u64),
    StopPump,
}

/// A message to parse worker `slot` and the bytes beside it.
type Told = (usize, ToParser, Option<Rc<Vec<u8>>>);

/// A part of a JSON held whole, sent to a parse worker: its slot, load, index, piece, bytes.
type Sent = (usize, u32, usize, Piece, Vec<u8>);

/// The recording transport: a settable clock, two cores, every post and command kept.
#[derive(Default)]
struct Rec {
    now: Cell<f64>,
    posted: RefCell<Vec<FromWorker>>,
    cmds: Vec<Cmd>,
    /// The first part this worker was asked to parse: load id, stream, range.
    here: Option<(u32, Stream, Range<u64>)>,
    /// Parts of a JSON held whole sent to parse workers.
    parts: Vec<Sent>,
    /// What the URLs of ranged loads hold (their servers answer `Range`), by URL.
    urls: std::collections::HashMap<String, Vec<u8>>,
    /// Console errors, when a test expects them (else one fails the test).
    errors: Option<RefCell<Vec<String>>>,
    /// Messages posted to parse workers: slot, message, bytes beside it.
    told: Vec<Told>,
}

impl Host for Rec {
    type File = File;
    type Buffer = Rc<Vec<u8>>;

    fn now_ms(&self) -> f64 {
        self.now.get()
    }
    fn cores(&self) -> usize {
        2
    }
    fn memory_bytes(&self) -> Option<u64> {
        None
    }
    fn post(&self, msg: &FromWorker, _words: Option<&[u32]>) {
        self.posted.borrow_mut().push(msg.clone());
    }
    fn console_error(&self, msg: &str) {
        match &self.errors {
            Some(errors) => errors.borrow_mut().push(msg.to_owned()),
            None => panic!("console error: {msg}"),
        }
    }
    fn file_name(file: &File) -> String {
        file.0.clone()
    }
    fn file_size(file: &File) -> u64 {
        file.1.len() as u64
    }
    fn buffer_size(buffer: &Rc<Vec<u8>>) -> u64 {
        buffer.len() as u64
    }
    fn copy_out(buffer: &Rc<Vec<u8>>) -> Vec<u8> {
        buffer.to_vec()
    }
    fn buffer_of(bytes: &[u8]) -> Rc<Vec<u8>> {
        Rc::new(bytes.to_vec())
    }
    fn fetch(&mut self, id: u32, _url: String, _name: String) {
        self.cmds.push(Cmd::Fetch(id));
    }
    fn fetch_manifest(&mut self, _id: u32, _workers: Option<u32>, _url: String) {}
    fn read(&mut self, id: u32, _file: File) {
        self.cmds.push(Cmd::Read(id));
    }
    fn take(&mut self, _id: u32, _name: String, _buffer: Rc<Vec<u8>>) {}
    fn start_pump(&mut self, id: u32, _url: &str, inflate: Option<Inflate>) -> Result<(), String> {
        match inflate {
            Some(plan) => {
                self.cmds.push(Cmd::Pump { id, plan });
                Ok(())
            }
            None => Err("no pump here".into()),
        }
    }
    fn consumed(&mut self, bytes: u64) {
        self.cmds.push(Cmd::Consumed(bytes));
    }
    fn stop_pump(&mut self) {
        self.cmds.push(Cmd::StopPump);
    }
    fn tell_parser(&mut self, slot: usize, msg: &ToParser, bytes: Option<Rc<Vec<u8>>>) -> Result<(), String> {
        self.told.push((slot, msg.clone(), bytes));
        Ok(())
    }
    fn cut(&self, whole: &Whole<File, Rc<Vec<u8>>>, shares: &[u32]) -> Result<Vec<(Piece, Range<u64>)>, String> {
        match whole {
            Whole::File(file) => cut_by(file.1.len() as u64, shares, &mut |at, into| read_at(&file.1, at, into)).map_err(|e| e.to_string()),
            Whole::Url { url, size, .. } => {
                // A server that said it answers `Range` but does not: the probe fails.
                let bytes = self.urls.get(url).ok_or_else(|| format!("{url:?}: the server answered HTTP 200, not 206"))?;
                cut_by(*size, shares, &mut |at, into| read_at(bytes, at, into)).map_err(|e| e.to_string())
            }
            Whole::Bytes { .. } => Err("files and URLs only".into()),
        }
    }
    fn parse_here(&mut self, id: u32, _whole: &Whole<File, Rc<Vec<u8>>>, stream: Stream, range: Range<u64>) {
        self.here = Some((id, stream, range));
    }
    fn spawn_parser(&mut self, slot: usize) -> Result<(), String> {
        self.cmds.push(Cmd::Spawn(slot));
        Ok(())
    }
    fn new_pool(&mut self) {}
    fn terminate_parsers(&mut self) {
        self.cmds.push(Cmd::Terminate);
    }
    fn retire_parser(&mut self, slot: usize) {
        self.cmds.push(Cmd::Retire(slot));
    }
    fn parser_ready(&mut self, _slot: usize) -> Result<(), String> {
        Ok(())
    }
    fn send_part(&mut self, slot: usize, job: u32, index: usize, piece: Piece, bytes: &[u8]) -> Result<(), String> {
        self.parts.push((slot, job, index, piece, bytes.to_vec()));
        Ok(())
    }
    fn send_range(&mut self, slot: usize, job: u32, index: usize, piece: Piece, end: u64, _whole: &Whole<File, Rc<Vec<u8>>>) -> Result<(), String> {
        self.cmds.push(Cmd::Range { slot, job, index, piece, end });
        Ok(())
    }
    fn refill(&mut self, _slot: usize, _job: u32, _buffer: Rc<Vec<u8>>) -> Result<(), String> {
        Ok(())
    }
    fn send_rank(&mut self, slot: usize, job: u32, index: usize, _source: &Source<File>) -> Result<(), String> {
        self.cmds.push(Cmd::Rank { slot, job, index });
        Ok(())
    }
}

fn read_at(bytes: &[u8], at: u64, into: &mut [u8]) -> std::io::Result<usize> {
    let at = (at as usize).min(bytes.len());
    let n = into.len().min(bytes.len() - at);
    into[..n].copy_from_slice(&bytes[at..at + n]);
    Ok(n)
}

fn loader() -> Loader<Rec> {
    Loader::new(Rec::default(), Budget::TAB)
}

/// A trace of `n` complete events on one thread.
fn trace(n: usize) -> Vec<u8> {
    let mut json = String::from("{\"traceEvents\":[");
    for i in 0..n {
        let sep = if i == 0 { "" } else { "," };
        json.push_str(&format!("{sep}{{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k{}\",\"pid\":1,\"tid\":1,\"ts\":{},\"dur\":1}}", i % 97, i * 2));
    }
    json.push_str("]}");
    json.into_bytes()
}

/// A trace large enough (over 2 x `load::MIN_SPLIT_BYTES`) to be read in two parts.
fn large_trace() -> Vec<u8> {
    trace(500_000)
}

/// [`large_trace`] with a syntax error in its first part, so that part does not end where the
/// second begins.
fn large_trace_broken_in_its_first_part() -> Vec<u8> {
    let mut json = large_trace();
    let at = json.len() / 5;
    let colon = at + json[at..].iter().position(|&b| b == b':').unwrap();
    json[colon] = b'!';
    json
}

/// The ids and kinds of what was posted, `Progress` and `Ready` left out.
fn replies(l: &Loader<Rec>) -> Vec<(u32, &'static str, String)> {
    l.host
        .posted
        .borrow()
        .iter()
        .filter_map(|m| match m {
            FromWorker::Loaded { id, summary, .. } => Some((*id, "loaded", summary.file_name.clone())),
            FromWorker::Failed { id, error } => Some((*id, "failed", error.message.clone())),
            _ => None,
        })
        .collect()
}

/// The `(done, total)` of every reading `Progress` of load `id`.
fn reading_progress(l: &Loader<Rec>, of: u32) -> Vec<u64> {
    let posted = l.host.posted.borrow();
    posted.iter().filter_map(|m| match m {
        FromWorker::Progress { id, phase: Phase::Reading, done_bytes, .. } if *id == of => Some(*done_bytes),
        _ => None,
    }).collect()
}

/// Picks `json` as file `id`: it is cut into two parts, part 1 sent to parse worker 0.
fn pick(l: &mut Loader<Rec>, id: u32, json: &[u8]) -> (Piece, u64) {
    let file: File = Rc::new(("big.json".into(), json.to_vec()));
    l.message(ToWorker::Read { id, workers: None }, Attached::File(file));
    let sent = l.host.cmds.iter().find_map(|c| match c {
        Cmd::Range { slot: 0, job, index: 1, piece, end } if *job == id => Some((*piece, *end)),
        _ => None,
    });
    sent.expect("part 1 went to parse worker 0")
}

/// Part 1 (`piece..end` of `json`) parsed as its parse worker would, encoded.
fn parsed_part(json: &[u8], piece: Piece, end: u64) -> Vec<u8> {
    let mut stream = Stream::part(piece).expecting(end - piece.start);
    stream.push(&json[piece.start as usize..end as usize]);
    stream.finish_part().encode()
}

/// The first part, which the loader asked to parse here once parse worker 0 booted.
fn parse_here(l: &mut Loader<Rec>, json: &[u8]) {
    l.parser(0, ParserEvent::Ready);
    let (id, mut stream, range) = l.host.here.take().expect("part 0 is parsed here once the parse worker is up");
    stream.push(&json[range.start as usize..range.end as usize]);
    l.part_here(id, Ok(Some((stream.finish_part(), 0.0))));
}

#[test]
fn the_latest_load_wins_and_bytes_of_a_dropped_load_are_refused() {
    let json = trace(10);
    let mut l = loader();
    l.message(ToWorker::Fetch { id: 1, url: "u1".into(), name: "one.json".into(), workers: None }, Attached::None);
    assert!(l.open(1, "one.json", None), "the current load opens");
    assert!(l.arrived(1, 5, |b| b.copy_from_slice(&json[..5])));
    l.message(ToWorker::Fetch { id: 2, url: "u2".into(), name: "two.json".into(), workers: None }, Attached::None);
    assert_eq!(l.host.cmds, [Cmd::Fetch(1), Cmd::Fetch(2)]);
    assert!(!l.arrived(1, 5, |b| b.copy_from_slice(&json[5..10])), "load 1 was dropped: its source must stop");
    assert!(!l.open(1, "one.json", None), "a dropped load does not open again");
    assert!(l.open(2, "two.json", Some(json.len() as u64)));
    assert!(l.arrived(2, json.len(), |b| b.copy_from_slice(&json)));
    l.finish(1);
    l.failed(1, "network gone".into());
    l.finish(2);
    assert_eq!(replies(&l), [(2, "loaded", "two.json".to_owned())], "only the latest load answers");
    assert!(!l.arrived(2, 1, |b| b[0] = b' '), "a finished load takes no more bytes");
}

#[test]
fn reading_progress_is_posted_at_most_every_50_ms() {
    let json = trace(200);
    let mut l = loader();
    l.message(ToWorker::Fetch { id: 7, url: "u".into(), name: "t.json".into(), workers: None }, Attached::None);
    assert!(l.open(7, "t.json", Some(json.len() as u64)));
    let pieces: Vec<&[u8]> = json.chunks(json.len() / 6 + 1).collect();
    for (piece, at_ms) in pieces.iter().zip([0.0, 10.0, 49.0, 50.0, 99.0, 101.0]) {
        l.host.now.set(at_ms);
        assert!(l.arrived(7, piece.len(), |b| b.copy_from_slice(piece)));
    }
    let sizes: Vec<u64> = pieces.iter().scan(0, |done, p| {
        *done += p.len() as u64;
        Some(*done)
    }).collect();
    // The open's 0, then the pieces at 0, 50 and 101 ms.
    assert_eq!(reading_progress(&l, 7), [0, sizes[0], sizes[3], sizes[5]]);
}

#[test]
fn a_large_file_is_read_in_parts_and_joined_in_order_whatever_order_they_come_back() {
    let json = large_trace();
    let mut streamed = loader();
    streamed.message(ToWorker::Fetch { id: 1, url: "u".into(), name: "big.json".into(), workers: Some(1) }, Attached::None);
    assert!(streamed.open(1, "big.json", Some(json.len() as u64)));
    assert!(streamed.arrived(1, json.len(), |b| b.copy_from_slice(&json)));
    streamed.finish(1);
    let posted = streamed.host.posted.borrow();
    let Some(FromWorker::Loaded { summary: whole, .. }) = posted.last() else { panic!("the streamed load loaded") };

    let mut l = loader();
    let (piece, end) = pick(&mut l, 3, &json);
    assert_eq!(l.host.cmds[0], Cmd::Spawn(0), "one parse worker for the second part");
    assert!(l.host.here.is_none(), "part 0 waits for the parse worker to be up");
    // Part 1 comes back first, then part 0 parsed here.
    l.parser(0, ParserEvent::Parsed { job: 3, index: 1, bytes: parsed_part(&json, piece, end), waited_ms: 2.0 });
    assert!(l.host.cmds.contains(&Cmd::Retire(0)), "a parse worker goes once its part is back");
    assert!(replies(&l).is_empty(), "not complete with one part of two");
    parse_here(&mut l, &json);
    let posted = l.host.posted.borrow();
    let Some(FromWorker::Loaded { id: 3, summary, .. }) = posted.last() else { panic!("loaded: {:?}", replies(&l)) };
    assert_eq!(summary.parse_workers, 2);
    assert_eq!((summary.events, summary.lanes, summary.span_us), (whole.events, whole.lanes, whole.span_us));
    assert_eq!(summary.phases, whole.phases);
    assert_eq!(summary.read_wait_ms, 2.0, "the longest wait of any part");
}

#[test]
fn a_failed_part_ends_the_load_with_a_message_naming_its_worker() {
    let json = large_trace();
    let mut l = loader();
    pick(&mut l, 4, &json);
    l.parser(0, ParserEvent::Failed { job: 3, index: 1, message: "of an older load".into() });
    assert!(replies(&l).is_empty(), "an event of another load is ignored");
    l.parser(0, ParserEvent::Failed { job: 4, index: 1, message: "out of memory".into() });
    assert_eq!(replies(&l), [(4, "failed", "parse worker 1 failed: out of memory".to_owned())]);
    assert!(l.host.cmds.contains(&Cmd::Terminate), "its parse workers are terminated");

    let mut l = loader();
    pick(&mut l, 5, &json);
    l.parser(0, ParserEvent::Crashed("RuntimeError: unreachable".into()));
    assert_eq!(replies(&l), [(5, "failed", "parse worker 0 stopped: RuntimeError: unreachable".to_owned())]);
}

#[test]
fn a_silent_parse_worker_ends_the_load_after_silent_ms() {
    let json = large_trace();
    let mut l = loader();
    pick(&mut l, 6, &json);
    parse_here(&mut l, &json);
    l.host.now.set(SILENT_MS);
    l.tick();
    assert!(replies(&l).is_empty(), "silent for SILENT_MS is not yet too long");
    l.host.now.set(SILENT_MS - 10.0);
    l.parser(0, ParserEvent::Progress { job: 6, index: 1, done: 1 << 20 });
    l.host.now.set(2.0 * SILENT_MS - 10.0);
    l.tick();
    assert!(replies(&l).is_empty(), "progress counts as being heard from");
    l.host.now.set(2.0 * SILENT_MS);
    l.tick();
    let secs = SILENT_MS / 1000.0;
    assert_eq!(replies(&l), [(6, "failed", format!("parse worker 1 stopped answering: nothing from it for {secs} s"))]);
}

#[test]
fn a_part_that_did_not_end_at_its_cut_sends_the_file_back_to_one_stream() {
    let json = large_trace_broken_in_its_first_part();
    let mut l = loader();
    let (piece, end) = pick(&mut l, 8, &json);
    l.parser(0, ParserEvent::Parsed { job: 8, index: 1, bytes: parsed_part(&json, piece, end), waited_ms: 0.0 });
    parse_here(&mut l, &json);
    assert!(replies(&l).is_empty(), "no answer yet: the file is read again");
    assert_eq!(l.host.cmds.last(), Some(&Cmd::Read(8)), "read again as one stream");
    assert!(l.open(8, "big.json", Some(json.len() as u64)), "the same load, now streamed");
    assert!(l.arrived(8, json.len(), |b| b.copy_from_slice(&json)));
    l.finish(8);
    let kinds: Vec<_> = replies(&l).into_iter().map(|(id, kind, _)| (id, kind)).collect();
    assert_eq!(kinds.len(), 1);
    assert_eq!(kinds[0].0, 8, "the load answers once, from the stream");
}

#[test]
fn a_url_held_whole_for_two_parse_workers_loads_once_both_parts_are_back_in_any_order() {
    let json = large_trace();
    let mut l = loader();
    l.message(ToWorker::Fetch { id: 9, url: "u".into(), name: "big.json".into(), workers: Some(2) }, Attached::None);
    assert!(l.open(9, "big.json", Some(json.len() as u64)));
    assert_eq!(l.host.cmds, [Cmd::Fetch(9), Cmd::Spawn(0), Cmd::Spawn(1)], "the parse workers boot while the bytes arrive");
    assert!(l.arrived(9, json.len(), |b| b.copy_from_slice(&json)));
    l.finish(9);
    let parts = std::mem::take(&mut l.host.parts);
    assert_eq!(parts.iter().map(|p| (p.0, p.1, p.2)).collect::<Vec<_>>(), [(0, 9, 0), (1, 9, 1)]);
    for (slot, job, index, piece, bytes) in parts.into_iter().rev() {
        let part = kinetoscope::load::parse_piece(&bytes, piece, &mut |_| {});
        l.parser(slot, ParserEvent::Parsed { job, index, bytes: part.encode(), waited_ms: 0.0 });
    }
    let posted = l.host.posted.borrow();
    let Some(FromWorker::Loaded { id: 9, summary, .. }) = posted.last() else { panic!("loaded: {:?}", replies(&l)) };
    assert_eq!(summary.events, 500_000);
    assert_eq!(summary.parse_workers, 2);
}

/// Headers of a plain GET of `len` bytes from a server that answers `Range`.
fn rangeable(len: usize) -> Reply<'static> {
    Reply { size: Some(len as u64), accept_ranges: Some("bytes"), content_encoding: None }
}

/// Load `id` of `url` (which holds `json`, its server answering `Range`) opened by URL with
/// `workers`; whether it is read in ranged parts.
fn fetch_ranged(l: &mut Loader<Rec>, id: u32, url: &str, json: &[u8], workers: Option<u32>) -> bool {
    l.host.urls.insert(url.to_owned(), json.to_vec());
    l.message(ToWorker::Fetch { id, url: url.into(), name: "big.json".into(), workers }, Attached::None);
    l.ranged(id, "big.json", url, &rangeable(json.len()))
}

/// Load `id` fed `json` as one stream after `open`; its `Loaded` summary.
fn stream_in(l: &mut Loader<Rec>, id: u32, json: &[u8]) -> protocol::TraceSummary {
    assert!(l.open(id, "big.json", Some(json.len() as u64)));
    assert!(l.arrived(id, json.len(), |b| b.copy_from_slice(json)));
    l.finish(id);
    let posted = l.host.posted.borrow();
    match posted.last() {
        Some(FromWorker::Loaded { id: got, summary, .. }) if *got == id => (**summary).clone(),
        other => panic!("load {id} loaded: {other:?}"),
    }
}

#[test]
fn a_response_is_read_in_ranges_only_with_a_length_byte_ranges_and_no_wire_encoding() {
    let ok = Reply { size: Some(100), accept_ranges: Some("bytes"), content_encoding: None };
    assert_eq!(ranged_size(&ok), Ok(100));
    assert_eq!(ranged_size(&Reply { accept_ranges: Some("none, Bytes"), content_encoding: Some("identity"), ..ok }), Ok(100));
    assert_eq!(ranged_size(&Reply { size: None, ..ok }), Err(Unranged::NoLength));
    assert_eq!(ranged_size(&Reply { accept_ranges: None, ..ok }), Err(Unranged::NoRanges), "CORS hides it, or no Range");
    assert_eq!(ranged_size(&Reply { accept_ranges: Some("none"), ..ok }), Err(Unranged::NoRanges));
    assert_eq!(ranged_size(&Reply { content_encoding: Some("gzip"), ..ok }), Err(Unranged::Encoded), "lengths count gzip bytes");
    assert_eq!(json_size(Some(" 100"), None), Some(100));
    assert_eq!(json_size(Some("100"), Some("identity")), Some(100));
    assert_eq!(json_size(Some("100"), Some("br")), None, "the length counts encoded bytes");
    assert_eq!(json_size(None, None), None);
}

#[test]
fn a_range_is_read_in_slices_covering_it_and_asked_with_an_inclusive_range_header() {
    let range = 5..(3 * SLICE_BYTES + 7);
    let slices: Vec<_> = split(range.clone(), SLICE_BYTES).collect();
    assert_eq!(slices.len(), 4);
    assert_eq!(slices.first().map(|s| s.start), Some(range.start));
    assert_eq!(slices.last().map(|s| s.end), Some(range.end));
    assert!(slices.windows(2).all(|w| w[0].end == w[1].start), "no gap nor overlap: {slices:?}");
    assert!(slices.iter().all(|s| s.end - s.start <= SLICE_BYTES && s.end > s.start));
    assert_eq!(split(9..9, SLICE_BYTES).count(), 0);
    assert_eq!(split(0..3, 0).collect::<Vec<_>>(), [0..1, 1..2, 2..3], "a zero slice is one byte, not a panic");
    assert_eq!(range_header(&(0..10)).as_deref(), Some("bytes=0-9"));
    assert_eq!(range_header(&(16..17)).as_deref(), Some("bytes=16-16"));
    assert_eq!(range_header(&(4..4)), None);
}

#[test]
fn a_ranged_reply_must_hold_exactly_the_bytes_asked_for() {
    let asked = 100..200;
    assert_eq!(check_reply(206, Some("bytes 100-199/5000"), Some(100), &asked), Ok(()));
    assert_eq!(check_reply(206, None, None, &asked), Ok(()), "Content-Range hidden by CORS, body not read yet");
    let whole = check_reply(200, None, None, &asked).unwrap_err();
    assert!(whole.contains("HTTP 200"), "a server ignoring Range sends the whole file: {whole}");
    assert!(check_reply(206, Some("bytes 0-99/5000"), None, &asked).is_err(), "other bytes");
    assert!(check_reply(206, Some("bytes 100-199"), None, &asked).is_ok());
    assert!(check_reply(206, Some("bytes */5000"), None, &asked).is_err());
    assert!(check_reply(206, None, Some(99), &asked).unwrap_err().contains("99 bytes"), "short body");
    assert!(check_reply(416, None, None, &asked).is_err());
}

#[test]
fn a_large_url_on_a_server_answering_range_is_read_in_ranged_parts_equal_to_the_stream() {
    let json = large_trace();
    let mut streamed = loader();
    streamed.message(ToWorker::Fetch { id: 1, url: "u".into(), name: "big.json".into(), workers: Some(1) }, Attached::None);
    let whole = stream_in(&mut streamed, 1, &json);
    assert_eq!(whole.parse_workers, 1);

    let mut l = loader();
    assert!(fetch_ranged(&mut l, 3, "http://h/big.json", &json, None), "read in parts");
    assert!(!l.open(3, "big.json", Some(json.len() as u64)), "its body is not streamed too");
    let (piece, end) = l.host.cmds.iter().find_map(|c| match c {
        Cmd::Range { slot: 0, job: 3, index: 1, piece, end } => Some((*piece, *end)),
        _ => None,
    }).expect("part 1's range went to parse worker 0");
    assert_eq!(end, json.len() as u64, "the last part runs to the end");
    let share = piece.start as f64 / json.len() as f64;
    assert!((0.56..0.64).contains(&share), "the part read here is cut larger, 3 shares to 2: {share}");
    assert_eq!(json[piece.start as usize - 1], b',', "cut at an event boundary");
    l.parser(0, ParserEvent::Progress { job: 3, index: 1, done: 1 << 20 });
    let parsing = l.host.posted.borrow().iter().any(|m| matches!(m, FromWorker::Progress { id: 3, phase: Phase::Parsing, total_bytes: Some(t), .. } if *t == json.len() as u64));
    assert!(parsing, "progress per byte of the whole URL");
    l.parser(0, ParserEvent::Parsed { job: 3, index: 1, bytes: parsed_part(&json, piece, end), waited_ms: 1.0 });
    parse_here(&mut l, &json);
    let posted = l.host.posted.borrow();
    let Some(FromWorker::Loaded { id: 3, summary, .. }) = posted.last() else { panic!("loaded: {:?}", replies(&l)) };
    assert_eq!(summary.parse_workers, 2);
    assert_eq!((summary.events, summary.lanes, summary.span_us, &summary.phases), (whole.events, whole.lanes, whole.span_us, &whole.phases));
    assert_eq!(summary.file_name, "big.json");
}

#[test]
fn a_url_is_read_in_at_most_six_parts_one_request_each() {
    let json = trace(1_700_000);
    assert!(json.len() >= 7 * MIN_SPLIT_BYTES, "large enough for 7 parts: {}", json.len());
    let mut l = loader();
    assert!(fetch_ranged(&mut l, 3, "http://h/big.json", &json, Some(8)), "read in parts");
    let sent = l.host.cmds.iter().filter(|c| matches!(c, Cmd::Range { job: 3, .. })).count();
    assert_eq!(sent + 1, MAX_REQUESTS, "the parse workers' parts and this worker's, a request each");
}

#[test]
fn a_url_is_streamed_without_range_or_length_with_one_worker_or_when_small() {
    let json = large_trace();
    let mut l = loader();
    l.message(ToWorker::Fetch { id: 1, url: "u".into(), name: "big.json".into(), workers: None }, Attached::None);
    assert!(!l.ranged(1, "big.json", "u", &Reply { accept_ranges: None, ..rangeable(json.len()) }), "no Range: streamed");
    assert!(!l.ranged(1, "big.json", "u", &Reply { size: None, ..rangeable(json.len()) }), "no length: streamed");
    assert_eq!(stream_in(&mut l, 1, &json).parse_workers, 1, "today's streamed path");

    let mut l = loader();
    assert!(!fetch_ranged(&mut l, 2, "u", &json, Some(1)), "?workers=1 parses on one core");
    assert_eq!(stream_in(&mut l, 2, &json).parse_workers, 1);

    let small = trace(1000);
    let mut l = loader();
    assert!(!fetch_ranged(&mut l, 3, "u", &small, None), "too small to split");
    assert!(!l.ranged(4, "big.json", "u", &rangeable(json.len())), "not the current load");
    assert_eq!(stream_in(&mut l, 3, &small).events, 1000);
}

#[test]
fn a_server_whose_ranges_cannot_be_read_is_streamed_after_a_console_error() {
    let json = large_trace();
    let mut l = Loader::new(Rec { errors: Some(RefCell::default()), ..Rec::default() }, Budget::TAB);
    l.message(ToWorker::Fetch { id: 5, url: "http://h/t.json".into(), name: "big.json".into(), workers: None }, Attached::None);
    // Not in `urls`: the probe of its head is answered with the whole file.
    assert!(!l.ranged(5, "big.json", "http://h/t.json", &rangeable(json.len())));
    let errors = l.host.errors.as_ref().unwrap().borrow().clone();
    assert_eq!(errors.len(), 1);
    assert!(errors[0].contains("HTTP 200"), "{errors:?}");
    assert_eq!(stream_in(&mut l, 5, &json).parse_workers, 1, "the body still arriving is parsed as it comes");
}

#[test]
fn a_ranged_part_that_did_not_end_at_its_cut_fetches_the_url_again_as_one_stream() {
    let json = large_trace_broken_in_its_first_part();
    let mut l = loader();
    assert!(fetch_ranged(&mut l, 8, "http://h/big.json", &json, None));
    let (piece, end) = l.host.cmds.iter().find_map(|c| match c {
        Cmd::Range { job: 8, piece, end, .. } => Some((*piece, *end)),
        _ => None,
    }).unwrap();
    l.parser(0, ParserEvent::Parsed { job: 8, index: 1, bytes: parsed_part(&json, piece, end), waited_ms: 0.0 });
    parse_here(&mut l, &json);
    assert!(replies(&l).is_empty());
    assert_eq!(l.host.cmds.last(), Some(&Cmd::Fetch(8)), "fetched again");
    assert!(!l.ranged(8, "big.json", "http://h/big.json", &rangeable(json.len())), "and streamed on one core, not cut again");
    assert_eq!(stream_in(&mut l, 8, &json).parse_workers, 1);
}

#[test]
fn the_file_of_a_one_file_run_manifest_on_a_server_answering_range_is_read_in_ranged_parts() {
    let json = large_trace();
    let mut l = loader();
    // With two files or more, the parse workers load files whole instead (below).
    let urls = ["http://h/r0.json"];
    for url in urls {
        l.host.urls.insert(url.into(), json.clone());
    }
    l.message(ToWorker::FetchRun { id: 20, url: "http://h/run.json".into(), workers: None }, Attached::None);
    let sources = urls.iter().enumerate().map(|(k, url)| Source::Url { url: (*url).into(), name: format!("r{k}.json") }).collect();
    l.manifest_in(20, None, Ok(sources));
    for (k, url) in urls.iter().enumerate() {
        let job = l.host.cmds.iter().rev().find_map(|c| match c {
            Cmd::Fetch(job) => Some(*job),
            _ => None,
        }).expect("the rank is fetched");
        assert!(l.ranged(job, &format!("r{k}.json"), url, &rangeable(json.len())), "rank {k} read in ranged parts");
        let (piece, end) = l.host.cmds.iter().rev().find_map(|c| match c {
            Cmd::Range { job: j, piece, end, .. } if *j == job => Some((*piece, *end)),
            _ => None,
        }).expect("its second part went to a parse worker");
        l.parser(0, ParserEvent::Parsed { job, index: 1, bytes: parsed_part(&json, piece, end), waited_ms: 0.0 });
        parse_here(&mut l, &json);
    }
    let posted = l.host.posted.borrow();
    let ranks = posted.iter().filter(|m| matches!(m, FromWorker::RankLoaded { id: 20, .. })).count();
    assert_eq!(ranks, 1, "the rank kept");
    assert!(matches!(posted.last(), Some(FromWorker::Loaded { id: 20, .. })), "the run loaded: {:?}", replies(&l));
}

/// A loader with run load `id` of `n` URLs (`http://h/rK.json`) opened by `?run=` with
/// `workers`, its manifest in.
fn run_of(id: u32, n: usize, workers: Option<u32>) -> Loader<Rec> {
    let mut l = loader();
    l.message(ToWorker::FetchRun { id, url: "http://h/run.json".into(), workers }, Attached::None);
    let sources = (0..n).map(|k| Source::Url { url: format!("http://h/r{k}.json"), name: format!("r{k}.json") }).collect();
    l.manifest_in(id, workers, Ok(sources));
    l
}

/// The last load fetched here.
fn last_fetch(l: &Loader<Rec>) -> u32 {
    l.host.cmds.iter().rev().find_map(|c| if let Cmd::Fetch(job) = c { Some(*job) } else { None }).expect("a file fetched here")
}

/// Streams `json` into the load last fetched here as a small file (one part).
fn stream_small(l: &mut Loader<Rec>, json: &[u8]) {
    let id = last_fetch(l);
    assert!(l.open(id, "r.json", Some(json.len() as u64)));
    assert!(l.arrived(id, json.len(), |b| b.copy_from_slice(json)));
    l.finish(id);
}

/// The file indexes `RankLoaded` named, in order, with their errors.
fn ranks_loaded(l: &Loader<Rec>) -> Vec<(u32, Option<String>)> {
    l.host.posted.borrow().iter().filter_map(|m| if let FromWorker::RankLoaded { info, .. } = m { Some((info.index, info.error.clone())) } else { None }).collect()
}

/// What the run keeps of `json` (a rank named `name`), as a parse worker would send it.
fn rank_summary(name: &str, json: &[u8]) -> Box<RankSummary> {
    let mut load = RankLoad::begin(name, Some(json.len() as u64)).unwrap();
    load.push(json).unwrap();
    Box::new(load.finish().unwrap())
}

#[test]
fn a_run_loads_files_here_and_whole_on_a_parse_worker_at_once_and_loads_once_all_are_in() {
    let json = trace(200);
    let mut l = run_of(30, 3, None);
    // Two cores: one parse worker, sent the second file, while the first is fetched here.
    assert!(l.host.cmds.contains(&Cmd::Rank { slot: 0, job: 30, index: 1 }), "{:?}", l.host.cmds);
    stream_small(&mut l, &json);
    // The next file not started (the third) loads here, parsed on one core.
    assert_eq!(l.host.cmds.iter().filter(|c| matches!(c, Cmd::Fetch(30))).count(), 2);
    l.parser(0, ParserEvent::Progress { job: 30, index: 1, done: 8 << 20 });
    let progress = l.host.posted.borrow().iter().any(|m| matches!(m, FromWorker::RankProgress { id: 30, index: 1, done_bytes, .. } if *done_bytes == 8 << 20));
    assert!(progress, "the parse worker's progress is the file's");
    l.parser(0, ParserEvent::Ranked { job: 30, index: 1, summary: rank_summary("r1.json", &json) });
    assert_eq!(ranks_loaded(&l), [(0, None), (1, None)]);
    assert!(!l.host.posted.borrow().iter().any(|m| matches!(m, FromWorker::Loaded { .. })), "the third file is still loading");
    assert!(!l.host.cmds.contains(&Cmd::Terminate), "the parse worker waits for the run's end");
    stream_small(&mut l, &json);
    assert_eq!(ranks_loaded(&l), [(0, None), (1, None), (2, None)]);
    assert!(matches!(l.host.posted.borrow().last(), Some(FromWorker::Loaded { id: 30, .. })), "the run loaded: {:?}", replies(&l));
    assert!(l.host.cmds.contains(&Cmd::Terminate), "the run's parse workers go once it is in");
}

#[test]
fn the_run_ends_with_the_parse_workers_last_file_and_a_parse_worker_that_dies_fails_only_its_file() {
    let json = trace(200);
    let mut l = run_of(31, 2, None);
    stream_small(&mut l, &json);
    assert!(!l.host.posted.borrow().iter().any(|m| matches!(m, FromWorker::Loaded { .. })), "waits for the parse worker's file");
    l.parser(0, ParserEvent::Ranked { job: 31, index: 1, summary: rank_summary("r1.json", &json) });
    assert_eq!(ranks_loaded(&l), [(0, None), (1, None)]);
    assert!(matches!(l.host.posted.borrow().last(), Some(FromWorker::Loaded { id: 31, .. })), "the run loaded with the parse worker's file");

    let mut l = run_of(32, 3, None);
    l.parser(0, ParserEvent::Crashed("RuntimeError: unreachable".into()));
    let loaded = ranks_loaded(&l);
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].0, 1);
    assert!(loaded[0].1.as_deref().is_some_and(|e| e.starts_with("parse worker 0 stopped: RuntimeError")), "{loaded:?}");
    assert_eq!(l.host.cmds.iter().filter(|c| matches!(c, Cmd::Rank { .. })).count(), 1, "no file goes to the dead parse worker");
    stream_small(&mut l, &json);
    stream_small(&mut l, &json);
    assert_eq!(ranks_loaded(&l).iter().map(|r| r.0).collect::<Vec<_>>(), [1, 0, 2], "its next file loaded here");
    assert!(matches!(l.host.posted.borrow().last(), Some(FromWorker::Loaded { id: 32, .. })), "the run loaded with its other files");
}

#[test]
fn cancelling_a_run_stops_its_parse_workers_files() {
    let json = trace(50);
    let mut l = run_of(33, 3, None);
    stream_small(&mut l, &json);
    stream_small(&mut l, &json);
    assert!(!l.host.cmds.contains(&Cmd::Terminate), "parse worker 0 still loads file 1");
    l.message(ToWorker::Cancel { id: 33 }, Attached::None);
    assert!(l.host.cmds.contains(&Cmd::Terminate), "its download and parse stopped");
}

#[test]
fn a_parse_worker_silent_too_long_fails_its_file_and_the_run_goes_on() {
    let json = trace(50);
    let mut l = run_of(34, 3, None);
    l.host.now.set(SILENT_MS - 1.0);
    l.parser(0, ParserEvent::Progress { job: 34, index: 1, done: 8 << 20 });
    l.host.now.set(2.0 * SILENT_MS - 2.0);
    l.tick();
    assert!(ranks_loaded(&l).is_empty(), "heard from within the limit");
    l.host.now.set(2.0 * SILENT_MS);
    l.tick();
    let loaded = ranks_loaded(&l);
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0], (1, Some("parse worker 0 stopped answering: nothing from it for 30 s".into())));
    assert!(l.host.cmds.contains(&Cmd::Retire(0)));
    stream_small(&mut l, &json);
    stream_small(&mut l, &json);
    assert!(matches!(l.host.posted.borrow().last(), Some(FromWorker::Loaded { id: 34, .. })), "the run loaded with its other files");
}

#[test]
fn a_run_on_one_core_loads_every_file_here() {
    let json = trace(50);
    let mut l = run_of(32, 2, Some(1));
    assert!(!l.host.cmds.iter().any(|c| matches!(c, Cmd::Rank { .. } | Cmd::Spawn(_))));
    stream_small(&mut l, &json);
    stream_small(&mut l, &json);
    assert_eq!(ranks_loaded(&l), [(0, None), (1, None)]);
}

#[test]
fn a_rank_loaded_in_pieces_small_or_large_is_summarized_as_the_cli_does_and_crosses_to_the_load_worker_whole() {
    for name in ["param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json", "hta__trace_filter__sampled_rank-1.json.gz"] {
        let path = crate::common::real(name);
        let bytes = std::fs::read(&path).unwrap();
        let mut load = RankLoad::begin(name, Some(bytes.len() as u64)).unwrap();
        // As a fetch body comes (tens of KiB, gathered to 1 MiB) and in pieces larger than that.
        let piece = if name.ends_with(".gz") { 3 << 20 } else { 64 << 10 };
        for piece in bytes.chunks(piece) {
            load.push(piece).unwrap();
        }
        let summary = load.finish().unwrap();
        assert_eq!(summary, kinetoscope::run::load::summarize_file(&path).unwrap(), "{name}");
        assert!(!summary.steps.is_empty() && !summary.collectives.is_empty(), "{name}: a rank with steps and collectives");
        let json = FromParser::Ranked { job: 1, index: 2, summary: Box::new(summary.clone()) }.encode();
        let ParserEvent::Ranked { job: 1, index: 2, summary: back } = decode::<Vec<u8>>(Some(&json), None, Clone::clone) else { panic!("{name}: not Ranked") };
        assert_eq!(*back, summary, "{name}: the summary crosses whole");
    }
    assert!(RankLoad::begin("huge.json", Some(1 << 40)).err().is_some_and(|e| e.contains("GB")), "over the tab's budget");
}

/// `json` gzipped.
fn gzip(json: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(json).unwrap();
    gz.finish().unwrap()
}

/// Load `id` of the gzip `gz` by URL with `workers`, its body handed to a download worker: the
/// plan it was started with, if any.
fn fetch_gzip(l: &mut Loader<Rec>, id: u32, gz: &[u8], workers: Option<u32>) -> Option<Inflate> {
    let url = "http://h/t.json.gz";
    l.message(ToWorker::Fetch { id, url: url.into(), name: "t.json.gz".into(), workers }, Attached::None);
    assert!(l.open(id, "t.json.gz", Some(gz.len() as u64)));
    l.handoff(id, url);
    l.host.cmds.iter().rev().find_map(|c| match c {
        Cmd::Pump { id: got, plan } if *got == id => Some(*plan),
        _ => None,
    })
}

/// `gz` inflated as the download worker does (by flate2 here, as the browser would), its
/// JSON told to load `id` in pieces of a MiB (all taken), then the end.
fn inflate_into(l: &mut Loader<Rec>, id: u32, gz: &[u8]) {
    let json = inflate(gz);
    for chunk in json.chunks(1 << 20) {
        assert!(l.inflating(id, piece(chunk)), "taken");
    }
    assert!(!l.inflating(id, Inflating::Done { json_bytes: json.len() as u64 }), "the download is over");
}

/// What the download worker posts for `json`.
fn piece(json: &[u8]) -> Inflating<Rc<Vec<u8>>> {
    Inflating::Piece { bytes: Rc::new(json.to_vec()), read: 1 }
}

/// `gz` inflated (by flate2, as the browser would).
fn inflate(gz: &[u8]) -> Vec<u8> {
    let mut json = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(gz), &mut json).unwrap();
    json
}

/// Runs the parse workers on what they were told, in order: each piece parsed and given back,
/// each part sent back at its end.
fn parse_told(l: &mut Loader<Rec>) {
    let told = std::mem::take(&mut l.host.told);
    let mut feeds: Vec<Option<Feed>> = (0..8).map(|_| None).collect();
    for (slot, msg, bytes) in told {
        match msg {
            ToParser::Open { job, index, start, object, first } => feeds[slot] = Some(Feed::open(job, index, kinetoscope::loader::parser::piece(start, object, first), 0.0)),
            ToParser::More { job, index } => {
                let bytes = bytes.expect("a piece beside More");
                let fed = feed::feed(&mut feeds[slot], job, index, bytes.to_vec(), &|| 0.0, &mut |_| {});
                assert_eq!(fed, Fed::Spent, "a part ends with End");
                l.parser(slot, ParserEvent::Spent { job, buffer: bytes });
            }
            ToParser::End { job, index, end } => {
                let (encoded, waited_ms) = feed::end(&mut feeds[slot], job, index, end).expect("its bytes all came").unwrap();
                l.parser(slot, ParserEvent::Parsed { job, index: index as usize, bytes: encoded, waited_ms });
            }
            other => panic!("told {other:?}"),
        }
    }
}

/// The summary of load `id` with what depends on how it was read set aside.
fn loaded_summary(l: &Loader<Rec>, id: u32) -> protocol::TraceSummary {
    let posted = l.host.posted.borrow();
    let summary = posted.iter().rev().find_map(|m| match m {
        FromWorker::Loaded { id: got, summary, .. } if *got == id => Some((**summary).clone()),
        _ => None,
    });
    let mut summary = summary.unwrap_or_else(|| panic!("load {id} not loaded: {:?}", replies(l)));
    (summary.parse_ms, summary.read_wait_ms, summary.finish_ms, summary.parse_workers) = (0.0, 0.0, 0.0, 0);
    summary
}

#[test]
fn a_gzip_url_is_inflated_by_the_download_worker_and_parsed_by_every_parse_worker_in_turn() {
    let json = trace(800_000);
    let gz = gzip(&json);
    let mut l = loader();
    let plan = fetch_gzip(&mut l, 1, &gz, Some(2)).expect("a plan to inflate and cut");
    let budget = Budget::TAB;
    assert_eq!(plan, Inflate { every: CUT_EVERY, until: budget.held_whole().max_json_bytes(), max_json_bytes: budget.max_json_bytes() });
    assert!(json.len() as u64 > 3 * CUT_EVERY, "{} bytes", json.len());
    inflate_into(&mut l, 1, &gz);
    // Parts go to the two parse workers in turn, each opened, fed and ended there.
    let opened: Vec<(usize, u32)> = l.host.told.iter().filter_map(|(slot, m, _)| if let ToParser::Open { index, .. } = m { Some((*slot, *index)) } else { None }).collect();
    assert!(opened.len() >= 4, "{opened:?}");
    assert!(opened.iter().enumerate().all(|(k, &(slot, index))| index as usize == k && slot == k % 2), "{opened:?}");
    let ends = l.host.told.iter().filter(|(_, m, _)| matches!(m, ToParser::End { .. })).count();
    assert_eq!(ends, opened.len());
    let pieces = l.host.told.iter().filter(|(_, m, _)| matches!(m, ToParser::More { .. })).count();
    parse_told(&mut l);
    // Every piece parsed let the download go on.
    let consumed: u64 = l.host.cmds.iter().filter_map(|c| if let Cmd::Consumed(n) = c { Some(*n) } else { None }).sum();
    assert_eq!(consumed, json.len() as u64);
    assert!(pieces >= json.len() / (2 << 20), "{pieces} pieces");
    let got = loaded_summary(&l, 1);
    let mut streamed = loader();
    streamed.message(ToWorker::Fetch { id: 2, url: "u".into(), name: "t.json.gz".into(), workers: Some(1) }, Attached::None);
    stream_in(&mut streamed, 2, &gz);
    let mut want = loaded_summary(&streamed, 2);
    want.file_name = got.file_name.clone();
    assert_eq!(format!("{got:?}"), format!("{want:?}"));
    assert_eq!((got.json_bytes, got.file_bytes), (json.len() as u64, gz.len() as u64));
    assert!(l.host.cmds.contains(&Cmd::Terminate), "the parse workers go with the load");
}

#[test]
fn a_cut_gzip_whose_part_did_not_end_at_its_cut_is_fetched_again_as_one_stream() {
    let json = large_trace_broken_in_its_first_part();
    let gz = gzip(&json);
    let mut l = loader();
    fetch_gzip(&mut l, 4, &gz, Some(2)).unwrap();
    inflate_into(&mut l, 4, &gz);
    parse_told(&mut l);
    assert_eq!(l.host.cmds.last(), Some(&Cmd::Fetch(4)), "read again as one stream");
    assert!(replies(&l).is_empty(), "{:?}", replies(&l));
}

#[test]
fn a_gzip_past_the_budget_or_cancelled_or_on_one_core_stops_its_download_worker() {
    let json = large_trace();
    let gz = gzip(&json);
    let mut l = Loader::new(Rec::default(), Budget::new(json.len() as u64 / 2));
    fetch_gzip(&mut l, 1, &gz, Some(2)).unwrap();
    let taken = json.chunks(1 << 20).take_while(|c| l.inflating(1, piece(c))).count();
    assert_eq!(taken, (json.len() / 2) >> 20, "refused past the budget");
    let (_, kind, message) = replies(&l).pop().unwrap();
    assert_eq!(kind, "failed");
    assert!(message.starts_with("This trace inflates to over"), "{message}");
    assert!(l.host.cmds.contains(&Cmd::StopPump), "{:?}", l.host.cmds);

    let mut l = loader();
    fetch_gzip(&mut l, 2, &gz, Some(2)).unwrap();
    assert!(json.chunks(1 << 20).take(5).all(|c| l.inflating(2, piece(c))));
    l.message(ToWorker::Cancel { id: 2 }, Attached::None);
    assert!(l.host.cmds.ends_with(&[Cmd::StopPump, Cmd::Terminate]), "{:?}", l.host.cmds);
    assert!(!l.inflating(2, piece(b" ")), "refused once cancelled");

    let mut l = Loader::new(Rec { errors: Some(RefCell::default()), ..Rec::default() }, Budget::TAB);
    assert_eq!(fetch_gzip(&mut l, 3, &gz, Some(1)), None, "?workers=1: no plan, so no parts");
    let mut l = Loader::new(Rec { errors: Some(RefCell::default()), ..Rec::default() }, Budget::TAB);
    assert_eq!(fetch_gzip(&mut l, 3, &gz, None), None, "by default, not on two cores");
    // Below the usual hand-off size, a gzip goes to a download worker only for its parts.
    let mut l = loader();
    l.message(ToWorker::Fetch { id: 4, url: "u".into(), name: "t.json.gz".into(), workers: None }, Attached::None);
    assert!(l.open(4, "t.json.gz", Some(gz.len() as u64)));
    assert!(gz.len() < 32 << 20 && !l.handoff(4, "u"), "read here");
}

#[test]
fn a_gzip_the_browser_cannot_inflate_whole_is_fetched_again_and_inflated_here() {
    let json = trace(800_000);
    let gz = gzip(&json);
    for before_any_part in [true, false] {
        let mut l = Loader::new(Rec { errors: Some(RefCell::default()), ..Rec::default() }, Budget::TAB);
        fetch_gzip(&mut l, 1, &gz, Some(2)).unwrap();
        if !before_any_part {
            assert!(json.chunks(1 << 20).take(20).all(|c| l.inflating(1, piece(c))));
        }
        assert!(!l.inflating(1, Inflating::Failed("TypeError: Junk found after end of compressed data.".into())));
        assert_eq!(l.host.cmds.last(), Some(&Cmd::Fetch(1)), "read again");
        let errors = l.host.errors.as_ref().unwrap().borrow().clone();
        assert_eq!(errors, [r#"worker: the browser could not inflate "t.json.gz" whole (TypeError: Junk found after end of compressed data.): reading it again on one core"#]);
        // On one core, the gzip inflated here as it arrives.
        assert!(l.open(1, "t.json.gz", Some(gz.len() as u64)));
        assert!(l.arrived(1, gz.len(), |b| b.copy_from_slice(&gz)));
        l.finish(1);
        assert_eq!(loaded_summary(&l, 1).json_bytes, json.len() as u64);
    }
}

#[test]
fn a_parse_worker_owing_an_answer_too_long_ends_the_cut_gzip() {
    let json = trace(800_000);
    let gz = gzip(&json);
    let mut l = loader();
    fetch_gzip(&mut l, 1, &gz, Some(2)).unwrap();
    inflate_into(&mut l, 1, &gz);
    // Pieces out and none answered: silent from the last one sent.
    l.host.now.set(SILENT_MS);
    l.tick();
    assert!(replies(&l).is_empty());
    l.host.now.set(SILENT_MS + 1.0);
    l.tick();
    assert_eq!(replies(&l), [(1, "failed", format!("parse worker 0 stopped answering: nothing from it for {} s", SILENT_MS / 1000.0))]);
}
