//! A gzip inflated as its bytes arrive (a download, a file read in slices): each piece of
//! compressed bytes goes in, and the JSON it inflates to is written to `W` (the streamed parse)
//! as it comes, checked against the budget first. Neither the gzip nor its JSON is kept whole,
//! and inflating overlaps the download.
//!
//! A corrupt or truncated gzip is not fatal: what inflated before the problem stays written,
//! and [`Gunzip::finish`] says what stopped it, as `input::decode` does for a gzip held whole.

use crate::budget::{Budget, TooBig};
use flate2::write::MultiGzDecoder;
use std::io::{self, Write};

/// A gzip being inflated into `W`; see the module docs.
pub struct Gunzip<W: Write + Default> {
    decoder: MultiGzDecoder<Checked<W>>,
    /// What stopped inflating early, if anything: later bytes are not read.
    error: Option<String>,
}

/// `W` behind the budget: refuses the write that would pass it.
struct Checked<W> {
    out: W,
    budget: Budget,
    inflated: u64,
    /// Compressed bytes read so far, and the gzip's size (declared, else read so far).
    read: u64,
    total: Option<u64>,
    too_big: Option<TooBig>,
}

impl<W: Write> Write for Checked<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let inflated = self.inflated + buf.len() as u64;
        if let Err(too_big) = self.budget.check_inflated(inflated, self.read, self.total.unwrap_or(self.read)) {
            self.too_big = Some(too_big);
            return Err(io::Error::other("over the budget"));
        }
        self.inflated = inflated;
        self.out.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl<W: Write + Default> Gunzip<W> {
    /// Inflates into `out` under `budget`; `declared`: the gzip's size, if its source says.
    pub fn new(out: W, budget: Budget, declared: Option<u64>) -> Self {
        let checked = Checked { out, budget, inflated: 0, read: 0, total: declared, too_big: None };
        Self { decoder: MultiGzDecoder::new(checked), error: None }
    }

    /// Inflates the next compressed `bytes`.
    ///
    /// # Errors
    /// [`TooBig`] when the JSON passes the budget.
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<(), TooBig> {
        while !bytes.is_empty() && self.error.is_none() {
            match self.decoder.write(bytes) {
                Ok(0) => break,
                Ok(n) => {
                    bytes = &bytes[n..];
                    // Counted as consumed: the sentence's "from the first N of its gzip".
                    self.decoder.get_mut().read += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => self.failed(&e)?,
            }
        }
        Ok(())
    }

    /// The decoder failed with `e`: over the budget (an error), or a gzip problem that stops
    /// inflating (kept for [`Gunzip::finish`]).
    fn failed(&mut self, e: &io::Error) -> Result<(), TooBig> {
        if let Some(too_big) = self.decoder.get_mut().too_big.take() {
            return Err(too_big);
        }
        self.error = Some(e.to_string());
        Ok(())
    }

    /// Ends the gzip: `W` and what stopped inflating early (corrupt data, or the input ended
    /// inside a member), if anything.
    ///
    /// # Errors
    /// [`TooBig`] when the last JSON passes the budget.
    pub fn finish(mut self) -> Result<(W, Option<String>), TooBig> {
        if self.error.is_none() {
            if let Err(e) = self.decoder.try_finish() {
                self.failed(&e)?;
            }
        }
        // The decoder gives its writer back only from a finished stream: take the output instead.
        Ok((std::mem::take(&mut self.decoder.get_mut().out), self.error))
    }
}
