//! The args buffer while building: minified args in chunks of 1 MiB or more, so it grows
//! without copying what it holds. A `Vec` that doubles copies its contents at each step, and in
//! wasm the old and new blocks live together for that moment: for the args, the largest buffer
//! a load builds, that was the peak of a streamed load. Offsets count the bytes of the chunks
//! in order, so [`ArgsBuf::into_vec`] gives the buffer one `Vec` would have held.

use crate::json::minify_into;

/// Least capacity of a chunk, bytes.
const CHUNK: usize = 1 << 20;

/// Minified args in chunks; see the module docs.
#[derive(Debug, Default)]
pub(super) struct ArgsBuf {
    chunks: Vec<Vec<u8>>,
    len: usize,
}

impl ArgsBuf {
    /// One chunk holding `bytes` (a decoded part's args).
    pub fn from_vec(bytes: Vec<u8>) -> Self {
        Self { len: bytes.len(), chunks: vec![bytes] }
    }

    /// Bytes held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes allocated.
    pub fn capacity(&self) -> usize {
        self.chunks.iter().map(Vec::capacity).sum()
    }

    /// Appends `raw` minified; returns where it starts and its length.
    pub fn push_minified(&mut self, raw: &[u8]) -> (usize, usize) {
        // Minifying never lengthens: `raw.len()` bytes of room are enough.
        let room = self.chunks.last().map_or(0, |c| c.capacity() - c.len());
        if room < raw.len() {
            self.chunks.push(Vec::with_capacity(CHUNK.max(raw.len())));
        }
        let start = self.len;
        let Some(chunk) = self.chunks.last_mut() else { return (start, 0) };
        let before = chunk.len();
        minify_into(chunk, raw);
        let n = chunk.len() - before;
        self.len += n;
        (start, n)
    }

    /// Appends `later`'s bytes after these (its offsets then start at this buffer's length).
    pub fn append(&mut self, later: &mut ArgsBuf) {
        self.len += later.len;
        self.chunks.append(&mut later.chunks);
        later.len = 0;
    }

    /// The chunks in order (for the part codec).
    pub fn chunks(&self) -> &[Vec<u8>] {
        &self.chunks
    }

    /// One buffer of every byte, each chunk freed as it is copied.
    pub fn into_vec(self) -> Vec<u8> {
        let mut chunks = self.chunks.into_iter();
        let Some(mut out) = chunks.next() else { return Vec::new() };
        out.reserve_exact(self.len - out.len());
        for chunk in chunks {
            out.extend_from_slice(&chunk);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::ArgsBuf;

    #[test]
    fn offsets_are_those_of_one_buffer() {
        let mut one = Vec::new();
        let mut buf = ArgsBuf::default();
        let big = format!("{{\"k\": \"{}\"}}", "x".repeat(3 << 20));
        for (i, raw) in ["{ \"a\" : 1 }", big.as_str(), "{}", "{ \"b\": [1, 2] }"].iter().cycle().take(9).enumerate() {
            let start = one.len();
            crate::json::minify_into(&mut one, raw.as_bytes());
            let (s, n) = buf.push_minified(raw.as_bytes());
            assert_eq!((s, n), (start, one.len() - start), "arg {i}");
        }
        let mut later = ArgsBuf::from_vec(b"{\"z\":0}".to_vec());
        buf.append(&mut later);
        one.extend_from_slice(b"{\"z\":0}");
        assert_eq!(buf.len(), one.len());
        assert_eq!(buf.into_vec(), one);
    }
}
