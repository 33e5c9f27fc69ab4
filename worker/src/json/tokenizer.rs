//! Trace tokenizer: walks the top level of a Chrome Trace Event JSON document and yields one
//! [`RawEvent`] per element of the event array.
//!
//! Input: the whole (decompressed) document, or a slice of its event array cut at event
//! boundaries ([`Tokenizer::events_only`]). Output: borrowed events; times already converted to
//! integer nanoseconds (µs text -> ns, exact for up to 3 decimals, rounded beyond).
//!
//! Both top-level forms are accepted: `{"traceEvents": [...], ...}` with the events array at any
//! key position, and the bare array `[...]`. Leniency (written decisions, each with a fixture):
//! the closing `]` (and `}`) may be missing, as the Trace Event format allows; a trailing comma
//! before `]` is accepted; array elements that are not objects are skipped and counted.
//! Bytes after the top-level value are not read; [`Tokenizer::trailing`] says where the first
//! one that is not whitespace is, for a diagnostic. Strings longer than
//! [`super::long::MAX_STRING_BYTES`] are cut and counted ([`Tokenizer::long_strings`]).
//!
//! Cost: one pass over the bytes; `args` are scanned one level deep for the few keys the model
//! links on, and their minified text is written from the tokens read (no second pass over the
//! span).

use super::error::ParseError;
use super::args_text::ArgsText;
use super::long::LongStrings;
use super::scan::{is_number_byte, Cursor, JStr, Sink};

/// The document's top-level shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `{"traceEvents": [...], ...}`
    Object,
    /// `[...]`
    Array,
}

/// Top-level keys other than `traceEvents`, as raw JSON values.
#[derive(Clone, Debug, Default)]
pub struct TopLevel<'a> {
    /// `(key, raw value bytes)` in input order.
    pub fields: Vec<(JStr<'a>, &'a [u8])>,
}

/// One trace event as read from the input; absent keys are `None`.
#[derive(Clone, Debug, Default)]
pub struct RawEvent<'a> {
    /// Absolute offset of the event's `{`.
    pub offset: u64,
    /// `ph`.
    pub ph: Option<JStr<'a>>,
    /// `name`.
    pub name: Option<JStr<'a>>,
    /// `cat`.
    pub cat: Option<JStr<'a>>,
    /// `ts` in ns (µs in the file).
    pub ts_ns: Option<i64>,
    /// `dur` in ns.
    pub dur_ns: Option<i64>,
    /// `pid` as text (number text or string content).
    pub pid: Option<&'a [u8]>,
    /// `tid` as text.
    pub tid: Option<&'a [u8]>,
    /// `id` as text (flows, async events).
    pub id: Option<&'a [u8]>,
    /// `bp` (flow binding point).
    pub bp: Option<JStr<'a>>,
    /// `s` (instant scope).
    pub scope: Option<JStr<'a>>,
    /// The raw `args` object, braces included.
    pub args: Option<&'a [u8]>,
    /// `args` minified (no whitespace outside strings), written as it is read: the text the
    /// model stores. Holds the last args read; meaningful when `args` is `Some`.
    pub args_text: ArgsText,
    /// `args.correlation`.
    pub correlation: Option<i64>,
    /// `args["External id"]` (2021 traces: `external id`).
    pub external_id: Option<i64>,
    /// `args.name` (metadata events).
    pub arg_name: Option<JStr<'a>>,
    /// `args.sort_index` (metadata events).
    pub arg_sort_index: Option<i64>,
    /// `args.labels` (metadata events).
    pub arg_labels: Option<JStr<'a>>,
    /// A `ts` or `dur` was present but not a number.
    pub bad_time: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Inside the events array, before an element or the closing bracket.
    InEvents { first: bool },
    /// After the events array, in the object form: more keys may follow.
    AfterEvents,
    /// Nothing more to read.
    Done,
}

/// Where reading can resume after the last complete element, for input that arrives in
/// pieces ([`Tokenizer::resume`] over bytes starting at [`Checkpoint::offset`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Absolute offset of the first byte not consumed.
    pub offset: u64,
    /// Non-object elements this tokenizer skipped before it.
    pub skipped: u64,
    /// Strings this tokenizer cut before it.
    pub long: LongStrings,
    state: State,
}

impl Checkpoint {
    /// At `offset`, an element boundary of the events array (right after a `,`): where a part
    /// cut by `input::split` or `load::cut` starts.
    pub fn events_at(offset: u64) -> Self {
        Self { offset, skipped: 0, long: LongStrings::default(), state: State::InEvents { first: true } }
    }
}

