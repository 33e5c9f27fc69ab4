//! What bounds a step: the critical path through the step's dependency graph, what it is
//! bound by, and what-if answers recomputed from the same graph.
//!
//! **Inputs and outputs.** A loaded [`Trace`] and its [`Steps`]; [`analyze`] returns one
//! [`StepPath`] per step (for a trace without steps, one for the capture window), [`what_if`]
//! the same steps' times after [`Edit`]s. Times are i64 ns from the trace origin.
//!
//! **The graph** ([`graph`]), per step span `[start, end]`: nodes are moments (a CPU thread's
//! slice boundaries, a device activity's start and end, the step's start and end); edges carry
//! time and say what it was spent on ([`BoundBy`]) and on which slice:
//! - a CPU thread is a chain of segments between the boundaries of its ops, runtime calls and
//!   annotations; a segment is spent in its innermost slice (time outside any op is Python /
//!   framework overhead); another thread's work begins after a hand-off from the step's thread,
//!   and a gap of the step's thread that another thread's work fills waits for it (backward);
//! - launch: runtime call start -> its kernel / memcpy / memset (CUDA-graph launches -> every
//!   replayed kernel); stream order: an activity waits for the previous one on its stream;
//! - a blocking call (`*Synchronize`, `cudaMemcpy*`) ends after the GPU work it waited for:
//!   the latest activity launched before it that ends inside it, on the stream its `cuda_sync`
//!   record names when the trace has them ([`sync_record`]);
//! - a cross-stream wait: from a recorded `cudaStreamWaitEvent` when the trace has `cuda_sync`
//!   records; else an activity that neither its launch nor its stream explains, starting right
//!   after another stream's activity ends.
//!
//! Edge weights reproduce the observed schedule exactly: the edge that bound a node (the
//! latest of its causes) weighs the observed delay, the others at most a typical delay (the
//! trace's median launch delay and kernel-to-kernel gap), so recomputing every node as the
//! latest of `cause + weight` gives back the step's end ([`schedule`]). The critical path is
//! the chain of binding edges from the step's end back to its start: its edges cover the step
//! with no moment unaccounted. A what-if ([`edit`]) scales weights and recomputes.
//!
//! **Where we differ from HTA 0.5.0** (docs/definitions.md "Critical path"): HTA weighs idle
//! CPU time and blocking calls 0 and returns from the GPU only through `cuda_sync` events, so its
//! path can be shorter than the step; ours covers the step: time between ops is Python /
//! framework overhead, and a blocking call waits for the GPU work it ended after.
//!
//! **Cost.** Per step O(k log k) over its k slices (binary searches into each lane's sorted
//! slices); a what-if re-runs the O(k) forward pass over graphs already built.

pub mod edit;
mod graph;
mod schedule;
mod sync_record;

pub use edit::{Edit, EditError};

use crate::analysis::steps::Steps;
use crate::model::{Trace, NONE};
use graph::{Graph, Prepared};

/// What an edge of the path spent its time on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum BoundBy {
    /// Inside a CPU op or runtime call.
    CpuOp,
    /// On the CPU outside any op: Python, framework dispatch, annotations' own time.
    CpuOverhead,
    /// Inside a DataLoader span.
    DataLoading,
    /// From a launch call's start to its activity's start, the stream being empty.
    LaunchDelay,
    /// A compute kernel running.
    GpuCompute,
    /// A communication kernel running (NCCL, RCCL, DeepEP, ...).
    GpuCommunication,
    /// A memcpy or memset running.
    MemcpyMemset,
    /// The gap between consecutive activities on a stream (queued work).
    KernelGap,
    /// A blocking call returning after its GPU work, a cross-stream wait, or a blocking call
    /// whose GPU work the trace does not show.
    SyncWait,
}

impl BoundBy {
    /// The class holding the most time of `shares` (ties: the earlier class).
    pub fn most(shares: &Shares) -> BoundBy {
        BoundBy::ALL.into_iter().max_by_key(|c| (shares[c.index()], std::cmp::Reverse(c.index()))).unwrap_or(BoundBy::CpuOp)
    }

    /// Every class, in output order.
    pub const ALL: [BoundBy; 9] = [
        Self::CpuOp,
        Self::CpuOverhead,
        Self::DataLoading,
        Self::LaunchDelay,
        Self::GpuCompute,
        Self::GpuCommunication,
        Self::MemcpyMemset,
        Self::KernelGap,
        Self::SyncWait,
    ];

