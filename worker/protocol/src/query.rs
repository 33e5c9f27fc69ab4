//! Queries over a loaded trace: what is asked, of which trace, and on which channel.

use crate::SliceKey;
use serde::{Deserialize, Serialize};

/// The work one step does, which a trace does not record, as the user states it.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Workload {
    /// Samples per step (the global batch the step trains or serves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<u64>,
    /// Tokens per step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_step: Option<u64>,
}

impl Workload {
    /// True when neither figure was given.
    pub fn is_empty(&self) -> bool {
        self.batch_size.is_none() && self.tokens_per_step.is_none()
    }
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
    /// Profiler steps with their time breakdown; with the work a step does (`workload`), its
    /// samples/s and tokens/s too.
    Steps {
        #[serde(default, skip_serializing_if = "Workload::is_empty")]
        workload: Workload,
    },
    /// A stacked compare panel's layout of `trace` (the main timeline's comes with
    /// [`FromWorker::Loaded`]): [`Layout::focus`] is the step picked by `align` and only lanes
    /// with slices during that step are listed (all lanes with slices when the trace has no
    /// step).
    Layout {
        #[serde(default)]
        trace: TraceRef,
        align: Align,
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
    /// Everything the details panel shows about one slice of `trace`.
    Details {
        slice: u32,
        #[serde(default)]
        trace: TraceRef,
    },
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
    Search {
        text: String,
        from_slice: Option<u32>,
        from_ns: i64,
        forward: bool,
        #[serde(default)]
        trace: TraceRef,
    },
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
    /// The analysis of the open run (`FetchRun` / `ReadRun`); answered by [`crate::Answer::Run`]
    /// once every rank is in.
    Run,
    /// The collective instance that kernel `slice` of `trace` (a rank of the open run) belongs
    /// to, matched across the run's ranks; answered by [`crate::Answer::Collective`] (`None`:
    /// the slice is not a matched collective).
    Collective { trace: TraceRef, slice: u32 },
    /// Why `ProfilerStep#step` (`None`: the slowest complete step) took the time it took;
    /// answered by [`crate::Answer::Explanation`], or fails when the trace has no such step.
    ExplainStep { step: Option<u64> },
    /// The loaded trace's report as one self-contained HTML file (`report --format html`, the
    /// page's Export report); `viewer_url`, the address that opens this trace in the viewer,
    /// adds links back to it. Answered by [`crate::Answer::Report`].
    Report { viewer_url: Option<String> },
    /// The kernels on the roofline with the GPU's peaks (the Charts tab); answered by
    /// [`crate::Answer::Roofline`].
    Roofline,
    /// The critical path of every step of the whole trace (shares per class); answered by
    /// [`crate::Answer::CriticalPath`].
    CriticalPath,
    /// The path's slices of step `step` (`None`: every step) that overlap `start_ns..end_ns`;
    /// answered by [`crate::Answer::PathSegments`].
    PathSegments { step: Option<u64>, start_ns: i64, end_ns: i64 },
    /// Every step recomputed after `edits` (the `--what-if` grammar: `gemm*0.5`, `launch=0`,
    /// applied together, in order); answered by [`crate::Answer::WhatIf`], whose `error` says
    /// which edit does not parse.
    WhatIf { edits: Vec<String> },
    /// The whole trace at a glance (the Summary tab): step time, GPU metrics, what bounds the
    /// steps; answered by [`crate::Answer::Glance`].
    Glance,
    /// The memory chart of `device` (a label; `None`: the device with the highest peak):
    /// allocated, reserved and bytes by category in at most `buckets` buckets, each step's
    /// peak, and the `top` largest allocations live at the highest step peak; answered by
    /// [`crate::Answer::Memory`].
    Memory { device: Option<String>, buckets: u32, top: u32 },
    /// The `top` largest allocations of `device` live right after the events at `at_ns`;
    /// answered by [`crate::Answer::MemoryLive`].
    MemoryLive { device: String, at_ns: i64, top: u32 },
    /// The `nn.Module` tree with the numbers of the calls starting in `range_ns` (`None`: the
    /// whole trace; the tree's rows are the whole trace's either way); answered by
    /// [`crate::Answer::Modules`].
    Modules { range_ns: Option<(i64, i64)> },
    /// The call tree of the host work starting in `range_ns` (`None`: the whole trace), nodes
    /// under 0.1% of the root's CPU and GPU totals left out; with `baseline`, a baseline kept
    /// and the whole trace in scope, each row also carries the same call path's totals in the
    /// baseline and its growth. Answered by [`crate::Answer::CallTree`].
    CallTree {
        range_ns: Option<(i64, i64)>,
        #[serde(default)]
        baseline: bool,
    },
}

/// Which of the engine's traces a query addresses: the loaded one, the comparison baseline
/// kept beside it ([`Query::KeepAsBaseline`]), or a rank of the open run whose model is held
/// ([`crate::ToWorker::HoldRanks`]).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum TraceRef {
    /// The loaded trace (the candidate while comparing).
    #[default]
    Current,
    /// The baseline.
    Baseline,
    /// Global rank N of the open run.
    Rank(u32),
}

