//! Input stage: raw file bytes -> JSON bytes (gzip detected by magic bytes, not by name).
//!
//! A truncated or corrupt gzip stream is not fatal: the decompressed prefix is returned with
//! a note, so the JSON stage can load every complete event in it.

use std::io::Read;

pub mod split;

/// Decompressed input plus what was learned on the way.
pub struct Decoded {
    /// The JSON text.
    pub json: Vec<u8>,
    /// The input was gzip.
    pub gzip: bool,
    /// gzip problem that stopped decompression early, if any.
    pub gzip_error: Option<String>,
}

/// True when `bytes` start with the gzip magic number.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Gunzips `bytes` if they are gzip (multi-member streams included), else passes them through.
/// `progress(compressed_bytes_done)` is called every few MB.
pub fn decode(bytes: Vec<u8>, progress: &mut dyn FnMut(u64)) -> Decoded {
    if !is_gzip(&bytes) {
        return Decoded { json: bytes, gzip: false, gzip_error: None };
    }
    let total = bytes.len();
    let mut counter = CountingReader { inner: &bytes[..], done: 0, next_report: 0, progress };
    let mut out = Vec::with_capacity(total.saturating_mul(8));
    let mut decoder = flate2::read::MultiGzDecoder::new(&mut counter);
    let mut buf = vec![0u8; 1 << 16];
    let gzip_error = loop {
        match decoder.read(&mut buf) {
            Ok(0) => break None,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => break Some(e.to_string()),
        }
    };
    Decoded { json: out, gzip: true, gzip_error }
}

/// Counts bytes read through it and reports progress.
struct CountingReader<'a, 'p> {
    inner: &'a [u8],
    done: u64,
    next_report: u64,
    progress: &'p mut dyn FnMut(u64),
}

impl Read for CountingReader<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.done += n as u64;
        if self.done >= self.next_report {
            (self.progress)(self.done);
            self.next_report = self.done + (4 << 20);
        }
        Ok(n)
    }
}
