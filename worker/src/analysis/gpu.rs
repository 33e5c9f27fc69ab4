//! GPU metrics per device: GPU Utilization, Est. SM Efficiency, Est. Achieved Occupancy and
//! tensor-core share of kernel time, over a window or as time series for counter lanes
//! (the GPU metrics; definitions: docs/definitions.md §3, tb_plugin's `gpu_metrics_parser.py`).
//!
//! **Inputs and outputs.** A loaded [`Trace`]. Kernels are [`CatClass::Kernel`] slices (copies
//! and memsets are not); their device is the `device` arg (what tb_plugin reads), else the
//! numeric pid of their process, else -1. Times are i64 ns; metrics are fractions 0..=1,
//! occupancy in percent.
//!
//! **Definitions**, for a device and a window W = `[w0, w1)`:
//! - GPU Utilization = |union of kernel intervals ∩ W| / |W| (streams overlap: a union).
//! - Est. SM Efficiency = ∫_W min(1, Σ `blocks per SM` of the kernels running at t) dt / |W|;
//!   kernels whose value is missing or <= 0 add nothing (tb_plugin skips them too). `None`
//!   when no kernel of the device carries the arg (2021 traces).
//! - Est. Achieved Occupancy = Σ occ_k · |k ∩ W| / Σ |k ∩ W| over kernels carrying
//!   `est. achieved occupancy %` (>= 0); `None` when none overlaps W.
//! - Tensor-core share = Σ |k ∩ W| of tensor-core kernels ([`super::kernel_class`]) /
//!   Σ |k ∩ W|; `None` without kernel time in W.
//!
//! **Window** ([`metrics_window`]), without a range: tb_plugin's, so the numbers match what
//! its users know: from the first step's start to the last step's end, using the step spans of
//! [`super::steps`] (a step extends to the end of the device work it launched; the first
//! step starts after device work still running from before it; the incomplete tail is left
//! out). A trace without `ProfilerStep#N` is one step, as in tb_plugin: the span of its host
//! ops (`cpu_op`, `python_function`) extended the same way. No host ops either: the whole
//! trace `[0, end)`. With a range `[t0, t1)`, W is the range and kernels are **clipped** to it
//! (a metric is a time integral; unlike the kernel table, nothing is counted by start).
//!
//! **Structure and cost.** [`GpuIndex::new`] sweeps each device's kernel endpoints once
//! (O(k log k)) into a piecewise-constant profile: boundaries `t[j]` and, at each, the running
//! integrals of busy time, kernel time, tensor-core kernel time, min(1, Σ blocks per SM),
//! occupancy · time and occupancy-weighted time. Any window is then two binary searches per
//! device (O(log k)), a time series O(buckets · log k). Memory: 56 bytes per boundary, at most
//! two boundaries per kernel.
//!
//! **Why** prefix integrals, not a pass per query: counter lanes ask for every visible range
//! at every zoom level; rejected: re-sweeping per bucket (O(k) each).
//!
//! References: docs/definitions.md §3; tb_plugin `gpu_metrics_parser.py`, `range_utils.py`
//! (`merge_ranges_with_value`), `tensor_cores_parser.py`.

use super::args::ArgKey;
use super::kernels::LaunchArgs;
use super::steps::{self, Steps};
use super::kernel_class::uses_tensor_cores;
use crate::analysis::args::parse_i64;
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, StrId, Trace, NONE};

/// Metrics of one device over a window.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuMetrics {
    /// Device id (`device` arg or pid).
    pub device: i64,
    /// The window `[w0, w1)`, ns.
    pub window: (i64, i64),
    /// Kernels on the device (whole trace).
    pub kernels: u64,
    /// |union of kernels ∩ W|, ns.
    pub busy_ns: i64,
    /// Σ |k ∩ W| over kernels, ns (overlapping kernels count twice).
    pub kernel_ns: i64,
    /// GPU Utilization, 0..=1.
    pub utilization: f64,
    /// Est. SM Efficiency, 0..=1; `None` without `blocks per SM` args.
    pub sm_efficiency: Option<f64>,
    /// Est. Achieved Occupancy, percent; `None` without occupancy args in W.
    pub occupancy_pct: Option<f64>,
    /// Tensor-core kernels' share of kernel time, 0..=1; `None` without kernel time in W.
    pub tensor_core_share: Option<f64>,
}

