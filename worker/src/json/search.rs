//! Byte searches over JSON text, 16 bytes at a time: the only module of the engine with SIMD.
//!
//! Two questions the scanner ([`super::scan`]) asks at almost every token: where the next `"`
//! or `\` is (the end of a string) and where whitespace ends. Each function answers with an index into `buf`, exactly
//! as the scalar `iter().position` it replaces (tests compare the two on random inputs).
//!
//! Backends, chosen at compile time: SSE2 on x86_64 (part of the baseline, so always there),
//! `simd128` on wasm32 when the build enables it (`.cargo/config.toml`), else eight bytes at a
//! time in a `u64` (SWAR). The last partial block of a buffer is searched byte by byte, so no
//! read ever goes past `buf`.
//!
//! Cost: a handful of instructions per 16 bytes plus one `trailing_zeros` per answer; trace
//! tokens are short, so most answers come from the first block.

#![allow(unsafe_code)]

/// JSON insignificant whitespace.
#[inline]
pub fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// Index of the first `"` or `\` in `buf[from..]`.
#[inline]
pub fn quote_or_backslash(buf: &[u8], from: usize) -> Option<usize> {
    find(buf, from, block::quote_or_backslash, |b| b == b'"' || b == b'\\')
}

/// Index of the first non-whitespace byte in `buf[from..]`, or `buf.len()` if there is none.
#[inline]
pub fn non_ws(buf: &[u8], from: usize) -> usize {
    find(buf, from, block::non_ws, |b| !is_ws(b)).unwrap_or(buf.len())
}

/// The search loop shared by the questions: whole blocks with `first_in`, the tail with
/// `matches` byte by byte.
#[inline(always)]
fn find(buf: &[u8], from: usize, first_in: fn(&[u8; 16]) -> Option<usize>, matches: fn(u8) -> bool) -> Option<usize> {
    let mut i = from;
    while let Some(chunk) = buf.get(i..i + 16) {
        let Ok(block) = <&[u8; 16]>::try_from(chunk) else { break };
        if let Some(at) = first_in(block) {
            return Some(i + at);
        }
        i += 16;
    }
    buf.get(i..)?.iter().position(|&b| matches(b)).map(|p| i + p)
}

/// The index of the first matching byte of one block.
#[cfg(target_arch = "x86_64")]
mod block {
    use core::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8};

    // SAFETY (every block below): SSE2 is part of the x86_64 baseline, so these intrinsics
    // exist on every x86_64 CPU; they are `unsafe` only because they are `target_feature`
    // functions. The one load reads the 16 bytes of `block`, with no alignment requirement.

    #[inline(always)]
    fn load(block: &[u8; 16]) -> __m128i {
        // SAFETY: see above.
        unsafe { _mm_loadu_si128(block.as_ptr().cast()) }
    }

    #[inline(always)]
    fn eq(v: __m128i, b: u8) -> __m128i {
        // SAFETY: see above.
        unsafe { _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8)) }
    }

    #[inline(always)]
    fn or(a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: see above.
        unsafe { _mm_or_si128(a, b) }
    }

    /// Bit i set when byte i of `v` is 0xFF.
    #[inline(always)]
    fn mask(v: __m128i) -> u32 {
        // SAFETY: see above.
        unsafe { _mm_movemask_epi8(v) as u32 }
    }

    #[inline(always)]
    fn first(mask: u32) -> Option<usize> {
        (mask != 0).then(|| mask.trailing_zeros() as usize)
    }

    #[inline(always)]
    fn ws(v: __m128i) -> __m128i {
        or(or(eq(v, b' '), eq(v, b'\n')), or(eq(v, b'\r'), eq(v, b'\t')))
    }

    #[inline(always)]
    pub fn quote_or_backslash(block: &[u8; 16]) -> Option<usize> {
        let v = load(block);
        first(mask(or(eq(v, b'"'), eq(v, b'\\'))))
    }

    #[inline(always)]
    pub fn non_ws(block: &[u8; 16]) -> Option<usize> {
        first(!mask(ws(load(block))) & 0xFFFF)
    }
}

