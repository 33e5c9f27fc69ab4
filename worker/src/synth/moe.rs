//! A synthetic expert-parallel MoE training trace whose communication kernels carry names no
//! kernel-class table knows, launched under dispatch / combine ops of an unknown expert-parallel
//! library (`my_ep::*`) and under a c10d collective, on a communication stream beside the
//! compute stream (`crate::analysis::kernel_context`).
//!
//! **Why synthetic.** No shared fixture records an expert-parallel library the name table does
//! not know; this one is built so every number is known by construction. Each step (µs from the
//! step's start; the annotation spans [0, 600], the last kernel ends at 700):
//!
//! ```text
//! CPU  aten::mm [10,30]   my_ep::dispatch [35,55]   moe::dispatch [300,310]
//!      my_ep::combine [380,395]   aten::add [560,570]   c10d::allgather_ [575,595]
//!        > record_param_comms [578,592]
//! s7   GEMM [50,350]  PERMUTE [360,390]  ADD [620,670]          (compute)
//! s20  NOTIFY [60,90]  FILL [92,98]  DISPATCH [100,300]  COMBINE [400,550]  RING [600,700]
//! ```
//!
//! NOTIFY, DISPATCH, COMBINE and RING are communication by their launching op; FILL (a
//! `FillFunctor`, launched under `my_ep::dispatch`) stays memory by its name; PERMUTE,
//! launched under `moe::dispatch` (token routing, no communication namespace), stays other.
//! Launch calls take 2 µs, at the times `OPS` lists.
//! Byte-identical on every run. Cost: about 60 events per step.

use super::kineto::{push_event, push_str, Arg, Event, Id, Kind};
use std::borrow::Cow;

/// Steps recorded (`ProfilerStep#1` ...).
pub const STEPS: i64 = 3;
/// Time between step starts, ns.
pub const STEP_PERIOD_NS: i64 = 1_000 * US;
/// The host annotation's length, ns.
pub const STEP_CPU_NS: i64 = 600 * US;
/// cuBLAS GEMM on the compute stream.
pub const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
/// Token permutation under `moe::dispatch`: routing, not communication.
pub const PERMUTE: &str = "void moe_permute_tokens_kernel<__nv_bfloat16>(__nv_bfloat16 const*, int const*, __nv_bfloat16*, int)";
/// Elementwise add on the compute stream.
pub const ADD: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)";
/// Expert-parallel notify kernel (unknown library).
pub const NOTIFY: &str = "void my_ep::intranode::notify_dispatch<8>(int const*, int*, int, int**, int)";
/// A buffer fill launched by the dispatch op: memory by its name.
pub const FILL: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, std::array<char*, 1ul> >(int, at::native::FillFunctor<int>, std::array<char*, 1ul>)";
/// Expert-parallel dispatch kernel (unknown library).
pub const DISPATCH: &str = "void my_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, int4 const*, int)";
/// Expert-parallel combine kernel (unknown library).
pub const COMBINE: &str = "void my_ep::intranode::combine<__nv_bfloat16, 8, 768>(__nv_bfloat16*, float*, int4 const*, int)";
/// A ring all-gather of an unknown collective library under `c10d::allgather_`.
pub const RING: &str = "void mycoll::ring_pull_kernel<__nv_bfloat16>(__nv_bfloat16*, unsigned long, int)";

const US: i64 = 1_000;
const T0_NS: i64 = 1_750_000_000_000_000;
const CPU_PID: i64 = 777;
const GPU_PID: i64 = 0;
const COMPUTE_STREAM: i64 = 7;
const COMM_STREAM: i64 = 20;
const CALL_US: i64 = 2;

