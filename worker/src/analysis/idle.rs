//! Idle time per GPU stream and kernel launch statistics, with Holistic Trace Analysis' (HTA)
//! definitions (docs/definitions.md §4).
//!
//! **Idle time.** On each stream (a lane of a GPU process), device activities (kernels, memcpy,
//! memset; GPU-side annotations are not work) are taken by start. The gap before an activity
//! is its start minus the latest end of the activities before it on the stream (the running
//! maximum, so overlapping same-stream activities never make a negative or false gap).
//! A positive gap is
//! - **host wait** when the activity's launch call started after that previous end: the GPU
//!   had nothing queued, the host was late;
//! - **kernel wait** otherwise when the gap is < [`KERNEL_WAIT_MAX_NS`] (30 µs): the usual
//!   launch-to-launch overhead between queued kernels;
//! - **other** for the rest (waiting on events, syncs, other streams). Activities without a
//!   launch link cannot be host waits.
//!
//! **Launch statistics** over kernels (not memcpy / memset) with a launch link:
//! launch delay = kernel start - launch call end, clipped at 0; delay outliers > 100 µs;
//! runtime outliers: launch calls longer than 50 µs (each call counted once even when it
//! launched several kernels, e.g. `cudaGraphLaunch`); short kernels: kernel shorter than its
//! launch call; graph launches: the distinct graph launch calls (`cudaGraphLaunch` ...) and the
//! kernels they launched (kernels per graph launch = their ratio).
//!
//! **Range.** `[t0, t1)`: the activities (and their gaps) whose start lies in the range; the
//! gap before the first one still reaches back to the previous activity on the stream.
//!
//! **Cost.** O(n) over the GPU lanes' slices plus O(k log k) to summarize k launch delays.
//! References: docs/definitions.md §4; HTA `idle_time_breakdown`, `get_cuda_kernel_launch_stats`.

use super::graphs::is_graph_launch;
use super::stats::Summary;
use crate::model::{CatClass, LaneId, ProcessKind, Trace, NONE};

/// Gaps shorter than this (ns) between queued kernels are kernel waits (HTA's 30 µs).
pub const KERNEL_WAIT_MAX_NS: i64 = 30_000;
/// Launch delays above this (ns) are outliers (100 µs).
pub const LAUNCH_DELAY_OUTLIER_NS: i64 = 100_000;
/// Launch calls longer than this (ns) are runtime outliers (50 µs).
pub const RUNTIME_OUTLIER_NS: i64 = 50_000;
/// How many outliers each list keeps.
pub const TOP_OUTLIERS: usize = 5;

/// Why a stream was idle before an activity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleClass {
    /// The launch call came after the previous activity ended.
    HostWait = 0,
    /// Queued, short gap (< 30 µs).
    KernelWait = 1,
    /// Anything else.
    Other = 2,
}

/// Classifies a gap of `gap_ns` (> 0) before an activity whose launch call started at
/// `launch_start_ns` (if linked), the previous activity having ended at `prev_end_ns`.
pub fn classify(gap_ns: i64, launch_start_ns: Option<i64>, prev_end_ns: i64) -> IdleClass {
    if launch_start_ns.is_some_and(|l| l > prev_end_ns) {
        IdleClass::HostWait
    } else if gap_ns < KERNEL_WAIT_MAX_NS {
        IdleClass::KernelWait
    } else {
        IdleClass::Other
    }
}

/// Idle time of one stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamIdle {
    /// The stream's lane.
    pub lane: LaneId,
    /// Device (process) name.
    pub device: String,
    /// Stream (lane) name.
    pub stream: String,
    /// Device activities counted.
    pub activities: u64,
    /// Union of the activities' intervals, ns.
    pub busy_ns: i64,
    /// Idle ns per [`IdleClass`] (index = class as usize).
    pub idle_ns: [i64; 3],
    /// Number of gaps per class.
    pub gaps: [u64; 3],
}

impl StreamIdle {
    /// Total idle time, ns.
    pub fn idle_total_ns(&self) -> i64 {
        self.idle_ns.iter().sum()
    }

    /// Idle share of busy + idle, percent (0 when both are 0).
    pub fn idle_pct(&self) -> f64 {
        let all = self.busy_ns + self.idle_total_ns();
        if all == 0 {
            0.0
        } else {
            self.idle_total_ns() as f64 * 100.0 / all as f64
        }
    }
}

/// Launch statistics (see the module header).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaunchStats {
    /// Kernels with a launch link.
    pub kernels: u64,
    /// Launch delays (ns), clipped at 0.
    pub delay: Option<Summary>,
    /// Kernels with delay > 100 µs.
    pub delay_outliers: u64,
    /// Largest delays: (kernel slice, delay ns), largest first.
    pub top_delays: Vec<(u32, i64)>,
    /// Durations (ns) of the distinct launch calls.
    pub runtime: Option<Summary>,
    /// Distinct launch calls longer than 50 µs.
    pub runtime_outliers: u64,
    /// Longest launch calls: (launch slice, dur ns), longest first.
    pub top_runtimes: Vec<(u32, i64)>,
    /// Kernels shorter than their launch call.
    pub short_kernels: u64,
    /// Distinct graph launch calls (`cudaGraphLaunch` ...) among the launch calls.
    pub graph_launches: u64,
    /// Kernels launched by graph launch calls.
    pub graph_kernels: u64,
}

impl LaunchStats {
    /// Kernels per graph launch call (none without graph launches).
    pub fn kernels_per_graph_launch(&self) -> Option<f64> {
        (self.graph_launches > 0).then(|| self.graph_kernels as f64 / self.graph_launches as f64)
    }
}

