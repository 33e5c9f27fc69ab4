//! Synthetic training steps showing one pattern of the cheatsheet rules for tensor cores, attention, copies, syncs and SM fill (TF32
//! on fp32 inputs, misaligned GEMM shapes, unfused attention, layout copies, host syncs by
//! cause, grids smaller than the GPU), each with a knob that turns it into its near miss.
//!
//! **Why synthetic.** The real fixtures show some of these patterns only with host-bound
//! steps (nothing of them on the critical path) or not at all; here every number is known by
//! construction. Each of [`STEPS`] steps spans [`STEP_NS`]: the `ProfilerStep#` annotation
//! covers the host's ops, which launch every kernel before 100 µs (but in `Syncs`), and the
//! kernels run back to back on one stream to the step's end, past the annotation, so the step
//! is GPU-bound and every kernel from the first is on its critical path. Times below are µs from the step's start; each case's layout is in
//! [`ops`]. An A100-SXM4-80GB (`computeMajor` 8, 108 SMs) in `deviceProperties`.
//!
//! Byte-identical on every run. Cost: about 30 events per step.

use super::kineto::{push_event, Arg, Event, Id, Kind};
use std::borrow::Cow;

/// Steps recorded (`ProfilerStep#1` ...).
pub const STEPS: i64 = 3;
/// A step's length, ns: the annotation and the GPU's busy span both end there.
pub const STEP_NS: i64 = 1_000 * US;
/// CUTLASS TF32 GEMM (Ampere `s1688gemm`, no half type in the name).
pub const TF32_GEMM: &str = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4::Params)";
/// cuBLAS bf16 tensor-core GEMM.
pub const BF16_GEMM: &str = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel";
/// cuBLAS fp16 batched GEMM (attention scores and context).
pub const FP16_BMM: &str = "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn";
/// PyTorch's softmax kernel.
pub const SOFTMAX: &str = "void (anonymous namespace)::softmax_warp_forward<c10::Half, c10::Half, float, 7, false, false>(c10::Half*, c10::Half const*, int, int, int, bool const*, int, bool)";
/// A FlashAttention-2 forward kernel (the fused near miss).
pub const FLASH: &str = "void flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::half_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::half_t> >, false, false, false, false, true, true, false>(Flash_fwd_params)";
/// An elementwise add.
pub const ADD: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
/// Dropout's fused mask kernel.
pub const DROPOUT: &str = "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::Half, float, unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<c10::Half const, unsigned int>, at::cuda::detail::TensorInfo<c10::Half, unsigned int>, at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)";
/// The copy kernel `copy_` runs for a strided source (`contiguous`, `.to(dtype)`, `repeat`).
pub const COPY: &str = "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})";
/// A reduction launched with a small grid.
pub const REDUCE: &str = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)";
/// `nonzero`'s counting kernel.
pub const NONZERO: &str = "void at::native::(anonymous namespace)::flag_kernel<512, 16, unsigned char>(unsigned char const*, long*, long, long, int)";