    /// Stable id (`--json`, `--what-if`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CpuOp => "cpu_op",
            Self::CpuOverhead => "cpu_overhead",
            Self::DataLoading => "data_loading",
            Self::LaunchDelay => "launch_delay",
            Self::GpuCompute => "gpu_compute",
            Self::GpuCommunication => "gpu_communication",
            Self::MemcpyMemset => "memcpy_memset",
            Self::KernelGap => "kernel_gap",
            Self::SyncWait => "sync_wait",
        }
    }

    /// Words for tables.
    pub fn label(self) -> &'static str {
        match self {
            Self::CpuOp => "CPU ops",
            Self::CpuOverhead => "Python / framework",
            Self::DataLoading => "data loading",
            Self::LaunchDelay => "launch delay",
            Self::GpuCompute => "GPU compute",
            Self::GpuCommunication => "GPU communication",
            Self::MemcpyMemset => "memcpy / memset",
            Self::KernelGap => "kernel-to-kernel gap",
            Self::SyncWait => "sync wait",
        }
    }

    /// Position in [`BoundBy::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// True for classes that run on the CPU.
    pub fn is_cpu(self) -> bool {
        matches!(self, Self::CpuOp | Self::CpuOverhead | Self::DataLoading)
    }
}

/// Time per [`BoundBy`] class, ns (index = [`BoundBy::index`]).
pub type Shares = [i64; BoundBy::ALL.len()];

/// One stretch of the critical path: a slice (or none) and what the time was spent on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathSegment {
    /// Start, ns from origin.
    pub start_ns: i64,
    /// End, ns from origin.
    pub end_ns: i64,
    /// The slice the time is attributed to, or [`NONE`] (time between ops).
    pub slice: u32,
    /// What it was spent on.
    pub class: BoundBy,
}

/// A slice's time on the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathEvent {
    /// The slice.
    pub slice: u32,
    /// Its class on the path (the class with most of its time there).
    pub class: BoundBy,
    /// ns of the path attributed to it.
    pub ns: i64,
}

/// The critical path of one step.
#[derive(Clone, Debug, PartialEq)]
pub struct StepPath {
    /// `N` of `ProfilerStep#N`, `None` for a window of the capture of a trace without steps.
    pub step: Option<u64>,
    /// Step span start, ns.
    pub start_ns: i64,
    /// Step span end, ns.
    pub end_ns: i64,
    /// Time per class; sums to `end_ns - start_ns`.
    pub shares: Shares,
    /// The path in time order, consecutive edges of one slice and class merged.
    pub segments: Vec<PathSegment>,
    /// Slices by time on the path, most first (at most [`TOP_EVENTS`]).
    pub top: Vec<PathEvent>,
    /// Nodes and edges of the step's graph.
    pub graph_size: (usize, usize),
    /// Blocking calls in the step that returned after GPU work it shows.
    pub sync_waits: u32,
}

impl StepPath {
    /// The step's wall time, ns.
    pub fn wall_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }

    /// The path's time outside the step thread's idle stretches as HTA 0.5.0 counts a path:
    /// without time between ops and sync waits (HTA weighs both 0).
    pub fn busy_ns(&self) -> i64 {
        self.wall_ns() - self.shares[BoundBy::CpuOverhead.index()] - self.shares[BoundBy::SyncWait.index()]
    }

    /// The class holding most of the path.
    pub fn bound_by(&self) -> BoundBy {
        BoundBy::most(&self.shares)
    }

    /// ns of the path inside `slice` or any slice below it on its lane (`parent` chain).
    pub fn ns_under(&self, trace: &Trace, slice: u32) -> i64 {
        self.segments.iter().filter(|s| s.slice != NONE && is_under(trace, s.slice, slice)).map(|s| s.end_ns - s.start_ns).sum()
    }
}

/// Top events kept per step.
pub const TOP_EVENTS: usize = 20;

/// Whether `slice` is `ancestor` or nested below it.
fn is_under(trace: &Trace, slice: u32, ancestor: u32) -> bool {
    trace.ancestors(slice).any(|s| s == ancestor)
}

