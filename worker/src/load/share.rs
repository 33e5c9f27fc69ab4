//! Parts that share their bytes out: a reader that finishes its part early takes the second
//! half of what another part has not read yet, cut at an event boundary, so no core waits while
//! another still has megabytes to read. Parts of equal bytes finished 7-145 ms apart on the CLI's
//! two threads (500 MB dlrm trace), the first core idle meanwhile.
//!
//! [`Shares`] holds every part's range and how far its reader has claimed; readers claim their
//! bytes a read at a time ([`Shares::claim`]) and the idle one calls [`Shares::steal`]. No
//! threads and no I/O here: the caller reads (the CLI, `bin/kinetoscope/read.rs`), and the
//! parts, in file order ([`Shares::start`]), go to [`super::join`] as cut parts do, checked the
//! same way.

use super::cut::boundary_near;
use super::Piece;
use crate::json::Form;
use std::io;
use std::ops::Range;
use std::sync::{Mutex, PoisonError};

/// Times [`Shares::steal`] looks for a cut before giving up.
const STEAL_TRIES: usize = 3;

/// Every part's range and claimed bytes, shared by the readers.
pub struct Shares {
    parts: Mutex<Vec<Share>>,
    form: Form,
    /// Fewest unread bytes a part must have to be stolen from.
    min_steal: u64,
}

/// One part: bytes `start..end` of the file, claimed up to `next`.
#[derive(Clone, Copy, Debug)]
struct Share {
    start: u64,
    next: u64,
    end: u64,
}

impl Shares {
    /// The parts of `cuts` (from [`super::cut`]), none claimed; a part is stolen from while it
    /// has at least `min_steal` bytes unread.
    pub fn new(cuts: &[(Piece, Range<u64>)], min_steal: u64) -> Self {
        let form = cuts.first().map_or(Form::Array, |(p, _)| p.form);
        let parts = cuts.iter().map(|(_, r)| Share { start: r.start, next: r.start, end: r.end }).collect();
        Self { parts: Mutex::new(parts), form, min_steal }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Share>> {
        // A reader that panicked left the ranges consistent: every update is one assignment.
        self.parts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Claims up to `want` bytes of part `k` for its reader, which must then read them all:
    /// the range, empty once the part is read (or `k` is not a part).
    pub fn claim(&self, k: usize, want: u64) -> Range<u64> {
        let mut parts = self.lock();
        let Some(p) = parts.get_mut(k) else { return 0..0 };
        let from = p.next;
        p.next = p.end.min(from.saturating_add(want));
        from..p.next
    }

    /// A new part cut from the part with the most bytes unread: its second half, from an event
    /// boundary found by reading a window there with `read_at` (as [`super::cut`] does). Gives
    /// the new part's index (for [`Shares::claim`]), its piece and its range; `None` when no part
    /// has [`Shares::new`]'s `min_steal` bytes left or no boundary is found.
    ///
    /// # Errors
    /// The window's read.
    pub fn steal(&self, read_at: &mut dyn FnMut(u64, &mut [u8]) -> io::Result<usize>) -> io::Result<Option<(usize, Piece, Range<u64>)>> {
        // The victim reads on meanwhile: a cut it has claimed past is given up and looked for
        // again from where it stands.
        let mut window = Vec::new();
        for _ in 0..STEAL_TRIES {
            let victim = {
                let parts = self.lock();
                parts.iter().enumerate().max_by_key(|(_, p)| p.end - p.next).map(|(k, p)| (k, *p))
            };
            let Some((k, seen)) = victim.filter(|(_, p)| p.end - p.next >= self.min_steal) else { return Ok(None) };
            let guess = seen.next + (seen.end - seen.next) / 2;
            let Some(at) = boundary_near(guess, seen.end, self.form, &mut window, read_at)? else { return Ok(None) };
            let mut parts = self.lock();
            let p = &mut parts[k];
            if p.end != seen.end || p.next > at {
                continue;
            }
            p.end = at;
            parts.push(Share { start: at, next: at, end: seen.end });
            return Ok(Some((parts.len() - 1, Piece { start: at, form: self.form, first: false }, at..seen.end)));
        }
        Ok(None)
    }

    /// Where part `k` starts in the file: parts go to [`super::join`] in that order.
    pub fn start(&self, k: usize) -> u64 {
        self.lock().get(k).map_or(u64::MAX, |p| p.start)
    }
}