/// One bucket of a device's time series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuSample {
    /// Bucket start, ns.
    pub start_ns: i64,
    /// Bucket end, ns (the last bucket may be shorter).
    pub end_ns: i64,
    /// GPU Utilization in the bucket, 0..=1.
    pub utilization: f64,
    /// Est. SM Efficiency in the bucket; `None` without `blocks per SM` args.
    pub sm_efficiency: Option<f64>,
    /// Est. Achieved Occupancy in the bucket, percent; `None` without occupancy in it.
    pub occupancy_pct: Option<f64>,
}

/// Running integrals at each boundary of one device's kernel profile (see the module docs).
#[derive(Default)]
struct Profile {
    device: i64,
    kernels: u64,
    has_blocks: bool,
    t: Vec<i64>,
    busy: Vec<i64>,
    kernel: Vec<i64>,
    tc: Vec<i64>,
    occ_ns: Vec<i64>,
    sm: Vec<f64>,
    occ: Vec<f64>,
}

/// Per-device kernel profiles of a trace; build once, query any window.
pub struct GpuIndex {
    profiles: Vec<Profile>,
}

/// A kernel as the sweep sees it.
struct Kernel {
    start: i64,
    end: i64,
    blocks: f64,
    occ: Option<f64>,
    tc: bool,
}

impl GpuIndex {
    /// Sweeps every device's kernels (see the module cost).
    pub fn new(trace: &Trace) -> Self {
        let s = &trace.slices;
        let args = LaunchArgs::new();
        let device_key = ArgKey::new("device");
        let mut tc_of: FxHashMap<StrId, bool> = FxHashMap::default();
        let mut by_device: Vec<(i64, Vec<Kernel>)> = Vec::new();
        let mut reader = trace.args.reader();
        for i in 0..s.len() {
            if trace.class(s.cat[i]) != CatClass::Kernel {
                continue;
            }
            let text = reader.bytes(s.args[i]);
            let device = device_key
                .i64(text)
                .or_else(|| pid_of(trace, i))
                .unwrap_or(-1);
            let (blocks, occ) = args.of(text);
            let tc = *tc_of
                .entry(s.name[i])
                .or_insert_with(|| uses_tensor_cores(&trace.strings.get(s.name[i])));
            let k = Kernel {
                start: s.start_ns[i],
                end: s.end_ns(i),
                blocks: blocks.unwrap_or(0.0),
                occ: occ.filter(|v| *v >= 0.0),
                tc,
            };
            match by_device.iter_mut().find(|(d, _)| *d == device) {
                Some((_, ks)) => ks.push(k),
                None => by_device.push((device, vec![k])),
            }
        }
        by_device.sort_by_key(|(d, _)| *d);
        Self {
            profiles: by_device.into_iter().map(|(d, ks)| sweep(d, &ks)).collect(),
        }
    }

    /// Devices with kernels, ascending.
    pub fn devices(&self) -> Vec<i64> {
        self.profiles.iter().map(|p| p.device).collect()
    }

    /// Metrics of every device over `window` `[w0, w1)`, devices ascending.
    pub fn metrics(&self, window: (i64, i64)) -> Vec<GpuMetrics> {
        self.profiles.iter().map(|p| p.metrics(window)).collect()
    }