/// Reads events one by one; see the module docs.
pub struct Tokenizer<'a> {
    cur: Cursor<'a>,
    state: State,
    form: Form,
    top: TopLevel<'a>,
    /// Elements of the event array that were not objects.
    pub skipped_elements: u64,
    /// The events array was not closed (input ended first).
    pub unclosed: bool,
    events: u64,
    /// Absolute offset where the element being read (or the next one) starts.
    element_start: u64,
    checkpoint: Checkpoint,
    /// Where the top-level value ended, once its closing bracket was read.
    closed_at: Option<u64>,
}

impl<'a> Tokenizer<'a> {
    /// Starts reading a whole document: finds the events array.
    ///
    /// # Errors
    /// Syntax error if the document is neither form; EOF if it ends before the events array.
    pub fn new(buf: &'a [u8], base: u64) -> Result<Self, ParseError> {
        let mut t = Self {
            cur: Cursor::new(buf, base),
            state: State::Done,
            form: Form::Array,
            top: TopLevel::default(),
            skipped_elements: 0,
            unclosed: false,
            events: 0,
            element_start: 0,
            checkpoint: Checkpoint { offset: base, skipped: 0, long: LongStrings::default(), state: State::Done },
            closed_at: None,
        };
        if buf.starts_with(b"\xEF\xBB\xBF") {
            t.cur.pos = 3;
        }
        match t.cur.peek_nonws() {
            Some(b'[') => {
                t.cur.pos += 1;
                t.state = State::InEvents { first: true };
            }
            Some(b'{') => {
                t.cur.pos += 1;
                t.form = Form::Object;
                t.find_events_key(true)?;
            }
            None => return Err(t.cur.eof()),
            Some(_) => return Err(t.cur.err("not a trace: expected '{' or '['")),
        }
        t.mark();
        Ok(t)
    }

    /// Resumes reading a document of form `form` at `at`, a checkpoint of an earlier
    /// tokenizer over a prefix of the same input; `buf` holds the input from `at.offset` on.
    /// Reading a longer prefix from a checkpoint gives what reading the whole input would.
    pub fn resume(buf: &'a [u8], at: Checkpoint, form: Form) -> Self {
        Self {
            cur: Cursor::new(buf, at.offset),
            state: at.state,
            form,
            top: TopLevel::default(),
            skipped_elements: 0,
            unclosed: false,
            events: 0,
            element_start: at.offset,
            checkpoint: Checkpoint { skipped: 0, long: LongStrings::default(), ..at },
            closed_at: None,
        }
    }

    /// Reads a slice of the events array of a document of form `form` that starts at an
    /// element boundary (right after a `,`), as made by `input::split`. A slice that is not the
    /// last ends right after a `,` (reported as `unclosed`); the last one reads on past `]`.
    pub fn events_only(buf: &'a [u8], base: u64, form: Form) -> Self {
        Self::resume(buf, Checkpoint::events_at(base), form)
    }

    /// The last point reading can resume from: after the last complete event or skipped
    /// element, or after the events array (the keys that follow it are read again).
    pub fn checkpoint(&self) -> Checkpoint {
        self.checkpoint
    }

    fn mark(&mut self) {
        self.checkpoint = Checkpoint { offset: self.cur.abs(self.cur.pos), skipped: self.skipped_elements, long: self.cur.long, state: self.state };
    }

    /// Absolute offset where the last element read (or being read) starts: after an EOF
    /// error, where the complete part of the input ends.
    pub fn element_start(&self) -> u64 {
        self.element_start
    }

    /// Events returned so far.
    pub fn events_read(&self) -> u64 {
        self.events
    }

    /// Strings cut so far.
    pub fn long_strings(&self) -> LongStrings {
        self.cur.long
    }

    /// Where the top-level value ended (past its closing bracket), once it has.
    pub fn closed_at(&self) -> Option<u64> {
        self.closed_at
    }

    /// Absolute offset of the first byte after the top-level value that is not whitespace, if
    /// the value ended and such a byte is in the bytes read.
    pub fn trailing(&self) -> Option<u64> {
        let end = usize::try_from(self.closed_at? - self.cur.base).ok()?;
        let rest = self.cur.buf.get(end..)?;
        rest.iter().position(|b| !b.is_ascii_whitespace()).map(|p| self.cur.abs(end + p))
    }

    /// The document's form.
    pub fn form(&self) -> Form {
        self.form
    }

