//! Kernel classes by name: what a kernel does (GEMM, attention, communication, memory,
//! elementwise, other), whether it runs on tensor cores (NVIDIA tensor cores, AMD matrix cores)
//! and in which precision. The one place these name patterns live: the kernel table, the GPU
//! metrics, the step breakdown and the cheatsheet rules all ask here (docs/definitions.md §3).
//!
//! **Inputs and outputs.** A kernel name as written in the trace -> [`KernelKind`]. Names
//! only: Kineto records no instruction mix or dtype, so this is what tb_plugin, Nsight and HTA
//! do too. Where the name does not say, the answer is `unknown`, never a guess.
//!
//! **One table, three axes.** `RULES` is a list of rules, each naming its source (library or
//! naming convention). A rule matches a name and sets any of class, tensor cores, precision;
//! each axis takes the **first** matching rule that sets it, so order matters within an axis:
//! - class: communication first (a collective is never counted as compute), then memory
//!   (copies and fills written as elementwise kernels), attention (FlashAttention-3 names carry
//!   `cutlass::gemm` in their templates), GEMM-library helpers that multiply nothing (`other`:
//!   a tensormap fill or a transpose in a GEMM namespace), GEMM, elementwise; else `other`.
//! - tensor cores: SIMT markers first (`ffma` beats `xmma`), then MMA tokens, then
//!   BLAS-letter SIMT GEMMs. With no rule: `no` for communication / memory / elementwise,
//!   `yes` for a GEMM or attention kernel whose precision is fp8 or fp4 (those types exist
//!   only as tensor-core / matrix-core MMA inputs), else `unknown`.
//! - precision: the narrowest input type the name spells (`bmm_MxE4m3_MxE2m1MxE4m3_Fp32`:
//!   fp4 weights times fp8 activations -> fp4), so rules go fp4, fp8, int8, bf16, fp16, tf32,
//!   fp64, fp32. A kernel reading a wider type than it writes (`E4m3` out of bf16 inputs)
//!   would be misread; none is known.
//!
//! **Differences from tb_plugin, on purpose.** tb_plugin's allow-list (PyProf's) predates
//! Ampere: it misses `sm80_xmma_fprop_implicit_gemm_*`, CUTLASS `wmma_tensorop_*_s161616gemm`,
//! `wgmma`, `nvjet`, trtllm-gen, ROCm and Triton, and counts FP32 `xmma_gemm ... ffma`
//! kernels as tensor-core ones. `worker/tests/gpu_metrics.rs` pins where our share differs.
//!
//! **Cost.** A few dozen substring searches per name; callers classify each distinct (interned)
//! name once, not each kernel. [`class_of`] walks the class rules only.
//!
//! References: docs/definitions.md §3; tb_plugin `tensor_core.py` (from NVIDIA PyProf `tc.py`);
//! cuBLAS / CUTLASS naming (`<arch>_<types>_<mma shape>gemm_<tile>_<layout>`); Tensile
//! `Cijk_<layout>_<types>_..._MI<mfma shape>`; TensorRT-LLM trtllm-gen
//! `bmm_<out>_<a><b>_<acc>_t<tile>..._sm100f`.

use std::cell::OnceCell;

/// What a kernel does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelClass {
    /// Matrix multiply: GEMM, batched GEMM, implicit-GEMM convolution.
    Gemm,
    /// Fused attention (FlashAttention, FMHA, paged attention).
    Attention,
    /// Collective or point-to-point communication.
    Communication,
    /// Copies and fills written as kernels.
    Memory,
    /// Elementwise (pointwise) kernels.
    Elementwise,
    /// Anything else (reductions, norms, softmax, custom kernels).
    Other,
}

/// Whether a kernel runs on tensor cores (matrix cores on AMD).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorCores {
    /// The name says so.
    Yes,
    /// The name says it does not (SIMT GEMM), or its class never does.
    No,
    /// The name does not tell.
    Unknown,
}

