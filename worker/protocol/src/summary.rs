//! The summary of a loaded trace (what `kinetoscope info --json` prints).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// Parts the JSON was parsed in (in the browser one worker each, the load worker taking the
    /// first of a picked file or posted buffer; 1 = sequential).
    #[serde(default)]
    pub parse_workers: u32,
    /// Of `parse_ms`, the time spent waiting for bytes (the source slower than the parse) while
    /// parsing as they arrive (in parts read by parse workers: the longest wait of one); 0 when
    /// unmeasured.
    #[serde(default)]
    pub read_wait_ms: f64,
    /// Of `parse_ms`, the time from the last byte to loaded (the model finished, indexed and
    /// summarized); 0 when unmeasured.
    #[serde(default)]
    pub finish_ms: f64,
    /// Trace health checks (docs/definitions.md, "Trace health").
    #[serde(default)]
    pub health: HealthSummary,
    /// How and where the trace was recorded (GPUs, ranks, versions, options).
    #[serde(default)]
    pub about: crate::TraceAbout,
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

/// One trace health check: how many events have the problem, out of how many were checked.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct HealthCheck {
    /// Events with the problem.
    pub count: u64,
    /// Events checked.
    pub of: u64,
    /// A few slice ids with the problem, most telling first.
    pub examples: Vec<u32>,
}

/// Trace health: the gaps the timeline shows as silence (docs/definitions.md, "Trace health").
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HealthSummary {
    /// Kernel / graph launch calls without a device activity (of: launch calls).
    pub launches_without_activity: HealthCheck,
    /// Device activities without a launch call (of: device activities).
    pub activities_without_launch: HealthCheck,
    /// Capture window `[start, end]`, µs from the trace origin (first host slice start to last
    /// host slice end); `None` without host slices.
    pub window_us: Option<(f64, f64)>,
    /// Device activities starting outside the capture window (of: device activities).
    pub outside_window: HealthCheck,
    /// Device activities overlapping the previous one on their stream (of: device activities).
    pub stream_overlaps: HealthCheck,
    /// Largest such overlap, µs.
    pub max_overlap_us: f64,
    /// Device activities starting before their launch call (of: linked activities).
    pub before_launch: HealthCheck,
    /// Estimated CPU/GPU clock offset, µs: the shift of the device clock that puts every
    /// activity at or after its launch call; `None` when none starts before.
    pub clock_offset_us: Option<f64>,
    /// The input ended before the event array closed.
    pub truncated: bool,
    /// Events the parse skipped or could not represent, by diagnostic kind.
    pub skipped: BTreeMap<String, u64>,
}
