//! JSON stage: trace bytes -> [`RawEvent`]s, with byte offsets for every problem.
//!
//! The tokenizer reads only what the model needs from each event (`ph`, `name`, `cat`, `ts`,
//! `dur`, `pid`, `tid`, `id`, `bp`, `s` and a few args such as `correlation`) and keeps `args`
//! as a byte span, decoded later on demand. It borrows from the input: no per-event allocation.
//!
//! Errors carry an absolute byte offset; line, column and an excerpt are computed from it only
//! when a message is built ([`ParseError::locate`]).

mod error;
mod minify;
mod scan;
mod search;
mod tokenizer;

pub use error::{ErrorKind, Location, ParseError, Window};
pub use minify::minify_into;
pub use scan::{unescape, Cursor, JStr, StringTracker};
pub use tokenizer::{Checkpoint, Form, RawEvent, Tokenizer, TopLevel};
