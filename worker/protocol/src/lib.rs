//! Wire types between the Kinetoscope app (main thread) and its engine worker.
//!
//! Control messages are JSON strings (serde); a local `File` to read, the bytes of a trace posted
//! to the page and the rect words of tile answers travel beside them, never through serde. The worker reads a load's bytes itself, so
//! they never pass through the page's main thread. Names are from the boundary's point of view:
//! [`ToWorker`] and [`FromWorker`]. Requests carry an `id` that replies echo.
//!
//! These are wire types, not engine structs: the engine converts its model into them, so engine
//! refactors do not change the protocol. [`units`] is how both sides write a duration.

mod compare;
mod critical;
mod explain;
mod flame;
mod glance;
mod memory;
mod modules;
mod query;
mod roofline;
mod run;
mod summary;
mod table;
mod timeline;
pub mod units;

pub use compare::*;
pub use critical::*;
pub use explain::*;
pub use flame::*;
pub use glance::*;
pub use memory::*;
pub use modules::*;
pub use query::*;
pub use roofline::*;
pub use run::*;
pub use summary::*;
pub use table::*;
pub use timeline::*;
use serde::{Deserialize, Serialize};

/// Bumped on any incompatible change; the app refuses a worker that reports another version.
pub const PROTOCOL_VERSION: u32 = 25;

/// A message from the app to the worker.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type")]
pub enum ToWorker {
    /// Loads `url` (absolute http(s)): the worker fetches it and streams the body in, posting
    /// `Progress` as bytes arrive. `name` is shown to the user. `workers` sets the parse workers a
    /// large file is split across, whatever the core count (the page's `?workers=N`; default: one
    /// per core; at most `load::MAX_PARTS`, one per 16 MB).
    Fetch {
        id: u32,
        url: String,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workers: Option<u32>,
    },
    /// Loads a local file: the `File` travels beside this message (cloned, a handle, not the
    /// bytes) and the worker reads it in slices. `workers` as for `Fetch`.
    Read {
        id: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workers: Option<u32>,
    },
    /// Loads bytes already in the page: an `ArrayBuffer` transferred beside this message (a
    /// trace another page posted, docs/viewer.md#opening-a-trace-from-another-page), shown as
    /// `name`. `workers` as for `Fetch`.
    Bytes {
        id: u32,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workers: Option<u32>,
    },
    /// Loads the ranks of a distributed run listed by the manifest at `url` (absolute http(s);
    /// JSON `{"ranks": [{"url": "rank-0.json.gz", "rank": 0}, ...]}`, URLs relative to the
    /// manifest), one after another. The worker posts `RunStarted`, then per file
    /// `RankProgress` and `RankLoaded`; then the last rank loaded becomes the current trace
    /// (`Loaded`) and `Query::Run` answers the run analysis.
    FetchRun {
        id: u32,
        url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workers: Option<u32>,
    },
    /// As `FetchRun` for local files: an array of `File`s travels beside this message.
    ReadRun {
        id: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workers: Option<u32>,
    },
    /// Makes rank `rank` of the open run the current trace (reloaded from its file or URL when
    /// its model was dropped): answered like a load, `Progress` then `Loaded` or `Failed`.
    OpenRank {
        id: u32,
        rank: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workers: Option<u32>,
    },
    /// Holds the models of `ranks` of the open run (at most [`MAX_HELD_RANKS`]; the page's
    /// stacked ranks timeline) so queries can address them ([`TraceRef::Rank`]): models not
    /// kept are reloaded from their files one after another (`RankProgress` with `id`), without
    /// touching the current trace; then `RanksHeld`. Ranks held before and not listed may be
    /// dropped again; a later `HoldRanks` supersedes this one.
    HoldRanks {
        id: u32,
        ranks: Vec<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workers: Option<u32>,
    },
    /// Marks steps on the loaded trace by the annotation `marker` (`None`: `ProfilerStep#N`
    /// again): every step-dependent answer is recomputed. Answered like a load, by `Loaded`
    /// (the same summary, the new layout and [`StepMarking`]) or `Failed`.
    SetStepMarker { id: u32, marker: Option<String> },
    /// Measures the loaded trace against the GPU peaks `spec` (`bf16=989,fp32=67,gbps=3350`:
    /// TFLOP/s per class, GB/s; over the table's peaks for its GPU) or, with `None`, the
    /// table's alone: achieved shares, bounds, MFU and the roofline are recomputed. Answered
    /// like `SetStepMarker`, by `Loaded` or `Failed` (a spec that does not parse).
    SetPeaks { id: u32, spec: Option<String> },
    /// Drops a load in progress.
    Cancel { id: u32 },
    /// Asks for a table over the loaded trace; answered by `Table` or `QueryFailed` with `id`.
    Query { id: u32, query: Query },
}

