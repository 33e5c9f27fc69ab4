//! Work and the roofline: FLOPs and bytes per op call ([`estimate`]), attributed to the
//! kernels the op launched, achieved TFLOP/s and GB/s against the GPU's peaks ([`peaks`]),
//! compute- or memory-bound, and MFU per step (docs/definitions.md "Roofline").
//!
//! **Attribution.** Kernel -> its launch call (`slices.launch`, by correlation) -> the innermost
//! `cpu_op` enclosing the call, then up its ancestors to the first op with an estimate: the
//! kernel's *work op*. `aten::linear` -> `aten::addmm` -> kernel gives the work to addmm's
//! kernels once, not twice. A work op's FLOPs and bytes are split over the kernels it
//! launched in proportion to their durations (equal shares when all last 0 ns). Kernels
//! without a launch link or without a work op have unknown work.
//!
//! **Peak class** of a kernel: the precision its name spells ([`crate::analysis::kernel_class`]:
//! tf32, bf16/fp16, fp8, fp4, fp32), else its work op's input dtype.
//!
//! **Bound.** Arithmetic intensity I = FLOPs / bytes against the ridge point peak FLOP/s /
//! peak B/s: compute-bound when I >= ridge, memory-bound below. Elementwise ops and reductions
//! (bytes only) are memory-bound by kind. Without peaks (unknown GPU, CPU trace) there is no
//! bound and no percentage, but achieved rates still show.
//!
//! **MFU of a step** = Σ over kernels starting in the step of FLOPs / peak(class), divided by
//! the step's duration: the share of the step the GPU would need at peak for the work done.
//!
//! **Cost.** One pass over kernels, a parent walk each, one estimate per distinct op call on
//! the way (cached by slice); ops with a name we do not estimate cost one table lookup per
//! distinct name.

pub mod dtype;
pub mod estimate;
pub mod estimated;
pub mod peaks;

use crate::analysis::device::{device_properties, DeviceProps};
use crate::analysis::kernel_class::{classify, Precision};
use crate::analysis::steps::Steps;
use crate::model::args::Reader as ArgsReader;
use crate::model::link::enclosing_op;
use crate::model::strings::FxHashMap;
use crate::model::{StrId, Trace, NONE};
use dtype::PeakClass;
use estimate::{OpWork, WorkKeys, WorkKind};
use peaks::Peaks;

/// The peaks of GPU `d`: its datasheet row by name ([`peaks::lookup`]), else an estimate from
/// its compute capability, SM count and clocks ([`estimated::estimate`]), whose `source` says
/// so; `None` when neither applies.
pub fn device_peaks(d: &DeviceProps) -> Option<Peaks> {
    peaks::lookup(&d.name).or_else(|| estimated::estimate(d))
}

/// The work attributed to one kernel call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelWork {
    /// FLOPs, when its work op's are known.
    pub flops: Option<f64>,
    /// Bytes, when its work op's are known.
    pub bytes: Option<f64>,
    /// The peak it is measured against.
    pub peak: Option<PeakClass>,
    /// What its work op does.
    pub kind: WorkKind,
    /// The work op's slice.
    pub op: u32,
    /// `[batch, M, N, K]` when the work op is a GEMM.
    pub gemm: Option<[u64; 4]>,
}

/// Estimates the op calls of one trace: the rule lookup once per name, one estimate per
/// distinct (name, recorded inputs), since most calls repeat a few shapes.
pub(crate) struct Estimator<'t> {
    trace: &'t Trace,
    args: ArgsReader<'t>,
    keys: WorkKeys,
    rule: FxHashMap<StrId, bool>,
    /// Index in `distinct` (`None`: no estimate) by the name's id and
    /// [`WorkKeys::inputs_key`], written after it into `key`.
    cache: FxHashMap<Box<[u8]>, Option<u32>>,
    key: Vec<u8>,
    /// Every distinct work estimated so far.
    distinct: Vec<OpWork>,
}

impl<'t> Estimator<'t> {
    /// An estimator over `trace`'s op slices.
    pub(crate) fn new(trace: &'t Trace) -> Self {
        Self {
            trace,
            args: trace.args.reader(),
            keys: WorkKeys::default(),
            rule: FxHashMap::default(),
            cache: FxHashMap::default(),
            key: Vec::new(),
            distinct: Vec::new(),
        }
    }

    /// The works [`Estimator::id`] has handed out, by id.
    pub(crate) fn into_distinct(self) -> Vec<OpWork> {
        self.distinct
    }

    /// The id of op slice `i`'s work, if any: calls of equal work share one. Args are read
    /// only for names with an estimate rule or args holding a recorded `flops`.
    pub(crate) fn id(&mut self, i: u32) -> Option<u32> {
        let (trace, s) = (self.trace, &self.trace.slices);
        let name = *s.name.get(i as usize)?;
        let known = *self.rule.entry(name).or_insert_with(|| {
            let text = trace.strings.get(name);
            estimate::may_estimate(text.strip_prefix("aten::").unwrap_or(&text))
        });
        let args = self.args.bytes(s.args[i as usize]);
        if !known && !self.keys.recorded(args) {
            return None;
        }
        self.key.clear();
        self.key.extend_from_slice(&name.0.to_le_bytes());
        self.keys.inputs_key(args, &mut self.key);
        if let Some(&id) = self.cache.get(&self.key[..]) {
            return id;
        }
        let id = estimate::estimate(&self.keys, &trace.strings.get(name), args).map(|work| {
            self.distinct.push(work);
            (self.distinct.len() - 1) as u32
        });
        self.cache.insert(self.key.as_slice().into(), id);
        id
    }
}

