//! Load driver: JSON bytes -> [`Trace`], deciding what is fatal and what is a diagnostic, and
//! splitting the work into parts that can be parsed independently (in parallel by the caller).
//!
//! Fatal (returned as [`LoadFailure`]): empty input, input that is not a trace, or a syntax
//! error before the first event. After at least one event, a syntax error or the end of input
//! stops reading and is reported as a diagnostic with its offset; every complete event before
//! it is kept (a truncated file is not a broken one).
//!
//! Parallel parse: [`plan`] cuts the event array at event boundaries (`input::split`), each
//! part is parsed by [`parse_part`] (any thread or worker), and [`assemble`] merges them in
//! order. Every part but the last must end cleanly at its boundary; if one does not (a wrong
//! cut, or malformed input inside a part), `assemble` parses the whole input sequentially, so
//! the result never depends on how the input was split.
//!
//! Streamed (the default in the page and the CLI): [`Stream`] reads pieces as they arrive into one
//! builder and gives the same trace as [`parse`] of all of them (`stream.rs`).
//!
//! A file not held whole, on several threads (the CLI): [`cut`] finds the boundaries reading
//! only windows of it, each part is streamed from its own range ([`Stream::part`]), and
//! [`join`] merges them, or says to read the file sequentially (`cut.rs`). One arriving in
//! order (a gzip inflating): [`Cutter`] cuts it as it comes, for `join` as well.
//!
//! Across workers (the browser's `?workers=N`): [`Plan::piece`] names what a worker holding only one part's
//! bytes needs, [`parse_piece`] parses them there, and [`Part::encode`] / [`Part::decode`] carry
//! the result back as packed columns (`model::builder` `codec.rs`); decoding gives the same
//! `Part`, so the assembled trace is the one a sequential parse gives (tests/part_codec.rs). A
//! [`StreamedPart`] sent to the worker that joins is decoded but its slice columns
//! ([`StreamedPart::decode_later`]), which the join appends straight from the bytes sent.

use crate::codec::{CodecError, Reader, Writer};
use crate::diag::DiagKind;
use crate::fork::{Fork, Sequential};
use crate::input::split::split;
use crate::json::{ErrorKind, Form, Location, LongStrings, ParseError, RawEvent, Tokenizer, Window};
use crate::model::builder::{Builder, SlicesAt};
use crate::model::Trace;
use std::ops::Range;

mod clip;
mod cut;
mod cutter;
mod share;
mod stream;

pub use cut::{cut, cut_by, join};
pub use cutter::{Cut, Cutter};
pub use share::Shares;
pub use stream::{Arrived, Stream, StreamedPart};

/// Why nothing could be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadFailure {
    /// `empty`, `malformed`.
    pub kind: &'static str,
    /// Message without position.
    pub message: String,
    /// Where, when the input has a position to name.
    pub location: Option<Location>,
}

