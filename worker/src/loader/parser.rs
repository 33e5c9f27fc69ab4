//! The parse workers' messages: what the load worker sends one ([`ToParser`]) and what it
//! answers ([`FromParser`]), their JSON, and a parse worker's message read as a
//! [`ParserEvent`] (anything unreadable, or a buffer missing beside it, is a failure with words).
//!
//! Messages travel as `[json, beside?]` arrays (`crate::web::pool` posts them): part bytes as a
//! transferred buffer, a `File` or a URL string beside the JSON. Besides parts of one load, a
//! parse worker loads whole ranks of a run (`Rank`, answered `Ranked`). Both ends are the same build, so
//! there is no version handshake. Why serde here and not in the app's protocol crate: the
//! messages are internal to the worker binary and never reach the page.

use super::ParserEvent;
use crate::json::Form;
use crate::load::Piece;
use crate::run::summary::RankSummary;
use serde::{Deserialize, Serialize};

/// Name given to parse workers; the worker binary reads it to pick the role.
pub const PARSER_NAME: &str = "kinetoscope-parse";

/// From the load worker to a parse worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ToParser {
    /// Parse the transferred bytes as part `index` of load `job`.
    Parse {
        /// Load id.
        job: u32,
        /// Part index.
        index: u32,
        /// Offset of the part's first byte in the input.
        start: u64,
        /// The input is an object (`{"traceEvents": ...}`), not an array.
        object: bool,
        /// The part starts the input.
        first: bool,
    },
    /// Read bytes `start..end` of the `File` (or URL) beside this message as part `index` of
    /// load `job`, parsing them as they are read (`load::Stream::part`); or, with a buffer beside
    /// it, parse those bytes as they come: it holds the first of them, each
    /// [`ToParser::More`] the next.
    ReadPart {
        /// Load id.
        job: u32,
        /// Part index.
        index: u32,
        /// Offset of the part's first byte in the input.
        start: u64,
        /// Offset after the part's last byte.
        end: u64,
        /// The input is an object, not an array.
        object: bool,
        /// The part starts the input.
        first: bool,
    },
    /// Parse the bytes that follow in `More` messages as part `index` of load `job`, until
    /// `End` says where it ends: a part cut from a gzip as it inflates, whose end is known once
    /// the next part is cut (`load::Cutter`).
    Open {
        /// Load id.
        job: u32,
        /// Part index.
        index: u32,
        /// Offset of the part's first byte in the input.
        start: u64,
        /// The input is an object, not an array.
        object: bool,
        /// The part starts the input.
        first: bool,
    },
    /// The part `Open` started ends at byte `end` of the input: its bytes all came.
    End {
        /// Load id.
        job: u32,
        /// Part index.
        index: u32,
        /// Offset after the part's last byte.
        end: u64,
    },
    /// The next bytes of the part `ReadPart` or `Open` started, in the buffer beside this message.
    More {
        /// Load id.
        job: u32,
        /// Part index.
        index: u32,
    },
    /// Load the whole trace named `name` (the `File` or URL beside this message), file `index`
    /// of run load `job`, and answer with its run summary (`run::summary::summarize_read`).
    Rank {
        /// The run's load id.
        job: u32,
        /// File index in the run.
        index: u32,
        /// File name.
        name: String,
    },
}

/// From a parse worker to the load worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum FromParser {
    /// Booted; messages can be posted to it.
    Ready,
    /// `done` bytes of part `index` of load `job` parsed.
    Progress {
        /// Load id.
        job: u32,
        /// Part index.
        index: u32,
        /// Bytes of the part parsed.
        done: u64,
    },
    /// The encoded part is the transferred buffer beside this message; `waited_ms` is how long
    /// the parse worker waited for its file's bytes.
    Parsed {
        /// Load id.
        job: u32,
        /// Part index.
        index: u32,
        /// Ms waited for bytes.
        waited_ms: f64,
    },
    /// The part could not be parsed: `message` says why.
    Failed {
        /// Load id.
        job: u32,
        /// Part index.
        index: u32,
        /// Why.
        message: String,
    },
    /// The transferred buffer beside this message held bytes of part `index` that are now
    /// parsed: given back to be filled with the next ones.
    Spent {
        /// Load id.
        job: u32,
        /// Part index.
        index: u32,
    },
    /// File `index` of run load `job` (a `Rank`) is loaded: what the run keeps of it; its
    /// model stayed in the parse worker and is gone.
    Ranked {
        /// The run's load id.
        job: u32,
        /// File index in the run.
        index: u32,
        /// The rank's run summary.
        summary: Box<RankSummary>,
    },
}

