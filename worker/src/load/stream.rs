//! Streaming load: JSON that arrives in pieces (a download, a file read in slices, a gzip
//! inflating) -> the same [`Trace`] as [`super::parse`] of all of it, while holding only the
//! bytes not yet read: the event cut by the end of the last piece, never the whole text.
//!
//! How: each read runs the tokenizer over the bytes held and feeds one builder; when the bytes
//! run out inside an event, or where more may follow (after a comma, after the events array),
//! the tokenizer's [`Checkpoint`] says where to go on, and the bytes before it are let go.
//! Reading a longer prefix from a checkpoint gives what reading the whole input gives
//! (`json::tokenizer`), so the result never depends on where the pieces were cut
//! (tests/stream.rs cuts every real fixture at many sizes and compares fingerprints).
//!
//! Cost: each byte is read once, except the cut event's, read again with the next piece. A
//! read that gets nowhere (one event or a head larger than what is held) waits for twice the
//! bytes before trying again, so a huge element costs O(n), not O(n²). A long string in it is
//! cut before it is held (`clip.rs`): what is held stays the element with its strings cut (and
//! the piece being read), whatever a string's length.
//!
//! After the top-level value, the bytes that follow are only looked at for one that is not
//! whitespace (the diagnostic `json_trailing_bytes`); none is held.

use super::clip::{Clip, CHECK_AFTER};
use super::{empty, end, Ending, LoadFailure, Part, Piece};
use crate::codec::{CodecError, Reader as CodecReader, Writer};
use crate::json::{Checkpoint, Form, Gap, LongStrings, ParseError, RawEvent, Tokenizer, Window};
use crate::model::builder::{Builder, SlicesAt};
use crate::model::Trace;

/// Bytes held before a read, by default: reads of 1 MiB make the re-read cut event negligible.
const READ_EVERY: usize = 1 << 20;

/// Bytes a stream told its size ([`Stream::expecting`]) reads before it estimates its slices.
const ESTIMATE_AFTER: u64 = 16 << 20;

/// Fewest bytes [`Stream::fill_from`] asks its source for: a stream reading every few bytes
/// would otherwise read its source a few bytes at a time.
const MIN_FILL: usize = 64 << 10;

/// UTF-8 byte-order mark, which the tokenizer skips at the start.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Bytes of input kept after a syntax error, for the message's excerpt.
const EXCERPT: u64 = 24;

/// Bytes [`Stream::fill_from`] reads at a time after the top-level value, looking for one that
/// is not whitespace.
const AFTER_END: usize = 4 << 10;

/// `Reader::line_start` of a part that has not yet seen a newline: its line starts in an
/// earlier part.
const LINE_UNSEEN: u64 = u64::MAX;

/// A load fed piece by piece; see the module docs.
pub struct Stream {
    read: Reader,
    /// Bytes not read yet, from absolute offset `read.base`.
    held: Vec<u8>,
    /// Bytes that must be held before reading again.
    want: usize,
    /// `want` after a read that got somewhere.
    every: usize,
    /// Some byte that is not whitespace arrived.
    any: bool,
    /// Bytes received, those after the document's end included.
    received: u64,
    /// Bytes of input whose slices the model will hold ([`Stream::expecting`]), until its
    /// columns are reserved for them.
    expect: Option<u64>,
}

/// One part of a cut document read to its end ([`Stream::finish_part`]): the parsed part and
/// what locating a diagnostic in it needs (the bytes it still holds, and its lines).
pub struct StreamedPart {
    pub(super) part: Part,
    pub(super) held: Vec<u8>,
    /// Absolute offset of `held`'s first byte.
    pub(super) base: u64,
    /// Input let go between the bytes held (the rest of a long string).
    pub(super) gaps: Vec<Gap>,
    /// Newlines this part read before `base`.
    pub(super) lines_before: u64,
    /// Where the line holding `base` starts, if it starts in this part.
    pub(super) line_start: Option<u64>,
    /// Some byte that is not whitespace arrived.
    pub(super) any: bool,
}

/// First word of an encoded [`StreamedPart`] ("KSP" little-endian, version 1 in the high byte).
const STREAMED_MAGIC: u32 = u32::from_le_bytes(*b"KSP\x01");

