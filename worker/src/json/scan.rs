//! Byte-level JSON scanning: whitespace, strings, numbers, skipping whole values.
//!
//! A [`Cursor`] walks a byte slice; offsets it reports are absolute (`base` + position) so a
//! slice of a larger file reports positions in that file. Strings are returned as raw byte
//! spans ([`JStr`]) plus a flag telling whether they contain escapes; [`unescape`] decodes them
//! when needed (rare in traces).
//!
//! Leniency (written decisions): raw control characters inside strings are accepted, because
//! real Kineto traces carry them in names (docs/definitions.md §1); a `NaN`/`Infinity`
//! literal is not.
//!
//! A string longer than [`MAX_STRING_BYTES`] is returned cut ([`super::long`]) and counted in
//! [`Cursor::long`].

use std::ops::Range;

use super::error::ParseError;
use super::long::{cut_len, LongStrings, MAX_STRING_BYTES};
use super::search;

/// Maximum nesting of skipped values (serde_json uses the same limit).
pub const MAX_DEPTH: u32 = 128;

/// The bytes a JSON number's text is made of, as a table: one load per byte instead of a chain
/// of range tests (numbers are most of a trace's tokens).
const NUMBER_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = b'0';
    while b <= b'9' {
        table[b as usize] = true;
        b += 1;
    }
    table[b'-' as usize] = true;
    table[b'+' as usize] = true;
    table[b'.' as usize] = true;
    table[b'e' as usize] = true;
    table[b'E' as usize] = true;
    table
};

/// True for a byte a JSON number's text may hold.
#[inline]
pub(super) fn is_number_byte(b: u8) -> bool {
    NUMBER_BYTES[usize::from(b)]
}

/// A JSON string as it appears in the input, without the quotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JStr<'a> {
    /// Bytes between the quotes, escapes not decoded.
    pub raw: &'a [u8],
    /// True when `raw` contains a backslash escape.
    pub escaped: bool,
}