/// The precision a kernel computes in, as its name spells the input type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    /// IEEE double.
    Fp64,
    /// IEEE single on the CUDA cores / vector ALUs (or fp32 matrix-core instructions on AMD).
    Fp32,
    /// TF32 tensor-core math on fp32 data.
    Tf32,
    /// bfloat16.
    Bf16,
    /// IEEE half.
    Fp16,
    /// FP8 (E4M3 / E5M2, incl. MX block-scaled).
    Fp8,
    /// FP4 (E2M1: NVFP4, MXFP4).
    Fp4,
    /// 8-bit integer.
    Int8,
    /// The name does not tell.
    Unknown,
}

/// The class, tensor-core use and precision of one kernel name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelKind {
    /// What the kernel does.
    pub class: KernelClass,
    /// Tensor-core use.
    pub tensor_cores: TensorCores,
    /// Precision.
    pub precision: Precision,
}

impl KernelClass {
    /// Lowercase label (`gemm`, `attention`, ...), as tables and JSON show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gemm => "gemm",
            Self::Attention => "attention",
            Self::Communication => "communication",
            Self::Memory => "memory",
            Self::Elementwise => "elementwise",
            Self::Other => "other",
        }
    }
}

impl TensorCores {
    /// `yes`, `no` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Yes => "yes",
            Self::No => "no",
            Self::Unknown => "unknown",
        }
    }
}

impl Precision {
    /// Lowercase label (`fp32`, `bf16`, ..., `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fp64 => "fp64",
            Self::Fp32 => "fp32",
            Self::Tf32 => "tf32",
            Self::Bf16 => "bf16",
            Self::Fp16 => "fp16",
            Self::Fp8 => "fp8",
            Self::Fp4 => "fp4",
            Self::Int8 => "int8",
            Self::Unknown => "unknown",
        }
    }

    /// A reduced precision, below fp32 / tf32 (what autocast or quantization gives).
    pub fn is_reduced(self) -> bool {
        matches!(self, Self::Bf16 | Self::Fp16 | Self::Fp8 | Self::Fp4 | Self::Int8)
    }
}

/// How a rule matches a name.
#[derive(Clone, Copy)]
enum Match {
    /// The name starts with one of these.
    Prefix(&'static [&'static str]),
    /// The name contains one of these (case-sensitive).
    Contains(&'static [&'static str]),
    /// The ASCII-lowercased name contains one of these.
    ContainsLower(&'static [&'static str]),
    /// One of the lowercased name's alphanumeric tokens is one of these (`_f16_`, `half_t`).
    Token(&'static [&'static str]),
    /// Tensile's type field (`Cijk_Ailk_Bljk_<types>_...`) starts with one of these.
    TensileType(&'static [&'static str]),
    /// A test too specific for a list, and what it checks.
    Test(fn(&Name<'_>) -> bool, &'static str),
}

/// One row of the table: what it matches, where the convention comes from, what it sets.
struct Rule {
    source: &'static str,
    matches: &'static [Match],
    class: Option<KernelClass>,
    tensor_cores: Option<TensorCores>,
    precision: Option<Precision>,
}

/// A rule that sets nothing yet.
const fn rule(source: &'static str, matches: &'static [Match]) -> Rule {
    Rule { source, matches, class: None, tensor_cores: None, precision: None }
}

impl Rule {
    const fn class(mut self, c: KernelClass) -> Self {
        self.class = Some(c);
        self
    }
    const fn tc(mut self, t: TensorCores) -> Self {
        self.tensor_cores = Some(t);
        self
    }
    const fn precision(mut self, p: Precision) -> Self {
        self.precision = Some(p);
        self
    }
}

// Short names for the table's rows.
use KernelClass as C;
use Match::{Contains, ContainsLower, Prefix, TensileType, Test, Token};
use Precision as P;
use TensorCores as T;

