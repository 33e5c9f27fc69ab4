//! `args` minifying: raw JSON text -> the same text without whitespace outside strings, as the
//! builder stores it (model `args` buffer).
//!
//! Input: the raw `args` span of an event (any bytes: it may be cut, or hold escapes).
//! Output: appended to the caller's buffer; equal to feeding every byte through a
//! [`StringTracker`](super::StringTracker) and dropping structural whitespace (tested on every
//! short string over the bytes that matter).
//!
//! Cost: 16 bytes per step. Each block's quote, backslash and whitespace masks come from
//! [`search::classify`]; quote parity (a prefix xor) tells which bytes are inside strings; the
//! kept bytes are written as runs, each one 16-byte copy. A block holding a backslash (or
//! following one) goes byte by byte, as escapes break the parity rule; trace args rarely have
//! any. Rejected: a search per token (next whitespace or quote, then the end of the string),
//! which cost ~60 instructions per token on pretty-printed args.

use super::scan::StringTracker;
use super::search::{self, Classes};

/// Appends `raw` to `out` without the whitespace outside strings; see the module docs.
pub fn minify_into(out: &mut Vec<u8>, raw: &[u8]) {
    let base = out.len();
    // Room for every byte plus one block: a run's copy writes 16 bytes wherever it starts.
    out.resize(base + raw.len() + 16, 0);
    let mut m = Minifier { out, dst: base, strings: StringTracker::default() };
    let mut blocks = raw.chunks_exact(16);
    for chunk in &mut blocks {
        let Ok(block) = <&[u8; 16]>::try_from(chunk) else { break };
        m.block(block, 16);
    }
    let rest = blocks.remainder();
    if !rest.is_empty() {
        // Padding bytes are no class and lie past `len`: never kept.
        let mut last = [b'a'; 16];
        last[..rest.len()].copy_from_slice(rest);
        m.block(&last, rest.len());
    }
    let end = m.dst;
    out.truncate(end);
}

/// Where the output stands and the string state carried from one block to the next.
struct Minifier<'o> {
    out: &'o mut Vec<u8>,
    /// Next output index; always at least 16 bytes before the end of `out`.
    dst: usize,
    /// The string state carried across blocks, kept by the tracker's rules.
    strings: StringTracker,
}

impl Minifier<'_> {
    /// Appends the kept bytes among the first `len` of `block`.
    #[inline]
    fn block(&mut self, block: &[u8; 16], len: usize) {
        let c = search::classify(block);
        let valid = if len == 16 { 0xFFFF } else { (1u32 << len) - 1 };
        if c.backslash & valid != 0 || self.strings.escape {
            self.bytewise(&block[..len]);
            return;
        }
        let drop = c.ws & !self.inside(c);
        self.runs(block, !drop & valid);
    }

    /// Bit i set when byte i is inside a string or is one of its quotes' opening (quote parity
    /// so far, odd = inside); updates the carried state.
    #[inline]
    fn inside(&mut self, c: Classes) -> u32 {
        let mut x = c.quote;
        x ^= x << 1;
        x ^= x << 2;
        x ^= x << 4;
        x ^= x << 8;
        if self.strings.in_string {
            x = !x;
        }
        x &= 0xFFFF;
        self.strings.in_string = x & 0x8000 != 0;
        x
    }

    /// Copies the runs of set bits of `keep` from `block`, each as one 16-byte copy.
    #[inline]
    fn runs(&mut self, block: &[u8; 16], mut keep: u32) {
        let mut padded = [0u8; 32];
        padded[..16].copy_from_slice(block);
        while keep != 0 {
            let at = keep.trailing_zeros() as usize;
            let len = (!(keep >> at)).trailing_zeros() as usize;
            if let Some(to) = self.out.get_mut(self.dst..self.dst + 16) {
                to.copy_from_slice(&padded[at..at + 16]);
            }
            self.dst += len;
            keep &= !((1u32 << (at + len)) - 1);
        }
    }

    /// The same as `block` one byte at a time through the tracker, for blocks with escapes:
    /// whitespace is dropped only where the tracker says the byte is structural.
    #[cold]
    fn bytewise(&mut self, bytes: &[u8]) {
        for &b in bytes {
            let structural = self.strings.outside(b);
            if !structural || !search::is_ws(b) {
                if let Some(to) = self.out.get_mut(self.dst) {
                    *to = b;
                }
                self.dst += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::minify_into;
    use crate::json::StringTracker;

    fn tracker_minify(raw: &[u8]) -> Vec<u8> {
        let mut strings = StringTracker::default();
        raw.iter().copied().filter(|&b| !strings.outside(b) || !matches!(b, b' ' | b'\n' | b'\r' | b'\t')).collect()
    }

    #[test]
    fn minify_equals_the_byte_by_byte_tracker() {
        let cases: [&[u8]; 9] = [
            b"{ \"a\" : [1, 2],\n\t\"b c\": \"x y\" }",
            b"{\"k\": \"esc \\\" still \\\\\" , \"n\": null }",
            b"{\"unclosed\": \"abc  def",
            b"{\"end\\",
            b"\"\\",
            b"  ",
            b"",
            b"{\"long string with no escapes at all, longer than a word\": 1 }",
            b"{\"a\":\"\\u00e9 \\n\", \"b\" : { \"c\" : [ \" \" ] } }",
        ];
        for raw in cases {
            let mut out = Vec::new();
            minify_into(&mut out, raw);
            assert_eq!(out, tracker_minify(raw), "{:?}", String::from_utf8_lossy(raw));
        }
        // Every byte string over a small alphabet up to length 6.
        let alphabet = [b' ', b'"', b'\\', b'a', b'\n'];
        let mut raw = Vec::new();
        for len in 0..=6u32 {
            for code in 0..alphabet.len().pow(len) {
                raw.clear();
                let mut c = code;
                for _ in 0..len {
                    raw.push(alphabet[c % alphabet.len()]);
                    c /= alphabet.len();
                }
                let mut out = Vec::new();
                minify_into(&mut out, &raw);
                assert_eq!(out, tracker_minify(&raw), "{:?}", String::from_utf8_lossy(&raw));
            }
        }
    }

    #[test]
    fn long_inputs_equal_the_tracker_across_blocks() {
        // Pseudo-random text up to five blocks long, mostly plain bytes so that strings,
        // escapes and whitespace runs cross block boundaries; appended after existing output.
        let alphabet = [b' ', b'"', b'\\', b'a', b'\n', b'\t', b':', b'a', b'a', b'a', b'b', b' '];
        let mut state: u64 = 0xD1B5_4A32_D192_ED03;
        for n in 0..20_000 {
            let raw: Vec<u8> = (0..n % 80)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            let mut out = b"prefix".to_vec();
            minify_into(&mut out, &raw);
            assert_eq!(&out[..6], b"prefix");
            assert_eq!(out[6..], tracker_minify(&raw), "{:?}", String::from_utf8_lossy(&raw));
        }
    }
}