    /// Time series of `device` over `[start_ns, end_ns)` in buckets of `bucket_ns` (the last
    /// one may be shorter). Empty for an unknown device, `bucket_ns <= 0` or an empty span.
    /// The caller bounds the bucket count (span / bucket_ns).
    pub fn timeseries(
        &self,
        device: i64,
        (start_ns, end_ns): (i64, i64),
        bucket_ns: i64,
    ) -> Vec<GpuSample> {
        let Some(p) = self.profiles.iter().find(|p| p.device == device) else {
            return Vec::new();
        };
        if bucket_ns <= 0 || end_ns <= start_ns {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut b0 = start_ns;
        while b0 < end_ns {
            let b1 = b0.saturating_add(bucket_ns).min(end_ns);
            let m = p.metrics((b0, b1));
            out.push(GpuSample {
                start_ns: b0,
                end_ns: b1,
                utilization: m.utilization,
                sm_efficiency: m.sm_efficiency,
                occupancy_pct: m.occupancy_pct,
            });
            b0 = b1;
        }
        out
    }
}

/// The numeric pid of slice `i`'s process.
fn pid_of(trace: &Trace, i: usize) -> Option<i64> {
    let lane = trace.lanes.get(trace.slices.lane.get(i)?.0 as usize)?;
    let process = trace.processes.get(lane.process as usize)?;
    parse_i64(trace.strings.bytes_of(process.pid))
}

/// Builds one device's profile from its kernels.
fn sweep(device: i64, kernels: &[Kernel]) -> Profile {
    // (time, kernel index, +1 start / -1 end); zero-length kernels change nothing.
    let mut events: Vec<(i64, u32, i8)> = Vec::with_capacity(kernels.len() * 2);
    for (k, kern) in kernels.iter().enumerate() {
        if kern.end > kern.start {
            events.push((kern.start, k as u32, 1));
            events.push((kern.end, k as u32, -1));
        }
    }
    events.sort_unstable();
    let mut p = Profile {
        device,
        kernels: kernels.len() as u64,
        has_blocks: kernels.iter().any(|k| k.blocks > 0.0),
        ..Profile::default()
    };
    // State of the segment starting at the last boundary.
    let (mut active, mut tc, mut occ_n) = (0i64, 0i64, 0i64);
    let (mut blocks, mut occ) = (0.0f64, 0.0f64);
    let mut e = 0;
    while e < events.len() {
        let t = events[e].0;
        if let (
            Some(&last_t),
            Some(&busy),
            Some(&kern),
            Some(&tcs),
            Some(&on),
            Some(&sm),
            Some(&oc),
        ) = (
            p.t.last(),
            p.busy.last(),
            p.kernel.last(),
            p.tc.last(),
            p.occ_ns.last(),
            p.sm.last(),
            p.occ.last(),
        ) {
            let len = t - last_t;
            p.busy.push(busy + if active > 0 { len } else { 0 });
            p.kernel.push(kern + active * len);
            p.tc.push(tcs + tc * len);
            p.occ_ns.push(on + occ_n * len);
            p.sm.push(sm + blocks.min(1.0) * len as f64);
            p.occ.push(oc + occ * len as f64);
        } else {
            p.busy.push(0);
            p.kernel.push(0);
            p.tc.push(0);
            p.occ_ns.push(0);
            p.sm.push(0.0);
            p.occ.push(0.0);
        }
        p.t.push(t);
        while e < events.len() && events[e].0 == t {
            let (_, k, sign) = events[e];
            let kern = &kernels[k as usize];
            let d = i64::from(sign);
            active += d;
            tc += if kern.tc { d } else { 0 };
            if kern.blocks > 0.0 {
                blocks += f64::from(sign) * kern.blocks;
            }
            if let Some(o) = kern.occ {
                occ_n += d;
                occ += f64::from(sign) * o;
            }
            e += 1;
        }
        // Float sums drift; an idle device has exactly nothing running.
        if active == 0 {
            (blocks, occ) = (0.0, 0.0);
        }
        if occ_n == 0 {
            occ = 0.0;
        }
        blocks = blocks.max(0.0);
    }
    p
}

impl Profile {
    /// Integral of an integer profile from the first boundary to `x`.
    fn int_at(&self, p: &[i64], x: i64) -> i64 {
        let j = self.t.partition_point(|&b| b <= x);
        match (
            j.checked_sub(1)
                .and_then(|i| Some((self.t.get(i)?, p.get(i)?))),
            self.t.get(j),
            p.get(j),
        ) {
            (None, _, _) => 0,
            (Some((&a, &pa)), Some(&b), Some(&pb)) if b > a => pa + (pb - pa) / (b - a) * (x - a),
            (Some((_, &pa)), _, _) => pa,
        }
    }

    /// Integral of a float profile from the first boundary to `x`.
    fn f64_at(&self, p: &[f64], x: i64) -> f64 {
        let j = self.t.partition_point(|&b| b <= x);
        match (
            j.checked_sub(1)
                .and_then(|i| Some((self.t.get(i)?, p.get(i)?))),
            self.t.get(j),
            p.get(j),
        ) {
            (None, _, _) => 0.0,
            (Some((&a, &pa)), Some(&b), Some(&pb)) if b > a => {
                pa + (pb - pa) * ((x - a) as f64 / (b - a) as f64)
            }
            (Some((_, &pa)), _, _) => pa,
        }
    }

