//! How much trace a browser tab can hold, and the one sentence that says a trace is bigger.
//!
//! What: the page's load worker is one wasm32 instance, so everything a load holds at once
//! shares 4 GiB of linear memory. A streamed load (the default: the JSON is parsed as it
//! arrives and never held whole) holds the model being built (args packed), its growth, the
//! index and the first tables; it needs at its peak at most [`FIXED`] plus
//! [`STREAMED_PEAK_TENTHS`] / 10 bytes per JSON byte, so [`Budget::TAB`] is
//! (4 GiB - [`RESERVE`] - [`FIXED`]) / that. A load split across parse workers
//! (`?workers=N`) also holds the whole JSON (one buffer: at most `isize::MAX` bytes there) and
//! the parts coming back: [`SPLIT_PEAK_TENTHS`], so [`Budget::held_whole`] is smaller. Both peaks
//! are measured on the real fixtures (`worker/tests/budget.rs` fails if one comes within 20%;
//! a trace just under the budget opens in the page: docs/performance.md#big-traces).
//!
//! Where it is checked, before the memory it guards is taken: the size a file declares
//! (`intake::Incoming::open`), the bytes that actually arrive (`Incoming::append`), and the JSON
//! a gzip inflates to, while it inflates (`input::decode`), so a gzip bomb stops at the budget,
//! not at the end of the memory. The CLI loads natively with [`Budget::UNLIMITED`].
//!
//! Output: a [`TooBig`], whose [`TooBig::sentence`] says how big the trace is, what the tab
//! holds and what to do instead; the page shows it as the load's error (kind `too-big`).

use crate::report::memory::bytes;
use protocol::LoadError;

/// A wasm32 instance's whole address space, bytes (4 GiB).
pub const WASM32_MEMORY: u64 = 4 << 30;

/// The largest buffer on wasm32 (`isize::MAX` there): the JSON is one buffer.
pub const WASM32_LARGEST_BUFFER: u64 = (1 << 31) - 1;

/// Memory kept out of the budget: the worker's code, stack and allocator slack (wasm memory
/// never shrinks, and a freed block is not always reusable for the next, larger one), bytes.
pub const RESERVE: u64 = 512 << 20;

/// What a streamed load holds whatever the trace's size, bytes: the 8 MiB piece being parsed
/// and the unread tail it carries over, the args block being filled, the first tables' rows.
pub const FIXED: u64 = 64 << 20;

/// Peak bytes of the load worker's memory per JSON byte of a streamed load beyond [`FIXED`],
/// in tenths (7 = 0.7 bytes). Measured natively by counting every allocation of the load
/// worker's path (8 MiB pieces copied in and parsed, the model growing by doubling, finish,
/// index, first tables) on six real fixtures inflated to 42-68 MB and to twice that: the
/// growth per JSON byte between the two sizes is 0.13 to 0.554 (df_index, 2026-11-29), and the whole peak at 400 MB
/// 0.38 to 0.54 per JSON byte; 0.7 leaves a quarter more for traces shaped otherwise (the
/// allocator's slack is in [`RESERVE`]).
pub const STREAMED_PEAK_TENTHS: u64 = 7;

/// The same for a load split across parse workers (the JSON held whole, the parts decoded next
/// to it, then merged): 1.25 to 1.41 on the same fixtures, so 2.0.
pub const SPLIT_PEAK_TENTHS: u64 = 20;

/// The most JSON a load may hold, bytes, and the peak per JSON byte that sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    max_json_bytes: u64,
    peak_tenths: u64,
}

/// Unlimited: an engine's default is native memory.
impl Default for Budget {
    fn default() -> Self {
        Self::UNLIMITED
    }
}

impl Budget {
    /// What a browser tab's load worker holds, streamed: 5,272,839,314 bytes (5.27 GB) of JSON.
    pub const TAB: Budget = Budget { max_json_bytes: (WASM32_MEMORY - RESERVE - FIXED) * 10 / STREAMED_PEAK_TENTHS, peak_tenths: STREAMED_PEAK_TENTHS };

    /// No limit (the CLI: native memory).
    pub const UNLIMITED: Budget = Budget { max_json_bytes: u64::MAX, peak_tenths: STREAMED_PEAK_TENTHS };

    /// A streamed budget of `max_json_bytes` (tests lower it to stay fast).
    pub const fn new(max_json_bytes: u64) -> Self {
        Self { max_json_bytes, peak_tenths: STREAMED_PEAK_TENTHS }
    }

    /// The budget of a load held whole and split across parse workers, in the memory this
    /// (streamed) budget stands for: 1.88 GB of JSON for [`Budget::TAB`]; no limit stays none.
    pub const fn held_whole(self) -> Self {
        if self.max_json_bytes == u64::MAX {
            return self;
        }
        let memory = self.max_json_bytes.saturating_mul(self.peak_tenths) / 10 + FIXED;
        let fits = memory * 10 / SPLIT_PEAK_TENTHS;
        let max = if fits < WASM32_LARGEST_BUFFER { fits } else { WASM32_LARGEST_BUFFER };
        Self { max_json_bytes: max, peak_tenths: SPLIT_PEAK_TENTHS }
    }

    /// Peak bytes per JSON byte this budget assumes.
    pub fn peak_per_json_byte(self) -> f64 {
        self.peak_tenths as f64 / 10.0
    }