/// The index of the first matching byte of one block.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod block {
    use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_load, v128_or};

    #[inline(always)]
    fn load(block: &[u8; 16]) -> v128 {
        // SAFETY: `block` is 16 readable bytes; `v128_load` has no alignment requirement.
        unsafe { v128_load(block.as_ptr().cast()) }
    }

    #[inline(always)]
    fn eq(v: v128, b: u8) -> v128 {
        u8x16_eq(v, u8x16_splat(b))
    }

    #[inline(always)]
    fn first(mask: u16) -> Option<usize> {
        (mask != 0).then(|| mask.trailing_zeros() as usize)
    }

    #[inline(always)]
    fn ws(v: v128) -> v128 {
        v128_or(v128_or(eq(v, b' '), eq(v, b'\n')), v128_or(eq(v, b'\r'), eq(v, b'\t')))
    }

    #[inline(always)]
    pub fn quote_or_backslash(block: &[u8; 16]) -> Option<usize> {
        let v = load(block);
        first(u8x16_bitmask(v128_or(eq(v, b'"'), eq(v, b'\\'))))
    }

    #[inline(always)]
    pub fn non_ws(block: &[u8; 16]) -> Option<usize> {
        first(!u8x16_bitmask(ws(load(block))))
    }
}

#[cfg(not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))))]
use swar as block;

/// Portable backend, also tested on every target: two `u64` words per block.
#[cfg(any(test, not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")))))]
mod swar {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOWS: u64 = 0x7F7F_7F7F_7F7F_7F7F;

    /// 0x80 in every byte of `w` equal to `b`, 0 elsewhere (exact: no borrow between bytes).
    #[inline(always)]
    fn eq(w: u64, b: u8) -> u64 {
        let x = w ^ (ONES * u64::from(b));
        !(((x & LOWS) + LOWS) | x | LOWS)
    }

    #[inline(always)]
    fn words(block: &[u8; 16]) -> [u64; 2] {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        lo.copy_from_slice(&block[..8]);
        hi.copy_from_slice(&block[8..]);
        [u64::from_le_bytes(lo), u64::from_le_bytes(hi)]
    }

    #[inline(always)]
    fn first(block: &[u8; 16], flags: impl Fn(u64) -> u64) -> Option<usize> {
        let [lo, hi] = words(block);
        match (flags(lo), flags(hi)) {
            (0, 0) => None,
            (0, h) => Some(8 + h.trailing_zeros() as usize / 8),
            (l, _) => Some(l.trailing_zeros() as usize / 8),
        }
    }

    #[inline(always)]
    fn ws(w: u64) -> u64 {
        eq(w, b' ') | eq(w, b'\n') | eq(w, b'\r') | eq(w, b'\t')
    }

    #[inline(always)]
    pub fn quote_or_backslash(block: &[u8; 16]) -> Option<usize> {
        first(block, |w| eq(w, b'"') | eq(w, b'\\'))
    }

    #[inline(always)]
    pub fn non_ws(block: &[u8; 16]) -> Option<usize> {
        first(block, |w| !ws(w) & (ONES << 7))
    }
}

#[cfg(test)]
mod tests {
    use super::{find, is_ws, non_ws, quote_or_backslash, swar};

    /// Bytes the searches care about, their neighbours in value (borrow and sign traps), and
    /// high bytes.
    const ALPHABET: &[u8] = b"\"\\ \n\r\t!#[]{}:,a0\x00\x01\x08\x0b\x0c\x1f\x21\x7f\x80\xa0\xdc\xff";

    /// Deterministic xorshift inputs: lengths 0..80 cover the SIMD blocks and the scalar tail.
    fn inputs() -> Vec<Vec<u8>> {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..4000)
            .map(|n| {
                let len = n % 80;
                // Some inputs are mostly one byte, so matches sit far from the start.
                let fill = ALPHABET[(next() % ALPHABET.len() as u64) as usize];
                (0..len)
                    .map(|_| {
                        let r = next();
                        if r % 4 == 0 { ALPHABET[(r >> 8) as usize % ALPHABET.len()] } else { fill }
                    })
                    .collect()
            })
            .collect()
    }

    fn scalar(buf: &[u8], from: usize, matches: impl Fn(u8) -> bool) -> Option<usize> {
        buf.get(from..)?.iter().position(|&b| matches(b)).map(|p| from + p)
    }

    #[test]
    fn every_backend_equals_the_scalar_search() {
        for buf in inputs() {
            for from in 0..=buf.len() + 1 {
                let quote_bs = |b: u8| b == b'"' || b == b'\\';
                assert_eq!(quote_or_backslash(&buf, from), scalar(&buf, from, quote_bs), "{buf:?} {from}");
                assert_eq!(non_ws(&buf, from), scalar(&buf, from, |b| !is_ws(b)).unwrap_or(buf.len()), "{buf:?} {from}");
                assert_eq!(find(&buf, from, swar::quote_or_backslash, quote_bs), scalar(&buf, from, quote_bs));
                assert_eq!(find(&buf, from, swar::non_ws, |b| !is_ws(b)), scalar(&buf, from, |b| !is_ws(b)));
            }
        }
    }
}
