//! A minimal raw JSON scanner: byte ranges of object members and array elements.
//!
//! Input: UTF-8 JSON bytes. Output: `Range<usize>`s into them (member keys without their
//! quotes, values as written), so `inflate` can copy event text byte for byte and patch only the
//! numbers it must change. Nothing is decoded or allocated beyond the range lists.
//!
//! It checks structure only as far as it walks: strings, `:` and `,` between members, and
//! bracket nesting when skipping a value (counted, not typed: `[}` is not caught inside a skipped
//! value). Inputs come from real profilers; validating them fully is the tokenizer's job, and
//! serde_json without its `raw_value` feature cannot hand back byte ranges.
//! Cost: one pass over each byte of a skipped value.

use std::ops::Range;

/// A structural error at a byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScanError {
    pub offset: usize,
    pub expected: &'static str,
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "expected {} at byte {}", self.expected, self.offset)
    }
}

type Result<T> = std::result::Result<T, ScanError>;

fn err<T>(offset: usize, expected: &'static str) -> Result<T> {
    Err(ScanError { offset, expected })
}

/// Index of the first non-whitespace byte at or after `i`.
pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// With `b[i] == '"'`: the index just past the closing quote.
fn skip_string(b: &[u8], i: usize) -> Result<usize> {
    let mut j = i + 1;
    while let Some(&c) = b.get(j) {
        match c {
            b'"' => return Ok(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
    err(i, "a closed string")
}

/// With `b[i]` the first byte of a value: the index just past it.
pub(crate) fn skip_value(b: &[u8], i: usize) -> Result<usize> {
    match b.get(i) {
        Some(b'"') => skip_string(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while let Some(&c) = b.get(j) {
                match c {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            err(i, "a closed object or array")
        }
        Some(_) => {
            let mut j = i;
            while let Some(&c) = b.get(j) {
                if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                j += 1;
            }
            if j == i {
                return err(i, "a value");
            }
            Ok(j)
        }
        None => err(i, "a value"),
    }
}

/// One object member: the key's bytes (inside the quotes) and the value's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    pub key: Range<usize>,
    pub value: Range<usize>,
}

/// With `b[i] == '{'`: its members in order and the index just past the `}`.
pub(crate) fn object_members(b: &[u8], i: usize) -> Result<(Vec<Member>, usize)> {
    if b.get(i) != Some(&b'{') {
        return err(i, "'{'");
    }
    let mut members = Vec::new();
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Ok((members, j + 1));
    }
    loop {
        if b.get(j) != Some(&b'"') {
            return err(j, "a member name");
        }
        let key_end = skip_string(b, j)?;
        let key = j + 1..key_end - 1;
        j = skip_ws(b, key_end);
        if b.get(j) != Some(&b':') {
            return err(j, "':'");
        }
        let start = skip_ws(b, j + 1);
        let end = skip_value(b, start)?;
        members.push(Member {
            key,
            value: start..end,
        });
        j = skip_ws(b, end);
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b'}') => return Ok((members, j + 1)),
            _ => return err(j, "',' or '}'"),
        }
    }
}

/// With `b[i] == '['`: its elements in order and the index just past the `]`.
///
/// A trailing comma before `]` is accepted: truncated-then-repaired traces often have one and
/// the elements are still well delimited.
pub(crate) fn array_elements(b: &[u8], i: usize) -> Result<(Vec<Range<usize>>, usize)> {
    if b.get(i) != Some(&b'[') {
        return err(i, "'['");
    }
    let mut elements = Vec::new();
    let mut j = skip_ws(b, i + 1);
    loop {
        if b.get(j) == Some(&b']') {
            return Ok((elements, j + 1));
        }
        let end = skip_value(b, j)?;
        elements.push(j..end);
        j = skip_ws(b, end);
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b']') => return Ok((elements, j + 1)),
            _ => return err(j, "',' or ']'"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn members_and_elements_are_ranges_of_the_input() {
        let text = br#"{"a": [1, {"b": "x]"}], "c" : -2.5e3 }"#;
        let (members, end) = object_members(text, 0).unwrap();
        assert_eq!(end, text.len());
        let keys: Vec<&[u8]> = members.iter().map(|m| &text[m.key.clone()]).collect();
        assert_eq!(keys, [&b"a"[..], b"c"]);
        assert_eq!(&text[members[1].value.clone()], b"-2.5e3");
        let (elements, _) = array_elements(text, members[0].value.start).unwrap();
        assert_eq!(&text[elements[1].clone()], br#"{"b": "x]"}"#);
    }

    #[test]
    fn errors_carry_offsets() {
        assert_eq!(
            object_members(b"{\"a\" 1}", 0),
            Err(ScanError {
                offset: 5,
                expected: "':'"
            })
        );
        assert_eq!(array_elements(b"[1, \"x", 0).unwrap_err().offset, 4);
    }
}