impl ToParser {
    /// `Parse` of part `index` of load `job`, where `piece` says.
    pub fn parse(job: u32, index: u32, piece: Piece) -> Self {
        Self::Parse { job, index, start: piece.start, object: piece.form == Form::Object, first: piece.first }
    }

    /// `ReadPart` of part `index` of load `job`: bytes `piece.start..end`.
    pub fn read_part(job: u32, index: u32, piece: Piece, end: u64) -> Self {
        Self::ReadPart { job, index, start: piece.start, end, object: piece.form == Form::Object, first: piece.first }
    }

    /// `Open` of part `index` of load `job`, where `piece` says.
    pub fn open(job: u32, index: u32, piece: Piece) -> Self {
        Self::Open { job, index, start: piece.start, object: piece.form == Form::Object, first: piece.first }
    }

    /// The message's JSON, as posted.
    pub fn encode(&self) -> String {
        // Plain integers, booleans and a tag: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A message read from its JSON; `None` if it is none of these.
    pub fn decode(json: Option<&str>) -> Option<Self> {
        serde_json::from_str(json?).ok()
    }
}

impl FromParser {
    /// The message's JSON, as posted.
    pub fn encode(&self) -> String {
        // Plain data without maps of non-string keys: serializing cannot fail (a NaN float
        // becomes `null`, which the load worker then reads as a crash with the words of serde).
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The piece a `Parse` or `ReadPart` message describes.
pub fn piece(start: u64, object: bool, first: bool) -> Piece {
    Piece { start, form: if object { Form::Object } else { Form::Array }, first }
}

/// A parse worker's `[json, beside?]` message as an event: `json` its first element (if a
/// string), `beside` the buffer after it (if one), `bytes_of` copies a buffer's bytes. Anything
/// unreadable is a crash; `Parsed` or `Spent` without their buffer a failure of that part.
pub fn decode<B>(json: Option<&str>, beside: Option<B>, bytes_of: impl FnOnce(&B) -> Vec<u8>) -> ParserEvent<B> {
    let Some(json) = json else { return ParserEvent::Crashed("message without a JSON string".into()) };
    match serde_json::from_str::<FromParser>(json) {
        Ok(FromParser::Ready) => ParserEvent::Ready,
        Ok(FromParser::Progress { job, index, done }) => ParserEvent::Progress { job, index: index as usize, done },
        Ok(FromParser::Failed { job, index, message }) => ParserEvent::Failed { job, index: index as usize, message },
        Ok(FromParser::Spent { job, index }) => match beside {
            Some(buffer) => ParserEvent::Spent { job, buffer },
            None => ParserEvent::Failed { job, index: index as usize, message: "piece given back without its buffer".into() },
        },
        Ok(FromParser::Ranked { job, index, summary }) => ParserEvent::Ranked { job, index: index as usize, summary },
        Ok(FromParser::Parsed { job, index, waited_ms }) => match beside {
            Some(buffer) => ParserEvent::Parsed { job, index: index as usize, bytes: bytes_of(&buffer), waited_ms },
            None => ParserEvent::Failed { job, index: index as usize, message: "part sent without its bytes".into() },
        },
        Err(e) => ParserEvent::Crashed(format!("bad message {e}: {json:?}")),
    }
}

/// Why a parse worker died, from its `error` event's message (`None`: a plain `Event`, its
/// script could not load).
pub fn crashed(message: Option<&str>) -> String {
    message.map_or_else(|| "its script could not be loaded".into(), explain_trap)
}

/// `message` with what a bare wasm trap means: the engine aborted, which (panics being thrown
/// with their message) is almost always an allocation that failed.
pub fn explain_trap(message: &str) -> String {
    if message.contains("RuntimeError: unreachable") {
        format!("{message} (the engine aborted: most often its 4 GiB of memory ran out)")
    } else {
        message.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Event = ParserEvent<Vec<u8>>;

    fn event(json: &str, beside: Option<Vec<u8>>) -> Event {
        decode(Some(json), beside, Clone::clone)
    }

    #[test]
    fn to_parser_round_trips_with_its_piece() {
        let at = Piece { start: 7, form: Form::Object, first: true };
        let read = ToParser::read_part(3, 1, at, 99);
        assert_eq!(read.encode(), r#"{"type":"ReadPart","job":3,"index":1,"start":7,"end":99,"object":true,"first":true}"#);
        assert_eq!(ToParser::decode(Some(&read.encode())), Some(read));
        let parse = ToParser::parse(3, 2, Piece { start: 9, form: Form::Array, first: false });
        let Some(ToParser::Parse { start, object, first, .. }) = ToParser::decode(Some(&parse.encode())) else { panic!("not Parse") };
        assert_eq!(piece(start, object, first), Piece { start: 9, form: Form::Array, first: false });
        assert_eq!(piece(7, true, true), at);
        assert_eq!(ToParser::decode(Some(r#"{"type":"More","job":1,"index":4}"#)), Some(ToParser::More { job: 1, index: 4 }));
        let open = ToParser::open(5, 2, Piece { start: 11, form: Form::Object, first: false });
        assert_eq!(open.encode(), r#"{"type":"Open","job":5,"index":2,"start":11,"object":true,"first":false}"#);
        assert_eq!(ToParser::decode(Some(&open.encode())), Some(open));
        let end = ToParser::End { job: 5, index: 2, end: 40 };
        assert_eq!(ToParser::decode(Some(&end.encode())), Some(end));
        assert_eq!(ToParser::decode(Some(r#"{"type":"Other"}"#)), None);
        assert_eq!(ToParser::decode(None), None);
    }

    #[test]
    fn from_parser_messages_become_events() {
        assert!(matches!(event(&FromParser::Ready.encode(), None), Event::Ready));
        let progress = FromParser::Progress { job: 2, index: 1, done: 5 }.encode();
        assert!(matches!(event(&progress, None), Event::Progress { job: 2, index: 1, done: 5 }));
        let parsed = FromParser::Parsed { job: 2, index: 1, waited_ms: 1.5 }.encode();
        assert!(matches!(event(&parsed, Some(vec![1, 2])), Event::Parsed { job: 2, index: 1, bytes, waited_ms } if bytes == [1, 2] && waited_ms == 1.5));
        let spent = FromParser::Spent { job: 4, index: 0 }.encode();
        assert!(matches!(event(&spent, Some(vec![9])), Event::Spent { job: 4, buffer } if buffer == [9]));
        let failed = FromParser::Failed { job: 2, index: 3, message: "no".into() }.encode();
        assert!(matches!(event(&failed, None), Event::Failed { job: 2, index: 3, message } if message == "no"));
    }

    #[test]
    fn a_missing_buffer_fails_the_part_and_bad_messages_are_crashes() {
        let parsed = FromParser::Parsed { job: 2, index: 1, waited_ms: 0.0 }.encode();
        assert!(matches!(event(&parsed, None), Event::Failed { job: 2, index: 1, message } if message == "part sent without its bytes"));
        let spent = FromParser::Spent { job: 2, index: 1 }.encode();
        assert!(matches!(event(&spent, None), Event::Failed { index: 1, message, .. } if message == "piece given back without its buffer"));
        assert!(matches!(decode::<Vec<u8>>(None, None, Clone::clone), Event::Crashed(m) if m == "message without a JSON string"));
        assert!(matches!(event(r#"{"type":"Nope"}"#, None), Event::Crashed(m) if m.starts_with("bad message unknown variant `Nope`")));
    }

    #[test]
    fn a_bare_trap_is_explained() {
        assert_eq!(explain_trap("boom"), "boom");
        let trap = explain_trap("Uncaught RuntimeError: unreachable");
        assert_eq!(trap, "Uncaught RuntimeError: unreachable (the engine aborted: most often its 4 GiB of memory ran out)");
        assert_eq!(crashed(None), "its script could not be loaded");
        assert_eq!(crashed(Some("RuntimeError: unreachable executed")), explain_trap("RuntimeError: unreachable executed"));
    }
}
