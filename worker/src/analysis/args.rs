//! Reading single fields out of an event's raw `args` text (minified JSON, see `model`).
//!
//! Analyses need one or two fields of many events (`Bytes` of every `[memory]` instant,
//! `Input Dims` of every op), so they look a key up in place instead of decoding the object:
//! a SIMD substring search for `"Key":`, accepted only where it starts a top-level member
//! (preceded by `{` or `,` at depth 1), then a scan of the value's extent.
//!
//! Cost: O(len of the args text) per lookup, no allocation. Why not `serde_json`: decoding
//! every object into a map costs an allocation per member and is ~10x slower on the hot path.

use crate::json::StringTracker;
use memchr::memmem::Finder;

/// A prepared lookup of one top-level key (build once, use on many args texts).
pub struct ArgKey {
    finder: Finder<'static>,
}

impl ArgKey {
    /// A lookup for `key` (the key's text as written, without quotes).
    pub fn new(key: &str) -> Self {
        let needle = format!("\"{key}\":").into_bytes();
        Self {
            finder: Finder::new(&needle).into_owned(),
        }
    }

    /// The raw value text of the key in the object `args`, if present at the top level.
    pub fn raw<'a>(&self, args: &'a [u8]) -> Option<&'a [u8]> {
        let needle_len = self.finder.needle().len();
        let mut from = 0;
        while let Some(pos) = self.finder.find(&args[from..]) {
            let at = from + pos;
            if at > 0 && matches!(args[at - 1], b'{' | b',') && depth_at(args, at) == 1 {
                let start = at + needle_len;
                let end = start + value_len(&args[start..]);
                return Some(&args[start..end]);
            }
            from = at + 1;
        }
        None
    }

    /// The key's value as an integer (`12`, `-4096`; a float is truncated), if present.
    pub fn i64(&self, args: &[u8]) -> Option<i64> {
        parse_i64(self.raw(args)?)
    }
}

/// Parses a JSON number as i64 (integers exactly; floats and exponents truncated via f64).
pub fn parse_i64(raw: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(raw).ok()?;
    match text.parse::<i64>() {
        Ok(v) => Some(v),
        Err(_) => text
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(|v| v as i64),
    }
}

/// Nesting depth (objects and arrays) at byte `at` of `text`, strings skipped.
fn depth_at(text: &[u8], at: usize) -> u32 {
    let mut depth = 0u32;
    let mut strings = StringTracker::default();
    for &b in &text[..at] {
        if !strings.outside(b) {
            continue;
        }
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    depth
}

/// Length of the JSON value at the start of `text` (minified): up to the `,`, `}` or `]`
/// that closes it at its own level.
fn value_len(text: &[u8]) -> usize {
    let mut depth = 0u32;
    let mut strings = StringTracker::default();
    for (i, &b) in text.iter().enumerate() {
        if !strings.outside(b) {
            continue;
        }
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => return i,
            b'}' | b']' => depth -= 1,
            b',' if depth == 0 => return i,
            _ => {}
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_top_level_keys_only() {
        let key = ArgKey::new("Bytes");
        assert_eq!(
            key.i64(br#"{"Total Bytes":1,"Bytes":-4096,"x":2}"#),
            Some(-4096)
        );
        assert_eq!(key.i64(br#"{"a":{"Bytes":5},"b":"\"Bytes\":6"}"#), None);
        assert_eq!(key.i64(br#"{"a":{"Bytes":5},"Bytes":7}"#), Some(7));
        let dims = ArgKey::new("Input Dims");
        assert_eq!(
            dims.raw(br#"{"Input Dims":[[1,2],[]],"Ev Idx":3}"#),
            Some(&br"[[1,2],[]]"[..])
        );
        assert_eq!(
            dims.raw(br#"{"Input Dims":[[1,2],[]]}"#),
            Some(&br"[[1,2],[]]"[..])
        );
        assert_eq!(dims.raw(b"{}"), None);
    }
}
