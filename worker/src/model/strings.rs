//! String interning: every distinct string stored once in one byte buffer; ids are `u32`.
//!
//! Lookups hash the raw bytes (FxHash-style multiply-rotate, fast for the short names of
//! traces). Cost: one hash and at most one probe per interned string; memory = bytes + 4 bytes
//! of offset + the map entry per distinct string.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Index of an interned string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StrId(pub u32);

/// The empty string's id (always interned first).
pub const EMPTY: StrId = StrId(0);

/// A small fast hasher for byte keys (not DoS-resistant; trace strings are not adversarial
/// to the point of mattering for a local viewer).
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// A `HashSet` with [`FxHasher`].
pub type FxHashSet<K> = std::collections::HashSet<K, BuildHasherDefault<FxHasher>>;

/// The string pool.
#[derive(Clone, Debug)]
pub struct Strings {
    bytes: Vec<u8>,
    /// `ends[i]` is the end of string `i` in `bytes`; it starts at `ends[i - 1]` (or 0).
    ends: Vec<u32>,
    map: FxHashMap<Box<[u8]>, StrId>,
}

impl Default for Strings {
    fn default() -> Self {
        let mut s = Self { bytes: Vec::new(), ends: Vec::new(), map: FxHashMap::default() };
        s.intern(b"");
        s
    }
}

impl Strings {
    /// Interns `s` (UTF-8 bytes) and returns its id.
    #[inline]
    pub fn intern(&mut self, s: &[u8]) -> StrId {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        self.insert(s)
    }

    #[cold]
    fn insert(&mut self, s: &[u8]) -> StrId {
        let id = StrId(self.ends.len() as u32);
        self.bytes.extend_from_slice(s);
        self.ends.push(self.bytes.len() as u32);
        self.map.insert(s.into(), id);
        id
    }

    /// The id of `s` if it was interned.
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        self.map.get(s.as_bytes()).copied()
    }

    /// The string of `id` (lossy for invalid UTF-8; empty for an unknown id).
    pub fn get(&self, id: StrId) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.bytes_of(id))
    }

    /// The bytes of `id` (empty for an unknown id).
    pub fn bytes_of(&self, id: StrId) -> &[u8] {
        let i = id.0 as usize;
        let Some(&end) = self.ends.get(i) else { return b"" };
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start as usize..end as usize]
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Always false: the empty string is interned at creation.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The pool's byte buffer and the end offset of every string (for [`crate::codec`]).
    pub fn raw_parts(&self) -> (&[u8], &[u32]) {
        (&self.bytes, &self.ends)
    }

    /// Rebuilds a pool from [`Strings::raw_parts`]; `None` when the ends are not ascending
    /// within `bytes` or the first string is not the empty one.
    pub fn from_raw_parts(bytes: Vec<u8>, ends: Vec<u32>) -> Option<Self> {
        if ends.first() != Some(&0) || ends.windows(2).any(|w| w[0] > w[1]) || ends.last().is_some_and(|&e| e as usize != bytes.len()) {
            return None;
        }
        let mut map = FxHashMap::default();
        map.reserve(ends.len());
        let mut start = 0;
        for (i, &end) in ends.iter().enumerate() {
            map.entry(bytes[start..end as usize].into()).or_insert(StrId(i as u32));
            start = end as usize;
        }
        Some(Self { bytes, ends, map })
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() * 2 + self.ends.capacity() * 4 + self.map.capacity() * 24
    }
}