impl std::fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.location {
            Some(loc) => write!(f, "{} {loc}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

/// First word of an encoded [`Part`] ("KPRT" little-endian, version 1 in the high byte).
const PART_MAGIC: u32 = u32::from_le_bytes(*b"KPR\x01");

/// Smallest JSON worth splitting across workers: below it, spawning and instantiating them
/// costs more than it saves, and one worker parses everything.
pub const MIN_SPLIT_BYTES: usize = 16 << 20;

/// Most parts (workers) one load is split into: each worker holds its part and its model
/// while parsing, so memory, not only cores, bounds this.
pub const MAX_PARTS: usize = 8;

/// How many parts to cut `json_bytes` of JSON into with `cores` cores: 1 below
/// [`MIN_SPLIT_BYTES`], then one per [`MIN_SPLIT_BYTES`], at most `cores` and [`MAX_PARTS`].
pub fn parts_for(json_bytes: usize, cores: usize) -> usize {
    cores.min(MAX_PARTS).min(json_bytes / MIN_SPLIT_BYTES).max(1)
}

/// Bytes between progress callbacks.
const PROGRESS_STEP: u64 = 8 << 20;

/// How an input is cut into parts.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Top-level form.
    pub form: Form,
    /// Byte ranges of the parts, in order, covering the input.
    pub parts: Vec<Range<usize>>,
}

/// One parsed part: its builder and how reading ended.
pub struct Part {
    builder: Builder,
    stopped: Option<ParseError>,
    unclosed: bool,
    events: u64,
    skipped: u64,
    element_start: u64,
    form: Form,
    /// Strings cut.
    long: LongStrings,
    /// After the top-level value: the first byte that is not whitespace, and the value's end.
    trailing: Option<(u64, u64)>,
}

/// Parses a whole document on the calling thread; `progress(json_bytes_done)` every few MB.
///
/// # Errors
/// [`LoadFailure`] when no event could be read (see the module docs).
pub fn parse(json: &[u8], progress: &mut dyn FnMut(u64)) -> Result<Trace, LoadFailure> {
    let plan = plan(json, 1)?;
    let part = parse_part(json, &plan, 0, progress);
    assemble(json, &plan, vec![part])
}

/// Cuts `json` into at most `parts` parts at event boundaries.
///
/// # Errors
/// [`LoadFailure`] for empty input or a document that is not a trace.
pub fn plan(json: &[u8], parts: usize) -> Result<Plan, LoadFailure> {
    if json.iter().all(u8::is_ascii_whitespace) {
        return Err(empty());
    }
    let tokens = Tokenizer::new(json, 0).map_err(|e| fatal(Window::whole(json), &e))?;
    let form = tokens.form();
    Ok(Plan { form, parts: split(json, tokens.offset() as usize, form, parts) })
}

/// Parses part `index` of `plan`; `progress(json_bytes_done)` every few MB.
pub fn parse_part(json: &[u8], plan: &Plan, index: usize, progress: &mut dyn FnMut(u64)) -> Part {
    let range = plan.parts.get(index).cloned().unwrap_or(0..0);
    let start = range.start as u64;
    parse_piece(&json[range], Piece { start, form: plan.form, first: index == 0 }, progress)
}

/// Where a part's bytes sit in the input: what a worker holding only those bytes needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// Absolute offset of the part's first byte in the input.
    pub start: u64,
    /// The input's top-level form (from [`plan`]).
    pub form: Form,
    /// The part starts the input (it holds the document's head).
    pub first: bool,
}

impl Plan {
    /// Part `index` as a [`Piece`] and its byte range.
    pub fn piece(&self, index: usize) -> Option<(Piece, Range<usize>)> {
        let range = self.parts.get(index)?.clone();
        Some((Piece { start: range.start as u64, form: self.form, first: index == 0 }, range))
    }
}

/// Parses one part given only its bytes (`bytes` = the input's `piece.start..` range, as cut
/// by [`plan`]); `progress(json_bytes_done)` gets absolute offsets every few MB. The same as
/// [`parse_part`] over the whole input.
pub fn parse_piece(bytes: &[u8], piece: Piece, progress: &mut dyn FnMut(u64)) -> Part {
    let (mut builder, tokens) = if piece.first {
        match Tokenizer::new(bytes, 0) {
            Ok(t) => (Builder::new(), t),
            Err(e) => return Part::failed(e, piece.form),
        }
    } else {
        (Builder::for_later_part(), Tokenizer::events_only(bytes, piece.start, piece.form))
    };
    let mut tokens = tokens;
    let mut next_report = PROGRESS_STEP;
    let mut stopped = None;
    let mut ev = RawEvent::default();
    loop {
        match tokens.next_event(&mut ev) {
            Ok(true) => {
                builder.add(&ev);
                if ev.offset >= next_report {
                    progress(ev.offset);
                    next_report = ev.offset + PROGRESS_STEP;
                }
            }
            Ok(false) => break,
            Err(e) => {
                stopped = Some(e);
                break;
            }
        }
    }
    for (key, raw) in &tokens.top_level().fields {
        builder.top_level(*key, raw);
    }
    Part {
        builder,
        stopped,
        unclosed: tokens.unclosed,
        events: tokens.events_read(),
        skipped: tokens.skipped_elements,
        element_start: tokens.element_start(),
        form: tokens.form(),
        long: tokens.long_strings(),
        trailing: tokens.trailing().zip(tokens.closed_at()),
    }
}

impl Part {
    fn failed(e: ParseError, form: Form) -> Self {
        let (long, trailing) = (LongStrings::default(), None);
        Part { builder: Builder::new(), stopped: Some(e), unclosed: false, events: 0, skipped: 0, element_start: 0, form, long, trailing }
    }

