//! Load driver: JSON bytes -> [`Trace`], deciding what is fatal and what is a diagnostic.
//!
//! Fatal (returned as [`LoadFailure`]): empty input, input that is not a trace, or a syntax
//! error before the first event. After at least one event, a syntax error or the end of input
//! stops reading and is reported as a diagnostic with its offset; every complete event before
//! it is kept (a truncated file is not a broken one).

use crate::diag::DiagKind;
use crate::json::{ErrorKind, Location, ParseError, Tokenizer};
use crate::model::builder::Builder;
use crate::model::Trace;

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

/// Parses a whole document; `progress(json_bytes_done)` is called every few MB.
///
/// # Errors
/// [`LoadFailure`] when no event could be read (see the module docs).
pub fn parse(json: &[u8], progress: &mut dyn FnMut(u64)) -> Result<Trace, LoadFailure> {
    if json.iter().all(u8::is_ascii_whitespace) {
        return Err(LoadFailure { kind: "empty", message: "the file is empty".into(), location: None });
    }
    let fatal = |e: ParseError| {
        let message = match e.kind() {
            ErrorKind::Eof => "not a complete trace: input ended".to_string(),
            _ => format!("not a valid trace: {}", strip_offset(&e)),
        };
        LoadFailure { kind: "malformed", message, location: Some(e.locate(json)) }
    };
    let mut tokens = Tokenizer::new(json, 0).map_err(fatal)?;
    let mut builder = Builder::new();
    let mut next_report = PROGRESS_STEP;
    let mut stopped: Option<ParseError> = None;
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
            Err(e) if tokens.events_read() == 0 => return Err(fatal(e)),
            Err(e) => {
                stopped = Some(e);
                break;
            }
        }
    }
    if tokens.skipped_elements > 0 {
        let n = tokens.skipped_elements;
        builder.diagnostics().report(DiagKind::JsonNonObjectEvent, None, || format!("{n} elements"));
    }
    for (key, raw) in &tokens.top_level().fields {
        builder.top_level(*key, raw);
    }
    let truncated = tokens.unclosed || stopped.is_some();
    if let Some(e) = &stopped {
        // Truncated: name where the incomplete event starts (everything before it loaded).
        // Syntax error: name the exact bad byte.
        let (kind, loc) = if e.is_eof() {
            (DiagKind::JsonTruncated, Location::of(json, tokens.element_start()))
        } else {
            (DiagKind::JsonSyntaxStop, e.locate(json))
        };
        let what = if e.is_eof() { "incomplete event".to_string() } else { strip_offset(e) };
        builder.diagnostics().report(kind, Some(loc.offset), || format!("{what}: line {}, column {}", loc.line, loc.column));
    } else if tokens.unclosed {
        let end = json.len() as u64;
        builder.diagnostics().report(DiagKind::JsonTruncated, Some(end), || "event array not closed".into());
    }
    progress(json.len() as u64);
    Ok(builder.finish(tokens.form(), truncated))
}

/// The error message without its trailing " at byte N" (the location says it better).
fn strip_offset(e: &ParseError) -> String {
    let text = e.to_string();
    match text.rfind(" at byte ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}