/// The step graphs of a trace, kept for what-if answers ([`CriticalPaths::what_if`]).
pub struct CriticalPaths {
    graphs: Vec<(Option<u64>, Graph)>,
}

impl CriticalPaths {
    /// Builds the graph of every step of `steps` (complete or not), or of the capture window
    /// when there are none.
    pub fn build(trace: &Trace, steps: &Steps) -> Self {
        CriticalPaths { graphs: graphs(trace, steps).collect() }
    }

    /// Approximate heap bytes of the graphs kept.
    pub fn heap_bytes(&self) -> usize {
        self.graphs.iter().map(|(_, g)| g.heap_bytes()).sum()
    }

    /// The largest step graph's approximate heap bytes (what [`analyze`] holds at most).
    pub fn largest_graph_bytes(&self) -> usize {
        self.graphs.iter().map(|(_, g)| g.heap_bytes()).max().unwrap_or(0)
    }

    /// The critical path of every step.
    pub fn paths(&self) -> Vec<StepPath> {
        self.graphs.iter().map(|(step, g)| schedule::path(g, *step, &g.weights())).collect()
    }

    /// Every step's path after `edits` (applied together, in order): its span and shares,
    /// without segments or top events (a what-if answer needs only those, and skipping them
    /// halves its time).
    pub fn what_if(&self, trace: &Trace, edits: &[Edit]) -> Vec<StepPath> {
        let mut matcher = edit::Matcher::new(edits);
        self.graphs.iter().map(|(step, g)| schedule::shares(g, *step, &matcher.weights(trace, g))).collect()
    }
}

/// The critical path of every step (see the module docs); each step's graph is dropped once
/// its path is read.
pub fn analyze(trace: &Trace, steps: &Steps) -> Vec<StepPath> {
    graphs(trace, steps).map(|(step, g)| schedule::path(&g, step, &g.weights())).collect()
}

/// Every step's path after `edits`, in full (segments and top events too).
pub fn what_if(trace: &Trace, steps: &Steps, edits: &[Edit]) -> Vec<StepPath> {
    let mut matcher = edit::Matcher::new(edits);
    graphs(trace, steps).map(|(step, g)| schedule::path(&g, step, &matcher.weights(trace, &g))).collect()
}

/// The critical path of every step, as [`analyze`], and beside it every step's path (span
/// and shares) after each of `sets` of edits: each step's graph is built once for all of
/// them, then dropped.
pub fn analyze_with(trace: &Trace, steps: &Steps, sets: &[Vec<Edit>]) -> (Vec<StepPath>, Vec<Vec<StepPath>>) {
    let mut paths = Vec::new();
    let mut after: Vec<Vec<StepPath>> = sets.iter().map(|_| Vec::new()).collect();
    let mut matchers: Vec<edit::Matcher> = sets.iter().map(|edits| edit::Matcher::new(edits)).collect();
    for (step, g) in graphs(trace, steps) {
        paths.push(schedule::path(&g, step, &g.weights()));
        for (out, matcher) in after.iter_mut().zip(&mut matchers) {
            out.push(schedule::shares(&g, step, &matcher.weights(trace, &g)));
        }
    }
    (paths, after)
}

/// The graph of every step in order, or of the capture window of a trace without steps (cut
/// into windows of at most [`graph::WINDOW_SLICES`] slices, so memory stays bounded).
fn graphs<'a>(trace: &'a Trace, steps: &'a Steps) -> impl Iterator<Item = (Option<u64>, Graph)> + 'a {
    let prepared = Prepared::new(trace);
    let stepless = match window(trace) {
        Some((start, end)) if steps.steps.is_empty() => graph::capture_windows(trace, &prepared, start, end),
        _ => Vec::new(),
    };
    let windows = steps
        .steps
        .iter()
        .map(|s| (Some(s), s.start_ns, s.end_ns))
        .chain(stepless.into_iter().map(|(start, end)| (None, start, end)));
    windows.map(move |(step, start, end)| (step.map(|s| s.number), graph::build(trace, &prepared, start, end, step)))
}

/// The capture window of a trace without steps: first start to last end of its slices.
fn window(trace: &Trace) -> Option<(i64, i64)> {
    let s = &trace.slices;
    let start = s.start_ns.iter().copied().min()?;
    let end = (0..s.len()).map(|i| s.end_ns(i)).max()?;
    (end > start).then_some((start, end))
}