    /// Top-level keys read so far (all of them once [`Self::next_event`] returned `None`).
    pub fn top_level(&self) -> &TopLevel<'a> {
        &self.top
    }

    /// Absolute offset of the next unread byte.
    pub fn offset(&self) -> u64 {
        self.cur.abs(self.cur.pos)
    }

    /// Reads the next event into `ev`; false at the end of the document. The caller's one event
    /// is filled in place: returned by value, each event (some 350 bytes) was copied out twice.
    ///
    /// # Errors
    /// EOF inside an event (truncated file; every earlier event is complete), or a syntax error.
    pub fn next_event(&mut self, ev: &mut RawEvent<'a>) -> Result<bool, ParseError> {
        loop {
            match self.state {
                State::Done => return Ok(false),
                State::AfterEvents => {
                    self.find_events_key(false)?;
                }
                State::InEvents { first } => {
                    let Some(b) = self.cur.peek_nonws() else {
                        // The format allows a missing closing bracket; input arriving in
                        // pieces may also go on from here.
                        self.mark();
                        self.unclosed = true;
                        self.state = State::Done;
                        return Ok(false);
                    };
                    if b == b']' {
                        self.cur.pos += 1;
                        self.end_of_events();
                        self.mark();
                        continue;
                    }
                    if !first {
                        if b != b',' {
                            return Err(self.cur.err("expected ',' or ']' between events"));
                        }
                        self.cur.pos += 1;
                        // Next an element, or the closing bracket (a trailing comma is tolerated).
                        self.state = State::InEvents { first: true };
                        continue;
                    }
                    self.state = State::InEvents { first: false };
                    self.element_start = self.cur.abs(self.cur.pos);
                    if b == b'{' {
                        self.event(ev)?;
                        self.events += 1;
                        self.mark();
                        return Ok(true);
                    }
                    self.cur.skip_value()?;
                    self.skipped_elements += 1;
                    // A number that runs to the end of the bytes may go on in the next piece.
                    if self.cur.pos < self.cur.buf.len() {
                        self.mark();
                    }
                }
            }
        }
    }

    fn end_of_events(&mut self) {
        self.state = if self.form == Form::Object { State::AfterEvents } else { State::Done };
        if self.state == State::Done {
            self.closed_at = Some(self.offset());
        }
    }

    /// Reads top-level object keys until `traceEvents` (then enters the array) or the end.
    fn find_events_key(&mut self, first: bool) -> Result<(), ParseError> {
        let mut first = first;
        loop {
            match self.cur.peek_nonws() {
                None => {
                    // Ended after the events array without the closing brace: fine.
                    if self.state == State::AfterEvents {
                        self.unclosed = true;
                        self.state = State::Done;
                        return Ok(());
                    }
                    return Err(self.cur.eof());
                }
                Some(b'}') => {
                    if self.state != State::AfterEvents {
                        return Err(self.cur.err("not a trace: no \"traceEvents\" array"));
                    }
                    self.cur.pos += 1;
                    self.state = State::Done;
                    self.closed_at = Some(self.offset());
                    return Ok(());
                }
                Some(b',') if !first => self.cur.pos += 1,
                Some(_) if !first => return Err(self.cur.err("expected ',' or '}' after a value")),
                Some(_) => {}
            }
            first = false;
            if self.cur.peek_nonws() != Some(b'"') {
                return Err(self.cur.err("expected an object key"));
            }
            let key = self.cur.string()?;
            self.cur.expect(b':', "expected ':' after an object key")?;
            if key.raw == b"traceEvents" && self.state != State::AfterEvents {
                self.cur.expect(b'[', "\"traceEvents\" must be an array")?;
                self.state = State::InEvents { first: true };
                self.mark();
                return Ok(());
            }
            self.cur.peek_nonws();
            let start = self.cur.pos;
            self.cur.skip_value()?;
            self.top.fields.push((key, &self.cur.buf[start..self.cur.pos]));
        }
    }

    /// Reads one event object; the cursor is on its `{`.
    fn event(&mut self, ev: &mut RawEvent<'a>) -> Result<(), ParseError> {
        // The args text's buffer is kept from event to event.
        let args_text = std::mem::take(&mut ev.args_text);
        *ev = RawEvent { offset: self.cur.abs(self.cur.pos), args_text, ..RawEvent::default() };
        self.cur.pos += 1;
        if self.cur.peek_nonws() == Some(b'}') {
            self.cur.pos += 1;
            return Ok(());
        }
        loop {
            let key = self.key(event_key, EventKey::of, &mut ())?;
            match key {
                EventKey::Ph => ev.ph = self.opt_string(&mut ())?,
                EventKey::Name => ev.name = self.opt_string(&mut ())?,
                EventKey::Cat => ev.cat = self.opt_string(&mut ())?,
                EventKey::Ts => ev.ts_ns = self.time(&mut ev.bad_time)?,
                EventKey::Dur => ev.dur_ns = self.time(&mut ev.bad_time)?,
                EventKey::Pid => ev.pid = self.id_text()?,
                EventKey::Tid => ev.tid = self.id_text()?,
                EventKey::Id => ev.id = self.id_text()?,
                EventKey::Bp => ev.bp = self.opt_string(&mut ())?,
                EventKey::S => ev.scope = self.opt_string(&mut ())?,
                EventKey::Args if self.cur.buf.get(self.cur.pos) == Some(&b'{') => self.args(ev)?,
                EventKey::Args | EventKey::Other => self.cur.skip_value()?,
            }
            match self.cur.peek_nonws() {
                Some(b',') => self.cur.pos += 1,
                Some(b'}') => {
                    self.cur.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.cur.err("expected ',' or '}' in an event")),
            }
        }
    }

    /// Reads `"key":` and the whitespace after it (telling `out` where it skips whitespace):
    /// the key `fast` reads at once from the 16 bytes at the quote, else the one `of` names
    /// from the string's text.
    ///
    /// # Errors
    /// Syntax error when no key or colon is there; EOF if the input ends first.
    #[inline]
    fn key<K>(&mut self, fast: fn([u64; 2]) -> Option<(K, usize)>, of: fn(&[u8]) -> K, out: &mut impl Sink) -> Result<K, ParseError> {
        if self.cur.peek_into(out) != Some(b'"') {
            return Err(self.cur.err("expected an object key"));
        }
        let key = match head(self.cur.buf.get(self.cur.pos..self.cur.pos + 16)).and_then(fast) {
            Some((key, len)) => {
                self.cur.pos += len;
                key
            }
            None => {
                let key = self.cur.string_into(out)?;
                self.cur.expect_into(b':', "expected ':' after an object key", out)?;
                of(key.raw)
            }
        };
        self.cur.peek_into(out);
        Ok(key)
    }

    /// A string value, or `None` (value skipped, `out` told of its whitespace) for other types.
    fn opt_string(&mut self, out: &mut impl Sink) -> Result<Option<JStr<'a>>, ParseError> {
        if self.cur.buf.get(self.cur.pos) == Some(&b'"') {
            return self.cur.string_into(out).map(Some);
        }
        self.cur.copy_value(out)?;
        Ok(None)
    }

    /// A number or string id as text; other types are skipped.
    fn id_text(&mut self) -> Result<Option<&'a [u8]>, ParseError> {
        match self.cur.buf.get(self.cur.pos) {
            Some(b'"') => Ok(Some(self.cur.string()?.raw)),
            Some(b'-' | b'0'..=b'9') => Ok(Some(self.cur.number()?)),
            _ => {
                self.cur.skip_value()?;
                Ok(None)
            }
        }
    }

    /// A time in µs (number, or a string holding one) converted to ns.
    fn time(&mut self, bad: &mut bool) -> Result<Option<i64>, ParseError> {
        if let Some((ns, len)) = self.cur.buf.get(self.cur.pos..).and_then(plain_micros) {
            self.cur.pos += len;
            return Ok(Some(ns));
        }
        let text = match self.cur.buf.get(self.cur.pos) {
            Some(b'-' | b'0'..=b'9') => self.cur.number()?,
            Some(b'"') => self.cur.string()?.raw,
            _ => {
                self.cur.skip_value()?;
                *bad = true;
                return Ok(None);
            }
        };
        let ns = micros_to_ns(text);
        *bad |= ns.is_none();
        Ok(ns)
    }

    /// Scans `args` one level deep for the keys the model links on; keeps the raw span and
    /// copies its minified text (`RawEvent::args_text`) as it reads.
    fn args(&mut self, ev: &mut RawEvent<'a>) -> Result<(), ParseError> {
        let start = self.cur.pos;
        let text = &mut ev.args_text;
        text.start(start);
        self.cur.pos += 1;
        if self.cur.peek_into(text) != Some(b'}') {
            loop {
                match self.key(args_key, ArgKey::of, text)? {
                    ArgKey::Correlation => ev.correlation = self.int(text)?,
                    ArgKey::ExternalId => ev.external_id = self.int(text)?,
                    ArgKey::Name => ev.arg_name = self.opt_string(text)?,
                    ArgKey::SortIndex => ev.arg_sort_index = self.int(text)?,
                    ArgKey::Labels => ev.arg_labels = self.opt_string(text)?,
                    ArgKey::Other => self.cur.copy_value(text)?,
                }
                match self.cur.peek_into(text) {
                    Some(b',') => self.cur.pos += 1,
                    Some(b'}') => break,
                    _ => return Err(self.cur.err("expected ',' or '}' in args")),
                }
            }
        }
        self.cur.pos += 1;
        text.end(self.cur.buf, self.cur.pos);
        ev.args = Some(&self.cur.buf[start..self.cur.pos]);
        Ok(())
    }

    /// An integer value (a number without fraction); other values are skipped (`out` told of
    /// their whitespace).
    fn int(&mut self, out: &mut impl Sink) -> Result<Option<i64>, ParseError> {
        if matches!(self.cur.buf.get(self.cur.pos), Some(b'-' | b'0'..=b'9')) {
            return Ok(parse_i64(self.cur.number()?));
        }
        self.cur.copy_value(out)?;
        Ok(None)
    }
}

