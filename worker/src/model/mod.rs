//! Columnar trace model: strings, processes, lanes, slices, instants, counters, flows, args.
//!
//! Built once by [`builder::Builder`] from tokenizer events, then read-only. Layout:
//!
//! ```text
//! Trace ─ strings: Strings (one byte buffer + ends)
//!       ─ processes: Vec<Process>  (display order)  ─ lanes: [LaneId] (display order)
//!       ─ lanes: Vec<Lane>          lane i owns slices[lane.slices]  (contiguous range)
//!       ─ slices: Slices (struct of arrays, one row per slice, grouped by lane)
//!       ─ instants / counters / flows: small tables, time-sorted
//!       ─ args: minified raw JSON of every event's `args`, in LZ4 blocks, read on demand
//! ```
//!
//! Times are `i64` nanoseconds from [`Trace::origin_ns`] (the earliest timestamp of a
//! non-metadata event, absolute µs × 1000 as written in the file).
//!
//! Invariants (established in `builder::finish`, checked by tests): all slice columns have equal
//! length; slices of a lane are contiguous and sorted by start ascending, then duration
//! descending, then input order, so a parent precedes its children; `parent` points to an
//! earlier slice of the same lane (a `python_function` slice's parent is one too, any other
//! slice's parent is not); `row` < lane's `rows`, the last `python_rows` of them Python frames.

pub mod args;
pub mod builder;
pub mod category;
pub mod link;
mod nearly;
mod nest;
pub mod strings;

pub use args::Args;
pub use category::CatClass;
pub use strings::{StrId, Strings};

use crate::diag::Diagnostics;
use crate::json::Form;

/// Sentinel for "no slice" in `u32` slice-id columns.
pub const NONE: u32 = u32::MAX;

/// Sentinel for "no id" in the `correlation` and `external_id` columns (ids that do not fit a
/// `u32` are treated as absent).
pub const NO_ID: u32 = u32::MAX;

/// Index into [`Trace::lanes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LaneId(pub u32);

/// Whether a process holds host threads or device streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessKind {
    /// CPU process: lanes are threads.
    Cpu,
    /// GPU device: lanes are streams.
    Gpu,
}

/// A process (CPU) or device (GPU).
#[derive(Clone, Debug)]
pub struct Process {
    /// `pid` as written (number text or string).
    pub pid: StrId,
    /// Display name.
    pub name: StrId,
    /// `process_labels` metadata, if any.
    pub labels: Option<StrId>,
    /// `process_sort_index` metadata, if any.
    pub sort_index: Option<i64>,
    /// CPU or GPU.
    pub kind: ProcessKind,
    /// Lanes in display order.
    pub lanes: Vec<LaneId>,
}

/// A thread, a stream, or an async track.
#[derive(Clone, Debug)]
pub struct Lane {
    /// Index into [`Trace::processes`].
    pub process: u32,
    /// `tid` as written (async tracks: `async:` + name).
    pub tid: StrId,
    /// Display name.
    pub name: StrId,
    /// `thread_sort_index` metadata, if any.
    pub sort_index: Option<i64>,
    /// Range of this lane's slices in [`Slices`].
    pub slices: std::ops::Range<u32>,
    /// Display rows used: nesting depth of all layers, overflow sub-lanes included.
    pub rows: u16,
    /// The last `python_rows` of `rows` hold the thread's Python frames (`python_function`).
    pub python_rows: u16,
}

/// Raw `args` of an event: a span of one block of [`Trace::args`]; empty when the event had
/// none. Addressed by block, so args past 4 GiB of text stay reachable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct ArgsRef {
    /// Index of the block in the args store.
    pub block: u32,
    /// Start within the block's raw text.
    pub at: u32,
    /// Length in bytes.
    pub len: u32,
}

/// Slices as parallel columns; see the module invariants.
#[derive(Clone, Debug, Default)]
pub struct Slices {
    /// Start, ns from the trace origin.
    pub start_ns: Vec<i64>,
    /// Duration in ns (>= 0).
    pub dur_ns: Vec<i64>,
    /// Owning lane.
    pub lane: Vec<LaneId>,
    /// Name.
    pub name: Vec<StrId>,
    /// Category.
    pub cat: Vec<StrId>,
    /// Nesting depth within its layer (0 = top).
    pub depth: Vec<u16>,
    /// Display row within the lane (overflow layers below the main one).
    pub row: Vec<u16>,
    /// Enclosing slice in the same layer, or [`NONE`].
    pub parent: Vec<u32>,
    /// Raw args.
    pub args: Vec<ArgsRef>,
    /// `args.correlation`, or [`NO_ID`].
    pub correlation: Vec<u32>,
    /// `args["External id"]`, or [`NO_ID`]. Not used for linking (docs/definitions.md §1).
    pub external_id: Vec<u32>,
    /// Device activities: the launching runtime/driver call; others: [`NONE`].
    pub launch: Vec<u32>,
    /// Byte offset of the event in the decompressed input.
    pub offset: Vec<u64>,
}

impl Slices {
    /// Number of slices.
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    /// True when there are no slices.
    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    /// End of slice `i` in ns.
    pub fn end_ns(&self, i: usize) -> i64 {
        self.start_ns[i] + self.dur_ns[i]
    }
}