    /// The part as packed bytes (its builder's columns, strings and how reading ended), to
    /// send from the worker that parsed it to the one that assembles ([`crate::codec`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(self.builder.encoded_size_hint());
        w.u32(PART_MAGIC);
        self.write(&mut w);
        w.into_bytes()
    }

    /// Reads a part written by [`Part::encode`].
    ///
    /// # Errors
    /// When `bytes` is not a complete, consistent part encoding.
    pub fn decode(bytes: &[u8]) -> Result<Part, CodecError> {
        let mut r = Reader::new(bytes);
        if r.u32()? != PART_MAGIC {
            return Err(CodecError("not a part encoding (bad magic)".into()));
        }
        let (mut part, at) = Self::read(&mut r)?;
        if !r.at_end() {
            return Err(CodecError("trailing bytes after the part".into()));
        }
        part.builder.adopt_slices(at.of(bytes));
        Ok(part)
    }

    /// Writes the part after its magic (a [`StreamedPart`] holds one too).
    fn write(&self, w: &mut Writer) {
        match &self.stopped {
            None => w.u8(0),
            Some(e) => {
                match e.kind() {
                    ErrorKind::Eof => w.u8(1),
                    ErrorKind::TooDeep => w.u8(2),
                    ErrorKind::Syntax(msg) => {
                        w.u8(3);
                        w.str(msg);
                    }
                }
                w.u64(e.offset());
            }
        }
        w.bool(self.unclosed);
        w.u64(self.events);
        w.u64(self.skipped);
        w.u64(self.element_start);
        w.u8(match self.form {
            Form::Object => 0,
            Form::Array => 1,
        });
        w.u64(self.long.count);
        w.u64(self.long.longest);
        w.opt_u64(self.long.first);
        w.opt_u64(self.trailing.map(|t| t.0));
        w.opt_u64(self.trailing.map(|t| t.1));
        self.builder.encode(w);
    }

    /// Reads what [`Part::write`] wrote but its builder's slice columns, left as encoded: where
    /// they lie ([`Builder::decode_later`]).
    fn read(r: &mut Reader<'_>) -> Result<(Part, SlicesAt), CodecError> {
        let stopped = match r.u8()? {
            0 => None,
            tag => {
                let kind = match tag {
                    1 => ErrorKind::Eof,
                    2 => ErrorKind::TooDeep,
                    3 => ErrorKind::Syntax(r.string()?.into()),
                    t => return Err(CodecError(format!("bad error tag {t}"))),
                };
                Some(ParseError::new(kind, r.u64()?))
            }
        };
        let (unclosed, events, skipped, element_start) = (r.bool()?, r.u64()?, r.u64()?, r.u64()?);
        let form = match r.u8()? {
            0 => Form::Object,
            1 => Form::Array,
            f => return Err(CodecError(format!("bad form {f}"))),
        };
        let long = LongStrings { count: r.u64()?, longest: r.u64()?, first: r.opt_u64()? };
        let trailing = r.opt_u64()?.zip(r.opt_u64()?);
        let (builder, at) = Builder::decode_later(r)?;
        Ok((Part { builder, stopped, unclosed, events, skipped, element_start, form, long, trailing }, at))
    }

    /// A part that is not the last must end right after a `,` between events.
    fn ended_cleanly(&self) -> bool {
        self.stopped.is_none() && self.unclosed
    }
}

/// Merges parsed parts (in plan order) into the trace.
///
/// # Errors
/// [`LoadFailure`] when no event could be read.
pub fn assemble(json: &[u8], plan: &Plan, parts: Vec<Part>) -> Result<Trace, LoadFailure> {
    let n = parts.len();
    if n == 0 || parts.iter().take(n - 1).any(|p| !p.ended_cleanly()) {
        // A cut that was not a clean boundary: the sequential parse decides what the input is.
        let whole = Plan { form: plan.form, parts: std::iter::once(0..json.len()).collect() };
        let part = parse_part(json, &whole, 0, &mut |_| {});
        return finish(Window::whole(json), vec![part.into()], &Sequential);
    }
    finish(Window::whole(json), parts.into_iter().map(Into::into).collect(), &Sequential)
}

/// How reading ended, over all parts: the last part's ending and every part's counts.
#[derive(Default)]
struct Ending {
    stopped: Option<ParseError>,
    unclosed: bool,
    element_start: u64,
    events: u64,
    skipped: u64,
    long: LongStrings,
    trailing: Option<(u64, u64)>,
}

