//! What the timeline draws: layout, tiles, slice details, search, counters, findings and the
//! kernel histogram.

use serde::{Deserialize, Serialize};

/// Kernel durations binned: `counts[i]` kernels lasted `[min_ns + i·width_ns, + width_ns)`
/// (the last bin includes `max_ns`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Histogram {
    /// Kernel name.
    pub name: String,
    /// Shortest duration, ns.
    pub min_ns: i64,
    /// Longest duration, ns.
    pub max_ns: i64,
    /// Bin width, ns (>= 1).
    pub width_ns: i64,
    /// Kernels per bin.
    pub counts: Vec<u64>,
    /// All kernels of that name.
    pub total: u64,
    /// Median duration, ns.
    pub median_ns: i64,
}

/// What the timeline lays out: groups of lanes in display order and the profiler steps.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Layout {
    /// End of the last event, ns from the origin (the origin is 0).
    pub end_ns: i64,
    /// Processes and devices in display order.
    pub groups: Vec<LaneGroup>,
    /// `ProfilerStep#N` spans on the host, in time order.
    pub steps: Vec<StepMark>,
    /// The step a stacked panel's layout (`Query::Layout`) picked: the stacked compare view
    /// puts its start at time 0. `None` in the main timeline's layout, or when the trace has no
    /// step.
    #[serde(default)]
    pub focus: Option<StepMark>,
    /// The time of this trace (ns) a stacked view draws at its time 0: the focus step's start
    /// when aligned at a step; for a run's rank aligned `Recorded` / `Collectives`, where the
    /// run's shared axis starts in this trace's time (0 or negative). 0 in the main layout.
    #[serde(default)]
    pub origin_ns: i64,
}

/// A process or device and its lanes.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LaneGroup {
    /// Display name.
    pub name: String,
    /// `cpu` or `gpu`.
    pub kind: String,
    /// Device id for GPU groups (matches [`CounterSeries::device`]).
    pub device: Option<i64>,
    /// Lanes in display order.
    pub lanes: Vec<LaneInfo>,
    /// Starts folded (a stacked rank's CPU threads other than its main one).
    #[serde(default)]
    pub folded: bool,
}

/// One lane of the timeline.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LaneInfo {
    /// Lane id used by tile queries.
    pub lane: u32,
    /// Display name.
    pub name: String,
    /// Display rows (nesting depth, overflow sub-lanes included).
    pub rows: u16,
    /// First of the lane's rows shown here: a thread's Python stack is a second entry of the
    /// same lane showing the rows below its ops.
    #[serde(default)]
    pub first_row: u16,
    /// Slices on the lane.
    pub slices: u64,
}

impl LaneInfo {
    /// True when slice row `row` of the lane is shown by this entry.
    pub fn shows(&self, row: u16) -> bool {
        row >= self.first_row && row - self.first_row < self.rows
    }
}

/// One profiler step.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StepMark {
    /// The N of `ProfilerStep#N`.
    pub number: u64,
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
}

/// Tile headers; rect `r` of the set is `RECT_WORDS` `u32`s at `r * RECT_WORDS` in the buffer,
/// lanes' rects one after another in header order.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TileSet {
    /// Window start actually used (a multiple of `resolution_ns`).
    pub start_ns: i64,
    /// Window end actually used.
    pub end_ns: i64,
    /// ns per bucket (a power of two).
    pub resolution_ns: i64,
    /// Per lane: id and number of rects.
    pub lanes: Vec<(u32, u32)>,
    /// Names referenced by the rects' name words.
    pub names: Vec<String>,
}

/// `u32` words per rect: row, first bucket, end bucket, slice id, name index (bit 31 set:
/// matches the search), slices summarized.
pub const RECT_WORDS: usize = 6;

/// Bit of the name word flagging a search match.
pub const RECT_MATCH: u32 = 1 << 31;

/// A stable key of a slice: survives reparsing the same file (share links).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct SliceKey {
    /// Lane id.
    pub lane: u32,
    /// Start, ns from origin.
    pub start_ns: i64,
    /// Name.
    pub name: String,
    /// Which of the lane's slices with this start and name (0 = the longest).
    pub nth: u32,
}

/// A slice mentioned by another's details.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SliceRef {
    /// Slice id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Lane id.
    pub lane: u32,
    /// Display row in the lane.
    pub row: u16,
    /// Start, ns.
    pub start_ns: i64,
    /// Duration, ns.
    pub dur_ns: i64,
}