/// The table (see the module header for the order).
const RULES: &[Rule] = &[
    // Tensor cores, first: a SIMT marker means no even beside an MMA token.
    rule("CUTLASS SIMT kernels (`cutlass_75_simt_sgemm_*`); cuBLAS xmma kernels doing FP32 FMAs (`sm80_xmma_gemm_f32f32_f32f32_f32_..._ffma_*`)",
        &[Contains(&["simt", "ffma"])]).tc(T::No),
    // Classes.
    rule("NCCL / RCCL (`ncclDevKernel_*`, `ncclKernel_*`, `rcclGenericKernel`), gloo",
        &[Prefix(&["nccl", "rccl", "gloo", "void nccl"])]).class(C::Communication),
    rule("NVLink SHARP (NVLS) multicast kernels: PyTorch symmetric memory `(anonymous namespace)::multimem_all_reduce_kernel` (c10d `CUDASymmetricMemoryOps.cu`)",
        &[Contains(&["multimem_"])]).class(C::Communication),
    rule("custom all-reduce: vLLM / SGLang `cross_device_reduce_{1,2}stage` (vLLM `csrc/custom_all_reduce.cuh`), PyTorch symmetric memory one-shot / two-shot all-reduce",
        &[Contains(&["cross_device_reduce", "one_shot_all_reduce", "two_shot_all_reduce"])]).class(C::Communication),
    rule("all-reduce fused with RMSNorm: FlashInfer / TensorRT-LLM `allreduce_fusion_kernel_oneshot_lamport`, `moefinalize_allreduce_fusion_*`, AITER `allreduce_fusion_kernel_1stage`",
        &[Contains(&["allreduce_fusion_kernel"])]).class(C::Communication),
    rule("DeepEP expert-parallel dispatch / combine (`deep_ep::intranode::dispatch`)",
        &[Contains(&["deep_ep::"])]).class(C::Communication),
    rule("other expert-parallel all-to-all and one-sided communication: pplx-kernels (`pplx::`), NVSHMEM kernels, MSCCL++ (`mscclpp`), AMD QuickReduce, MoRI (`mori::`)",
        &[Contains(&["pplx::", "nvshmem", "mscclpp", "quickreduce", "mori::"])]).class(C::Communication),
    rule("ROCm runtime blit kernels (`__amd_rocclr_copyBuffer`, `__amd_rocclr_fillBufferAligned`)",
        &[Contains(&["__amd_rocclr_copy", "__amd_rocclr_fill"])]).class(C::Memory),
    rule("PyTorch copies, concatenation and fills (`direct_copy_kernel_cuda`, `CatArrayBatchedCopy`, `FillFunctor`)",
        &[Contains(&["direct_copy_kernel", "CatArrayBatchedCopy", "FillFunctor"])]).class(C::Memory),
    rule("FlashAttention 2/3 (`flash_fwd_*`, `flash::`, `FlashAttnFwdSm90`), TensorRT-LLM `fmha_v2_*`, mem-efficient `fmha_cutlassF_*`, Triton / AITER `attn_fwd`, vLLM `paged_attention_*`, flex attention, cuDNN fused SDPA (`cudnn_generated_fort_native_sdpa_*`)",
        &[ContainsLower(&["flash_fwd", "flash_bwd", "flash::", "flash_attn", "flashattn", "fmha", "attn_fwd", "attn_bwd", "attention", "_sdpa_"])]).class(C::Attention),
    rule("GEMM-library helpers that multiply nothing: TMA descriptor (tensormap) fills, transposes, grouped-GEMM argument setup (ATen `prepare_grouped_gemm_data`, `set_kernel_args`); not Inductor templates",
        &[Test(is_gemm_helper, "names `gemm` / `matmul` and `transpose` `tensormap` `tensor_map` `prepare` `set_kernel_args`; not `triton_tem_`")]).class(C::Other),
    rule("ROCm Tensile / hipBLASLt GEMMs (`Cijk_Ailk_Bljk_*`)",
        &[Prefix(&["Cijk_"])]).class(C::Gemm),
    rule("cuBLAS(Lt) JIT GEMMs on Hopper / Blackwell (`nvjet_tst_*`, `nvjet_sm100_*`)",
        &[Prefix(&["nvjet"])]).class(C::Gemm).tc(T::Yes),
    rule("TensorRT-LLM trtllm-gen Blackwell GEMMs `bmm_<out>_<a><b>_<acc>_*` / `gemm_*` (dtypes `E4m3`, `E2m1`, `MxE4m3`, `Bfloat16`, ...)",
        &[Test(is_trtllm_gen, "`bmm_` or `gemm_` then a trtllm-gen dtype")]).class(C::Gemm).tc(T::Yes),
    rule("Inductor Triton kernels `triton_<kind>_fused_<ops>_<n>` (not `poi` / `red` / `per`) fusing `mm`, `addmm`, `bmm`, `baddbmm`",
        &[Test(is_triton_matmul, "Inductor kernel fusing a matmul")]).class(C::Gemm),
    rule("`gemm` in the name: cuBLAS, CUTLASS 2/3 (`cutlass_*`, `sm80_` / `sm90_` / `sm100_`), cuDNN / MIOpen implicit GEMM (`igemm_*`), DeepGEMM; not the library name `fbgemm`",
        &[Test(names_gemm, "`gemm`, not preceded by `fb`")]).class(C::Gemm),
    rule("Triton matmuls (`matmul_kernel`, `_w8a8_block_fp8_matmul`)",
        &[ContainsLower(&["matmul"])]).class(C::Gemm),
    rule("vLLM / SGLang Triton MoE grouped GEMM (`fused_moe_kernel`)",
        &[Contains(&["fused_moe_kernel"])]).class(C::Gemm),
    rule("PyTorch TensorIterator (`vectorized_elementwise_kernel`, `unrolled_elementwise_kernel`), foreach ops (`multi_tensor_apply_kernel`), Inductor pointwise `triton_poi_*`",
        &[Contains(&["elementwise_kernel", "multi_tensor_apply_kernel"]), Prefix(&["triton_poi_"])]).class(C::Elementwise),
    // Tensor cores.
    rule("FlashAttention-2 helpers around the MMA kernels: backward pre / post-processing (`flash_bwd_dot_do_o_kernel`, `flash_bwd_convert_dq_kernel`, `flash_bwd_clear_dkvaccum_kernel`), split-KV combine (`flash_fwd_splitkv_combine_kernel`): elementwise and reductions",
        &[Contains(&["flash_bwd_dot_do_o", "flash_bwd_convert_d", "flash_bwd_clear_dkvaccum", "flash_fwd_splitkv_combine"])]).tc(T::No),
    rule("CUTLASS 3 / CuTe warp-specialized kernels (`MainloopSm90TmaGmmaWarpSpecialized*`, `MainloopSm100TmaUmmaWarpSpecialized*`, `KernelTmaWarpSpecialized*`), FlashAttention-3 (`FlashAttnFwdSm90`, `FlashAttnBwdSm90`, `Sm100`), cuDNN fused SDPA (`cudnn_generated_fort_native_sdpa_*`)",
        &[Contains(&["GmmaWarpSpecialized", "UmmaWarpSpecialized", "TmaWarpSpecialized", "FlashAttnFwdSm", "FlashAttnBwdSm", "_sdpa_"])]).tc(T::Yes),
    rule("MMA shapes and instructions: cuBLAS `volta_h884gemm`, `ampere_*_s16816gemm`, `i8816`; `hmma` `imma` `wmma` `gmma` (Hopper `wgmma`) `xmma`; CUTLASS `tensorop`; FlashAttention; CK `gemm_xdl`; cuDNN convolutions from tb_plugin's list",
        &[Contains(&["h884", "s884", "h1688", "s1688", "c1688", "i8816", "16816", "161616", "hmma", "imma", "wmma", "gmma", "xmma", "tensorop", "flash_fwd", "flash_bwd", "gemm_xdl", "dgrad_1x1_stride_2x2", "first_layer_wgrad_kernel", "conv1x1", "conv2d_c1_k1", "direct_group"])]).tc(T::Yes),
    rule("mangled CUTLASS (`OpClassTensorOp`, `cutlass::tfloat32_t`); MIOpen xdlops implicit GEMM `igemm_*_gtcx*`",
        &[Contains(&["OpClassTensorOp", "tfloat32", "_gtcx"])]).tc(T::Yes),
    rule("AMD MFMA named in the kernel (vLLM ROCm `paged_attention_ll4mi_QKV_mfma16_kernel`)",
        &[ContainsLower(&["mfma"])]).tc(T::Yes),
    rule("Tensile with an MFMA shape (`_MI32x32x8x1_`); `Cijk_*` without one is a plain-ALU GEMM",
        &[Test(has_tensile_mfma, "`Cijk_` with `_MI<digit>`")]).tc(T::Yes),
    rule("Tensile without an MFMA shape", &[Prefix(&["Cijk_"])]).tc(T::No),
    rule("Inductor Triton templates `triton_tem_*` (built on `tl.dot`; assumed, as autotuned for tensor cores)",
        &[Prefix(&["triton_tem_"])]).tc(T::Yes),
    rule("BLAS-letter GEMMs without an MMA shape are SIMT (`volta_sgemm_*`, `ampere_fp16_sgemm_fp16_*`, `ampere_gcgemm_*`, `implicit_convolve_sgemm`)",
        &[ContainsLower(&["sgemm", "hgemm", "dgemm", "cgemm", "zgemm"])]).tc(T::No),
    // Precision, narrowest first.
    // `fp8` / `fp4` as whole tokens only: vLLM's `(vllm::Fp8KVCacheDataType)0` is a bf16 kernel.
    rule("FP4 E2M1 (trtllm-gen `E2m1`, `MxE2m1`; `nvfp4`, `mxfp4`)",
        &[ContainsLower(&["e2m1"]), Token(&["fp4", "nvfp4", "mxfp4"])]).precision(P::Fp4),
    rule("FP8 E4M3 / E5M2 (trtllm-gen `E4m3`, cuBLAS `e4m3`, `_fp8_`); Tensile `F8` / `B8`",
        &[ContainsLower(&["e4m3", "e5m2"]), Token(&["fp8"]), TensileType(&["F8", "B8"])]).precision(P::Fp8),
    rule("int8 (`int8`, cuBLAS `i8816`, `imma`); Tensile `I8`, `4xi8`",
        &[ContainsLower(&["int8", "i8816", "imma"]), TensileType(&["I8", "4xi8"])]).precision(P::Int8),
    rule("bfloat16 (`bf16`, `Bfloat16`, `c10::BFloat16`, `cutlass::bfloat16_t`); Tensile `B`",
        &[ContainsLower(&["bf16", "bfloat16"]), TensileType(&["B"])]).precision(P::Bf16),
    rule("half (`fp16`, `f16f16`, `_f16_`, `h884` / `h1688` / `h16816`, `hgemm`, `c10::Half`, `half_t`); Tensile `H`",
        &[ContainsLower(&["f16f16", "h884", "h1688", "h16816", "hgemm"]), Token(&["fp16", "f16", "half"]), TensileType(&["H"])]).precision(P::Fp16),
    // After half: Turing's `s1688gemm` spells its fp16 inputs (`turing_fp16_s1688gemm_fp16_*`,
    // `s1688gemm_f16_*`); without them it is the Ampere+ TF32 MMA (m16n8k8 on fp32 data).
    rule("TF32 (cuBLAS `tf32f32`, CUTLASS `tfloat32_t`; CUTLASS `s1688gemm` without a half type)",
        &[ContainsLower(&["tf32", "tfloat32", "s1688gemm"])]).precision(P::Tf32),
    rule("double (BLAS `dgemm`, `zgemm`; `f64`); Tensile `D`, `Z`",
        &[ContainsLower(&["dgemm", "zgemm"]), Token(&["f64", "fp64"]), TensileType(&["D", "Z"])]).precision(P::Fp64),
    rule("single (BLAS `sgemm`, `cgemm`; cuBLAS `f32f32_f32f32`; `_f32_`, `Fp32`); Tensile `S`, `C`",
        &[ContainsLower(&["sgemm", "cgemm", "f32f32_f32f32"]), Token(&["f32", "fp32"]), TensileType(&["S", "C"])]).precision(P::Fp32),
];

