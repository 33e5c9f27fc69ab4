//! An event's `args` object as the model stores it: its text without whitespace outside
//! strings, copied while the tokenizer reads it, so the span is never walked a second time.
//!
//! The tokenizer tells where it skips whitespace ([`Sink::gap`]); the runs of bytes between
//! the gaps are the text. Kineto writes about two runs per args member (`"External id":` and
//! `1025,`), so the copy is a few short moves per event. The buffer is reused from event to
//! event and kept at its longest, so that a short run is one 32-byte move with no growth check
//! of its own. A long string's rest is left out as whitespace is (`long.rs`).

use std::ops::Range;

use super::long::MAX_STRING_BYTES;
use super::scan::{Cursor, Sink};

/// The JSON value `value` as a top-level key's value is kept: as it is if it is no longer
/// than a string may be, else minified with its long strings cut, as args are.
pub fn bounded_value(value: &[u8]) -> Vec<u8> {
    if value.len() <= MAX_STRING_BYTES {
        return value.to_vec();
    }
    let mut cur = Cursor::new(value, 0);
    let mut text = ArgsText::default();
    text.start(0);
    match cur.copy_value(&mut text) {
        Ok(()) => {
            text.end(value, cur.pos);
            text.as_bytes().to_vec()
        }
        // The tokenizer read it as one value; were it not one, its start is all there is to keep.
        Err(_) => value.get(..MAX_STRING_BYTES).unwrap_or_default().to_vec(),
    }
}

/// The minified text of the last `args` object read; see the module docs.
#[derive(Clone, Debug, Default)]
pub struct ArgsText {
    buf: Vec<u8>,
    len: usize,
    /// Where the run being read started in the source.
    run: usize,
}

impl ArgsText {
    /// The text of the last object read.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// Starts a new text at `at` in the source (the object's `{`).
    pub(super) fn start(&mut self, at: usize) {
        self.len = 0;
        self.run = at;
    }

    /// Ends the text at `at` in `src` (past the object's `}`).
    pub(super) fn end(&mut self, src: &[u8], at: usize) {
        self.copy(src, self.run..at);
    }

    /// Appends `src[range]`: a run of at most 32 bytes is one 32-byte move (the bytes past
    /// it are overwritten by the next run), when the source and the buffer have 32 there.
    #[inline(always)]
    fn copy(&mut self, src: &[u8], range: Range<usize>) {
        let (at, n, to) = (range.start, range.len(), self.len);
        if n <= 32 {
            if let (Some(from), Some(dst)) = (src.get(at..at + 32), self.buf.get_mut(to..to + 32)) {
                dst.copy_from_slice(from);
                self.len += n;
                return;
            }
        }
        self.copy_exactly(src, range);
    }

    /// [`Self::copy`] for long runs, runs at the source's end, and a buffer to grow.
    #[inline(never)]
    fn copy_exactly(&mut self, src: &[u8], range: Range<usize>) {
        let (n, to) = (range.len(), self.len);
        if to + n + 32 > self.buf.len() {
            self.buf.resize((to + n + 32).max(2 * self.buf.len()).max(256), 0);
        }
        if let (Some(from), Some(dst)) = (src.get(range), self.buf.get_mut(to..to + n)) {
            dst.copy_from_slice(from);
        }
        self.len += n;
    }
}

impl Sink for ArgsText {
    #[inline(always)]
    fn gap(&mut self, src: &[u8], gap: Range<usize>) {
        self.copy(src, self.run..gap.start);
        self.run = gap.end;
    }
}