/// The details panel's content.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SliceDetails {
    /// The slice itself.
    pub slice: SliceRef,
    /// Its stable key.
    pub key: SliceKey,
    /// Category.
    pub cat: String,
    /// Lane display name.
    pub lane_name: String,
    /// Display row in the lane.
    pub row: u16,
    /// Duration minus its children's.
    pub self_ns: i64,
    /// Args as (key, value JSON text), in file order.
    pub args: Vec<(String, String)>,
    /// Enclosing slice.
    pub parent: Option<SliceRef>,
    /// Children (capped) and their total.
    pub children: Vec<SliceRef>,
    /// All children.
    pub children_total: u32,
    /// The runtime / driver call that launched this device activity (correlation or flow).
    pub launched_by: Option<SliceRef>,
    /// Device activities this call launched (capped).
    pub launched: Vec<SliceRef>,
    /// Flow partners: slices with a flow into this one.
    pub flows_in: Vec<SliceRef>,
    /// Flow partners: slices this one has a flow to.
    pub flows_out: Vec<SliceRef>,
    /// Innermost CPU op enclosing the slice (for a device activity: its launch call's).
    pub op: Option<SliceRef>,
    /// A kernel inside a CUDA graph: its graph, node and graph launch.
    pub graph: Option<GraphNode>,
    /// A Triton / compiled kernel, or the op launching one: its source (`kernel_file`).
    pub source: Option<KernelSource>,
    /// A kernel with known work: FLOPs, bytes and rates over its duration (details only, not
    /// hover).
    #[serde(default)]
    pub work: Option<crate::SliceWork>,
}

/// A kernel's place in a CUDA graph (docs/definitions.md, "CUDA graphs").
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct GraphNode {
    /// `graph id`, when the kernel carries one (ROCm kernels do not).
    pub graph_id: Option<i64>,
    /// `graph node id`, when the kernel carries one.
    pub node_id: Option<i64>,
    /// The graph launch call (`cudaGraphLaunch` ...), when linked.
    pub launch: Option<SliceRef>,
    /// Kernels that launch ran.
    pub launch_kernels: u32,
    /// Dependency edges between the nodes that launch ran, (from, to) (capped at
    /// `GRAPH_EDGES_MAX`); the page draws them all on request.
    pub edges: Vec<(SliceRef, SliceRef)>,
    /// All such edges.
    pub edges_total: u32,
}

/// Most graph edges one details answer carries.
pub const GRAPH_EDGES_MAX: usize = 512;

/// Where a compiled kernel comes from (docs/definitions.md, "Kernel sources").
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelSource {
    /// Source file path.
    pub file: String,
    /// Line, when `kernel_file` says `path:line:fn`.
    pub line: Option<u32>,
    /// Function, when `kernel_file` says `path:line:fn`.
    pub function: Option<String>,
    /// The op carrying `kernel_file`.
    pub op: Option<SliceRef>,
}

/// One search step.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SearchHit {
    /// The text searched.
    pub text: String,
    /// Matching slices.
    pub total: u64,
    /// The match found (none when there is none in that direction).
    pub hit: Option<SliceRef>,
    /// 1-based rank of `hit` in time order, when known.
    pub rank: Option<u64>,
}

/// Counter tracks over a window.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CounterSet {
    /// Window start, ns.
    pub start_ns: i64,
    /// Bucket width, ns.
    pub bucket_ns: i64,
    /// One series per (device, metric).
    pub series: Vec<CounterSeries>,
}

/// One counter track.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CounterSeries {
    /// GPU device id, or memory device label for memory.
    pub device: i64,
    /// `utilization`, `sm_efficiency` (0..1) or `memory` (bytes).
    pub metric: String,
    /// Display label.
    pub label: String,
    /// One value per bucket (`None`: no data).
    pub values: Vec<Option<f64>>,
    /// Largest value of the whole series (for scaling memory tracks).
    pub max: f64,
}

/// A cheatsheet finding on the wire.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FindingData {
    /// Stable rule id (`dtod-before-gemm`, ...).
    pub rule: String,
    /// `info`, `warn` or `alert`.
    pub severity: String,
    /// One line with the measured numbers.
    pub title: String,
    /// Why we think so: the numbers the rule compared with its thresholds.
    pub why: String,
    /// What it usually means.
    pub meaning: String,
    /// What to try.
    pub try_this: String,
    /// Evidence slices (capped), most telling first, with their lanes and times.
    pub slices: Vec<SliceRef>,
    /// All evidence slices.
    pub total: u32,
    /// Time range of the evidence.
    pub range_ns: Option<(i64, i64)>,
    /// What fixing it could save at most per step: its evidence on the critical path, µs;
    /// `None` without evidence slices.
    #[serde(default)]
    pub impact_us: Option<f64>,
    /// The same as a share of step time, %.
    #[serde(default)]
    pub impact_pct: Option<f64>,
    /// What the finding's modelled remedy saves per step (µs), its share of step time (%)
    /// and the remedy in words; `None` where the rule has no model.
    #[serde(default)]
    pub remedy: Option<(f64, f64, String)>,
}
