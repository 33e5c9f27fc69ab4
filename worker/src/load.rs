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

use crate::diag::DiagKind;
use crate::input::split::split;
use crate::json::{ErrorKind, Form, Location, ParseError, Tokenizer};
use crate::model::builder::Builder;
use crate::model::Trace;
use std::ops::Range;

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
        return Err(LoadFailure { kind: "empty", message: "the file is empty".into(), location: None });
    }
    let tokens = Tokenizer::new(json, 0).map_err(|e| fatal(json, &e))?;
    let form = tokens.form();
    Ok(Plan { form, parts: split(json, tokens.offset() as usize, form, parts) })
}

/// Parses part `index` of `plan`; `progress(json_bytes_done)` every few MB.
pub fn parse_part(json: &[u8], plan: &Plan, index: usize, progress: &mut dyn FnMut(u64)) -> Part {
    let range = plan.parts.get(index).cloned().unwrap_or(0..0);
    let (mut builder, tokens) = if index == 0 {
        match Tokenizer::new(&json[range], 0) {
            Ok(t) => (Builder::new(), t),
            Err(e) => return Part::failed(e, plan.form),
        }
    } else {
        let start = range.start;
        (Builder::for_later_part(), Tokenizer::events_only(&json[range], start as u64, plan.form))
    };
    let mut tokens = tokens;
    let mut next_report = PROGRESS_STEP;
    let mut stopped = None;
    loop {
        match tokens.next_event() {
            Ok(Some(ev)) => {
                builder.add(&ev);
                if ev.offset >= next_report {
                    progress(ev.offset);
                    next_report = ev.offset + PROGRESS_STEP;
                }
            }
            Ok(None) => break,
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
    }
}

impl Part {
    fn failed(e: ParseError, form: Form) -> Self {
        Part { builder: Builder::new(), stopped: Some(e), unclosed: false, events: 0, skipped: 0, element_start: 0, form }
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
        return finish(json, vec![part]);
    }
    finish(json, parts)
}

fn finish(json: &[u8], parts: Vec<Part>) -> Result<Trace, LoadFailure> {
    let events: u64 = parts.iter().map(|p| p.events).sum();
    let skipped: u64 = parts.iter().map(|p| p.skipped).sum();
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else { return Err(fatal(json, &ParseError::eof(0))) };
    let Part { mut builder, mut stopped, mut unclosed, mut element_start, mut form, .. } = first;
    for p in parts {
        builder.merge(p.builder);
        (stopped, unclosed, element_start, form) = (p.stopped, p.unclosed, p.element_start, p.form);
    }
    if let (Some(e), 0) = (&stopped, events) {
        return Err(fatal(json, e));
    }
    if skipped > 0 {
        builder.diagnostics().report(DiagKind::JsonNonObjectEvent, None, || format!("{skipped} elements"));
    }
    let truncated = unclosed || stopped.is_some();
    if let Some(e) = &stopped {
        // Truncated: name where the incomplete event starts (everything before it loaded).
        // Syntax error: name the exact bad byte.
        let (kind, loc) = if e.is_eof() {
            (DiagKind::JsonTruncated, Location::of(json, element_start))
        } else {
            (DiagKind::JsonSyntaxStop, e.locate(json))
        };
        let what = if e.is_eof() { "incomplete event".to_string() } else { strip_offset(e) };
        builder.diagnostics().report(kind, Some(loc.offset), || format!("{what}: line {}, column {}", loc.line, loc.column));
    } else if unclosed {
        let end = json.len() as u64;
        builder.diagnostics().report(DiagKind::JsonTruncated, Some(end), || "event array not closed".into());
    }
    Ok(builder.finish(form, truncated))
}

fn fatal(json: &[u8], e: &ParseError) -> LoadFailure {
    let message = match e.kind() {
        ErrorKind::Eof => "not a complete trace: input ended".to_string(),
        _ => format!("not a valid trace: {}", strip_offset(e)),
    };
    LoadFailure { kind: "malformed", message, location: Some(e.locate(json)) }
}

/// The error message without its trailing " at byte N" (the location says it better).
fn strip_offset(e: &ParseError) -> String {
    let text = e.to_string();
    match text.rfind(" at byte ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}