impl StreamedPart {
    /// The part as packed bytes, to send from the worker that read it to the one that joins
    /// ([`crate::codec`]; the parsed part as `Part::encode` packs it).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(self.part.builder.encoded_size_hint() + self.held.len() + 64);
        w.u32(STREAMED_MAGIC);
        w.u64(self.base);
        w.u64(self.lines_before);
        w.opt_u64(self.line_start);
        w.bool(self.any);
        w.bytes(&self.held);
        w.len(self.gaps.len());
        for g in &self.gaps {
            w.u64(g.at);
            w.u64(g.len);
            w.u64(g.newlines);
            w.opt_u64(g.line_start);
        }
        self.part.write(&mut w);
        w.into_bytes()
    }

    /// Reads a part written by [`StreamedPart::encode`].
    ///
    /// # Errors
    /// When `bytes` is not a complete, consistent encoding.
    pub fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let (mut part, at) = Self::read(bytes)?;
        part.part.builder.adopt_slices(at.of(bytes));
        Ok(part)
    }

    /// Reads a part written by [`StreamedPart::encode`] but its slice columns, which stay in
    /// `bytes` (checked) for the join to append straight from there.
    ///
    /// # Errors
    /// When `bytes` is not a complete, consistent encoding.
    pub fn decode_later(bytes: Vec<u8>) -> Result<Arrived, CodecError> {
        let (part, at) = Self::read(&bytes)?;
        Ok(Arrived { part, encoded: Some((bytes, at)) })
    }

    /// The part in `bytes` but its slice columns, and where they lie.
    fn read(bytes: &[u8]) -> Result<(Self, SlicesAt), CodecError> {
        let mut r = CodecReader::new(bytes);
        if r.u32()? != STREAMED_MAGIC {
            return Err(CodecError("not a streamed part encoding (bad magic)".into()));
        }
        let (base, lines_before, line_start, any) = (r.u64()?, r.u64()?, r.opt_u64()?, r.bool()?);
        let held = r.bytes()?.to_vec();
        let gaps = (0..r.count(25)?)
            .map(|_| Ok(Gap { at: r.u64()?, len: r.u64()?, newlines: r.u64()?, line_start: r.opt_u64()? }))
            .collect::<Result<_, CodecError>>()?;
        let (part, at) = Part::read(&mut r)?;
        if !r.at_end() {
            return Err(CodecError("trailing bytes after the streamed part".into()));
        }
        Ok((Self { part, held, base, gaps, lines_before, line_start, any }, at))
    }
}

/// A part for `load::join`: read here, or decoded from another worker's encoding but its
/// slice columns, which the join appends straight from those bytes and then frees
/// ([`StreamedPart::decode_later`]).
pub struct Arrived {
    pub(super) part: StreamedPart,
    pub(super) encoded: Option<(Vec<u8>, SlicesAt)>,
}

impl From<StreamedPart> for Arrived {
    fn from(part: StreamedPart) -> Self {
        Arrived { part, encoded: None }
    }
}

/// What reading has built and where it stands.
struct Reader {
    builder: Builder,
    /// Where to go on; `None` until the document's head (up to the events array) was read.
    at: Option<Checkpoint>,
    form: Form,
    base: u64,
    /// Newlines before `base`, and where the line holding `base` starts.
    lines_before: u64,
    line_start: u64,
    /// Events and skipped elements so far, and how reading ended once it has.
    ending: Ending,
    /// Reading ended (the document closed, or a syntax error); later bytes are not read.
    ended: bool,
    /// Where the top-level value ended, once it has.
    closed_at: Option<u64>,
    /// Long strings cut in the bytes held, and the gaps they left.
    clip: Clip,
}

impl Default for Stream {
    fn default() -> Self {
        Self::new()
    }
}

impl Stream {
    /// An empty load that reads every 1 MiB.
    pub fn new() -> Self {
        Self::reading_every(READ_EVERY)
    }

    /// An empty load that reads once `bytes` more are held (at least 1).
    pub fn reading_every(bytes: usize) -> Self {
        let every = bytes.max(1);
        let read = Reader {
            builder: Builder::new(),
            at: None,
            form: Form::Array,
            base: 0,
            lines_before: 0,
            line_start: 0,
            ending: Ending::default(),
            ended: false,
            closed_at: None,
            clip: Clip::default(),
        };
        Self { read, held: Vec::new(), want: every, every, any: false, received: 0, expect: None }
    }

