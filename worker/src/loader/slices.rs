//! A range of a picked file read in slices with several reads in flight, handed on in order:
//! the windowing of every file read a worker does itself (a file read whole, a parse worker's
//! part of it). Generic over the transport's reads ([`Reads`]) and the bytes they give
//! ([`View`], a `Uint8Array` in the browser), so it is tested natively. A URL's part is read as
//! one ranged request instead (`body`).
//!
//! Invariants: at most `Shape::ahead` reads are started and not yet handed on; slices are
//! handed on in order; once the caller refuses bytes, no read is started any more.
//!
//! Why reads ahead: the browser reads a file for a worker through its own process, so a single
//! slice ahead kept the parse waiting for bytes (1.8-2.1 s of a 1 GB load).

use std::future::Future;
use std::ops::Range;
use std::pin::Pin;

/// Bytes read from a file per slice (8 MiB).
pub const SLICE_BYTES: u64 = 8 << 20;

/// Slices of a file being read at once, the one parsed next included.
pub const SLICES_AHEAD: usize = 4;

/// How a range is read: bytes per slice, slices in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Bytes per slice (the last may be shorter).
    pub slice: u64,
    /// Slices read at once, the one handed on next included.
    pub ahead: usize,
}

/// A picked file: [`SLICE_BYTES`] slices, [`SLICES_AHEAD`] in flight.
pub const FILE: Shape = Shape { slice: SLICE_BYTES, ahead: SLICES_AHEAD };

/// Bytes outside the engine's memory as the transport holds them (a `Uint8Array`): read by
/// copying them in.
pub trait View: Sized {
    /// Its length, bytes.
    fn length(&self) -> u32;
    /// Its bytes `at..to` (within its length), without copying them.
    fn sub(&self, at: u32, to: u32) -> Self;
    /// Copies its bytes into `into`, which has its length.
    fn copy_to(&self, into: &mut [u8]);
}

/// A read started: the bytes of a slice, or the transport's words for why not.
pub type Reading<V> = Pin<Box<dyn Future<Output = Result<V, String>>>>;

/// The transport's reads of one input, and its clock.
pub trait Reads {
    /// The bytes a read gives.
    type View: View;
    /// How this input is read.
    fn shape(&self) -> Shape;
    /// Starts reading `range` at once (not when awaited).
    ///
    /// # Errors
    /// The transport's words when the read cannot start.
    fn start(&self, range: Range<u64>) -> Result<Reading<Self::View>, String>;
    /// Milliseconds on the worker's clock.
    fn now_ms(&self) -> f64;
}

/// The slices `range` is read in, in order, `slice` bytes each (at least 1) but the last.
pub fn split(range: Range<u64>, slice: u64) -> impl Iterator<Item = Range<u64>> {
    let (end, slice) = (range.end, slice.max(1));
    (range.start..end).step_by(usize::try_from(slice).unwrap_or(usize::MAX)).map(move |at| at..at.saturating_add(slice).min(end))
}

/// Reads `range` of `from` in slices, several in flight, and calls `each` with every slice in
/// order until it returns false. The ms spent waiting for reads, or `None` when `each`
/// stopped the read.
///
/// # Errors
/// The transport's words when a slice cannot be read.
pub async fn read_slices<R: Reads>(from: &R, range: Range<u64>, mut each: impl FnMut(&R::View) -> bool) -> Result<Option<f64>, String> {
    let shape = from.shape();
    let mut slices = split(range, shape.slice);
    let (mut ahead, mut waited_ms) = (std::collections::VecDeque::new(), 0.0);
    for first in slices.by_ref().take(shape.ahead) {
        ahead.push_back(from.start(first)?);
    }
    while let Some(reading) = ahead.pop_front() {
        let asked = from.now_ms();
        let view = reading.await?;
        waited_ms += from.now_ms() - asked;
        if let Some(next) = slices.next() {
            ahead.push_back(from.start(next)?);
        }
        if !each(&view) {
            return Ok(None);
        }
    }
    Ok(Some(waited_ms))
}

/// Bytes in native memory (the loader's tests drive it with them): a `Vec` whose views are
/// copies.
impl View for Vec<u8> {
    fn length(&self) -> u32 {
        u32::try_from(self.len()).unwrap_or(u32::MAX)
    }

    fn sub(&self, at: u32, to: u32) -> Self {
        self.get(at as usize..to as usize).map(<[u8]>::to_vec).unwrap_or_default()
    }

    fn copy_to(&self, into: &mut [u8]) {
        into.copy_from_slice(self);
    }
}