/// The answer to a [`Query`]; externally tagged (`{"tiles": ..}`), like [`FromWorker`]: the
/// page decodes these on its main thread, and an internally or adjacently tagged enum makes
/// serde buffer the whole message first, through code V8 compiles on the first reply.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
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
    /// Run: the run analysis.
    Run(Box<RunData>),
    /// Collective: the instance across ranks (`None`: not a matched collective).
    Collective(Option<CollectiveMatch>),
    /// ExplainStep.
    Explanation(Box<ExplanationData>),
    /// Roofline.
    Roofline(Box<RooflineData>),
    /// CriticalPath.
    CriticalPath(Box<CriticalPathData>),
    /// PathSegments.
    PathSegments(Box<PathSegmentsData>),
    /// WhatIf.
    WhatIf(Box<WhatIfData>),
    /// Glance.
    Glance(Box<Glance>),
    /// Memory: the memory chart of one device.
    Memory(Box<MemoryData>),
    /// MemoryLive: the allocations live at one moment.
    MemoryLive(Box<LiveMemory>),
    /// Modules: the module tree.
    Modules(Box<ModulesData>),
    /// CallTree: the call tree (the Flame tab).
    CallTree(Box<CallTreeData>),
    /// Report: the HTML file's text. A one-off document the user asked for (tens to hundreds
    /// of KB), so it travels in the JSON message rather than as a transferred buffer.
    Report(String),
}

/// A message from the worker to the app; externally tagged (`{"Loaded": {..}}`), see [`Answer`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub enum FromWorker {
    /// First message after the worker's wasm has started.
    Ready { protocol_version: u32 },
    /// Work in progress on load `id`.
    Progress { id: u32, phase: Phase, done_bytes: u64, total_bytes: Option<u64> },
    /// Load `id` finished; the trace is indexed. Its summary and the timeline's layout come
    /// attached, so the page can ask for the first tiles without another round trip.
    Loaded {
        id: u32,
        summary: Box<TraceSummary>,
        layout: Box<Layout>,
        #[serde(default)]
        steps: StepMarking,
    },
    /// Run load `id` will load these files, in this order (`index` below is the position).
    RunStarted { id: u32, names: Vec<String> },
    /// Work in progress on file `index` of run load `id` (its phase as in `Progress`).
    RankProgress { id: u32, index: u32, phase: Phase, done_bytes: u64, total_bytes: Option<u64> },
    /// File `index` of run load `id` is loaded (its summary kept) or failed (`info.error`).
    RankLoaded { id: u32, total: u32, info: RankInfo },
    /// `HoldRanks` `id` is done: the ranks whose models are now held, and those that could not
    /// be (not in the run, or their file failed to load again), each with why.
    RanksHeld { id: u32, held: Vec<u32>, failed: Vec<(u32, String)> },
    /// Load `id` failed; nothing was kept.
    Failed { id: u32, error: LoadError },
    /// The answer to query `id` (tiles carry their rects in the message's buffer).
    Answer { id: u32, answer: Box<Answer> },
    /// Query `id` could not be answered (e.g. no trace loaded).
    QueryFailed { id: u32, message: String },
}

/// How the loaded trace's steps are marked, and what could mark them when it has no
/// `ProfilerStep#N` (the Steps tab's marker picker).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct StepMarking {
    /// The annotation marking steps ([`ToWorker::SetStepMarker`]); `None`: `ProfilerStep#N`.
    pub marker: Option<String>,
    /// Host annotations occurring at least twice, most frequent first; empty when the trace
    /// has `ProfilerStep#N`.
    pub candidates: Vec<MarkerCandidate>,
}