/// Where a stacked layout puts time 0 ([`Query::Layout`], [`crate::Layout::origin_ns`]).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Align {
    /// At the start of the first step number both traces have, else the trace's first step.
    First,
    /// At `ProfilerStep#N`'s start; falls back to [`Align::First`] when the trace lacks it.
    Step(u64),
    /// A rank of the open run on the run's clock as recorded: 0 is the earliest rank's start.
    Recorded,
    /// As `Recorded`, each rank shifted by its clock offset estimated from collective ends.
    Collectives,
}

/// Independent request streams; see [`Query`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Channel {
    /// Op / kernel / step tables, the module tree and the call tree (the table tabs).
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
    /// Panel N of a stacked view (compare: 0 baseline, 1 candidate; run: one per stacked
    /// rank): its layout and tiles (the sender picks this channel; see `Bridge::query_on`).
    Stack(u8),
    /// A stacked view's hover tooltip (any panel).
    StackHover,
    /// A stacked view's selection: details of a panel's slice and the collective it belongs to.
    StackSelect,
    /// A stacked view's search box (counts over every panel).
    StackSearch,
    /// The Run tab.
    Run,
    /// The Steps tab's step explanation (its own channel, so it never supersedes a table).
    Explain,
    /// Export report.
    Report,
    /// The critical path (Steps tab bars, the timeline's overlay).
    Critical,
    /// The path's slices for the timeline's overlay (a newer view supersedes a pending one).
    PathSegments,
    /// What-if answers (their own channel: a newer edit supersedes a pending one, never the
    /// path).
    WhatIf,
    /// The Summary tab's glance.
    Glance,
    /// The memory chart's live allocations at the hovered moment (a newer moment supersedes
    /// a pending one, never the charts' own queries).
    MemoryLive,
}

impl Query {
    /// The channel this query belongs to.
    pub fn channel(&self) -> Channel {
        match self {
            Query::Ops { .. } | Query::Kernels { .. } | Query::Steps { .. } | Query::Modules { .. } | Query::CallTree { .. } => Channel::Table,
            Query::Layout { .. } => Channel::Layout,
            Query::Tiles { .. } => Channel::Tiles,
            Query::Details { .. } | Query::Resolve { .. } => Channel::Details,
            Query::Hover { .. } => Channel::Hover,
            Query::Search { .. } => Channel::Search,
            Query::Counters { .. } | Query::Histogram { .. } | Query::Roofline => Channel::Counters,
            Query::Memory { .. } => Channel::Charts,
            Query::MemoryLive { .. } => Channel::MemoryLive,
            Query::Findings => Channel::Findings,
            Query::KeepAsBaseline | Query::ClearBaseline | Query::Compare { .. } => Channel::Compare,
            Query::Run => Channel::Run,
            Query::Collective { .. } => Channel::StackSelect,
            Query::ExplainStep { .. } => Channel::Explain,
            Query::Report { .. } => Channel::Report,
            Query::CriticalPath => Channel::Critical,
            Query::PathSegments { .. } => Channel::PathSegments,
            Query::WhatIf { .. } => Channel::WhatIf,
            Query::Glance => Channel::Glance,
        }
    }
}