/// Decodes JSON escapes in `s`; invalid escapes and lone surrogates become U+FFFD.
pub fn unescape(s: JStr<'_>) -> String {
    if !s.escaped {
        return String::from_utf8_lossy(s.raw).into_owned();
    }
    let mut out: Vec<u8> = Vec::with_capacity(s.raw.len());
    let raw = s.raw;
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b != b'\\' || i + 1 >= raw.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let e = raw[i + 1];
        i += 2;
        let simple = match e {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'/' => Some(b'/'),
            b'b' => Some(8),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            continue;
        }
        if e != b'u' {
            out.extend_from_slice("\u{FFFD}".as_bytes());
            continue;
        }
        let (c, used) = decode_u_escape(&raw[i..]);
        i += used;
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Decodes the hex digits after `\u` (and a following low surrogate); returns the char and
/// how many bytes of `rest` it used.
fn decode_u_escape(rest: &[u8]) -> (char, usize) {
    let hex4 = |b: &[u8]| -> Option<u32> {
        let s = std::str::from_utf8(b.get(..4)?).ok()?;
        u32::from_str_radix(s, 16).ok()
    };
    let Some(hi) = hex4(rest) else { return ('\u{FFFD}', 0) };
    if (0xD800..0xDC00).contains(&hi) && rest.get(4..6) == Some(b"\\u") {
        if let Some(lo) = rest.get(6..).and_then(hex4).filter(|lo| (0xDC00..0xE000).contains(lo)) {
            let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
            return (char::from_u32(c).unwrap_or('\u{FFFD}'), 10);
        }
    }
    (char::from_u32(hi).unwrap_or('\u{FFFD}'), 4)
}

/// Tells, byte by byte, whether a walk over raw JSON text is outside strings: the one place
/// that knows how quotes and escapes nest, for code that scans raw args without parsing them.
#[derive(Clone, Copy, Debug, Default)]
pub struct StringTracker {
    /// Inside a string (its opening quote seen, not its closing one).
    pub(super) in_string: bool,
    /// The previous byte was a backslash inside a string.
    pub(super) escape: bool,
}

impl StringTracker {
    /// Feeds the next byte; true when it is structural (outside strings and not a quote).
    #[inline]
    pub fn outside(&mut self, b: u8) -> bool {
        if self.in_string {
            if self.escape {
                self.escape = false;
            } else if b == b'\\' {
                self.escape = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            return false;
        }
        if b == b'"' {
            self.in_string = true;
            return false;
        }
        true
    }
}

/// Told where [`Cursor::copy_value`] skips whitespace outside strings, or the rest of a long
/// string: what lies between two such gaps is the value's text minified and cut.
pub trait Sink {
    /// Bytes at `gap` in `src` that are not the value's text.
    fn gap(&mut self, src: &[u8], gap: Range<usize>);
}

/// Skipping: the gaps concern no one.
impl Sink for () {
    #[inline(always)]
    fn gap(&mut self, _: &[u8], _: Range<usize>) {}
}

/// A position in a byte slice that knows its absolute offset.
pub struct Cursor<'a> {
    /// The bytes being read.
    pub buf: &'a [u8],
    /// Current position; always `<= buf.len()`.
    pub pos: usize,
    /// Absolute offset of `buf[0]` in the whole input.
    pub base: u64,
    /// Strings read so far that were cut.
    pub long: LongStrings,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`, which begins at absolute offset `base`.
    pub fn new(buf: &'a [u8], base: u64) -> Self {
        Self { buf, pos: 0, base, long: LongStrings::default() }
    }

    /// Absolute offset of position `pos`.
    #[inline]
    pub fn abs(&self, pos: usize) -> u64 {
        self.base + pos as u64
    }

    /// Error: end of input at the current position.
    #[cold]
    pub fn eof(&self) -> ParseError {
        ParseError::eof(self.abs(self.pos))
    }

    /// Error: syntax problem at the current position (end of input if there is none).
    #[cold]
    pub fn err(&self, msg: &'static str) -> ParseError {
        if self.pos >= self.buf.len() {
            return self.eof();
        }
        ParseError::syntax(msg, self.abs(self.pos))
    }

    /// Skips whitespace; returns the next byte without consuming it.
    #[inline]
    pub fn peek_nonws(&mut self) -> Option<u8> {
        // Runs are mostly empty or one space (after `,` and `:`): bytes one by one first, where
        // a branch is cheaper than a vector's setup; longer runs (indentation) 16 at a time.
        for _ in 0..2 {
            let b = *self.buf.get(self.pos)?;
            if !search::is_ws(b) {
                return Some(b);
            }
            self.pos += 1;
        }
        self.pos = search::non_ws(self.buf, self.pos);
        self.buf.get(self.pos).copied()
    }

    /// [`Self::peek_nonws`], telling `out` of the whitespace it skipped.
    #[inline(always)]
    pub fn peek_into(&mut self, out: &mut impl Sink) -> Option<u8> {
        let at = self.pos;
        let b = self.peek_nonws();
        if self.pos != at {
            out.gap(self.buf, at..self.pos);
        }
        b
    }

    /// Skips whitespace and consumes `want`.
    ///
    /// # Errors
    /// Syntax error `msg` if the next byte is another one, EOF if none.
    #[inline]
    pub fn expect(&mut self, want: u8, msg: &'static str) -> Result<(), ParseError> {
        self.expect_into(want, msg, &mut ())
    }

    /// [`Self::expect`], telling `out` of the whitespace it skipped.
    ///
    /// # Errors
    /// Syntax error `msg` if the next byte is another one, EOF if none.
    #[inline(always)]
    pub fn expect_into(&mut self, want: u8, msg: &'static str, out: &mut impl Sink) -> Result<(), ParseError> {
        match self.peek_into(out) {
            Some(b) if b == want => {
                self.pos += 1;
                Ok(())
            }
            _ => Err(self.err(msg)),
        }
    }

    /// Reads a string; the cursor must be on its opening quote. A long one is cut.
    ///
    /// # Errors
    /// EOF if the string is not closed.
    #[inline]
    pub fn string(&mut self) -> Result<JStr<'a>, ParseError> {
        self.string_into(&mut ())
    }

    /// [`Self::string`], telling `out` of the rest of a long string, left out.
    ///
    /// # Errors
    /// EOF if the string is not closed.
    #[inline]
    pub fn string_into(&mut self, out: &mut impl Sink) -> Result<JStr<'a>, ParseError> {
        debug_assert_eq!(self.buf.get(self.pos), Some(&b'"'));
        let start = self.pos + 1;
        let mut i = start;
        let mut escaped = false;
        loop {
            let Some(at) = search::quote_or_backslash(self.buf, i) else {
                self.pos = self.buf.len();
                return Err(self.eof());
            };
            if self.buf[at] == b'"' {
                self.pos = at + 1;
                let raw = &self.buf[start..at];
                if raw.len() > MAX_STRING_BYTES {
                    return Ok(self.cut(start..at, out));
                }
                return Ok(JStr { raw, escaped });
            }
            escaped = true;
            i = at + 2;
            if i > self.buf.len() {
                self.pos = self.buf.len();
                return Err(self.eof());
            }
        }
    }

    /// The long string whose text is at `text`, cut and counted; `out` told of the rest.
    #[cold]
    fn cut(&mut self, text: Range<usize>, out: &mut impl Sink) -> JStr<'a> {
        let raw = &self.buf[text.start..text.start + cut_len(&self.buf[text.clone()])];
        self.long.add(self.abs(text.start - 1), text.len() as u64);
        out.gap(self.buf, text.start + raw.len()..text.end);
        // Escapes in the text kept, as a stream that let the rest go before reading it sees.
        JStr { raw, escaped: memchr::memchr(b'\\', raw).is_some() }
    }

    /// Reads a number's bytes; the cursor must be on `-` or a digit.
    ///
    /// # Errors
    /// Syntax error for a malformed number; EOF if the input ends inside it.
    #[inline]
    pub fn number(&mut self) -> Result<&'a [u8], ParseError> {
        let start = self.pos;
        let mut i = self.pos;
        while let Some(&b) = self.buf.get(i) {
            if !is_number_byte(b) {
                break;
            }
            i += 1;
        }
        if i == self.buf.len() {
            self.pos = i;
            return Err(self.eof());
        }
        self.pos = i;
        let text = &self.buf[start..i];
        if !matches!(text.last(), Some(b'0'..=b'9')) {
            self.pos = start;
            return Err(self.err("invalid number"));
        }
        Ok(text)
    }

    /// Skips one value of any type, nested up to [`MAX_DEPTH`].
    ///
    /// # Errors
    /// Syntax errors, EOF, or too deep.
    pub fn skip_value(&mut self) -> Result<(), ParseError> {
        self.copy_value(&mut ())
    }

    /// Reads one value of any type, nested up to [`MAX_DEPTH`], telling `out` where it skips
    /// whitespace.
    ///
    /// # Errors
    /// Syntax errors, EOF, or too deep.
    pub fn copy_value(&mut self, out: &mut impl Sink) -> Result<(), ParseError> {
        // Bit i set: the container at nesting level i (innermost = bit 0) is an object.
        let mut objects: u128 = 0;
        let mut depth: u32 = 0;
        loop {
            match self.peek_into(out) {
                None => return Err(self.eof()),
                Some(b'"') => {
                    self.string_into(out)?;
                }
                Some(open @ (b'{' | b'[')) => {
                    if depth == MAX_DEPTH {
                        return Err(ParseError::too_deep(self.abs(self.pos)));
                    }
                    self.pos += 1;
                    let is_object = open == b'{';
                    let close = if is_object { b'}' } else { b']' };
                    if self.peek_into(out) == Some(close) {
                        self.pos += 1;
                    } else {
                        objects = (objects << 1) | u128::from(is_object);
                        depth += 1;
                        if is_object {
                            self.copy_key(out)?;
                        }
                        continue;
                    }
                }
                Some(b'-' | b'0'..=b'9') => {
                    self.number()?;
                }
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                Some(_) => return Err(self.err("expected a value")),
            }
            // After a value: a separator, or the end of one or more containers.
            loop {
                if depth == 0 {
                    return Ok(());
                }
                let is_object = objects & 1 == 1;
                match self.peek_into(out) {
                    None => return Err(self.eof()),
                    Some(b',') => {
                        self.pos += 1;
                        if is_object {
                            self.copy_key(out)?;
                        }
                        break;
                    }
                    Some(b'}') if is_object => {}
                    Some(b']') if !is_object => {}
                    Some(_) => return Err(self.err("expected ',' or a closing bracket")),
                }
                self.pos += 1;
                objects >>= 1;
                depth -= 1;
            }
        }
    }

    /// Reads `"key" :` at the cursor, telling `out` of the whitespace around it.
    fn copy_key(&mut self, out: &mut impl Sink) -> Result<(), ParseError> {
        if self.peek_into(out) != Some(b'"') {
            return Err(self.err("expected an object key"));
        }
        self.string_into(out)?;
        self.expect_into(b':', "expected ':' after an object key", out)
    }

    /// Consumes the literal `lit` (true, false, null).
    fn literal(&mut self, lit: &[u8]) -> Result<(), ParseError> {
        let end = self.pos + lit.len();
        if end > self.buf.len() {
            if lit.starts_with(&self.buf[self.pos..]) {
                self.pos = self.buf.len();
                return Err(self.eof());
            }
            return Err(self.err("invalid literal"));
        }
        if &self.buf[self.pos..end] != lit {
            return Err(self.err("invalid literal"));
        }
        self.pos = end;
        Ok(())
    }
}
