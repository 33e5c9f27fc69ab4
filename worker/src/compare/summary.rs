//! Summary rows of a comparison: one per [`Metric`], both sides' values and the deltas.
//!
//! Each value is read from one per-trace analysis ([`TraceFigures`]); a side that lacks the
//! figure (no steps, no kernels, no `[memory]` events) has `None`, and so do the deltas.
//! Where a trace has several GPUs, GPU rates are the mean over its devices (those that have
//! the value): comparing rank 0 on `cuda:0` with rank 1 on `cuda:1` must still line up.

use super::TraceFigures;

/// A summary metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Mean step duration (complete `ProfilerStep#N` spans), ns.
    StepMean,
    /// Median step duration, ns.
    StepMedian,
    /// 95th percentile of step durations, ns.
    StepP95,
    /// "Self CPU time total" of the whole-trace op table, ns.
    SelfCpuTotal,
    /// "Self CUDA time total" of the whole-trace op table, ns.
    SelfDeviceTotal,
    /// GPU Utilization over the step window, percent.
    GpuUtilization,
    /// Est. SM Efficiency over the step window, percent.
    SmEfficiency,
    /// Est. Achieved Occupancy over the step window, percent.
    AchievedOccupancy,
    /// Peak allocated device memory, bytes.
    PeakMemory,
    /// Kernels launched per host step (all kernels / steps).
    KernelsPerStep,
}

/// Every metric, in the order summary rows come.
pub const METRICS: [Metric; 10] = [
    Metric::StepMean,
    Metric::StepMedian,
    Metric::StepP95,
    Metric::SelfCpuTotal,
    Metric::SelfDeviceTotal,
    Metric::GpuUtilization,
    Metric::SmEfficiency,
    Metric::AchievedOccupancy,
    Metric::PeakMemory,
    Metric::KernelsPerStep,
];

/// Unit of a metric's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// Nanoseconds.
    Ns,
    /// Percent, 0–100.
    Pct,
    /// Bytes.
    Bytes,
    /// A count.
    Count,
}

impl Metric {
    /// Stable key (JSON `summary[].key`).
    pub fn key(self) -> &'static str {
        match self {
            Self::StepMean => "step_time_mean",
            Self::StepMedian => "step_time_median",
            Self::StepP95 => "step_time_p95",
            Self::SelfCpuTotal => "self_cpu_time_total",
            Self::SelfDeviceTotal => "self_cuda_time_total",
            Self::GpuUtilization => "gpu_utilization",
            Self::SmEfficiency => "sm_efficiency",
            Self::AchievedOccupancy => "achieved_occupancy",
            Self::PeakMemory => "peak_memory",
            Self::KernelsPerStep => "kernels_per_step",
        }
    }

    /// Human label (text report).
    pub fn label(self) -> &'static str {
        match self {
            Self::StepMean => "Step time (mean)",
            Self::StepMedian => "Step time (median)",
            Self::StepP95 => "Step time (p95)",
            Self::SelfCpuTotal => "Self CPU time total",
            Self::SelfDeviceTotal => "Self CUDA time total",
            Self::GpuUtilization => "GPU Utilization",
            Self::SmEfficiency => "Est. SM Efficiency",
            Self::AchievedOccupancy => "Est. Achieved Occupancy",
            Self::PeakMemory => "Peak memory (allocated)",
            Self::KernelsPerStep => "Kernels per step",
        }
    }

    /// Unit of the values.
    pub fn unit(self) -> Unit {
        match self {
            Self::StepMean
            | Self::StepMedian
            | Self::StepP95
            | Self::SelfCpuTotal
            | Self::SelfDeviceTotal => Unit::Ns,
            Self::GpuUtilization | Self::SmEfficiency | Self::AchievedOccupancy => Unit::Pct,
            Self::PeakMemory => Unit::Bytes,
            Self::KernelsPerStep => Unit::Count,
        }
    }

    /// The value of this metric for one trace, `None` when the trace lacks it.
    pub fn value(self, f: &TraceFigures) -> Option<f64> {
        let stats = f.step_stats.as_ref();
        match self {
            Self::StepMean => stats.map(|s| s.mean),
            Self::StepMedian => stats.map(|s| s.median),
            Self::StepP95 => stats.map(|s| s.p95),
            Self::SelfCpuTotal => Some(f.ops.self_cpu_total_ns as f64),
            Self::SelfDeviceTotal => Some(f.ops.self_device_total_ns as f64),
            Self::GpuUtilization => mean(f.gpus.iter().map(|g| Some(g.utilization * 100.0))),
            Self::SmEfficiency => mean(f.gpus.iter().map(|g| g.sm_efficiency.map(|v| v * 100.0))),
            Self::AchievedOccupancy => mean(f.gpus.iter().map(|g| g.occupancy_pct)),
            Self::PeakMemory => f.peak_memory_bytes.map(|b| b as f64),
            Self::KernelsPerStep => (f.steps > 0).then(|| f.kernels.calls as f64 / f.steps as f64),
        }
    }
}

/// Mean of the present values, `None` when none is.
fn mean(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let (sum, n) = values
        .flatten()
        .fold((0.0, 0u32), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / f64::from(n))
}

/// One summary row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SummaryRow {
    /// Which metric.
    pub metric: Metric,
    /// Baseline value, in the metric's unit.
    pub base: Option<f64>,
    /// Candidate value.
    pub cand: Option<f64>,
    /// `cand - base`; `None` when either is missing.
    pub delta: Option<f64>,
    /// `(cand - base) / base`; `None` when either is missing or the base is 0.
    pub rel_delta: Option<f64>,
}

impl SummaryRow {
    /// The row of `metric` from two values.
    pub fn new(metric: Metric, base: Option<f64>, cand: Option<f64>) -> Self {
        let delta = base.zip(cand).map(|(b, c)| c - b);
        let rel_delta = base
            .zip(delta)
            .filter(|(b, _)| *b != 0.0)
            .map(|(b, d)| d / b);
        Self {
            metric,
            base,
            cand,
            delta,
            rel_delta,
        }
    }
}

/// Summary rows of two traces, in [`METRICS`] order.
pub fn rows(base: &TraceFigures, cand: &TraceFigures) -> Vec<SummaryRow> {
    METRICS
        .iter()
        .map(|&m| SummaryRow::new(m, m.value(base), m.value(cand)))
        .collect()
}