/// Compute- or memory-bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Intensity at or above the ridge point.
    Compute,
    /// Intensity below the ridge point, or bytes-only work.
    Memory,
}

impl Bound {
    /// `compute` / `memory`, as in JSON.
    pub fn key(self) -> &'static str {
        match self {
            Self::Compute => "compute",
            Self::Memory => "memory",
        }
    }
}

/// Work per kernel call and the GPU's peaks: built once per trace.
pub struct WorkIndex {
    /// Kernel slice ids with known work, ascending, and their work.
    kernels: Vec<(u32, KernelWork)>,
    /// Peaks of the trace's GPU, if known (or given).
    peaks: Option<Peaks>,
    /// The `deviceProperties` name of the first GPU ("" when none is listed).
    device: String,
}

impl WorkIndex {
    /// Estimates every op on the path of a kernel launch and splits it over its kernels;
    /// `peaks` overrides the table lookup of the trace's GPU.
    pub fn new(trace: &Trace, peaks: Option<Peaks>) -> Self {
        let props = device_properties(trace).into_iter().find(|d| !d.name.is_empty());
        let device = props.as_ref().map(|d| d.name.clone()).unwrap_or_default();
        let peaks = peaks.or_else(|| props.as_ref().and_then(device_peaks));
        let s = &trace.slices;
        let mut estimator = Estimator::new(trace);
        let mut ops: FxHashMap<u32, Option<u32>> = FxHashMap::default();
        // (kernel, work op) for every kernel with one, then per work op its kernels' total time.
        let mut found: Vec<(u32, u32)> = Vec::new();
        let mut op_time: FxHashMap<u32, (i64, u32)> = FxHashMap::default();
        for k in trace.kernels_in(None) {
            let launch = s.launch[k as usize];
            let Some(mut op) = (launch != NONE).then(|| enclosing_op(trace, launch)).flatten() else {
                continue;
            };
            let work_op = loop {
                // Decided once per op slice: every kernel under it walks through it again.
                let work = ops.entry(op).or_insert_with(|| estimator.id(op));
                if work.is_some() {
                    break Some(op);
                }
                match enclosing_op(trace, op) {
                    Some(p) => op = p,
                    None => break None,
                }
            };
            if let Some(w) = work_op {
                found.push((k, w));
                let t = op_time.entry(w).or_insert((0, 0));
                t.0 += s.dur_ns[k as usize];
                t.1 += 1;
            }
        }
        let distinct = estimator.into_distinct();
        let mut precision: FxHashMap<StrId, Option<PeakClass>> = FxHashMap::default();
        let kernels = found
            .into_iter()
            .filter_map(|(k, w)| {
                let work = *distinct.get(ops.get(&w).copied().flatten()? as usize)?;
                let (total, count) = op_time.get(&w).copied().unwrap_or((0, 1));
                let share = if total > 0 { s.dur_ns[k as usize] as f64 / total as f64 } else { 1.0 / f64::from(count.max(1)) };
                let by_name = *precision
                    .entry(s.name[k as usize])
                    .or_insert_with(|| peak_of_precision(classify(&trace.strings.get(s.name[k as usize])).precision));
                let peak = by_name.or(work.peak);
                Some((
                    k,
                    KernelWork {
                        flops: work.flops.map(|f| f as f64 * share),
                        bytes: work.bytes.map(|b| b as f64 * share),
                        peak,
                        kind: work.kind,
                        op: w,
                        gemm: work.gemm,
                    },
                ))
            })
            .collect();
        Self { kernels, peaks, device }
    }

    /// The work of kernel slice `k`, if known.
    pub fn kernel(&self, k: u32) -> Option<&KernelWork> {
        let at = self.kernels.binary_search_by_key(&k, |(id, _)| *id).ok()?;
        self.kernels.get(at).map(|(_, w)| w)
    }

    /// The peaks in use, if the GPU is known or peaks were given.
    pub fn peaks(&self) -> Option<&Peaks> {
        self.peaks.as_ref()
    }

    /// The `deviceProperties` name of the trace's first GPU ("" when none).
    pub fn device(&self) -> &str {
        &self.device
    }

    /// Kernels with known work.
    pub fn len(&self) -> usize {
        self.kernels.len()
    }

