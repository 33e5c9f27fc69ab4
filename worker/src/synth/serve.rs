//! A synthetic B200 inference trace: a few vLLM-style decode iterations of an FP4 MoE model on
//! one Blackwell GPU, carrying the kernel names such a run records (trtllm-gen block-scaled
//! `bmm_MxE4m3_MxE2m1MxE4m3_Fp32_*` MoE GEMMs, cuBLAS `nvjet_*` and `sm100_xmma_gemm_*`,
//! FlashAttention and TensorRT-LLM FP8 `fmha_v2_*`, NVLS `multimem_all_reduce_kernel` and vLLM's
//! `cross_device_reduce_2stage`, norms, quantization and elementwise kernels).
//!
//! **Why synthetic.** No public B200 Kineto trace is among the shared fixtures; this one holds
//! the names real B200 vLLM traces show, on realistic durations, so the kernel-class table
//! (`crate::analysis::kernel_class`) has a Blackwell serving trace to be tested on. Shapes,
//! launch arguments and timings are made up (the timing model assumes the demo's A100 SM count
//! for `blocks per SM`); names are not.
//!
//! Output: a Kineto trace in object form with `deviceProperties` of a B200 (compute capability
//! 10.0, 148 SMs), `cpu_op`s launching kernels through `cudaLaunchKernel` with `ac2g` flows, and
//! **no** `ProfilerStep#N` (serving loops are not stepped), so analyses use the whole trace.
//! Byte-identical on every run (the demo's fixed-seed timing model, `super::sim`).
//! Cost: about 900 events, built in milliseconds.

use super::sim::device::{DeviceState, Kernel};
use super::kineto::{push_event, push_str};
use super::sim::{Op, Sim, US};

/// Decode iterations (forward passes).
pub const ITERATIONS: u32 = 4;
/// Transformer layers per forward pass.
const LAYERS: u32 = 4;
/// Start of the trace, ns.
const T0_NS: i64 = 4_512_345_600_012_345;

const HEADER: &str = r#"{
  "schemaVersion": 1,
  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA B200", "totalGlobalMem": 191514411008,
      "computeMajor": 10, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 233472,
      "numSms": 148, "sharedMemPerBlockOptin": 232448
    }
  ],
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},
  "cuda_runtime_version": 12080,
  "cuda_driver_version": 12080,
  "traceEvents": [
"#;

/// A kernel with a plausible launch shape; only the name and duration matter here.
const fn k(name: &'static str, dur_us: i64) -> Kernel {
    Kernel {
        name,
        dur_ns: dur_us * US,
        grid: [148, 1, 1],
        block: [256, 1, 1],
        regs: 128,
        smem: 65536,
        occupancy_pct: 12,
    }
}

/// MoE expert GEMM 1 (gate/up with SwiGLU): MXFP4 weights x MXFP8 activations, trtllm-gen.
pub const MOE_FC1: &str = "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s6_et128x16_m256x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedS_biasM_bN_ldgsts_tmaOpt_clmp_swiGlu_dynBatch_sm100f";
/// MoE expert GEMM 2 (down): MXFP4 weights x bf16 activations, bf16 out, trtllm-gen.
pub const MOE_FC2: &str = "bmm_Bfloat16_MxE2m1Bfloat16_Fp32_t128x8x256u2_s5_et128x8_m128x8x32_cga1x1x1_16dp256b_rM_TN_transOut_schedS_biasM_bN_ldgsts_tmaOpt_dynBatch_sm100f";
/// QKV projection, cuBLASLt JIT kernel.
pub const QKV: &str = "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NNT";
/// Output projection, cuBLAS bf16.
pub const O_PROJ: &str = "sm100_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_cluster2x1x1_stage4_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas";
/// Decode attention, FlashAttention split-KV.
pub const ATTN_DECODE: &str = "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, true, false, false, false, true, true, false, false>(flash::Flash_fwd_params)";
/// Attention over an FP8 KV cache, TensorRT-LLM fused MHA.
pub const ATTN_FP8: &str = "fmha_v2_flash_attention_e4m3_fp32_64_128_S_q_paged_kv_128_sm100_kernel_nl";
/// NVLink SHARP all-reduce (PyTorch symmetric memory).
pub const ALL_REDUCE_NVLS: &str = "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)";
/// vLLM's custom all-reduce.
pub const ALL_REDUCE_CUSTOM: &str = "void vllm::cross_device_reduce_2stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)";
/// Residual add.
pub const ADD: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)";
/// Fused residual add + RMSNorm.
pub const RMS_NORM: &str = "void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, float, int, int)";
/// Per-token FP8 quantization of activations.
pub const QUANT: &str = "void vllm::scaled_fp8_quant_kernel_strided<c10::BFloat16, c10::Float8_e4m3fn>(c10::Float8_e4m3fn*, c10::BFloat16 const*, float const*, long, long)";

/// One transformer layer: norm, QKV, attention, output projection, all-reduce, MoE.
fn layer(sim: &mut Sim, i: u32) {
    sim.op(Op::new("_C::fused_add_rms_norm", 6.0), |s| s.launch(&k(RMS_NORM, 4)));
    sim.op(Op::new("aten::mm", 9.0), |s| s.launch(&k(QKV, 21)));
    sim.op(Op::new("vllm::unified_attention_with_output", 14.0), |s| {
        let attention = if i.is_multiple_of(2) { k(ATTN_DECODE, 17) } else { k(ATTN_FP8, 13) };
        s.launch(&attention);
    });
    sim.op(Op::new("aten::mm", 9.0), |s| s.launch(&k(O_PROJ, 14)));
    sim.op(Op::new("vllm::all_reduce", 8.0), |s| {
        let reduce = if i.is_multiple_of(2) { k(ALL_REDUCE_NVLS, 11) } else { k(ALL_REDUCE_CUSTOM, 15) };
        s.launch(&reduce);
    });
    sim.op(Op::new("_C::scaled_fp8_quant", 5.0), |s| s.launch(&k(QUANT, 3)));
    sim.op(Op::new("trtllm::fp4_block_scale_moe_runner", 20.0), |s| {
        s.launch(&k(MOE_FC1, 58));
        s.launch(&k(MOE_FC2, 41));
    });
    sim.op(Op::new("aten::add", 6.0), |s| s.launch(&k(ADD, 3)));
}

/// The trace as uncompressed JSON bytes.
#[must_use]
pub fn generate() -> Vec<u8> {
    let mut sim = Sim::new(T0_NS, DeviceState::new(150 << 30, 160 << 30));
    for _ in 0..ITERATIONS {
        sim.op(Op::new("vllm::model_forward", 30.0), |s| {
            for i in 0..LAYERS {
                layer(s, i);
            }
        });
        sim.work(120 * US);
    }
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
    push_str(&mut out, "./log/b200/vllm-decode.pt.trace.json");
    out.extend_from_slice(b"\n}\n");
    out
}
