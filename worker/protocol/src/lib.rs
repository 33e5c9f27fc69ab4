//! Wire types between the Kinetoscope app (main thread) and its engine worker.
//!
//! Control messages are JSON strings (serde); bulk bytes (file chunks) travel beside them as
//! transferred `ArrayBuffer`s, never through serde. Names are from the boundary's point of view:
//! [`ToWorker`] and [`FromWorker`]. Requests carry an `id` that replies echo.
//!
//! These are wire types, not engine structs: the engine converts its model into them, so engine
//! refactors do not change the protocol.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped on any incompatible change; the app refuses a worker that reports another version.
pub const PROTOCOL_VERSION: u32 = 6;

/// A message from the app to the worker.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type")]
pub enum ToWorker {
    /// Starts a load; chunks follow with the same id. `size` is the file size if known.
    /// `workers` caps the parse workers (default: one per core; the page's `?workers=N`).
    Open {
        id: u32,
        name: String,
        size: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workers: Option<u32>,
    },
    /// One chunk of file bytes; the bytes are the transferred buffer sent with this message.
    Chunk { id: u32 },
    /// All chunks were sent: decompress, parse and index.
    Finish { id: u32 },
    /// Drops a load in progress.
    Cancel { id: u32 },
    /// Asks for a table over the loaded trace; answered by `Table` or `QueryFailed` with `id`.
    Query { id: u32, query: Query },
}

/// A request over the loaded trace. Times are ns from the trace origin. Each query belongs to
/// a [`Channel`]: a newer query on a channel supersedes the pending one (latest wins), queries
/// on different channels run independently.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Query {
    /// PyTorch's `key_averages` table, by name or by name + input shapes.
    Ops { by_shape: bool, range_ns: Option<(i64, i64)> },
    /// Kernels grouped by name.
    Kernels { range_ns: Option<(i64, i64)> },
    /// Profiler steps with their time breakdown.
    Steps,
    /// Lane groups, lanes and step marks of `trace`: what a timeline lays out. Without `align`,
    /// every lane (the main timeline's comes with [`FromWorker::Loaded`]); with it, the stacked compare view's
    /// layout: [`Layout::focus`] is the step picked by `align` and only lanes with slices
    /// during that step are listed (all lanes with slices when the trace has no step).
    Layout {
        #[serde(default)]
        trace: TraceRef,
        #[serde(default)]
        align: Option<Align>,
    },
    /// Level-of-detail rects of `lanes` of `trace` over `[start_ns, end_ns)`, one bucket per
    /// `resolution_ns`; rects whose slice matches `search` are flagged (current trace only).
    /// Answered by [`Answer::Tiles`] with the rects in the transferred buffer.
    Tiles {
        #[serde(default)]
        trace: TraceRef,
        lanes: Vec<u32>,
        start_ns: i64,
        end_ns: i64,
        resolution_ns: i64,
        search: Option<String>,
    },
    /// Everything the details panel shows about one slice.
    Details { slice: u32 },
    /// The same for the hover tooltip (its own channel, so hovering never cancels a selection),
    /// over `trace` (the stacked compare view hovers the baseline too).
    Hover {
        #[serde(default)]
        trace: TraceRef,
        slice: u32,
    },
    /// The slice a share link names by its stable key.
    Resolve { key: SliceKey },
    /// Slices whose name or an arg value contains `text`: the count, and the match after
    /// (`forward`) or before `from` (a slice id, else a time in ns).
    Search { text: String, from_slice: Option<u32>, from_ns: i64, forward: bool },
    /// GPU utilization / SM efficiency per device and allocated memory per device over
    /// `[start_ns, end_ns)` in at most `buckets` buckets.
    Counters { start_ns: i64, end_ns: i64, buckets: u32 },
    /// The cheatsheet's findings over the whole trace.
    Findings,
    /// Durations of the kernels named `name` in `bins` equal-width bins (the kernel chart).
    Histogram { name: String, bins: u32 },
    /// Keeps the loaded trace as the comparison baseline (the next load replaces only the
    /// current trace); answered by [`Answer::Baseline`].
    KeepAsBaseline,
    /// Drops the baseline; answered by [`Answer::Baseline`] with `None`.
    ClearBaseline,
    /// Compares the baseline with the loaded trace (the candidate); answered by
    /// [`Answer::Comparison`].
    Compare { by_shape: bool },
}

