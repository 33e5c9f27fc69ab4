//! Fatal JSON errors: a kind plus an absolute byte offset; position text computed on demand.

use std::borrow::Cow;
use std::fmt;

/// What went wrong, in one of three classes callers handle differently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The input ended inside a value: everything before is usable.
    Eof,
    /// The input is not valid JSON (or not a trace) at the offset.
    Syntax(Cow<'static, str>),
    /// Nesting deeper than the limit.
    TooDeep,
}

/// A JSON error at an absolute byte offset of the (decompressed) input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    inner: Box<(ErrorKind, u64)>,
}

/// Human position of an offset: 1-based line and column plus a short escaped excerpt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// Absolute byte offset.
    pub offset: u64,
    /// 1-based line.
    pub line: u64,
    /// 1-based column, in bytes.
    pub column: u64,
    /// Up to 24 bytes of input starting at the offset, lossily decoded.
    pub excerpt: String,
}

impl ParseError {
    /// A syntax error at `offset`.
    #[cold]
    pub fn syntax(msg: &'static str, offset: u64) -> Self {
        Self { inner: Box::new((ErrorKind::Syntax(Cow::Borrowed(msg)), offset)) }
    }

    /// An error of `kind` at `offset` (rebuilding one that crossed a worker boundary).
    #[cold]
    pub fn new(kind: ErrorKind, offset: u64) -> Self {
        Self { inner: Box::new((kind, offset)) }
    }

    /// Unexpected end of input at `offset`.
    #[cold]
    pub fn eof(offset: u64) -> Self {
        Self { inner: Box::new((ErrorKind::Eof, offset)) }
    }

    /// Nesting too deep at `offset`.
    #[cold]
    pub fn too_deep(offset: u64) -> Self {
        Self { inner: Box::new((ErrorKind::TooDeep, offset)) }
    }

    /// The error class.
    pub fn kind(&self) -> &ErrorKind {
        &self.inner.0
    }

    /// Absolute byte offset of the problem.
    pub fn offset(&self) -> u64 {
        self.inner.1
    }

    /// True when the input simply ended early (a truncated file).
    pub fn is_eof(&self) -> bool {
        self.inner.0 == ErrorKind::Eof
    }

    /// Line, column and excerpt of this error in `input` (the bytes the offset refers to).
    #[cold]
    pub fn locate(&self, input: &[u8]) -> Location {
        Location::of(input, self.offset())
    }
}

/// The part of an input still held where offsets are located: a stream keeps only its tail,
/// and counts the lines of what it let go, before the tail and inside it (the rest of a long
/// string, `load::clip`).
#[derive(Clone, Copy, Debug)]
pub struct Window<'a> {
    /// The bytes held.
    pub bytes: &'a [u8],
    /// Absolute offset of `bytes[0]`.
    pub base: u64,
    /// Newlines before `base`.
    pub lines_before: u64,
    /// Absolute offset where the line holding `base` starts.
    pub line_start: u64,
    /// Input let go between the bytes held, in order.
    pub gaps: &'a [Gap],
}

/// Input a stream let go inside what it holds: the rest of a long string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gap {
    /// Absolute offset of the first byte let go.
    pub at: u64,
    /// Bytes let go.
    pub len: u64,
    /// Newlines among them.
    pub newlines: u64,
    /// Absolute offset right after the last of them, if any.
    pub line_start: Option<u64>,
}

impl<'a> Window<'a> {
    /// The whole input.
    pub fn whole(input: &'a [u8]) -> Self {
        Self { bytes: input, base: 0, lines_before: 0, line_start: 0, gaps: &[] }
    }

    /// Absolute offset of `bytes[i]`.
    fn offset_of(&self, i: usize) -> u64 {
        let mut at = self.base + i as u64;
        for g in self.gaps {
            if g.at <= at {
                at += g.len;
            }
        }
        at
    }
}

impl Location {
    /// Position of `offset` in `input`.
    #[cold]
    pub fn of(input: &[u8], offset: u64) -> Self {
        Self::within(Window::whole(input), offset)
    }

    /// Position of `offset` in an input of which `window` is held (an offset before the
    /// window is taken as its start, one in a gap as the gap's).
    #[cold]
    pub fn within(window: Window<'_>, offset: u64) -> Self {
        let input = window.bytes;
        let (mut rel, mut lines, mut line_start) = (offset.saturating_sub(window.base), window.lines_before, window.line_start);
        for g in window.gaps.iter().filter(|g| g.at < offset) {
            rel = rel.saturating_sub(g.len.min(offset - g.at));
            lines += g.newlines;
            line_start = g.line_start.map_or(line_start, |s| s.max(line_start));
        }
        let at = usize::try_from(rel).unwrap_or(usize::MAX).min(input.len());
        let before = &input[..at];
        let line = lines + before.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        let line_start = before.iter().rposition(|&b| b == b'\n').map_or(line_start, |p| window.offset_of(p + 1).max(line_start));
        let column = (window.offset_of(at) - line_start) + 1;
        let end = (at + 24).min(input.len());
        let excerpt = String::from_utf8_lossy(&input[at..end]).into_owned();
        Self { offset, line, column, excerpt }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind() {
            ErrorKind::Eof => write!(f, "unexpected end of input"),
            ErrorKind::Syntax(msg) => write!(f, "{msg}"),
            ErrorKind::TooDeep => write!(f, "nesting deeper than 128 levels"),
        }?;
        write!(f, " at byte {}", self.offset())
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {} (line {}, column {}) near {:?}", self.offset, self.line, self.column, self.excerpt)
    }
}

impl std::error::Error for ParseError {}
