//! Trace health: the gaps a trace has that the timeline shows as silence (docs/definitions.md,
//! "Trace health"). Each check counts its problem events and keeps their slice ids:
//!
//! - launch calls ([`is_launch_call`]) with no device activity linked to them;
//! - device activities (kernels, copies, memsets) with no launch call;
//! - device activities that start outside the capture window (the span of the host lanes);
//! - device activities that overlap the previous one on their stream by more than
//!   [`TIMER_TOLERANCE_NS`] (programmatic dependent launch, or clock trouble);
//! - device activities that start more than [`TIMER_TOLERANCE_NS`] before their launch call,
//!   with the CPU/GPU clock offset they imply;
//! - what the parse lost: a truncated input and the data-losing diagnostics.
//!
//! Cost: one pass over the slices, one pass per GPU lane (its slices are start-sorted), a sort
//! of the problem ids. No per-event heap objects.

use crate::diag::Severity as DiagSeverity;
use crate::model::{CatClass, ProcessKind, Trace, NONE, NO_ID};

/// Timer rounding allowed before two times count as out of order, ns. Kineto writes µs with
/// three decimals, but older traces and some exporters round to whole µs, and a start and a
/// duration each rounded can move an end by up to 1 µs.
pub const TIMER_TOLERANCE_NS: i64 = 1_000;

/// One check's result: how many events have the problem, out of how many were checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Check {
    /// Events checked (the denominator of the share).
    pub of: u64,
    /// Slice ids with the problem, in the check's order (most telling first).
    pub ids: Vec<u32>,
}

impl Check {
    /// Events with the problem.
    pub fn count(&self) -> u64 {
        self.ids.len() as u64
    }

    /// Share of checked events with the problem (0 when none were checked).
    pub fn share(&self) -> f64 {
        if self.of == 0 {
            0.0
        } else {
            self.ids.len() as f64 / self.of as f64
        }
    }
}

/// Every health check over one trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Health {
    /// Launch calls without a device activity (of: launch calls); time order.
    pub launches_without_activity: Check,
    /// Device activities without a launch call (of: device activities); time order.
    pub activities_without_launch: Check,
    /// Of those, the ones whose correlation id is below every launch call's: launched before
    /// the capture started (ids grow with every call).
    pub launched_before_capture: u64,
    /// The capture window: first host slice start to last host slice end, ns (none without
    /// host slices).
    pub window_ns: Option<(i64, i64)>,
    /// Device activities starting outside the window (of: device activities); time order.
    pub outside_window: Check,
    /// Device activities starting before the previous one on their stream ends (of: device
    /// activities); largest overlap first.
    pub stream_overlaps: Check,
    /// Largest such overlap, ns (0 when none).
    pub max_overlap_ns: i64,
    /// Linked device activities starting before their launch call (of: linked activities);
    /// earliest relative to the launch first.
    pub before_launch: Check,
    /// Estimated CPU/GPU clock offset, ns: how far the device clock must move forward so that
    /// every activity starts at or after its launch call (none when none starts before).
    pub clock_offset_ns: Option<i64>,
    /// The input ended before the event array closed.
    pub truncated: bool,
    /// Events the parse skipped or could not represent: (diagnostic name, count), data-losing
    /// and error kinds only.
    pub skipped: Vec<(&'static str, u64)>,
}