/// Which pattern a trace shows, with the knob that makes its near miss.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Case {
    /// `tf32-fp32`: `aten::mm` [10, 20] launches [`TF32_GEMM`] [100, 700]; `aten::add` [20, 30]
    /// launches [`ADD`] [700, 1000]. The mm records `Input type` `["float", "float"]` when
    /// `recorded`, none otherwise (the near miss: the rule must not guess the dtype).
    Tf32 {
        /// Whether the ops record `Input type`.
        recorded: bool,
    },
    /// `gemm-alignment`: bf16 `aten::mm` [10, 20] of 4096 x 1024 by 1024 x `n` launches
    /// [`BF16_GEMM`] [100, 600]; an aligned 4096 x 1024 x 1024 `aten::mm` [20, 30] launches it
    /// [600, 1000]. `n` = 50257 (GPT-2's vocabulary) misaligns the first; 50304 does not.
    Alignment {
        /// N of the first GEMM.
        n: u64,
    },
    /// `unfused-attention`: fp16 `aten::baddbmm` [10, 15] -> [`FP16_BMM`] [100, 300],
    /// `aten::softmax` [16, 22] of 16 x 128 x 128 scores (> `aten::_softmax`) -> [`SOFTMAX`] [300, 400], `aten::dropout`
    /// [23, 26] -> [`DROPOUT`] [400, 450], `aten::bmm` [27, 32] -> [`FP16_BMM`] [450, 650]: a
    /// 550 µs chain; then `aten::mm` [40, 45] -> [`BF16_GEMM`] [650, 1000] outside it. With
    /// `fused`, the mm's first 50 µs are [`FLASH`] under `aten::_flash_attention_forward`
    /// [35, 39] instead ([650, 700], the mm [700, 1000]).
    Attention {
        /// Whether a fused attention kernel also runs.
        fused: bool,
    },
    /// `copy-overhead`: `aten::matmul` [10, 40] holds `aten::contiguous` [11, 20], holding
    /// `aten::clone` and `aten::copy_` -> [`COPY`] [100, 100 + 2c], and `aten::mm` [21, 39] ->
    /// [`BF16_GEMM`] for 300 µs; `aten::to` [45, 60] (`_to_copy`, `copy_`) -> [`COPY`] for c;
    /// `aten::repeat` [61, 70] (`copy_`) -> [`COPY`] for c / 2; `aten::add` [71, 80] -> [`ADD`]
    /// to the step's end. Copies take 3.5 c µs of the 900.
    Copies {
        /// c, µs (100: copies are 350 of 900 µs; 10: 35 µs).
        copy_us: i64,
    },
    /// `sync-heavy` by cause: `aten::nonzero` [10, 400] launches [`NONZERO`] [100, 150] and
    /// waits in `cudaStreamSynchronize` [40, 390]; `aten::item` [400, 600] >
    /// `aten::_local_scalar_dense` waits in `cudaStreamSynchronize` [410, 590]; `aten::to`
    /// [600, 700] > `aten::_to_copy` > `aten::copy_` waits in a blocking `cudaMemcpy`
    /// [610, 690]; `aten::add` [700, 710] launches [`ADD`] [720, 1000]. The GPU is idle during
    /// each wait but the first's 50 µs; with `long` false the waits are 10x shorter.
    Syncs {
        /// Whether the waits are long (350, 180, 80 µs) rather than a tenth of that.
        long: bool,
    },
    /// `low-sm-efficiency`: `aten::mm` [10, 20] -> [`BF16_GEMM`] [100, 400] with 4 blocks per
    /// SM; `aten::sum` [20, 30] -> [`REDUCE`] [400, 1000] with `blocks_per_sm` (0.1: 11 blocks
    /// on 108 SMs; the near miss 0.9).
    SmFill {
        /// The reduction's blocks per SM.
        blocks_per_sm: f64,
    },
    /// `no-backward` and `grad-scaler-skips`: `aten::linear` [10, 20] -> [`BF16_GEMM`]
    /// [100, 400]; with `backward`, `autograd::engine::evaluate_function: MmBackward0` [30, 40]
    /// -> [`BF16_GEMM`] [400, 700]; GradScaler's `aten::_amp_foreach_non_finite_check_and_unscale_`
    /// [50, 55] and `aten::_amp_update_scale_` [56, 60]; then the `Optimizer.step#Adam.step`
    /// annotation [70, 90] holding `aten::_foreach_add_` [71, 89] -> [`ADD`] [700, 1000], except
    /// in the `skipped` steps after the first, where the scaler found inf/NaN gradients and
    /// skipped it (the GPU then idles from 700 µs).
    Training {
        /// Whether the autograd engine's backward op runs.
        backward: bool,
        /// Steps after the first whose optimizer step the scaler skipped.
        skipped: i64,
    },
}

const US: i64 = 1_000;
const T0_NS: i64 = 1_760_000_000_000_000;
const CPU_PID: i64 = 4444;
const GPU_PID: i64 = 0;
const STREAM: i64 = 7;
/// A runtime call's length, µs.
const CALL_US: i64 = 2;

/// One launch: the kernel (or `Memcpy DtoH` for a copy's activity), its [start, end] µs in
/// the step, its blocks per SM; or, with no kernel, a blocking runtime call over [start, end].
struct Launch {
    call: &'static str,
    kernel: Option<&'static str>,
    at: (i64, i64),
    blocks_per_sm: f64,
}

/// One `cpu_op`: name, [start, end] µs in the step, `Input Dims` and `Input type` (raw JSON,
/// empty for none), its launches (each call made 1 µs after the op starts, in order).
struct Op {
    name: &'static str,
    at: (i64, i64),
    dims: String,
    types: String,
    launches: Vec<Launch>,
}

fn op(name: &'static str, at: (i64, i64)) -> Op {
    Op { name, at, dims: String::new(), types: String::new(), launches: Vec::new() }
}

