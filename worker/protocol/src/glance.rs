//! The trace at a glance: what the Summary tab leads with. Facts the parse reads
//! ([`TraceAbout`], sent with the summary) and what the analyses say ([`Glance`], asked for by
//! [`crate::Query::Glance`] once the timeline has painted).

use serde::{Deserialize, Serialize};

/// How and where the trace was recorded, from its top-level keys (`deviceProperties`,
/// `distributedInfo`, the runtime versions and profiler options Kineto writes).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TraceAbout {
    /// The GPUs that ran work in the trace (all listed ones when none can be matched).
    pub devices: Vec<DeviceAbout>,
    /// Rank, world size and backend of a `torch.distributed` job.
    pub distributed: Option<DistributedAbout>,
    /// Runtime versions and recording options as (label, value), in the trace's order:
    /// `("CUDA runtime", "12.8")`, `("options", "record_shapes, with_stack")`.
    pub recording: Vec<(String, String)>,
}

/// One GPU of `deviceProperties`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct DeviceAbout {
    /// Device id.
    pub id: i64,
    /// `name` ("" when absent).
    pub name: String,
    /// Global memory, bytes.
    pub memory_bytes: Option<i64>,
    /// Compute capability `major.minor` (CUDA; AMD devices write their gfx version here).
    pub compute_capability: Option<String>,
    /// Streaming multiprocessors (compute units).
    pub sms: Option<i64>,
}

/// `distributedInfo`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct DistributedAbout {
    /// Global rank.
    pub rank: Option<u32>,
    /// World size.
    pub world_size: Option<u32>,
    /// `nccl`, `gloo`, ...
    pub backend: Option<String>,
}

/// What the analyses say about the whole trace ([`crate::Query::Glance`]); the same numbers as
/// `kinetoscope report --json`'s `step_stats`, `gpus` and `critical_path`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Glance {
    /// Complete steps; `None` without one.
    pub steps: Option<StepGlance>,
    /// GPU metrics per device over the whole trace.
    pub gpus: Vec<GpuGlance>,
    /// What bounds the steps; `None` without a step (or window) to follow.
    pub bound_by: Option<BoundGlance>,
}

/// Step-time statistics over the complete steps.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StepGlance {
    /// Complete steps.
    pub count: u64,
    /// Mean step time, ns.
    pub mean_ns: f64,
    /// 95th percentile, ns.
    pub p95_ns: f64,
}

/// One GPU's metrics (percentages; `None` where the trace has no data for it).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct GpuGlance {
    /// Device id.
    pub device: i64,
    /// Time with a kernel running, % of the device's window.
    pub utilization_pct: f64,
    /// Kernel-time-weighted SM efficiency, %.
    pub sm_efficiency_pct: Option<f64>,
    /// Kernel-time-weighted achieved occupancy, %.
    pub achieved_occupancy_pct: Option<f64>,
    /// Share of kernel time in tensor-core kernels, %.
    pub tensor_core_pct: Option<f64>,
}

/// The critical-path class that holds most of the steps' paths.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct BoundGlance {
    /// Class id (`cpu_op`, `gpu_compute`, …).
    pub class: String,
    /// Its label (`CPU ops`, `GPU compute`, …).
    pub label: String,
    /// Its path time, % of all steps' path time.
    pub share_pct: f64,
    /// Steps this class bounds (holds most of the path of), of [`BoundGlance::steps`].
    pub steps_bound: u32,
    /// Steps (or windows of a trace without steps) followed.
    pub steps: u32,
}
