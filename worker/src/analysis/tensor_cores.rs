//! Kernel-name rules: which kernels are matrix multiplies (GEMMs) and which use tensor cores
//! (NVIDIA tensor cores, AMD matrix cores). The one place these name patterns live; the kernel
//! table, the GPU metrics and the cheatsheet rules all ask here (docs/definitions.md §3).
//!
//! **Inputs and outputs.** A kernel name as written in the trace -> `bool`. Names only: Kineto
//! records no instruction mix, so this is what tb_plugin, Nsight and HTA do too.
//!
//! **Rules for [`uses_tensor_cores`]**, in order:
//! 1. A SIMT marker means no: `simt` (CUTLASS `cutlass_75_simt_sgemm...`), `ffma` (cuBLAS
//!    `sm80_xmma_gemm_f32f32_f32f32_f32_..._ffma_...`: an xmma kernel doing plain FP32 FMAs).
//! 2. A tensor-core token means yes: MMA instruction shapes `h884 s884 h1688 s1688 c1688
//!    i8816 16816 161616` (cuBLAS `volta_h884gemm`, `ampere_fp16_s16816gemm`, CUTLASS
//!    `wmma_tensorop_f16_s161616gemm`), instruction families `hmma imma wmma gmma` (`gmma`
//!    covers Hopper's `wgmma`) and `xmma` (cuBLAS/cuDNN `sm80_xmma_*`, `sm90_xmma_*`, fprop /
//!    dgrad / wgrad implicit GEMMs), CUTLASS `tensorop`, cuBLAS's Hopper/Blackwell JIT kernels
//!    `nvjet`, FlashAttention `flash_fwd` / `flash_bwd` (MMA only), AMD Composable Kernel
//!    `gemm_xdl`, MIOpen's xdlops implicit-GEMM convolutions `igemm_{fwd,bwd,wrw}_gtcx*`
//!    (`gtcx` = XDLOPS, i.e. MFMA; the plain `_gtc_` ones are not), and tb_plugin's cuDNN convolution list (`dgrad_1x1_stride_2x2`,
//!    `first_layer_wgrad_kernel`, `conv1x1`, `conv2d_c1_k1`, `direct_group`).
//! 3. ROCm Tensile `Cijk_*` kernels use matrix cores when their name carries an MFMA shape
//!    (`_MI32x32x8x1_`); `Cijk_*` without `_MI` is a plain-ALU GEMM.
//! 4. Inductor's Triton templates `triton_tem_*` (mm, addmm, bmm, convolution, flex attention)
//!    are built on `tl.dot`, which runs on tensor cores for fp16/bf16 and for fp32 when TF32 is
//!    allowed. The name does not say the dtype: we assume tensor cores (they are what these
//!    templates are autotuned for; an fp32 model with TF32 off is the exception).
//! 5. Anything else: no. In particular `*sgemm*` / `*hgemm*` without an MMA token is a SIMT
//!    GEMM: `ampere_sgemm_128x64_tn`, `volta_sgemm_*`, and `ampere_fp16_sgemm_fp16_64x64_tn`,
//!    which stores fp16 but multiplies in fp32 on the CUDA cores (cuBLAS's tensor-core fp16
//!    kernels name their MMA shape: `ampere_fp16_s16816gemm_fp16_*`).
//!    Not claimed either: names that do not tell, such as memory-efficient attention
//!    `fmha_cutlassF_f32_aligned_64x64_rf_sm80` (tensor cores or not depends on dtype and arch).
//!
//! **Differences from tb_plugin, on purpose.** tb_plugin's allow-list (PyProf's) predates
//! Ampere: it misses `sm80_xmma_fprop_implicit_gemm_*` (tensor16x8x8 / 16x8x16), CUTLASS
//! `wmma_tensorop_*_s161616gemm`, `wgmma`, `nvjet`, ROCm and Triton, and it counts FP32
//! `xmma_gemm ... ffma` kernels as tensor-core ones. Tests pin where our share differs.
//!
//! **Rules for [`is_gemm`]**: a matrix-multiply kernel. Name contains `gemm` (not `gemv`, not
//! the library name `fbgemm`), or `matmul`, or is `Cijk_*` (Tensile), `nvjet*`, or an
//! Inductor Triton kernel other than pointwise / reduction ones (`triton_poi_*`, `triton_red_*`,
//! `triton_per_*`) whose fused-op tokens include `mm`, `addmm`, `bmm` or `baddbmm`
//! (`triton_tem_fused_addmm_relu_0`, `triton_mm_4`). Covered by name: cuBLAS
//! (`ampere_*gemm*`, `volta_sgemm_*`, `sm90_xmma_gemm_*`), CUTLASS (`cutlass_*gemm*`),
//! cuBLASLt `nvjet_*`, hipBLASLt / Tensile `Cijk_*`, Triton `matmul_kernel` and templates. Implicit-GEMM convolutions (`implicit_convolve_sgemm`,
//! `xmma_fprop_implicit_gemm`) count: they are matrix multiplies on the same units.
//!
//! **Cost.** A handful of substring searches per call; callers classify each distinct name
//! once, not each kernel.
//!
//! References: docs/definitions.md §3; tb_plugin `tensor_core.py` (from NVIDIA PyProf `tc.py`);
//! cuBLAS and CUTLASS kernel naming (`<arch>_<types>_<mma shape>gemm_<tile>_<layout>`).

