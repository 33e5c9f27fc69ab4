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

/// A fixed-width value a column holds, written little-endian.
pub trait Word: Copy {
    /// Bytes per value.
    const SIZE: usize;
    /// Appends the value's bytes.
    fn put(self, out: &mut Vec<u8>);
    /// The value from exactly [`Word::SIZE`] bytes.
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! words {
    ($($t:ty),*) => {$(
        impl Word for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut w = [0u8; std::mem::size_of::<$t>()];
                w.copy_from_slice(bytes);
                <$t>::from_le_bytes(w)
            }
        }
    )*};
}

words!(u32, u64, i64);

/// A column read back: its values, or the bytes a [`Writer`] wrote them as, not yet decoded
/// (appended straight from them where they go, with no column of their own in between).
#[derive(Clone, Copy, Debug)]
pub enum Column<'a, T> {
    /// Decoded values.
    Values(&'a [T]),
    /// Values still as their encoding: a whole number of [`Word::SIZE`] chunks.
    Encoded(&'a [u8]),
}

impl<T: Word> Column<'_, T> {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Column::Values(v) => v.len(),
            Column::Encoded(b) => b.len() / T::SIZE,
        }
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends every value, mapped by `f`, to `to`: one loop for each form, chosen once.
    pub fn extend_mapped<U>(self, to: &mut Vec<U>, mut f: impl FnMut(T) -> U) {
        match self {
            Column::Values(v) => to.extend(v.iter().map(|&x| f(x))),
            Column::Encoded(b) => to.extend(b.chunks_exact(T::SIZE).map(|c| f(T::get(c)))),
        }
    }

    /// Appends every value to `to`.
    pub fn extend_into(self, to: &mut Vec<T>) {
        match self {
            Column::Values(v) => to.extend_from_slice(v),
            Column::Encoded(_) => self.extend_mapped(to, |x| x),
        }
    }

    /// True when `ok` holds for every value.
    pub fn all(self, ok: impl Fn(T) -> bool) -> bool {
        match self {
            Column::Values(v) => v.iter().all(|&x| ok(x)),
            Column::Encoded(b) => b.chunks_exact(T::SIZE).all(|c| ok(T::get(c))),
        }
    }

    /// The values, decoded.
    pub fn to_vec(self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len());
        self.extend_into(&mut out);
        out
    }
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

    /// Writes a column: its length, then every value little-endian.
    pub fn column<T: Word>(&mut self, col: &[T]) {
        self.len(col.len());
        self.buf.reserve(col.len() * T::SIZE);
        for &v in col {
            v.put(&mut self.buf);
        }
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

    /// Writes a `u32` column.
    pub fn u32s(&mut self, col: &[u32]) {
        self.column(col);
    }

    /// Writes a `u64` column.
    pub fn u64s(&mut self, col: &[u64]) {
        self.column(col);
    }

    /// Writes an `i64` column.
    pub fn i64s(&mut self, col: &[i64]) {
        self.column(col);
    }
}

/// Reads values written by a [`Writer`], in the same order.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The whole buffer read from.
    pub fn buffer(&self) -> &'a [u8] {
        self.buf
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

    /// Reads a column written by [`Writer::column`], left encoded.
    ///
    /// # Errors
    /// When the buffer is shorter than the column it announces.
    pub fn encoded<T: Word + 'a>(&mut self) -> Result<Column<'a, T>, CodecError> {
        let n = self.count(T::SIZE)?;
        Ok(Column::Encoded(self.take(n * T::SIZE)?))
    }

    /// Reads a column written by [`Writer::column`].
    ///
    /// # Errors
    /// When the buffer is shorter than the column it announces.
    pub fn column<T: Word + 'a>(&mut self) -> Result<Vec<T>, CodecError> {
        Ok(self.encoded()?.to_vec())
    }

    /// Reads a `u32` column.
    ///
    /// # Errors
    /// As [`Reader::column`].
    pub fn u32s(&mut self) -> Result<Vec<u32>, CodecError> {
        self.column()
    }

    /// Reads a `u64` column.
    ///
    /// # Errors
    /// As [`Reader::column`].
    pub fn u64s(&mut self) -> Result<Vec<u64>, CodecError> {
        self.column()
    }

    /// Reads an `i64` column.
    ///
    /// # Errors
    /// As [`Reader::column`].
    pub fn i64s(&mut self) -> Result<Vec<i64>, CodecError> {
        self.column()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_left_encoded_reads_as_the_values_written() -> Result<(), CodecError> {
        let mut w = Writer::default();
        w.column(&[3u32, 0, u32::MAX]);
        w.column(&[i64::MIN, -1]);
        let bytes = w.into_bytes();
        let mut r = Reader::new(&bytes);
        let (a, b) = (r.encoded::<u32>()?, r.encoded::<i64>()?);
        assert!(r.at_end());
        assert_eq!((a.len(), b.len()), (3, 2));
        assert_eq!(a.to_vec(), vec![3, 0, u32::MAX]);
        let mut mapped = vec![7u64];
        a.extend_mapped(&mut mapped, |v| u64::from(v) + 1);
        assert_eq!(mapped, vec![7, 4, 1, u64::from(u32::MAX) + 1]);
        assert!(b.all(|v| v < 0) && !a.all(|v| v > 0));
        let values = [5u32, 6];
        let mut into = Vec::new();
        Column::Values(&values).extend_into(&mut into);
        assert_eq!(into, values);
        Ok(())
    }

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