/// A step marker candidate: an annotation name and how often it occurs.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct MarkerCandidate {
    /// The annotation's name.
    pub name: String,
    /// Its occurrences.
    pub count: u64,
}

/// Stage of a load, for the progress bar.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Reading the bytes (the fetch's body or the file).
    Reading,
    /// Gunzipping.
    Decompressing,
    /// Tokenizing and building the model.
    Parsing,
}

/// Why a load failed, with the position in the (decompressed) input when known.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct LoadError {
    /// `malformed`, `empty`, `gzip`, `io` (fetch or file read failures, or a URL the page
    /// refuses), `too-big` (over the tab's budget: the message says how big and what to do),
    /// `protocol`, `worker` (a worker could not start or crashed) or `cancelled`.
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

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
            columns: vec![Column { key: "name".into(), label: "Name".into(), unit: "text".into(), note: None }],
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
            groups: vec![LaneGroup { name: "p".into(), kind: "cpu".into(), device: None, lanes: vec![], folded: true }],
            steps: vec![StepMark { number: 1, start_ns: 0, end_ns: 9 }],
            focus: None,
            origin_ns: -3,
        };
        let msg = FromWorker::Loaded { id: 2, summary: Box::default(), layout: Box::new(layout), steps: StepMarking::default() };
        let json = serde_json::to_string(&msg).unwrap();
        assert_eq!(serde_json::from_str::<FromWorker>(&json).unwrap(), msg);
    }

    #[test]
    fn run_messages_round_trip() {
        let msgs = [
            FromWorker::RunStarted { id: 1, names: vec!["w0.json".into()] },
            FromWorker::RankProgress { id: 1, index: 2, phase: Phase::Parsing, done_bytes: 3, total_bytes: Some(4) },
            FromWorker::RankLoaded { id: 1, total: 4, info: RankInfo { index: 2, name: "w2.json".into(), rank: Some(2), steps: 3, error: None, memory_bytes: Some(1 << 20), parse_worker: Some(0) } },
            FromWorker::RanksHeld { id: 5, held: vec![0, 3], failed: vec![(9, "rank 9 is not in the run".into())] },
            FromWorker::Answer {
                id: 6,
                answer: Box::new(Answer::Collective(Some(CollectiveMatch {
                    key: "stream 7 #2".into(),
                    name: "ncclKernel_AllReduce".into(),
                    step: Some(3),
                    index_in_step: 1,
                    last_rank: Some(3),
                    members: vec![CollectiveMember { rank: 0, start_ns: 5, end_ns: 9, arrival: 0, wait_us: 1.5 }],
                }))),
            },
        ];
        for msg in msgs {
            let json = serde_json::to_string(&msg).unwrap();
            assert_eq!(serde_json::from_str::<FromWorker>(&json).unwrap(), msg, "{json}");
        }
        // The CLI's JSON keys read into RunData (unknown keys ignored, missing ones empty).
        let cli = r#"{"world_size": 8, "backend": "nccl", "ranks": [{"rank": 0, "file": "w0.json",
            "steps": 2, "step_mean_us": 10.5, "breakdown_us": {"compute": 3.0, "idle": 1.0},
            "overlap_pct": 12.0, "gpu_utilization_pct": 50.0, "peak_memory_bytes": 1024,
            "new_key": 1}], "steps": [{"rank": 0, "step": 12, "dur_us": 10.5, "outlier": true, "wait_us": 2.5}],
            "straggler": 3, "stragglers": [{"rank": 3, "why": {"delay": {"text": "started step 12 late",
            "step": 12, "start_offset_us": 4.5, "late_us": 5.0, "cause": {"kind": "data_loading",
            "label": "data loading", "excess_us": 4.0}}}}],
            "diagnostics": [{"kind": "run_missing_ranks", "message": "ranks 4-7 missing"}]}"#;
        let run: RunData = serde_json::from_str(cli).unwrap();
        assert_eq!(run.world_size, Some(8));
        assert_eq!(run.ranks[0].breakdown_us.compute, 3.0);
        assert_eq!(run.ranks[0].peak_memory_bytes, Some(1024.0));
        assert!(run.steps[0].outlier);
        assert_eq!((run.straggler, run.steps[0].wait_us), (Some(3), 2.5));
        let delay = run.stragglers[0].why.delay.clone().unwrap_or_default();
        assert_eq!((delay.text.as_str(), delay.start_offset_us), ("started step 12 late", Some(4.5)));
        assert_eq!(delay.cause.map(|c| (c.kind, c.excess_us)), Some(("data_loading".into(), 4.0)));
        assert_eq!(run.diagnostics[0].kind, "run_missing_ranks");
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
            Answer::Run(Box::default()),
            Answer::Explanation(Box::new(ExplanationData {
                sentence_slices: vec![Some(SliceRef::default()), None],
                kernels: vec![ItemDeltaData { median_calls: 2.5, ..ItemDeltaData::default() }],
                ..ExplanationData::default()
            })),
            Answer::Report("<!DOCTYPE html>".into()),
            Answer::CriticalPath(Box::new(CriticalPathData {
                classes: vec!["cpu_op".into()],
                steps: vec![StepPathData { step: Some(3), shares_ns: vec![5], ..StepPathData::default() }],
                ..CriticalPathData::default()
            })),
            Answer::PathSegments(Box::new(PathSegmentsData {
                step: Some(3),
                steps: vec![StepSegmentsData {
                    step: Some(3),
                    segments: vec![PathSegmentData { slice: 4, class: 0, end_ns: 5, ..PathSegmentData::default() }],
                }],
                names: vec!["aten::mm".into()],
                ..PathSegmentsData::default()
            })),
            Answer::WhatIf(Box::new(WhatIfData {
                edits: vec!["gemm*0.5".into()],
                error: None,
                steps: vec![WhatIfStep { step: Some(3), before_ns: 9, after_ns: 5, ..WhatIfStep::default() }],
            })),
            Answer::Roofline(Box::new(RooflineData {
                peaks: Some(PeakSet { tflops: vec![("bf16".into(), 989.4)], gbps: Some(3350.0), ..PeakSet::default() }),
                roof: Some(("bf16".into(), 989.4)),
                points: vec![RooflinePoint { bound: Some("memory".into()), ..RooflinePoint::default() }],
                left_off: vec![LeftOffKernel {
                    name: "ampere_fp16_s16816gemm".into(),
                    calls: 5,
                    total_ns: 78_588_000,
                    share: 1.0,
                    reason: "no_shapes".into(),
                    why: "\"aten::mm\" recorded no shapes".into(),
                }],
                ..RooflineData::default()
            })),
            Answer::Memory(Box::new(MemoryData {
                devices: vec![MemoryDevice { label: "cuda:0".into(), peak_allocated: 9, peak_reserved: 12 }],
                allocated: vec![None, Some(4.0)],
                categories: vec![CategorySeries { name: "activation".into(), values: vec![0, 4] }],
                steps: vec![StepPeak { step: 3, peak_ns: 5, peak_bytes: 9 }],
                ..MemoryData::default()
            })),
            Answer::MemoryLive(Box::new(LiveMemory {
                rows: vec![LiveAllocation { bytes: 4, op: Some(SliceRef::default()), phase: Some("forward".into()), ..LiveAllocation::default() }],
                ..LiveMemory::default()
            })),
            Answer::Modules(Box::new(ModulesData {
                rows: vec![ModuleNode { name: "Linear_3".into(), depth: 2, first: Some(SliceRef::default()), backward_device_ns: Some(4), ..ModuleNode::default() }],
                backward_tied: true,
            })),
            Answer::CallTree(Box::new(CallTreeData {
                rows: vec![CallTreeRow {
                    name: "aten::mm".into(),
                    kind: "op".into(),
                    depth: 2,
                    parent: Some(1),
                    first: Some(SliceRef::default()),
                    base_ns: Some((4, 0)),
                    growth: Some(("grew".into(), "same".into())),
                    ..CallTreeRow::default()
                }],
                nodes: 9,
                left_out: 3,
                min_pct: 0.1,
                against_baseline: true,
            })),
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
            Query::Steps { workload: Workload::default() },
            Query::Steps { workload: Workload { batch_size: Some(32), tokens_per_step: None } },
            Query::Layout { trace: TraceRef::Baseline, align: Align::First },
            Query::Layout { trace: TraceRef::Current, align: Align::Step(5) },
            Query::Tiles {
                trace: TraceRef::Baseline,
                lanes: vec![1, 2],
                start_ns: -4,
                end_ns: 9,
                resolution_ns: 2,
                search: Some("mm".into()),
            },
            Query::Details { slice: 3, trace: TraceRef::Rank(2) },
            Query::Hover { trace: TraceRef::Baseline, slice: 3 },
            Query::Resolve { key: SliceKey::default() },
            Query::Search { text: "x".into(), from_slice: Some(1), from_ns: 2, forward: false, trace: TraceRef::Current },
            Query::Counters { start_ns: 0, end_ns: 1, buckets: 2 },
            Query::Findings,
            Query::Histogram { name: "k".into(), bins: 4 },
            Query::KeepAsBaseline,
            Query::ClearBaseline,
            Query::Compare { by_shape: true },
            Query::Run,
            Query::Collective { trace: TraceRef::Rank(1), slice: 8 },
            Query::Layout { trace: TraceRef::Rank(4), align: Align::Collectives },
            Query::ExplainStep { step: None },
            Query::ExplainStep { step: Some(7) },
            Query::Report { viewer_url: Some("https://v/?url=a.json".into()) },
            Query::Roofline,
            Query::CriticalPath,
            Query::PathSegments { step: None, start_ns: 0, end_ns: 9 },
            Query::WhatIf { edits: vec!["launch=0".into(), "gemm*0.5".into()] },
            Query::Glance,
            Query::Memory { device: Some("cuda:0".into()), buckets: 300, top: 20 },
            Query::MemoryLive { device: "cpu".into(), at_ns: 7, top: 20 },
            Query::Modules { range_ns: Some((0, 9)) },
            Query::CallTree { range_ns: None, baseline: true },
        ];
        let mut seen = std::collections::BTreeSet::new();
        for query in queries {
            let name = match &query {
                Query::Ops { .. } => "ops",
                Query::Kernels { .. } => "kernels",
                Query::Steps { .. } => "steps",
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
                Query::Run => "run",
                Query::Collective { .. } => "collective",
                Query::ExplainStep { .. } => "explain_step",
                Query::Report { .. } => "report",
                Query::Roofline => "roofline",
                Query::CriticalPath => "critical_path",
                Query::PathSegments { .. } => "path_segments",
                Query::WhatIf { .. } => "what_if",
                Query::Glance => "glance",
                Query::Memory { .. } => "memory",
                Query::MemoryLive { .. } => "memory_live",
                Query::Modules { .. } => "modules",
                Query::CallTree { .. } => "call_tree",
            };
            seen.insert(name);
            let msg = ToWorker::Query { id: 9, query };
            let json = serde_json::to_string(&msg).unwrap();
            assert_eq!(serde_json::from_str::<ToWorker>(&json).unwrap(), msg, "{json}");
        }
        assert_eq!(seen.len(), 28, "every query variant is listed");
        // Queries written before `trace` existed still mean the loaded trace.
        let old: Query = serde_json::from_str(r#"{"kind":"hover","slice":4}"#).unwrap();
        assert_eq!(old, Query::Hover { trace: TraceRef::Current, slice: 4 });
        for msg in [
            ToWorker::Fetch { id: 1, url: "https://a/b.json".into(), name: "b.json".into(), workers: Some(2) },
            ToWorker::Read { id: 1, workers: None },
            ToWorker::Bytes { id: 1, name: "posted.json".into(), workers: Some(2) },
            ToWorker::Cancel { id: 1 },
            ToWorker::FetchRun { id: 1, url: "https://a/run.json".into(), workers: None },
            ToWorker::ReadRun { id: 1, workers: Some(1) },
            ToWorker::OpenRank { id: 1, rank: 3, workers: None },
            ToWorker::HoldRanks { id: 1, ranks: vec![0, 5], workers: None },
            ToWorker::SetStepMarker { id: 1, marker: Some("## Call fx ##".into()) },
            ToWorker::SetStepMarker { id: 1, marker: None },
            ToWorker::SetPeaks { id: 1, spec: Some("bf16=100,gbps=2000".into()) },
            ToWorker::SetPeaks { id: 1, spec: None },
        ] {
            let json = serde_json::to_string(&msg).unwrap();
            assert_eq!(serde_json::from_str::<ToWorker>(&json).unwrap(), msg, "{json}");
        }
    }
}