/// The event keys the model reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EventKey {
    Ph,
    Name,
    Cat,
    Ts,
    Dur,
    Pid,
    Tid,
    Id,
    Bp,
    S,
    Args,
    Other,
}

impl EventKey {
    /// The key a string's raw bytes name (escapes not decoded: an escaped key is no key here).
    fn of(raw: &[u8]) -> Self {
        match raw {
            b"ph" => Self::Ph,
            b"name" => Self::Name,
            b"cat" => Self::Cat,
            b"ts" => Self::Ts,
            b"dur" => Self::Dur,
            b"pid" => Self::Pid,
            b"tid" => Self::Tid,
            b"id" => Self::Id,
            b"bp" => Self::Bp,
            b"s" => Self::S,
            b"args" => Self::Args,
            _ => Self::Other,
        }
    }
}

/// The `args` keys the model links on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgKey {
    Correlation,
    ExternalId,
    Name,
    SortIndex,
    Labels,
    Other,
}

impl ArgKey {
    /// The key a string's raw bytes name (see [`EventKey::of`]).
    fn of(raw: &[u8]) -> Self {
        match raw {
            b"correlation" => Self::Correlation,
            b"External id" | b"external id" => Self::ExternalId,
            b"name" => Self::Name,
            b"sort_index" => Self::SortIndex,
            b"labels" => Self::Labels,
            _ => Self::Other,
        }
    }
}