/// Substrings that mark a SIMT (CUDA-core) kernel even when a tensor-core token appears.
const SIMT_MARKERS: [&str; 2] = ["simt", "ffma"];

/// Substrings that mark a tensor-core kernel (see the module rules).
const TENSOR_CORE_TOKENS: [&str; 23] = [
    "h884",
    "s884",
    "h1688",
    "s1688",
    "c1688",
    "i8816",
    "16816",
    "161616",
    "hmma",
    "imma",
    "wmma",
    "gmma",
    "xmma",
    "tensorop",
    "nvjet",
    "flash_fwd",
    "flash_bwd",
    "gemm_xdl",
    "dgrad_1x1_stride_2x2",
    "first_layer_wgrad_kernel",
    "conv1x1",
    "conv2d_c1_k1",
    "direct_group",
];

/// Whether kernel `name` runs on tensor cores (matrix cores on AMD), by name.
pub fn uses_tensor_cores(name: &str) -> bool {
    if SIMT_MARKERS.iter().any(|m| name.contains(m)) {
        return false;
    }
    if TENSOR_CORE_TOKENS.iter().any(|t| name.contains(t)) {
        return true;
    }
    // Mangled CUTLASS templates spell the class and type out (`OpClassTensorOp`, not the
    // elementwise `SubTensorOpWithScalar1d`; `cutlass::tfloat32_t`); MIOpen's implicit GEMMs
    // on matrix cores are `igemm_*_gtcx*` (xdlops), the plain-ALU ones `igemm_*_gtc_*`.
    if ["OpClassTensorOp", "tfloat32", "_gtcx"].iter().any(|t| name.contains(t)) {
        return true;
    }
    if let Some(rest) = name.strip_prefix("Cijk_") {
        return has_mfma_shape(rest);
    }
    name.starts_with("triton_tem_")
}

/// Whether kernel `name` is a matrix multiply (GEMM, batched GEMM, implicit-GEMM convolution).
pub fn is_gemm(name: &str) -> bool {
    if name.starts_with("Cijk_") || name.starts_with("nvjet") {
        return true;
    }
    // Inductor's generated kernels are named `triton_<kind>_fused_<ops>_<n>`: templates
    // (`tem`) and any non-pointwise / non-reduction kind whose fused ops include a matmul.
    if let Some(rest) = name.strip_prefix("triton_") {
        let elementwise = ["poi_", "red_", "per_"].iter().any(|k| rest.starts_with(k));
        if !elementwise {
            return rest
                .split('_')
                .any(|t| matches!(t, "mm" | "addmm" | "bmm" | "baddbmm"));
        }
    }
    let lower = name.to_ascii_lowercase();
    let gemm = lower
        .match_indices("gemm")
        .any(|(at, _)| !lower[..at].ends_with("fb"));
    gemm || lower.contains("matmul")
}

/// Tensile's MFMA tag: `_MI` followed by a digit (`_MI32x32x8x1_`).
fn has_mfma_shape(name: &str) -> bool {
    name.match_indices("_MI")
        .any(|(at, _)| name.as_bytes().get(at + 3).is_some_and(u8::is_ascii_digit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mangled_cutlass_and_miopen_xdlops_use_tensor_cores() {
        assert!(uses_tensor_cores(
            "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::arch::OpClassTensorOp, cutlass::tfloat32_t>>"
        ));
        assert!(uses_tensor_cores("igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8_ws2x1"));
        assert!(!uses_tensor_cores("igemm_fwd_gtc_nhwc_fp32_bx0_ex0_bt128x128x16"));
    }

    #[test]
    fn simt_marker_beats_tensor_token() {
        assert!(!uses_tensor_cores("cutlass_80_simt_sgemm_wmma_like"));
        assert!(!uses_tensor_cores(
            "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_ffma_kernel"
        ));
        assert!(uses_tensor_cores(
            "sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_kernel"
        ));
    }

    #[test]
    fn gemm_names_from_real_traces() {
        // Names as they appear in the shared fixtures and in public traces.
        for name in [
            "ampere_fp16_s16816gemm_fp16_128x256_ldg8_f2f_stages_64x3_nn",
            "ampere_sgemm_32x32_sliced1x4_tn",
            "ampere_fp16_sgemm_fp16_64x64_tn",
            "volta_sgemm_128x32_nt",
            "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel",
            "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_16x6_tn_align4>(cutlass_80_tensorop_s1688gemm_128x64_16x6_tn_align4::Params)",
            "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT",
            "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_GRVW8",
            "triton_tem_fused_addmm_relu_0",
            "triton_mm_4",
            "matmul_kernel",
            "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
        ] {
            assert!(is_gemm(name), "{name}");
        }
        for name in [
            "triton_poi_fused_add_cos_sin_0",
            "triton_red_fused_mm_sum_1",
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>()",
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
        ] {
            assert!(!is_gemm(name), "{name}");
        }
    }

    #[test]
    fn gemv_and_fbgemm_are_not_gemm() {
        assert!(!is_gemm(
            "void gemv2T_kernel_val<int, int, float, float, float, 128, 16, 4>"
        ));
        assert!(!is_gemm(
            "void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int)"
        ));
        assert!(is_gemm("void fbgemm_gpu::gemm_kernel<float>()"));
    }
}