/// A name with its lowercase form computed on first use.
struct Name<'a> {
    raw: &'a str,
    lower: OnceCell<String>,
}

impl Name<'_> {
    fn lower(&self) -> &str {
        self.lower.get_or_init(|| self.raw.to_ascii_lowercase())
    }

    fn matches(&self, m: &Match) -> bool {
        match *m {
            Prefix(ps) => ps.iter().any(|p| self.raw.starts_with(p)),
            Contains(ts) => ts.iter().any(|t| self.raw.contains(t)),
            ContainsLower(ts) => ts.iter().any(|t| self.lower().contains(t)),
            Token(ts) => self
                .lower()
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| ts.contains(&w)),
            TensileType(ts) => tensile_types(self.raw).is_some_and(|f| ts.iter().any(|t| f.starts_with(t))),
            Test(f, _) => f(self),
        }
    }
}

/// The first value an axis gets from the rules matching `name`.
fn first<V>(name: &Name<'_>, axis: impl Fn(&Rule) -> Option<V>) -> Option<V> {
    first_row(name, axis).map(|(v, _)| v)
}

/// [`first`] with the deciding rule's row number (1-based, as docs/definitions.md numbers it).
fn first_row<V>(name: &Name<'_>, axis: impl Fn(&Rule) -> Option<V>) -> Option<(V, usize)> {
    RULES
        .iter()
        .enumerate()
        .filter_map(|(i, r)| axis(r).map(|v| (i, r, v)))
        .find(|(_, r, _)| r.matches.iter().any(|m| name.matches(m)))
        .map(|(i, _, v)| (v, i + 1))
}