    /// A load of one part of a document cut at event boundaries (`load::cut`), fed only that
    /// part's bytes and ended by [`Stream::finish_part`]; `load::join` merges the parts.
    pub fn part(piece: Piece) -> Self {
        let mut stream = Self::new();
        if !piece.first {
            let read = &mut stream.read;
            read.builder = Builder::for_later_part();
            read.at = Some(Checkpoint::events_at(piece.start));
            read.form = piece.form;
            read.base = piece.start;
            read.line_start = LINE_UNSEEN;
        }
        stream
    }

    /// This stream's model will hold the slices of `bytes` of input (its own, or a whole file
    /// whose other parts are joined into it): once [`ESTIMATE_AFTER`] bytes are read, its slice
    /// columns are reserved for as many as that rate gives. In wasm a growing column is copied at
    /// each doubling, and a join appending the other parts copied the first part's columns once
    /// more; the page's parts are sized before they are read.
    #[must_use]
    pub fn expecting(mut self, bytes: u64) -> Self {
        self.expect = Some(bytes);
        self
    }

    /// Reserves the slice columns once enough was read to estimate them ([`Stream::expecting`]).
    fn reserve_if_due(&mut self) {
        let Some(bytes) = self.expect.filter(|_| self.received >= ESTIMATE_AFTER) else { return };
        self.expect = None;
        let per_byte = self.read.builder.slice_count() as f64 / self.received as f64;
        // A little over the rate, and never more than a slice per 32 bytes (no slice's event is
        // shorter).
        let total = (per_byte * bytes as f64 * 1.05) as u64;
        self.read.builder.reserve_slices(usize::try_from(total.min(bytes / 32)).unwrap_or(usize::MAX));
    }

    /// Ends a part's input ([`Stream::part`]): what it read, for `load::join`.
    pub fn finish_part(mut self) -> StreamedPart {
        if !self.read.ended {
            self.read.read(&self.held, true);
        }
        let r = self.read;
        let e = r.ending;
        let part = Part {
            builder: r.builder,
            stopped: e.stopped,
            unclosed: e.unclosed,
            events: e.events,
            skipped: e.skipped,
            element_start: e.element_start,
            form: r.form,
            long: e.long,
            trailing: e.trailing,
        };
        let line_start = (r.line_start != LINE_UNSEEN).then_some(r.line_start);
        let gaps = r.clip.gaps().to_vec();
        StreamedPart { part, held: self.held, base: r.base, gaps, lines_before: r.lines_before, line_start, any: self.any }
    }