/// A key spelled `"key":` (up to 16 bytes), as two little-endian words with the masks of its
/// length, and that length.
#[derive(Clone, Copy)]
struct Spelled<K> {
    key: K,
    words: [u64; 2],
    masks: [u64; 2],
    len: usize,
}

const fn spelled<K: Copy>(key: K, text: &[u8]) -> Spelled<K> {
    let mut words = [0u64; 2];
    let mut masks = [0u64; 2];
    let mut i = 0;
    while i < text.len() {
        words[i / 8] |= (text[i] as u64) << (8 * (i % 8));
        masks[i / 8] |= 0xFF << (8 * (i % 8));
        i += 1;
    }
    Spelled { key, words, masks, len: text.len() }
}

/// The 16 bytes from a key's opening quote as two little-endian words, if there are as many.
#[inline]
fn head(bytes: Option<&[u8]>) -> Option<[u64; 2]> {
    let bytes = bytes?;
    Some([u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?), u64::from_le_bytes(bytes.get(8..16)?.try_into().ok()?)])
}

/// Which of `candidates` `head` starts with, and its length: one compare per candidate instead
/// of a string scan, a `:` search and a match on the text.
#[inline]
fn spelled_at<K: Copy>(head: [u64; 2], candidates: &[Spelled<K>]) -> Option<(K, usize)> {
    candidates.iter().find(|c| head[0] & c.masks[0] == c.words[0] && head[1] & c.masks[1] == c.words[1]).map(|c| (c.key, c.len))
}

