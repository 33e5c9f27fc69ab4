//! Input stage: raw file bytes -> JSON bytes (gzip detected by magic bytes, not by name).
//!
//! A truncated or corrupt gzip stream is not fatal: the decompressed prefix is returned with
//! a note, so the JSON stage can load every complete event in it.
//!
//! Size: the JSON is checked against a [`Budget`] while it inflates, 64 KiB at a time, so a gzip
//! bomb stops at the budget with a [`TooBig`] rather than at the end of the memory. The JSON
//! buffer starts at the size the gzip trailer states when that is plausible (one allocation,
//! no copy as it grows) and never grows past the budget.

use crate::budget::{Budget, TooBig};
use std::io::Read;

mod gunzip;
pub mod split;

pub use gunzip::Gunzip;

/// Largest inflate ratio trusted from a gzip trailer (JSON traces inflate 10-25x); a larger
/// stated size is a bomb's or a truncated file's last bytes, and the buffer grows instead.
const PLAUSIBLE_RATIO: u64 = 100;

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
///
/// # Errors
/// [`TooBig`] when the JSON is (or inflates to) more than `budget`, or the memory runs out
/// before it is all inflated.
pub fn decode(bytes: Vec<u8>, budget: Budget, progress: &mut dyn FnMut(u64)) -> Result<Decoded, TooBig> {
    if !is_gzip(&bytes) {
        budget.check_file(bytes.len() as u64, false)?;
        return Ok(Decoded { json: bytes, gzip: false, gzip_error: None });
    }
    let max = usize::try_from(budget.max_json_bytes()).unwrap_or(usize::MAX);
    let mut out = Vec::new();
    out.try_reserve_exact(first_capacity(&bytes, max)).map_err(|_| TooBig::out_of_memory(0, budget))?;
    let gzip_error = inflate(&bytes, budget, progress, &mut |piece| {
        budget.grow(&mut out, piece.len())?;
        out.extend_from_slice(piece);
        Ok(())
    })?;
    // Doubling may have left up to half the buffer unused; the model is built next to it.
    out.shrink_to_fit();
    Ok(Decoded { json: out, gzip: true, gzip_error })
}

/// Inflates `gzip` (multi-member streams included) 64 KiB at a time into `sink`, checking
/// the JSON's size against `budget` before each piece; `progress(compressed_bytes_done)` every
/// few MB. Returns the gzip problem that stopped it early, if any (the pieces before it are
/// the readable prefix).
///
/// # Errors
/// [`TooBig`] when the JSON passes `budget`, or what `sink` returns.
fn inflate(
    gzip: &[u8],
    budget: Budget,
    progress: &mut dyn FnMut(u64),
    sink: &mut dyn FnMut(&[u8]) -> Result<(), TooBig>,
) -> Result<Option<String>, TooBig> {
    let total = gzip.len() as u64;
    let mut counter = CountingReader { inner: gzip, done: 0, next_report: 0, progress };
    let mut decoder = flate2::read::MultiGzDecoder::new(&mut counter);
    let mut buf = vec![0u8; 1 << 16];
    let mut inflated = 0u64;
    loop {
        match decoder.read(&mut buf) {
            Ok(0) => return Ok(None),
            Ok(n) => {
                inflated += n as u64;
                budget.check_inflated(inflated, decoder.get_ref().done, total)?;
                sink(&buf[..n])?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Ok(Some(e.to_string())),
        }
    }
}

/// The JSON buffer's first capacity for `gzip`: its trailer's ISIZE (the last member's size
/// mod 2^32, exact for a single-member trace a tab can hold) when plausible, else 8x the
/// compressed size; never over `max`.
fn first_capacity(gzip: &[u8], max: usize) -> usize {
    let compressed = gzip.len() as u64;
    let stated = gzip.last_chunk::<4>().map(|b| u64::from(u32::from_le_bytes(*b)));
    let guess = match stated {
        Some(n) if n >= compressed && n <= compressed.saturating_mul(PLAUSIBLE_RATIO) => n,
        _ => compressed.saturating_mul(8),
    };
    usize::try_from(guess).unwrap_or(usize::MAX).min(max)
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
