//! A synthetic CUDA-graph decode trace: one eager warm-up forward pass, then forward passes
//! replayed as one captured CUDA graph each, written in the format Kineto uses for graphs.
//!
//! **Why synthetic.** No shared fixture launches a CUDA graph (the vLLM ROCm fixture only
//! captures one). The format follows Kineto's sources (docs/definitions.md, "CUDA graphs"):
//! each graphed kernel carries `"graph id"` and `"graph node id"` args
//! (`libkineto/src/CudaMetadataFields.h`), every kernel of one replay shares the
//! `cudaGraphLaunch` call's `correlation` (and its `ac2g` flow id), and node ids hold the exec
//! graph id in their upper 32 bits. Dependency edges between nodes are drawn as flow events from
//! node to node (PyTorch's graph-dependency export, pytorch/pytorch#190850); this trace uses the
//! category `graph_dep`, and the engine reads an edge from any flow joining two kernels of
//! one graph, whatever its category.
//!
//! Ground truth by construction (asserted by `worker/tests/graphs.rs`): [`REPLAYS`] graph
//! launches of [`NODES`] kernels each, `NODES - 1` dependency edges per launch; near misses: one
//! `cudaGraphLaunch` with no kernel recorded, one kernel with a graph id and no launch call, and
//! the warm-up's [`NODES`] kernels launched one by one (no graph id).
//! Byte-identical on every run (the demo's fixed-seed timing model, `super::sim`).

use super::sim::device::{DeviceState, Kernel};
use super::kineto::{push_event, push_str};
use super::serve::{ADD, ATTN_DECODE, MOE_FC1, MOE_FC2, O_PROJ, QKV, RMS_NORM};
use super::sim::{Op, Sim, US};

/// Graph id of the captured forward pass.
pub const GRAPH_ID: i64 = 7;
/// Forward passes replayed as a graph (each one `cudaGraphLaunch` with kernels).
pub const REPLAYS: u32 = 5;
/// Kernels (graph nodes) per forward pass.
pub const NODES: usize = 7;
/// Start of the trace, ns.
const T0_NS: i64 = 4_512_987_600_012_345;

const HEADER: &str = r#"{
  "schemaVersion": 1,
  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045870592,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 233472,
      "numSms": 132, "sharedMemPerBlockOptin": 232448
    }
  ],
  "cuda_runtime_version": 12080,
  "cuda_driver_version": 12080,
  "traceEvents": [
"#;

const fn k(name: &'static str, dur_us: i64) -> Kernel {
    Kernel {
        name,
        dur_ns: dur_us * US,
        grid: [132, 1, 1],
        block: [256, 1, 1],
        regs: 128,
        smem: 65536,
        occupancy_pct: 12,
    }
}

/// The forward pass, node by node.
const FORWARD: [Kernel; NODES] = [
    k(RMS_NORM, 4),
    k(QKV, 21),
    k(ATTN_DECODE, 17),
    k(O_PROJ, 14),
    k(MOE_FC1, 58),
    k(MOE_FC2, 41),
    k(ADD, 3),
];

/// The trace as uncompressed JSON bytes.
#[must_use]
pub fn generate() -> Vec<u8> {
    let mut sim = Sim::new(T0_NS, DeviceState::new(60 << 30, 70 << 30));
    sim.op(Op::new("vllm::model_forward", 30.0), |s| {
        for kernel in &FORWARD {
            s.op(Op::new("aten::mm", 8.0), |s| s.launch(kernel));
        }
    });
    sim.work(200 * US);
    for _ in 0..REPLAYS {
        sim.op(Op::new("CUDAGraph::replay", 12.0), |s| s.graph_launch(GRAPH_ID, &FORWARD));
        sim.work(150 * US);
    }
    // Near misses: a replay whose kernels were not recorded, and a graphed kernel whose
    // launch call was not.
    sim.op(Op::new("CUDAGraph::replay", 12.0), Sim::graph_launch_unrecorded);
    sim.work(150 * US);
    sim.graph_kernel_without_launch(GRAPH_ID, 1, &FORWARD[0]);
    sim.work(50 * US);
    sim.device_sync();
    let events = sim.into_events();
    let mut out = Vec::with_capacity(events.len() * 400);
    out.extend_from_slice(HEADER.as_bytes());
    for (i, event) in events.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b",\n");
        }
        push_event(&mut out, event);
    }
    out.extend_from_slice(b"\n  ],\n  \"traceName\": ");
    push_str(&mut out, "./log/h100/cuda-graph-decode.pt.trace.json");
    out.extend_from_slice(b"\n}\n");
    out
}