/// Class, tensor-core use and precision of kernel `name`.
pub fn classify(name: &str) -> KernelKind {
    let n = Name { raw: name, lower: OnceCell::new() };
    let class = first(&n, |r| r.class).unwrap_or(C::Other);
    let precision = first(&n, |r| r.precision).unwrap_or(P::Unknown);
    let tensor_cores = first(&n, |r| r.tensor_cores).unwrap_or(match class {
        C::Communication | C::Memory | C::Elementwise => T::No,
        C::Gemm | C::Attention if matches!(precision, P::Fp8 | P::Fp4) => T::Yes,
        _ => T::Unknown,
    });
    KernelKind { class, tensor_cores, precision }
}

/// The class of kernel `name` alone (cheaper than [`classify`]).
pub fn class_of(name: &str) -> KernelClass {
    first(&Name { raw: name, lower: OnceCell::new() }, |r| r.class).unwrap_or(C::Other)
}

/// The class of kernel `name` and the row of the table that decided it (1-based, the `#`
/// column of docs/definitions.md §3); `None` when no row sets a class (the name says `other`
/// by default, and the launch context may still decide: `super::kernel_context`).
pub fn class_row(name: &str) -> Option<(KernelClass, usize)> {
    first_row(&Name { raw: name, lower: OnceCell::new() }, |r| r.class)
}