/// Which of the engine's traces a query addresses: the loaded one, or the comparison baseline
/// kept beside it ([`Query::KeepAsBaseline`]).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum TraceRef {
    /// The loaded trace (the candidate while comparing).
    #[default]
    Current,
    /// The baseline.
    Baseline,
}

/// The step a stacked compare layout aligns at ([`Query::Layout`]).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Align {
    /// The first step number both traces have, else the trace's first step.
    First,
    /// `ProfilerStep#N`; falls back to [`Align::First`] when the trace lacks it.
    Step(u64),
}

/// Independent request streams; see [`Query`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Channel {
    /// Op / kernel / step tables.
    Table,
    /// Layouts of the stacked compare panels (the main timeline's comes with `Loaded`).
    Layout,
    /// Timeline rects.
    Tiles,
    /// Details panel (details and stable-key resolution).
    Details,
    /// Hover tooltip.
    Hover,
    /// Search box.
    Search,
    /// Counter tracks and charts.
    Counters,
    /// Cheatsheet.
    Findings,
    /// The charts tab: its table, counter and histogram queries, sent one at a time, so they
    /// never supersede the table panel's or the timeline's (the sender picks this channel).
    Charts,
    /// Baseline and comparison.
    Compare,
    /// The stacked compare view's baseline panel: its layout and tiles (the sender picks this
    /// channel; see `Bridge::query_on`).
    StackBase,
    /// The stacked compare view's candidate panel: its layout and tiles.
    StackCand,
    /// The stacked compare view's hover tooltip (either panel).
    StackHover,
}

impl Query {
    /// The channel this query belongs to.
    pub fn channel(&self) -> Channel {
        match self {
            Query::Ops { .. } | Query::Kernels { .. } | Query::Steps => Channel::Table,
            Query::Layout { .. } => Channel::Layout,
            Query::Tiles { .. } => Channel::Tiles,
            Query::Details { .. } | Query::Resolve { .. } => Channel::Details,
            Query::Hover { .. } => Channel::Hover,
            Query::Search { .. } => Channel::Search,
            Query::Counters { .. } | Query::Histogram { .. } => Channel::Counters,
            Query::Findings => Channel::Findings,
            Query::KeepAsBaseline | Query::ClearBaseline | Query::Compare { .. } => Channel::Compare,
        }
    }
}

/// The answer to a [`Query`]; adjacently tagged (`{"kind": .., "data": ..}`) because some
/// payloads have a `kind` field of their own.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
// Answers always travel boxed (`FromWorker::Answer`), so variant sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Answer {
    /// Ops, Kernels or Steps.
    Table(TableData),
    /// Layout.
    Layout(Layout),
    /// Tiles: one header per lane; the rects travel in the message's buffer.
    Tiles(TileSet),
    /// Details, Hover or Resolve (`None`: no such slice).
    Details(Option<SliceDetails>),
    /// Search.
    Search(SearchHit),
    /// Counters.
    Counters(CounterSet),
    /// Findings.
    Findings(Vec<FindingData>),
    /// Histogram.
    Histogram(Histogram),
    /// KeepAsBaseline or ClearBaseline: the baseline's file name, `None` when there is none.
    Baseline(Option<String>),
    /// Compare.
    Comparison(Box<ComparisonData>),
}