/// The event key `head` starts with when it is one of [`EventKey`]'s written `"key":`, as trace
/// writers write them, and how many bytes that is; any other spelling (a space before the
/// colon, an escape, another key) is left to the general path, which reads the same key.
#[inline]
fn event_key(head: [u64; 2]) -> Option<(EventKey, usize)> {
    match (head[0] >> 8) as u8 {
        b'p' => spelled_at(head, const { &[spelled(EventKey::Ph, b"\"ph\":"), spelled(EventKey::Pid, b"\"pid\":")] }),
        b'n' => spelled_at(head, const { &[spelled(EventKey::Name, b"\"name\":")] }),
        b'c' => spelled_at(head, const { &[spelled(EventKey::Cat, b"\"cat\":")] }),
        b't' => spelled_at(head, const { &[spelled(EventKey::Ts, b"\"ts\":"), spelled(EventKey::Tid, b"\"tid\":")] }),
        b'd' => spelled_at(head, const { &[spelled(EventKey::Dur, b"\"dur\":")] }),
        b'a' => spelled_at(head, const { &[spelled(EventKey::Args, b"\"args\":")] }),
        b'i' => spelled_at(head, const { &[spelled(EventKey::Id, b"\"id\":")] }),
        b'b' => spelled_at(head, const { &[spelled(EventKey::Bp, b"\"bp\":")] }),
        b's' => spelled_at(head, const { &[spelled(EventKey::S, b"\"s\":")] }),
        _ => None,
    }
}

/// The `args` key `head` starts with when it is one of the six Kineto writes most (the dlrm
/// trace: 5.5 keys per event), those the model links on and those it skips, and how many bytes
/// that is; others go the general way, as in [`event_key`].
#[inline]
fn args_key(head: [u64; 2]) -> Option<(ArgKey, usize)> {
    match (head[0] >> 8) as u8 {
        b'E' => spelled_at(head, const { &[spelled(ArgKey::ExternalId, b"\"External id\":"), spelled(ArgKey::Other, b"\"Ev Idx\":")] }),
        b'I' => spelled_at(head, const { &[spelled(ArgKey::Other, b"\"Input Dims\":"), spelled(ArgKey::Other, b"\"Input type\":")] }),
        b'c' => spelled_at(head, const { &[spelled(ArgKey::Correlation, b"\"correlation\":"), spelled(ArgKey::Other, b"\"cbid\":")] }),
        _ => None,
    }
}

/// The integer in `text` as `str::parse::<i64>` reads it (optional sign, digits only, no
/// overflow), without the UTF-8 check and the generic parser.
fn parse_i64(text: &[u8]) -> Option<i64> {
    let (neg, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        let d = i64::from(b - b'0');
        v = if neg { digit_down(v, d)? } else { digit_up(v, d)? };
    }
    Some(v)
}

/// Largest magnitude to which a decimal digit can be appended without overflow.
const SAFE_FOR_DIGIT: i64 = (i64::MAX - 9) / 10;

/// `v * 10 + d`, `None` on overflow. The bound test comes first because a checked 64-bit
/// multiply is a call to a 128-bit multiply in wasm32, and nearly every number passes it.
#[inline]
fn digit_up(v: i64, d: i64) -> Option<i64> {
    if v <= SAFE_FOR_DIGIT {
        Some(v * 10 + d)
    } else {
        v.checked_mul(10)?.checked_add(d)
    }
}

/// `v * 10 - d` for a negative number, `None` on overflow (see [`digit_up`]).
#[inline]
fn digit_down(v: i64, d: i64) -> Option<i64> {
    if v >= -SAFE_FOR_DIGIT {
        Some(v * 10 - d)
    } else {
        v.checked_mul(10)?.checked_sub(d)
    }
}

/// Converts decimal microseconds text to integer nanoseconds.
///
/// Exact for up to three decimals; further digits round half up; exponents go through f64.
/// Returns `None` for text that is not a number or out of range.
pub fn micros_to_ns(text: &[u8]) -> Option<i64> {
    let (ns, len) = decimal_micros(text)?;
    if len != text.len() {
        return exponent_form(text);
    }
    ns
}

/// The time at the start of `text` when it is a decimal number (no exponent) followed by a
/// byte that is not a number's (a number at the end of the bytes may go on in the next piece):
/// its ns and its length, read in one pass, equal to [`micros_to_ns`] of the number's text.
/// `None` for any other number, read the general way.
#[inline]
fn plain_micros(text: &[u8]) -> Option<(i64, usize)> {
    let (ns, len) = decimal_micros(text)?;
    if is_number_byte(*text.get(len)?) {
        return None;
    }
    Some((ns?, len))
}