/// Whether kernel `name` runs on tensor cores (matrix cores on AMD): `unknown` counts as no.
pub fn uses_tensor_cores(name: &str) -> bool {
    classify(name).tensor_cores == T::Yes
}

/// Whether kernel `name` is a matrix multiply (GEMM, batched GEMM, implicit-GEMM convolution).
pub fn is_gemm(name: &str) -> bool {
    class_of(name) == C::Gemm
}

/// The table as markdown rows (`| source | matches | class | tensor cores | precision |`), in
/// order: docs/definitions.md §3 holds a copy that a test keeps equal.
pub fn rules_markdown() -> String {
    let mut out = String::from(
        "| # | Source | Matches | Class | Tensor cores | Precision |\n|---|---|---|---|---|---|\n",
    );
    for (i, r) in RULES.iter().enumerate() {
        let matches: Vec<String> = r.matches.iter().map(describe).collect();
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            i + 1,
            r.source,
            matches.join("; "),
            r.class.map_or("", KernelClass::as_str),
            r.tensor_cores.map_or("", TensorCores::as_str),
            r.precision.map_or("", Precision::as_str),
        ));
    }
    out
}

/// One match in words, for [`rules_markdown`].
fn describe(m: &Match) -> String {
    let list = |ts: &[&str]| ts.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(" ");
    match *m {
        Prefix(ts) => format!("starts with {}", list(ts)),
        Contains(ts) => format!("contains {}", list(ts)),
        ContainsLower(ts) => format!("contains (any case) {}", list(ts)),
        Token(ts) => format!("has the token {}", list(ts)),
        TensileType(ts) => format!("Tensile type field starts with {}", list(ts)),
        Test(_, what) => what.to_owned(),
    }
}