/// A baseline / candidate comparison (issue #8): the wire form of the engine's `Comparison`
/// plus the findings diff. Deltas are `cand - base`; op and kernel values are per step when
/// `per_step`, else totals.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ComparisonData {
    /// Baseline file name.
    pub base: String,
    /// Candidate file name.
    pub cand: String,
    /// Host steps of the baseline.
    pub base_steps: u64,
    /// Host steps of the candidate.
    pub cand_steps: u64,
    /// Op and kernel values are per step (both traces have steps).
    pub per_step: bool,
    /// Op rows are matched by name + input shapes.
    pub by_shape: bool,
    /// The one-line verdict (`kinetoscope diff`'s).
    pub verdict: String,
    /// Summary rows in the CLI's order.
    pub summary: Vec<SummaryDelta>,
    /// Op diff rows, base order then rows only the candidate has.
    pub ops: Vec<OpDelta>,
    /// Kernel diff rows, same order rule.
    pub kernels: Vec<KernelDelta>,
    /// Cheatsheet findings by rule: gone, new, kept.
    pub findings: FindingsDiff,
}

/// One summary metric on both sides.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SummaryDelta {
    /// Stable key (`step_time_mean`, …; the CLI's `summary[].key`).
    pub key: String,
    /// Human label.
    pub label: String,
    /// `ns`, `pct` (0–100), `bytes` or `count`.
    pub unit: String,
    /// Baseline value (`None`: the trace lacks it).
    pub base: Option<f64>,
    /// Candidate value.
    pub cand: Option<f64>,
    /// `cand - base`.
    pub delta: Option<f64>,
    /// `(cand - base) / base`.
    pub rel_delta: Option<f64>,
}

/// Both sides of one compared column (0 on a side that lacks the row).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DeltaPair {
    /// Baseline value.
    pub base: f64,
    /// Candidate value.
    pub cand: f64,
}

/// One op diff row.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct OpDelta {
    /// Op name.
    pub name: String,
    /// Input shapes when matched by shape, else empty.
    pub input_shapes: String,
    /// A record_function / annotation row.
    pub is_annotation: bool,
    /// `appeared`, `disappeared`, `changed` or `same`.
    pub status: String,
    /// # of Calls.
    pub calls: DeltaPair,
    /// Self CPU, ns.
    pub self_cpu_ns: DeltaPair,
    /// Self CUDA, ns.
    pub self_device_ns: DeltaPair,
    /// CUDA total, ns.
    pub device_total_ns: DeltaPair,
}

/// One kernel diff row.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelDelta {
    /// Kernel name.
    pub name: String,
    /// `appeared`, `disappeared`, `changed` or `same`.
    pub status: String,
    /// Runs on tensor cores (by name).
    pub tensor_cores: bool,
    /// Calls.
    pub calls: DeltaPair,
    /// Total duration, ns.
    pub total_ns: DeltaPair,
    /// Mean duration per call, ns.
    pub mean_ns: DeltaPair,
}

/// Cheatsheet rules that fired on one side only or on both, each list in rule order.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FindingsDiff {
    /// Only in the candidate.
    pub new: Vec<FindingChange>,
    /// Only in the baseline.
    pub gone: Vec<FindingChange>,
    /// In both.
    pub kept: Vec<FindingChange>,
}

/// One rule of the findings diff with its titles on each side.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FindingChange {
    /// Rule id.
    pub rule: String,
    /// Highest severity on the sides where it fired.
    pub severity: String,
    /// The baseline's title (first finding of the rule), if it fired there.
    pub base_title: Option<String>,
    /// The candidate's title, if it fired there.
    pub cand_title: Option<String>,
}

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
    /// The step an aligned layout (`Query::Layout { align: Some(..) }`) picked: the stacked
    /// compare view puts its start at time 0. `None` otherwise, or when the trace has no step.
    #[serde(default)]
    pub focus: Option<StepMark>,
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
    /// Slices on the lane.
    pub slices: u64,
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
    /// What it usually means.
    pub meaning: String,
    /// What to try.
    pub try_this: String,
    /// Evidence slices (capped) with their lanes and times.
    pub slices: Vec<SliceRef>,
    /// All evidence slices.
    pub total: u32,
    /// Time range of the evidence.
    pub range_ns: Option<(i64, i64)>,
}