/// Runs a future whose awaits are all ready (the tests' reads), to its end.
#[cfg(test)]
pub(crate) fn run_ready<T>(future: impl Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

    /// What the reads saw, in order: a read started, bytes handed on.
    #[derive(Debug, PartialEq)]
    pub enum Seen {
        Start(Range<u64>),
        Each(usize),
    }

    /// An input of `bytes`, read with `shape`; each look at its clock moves it on by half of
    /// `read_ms`; the read of the slice at `fail_at` fails.
    pub struct Input {
        pub bytes: Vec<u8>,
        pub shape: Shape,
        pub read_ms: f64,
        pub fail_at: Option<u64>,
        pub now: Cell<f64>,
        pub seen: RefCell<Vec<Seen>>,
    }

    impl Input {
        pub fn new(len: usize, shape: Shape) -> Self {
            let bytes = (0..len).map(|i| (i % 251) as u8).collect();
            Self { bytes, shape, read_ms: 0.0, fail_at: None, now: Cell::new(0.0), seen: RefCell::default() }
        }

        fn starts(&self) -> Vec<Range<u64>> {
            self.seen.borrow().iter().filter_map(|s| if let Seen::Start(r) = s { Some(r.clone()) } else { None }).collect()
        }
    }

    impl Reads for Input {
        type View = Vec<u8>;

        fn shape(&self) -> Shape {
            self.shape
        }

        fn start(&self, range: Range<u64>) -> Result<Reading<Vec<u8>>, String> {
            self.seen.borrow_mut().push(Seen::Start(range.clone()));
            if self.fail_at == Some(range.start) {
                return Err(format!("no read at {}", range.start));
            }
            let bytes = self.bytes.get(range.start as usize..range.end as usize).map(<[u8]>::to_vec).unwrap_or_default();
            Ok(Box::pin(std::future::ready(Ok(bytes))))
        }

        fn now_ms(&self) -> f64 {
            let now = self.now.get();
            self.now.set(now + self.read_ms / 2.0);
            now
        }
    }

    fn read_all(input: &Input, range: Range<u64>, stop_after: usize) -> (Result<Option<f64>, String>, Vec<u8>, Vec<usize>) {
        let (mut got, mut lens) = (Vec::new(), Vec::new());
        let out = run_ready(read_slices(input, range, |view: &Vec<u8>| {
            got.extend_from_slice(view);
            lens.push(view.len());
            input.seen.borrow_mut().push(Seen::Each(view.len()));
            lens.len() < stop_after
        }));
        (out, got, lens)
    }

    #[test]
    fn slices_come_in_order_with_reads_ahead() {
        let shape = Shape { slice: 10, ahead: 3 };
        let input = Input::new(55, shape);
        let (out, got, lens) = read_all(&input, 3..55, usize::MAX);
        assert_eq!(out, Ok(Some(0.0)));
        assert_eq!(got, input.bytes[3..55]);
        assert_eq!(lens, [10, 10, 10, 10, 10, 2]);
        // Three in flight before the first is handed on, the next started as each arrives.
        use Seen::{Each, Start};
        let seen = [Start(3..13), Start(13..23), Start(23..33), Start(33..43), Each(10), Start(43..53), Each(10), Start(53..55)];
        assert_eq!(*input.seen.borrow(), seen.into_iter().chain([Each(10), Each(10), Each(10), Each(2)]).collect::<Vec<_>>());
    }

    #[test]
    fn a_refused_slice_stops_the_reads() {
        let input = Input::new(100, Shape { slice: 10, ahead: 2 });
        let (out, got, _) = read_all(&input, 0..100, 2);
        assert_eq!(out, Ok(None));
        assert_eq!(got, input.bytes[..20]);
        // The two in flight, and one started per slice handed on before the refusal.
        assert_eq!(input.starts(), [0..10, 10..20, 20..30, 30..40]);
    }

    #[test]
    fn a_failed_read_is_the_error_and_time_waited_adds_up() {
        let mut input = Input::new(40, Shape { slice: 10, ahead: 2 });
        input.fail_at = Some(20);
        let (out, got, _) = read_all(&input, 0..40, usize::MAX);
        // The third read starts (and fails) before the first slice is handed on.
        assert_eq!(out, Err("no read at 20".into()));
        assert!(got.is_empty());
        let mut input = Input::new(30, Shape { slice: 10, ..FILE });
        input.read_ms = 4.0;
        // Each of the three awaits is timed by two looks at the clock, 2 ms apart here.
        assert_eq!(read_all(&input, 0..30, usize::MAX).0, Ok(Some(6.0)));
        assert_eq!(read_all(&Input::new(0, FILE), 0..0, usize::MAX).0, Ok(Some(0.0)));
    }
}