impl Op {
    fn shapes(mut self, dims: &str, types: &str) -> Self {
        dims.clone_into(&mut self.dims);
        types.clone_into(&mut self.types);
        self
    }

    fn kernel(mut self, kernel: &'static str, at: (i64, i64)) -> Self {
        self.launches.push(Launch { call: "cudaLaunchKernel", kernel: Some(kernel), at, blocks_per_sm: 4.0 });
        self
    }

    fn small_grid(mut self, blocks_per_sm: f64) -> Self {
        if let Some(l) = self.launches.last_mut() {
            l.blocks_per_sm = blocks_per_sm;
        }
        self
    }

    fn wait(mut self, call: &'static str, at: (i64, i64)) -> Self {
        self.launches.push(Launch { call, kernel: None, at, blocks_per_sm: 0.0 });
        self
    }
}

/// Every op of step `step` (0-based) of `case`.
fn ops(case: Case, step: i64) -> Vec<Op> {
    match case {
        Case::Tf32 { recorded } => {
            let types = if recorded { r#"["float", "float"]"# } else { "" };
            vec![
                op("aten::mm", (10, 20)).shapes("[[4096, 1024], [1024, 1024]]", types).kernel(TF32_GEMM, (100, 700)),
                op("aten::add", (20, 30)).kernel(ADD, (700, 1000)),
            ]
        }
        Case::Alignment { n } => {
            let bf16 = r#"["c10::BFloat16", "c10::BFloat16"]"#;
            vec![
                op("aten::mm", (10, 20)).shapes(&format!("[[4096, 1024], [1024, {n}]]"), bf16).kernel(BF16_GEMM, (100, 600)),
                op("aten::mm", (20, 30)).shapes("[[4096, 1024], [1024, 1024]]", bf16).kernel(BF16_GEMM, (600, 1000)),
            ]
        }
        Case::Attention { fused } => {
            let half3 = r#"["c10::Half", "c10::Half", "c10::Half", "Scalar", "Scalar"]"#;
            let mut v = vec![
                op("aten::baddbmm", (10, 15))
                    .shapes("[[16, 128, 128], [16, 128, 64], [16, 64, 128], [], []]", half3)
                    .kernel(FP16_BMM, (100, 300)),
                op("aten::softmax", (16, 22)).shapes("[[16, 128, 128], [], []]", r#"["c10::Half", "Scalar", "Scalar"]"#),
                op("aten::_softmax", (17, 21)).kernel(SOFTMAX, (300, 400)),
                op("aten::dropout", (23, 26)).kernel(DROPOUT, (400, 450)),
                op("aten::bmm", (27, 32))
                    .shapes("[[16, 128, 128], [16, 128, 64]]", r#"["c10::Half", "c10::Half"]"#)
                    .kernel(FP16_BMM, (450, 650)),
            ];
            let mm_start = if fused {
                v.push(op("aten::_flash_attention_forward", (35, 39)).kernel(FLASH, (650, 700)));
                700
            } else {
                650
            };
            v.push(op("aten::mm", (40, 45)).kernel(BF16_GEMM, (mm_start, 1000)));
            v
        }
        Case::Copies { copy_us: c } => {
            let gemm = 100 + 2 * c;
            vec![
                op("aten::matmul", (10, 40)),
                op("aten::contiguous", (11, 20)),
                op("aten::clone", (12, 19)),
                op("aten::copy_", (13, 18)).kernel(COPY, (100, gemm)),
                op("aten::mm", (21, 39)).kernel(BF16_GEMM, (gemm, gemm + 300)),
                op("aten::to", (45, 60)),
                op("aten::_to_copy", (46, 59)),
                op("aten::copy_", (47, 58)).kernel(COPY, (gemm + 300, gemm + 300 + c)),
                op("aten::repeat", (61, 70)),
                op("aten::copy_", (62, 69)).kernel(COPY, (gemm + 300 + c, gemm + 300 + c + c / 2)),
                op("aten::add", (71, 80)).kernel(ADD, (gemm + 300 + c + c / 2, 1000)),
            ]
        }
        Case::Syncs { long } => {
            let w = |a: i64, b: i64| if long { (a, b) } else { (a, a + (b - a) / 10) };
            vec![
                op("aten::nonzero", (10, 400)).kernel(NONZERO, (100, 150)).wait("cudaStreamSynchronize", w(40, 390)),
                op("aten::item", (400, 600)),
                op("aten::_local_scalar_dense", (401, 599)).wait("cudaStreamSynchronize", w(410, 590)),
                op("aten::to", (600, 700)),
                op("aten::_to_copy", (601, 699)),
                op("aten::copy_", (602, 698)).wait("cudaMemcpy", w(610, 690)),
                op("aten::add", (700, 710)).kernel(ADD, (720, 1000)),
            ]
        }
        Case::SmFill { blocks_per_sm } => vec![
            op("aten::mm", (10, 20)).kernel(BF16_GEMM, (100, 400)),
            op("aten::sum", (20, 30)).kernel(REDUCE, (400, 1000)).small_grid(blocks_per_sm),
        ],
        Case::Training { backward, skipped } => {
            let mut v = vec![op("aten::linear", (10, 20)).kernel(BF16_GEMM, (100, 400))];
            if backward {
                v.push(op("autograd::engine::evaluate_function: MmBackward0", (30, 40)).kernel(BF16_GEMM, (400, 700)));
            }
            v.push(op("aten::_amp_foreach_non_finite_check_and_unscale_", (50, 55)));
            v.push(op("aten::_amp_update_scale_", (56, 60)));
            if step == 0 || step > skipped {
                v.push(op("Optimizer.step#Adam.step", (70, 90)));
                v.push(op("aten::_foreach_add_", (71, 89)).kernel(ADD, (700, 1000)));
            }
            v
        }
    }
}

/// The trace of `case` as uncompressed JSON bytes.
#[must_use]
pub fn generate(case: Case) -> Vec<u8> {
    let mut events = Vec::new();
    let mut corr = 100;
    for step in 0..STEPS {
        let base = step * STEP_NS;
        let ops = ops(case, step);
        // The annotation ends with the host's last op; the step runs on to its last kernel's end.
        let host_end = ops.iter().map(|o| o.at.1).max().unwrap_or(0) * US;
        events.push(complete(Cow::Owned(format!("ProfilerStep#{}", step + 1)), "user_annotation", CPU_PID, base, host_end, Vec::new()));
        for o in ops {
            let mut args = Vec::new();
            if !o.dims.is_empty() {
                args.push(("Input Dims", Arg::Raw(o.dims.clone())));
            }
            if !o.types.is_empty() {
                args.push(("Input type", Arg::Raw(o.types.clone())));
            }
            // `record_function` spans (the optimizer's) are annotations, not ops.
            let cat = if o.name.starts_with("Optimizer.") { "user_annotation" } else { "cpu_op" };
            events.push(complete(Cow::Borrowed(o.name), cat, CPU_PID, base + o.at.0 * US, (o.at.1 - o.at.0) * US, args));
            for (i, l) in o.launches.iter().enumerate() {
                let Some(kernel) = l.kernel else {
                    events.push(complete(Cow::Borrowed(l.call), "cuda_runtime", CPU_PID, base + l.at.0 * US, (l.at.1 - l.at.0) * US, Vec::new()));
                    continue;
                };
                corr += 1;
                let call_at = base + (o.at.0 + 1 + i as i64 * (CALL_US + 1)) * US;
                events.push(complete(Cow::Borrowed(l.call), "cuda_runtime", CPU_PID, call_at, CALL_US * US, vec![("correlation", Arg::Int(corr))]));
                let args = vec![
                    ("device", Arg::Int(0)),
                    ("stream", Arg::Int(STREAM)),
                    ("correlation", Arg::Int(corr)),
                    ("blocks per SM", Arg::Fixed6(l.blocks_per_sm)),
                ];
                events.push(complete(Cow::Borrowed(kernel), "kernel", GPU_PID, base + l.at.0 * US, (l.at.1 - l.at.0) * US, args));
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
    {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85089976320, "computeMajor": 8, "computeMinor": 0, "numSms": 108}
  ],
  "traceEvents": [
"#,
    );
    for (i, event) in events.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b",\n");
        }
        push_event(&mut out, event);
    }
    out.extend_from_slice(b"\n  ]\n}\n");
    out
}

/// A complete (`X`) event at `ts_ns` from the trace start; device activities on [`STREAM`].
fn complete(name: Cow<'static, str>, cat: &'static str, pid: i64, ts_ns: i64, dur_ns: i64, args: Vec<(&'static str, Arg)>) -> Event {
    let tid = if pid == GPU_PID { STREAM } else { pid };
    Event { kind: Kind::Complete { cat, dur_ns }, name, pid: Id::Num(pid), tid: Id::Num(tid), ts_ns: T0_NS + ts_ns, args }
}