/// A small table on the wire (at most a few thousand rows, so plain serde): columns, row-major
/// cells, and named totals.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TableData {
    /// `ops`, `kernels` or `steps`.
    pub kind: String,
    /// Column descriptions, in display order.
    pub columns: Vec<Column>,
    /// One `Vec` per row, one cell per column.
    pub rows: Vec<Vec<CellValue>>,
    /// Named totals, e.g. `self_cpu_total_ns`, `self_device_total_ns`.
    pub totals: BTreeMap<String, f64>,
}

/// One column of a [`TableData`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Column {
    /// Stable key (`self_cpu`, `calls`, …); test ids use it as `col-<key>`.
    pub key: String,
    /// Header text.
    pub label: String,
    /// `ns`, `count`, `pct`, `text` or `bytes`.
    pub unit: String,
}

/// One cell: an integer, a float, text, or nothing (JSON `null`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum CellValue {
    /// Exact integer (ns, counts, bytes).
    Int(i64),
    /// Float (percentages, averages).
    Float(f64),
    /// Text (names, shapes).
    Text(String),
    /// No value.
    Empty,
}

/// A message from the worker to the app.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type")]
pub enum FromWorker {
    /// First message after the worker's wasm has started.
    Ready { protocol_version: u32 },
    /// Work in progress on load `id`.
    Progress { id: u32, phase: Phase, done_bytes: u64, total_bytes: Option<u64> },
    /// Load `id` finished; the trace is indexed. Its summary and the timeline's layout come
    /// attached, so the page can ask for the first tiles without another round trip.
    Loaded { id: u32, summary: Box<TraceSummary>, layout: Box<Layout> },
    /// Load `id` failed; nothing was kept.
    Failed { id: u32, error: LoadError },
    /// The answer to query `id` (tiles carry their rects in the message's buffer).
    Answer { id: u32, answer: Box<Answer> },
    /// Query `id` could not be answered (e.g. no trace loaded).
    QueryFailed { id: u32, message: String },
}

/// Stage of a load, for the progress bar.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Receiving bytes from the app.
    Reading,
    /// Gunzipping.
    Decompressing,
    /// Tokenizing and building the model.
    Parsing,
}

/// Why a load failed, with the position in the (decompressed) input when known.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct LoadError {
    /// `malformed`, `empty`, `gzip`, `io` or `protocol`; the app adds `io` for fetch and file
    /// read failures and `worker` when the worker could not start or crashed.
    pub kind: String,
    /// Full human message, ending with the position when known.
    pub message: String,
    /// Absolute byte offset in the decompressed input.
    pub offset: Option<u64>,
    /// 1-based line of `offset`.
    pub line: Option<u64>,
    /// 1-based column of `offset`.
    pub column: Option<u64>,
}

/// What `kinetoscope info` prints and the page shows after a load.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TraceSummary {
    /// File name as given by the user.
    pub file_name: String,
    /// Size of the file as read (compressed if gzip).
    pub file_bytes: u64,
    /// Size of the JSON after decompression.
    pub json_bytes: u64,
    /// `json-object`, `json-array`, with `+gzip` when the input was gzip.
    pub format: String,
    /// Trace events read (every element of the event array that is an object).
    pub events: u64,
    /// Event counts by `ph` (missing `ph` counts as `""`).
    pub phases: BTreeMap<String, u64>,
    /// Event counts by `cat` (missing `cat` counts as `""`).
    pub categories: BTreeMap<String, u64>,
    /// Processes (CPU processes and GPU devices) in display order, each with its lanes.
    pub processes: Vec<ProcessSummary>,
    /// Total number of lanes (threads and streams).
    pub lanes: u64,
    /// Flow endpoints matched and unmatched.
    pub flows: FlowSummary,
    /// Device activities (kernels, memcpy, memset) with a launching call / an enclosing op.
    pub links: LinkSummary,
    /// Time from the first event start to the last event end, in microseconds.
    pub span_us: f64,
    /// One line per recoverable problem kind, with its count and first location.
    pub warnings: Vec<String>,
    /// True when the input ended before the event array was closed.
    pub truncated: bool,
    /// Decompress + parse + index wall time, measured by the caller; 0 when unmeasured.
    pub parse_ms: f64,
    /// Parts the JSON was parsed in (one worker each in the browser; 1 = sequential).
    #[serde(default)]
    pub parse_workers: u32,
}

