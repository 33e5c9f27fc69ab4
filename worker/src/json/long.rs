//! Long strings: every string the engine keeps from a trace is at most [`MAX_STRING_BYTES`] of
//! its raw text, cut where no character or escape is split, and the cuts are counted.
//!
//! Who cuts: the tokenizer, for a string it reads whole ([`super::Cursor::string_into`]: the
//! name, category or arg value it returns is the cut text; the minified args text leaves the
//! rest out as it leaves out whitespace); and a streamed load, for a string still arriving,
//! whose rest it lets go as it comes instead of holding it (`load::clip`). Both cut at
//! [`cut_len`], so the text kept is the same whichever read it, and both count into one
//! [`LongStrings`], reported as the diagnostic `json_string_cut`.
//!
//! Why a cut, not a refusal: one pathological string (a 200 MB name, a 1 GB arg value in a
//! 5 MB gzip) must not cost the memory of its length, nor the whole trace.
//!
//! Cost: nothing per string below the limit but the length compare the caller makes; a long
//! string costs one look for backslashes in its first [`MAX_STRING_BYTES`].

use super::search;

/// Longest raw string text kept, bytes. The longest string in the 22 real fixtures is 5,123
/// bytes (a kernel's template name); 64 KiB is twelve times that, more than any view shows,
/// and small enough that a file of such strings costs what its bytes do.
pub const MAX_STRING_BYTES: usize = 64 << 10;

// The diagnostic's description (`diag.rs`, `json_string_cut`) names the limit.
const _: () = assert!(MAX_STRING_BYTES == 64 << 10);

/// Strings cut to [`MAX_STRING_BYTES`]: how many, the longest raw length, and where the first
/// one starts (absolute offset of its opening quote).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LongStrings {
    /// Strings cut.
    pub count: u64,
    /// The longest one's raw text, bytes.
    pub longest: u64,
    /// Offset of the first one's opening quote.
    pub first: Option<u64>,
}

impl LongStrings {
    /// Counts a string of `len` raw bytes whose quote is at `offset`.
    #[cold]
    pub fn add(&mut self, offset: u64, len: u64) {
        self.combine(LongStrings { count: 1, longest: len, first: Some(offset) });
    }

    /// Adds the cuts counted in `other` (another part of the input, or a later read).
    pub fn combine(&mut self, other: LongStrings) {
        self.count += other.count;
        self.longest = self.longest.max(other.longest);
        self.first = match (self.first, other.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

/// How many bytes of a long string's raw `text` (its start, at least [`MAX_STRING_BYTES`]
/// long) are kept: at most [`MAX_STRING_BYTES`], never inside an escape (a surrogate pair is
/// one) nor inside a UTF-8 character.
pub fn cut_len(text: &[u8]) -> usize {
    let mut cut = MAX_STRING_BYTES.min(text.len());
    let head = &text[..cut];
    let mut i = 0;
    while let Some(at) = search::quote_or_backslash(head, i) {
        let end = at + escape_len(&text[at..]);
        if end > cut {
            cut = at;
            break;
        }
        i = end;
    }
    // A byte 0b10xx_xxxx continues a character: the cut goes before the character.
    while cut > 0 && text.get(cut).is_some_and(|&b| b & 0xC0 == 0x80) {
        cut -= 1;
    }
    cut
}

/// Length of the escape at the start of `text` (a backslash): 12 for a surrogate pair written
/// as two `\u` escapes, 6 for another `\u`, else 2.
fn escape_len(text: &[u8]) -> usize {
    if text.get(1) != Some(&b'u') {
        return 2;
    }
    let high = matches!(text.get(2), Some(b'd' | b'D')) && matches!(text.get(3), Some(b'8'..=b'9' | b'a'..=b'b' | b'A'..=b'B'));
    if high && text.get(6..8) == Some(b"\\u") {
        12
    } else {
        6
    }
}

/// Index of the closing quote of a string whose text goes on at `bytes[from..]`, if it is
/// there; `escape`: a backslash ended the bytes before (updated for the bytes after).
pub fn string_end(bytes: &[u8], from: usize, escape: &mut bool) -> Option<usize> {
    let mut i = from;
    if *escape && i < bytes.len() {
        *escape = false;
        i += 1;
    }
    while let Some(at) = search::quote_or_backslash(bytes, i) {
        if bytes[at] == b'"' {
            return Some(at);
        }
        i = at + 2;
        if i > bytes.len() {
            *escape = true;
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{cut_len, string_end, LongStrings, MAX_STRING_BYTES};

    fn text(before: usize, tail: &str) -> Vec<u8> {
        let mut t = vec![b'a'; before];
        t.extend_from_slice(tail.as_bytes());
        t.resize(MAX_STRING_BYTES + 20, b'z');
        t
    }

    #[test]
    fn cuts_at_the_limit_between_characters_and_escapes() {
        let m = MAX_STRING_BYTES;
        assert_eq!(cut_len(&text(m, "")), m);
        // "é" is two bytes: starting one byte before the limit, it would be split.
        assert_eq!(cut_len(&text(m - 1, "é")), m - 1);
        assert_eq!(cut_len(&text(m - 2, "é")), m);
        // "😀" is four bytes.
        assert_eq!(cut_len(&text(m - 3, "😀")), m - 3);
        // Escapes: `\n` across the limit, `\u00e9`, a surrogate pair, an escaped backslash.
        assert_eq!(cut_len(&text(m - 1, "\\n")), m - 1);
        assert_eq!(cut_len(&text(m - 2, "\\n")), m);
        assert_eq!(cut_len(&text(m - 4, "\\u00e9")), m - 4);
        assert_eq!(cut_len(&text(m - 8, "\\ud83d\\ude00")), m - 8);
        assert_eq!(cut_len(&text(m - 12, "\\ud83d\\ude00")), m);
        assert_eq!(cut_len(&text(m - 3, "\\\\\\n")), m - 1);
    }

    #[test]
    fn string_ends_are_found_across_pieces() {
        let mut escape = false;
        assert_eq!(string_end(b"ab\\\"c\"d", 0, &mut escape), Some(5));
        assert_eq!(string_end(b"ab\\", 0, &mut escape), None);
        assert!(escape, "the backslash escapes the next piece's first byte");
        assert_eq!(string_end(b"\"x\"", 0, &mut escape), Some(2));
        assert!(!escape);
        assert_eq!(string_end(b"", 0, &mut escape), None);
    }

    #[test]
    fn counts_combine() {
        let mut a = LongStrings::default();
        a.add(100, 70_000);
        let mut b = LongStrings::default();
        b.add(10, 90_000);
        b.add(500, 80_000);
        a.combine(b);
        assert_eq!(a, LongStrings { count: 3, longest: 90_000, first: Some(10) });
    }
}