/// Runtime / driver calls that launch device work and should have a device activity: kernel
/// launches (CUDA runtime and driver, HIP) and graph launches.
pub fn is_launch_call(name: &str) -> bool {
    [
        "cudaLaunchKernel",
        "cudaLaunchCooperativeKernel",
        "cuLaunchKernel",
        "cuLaunchCooperativeKernel",
        "hipLaunchKernel",
        "hipExtLaunchKernel",
        "hipModuleLaunchKernel",
        "hipExtModuleLaunchKernel",
        "cudaGraphLaunch",
        "cuGraphLaunch",
        "hipGraphLaunch",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// Runs every check on `trace`.
pub fn analyze(trace: &Trace) -> Health {
    let s = &trace.slices;
    // Slice columns have equal length (model invariant): every `i < n` indexes each of them.
    let n = s.len();
    let is_gpu = |i: usize| lane_kind(trace, i) == Some(ProcessKind::Gpu);
    let activity = |i: usize| trace.class(s.cat[i]).is_device_activity();
    let launch_name: Vec<bool> = (0..trace.strings.len() as u32)
        .map(|k| is_launch_call(&trace.strings.get(crate::model::StrId(k))))
        .collect();

    // Launch calls with at least one linked activity.
    let mut launched = vec![false; n];
    let mut linked = 0u64;
    let mut before: Vec<(i64, u32)> = Vec::new();
    let mut activities = Vec::new();
    for i in (0..n).filter(|&i| activity(i)) {
        activities.push(i as u32);
        let l = s.launch[i];
        if l == NONE || l as usize >= n {
            continue;
        }
        launched[l as usize] = true;
        linked += 1;
        let lead = s.start_ns[i] - s.start_ns[l as usize];
        if lead < -TIMER_TOLERANCE_NS {
            before.push((lead, i as u32));
        }
    }
    let mut h = Health { truncated: trace.truncated, ..Health::default() };
    let calls = (0..n).filter(|&i| {
        trace.class(s.cat[i]) == CatClass::Launch && launch_name.get(s.name[i].0 as usize).copied().unwrap_or(false)
    });
    let mut checked = 0u64;
    for i in calls {
        checked += 1;
        if !launched[i] {
            h.launches_without_activity.ids.push(i as u32);
        }
    }
    h.launches_without_activity.of = checked;
    by_time(trace, &mut h.launches_without_activity.ids);

    h.activities_without_launch = Check {
        of: activities.len() as u64,
        ids: activities.iter().copied().filter(|&a| s.launch[a as usize] == NONE).collect(),
    };
    by_time(trace, &mut h.activities_without_launch.ids);
    let first_call = (0..n)
        .filter(|&i| trace.class(s.cat[i]) == CatClass::Launch && s.correlation[i] != NO_ID)
        .map(|i| s.correlation[i])
        .min();
    h.launched_before_capture = first_call.map_or(0, |c| {
        let ids = &h.activities_without_launch.ids;
        ids.iter().filter(|&&a| s.correlation[a as usize] < c).count() as u64
    });

    h.window_ns = (0..n)
        .filter(|&i| lane_kind(trace, i) == Some(ProcessKind::Cpu))
        .map(|i| (s.start_ns[i], s.end_ns(i)))
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
    if let Some((w0, w1)) = h.window_ns {
        h.outside_window = Check {
            of: activities.len() as u64,
            ids: activities
                .iter()
                .copied()
                .filter(|&a| is_gpu(a as usize))
                .filter(|&a| s.start_ns[a as usize] < w0 || s.start_ns[a as usize] > w1)
                .collect(),
        };
        by_time(trace, &mut h.outside_window.ids);
    }

    let mut overlaps = stream_overlaps(trace);
    overlaps.sort_unstable_by_key(|o| (std::cmp::Reverse(o.0), o.1));
    h.max_overlap_ns = overlaps.first().map_or(0, |o| o.0);
    h.stream_overlaps = Check { of: activities.len() as u64, ids: overlaps.into_iter().map(|o| o.1).collect() };

    before.sort_unstable();
    h.clock_offset_ns = before.first().map(|b| -b.0);
    h.before_launch = Check { of: linked, ids: before.into_iter().map(|b| b.1).collect() };

    h.skipped = trace
        .diagnostics
        .entries()
        .into_iter()
        .filter(|e| e.0.describe().1 >= DiagSeverity::DataLoss)
        .map(|e| (e.0.describe().0, e.1))
        .collect();
    h
}

/// Whether slice `i` is on a host thread or a device stream (none for a bad lane).
fn lane_kind(trace: &Trace, i: usize) -> Option<ProcessKind> {
    let lane = trace.lanes.get(trace.slices.lane.get(i)?.0 as usize)?;
    Some(trace.processes.get(lane.process as usize)?.kind)
}

/// Sorts slice ids by start, then id.
fn by_time(trace: &Trace, ids: &mut [u32]) {
    ids.sort_unstable_by_key(|&i| (trace.slices.start_ns.get(i as usize).copied().unwrap_or(i64::MAX), i));
}

/// (overlap ns, activity) for every device activity that starts more than
/// [`TIMER_TOLERANCE_NS`] before the latest end of the earlier activities on its stream.
/// A lane's slices are start-sorted (model invariant), so one pass per lane suffices.
fn stream_overlaps(trace: &Trace) -> Vec<(i64, u32)> {
    let s = &trace.slices;
    let mut out = Vec::new();
    for lane in &trace.lanes {
        let gpu = trace.processes.get(lane.process as usize).is_some_and(|p| p.kind == ProcessKind::Gpu);
        if !gpu {
            continue;
        }
        let mut end: Option<i64> = None;
        for i in lane.slices.start as usize..(lane.slices.end as usize).min(s.len()) {
            if !trace.class(s.cat[i]).is_device_activity() {
                continue;
            }
            if let Some(e) = end {
                let overlap = e.min(s.end_ns(i)) - s.start_ns[i];
                if overlap > TIMER_TOLERANCE_NS {
                    out.push((overlap, i as u32));
                }
            }
            end = Some(end.map_or(s.end_ns(i), |e| e.max(s.end_ns(i))));
        }
    }
    out
}