    fn metrics(&self, (w0, w1): (i64, i64)) -> GpuMetrics {
        let len = w1.saturating_sub(w0);
        let int = |p: &[i64]| self.int_at(p, w1) - self.int_at(p, w0);
        let flt = |p: &[f64]| (self.f64_at(p, w1) - self.f64_at(p, w0)).max(0.0);
        let (busy, kernel, tc, occ_ns) = if len > 0 {
            (
                int(&self.busy),
                int(&self.kernel),
                int(&self.tc),
                int(&self.occ_ns),
            )
        } else {
            (0, 0, 0, 0)
        };
        let ratio = |num: f64, den: f64| if den > 0.0 { num / den } else { 0.0 };
        GpuMetrics {
            device: self.device,
            window: (w0, w1),
            kernels: self.kernels,
            busy_ns: busy,
            kernel_ns: kernel,
            utilization: ratio(busy as f64, len as f64),
            sm_efficiency: self.has_blocks.then(|| {
                if len > 0 {
                    ratio(flt(&self.sm), len as f64).min(1.0)
                } else {
                    0.0
                }
            }),
            occupancy_pct: (occ_ns > 0).then(|| flt(&self.occ) / occ_ns as f64),
            tensor_core_share: (kernel > 0).then(|| tc as f64 / kernel as f64),
        }
    }
}

/// GPU metrics of every device: over `range` `[t0, t1)` (kernels clipped to it), or over the
/// step window ([`metrics_window`]) when `None`. Devices ascending.
pub fn gpu_metrics(trace: &Trace, range: Option<(i64, i64)>) -> Vec<GpuMetrics> {
    let window = range.unwrap_or_else(|| metrics_window(trace));
    GpuIndex::new(trace).metrics(window)
}

/// Time series of `device` in buckets of `bucket_ns` over `range` (`None`: `[0, trace end)`),
/// for counter lanes. See [`GpuIndex::timeseries`].
pub fn gpu_timeseries(
    trace: &Trace,
    device: i64,
    bucket_ns: i64,
    range: Option<(i64, i64)>,
) -> Vec<GpuSample> {
    let span = range.unwrap_or((0, trace.end_ns));
    GpuIndex::new(trace).timeseries(device, span, bucket_ns)
}

/// tb_plugin's metrics window `[w0, w1)`, ns (see the module docs, **Window**).
pub fn metrics_window(trace: &Trace) -> (i64, i64) {
    metrics_window_of(trace, &steps::analyze(trace, None))
}

/// [`metrics_window`] from the whole trace's step analysis, already made.
pub fn metrics_window_of(trace: &Trace, whole: &Steps) -> (i64, i64) {
    let all = &whole.steps;
    let complete: Vec<_> = all.iter().filter(|s| !s.incomplete).collect();
    let spans = if complete.is_empty() {
        all.iter().collect()
    } else {
        complete
    };
    if let (Some(first), Some(last)) = (spans.first(), spans.last()) {
        return (first.start_ns, last.end_ns.max(first.start_ns));
    }
    match host_span(trace) {
        Some(span) => extend_by_launches(trace, span),
        None => (0, trace.end_ns),
    }
}

/// First start and last end of the host ops (`cpu_op` class and `python_function`).
fn host_span(trace: &Trace) -> Option<(i64, i64)> {
    let python = trace.strings.lookup("python_function");
    let s = &trace.slices;
    (0..s.len())
        .filter(|&i| trace.class(s.cat[i]) == CatClass::CpuOp || Some(s.cat[i]) == python)
        .map(|i| (s.start_ns[i], s.end_ns(i)))
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
}

/// One host span as a tb_plugin step: its end extended to the end of the device work launched
/// from inside it, its start moved past device work launched outside it that ended before the
/// first launched activity started.
fn extend_by_launches(trace: &Trace, (c0, c1): (i64, i64)) -> (i64, i64) {
    let s = &trace.slices;
    // Launched by a call lying wholly inside the span (tb_plugin: start >= span start, end <=
    // span end).
    let inside = |i: usize| -> bool {
        let l = s.launch[i];
        let (Some(&ls), Some(&ld)) = (s.start_ns.get(l as usize), s.dur_ns.get(l as usize)) else {
            return false;
        };
        l != NONE && ls >= c0 && ls + ld <= c1
    };
    let device: Vec<usize> = (0..s.len())
        .filter(|&i| trace.class(s.cat[i]).is_device_activity())
        .collect();
    let launched = device
        .iter()
        .filter(|&&i| inside(i))
        .map(|&i| (s.start_ns[i], s.end_ns(i)))
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
    let Some((first_start, last_end)) = launched else {
        return (c0, c1);
    };
    let before = device
        .iter()
        .filter(|&&i| !inside(i) && s.end_ns(i) < first_start)
        .map(|&i| s.end_ns(i))
        .max();
    let start = before.map_or(c0, |e| e.max(c0));
    (start, c1.max(last_end).max(start))
}