    /// The most JSON a load may hold, bytes.
    pub const fn max_json_bytes(self) -> u64 {
        self.max_json_bytes
    }

    /// Checks a file of `bytes` (declared, or received so far when `at_least`): a file is never
    /// smaller than its JSON (a gzip inflates to more), so a file over the budget is refused.
    ///
    /// # Errors
    /// [`TooBig`] when `bytes` exceeds the budget.
    pub fn check_file(self, bytes: u64, at_least: bool) -> Result<(), TooBig> {
        if bytes <= self.max_json_bytes {
            return Ok(());
        }
        Err(TooBig { size: Size::File { bytes, at_least }, budget: self })
    }

    /// Checks a gzip that has inflated to `json_bytes` from the first `read` of its
    /// `file_bytes` compressed bytes.
    ///
    /// # Errors
    /// [`TooBig`] when `json_bytes` exceeds the budget.
    pub fn check_inflated(self, json_bytes: u64, read: u64, file_bytes: u64) -> Result<(), TooBig> {
        if json_bytes <= self.max_json_bytes {
            return Ok(());
        }
        Err(TooBig { size: Size::Inflating { json_bytes, read, file_bytes }, budget: self })
    }

    /// Makes room for `n` more bytes in `buffer` (whose new length the caller has checked
    /// against this budget): doubling as `Vec` does, but never past the budget, so a buffer
    /// near it does not ask for twice its size.
    ///
    /// # Errors
    /// [`TooBig`] (out of memory) when the allocation fails.
    pub fn grow(self, buffer: &mut Vec<u8>, n: usize) -> Result<(), TooBig> {
        if buffer.capacity() - buffer.len() >= n {
            return Ok(());
        }
        let max = usize::try_from(self.max_json_bytes).unwrap_or(usize::MAX);
        let need = buffer.len().saturating_add(n);
        let want = buffer.capacity().saturating_mul(2).clamp(need, max.max(need));
        buffer
            .try_reserve_exact(want - buffer.len())
            .map_err(|_| TooBig::out_of_memory(buffer.len() as u64, self))
    }
}

/// How big a refused trace was found to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// The file is `bytes` long (declared), or longer (`at_least`: bytes received so far).
    File { bytes: u64, at_least: bool },
    /// A gzip had inflated to `json_bytes` of JSON from the first `read` of its `file_bytes`.
    Inflating { json_bytes: u64, read: u64, file_bytes: u64 },
    /// The memory ran out at `bytes` (held or inflated so far), below the budget: other traces
    /// (a comparison baseline, a run's ranks) hold the rest.
    OutOfMemory { bytes: u64 },
}

/// A trace refused for its size, before the memory ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooBig {
    /// How big it was found to be.
    pub size: Size,
    /// The budget it exceeds.
    pub budget: Budget,
}

impl TooBig {
    /// The memory ran out at `bytes` under `budget`.
    pub fn out_of_memory(bytes: u64, budget: Budget) -> Self {
        Self { size: Size::OutOfMemory { bytes }, budget }
    }

    /// One sentence for a person: how big the trace named `name` is, what this tab holds, what
    /// to do instead. The name goes last (it is user text).
    pub fn sentence(&self, name: &str) -> String {
        let max = bytes_u64(self.budget.max_json_bytes);
        let why = format!("4 GiB of wasm memory, about {:.1} bytes per JSON byte while loading", self.budget.peak_per_json_byte());
        let todo = format!(
            "capture fewer steps (torch.profiler.schedule(wait=1, warmup=1, active=2)) or read it on \
             the command line with kinetoscope report {name:?}"
        );
        let what = match self.size {
            Size::File { bytes: n, at_least: false } => format!("This trace is {}", bytes_u64(n)),
            Size::File { bytes: n, at_least: true } => format!("This trace is over {}", bytes_u64(n)),
            Size::Inflating { json_bytes, read, file_bytes } => {
                // The rest inflates at the rate so far: exact for a uniform bomb, close for a trace.
                let projected = (json_bytes as f64 * file_bytes as f64 / read.max(1) as f64) as u64;
                format!(
                    "This trace inflates to over {} of JSON (from the first {} of its {} of gzip: \
                     about {} at that rate)",
                    bytes_u64(json_bytes),
                    bytes_u64(read),
                    bytes_u64(file_bytes),
                    bytes_u64(projected.max(json_bytes)),
                )
            }
            Size::OutOfMemory { bytes: n } => format!(
                "This tab ran out of memory at {} of this trace, below the {max} of JSON it can \
                 hold ({why}) because a comparison baseline or a run's traces take the rest: close \
                 them, {todo}",
                bytes_u64(n)
            ),
        };
        match self.size {
            Size::OutOfMemory { .. } => what,
            _ => format!("{what}, more than the {max} of JSON a browser tab can hold ({why}): {todo}"),
        }
    }

    /// The load error the page shows: kind `too-big`, [`TooBig::sentence`] as the message.
    pub fn to_load_error(&self, name: &str) -> LoadError {
        LoadError { kind: "too-big".into(), message: self.sentence(name), offset: None, line: None, column: None }
    }
}

/// [`bytes`] for a `u64` (saturating; traces are far below `i64::MAX` bytes).
fn bytes_u64(n: u64) -> String {
    bytes(i64::try_from(n).unwrap_or(i64::MAX))
}