/// Idle time per stream and launch statistics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Idle {
    /// Streams with device activity, in display order (devices, then streams).
    pub streams: Vec<StreamIdle>,
    /// Launch statistics.
    pub launch: LaunchStats,
}

/// Idle time and launch statistics; `range`: activities starting in `[t0, t1)` ns.
pub fn analyze(trace: &Trace, range: Option<(i64, i64)>) -> Idle {
    let (t0, t1) = range.unwrap_or((i64::MIN, i64::MAX));
    let mut streams = Vec::new();
    let mut kernels: Vec<u32> = Vec::new();
    for p in trace
        .processes
        .iter()
        .filter(|p| p.kind == ProcessKind::Gpu)
    {
        for &lane in &p.lanes {
            if let Some(st) = stream_idle(trace, lane, t0, t1, &mut kernels) {
                streams.push(st);
            }
        }
    }
    Idle {
        streams,
        launch: launch_stats(trace, &kernels),
    }
}

/// One stream's idle time; pushes its linked kernels in range onto `kernels`.
fn stream_idle(
    trace: &Trace,
    lane: LaneId,
    t0: i64,
    t1: i64,
    kernels: &mut Vec<u32>,
) -> Option<StreamIdle> {
    let l = trace.lanes.get(lane.0 as usize)?;
    let s = &trace.slices;
    let mut out = StreamIdle {
        lane,
        device: trace
            .processes
            .get(l.process as usize)
            .map(|p| trace.strings.get(p.name).into_owned())
            .unwrap_or_default(),
        stream: trace.strings.get(l.name).into_owned(),
        activities: 0,
        busy_ns: 0,
        idle_ns: [0; 3],
        gaps: [0; 3],
    };
    let mut prev_end: Option<i64> = None;
    // End of the busy interval being merged (for busy_ns), among in-range activities.
    let mut busy: Option<(i64, i64)> = None;
    for i in l.slices.start as usize..l.slices.end as usize {
        let class = trace.class(s.cat[i]);
        if !class.is_device_activity() {
            continue;
        }
        let (start, end) = (s.start_ns[i], s.end_ns(i));
        if start >= t1 {
            break;
        }
        if start >= t0 {
            out.activities += 1;
            let launch = s.launch[i];
            let launch_start = (launch != NONE)
                .then(|| s.start_ns.get(launch as usize).copied())
                .flatten();
            if let Some(pe) = prev_end.filter(|&pe| start > pe) {
                let c = classify(start - pe, launch_start, pe) as usize;
                out.idle_ns[c] += start - pe;
                out.gaps[c] += 1;
            }
            busy = match busy {
                Some((a, b)) if start <= b => Some((a, b.max(end))),
                Some((a, b)) => {
                    out.busy_ns += b - a;
                    Some((start, end))
                }
                None => Some((start, end)),
            };
            if class == CatClass::Kernel && launch != NONE {
                kernels.push(i as u32);
            }
        }
        prev_end = Some(prev_end.map_or(end, |pe| pe.max(end)));
    }
    if let Some((a, b)) = busy {
        out.busy_ns += b - a;
    }
    (out.activities > 0).then_some(out)
}

fn launch_stats(trace: &Trace, kernels: &[u32]) -> LaunchStats {
    let s = &trace.slices;
    let mut out = LaunchStats::default();
    let mut delays: Vec<(u32, i64)> = Vec::with_capacity(kernels.len());
    let mut calls: Vec<(u32, i64)> = Vec::with_capacity(kernels.len());
    for &k in kernels {
        let ki = k as usize;
        let l = s.launch[ki];
        let (Some(&ls), Some(&ld)) = (s.start_ns.get(l as usize), s.dur_ns.get(l as usize)) else {
            continue;
        };
        out.kernels += 1;
        delays.push((k, (s.start_ns[ki] - (ls + ld)).max(0)));
        calls.push((l, ld));
        if s.dur_ns[ki] < ld {
            out.short_kernels += 1;
        }
    }
    calls.sort_unstable();
    calls.dedup_by_key(|c| c.0);
    let is_graph = |call: u32| is_graph_launch(&trace.strings.get(s.name[call as usize]));
    out.graph_launches = calls.iter().filter(|c| is_graph(c.0)).count() as u64;
    out.graph_kernels = kernels.iter().filter(|&&k| is_graph(s.launch[k as usize])).count() as u64;
    let values: Vec<i64> = delays.iter().map(|d| d.1).collect();
    out.delay = Summary::of(&values);
    out.delay_outliers = values
        .iter()
        .filter(|&&d| d > LAUNCH_DELAY_OUTLIER_NS)
        .count() as u64;
    out.top_delays = top(&delays, LAUNCH_DELAY_OUTLIER_NS);
    let durs: Vec<i64> = calls.iter().map(|c| c.1).collect();
    out.runtime = Summary::of(&durs);
    out.runtime_outliers = durs.iter().filter(|&&d| d > RUNTIME_OUTLIER_NS).count() as u64;
    out.top_runtimes = top(&calls, RUNTIME_OUTLIER_NS);
    out
}

/// The [`TOP_OUTLIERS`] largest values above `threshold`, largest first (ties: smaller id).
fn top(items: &[(u32, i64)], threshold: i64) -> Vec<(u32, i64)> {
    let mut v: Vec<(u32, i64)> = items
        .iter()
        .copied()
        .filter(|&(_, x)| x > threshold)
        .collect();
    v.sort_unstable_by_key(|&(id, x)| (std::cmp::Reverse(x), id));
    v.truncate(TOP_OUTLIERS);
    v
}
