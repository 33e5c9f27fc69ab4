//! JSON stage: trace bytes -> [`RawEvent`]s, with byte offsets for every problem.
//!
//! The tokenizer reads only what the model needs from each event (`ph`, `name`, `cat`, `ts`,
//! `dur`, `pid`, `tid`, `id`, `bp`, `s` and a few args such as `correlation`) and writes `args`
//! minified as it reads them ([`ArgsText`]), decoded later on demand. Events borrow from the
//! input: no per-event allocation.
//!
//! Strings are kept at most [`long::MAX_STRING_BYTES`] long, cut and counted (`long.rs`).
//!
//! Errors carry an absolute byte offset; line, column and an excerpt are computed from it only
//! when a message is built ([`ParseError::locate`]).

mod args_text;
mod error;
pub mod long;
mod scan;
mod search;
mod tokenizer;

pub use args_text::{bounded_value, ArgsText};
pub use error::{ErrorKind, Gap, Location, ParseError, Window};
pub use long::LongStrings;
pub use scan::{unescape, Cursor, JStr, Sink, StringTracker};
pub use tokenizer::{Checkpoint, Form, RawEvent, Tokenizer, TopLevel};