/// Tensile's type field: the third `_` field after `Cijk_` (`HHS` in `Cijk_Ailk_Bljk_HHS_BH`).
fn tensile_types(name: &str) -> Option<&str> {
    name.strip_prefix("Cijk_")?.split('_').nth(2)
}

/// Tensile's MFMA tag: `_MI` followed by a digit (`_MI32x32x8x1_`).
fn has_tensile_mfma(name: &Name<'_>) -> bool {
    name.raw.strip_prefix("Cijk_").is_some_and(|rest| {
        rest.match_indices("_MI")
            .any(|(at, _)| rest.as_bytes().get(at + 3).is_some_and(u8::is_ascii_digit))
    })
}

/// trtllm-gen names start `bmm_` / `gemm_` and then the output dtype (`bmm_E4m3_E4m3E4m3_Fp32_*`;
/// profilers that shorten names write `bmm_E2m1E2m1_Fp32_*`).
fn is_trtllm_gen(name: &Name<'_>) -> bool {
    const DTYPES: [&str; 10] =
        ["E4m3", "E5m2", "E2m1", "MxE4m3", "MxE2m1", "MxInt4", "Bfloat16", "Fp16", "Fp32", "Int8"];
    let rest = name.raw.strip_prefix("bmm_").or_else(|| name.raw.strip_prefix("gemm_"));
    rest.and_then(|r| r.split('_').next())
        .is_some_and(|t| DTYPES.iter().any(|d| t.starts_with(d)))
}

/// Inductor's `triton_<kind>_fused_<ops>_<n>`: a template or any non-pointwise /
/// non-reduction kind whose fused ops include a matmul (`triton_tem_fused_addmm_relu_0`).
fn is_triton_matmul(name: &Name<'_>) -> bool {
    name.raw.strip_prefix("triton_").is_some_and(|rest| {
        !["poi_", "red_", "per_"].iter().any(|k| rest.starts_with(k))
            && rest.split('_').any(|t| matches!(t, "mm" | "addmm" | "bmm" | "baddbmm"))
    })
}

/// A GEMM library's helper kernel: the name says `gemm` / `matmul` and a job that is not a
/// multiply (`deep_gemm::transpose_fp32`, `at::cuda::detail::prepare_grouped_gemm_data`, a
/// tensormap fill); Inductor templates (`triton_tem_fused_mm_*`) list fused ops, not jobs.
fn is_gemm_helper(name: &Name<'_>) -> bool {
    const JOBS: [&str; 5] = ["transpose", "tensormap", "tensor_map", "prepare", "set_kernel_args"];
    let lower = name.lower();
    (names_gemm(name) || lower.contains("matmul"))
        && !name.raw.starts_with("triton_tem_")
        && JOBS.iter().any(|j| lower.contains(j))
}

/// `gemm` in any case, except inside the library name `fbgemm` (`fbgemm_gpu::permute_*`).
fn names_gemm(name: &Name<'_>) -> bool {
    let lower = name.lower();
    lower.match_indices("gemm").any(|(at, _)| !lower[..at].ends_with("fb"))
}