/// A part to join: its builder whole, or without its slice columns, which are still in the
/// encoding another worker sent ([`StreamedPart::decode_later`]), merged and freed from there.
struct Joined {
    part: Part,
    encoded: Option<(Vec<u8>, SlicesAt)>,
}

impl From<Part> for Joined {
    fn from(part: Part) -> Self {
        Joined { part, encoded: None }
    }
}

/// The trace from parsed parts, in order; `fork` runs the join's independent steps at once.
fn finish(json: Window<'_>, parts: Vec<Joined>, fork: &impl Fork) -> Result<Trace, LoadFailure> {
    let events: u64 = parts.iter().map(|p| p.part.events).sum();
    let skipped: u64 = parts.iter().map(|p| p.part.skipped).sum();
    let mut long = LongStrings::default();
    parts.iter().for_each(|p| long.combine(p.part.long));
    let mut parts = parts.into_iter();
    let Some(Joined { part: first, encoded }) = parts.next() else { return Err(fatal(json, &ParseError::eof(0))) };
    let Part { mut builder, mut stopped, mut unclosed, mut element_start, mut form, mut trailing, .. } = first;
    if let Some((bytes, at)) = encoded {
        builder.adopt_slices(at.of(&bytes));
    }
    // Each encoding is freed once merged, before the join's sort allocates its columns.
    for Joined { part: p, encoded } in parts {
        match encoded {
            Some((bytes, at)) => builder.merge_later(p.builder, at.of(&bytes), fork),
            None => builder.merge(p.builder, fork),
        }
        (stopped, unclosed, element_start, form, trailing) = (p.stopped, p.unclosed, p.element_start, p.form, p.trailing);
    }
    end(json, builder, form, Ending { stopped, unclosed, element_start, events, skipped, long, trailing }, fork)
}

/// The trace from a builder that read every event, with diagnostics for how reading ended.
fn end(json: Window<'_>, mut builder: Builder, form: Form, ending: Ending, fork: &impl Fork) -> Result<Trace, LoadFailure> {
    let Ending { stopped, unclosed, element_start, events, skipped, long, trailing } = ending;
    if let (Some(e), 0) = (&stopped, events) {
        return Err(fatal(json, e));
    }
    if skipped > 0 {
        builder.diagnostics().report(DiagKind::JsonNonObjectEvent, None, || format!("{skipped} elements"));
    }
    let LongStrings { count, longest, first } = long;
    builder.diagnostics().report_many(DiagKind::JsonStringCut, count, first, || format!("the longest is {longest} bytes"));
    if let Some((at, value_end)) = trailing {
        builder.diagnostics().report(DiagKind::JsonTrailingBytes, Some(at), || format!("the top-level value ends at byte {value_end}"));
    }
    let truncated = unclosed || stopped.is_some();
    if let Some(e) = &stopped {
        // Truncated: name where the incomplete event starts (everything before it loaded).
        // Syntax error: name the exact bad byte.
        let (kind, loc) = if e.is_eof() {
            (DiagKind::JsonTruncated, Location::within(json, element_start))
        } else {
            (DiagKind::JsonSyntaxStop, Location::within(json, e.offset()))
        };
        let what = if e.is_eof() { "incomplete event".to_string() } else { strip_offset(e) };
        builder.diagnostics().report(kind, Some(loc.offset), || format!("{what}: line {}, column {}", loc.line, loc.column));
    } else if unclosed {
        let end = json.base + json.bytes.len() as u64;
        builder.diagnostics().report(DiagKind::JsonTruncated, Some(end), || "event array not closed".into());
    }
    Ok(builder.finish_with(form, truncated, fork))
}

fn empty() -> LoadFailure {
    LoadFailure { kind: "empty", message: "the file is empty".into(), location: None }
}

fn fatal(json: Window<'_>, e: &ParseError) -> LoadFailure {
    let message = match e.kind() {
        ErrorKind::Eof => "not a complete trace: input ended".to_string(),
        _ => format!("not a valid trace: {}", strip_offset(e)),
    };
    LoadFailure { kind: "malformed", message, location: Some(Location::within(json, e.offset())) }
}

/// The error message without its trailing " at byte N" (the location says it better).
fn strip_offset(e: &ParseError) -> String {
    let text = e.to_string();
    match text.rfind(" at byte ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}
