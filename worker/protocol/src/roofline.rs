//! The roofline chart on the wire: kernels by achieved TFLOP/s against arithmetic intensity,
//! the GPU's peaks the two roofs are drawn from, and the work of one kernel slice (details).

use crate::SliceRef;
use serde::{Deserialize, Serialize};

/// Everything the roofline chart draws ([`crate::Query::Roofline`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RooflineData {
    /// The `deviceProperties` name of the trace's first GPU ("" when the trace lists none).
    pub device: String,
    /// The device is in the peak table (its peaks were not given by hand).
    pub known: bool,
    /// The peaks in use: the table's, or given ([`crate::ToWorker::SetPeaks`]); `None` when
    /// the GPU is unknown and none were given.
    pub peaks: Option<PeakSet>,
    /// The compute roof: the peak class with the most kernel time among the points and its
    /// dense TFLOP/s; `None` without peaks for it.
    pub roof: Option<(String, f64)>,
    /// One per kernel name with known FLOPs and bytes, by total time (longest first).
    pub points: Vec<RooflinePoint>,
    /// Kernel names not drawn, each with the reason, by total time (longest first).
    pub left_off: Vec<LeftOffKernel>,
}

/// A kernel name the roofline leaves off, and why (`report --json` `roofline.left_off[]`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LeftOffKernel {
    /// Kernel name.
    pub name: String,
    /// Launches.
    pub calls: u64,
    /// Total time, ns.
    pub total_ns: i64,
    /// Share of all kernel time, 0..=1.
    pub share: f64,
    /// Stable id of the reason (`no_op`, `no_shapes`, `no_rule`, `no_flops`, `no_bytes`, `no_time`).
    pub reason: String,
    /// The reason in words, naming the op where there is one.
    pub why: String,
}

/// A GPU's peaks.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PeakSet {
    /// The model as printed (`NVIDIA H100 SXM`, or `given peaks`).
    pub model: String,
    /// Where the numbers come from.
    pub source: String,
    /// Dense TFLOP/s per peak class the GPU has (`fp32`, `tf32`, `bf16`, `fp8`, `fp4`).
    pub tflops: Vec<(String, f64)>,
    /// Memory bandwidth, GB/s.
    pub gbps: Option<f64>,
}

/// One kernel name on the roofline: its calls with known work.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RooflinePoint {
    /// Kernel name.
    pub name: String,
    /// Launches (all of them, as in the kernel table).
    pub calls: u64,
    /// Total time, ns (all launches, as in the kernel table).
    pub total_ns: i64,
    /// FLOPs of the calls with known work.
    pub flops: f64,
    /// Bytes of the calls with known work.
    pub bytes: f64,
    /// Arithmetic intensity, FLOP per byte.
    pub intensity: f64,
    /// Achieved TFLOP/s over the calls with known work.
    pub tflops: f64,
    /// Achieved GB/s over the same calls.
    pub gbps: f64,
    /// The peak class it is measured against.
    pub peak: String,
    /// `compute` / `memory`, when peaks are known.
    pub bound: Option<String>,
    /// Achieved share of its compute peak, %.
    pub peak_pct: Option<f64>,
}

/// The work of one kernel slice and its rates over the slice's duration (details panel).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SliceWork {
    /// FLOPs, when known.
    pub flops: Option<f64>,
    /// Bytes read and written, when known.
    pub bytes: Option<f64>,
    /// Achieved TFLOP/s.
    pub tflops: Option<f64>,
    /// Achieved GB/s.
    pub gbps: Option<f64>,
    /// Achieved share of the compute peak, %.
    pub peak_pct: Option<f64>,
    /// Achieved share of the memory bandwidth, %.
    pub bandwidth_pct: Option<f64>,
    /// `compute` / `memory`.
    pub bound: Option<String>,
    /// The peak class it is measured against.
    pub peak: Option<String>,
    /// The op whose work it carries (its share, by duration).
    pub op: Option<SliceRef>,
}
