//! Packed little-endian byte encoding for bulk data that crosses a worker boundary: a
//! [`Writer`] appends scalars, byte strings and whole columns; a [`Reader`] reads them back in
//! the same order and fails (never panics) on a short or inconsistent buffer.
//!
//! Layout: scalars as fixed-width little-endian words; a byte string or column is its element
//! count (`u64`) followed by the elements, packed. There are no field names or tags: writer and
//! reader are the same code version (one wasm binary plays both roles, see `load::Part`).
//!
//! Why not serde: per-event objects through serde_json would cost more than parsing the JSON
//! again; columns copy as memory (docs/contributing.md, one protocol; Perfetto's columnar batches).
//!
//! Cost: one pass over each column; a column's length is checked against the bytes left before
//! anything is allocated.

/// A decoding failure: what was being read and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodecError(pub String);

impl std::fmt::Display for CodecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Appends values to a byte buffer.
#[derive(Default)]
pub struct Writer {
    buf: Vec<u8>,
}

macro_rules! column_writers {
    ($($name:ident: $t:ty),*) => {$(
        /// Writes a column: its length, then every element little-endian.
        pub fn $name(&mut self, col: &[$t]) {
            self.len(col.len());
            self.buf.reserve(col.len() * std::mem::size_of::<$t>());
            for v in col {
                self.buf.extend_from_slice(&v.to_le_bytes());
            }
        }
    )*};
}

impl Writer {
    /// An empty writer with `capacity` bytes reserved.
    pub fn with_capacity(capacity: usize) -> Self {
        Self { buf: Vec::with_capacity(capacity) }
    }

    /// The encoded bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// Writes one byte.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// Writes a bool as one byte.
    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    /// Writes a `u32`.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Writes a `u64`.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Writes an `i64`.
    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Writes a length or count.
    pub fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }

    /// Writes an optional `u32` (a presence byte, then the value if present).
    pub fn opt_u32(&mut self, v: Option<u32>) {
        self.bool(v.is_some());
        if let Some(v) = v {
            self.u32(v);
        }
    }

    /// Writes an optional `u64`.
    pub fn opt_u64(&mut self, v: Option<u64>) {
        self.bool(v.is_some());
        if let Some(v) = v {
            self.u64(v);
        }
    }

    /// Writes an optional `i64`.
    pub fn opt_i64(&mut self, v: Option<i64>) {
        self.bool(v.is_some());
        if let Some(v) = v {
            self.i64(v);
        }
    }

    /// Writes a byte string: its length, then the bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.buf.extend_from_slice(b);
    }

    /// Writes a UTF-8 string.
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    column_writers!(u16s: u16, u32s: u32, u64s: u64, i64s: i64);
}

/// Reads values written by a [`Writer`], in the same order.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