/// Instant events (`i`, `I`, `n`, async steps), sorted by time.
#[derive(Clone, Debug, Default)]
pub struct Instants {
    /// Time, ns from origin.
    pub ts_ns: Vec<i64>,
    /// Lane of a thread-scoped instant; `LaneId(NONE)` for global and process scope.
    pub lane: Vec<LaneId>,
    /// Name.
    pub name: Vec<StrId>,
    /// Category.
    pub cat: Vec<StrId>,
    /// Raw args.
    pub args: Vec<ArgsRef>,
}

/// Counter samples (`C`), sorted by time.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Time, ns from origin.
    pub ts_ns: Vec<i64>,
    /// Process index.
    pub process: Vec<u32>,
    /// Counter name.
    pub name: Vec<StrId>,
    /// Raw args: one number per series.
    pub args: Vec<ArgsRef>,
}

/// A flow bound at both ends, from a slice to a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Flow {
    /// Slice where the flow starts (or continues from).
    pub from: u32,
    /// Slice where it arrives.
    pub to: u32,
    /// Flow category (e.g. `ac2g`).
    pub cat: StrId,
}

/// Counts of events by kind, as read (before any modelling).
#[derive(Clone, Debug, Default)]
pub struct EventStats {
    /// Event objects in the event array.
    pub events: u64,
    /// Count per `ph` string id (index = `StrId`).
    pub by_phase: Vec<u64>,
    /// Count per `cat` string id (index = `StrId`).
    pub by_category: Vec<u64>,
}

/// The loaded trace.
#[derive(Clone, Debug)]
pub struct Trace {
    /// String pool.
    pub strings: Strings,
    /// Class of every string used as a category (index = `StrId`; `Other` for the rest).
    pub cat_class: Vec<CatClass>,
    /// Processes and devices in display order.
    pub processes: Vec<Process>,
    /// All lanes (index = `LaneId`).
    pub lanes: Vec<Lane>,
    /// Slices grouped by lane.
    pub slices: Slices,
    /// Instants.
    pub instants: Instants,
    /// Counters.
    pub counters: Counters,
    /// Bound flows, ordered by source slice.
    pub flows: Vec<Flow>,
    /// Flow endpoints that found no partner or no slice.
    pub flows_unlinked: u64,
    /// Minified raw args of all events.
    pub args: Args,
    /// Absolute time of the origin, ns (file µs × 1000).
    pub origin_ns: i64,
    /// End of the last event, ns from origin.
    pub end_ns: i64,
    /// Top-level keys other than `traceEvents`, as raw JSON text.
    pub top_level: Vec<(String, String)>,
    /// Event counts as read.
    pub stats: EventStats,
    /// Recoverable problems.
    pub diagnostics: Diagnostics,
    /// Input ended before the event array was closed.
    pub truncated: bool,
    /// Top-level form.
    pub form: Form,
    /// The annotation that marks steps instead of `ProfilerStep#N` (inference servers and
    /// scripts have none): slices of exactly this name, or starting with it when it ends in
    /// `*`, become steps numbered 0, 1, ... in time order (`--step-marker`).
    pub step_marker: Option<String>,
}

impl Trace {
    /// Slice `i` and the slices enclosing it on its lane, innermost first; at most `u16::MAX`
    /// of them, so a corrupt parent chain cannot loop.
    pub fn ancestors(&self, i: u32) -> impl Iterator<Item = u32> + '_ {
        let parent = &self.slices.parent;
        std::iter::successors(Some(i), |&s| parent.get(s as usize).copied().filter(|&p| p != NONE)).take(usize::from(u16::MAX))
    }

    /// Slice ids of the kernels starting in `range` (all kernels when `None`), lane by lane.
    pub fn kernels_in(&self, range: Option<(i64, i64)>) -> Vec<u32> {
        let (t0, t1) = range.unwrap_or((i64::MIN, i64::MAX));
        let s = &self.slices;
        let mut out = Vec::new();
        for lane in &self.lanes {
            let (lo, hi) = (lane.slices.start as usize, lane.slices.end as usize);
            let Some(starts) = s.start_ns.get(lo..hi) else {
                continue;
            };
            let a = lo + starts.partition_point(|&t| t < t0);
            let b = lo + starts.partition_point(|&t| t < t1);
            out.extend((a..b).filter(|&i| self.class(s.cat[i]) == CatClass::Kernel).map(|i| i as u32));
        }
        out
    }

    /// The class of category `cat`.
    pub fn class(&self, cat: StrId) -> CatClass {
        self.cat_class.get(cat.0 as usize).copied().unwrap_or_default()
    }

    /// The raw JSON text of one event's args (`{}` when none); loops read through
    /// `trace.args.reader()`, which keeps the block it inflated.
    pub fn args_text(&self, args: ArgsRef) -> String {
        self.args.text(args)
    }

    /// Approximate heap bytes of the model (columns, strings, args).
    pub fn heap_bytes(&self) -> usize {
        let s = &self.slices;
        let args = std::mem::size_of::<ArgsRef>();
        let per_slice = 8 + 8 + 4 + 4 + 4 + 2 + 2 + 4 + args + 4 + 4 + 4 + 8;
        s.start_ns.capacity() * per_slice
            + self.instants.ts_ns.capacity() * (8 + 4 + 4 + 4 + args)
            + self.counters.ts_ns.capacity() * (8 + 4 + 4 + args)
            + self.flows.capacity() * std::mem::size_of::<Flow>()
            + self.args.heap_bytes()
            + self.strings.heap_bytes()
            + self.lanes.capacity() * std::mem::size_of::<Lane>()
    }
}
