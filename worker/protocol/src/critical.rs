//! What bounds each step on the wire: the critical path of every step (per class shares; the
//! path's slices in a window, for the timeline to outline) and what-if answers recomputed by the worker
//! from the same graphs (docs/definitions.md "Critical path"). Times in ns.

use serde::{Deserialize, Serialize};

/// The critical path of every step ([`crate::Query::CriticalPath`]); the numbers of
/// `kinetoscope report --json`'s `critical_path` (there in µs). Shares only: the path's
/// slices come by [`crate::Query::PathSegments`], for the steps the timeline shows.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CriticalPathData {
    /// Class ids in order (`cpu_op`, `cpu_overhead`, …): the index of every share and
    /// segment class.
    pub classes: Vec<String>,
    /// Their labels (`CPU ops`, `Python / framework`, …), same order.
    pub labels: Vec<String>,
    /// One per step in time order (one per window of a trace without steps).
    pub steps: Vec<StepPathData>,
}

/// One step's critical path.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StepPathData {
    /// `N` of `ProfilerStep#N`; `None` for a window of a trace without steps.
    pub step: Option<u64>,
    /// Step span, ns from the trace origin.
    pub start_ns: i64,
    /// Step span end, ns.
    pub end_ns: i64,
    /// Path time per class (index into [`CriticalPathData::classes`]), ns; sums to the wall.
    pub shares_ns: Vec<i64>,
    /// The class holding most of the path.
    pub bound_by: String,
}

/// Segments sent per answer at most: enough for the path of a step of a few thousand ops,
/// small enough that the page decodes and outlines it in a few ms.
pub const MAX_PATH_SEGMENTS: usize = 4096;

/// The path's slices in a window ([`crate::Query::PathSegments`]), for the timeline to
/// outline.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PathSegmentsData {
    /// The step asked for (`None`: every step overlapping the window).
    pub step: Option<u64>,
    /// The window asked for, ns.
    pub start_ns: i64,
    /// Its end, ns.
    pub end_ns: i64,
    /// Per step overlapping the window, in time order.
    pub steps: Vec<StepSegmentsData>,
    /// Stretches left out by the cap of [`MAX_PATH_SEGMENTS`] (those of the slices with the
    /// least time on the path).
    pub dropped: u32,
    /// Names of the slices, each once (a kernel name is sent once, not per call).
    pub names: Vec<String>,
}

/// One step's path stretches in the window.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StepSegmentsData {
    /// As [`StepPathData::step`].
    pub step: Option<u64>,
    /// The path's stretches in a slice, time order, consecutive ones of one slice merged.
    pub segments: Vec<PathSegmentData>,
}

/// A stretch of a step's path spent in one slice.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct PathSegmentData {
    /// The slice.
    pub slice: u32,
    /// Its lane.
    pub lane: u32,
    /// Its row on the lane.
    pub row: u16,
    /// The slice's own start, ns (to outline it whole).
    pub slice_start_ns: i64,
    /// The slice's duration, ns.
    pub slice_dur_ns: i64,
    /// The stretch on the path, ns.
    pub start_ns: i64,
    /// Its end, ns.
    pub end_ns: i64,
    /// Its class (index into [`CriticalPathData::classes`]; the longest class when merged).
    pub class: u8,
    /// The slice's name: an index into [`PathSegmentsData::names`].
    pub name: u32,
}

/// What the steps would take after edits ([`crate::Query::WhatIf`]); the numbers of
/// `report --json --what-if`'s `what_if`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct WhatIfData {
    /// The edits as given, in order.
    pub edits: Vec<String>,
    /// Why an edit does not parse (its text first); nothing is recomputed then.
    pub error: Option<String>,
    /// One per step, as [`CriticalPathData::steps`].
    pub steps: Vec<WhatIfStep>,
}

/// One step before and after a what-if.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct WhatIfStep {
    /// As [`StepPathData::step`].
    pub step: Option<u64>,
    /// Wall time before, ns.
    pub before_ns: i64,
    /// Wall time after the edits, ns.
    pub after_ns: i64,
    /// Path time per class after, ns.
    pub shares_after_ns: Vec<i64>,
    /// Bound-by class before (id).
    pub bound_by_before: String,
    /// Bound-by class after (id); another path became critical when it differs.
    pub bound_by_after: String,
}