    /// True when no kernel has known work.
    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
    }

    /// Achieved rates of a set of kernel calls `(slice, duration ns)` with the same name.
    pub fn achieved(&self, calls: impl IntoIterator<Item = (u32, i64)>) -> Achieved {
        let mut a = Achieved::default();
        let mut peak_time_s = 0.0;
        let mut any_flops = false;
        for (k, dur) in calls {
            let Some(w) = self.kernel(k) else { continue };
            a.measured_ns += dur;
            a.kind.get_or_insert(w.kind);
            a.peak.get_or_insert(w.peak.unwrap_or(PeakClass::Fp32));
            if let Some(f) = w.flops {
                any_flops = true;
                a.flops += f;
                if let Some(p) = self.peaks.as_ref().and_then(|p| p.tflops(w.peak.unwrap_or(PeakClass::Fp32))) {
                    peak_time_s += f / (p * 1e12);
                }
            }
            if let Some(b) = w.bytes {
                a.bytes = Some(a.bytes.unwrap_or(0.0) + b);
            }
        }
        a.has_flops = any_flops;
        let secs = a.measured_ns as f64 / 1e9;
        if secs > 0.0 {
            a.tflops = any_flops.then(|| a.flops / secs / 1e12);
            a.gbps = a.bytes.map(|b| b / secs / 1e9);
            a.peak_pct = (any_flops && peak_time_s > 0.0).then(|| 100.0 * peak_time_s / secs);
            a.bandwidth_pct = match (a.gbps, self.peaks.as_ref().and_then(|p| p.gbps)) {
                (Some(g), Some(peak)) => Some(100.0 * g / peak),
                _ => None,
            };
        }
        a.bound = self.bound(&a);
        a
    }

    /// Compute- or memory-bound, from intensity against the ridge point of `a`'s peak class.
    fn bound(&self, a: &Achieved) -> Option<Bound> {
        if a.measured_ns == 0 {
            return None;
        }
        if matches!(a.kind, Some(WorkKind::Elementwise | WorkKind::Reduction)) && !a.has_flops {
            return Some(Bound::Memory);
        }
        let peaks = self.peaks.as_ref()?;
        let ridge = peaks.tflops(a.peak?)? * 1e12 / (peaks.gbps? * 1e9);
        let intensity = a.flops / a.bytes.filter(|&b| b > 0.0)?;
        a.has_flops.then_some(if intensity >= ridge { Bound::Compute } else { Bound::Memory })
    }

    /// MFU of each step of `steps`, in %: `None` without peaks or without any FLOPs in it.
    pub fn step_mfu(&self, trace: &Trace, steps: &Steps) -> Vec<Option<f64>> {
        let Some(peaks) = self.peaks.as_ref() else {
            return vec![None; steps.steps.len()];
        };
        let s = &trace.slices;
        // Kernels with FLOPs, by start, with their time at peak in seconds.
        let mut at_peak: Vec<(i64, f64)> = self
            .kernels
            .iter()
            .filter_map(|(k, w)| {
                let p = peaks.tflops(w.peak.unwrap_or(PeakClass::Fp32))?;
                Some((s.start_ns[*k as usize], w.flops? / (p * 1e12)))
            })
            .collect();
        at_peak.sort_by_key(|&(t, _)| t);
        steps
            .steps
            .iter()
            .map(|step| {
                let lo = at_peak.partition_point(|&(t, _)| t < step.start_ns);
                let hi = at_peak.partition_point(|&(t, _)| t < step.end_ns);
                let secs = step.dur_ns() as f64 / 1e9;
                (hi > lo && secs > 0.0).then(|| 100.0 * at_peak[lo..hi].iter().map(|&(_, p)| p).sum::<f64>() / secs)
            })
            .collect()
    }
}

/// Achieved rates of a group of kernel calls (a kernel-table row, a slice).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Achieved {
    /// FLOPs of the calls with known FLOPs.
    pub flops: f64,
    /// Whether any call has known FLOPs (`flops` is 0 otherwise, meaning unknown).
    pub has_flops: bool,
    /// Bytes of the calls with known bytes.
    pub bytes: Option<f64>,
    /// Time of the calls with known work, ns: the rates divide by it.
    pub measured_ns: i64,
    /// FLOPs / measured time, TFLOP/s.
    pub tflops: Option<f64>,
    /// Bytes / measured time, GB/s.
    pub gbps: Option<f64>,
    /// Achieved share of the compute peak, %.
    pub peak_pct: Option<f64>,
    /// Achieved share of the memory bandwidth, %.
    pub bandwidth_pct: Option<f64>,
    /// Compute- or memory-bound.
    pub bound: Option<Bound>,
    /// The peak class of the first call (what `peak_pct` is against).
    pub peak: Option<PeakClass>,
    /// What the first call's work op does.
    pub kind: Option<WorkKind>,
}

/// The peak class a kernel name's precision runs at (`None`: the name does not tell).
fn peak_of_precision(p: Precision) -> Option<PeakClass> {
    Some(match p {
        Precision::Fp64 | Precision::Fp32 => PeakClass::Fp32,
        Precision::Tf32 => PeakClass::Tf32,
        Precision::Bf16 | Precision::Fp16 => PeakClass::Bf16,
        Precision::Fp8 | Precision::Int8 => PeakClass::Fp8,
        Precision::Fp4 => PeakClass::Fp4,
        Precision::Unknown => return None,
    })
}