/// One process or device and its lanes.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ProcessSummary {
    /// The `pid` as written in the trace (numbers as decimal text).
    pub pid: String,
    /// Display name (from metadata, or derived).
    pub name: String,
    /// `cpu` or `gpu`.
    pub kind: String,
    /// Threads or streams in display order.
    pub lanes: Vec<LaneSummary>,
}

/// One thread or stream.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LaneSummary {
    /// The `tid` as written in the trace.
    pub tid: String,
    /// Display name.
    pub name: String,
    /// Slices on this lane.
    pub slices: u64,
    /// Nesting depth used (1 for flat lanes), overflow sub-lanes included.
    pub depth: u32,
}

/// Flow matching counts.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct FlowSummary {
    /// Flows with both a start and an end bound to slices.
    pub linked: u64,
    /// Flow starts or ends that found no partner or no slice.
    pub unlinked: u64,
}

/// Device activity linking counts.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct LinkSummary {
    /// Kernels, memcpys and memsets on GPU lanes.
    pub device_activities: u64,
    /// Of those, linked to a launching runtime/driver call by correlation.
    pub with_launch: u64,
    /// Of those, whose launch call sits inside a CPU op.
    pub with_op: u64,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn query_and_table_round_trip() {
        let q = ToWorker::Query {
            id: 3,
            query: Query::Ops { by_shape: true, range_ns: Some((1, 2)) },
        };
        let json = serde_json::to_string(&q).unwrap();
        assert_eq!(serde_json::from_str::<ToWorker>(&json).unwrap(), q);
        let table = TableData {
            kind: "ops".into(),
            columns: vec![Column { key: "name".into(), label: "Name".into(), unit: "text".into() }],
            rows: vec![vec![
                CellValue::Text("aten::mm".into()),
                CellValue::Int(7),
                CellValue::Float(1.5),
                CellValue::Empty,
            ]],
            totals: BTreeMap::new(),
        };
        let msg = FromWorker::Answer { id: 3, answer: Box::new(Answer::Table(table)) };
        let json = serde_json::to_string(&msg).unwrap();
        assert_eq!(serde_json::from_str::<FromWorker>(&json).unwrap(), msg);
    }

    #[test]
    fn loaded_carries_the_layout() {
        let layout = Layout {
            end_ns: 9,
            groups: vec![LaneGroup { name: "p".into(), kind: "cpu".into(), device: None, lanes: vec![] }],
            steps: vec![StepMark { number: 1, start_ns: 0, end_ns: 9 }],
            focus: None,
        };
        let msg = FromWorker::Loaded { id: 2, summary: Box::default(), layout: Box::new(layout) };
        let json = serde_json::to_string(&msg).unwrap();
        assert_eq!(serde_json::from_str::<FromWorker>(&json).unwrap(), msg);
    }

    #[test]
    fn every_answer_round_trips() {
        let answers = [
            Answer::Table(TableData { kind: "ops".into(), ..TableData::default() }),
            Answer::Layout(Layout::default()),
            Answer::Layout(Layout {
                focus: Some(StepMark { number: 5, start_ns: 10, end_ns: 20 }),
                ..Layout::default()
            }),
            Answer::Tiles(TileSet::default()),
            Answer::Details(Some(SliceDetails::default())),
            Answer::Details(None),
            Answer::Search(SearchHit::default()),
            Answer::Counters(CounterSet::default()),
            Answer::Findings(vec![FindingData::default()]),
            Answer::Histogram(Histogram::default()),
            Answer::Baseline(Some("a.json".into())),
            Answer::Comparison(Box::default()),
        ];
        for answer in answers {
            let msg = FromWorker::Answer { id: 1, answer: Box::new(answer) };
            let json = serde_json::to_string(&msg).unwrap();
            assert_eq!(serde_json::from_str::<FromWorker>(&json).unwrap(), msg, "{json}");
        }
    }

    /// One of every query (and every other message to the worker) survives JSON; the match has
    /// no wildcard, so a new variant does not compile until it is listed here.
    #[test]
    fn every_query_round_trips() {
        let queries = [
            Query::Ops { by_shape: false, range_ns: None },
            Query::Kernels { range_ns: Some((0, 9)) },
            Query::Steps,
            Query::Layout { trace: TraceRef::Current, align: None },
            Query::Layout { trace: TraceRef::Baseline, align: Some(Align::First) },
            Query::Layout { trace: TraceRef::Current, align: Some(Align::Step(5)) },
            Query::Tiles {
                trace: TraceRef::Baseline,
                lanes: vec![1, 2],
                start_ns: -4,
                end_ns: 9,
                resolution_ns: 2,
                search: Some("mm".into()),
            },
            Query::Details { slice: 3 },
            Query::Hover { trace: TraceRef::Baseline, slice: 3 },
            Query::Resolve { key: SliceKey::default() },
            Query::Search { text: "x".into(), from_slice: Some(1), from_ns: 2, forward: false },
            Query::Counters { start_ns: 0, end_ns: 1, buckets: 2 },
            Query::Findings,
            Query::Histogram { name: "k".into(), bins: 4 },
            Query::KeepAsBaseline,
            Query::ClearBaseline,
            Query::Compare { by_shape: true },
        ];
        let mut seen = std::collections::BTreeSet::new();
        for query in queries {
            let name = match &query {
                Query::Ops { .. } => "ops",
                Query::Kernels { .. } => "kernels",
                Query::Steps => "steps",
                Query::Layout { .. } => "layout",
                Query::Tiles { .. } => "tiles",
                Query::Details { .. } => "details",
                Query::Hover { .. } => "hover",
                Query::Resolve { .. } => "resolve",
                Query::Search { .. } => "search",
                Query::Counters { .. } => "counters",
                Query::Findings => "findings",
                Query::Histogram { .. } => "histogram",
                Query::KeepAsBaseline => "keep_as_baseline",
                Query::ClearBaseline => "clear_baseline",
                Query::Compare { .. } => "compare",
            };
            seen.insert(name);
            let msg = ToWorker::Query { id: 9, query };
            let json = serde_json::to_string(&msg).unwrap();
            assert_eq!(serde_json::from_str::<ToWorker>(&json).unwrap(), msg, "{json}");
        }
        assert_eq!(seen.len(), 15, "every query variant is listed");
        // Queries written before `trace` existed still mean the loaded trace.
        let old: Query = serde_json::from_str(r#"{"kind":"hover","slice":4}"#).unwrap();
        assert_eq!(old, Query::Hover { trace: TraceRef::Current, slice: 4 });
        for msg in [
            ToWorker::Open { id: 1, name: "a".into(), size: Some(3), workers: Some(2) },
            ToWorker::Chunk { id: 1 },
            ToWorker::Finish { id: 1 },
            ToWorker::Cancel { id: 1 },
        ] {
            let json = serde_json::to_string(&msg).unwrap();
            assert_eq!(serde_json::from_str::<ToWorker>(&json).unwrap(), msg, "{json}");
        }
    }
}