    /// Bytes received so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.read.ending.events
    }

    /// Approximate heap bytes held: the model being built and the bytes not read yet.
    pub fn heap_bytes(&self) -> usize {
        self.read.builder.heap_bytes() + self.held.capacity()
    }

    /// Takes the next piece of the input.
    pub fn push(&mut self, bytes: &[u8]) {
        let at = self.received;
        self.received += bytes.len() as u64;
        if !self.any {
            self.any = bytes.iter().any(|b| !b.is_ascii_whitespace());
        }
        if self.read.ended {
            self.read.look_after_end(bytes, at);
            self.keep_excerpt(bytes);
            return;
        }
        let bytes = &bytes[self.read.clip.arrived(bytes)..];
        // Read straight from the piece when nothing is held: only its cut tail is copied.
        if self.held.is_empty() && bytes.len() >= self.want {
            let used = self.read.read(bytes, false);
            self.held.extend_from_slice(&bytes[used..]);
            self.after_read(used);
            return;
        }
        self.held.extend_from_slice(bytes);
        self.read_held_if_due();
    }

    /// Reads the next piece from `source` straight into the bytes held, then reads as
    /// [`Stream::push`] does; returns how many bytes came: 0 at `source`'s end, or once reading
    /// has ended (the document closed, or a syntax error whose excerpt is now held), since no
    /// later byte is needed. Unlike a `push` of a caller's buffer, nothing is copied but the cut
    /// event's tail, and the piece is parsed while it is still in cache.
    ///
    /// # Errors
    /// What `source` returned.
    pub fn fill_from(&mut self, source: &mut dyn std::io::Read) -> std::io::Result<usize> {
        if self.read.ended {
            let mut after = [0; AFTER_END];
            let want = if self.read.looking_after_end() { AFTER_END } else { self.excerpt_missing().min(EXCERPT as usize) };
            let got = if want == 0 { 0 } else { source.read(&mut after[..want])? };
            self.push(&after[..got]);
            return Ok(got);
        }
        let start = self.held.len();
        let want = self.want.saturating_sub(start).max(MIN_FILL);
        // Zeroing the room costs a write of what is about to be read, in cache; `read_to_end`
        // would not zero it, but it grows its reads from a few bytes: 16 reads for the first MiB.
        self.held.resize(start + want, 0);
        let (mut got, mut failed) = (0, None);
        while got < want {
            match source.read(&mut self.held[start + got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        self.held.truncate(start + got);
        self.received += got as u64;
        if !self.any {
            self.any = self.held[start..].iter().any(|b| !b.is_ascii_whitespace());
        }
        let gone = self.read.clip.arrived(&self.held[start..]);
        self.held.drain(start..start + gone);
        if let Some(e) = failed {
            return Err(e);
        }
        if got > 0 {
            self.read_held_if_due();
        }
        Ok(got)
    }

    /// Reads the bytes held once there are enough, and lets go of what was read.
    fn read_held_if_due(&mut self) {
        if self.held.len() >= self.want {
            let used = self.read.read(&self.held, false);
            self.held.drain(..used);
            self.after_read(used);
        }
    }

    /// Ends the input: reads what is held as the input's end and builds the trace.
    ///
    /// # Errors
    /// [`LoadFailure`] when no event could be read.
    pub fn finish(mut self) -> Result<Trace, LoadFailure> {
        if !self.any {
            return Err(empty());
        }
        if !self.read.ended {
            self.read.read(&self.held, true);
        }
        let r = self.read;
        let window = Window { bytes: &self.held, base: r.base, lines_before: r.lines_before, line_start: r.line_start, gaps: r.clip.gaps() };
        end(window, r.builder, r.form, r.ending, &crate::fork::Sequential)
    }

    /// After a read that used `used` bytes: cut the long strings of what is left if it is
    /// long ([`Clip::check`]); wait for more before the next read when it got nowhere (the
    /// element or head being read is larger than what is held); reserve the columns once due
    /// ([`Stream::expecting`]).
    fn after_read(&mut self, used: usize) {
        if !self.read.ended && self.held.len() > CHECK_AFTER {
            self.read.clip.check(&mut self.held, self.read.base);
        }
        self.want = if used == 0 && !self.read.ended { self.held.len().saturating_mul(2).max(self.every) } else { self.every };
        self.reserve_if_due();
    }

    /// After a syntax error, keeps the bytes its excerpt shows.
    fn keep_excerpt(&mut self, bytes: &[u8]) {
        let take = self.excerpt_missing().min(bytes.len());
        self.held.extend_from_slice(&bytes[..take]);
    }

    /// Bytes the syntax error's excerpt still lacks (0 when reading did not stop on one).
    fn excerpt_missing(&self) -> usize {
        let Some(e) = &self.read.ending.stopped else { return 0 };
        let need = (e.offset() + EXCERPT).saturating_sub(self.read.base + self.held.len() as u64);
        usize::try_from(need).unwrap_or(usize::MAX)
    }
}

/// A stream is written to: what a gzip inflates to goes straight into the parse.
impl std::io::Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.push(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Reader {
    /// Reads events from `buf` (the input from `self.base` on) into the builder; returns how
    /// many bytes of it were used and can be let go. `last`: `buf` ends the input.
    fn read(&mut self, buf: &[u8], last: bool) -> usize {
        let (mut tokens, head) = match self.at {
            Some(at) => (Tokenizer::resume(buf, at, self.form), 0),
            // A byte-order mark cut short is not yet a wrong first byte.
            None if !last && buf.len() < BOM.len() && BOM.starts_with(buf) => return 0,
            None => match Tokenizer::new(buf, self.base) {
                Ok(t) => {
                    self.form = t.form();
                    // Keys before the events array, in input order, once.
                    for (key, raw) in &t.top_level().fields {
                        self.builder.top_level(*key, raw);
                    }
                    let head = t.top_level().fields.len();
                    (t, head)
                }
                Err(e) if e.is_eof() && !last => return 0,
                Err(e) => {
                    self.stop(Some(e));
                    return 0;
                }
            },
        };
        let mut ev = RawEvent::default();
        loop {
            match tokens.next_event(&mut ev) {
                Ok(true) => {
                    if !self.clip.gaps().is_empty() {
                        ev.offset = self.clip.original(ev.offset);
                    }
                    self.builder.add(&ev);
                    self.ending.events += 1;
                }
                Ok(false) if tokens.unclosed && !last => break,
                Ok(false) => {
                    for (key, raw) in tokens.top_level().fields.iter().skip(head) {
                        self.builder.top_level(*key, raw);
                    }
                    self.ending.unclosed = tokens.unclosed;
                    return self.ended(&tokens, None);
                }
                Err(e) if e.is_eof() && !last => break,
                Err(e) => return self.ended(&tokens, Some(e)),
            }
        }
        let mut at = tokens.checkpoint();
        self.ending.skipped += at.skipped;
        self.count_long(at.long);
        self.ending.element_start = self.clip.original(tokens.element_start());
        let used = usize::try_from(at.offset - self.base).unwrap_or(0).min(buf.len());
        self.let_go(&buf[..used]);
        at.offset = self.base;
        self.at = Some(at);
        used
    }

    /// Reading ended with `tokens` (at the input's end, the document's close, or an error);
    /// everything is kept, for the diagnostics' locations.
    fn ended(&mut self, tokens: &Tokenizer<'_>, stopped: Option<ParseError>) -> usize {
        self.ending.skipped += tokens.skipped_elements;
        self.count_long(tokens.long_strings());
        self.ending.element_start = self.clip.original(tokens.element_start());
        self.closed_at = tokens.closed_at().map(|at| self.clip.original(at));
        self.ending.trailing = tokens.trailing().map(|at| self.clip.original(at)).zip(self.closed_at);
        self.stop(stopped);
        0
    }

    /// Reading ended, at error `stopped` if any; the strings cut before where it ended count.
    fn stop(&mut self, stopped: Option<ParseError>) {
        self.ending.stopped = stopped.map(|e| ParseError::new(e.kind().clone(), self.clip.original(e.offset())));
        let reached = self.ending.stopped.as_ref().map(ParseError::offset).or(self.closed_at).unwrap_or(u64::MAX);
        let long = self.clip.read_past(reached);
        self.ending.long.combine(long);
        self.ended = true;
    }

    /// Adds strings a tokenizer cut (at its offsets) to the count.
    fn count_long(&mut self, mut long: LongStrings) {
        long.first = long.first.map(|at| self.clip.original(at));
        self.ending.long.combine(long);
    }

    /// Counts the lines of `gone` (read, no longer held, and the gaps among it) and moves the
    /// base past it.
    fn let_go(&mut self, gone: &[u8]) {
        let lines = memchr::memchr_iter(b'\n', gone).count() as u64;
        let after_newline = memchr::memrchr(b'\n', gone).map(|last| self.clip.original(self.base + last as u64 + 1));
        let (next, gap_lines, gap_line_start) = self.clip.used(gone.len(), self.base);
        let long = self.clip.read_past(next);
        self.ending.long.combine(long);
        if let Some(start) = after_newline.max(gap_line_start) {
            self.line_start = start;
        }
        self.lines_before += lines + gap_lines;
        self.base = next;
    }

    /// Reading ended at the top-level value's end and no byte after it but whitespace was seen.
    fn looking_after_end(&self) -> bool {
        self.closed_at.is_some() && self.ending.trailing.is_none()
    }

    /// Looks at `bytes`, arriving at offset `at` after reading ended, for the first byte after
    /// the top-level value that is not whitespace.
    fn look_after_end(&mut self, bytes: &[u8], at: u64) {
        if !self.looking_after_end() {
            return;
        }
        if let Some(p) = bytes.iter().position(|b| !b.is_ascii_whitespace()) {
            self.ending.trailing = Some(at + p as u64).zip(self.closed_at);
        }
    }
}