macro_rules! column_readers {
    ($($name:ident: $t:ty),*) => {$(
        /// Reads a column written by the writer of the same name.
        ///
        /// # Errors
        /// When the buffer is shorter than the column it announces.
        pub fn $name(&mut self) -> Result<Vec<$t>, CodecError> {
            const SIZE: usize = std::mem::size_of::<$t>();
            let n = self.count(SIZE)?;
            let raw = self.take(n * SIZE)?;
            Ok(raw.chunks_exact(SIZE).map(|c| {
                let mut w = [0u8; SIZE];
                w.copy_from_slice(c);
                <$t>::from_le_bytes(w)
            }).collect())
        }
    )*};
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// True when every byte was read.
    pub fn at_end(&self) -> bool {
        self.pos == self.buf.len()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let Some(end) = end else {
            return Err(CodecError(format!("buffer ends at byte {} inside a value of {n} bytes", self.buf.len())));
        };
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], CodecError> {
        let mut w = [0u8; N];
        w.copy_from_slice(self.take(N)?);
        Ok(w)
    }

    /// Reads one byte.
    ///
    /// # Errors
    /// At the end of the buffer.
    pub fn u8(&mut self) -> Result<u8, CodecError> {
        Ok(self.take(1)?[0])
    }

    /// Reads a bool.
    ///
    /// # Errors
    /// At the end of the buffer, or for a byte other than 0 or 1.
    pub fn bool(&mut self) -> Result<bool, CodecError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(CodecError(format!("bad bool byte {b} at {}", self.pos - 1))),
        }
    }

    /// Reads a `u32`.
    ///
    /// # Errors
    /// When fewer than 4 bytes are left.
    pub fn u32(&mut self) -> Result<u32, CodecError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// Reads a `u64`.
    ///
    /// # Errors
    /// When fewer than 8 bytes are left.
    pub fn u64(&mut self) -> Result<u64, CodecError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// Reads an `i64`.
    ///
    /// # Errors
    /// When fewer than 8 bytes are left.
    pub fn i64(&mut self) -> Result<i64, CodecError> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    /// Reads a count of items of at least `min_size` bytes each, checked against the bytes left.
    ///
    /// # Errors
    /// When that many items cannot fit in the rest of the buffer.
    pub fn count(&mut self, min_size: usize) -> Result<usize, CodecError> {
        let n = self.u64()?;
        let left = (self.buf.len() - self.pos) as u64;
        if n.saturating_mul(min_size.max(1) as u64) > left {
            return Err(CodecError(format!("count {n} at byte {} exceeds the {left} bytes left", self.pos - 8)));
        }
        Ok(n as usize)
    }

    /// Reads an optional `u32`.
    ///
    /// # Errors
    /// When the buffer is short or the presence byte is bad.
    pub fn opt_u32(&mut self) -> Result<Option<u32>, CodecError> {
        Ok(if self.bool()? { Some(self.u32()?) } else { None })
    }

    /// Reads an optional `u64`.
    ///
    /// # Errors
    /// When the buffer is short or the presence byte is bad.
    pub fn opt_u64(&mut self) -> Result<Option<u64>, CodecError> {
        Ok(if self.bool()? { Some(self.u64()?) } else { None })
    }

    /// Reads an optional `i64`.
    ///
    /// # Errors
    /// When the buffer is short or the presence byte is bad.
    pub fn opt_i64(&mut self) -> Result<Option<i64>, CodecError> {
        Ok(if self.bool()? { Some(self.i64()?) } else { None })
    }

    /// Reads a byte string.
    ///
    /// # Errors
    /// When the buffer is shorter than the announced length.
    pub fn bytes(&mut self) -> Result<&'a [u8], CodecError> {
        let n = self.count(1)?;
        self.take(n)
    }

    /// Reads a UTF-8 string.
    ///
    /// # Errors
    /// When the buffer is short or the bytes are not UTF-8.
    pub fn string(&mut self) -> Result<String, CodecError> {
        let at = self.pos;
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| CodecError(format!("string at byte {at} is not UTF-8")))
    }

    column_readers!(u16s: u16, u32s: u32, u64s: u64, i64s: i64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_short_buffers_fail() {
        let mut w = Writer::default();
        w.u8(7);
        w.opt_i64(Some(-3));
        w.opt_u32(None);
        w.str("héllo");
        w.u32s(&[1, 2, u32::MAX]);
        w.i64s(&[i64::MIN, 0]);
        let bytes = w.into_bytes();
        let mut r = Reader::new(&bytes);
        assert_eq!(r.u8(), Ok(7));
        assert_eq!(r.opt_i64(), Ok(Some(-3)));
        assert_eq!(r.opt_u32(), Ok(None));
        assert_eq!(r.string().as_deref(), Ok("héllo"));
        assert_eq!(r.u32s(), Ok(vec![1, 2, u32::MAX]));
        assert_eq!(r.i64s(), Ok(vec![i64::MIN, 0]));
        assert!(r.at_end());
        for cut in 0..bytes.len() {
            let mut r = Reader::new(&bytes[..cut]);
            let all = (|| -> Result<(), CodecError> {
                r.u8()?;
                r.opt_i64()?;
                r.opt_u32()?;
                r.string()?;
                r.u32s()?;
                r.i64s()?;
                Ok(())
            })();
            assert!(all.is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn huge_count_is_refused_before_allocating() {
        let mut w = Writer::default();
        w.u64(u64::MAX / 2);
        let bytes = w.into_bytes();
        assert!(Reader::new(&bytes).u64s().is_err());
    }
}