/// One op: name, [start, end] µs in the step, and what it launches: (call start µs, kernel,
/// stream, kernel [start, end] µs). `record_param_comms` nests in `c10d::allgather_` by time.
type OpSpec = (&'static str, i64, i64, &'static [(i64, &'static str, i64, i64, i64)]);

/// Every op of a step.
const OPS: [OpSpec; 7] = [
    ("aten::mm", 10, 30, &[(15, GEMM, COMPUTE_STREAM, 50, 350)]),
    (
        "my_ep::dispatch",
        35,
        55,
        &[(36, NOTIFY, COMM_STREAM, 60, 90), (40, FILL, COMM_STREAM, 92, 98), (45, DISPATCH, COMM_STREAM, 100, 300)],
    ),
    ("moe::dispatch", 300, 310, &[(302, PERMUTE, COMPUTE_STREAM, 360, 390)]),
    ("my_ep::combine", 380, 395, &[(385, COMBINE, COMM_STREAM, 400, 550)]),
    ("aten::add", 560, 570, &[(562, ADD, COMPUTE_STREAM, 620, 670)]),
    ("c10d::allgather_", 575, 595, &[]),
    ("record_param_comms", 578, 592, &[(580, RING, COMM_STREAM, 600, 700)]),
];

/// The trace as uncompressed JSON bytes: an H800 with `deviceProperties`, [`STEPS`] steps.
#[must_use]
pub fn generate() -> Vec<u8> {
    let mut events = Vec::new();
    let mut corr = 1000;
    for step in 0..STEPS {
        let base = step * STEP_PERIOD_NS;
        let name = format!("ProfilerStep#{}", step + 1);
        events.push(complete(Cow::Owned(name), "user_annotation", CPU_PID, CPU_PID, base, STEP_CPU_NS, Vec::new()));
        for (op, start, end, launches) in OPS {
            events.push(complete(Cow::Borrowed(op), "cpu_op", CPU_PID, CPU_PID, base + start * US, (end - start) * US, Vec::new()));
            for &(call, kernel, stream, k0, k1) in launches {
                corr += 1;
                let c = vec![("correlation", Arg::Int(corr))];
                events.push(complete(Cow::Borrowed("cudaLaunchKernel"), "cuda_runtime", CPU_PID, CPU_PID, base + call * US, CALL_US * US, c));
                let args = vec![
                    ("device", Arg::Int(0)),
                    ("stream", Arg::Int(stream)),
                    ("correlation", Arg::Int(corr)),
                    ("grid", Arg::Raw("[132, 1, 1]".into())),
                    ("block", Arg::Raw("[256, 1, 1]".into())),
                ];
                events.push(complete(Cow::Borrowed(kernel), "kernel", GPU_PID, stream, base + k0 * US, (k1 - k0) * US, args));
            }
        }
    }
    // Kineto writes CPU events in start order (parents first), then device activities.
    events.sort_by_key(|e| (e.pid == Id::Num(GPU_PID), e.ts_ns, std::cmp::Reverse(e.dur_ns())));
    let mut out = Vec::with_capacity(events.len() * 300);
    out.extend_from_slice(
        br#"{
  "schemaVersion": 1,
  "deviceProperties": [
    {"id": 0, "name": "NVIDIA H800", "totalGlobalMem": 85031714816, "computeMajor": 9, "computeMinor": 0, "numSms": 132}
  ],
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 64},
  "traceEvents": [
"#,
    );
    for (i, event) in events.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b",\n");
        }
        push_event(&mut out, event);
    }
    out.extend_from_slice(b"\n  ],\n  \"traceName\": ");
    push_str(&mut out, "./log/moe/ep-train.pt.trace.json");
    out.extend_from_slice(b"\n}\n");
    out
}

/// A complete (`X`) event at `ts_ns` from the trace start.
fn complete(name: Cow<'static, str>, cat: &'static str, pid: i64, tid: i64, ts_ns: i64, dur_ns: i64, args: Vec<(&'static str, Arg)>) -> Event {
    Event { kind: Kind::Complete { cat, dur_ns }, name, pid: Id::Num(pid), tid: Id::Num(tid), ts_ns: T0_NS + ts_ns, args }
}