/// The decimal number at the start of `text` (an optional `-`, digits, an optional fraction),
/// as [`micros_to_ns`] reads it, and its length. `None` without digits, with a `.` and no digit
/// after it, or when the integer part overflows; the ns are `None` when only they overflow.
/// Always inlined: it is most of the time reader, on every event's `ts` and `dur`.
#[inline(always)]
fn decimal_micros(text: &[u8]) -> Option<(Option<i64>, usize)> {
    let (neg, sign) = if text.first() == Some(&b'-') { (true, 1) } else { (false, 0) };
    let digits = text.get(sign..)?;
    let (int, mut i) = leading_digits(digits)?;
    if i == 0 {
        return None;
    }
    let mut frac_ns: i64 = 0;
    if digits.get(i) == Some(&b'.') {
        i += 1;
        let mut scale = 100;
        let mut round = false;
        let start = i;
        while let Some(&b) = digits.get(i) {
            if !b.is_ascii_digit() {
                break;
            }
            let d = i64::from(b - b'0');
            if scale > 0 {
                frac_ns += d * scale;
                scale /= 10;
            } else if i == start + 3 {
                round = d >= 5;
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        frac_ns += i64::from(round);
    }
    // `frac_ns` is at most 1000 (999 and a rounding), so below the bound nothing overflows.
    let ns = if int <= (i64::MAX - 1000) / 1000 { Some(int * 1000 + frac_ns) } else { int.checked_mul(1000).and_then(|n| n.checked_add(frac_ns)) };
    Some((ns.map(|ns| if neg { -ns } else { ns }), sign + i))
}

/// The leading ASCII digits of `text` as a number, and how many there are; `None` when the
/// number does not fit in an `i64`. Eight digits at a time while they last: a `ts` has 16.
#[inline]
fn leading_digits(text: &[u8]) -> Option<(i64, usize)> {
    let mut v: i64 = 0;
    let mut i = 0;
    while let Some(eight) = text.get(i..i + 8).and_then(eight_digits) {
        v = if v <= (i64::MAX - 99_999_999) / 100_000_000 { v * 100_000_000 + eight } else { v.checked_mul(100_000_000)?.checked_add(eight)? };
        i += 8;
    }
    while let Some(&b) = text.get(i) {
        if !b.is_ascii_digit() {
            break;
        }
        v = digit_up(v, i64::from(b - b'0'))?;
        i += 1;
    }
    Some((v, i))
}

/// The value of eight ASCII digits (first digit most significant), or `None` if any byte is
/// not a digit: one `u64`, three multiplies (Lemire, "Fast float parsing in practice", 2021;
/// simdjson's `parse_eight_digits_unrolled`).
#[inline]
fn eight_digits(chunk: &[u8]) -> Option<i64> {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(chunk);
    let w = u64::from_le_bytes(bytes);
    // Every byte is 0x30..=0x39: high nibble 3, and adding 6 keeps it 3 (no byte can carry
    // into the next unless it is >= 0xFA, which fails by itself).
    let high = 0xF0F0_F0F0_F0F0_F0F0;
    if (w & high) | ((w.wrapping_add(0x0606_0606_0606_0606) & high) >> 4) != 0x3333_3333_3333_3333 {
        return None;
    }
    let v = (w & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561) >> 8;
    let v = (v & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
    let v = (v & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32;
    // Below 10^8: fits.
    Some(v as i64)
}

/// Slow path for numbers with an exponent.
#[cold]
fn exponent_form(text: &[u8]) -> Option<i64> {
    let v: f64 = std::str::from_utf8(text).ok()?.parse().ok()?;
    let ns = (v * 1000.0).round();
    (ns.is_finite() && ns.abs() < 9.2e18).then_some(ns as i64)
}

#[cfg(test)]
mod tests {
    use super::{args_key, event_key, head, micros_to_ns, parse_i64, plain_micros, ArgKey, EventKey};

    #[test]
    fn event_keys_read_at_once_are_the_keys_the_text_names() {
        for key in ["ph", "name", "cat", "ts", "dur", "pid", "tid", "id", "bp", "s", "args"] {
            let text = format!("\"{key}\":123456789012");
            let read = head(text.as_bytes().get(..16)).and_then(event_key);
            assert_eq!(read, Some((EventKey::of(key.as_bytes()), key.len() + 3)), "{key}");
            assert_ne!(EventKey::of(key.as_bytes()), EventKey::Other, "{key}");
        }
        // Other spellings and near misses go the general way.
        for text in ["\"phase\":123456789", "\"ph\" :1234567890", "\"p\":123456789012", "\"tids\":123456789", "\"args\"\n:{\"a\": 12", "\"t\\u0073\":1234567", "\"x\":1234567890123"] {
            assert!(text.len() >= 16, "{text}");
            assert_eq!(head(text.as_bytes().get(..16)).and_then(event_key), None, "{text}");
        }
        assert_eq!(head(b"\"ph\":\"X\"}".get(..16)), None, "fewer than 16 bytes");
    }

    #[test]
    fn args_keys_read_at_once_are_the_keys_the_text_names() {
        for key in ["External id", "Ev Idx", "Input Dims", "Input type", "correlation", "cbid"] {
            let text = format!("\"{key}\": 1234567890123");
            assert_eq!(head(text.as_bytes().get(..16)).and_then(args_key), Some((ArgKey::of(key.as_bytes()), key.len() + 3)), "{key}");
        }
        for text in ["\"External ids\": 12", "\"External id\" : 1", "\"external id\": 123", "\"corr\": 1234567890", "\"Input\": 1234567890", "\"name\": \"abcdefgh\""] {
            assert!(text.len() >= 16, "{text}");
            assert_eq!(head(text.as_bytes().get(..16)).and_then(args_key), None, "{text}");
        }
    }

    #[test]
    fn integers_parse_like_str_parse() {
        for t in ["0", "-0", "+7", "42", "-9223372036854775808", "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1.5", "1e3", "-", "+", "", "12-3", "007"] {
            assert_eq!(parse_i64(t.as_bytes()), t.parse::<i64>().ok(), "{t:?}");
        }
    }

    #[test]
    fn micros_text_to_ns() {
        assert_eq!(micros_to_ns(b"0"), Some(0));
        assert_eq!(micros_to_ns(b"12"), Some(12_000));
        assert_eq!(micros_to_ns(b"4808593492335.120"), Some(4_808_593_492_335_120));
        assert_eq!(micros_to_ns(b"1.5"), Some(1_500));
        assert_eq!(micros_to_ns(b"1.0004"), Some(1_000));
        assert_eq!(micros_to_ns(b"1.0005"), Some(1_001));
        assert_eq!(micros_to_ns(b"-2.25"), Some(-2_250));
        assert_eq!(micros_to_ns(b"1e3"), Some(1_000_000));
        assert_eq!(micros_to_ns(b"abc"), None);
        assert_eq!(micros_to_ns(b"1."), None);
        // At the edge of the unchecked fast path and of i64 itself.
        assert_eq!(micros_to_ns(b"9223372036854775.807"), Some(i64::MAX));
        assert_eq!(micros_to_ns(b"9223372036854775.808"), None);
        assert_eq!(micros_to_ns(b"9223372036854774.9995"), Some(9_223_372_036_854_775_000));
        assert_eq!(micros_to_ns(b"9223372036854774.807"), Some(i64::MAX - 1000));
    }

    #[test]
    fn plain_micros_read_in_one_pass_are_micros_to_ns() {
        let numbers = ["0", "7", "12", "1694128201435418", "1694128201435418.5", "4808593492335.120", "1.25", "1.0005", "1.", "1e3", "1.5e2", "-3", "99999999999999999999", "9223372036854775.807", "12.3456"];
        for number in numbers {
            for after in [",", "}", " ", "\n", "", "0", "e"] {
                let text = format!("{number}{after}");
                let Some((ns, len)) = plain_micros(text.as_bytes()) else { continue };
                assert_eq!(&text[..len], number, "{text:?}");
                assert_eq!(Some(ns), micros_to_ns(number.as_bytes()), "{text:?}");
                assert!(!after.is_empty() && !after.starts_with(|c: char| c.is_ascii_digit() || c == 'e'), "{text:?}");
            }
        }
        assert_eq!(plain_micros(b"1694128201435418.123,"), Some((1_694_128_201_435_418_123, 20)));
        assert_eq!(plain_micros(b"12.3456,"), Some((12_346, 7)), "a fourth decimal rounds, as in micros_to_ns");
        assert_eq!(plain_micros(b"-2.25}"), Some((-2_250, 5)));
        assert_eq!(plain_micros(b"1.5e2,"), None, "an exponent: the general path");
    }

    #[test]
    fn long_integral_micros_match_wide_arithmetic() {
        // Every length around the eight-digit steps, digits from a fixed pseudo-random walk,
        // including values whose ns overflow an i64.
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        for len in 1..=21 {
            for _ in 0..200 {
                let text: String = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        char::from(b'0' + (state % 10) as u8)
                    })
                    .collect();
                let wide: Option<i64> = text.parse::<i128>().ok().and_then(|v| i64::try_from(v * 1000).ok());
                assert_eq!(micros_to_ns(text.as_bytes()), wide, "{text}");
                let frac = format!("{text}.25");
                assert_eq!(micros_to_ns(frac.as_bytes()), wide.and_then(|w| w.checked_add(250)), "{frac}");
            }
        }
        assert_eq!(micros_to_ns(b"12345678x"), None);
        assert_eq!(micros_to_ns(b"1234567:9"), None);
    }
}
