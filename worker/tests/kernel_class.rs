//! Kernel classes (`analysis::kernel_class`): each class, tensor-core verdict and precision with
//! a near miss; the docs' copy of the table; the synthetic B200 trace's kernel table; the top
//! kernels of the real H100 / MI210 / MI250 / MI300 / SGLang / vLLM fixtures, checked by hand.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::breakdown::{is_communication_kernel, Category, Roles};
use kinetoscope::analysis::gpu::gpu_metrics;
use kinetoscope::analysis::kernel_class::{
    classify, is_gemm, rules_markdown, uses_tensor_cores, KernelClass, Precision, TensorCores,
};
use kinetoscope::analysis::kernels::{kernel_table, KernelRow};
use kinetoscope::report::kernels::kernels_json;
use kinetoscope::synth::serve;

use KernelClass::{Attention, Communication, Elementwise, Gemm, Memory, Other};
use TensorCores::{No, Unknown, Yes};

/// `(name, expected)` pairs, each hit followed by its near miss.
fn check<V: PartialEq + std::fmt::Debug>(cases: &[(&str, V)], get: impl Fn(&str) -> V) {
    for (name, want) in cases {
        assert_eq!(get(name), *want, "{name}");
    }
}

#[test]
fn classes_with_near_misses() {
    check(
        &[
            // GEMM: cuBLAS, cuBLASLt JIT, CUTLASS 3, trtllm-gen, Tensile, Triton, vLLM MoE.
            ("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn", Gemm),
            ("void gemv2T_kernel_val<int, int, float, float, float, 128, 16, 4, 4, false, false>", Other),
            ("nvjet_sm100_tst_256x128_64x4_2x1_v_bz_coopA_TNT", Gemm),
            ("sm100_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_cluster2x1x1_kernel", Gemm),
            (serve::MOE_FC1, Gemm),
            ("gemm_Bfloat16_E4m3E4m3_Fp32_t128x8x256u2_s6_et64x8_m64x8x32_cga1x1x1_16dp256b_TN_sm100a", Gemm),
            ("bmm_E2m1E2m1_Fp32_sm100f", Gemm),
            ("bmm_scale_kernel", Other),
            ("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN_LDSB1", Gemm),
            ("triton_tem_fused_addmm_relu_1", Gemm),
            ("triton_red_fused_mm_sum_1", Other),
            ("_w8a8_block_fp8_matmul", Gemm),
            ("fused_moe_kernel", Gemm),
            ("void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)", Other),
            // Attention: flash, FMHA, Triton / AITER, paged attention, flex attention.
            (serve::ATTN_DECODE, Attention),
            (serve::ATTN_FP8, Attention),
            ("fmhaSm100f_QkvE4m3OBfloat16_H128PagedKvCausalP64VarSeqQ128Kv128PersistentContext", Attention),
            ("fmha_cutlassF_f32_aligned_64x64_rf_sm80", Attention),
            ("attn_fwd", Attention),
            ("triton_tem_fused_flex_attention_0", Attention),
            ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 7, false, false>", Other),
            // Communication: NCCL / RCCL, NVLS, custom all-reduce, DeepEP.
            ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", Communication),
            ("rcclGenericKernel<1, false>(ncclDevComm*, unsigned long, ncclWork*)", Communication),
            (serve::ALL_REDUCE_NVLS, Communication),
            ("multimem_all_reduce_kernel", Communication),
            ("void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<(flashinfer::trtllm_allreduce_fusion::AllReduceFusionPattern)1, __nv_bfloat16, 8, false>", Communication),
            (serve::ALL_REDUCE_CUSTOM, Communication),
            ("void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*)", Communication),
            ("void at::native::all_reduce_kernel<float>", Other),
            // Memory: copies, cat, fills, ROCm blits.
            ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}>>", Memory),
            ("__amd_rocclr_fillBufferAligned", Memory),
            ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, std::array<char*, 1ul> >", Memory),
            ("void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)", Other),
            // Elementwise: TensorIterator, foreach, Inductor pointwise.
            (serve::ADD, Elementwise),
            ("triton_poi_fused_add_cos_sin_0", Elementwise),
            ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>", Other),
        ],
        |n| classify(n).class,
    );
}

#[test]
fn tensor_cores_with_near_misses() {
    check(
        &[
            ("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_kernel", Yes),
            ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_ffma_kernel", No),
            (serve::MOE_FC1, Yes),
            (serve::MOE_FC2, Yes),
            ("bmm_scale_kernel", Unknown),
            // An fp8 attention kernel: fp8 math exists only on tensor cores.
            (serve::ATTN_FP8, Yes),
            ("fmhaSm100f_QkvE4m3OBfloat16_H128PagedKvCausalP64VarSeqQ128Kv128PersistentContext", Yes),
            // fp8 in a quantization kernel says nothing about MMA.
            (serve::QUANT, Unknown),
            ("void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16>", Yes),
            ("void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128>", Unknown),
            ("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0", Yes),
            ("Cijk_Ailk_Bljk_SB_MT64x64x8_SN_1LDSB0_APM1", No),
            ("ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_tn", Yes),
            ("ampere_fp16_sgemm_fp16_64x64_tn", No),
            ("matmul_kernel", Unknown),
            (serve::ALL_REDUCE_NVLS, No),
            ("SubTensorOpWithScalar1d", Unknown),
        ],
        |n| classify(n).tensor_cores,
    );
}

/// r44: nothing classed GEMM that multiplies nothing, and the tensor-core use and precision of
/// FlashAttention-2/3, cuDNN fused SDPA and CUTLASS 3 warp-specialized kernels. No shared
/// fixture records these libraries: the names follow each library's naming (FlashAttention's
/// `flash_fwd_kernel` / `FlashAttnFwdSm90` templates, cuDNN frontend's
/// `cudnn_generated_fort_native_sdpa_*`, CUTLASS 3's `MainloopSm90TmaGmmaWarpSpecialized`),
/// each hit beside its near miss.
#[test]
fn r44_attention_and_gemm_helpers() {
    const FA3: &str = "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, false>, flash::StaticPersistentTileScheduler<false> > > >(flash::FlashAttnFwdSm90::Params)";
    const FA3_FP8: &str = "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<176>, cute::C<128> >, 128, cutlass::float_e4m3_t, float, cutlass::arch::Sm90, false, true> > > >(flash::FlashAttnFwdSm90::Params)";
    const FA3_PREP: &str = "void flash::prepare_varlen_num_blocks_kernel<1, true>(int, int, int, int const*, int const*, int*)";
    const FA2: &str = "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::half_t> >, false, true, false, false, true, true, false>(Flash_fwd_params)";
    const FA2_DOT: &str = "void flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t> >(Flash_bwd_params)";
    const FA2_COMBINE: &str = "void flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t>, 4, 2, true>(Flash_fwd_params)";
    const SDPA90: &str = "cudnn_generated_fort_native_sdpa_sm90_knob_7_64x128x128_4x1x1_kernel0_0";
    const SDPA80: &str = "cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_3_64x64x64_4x1x1_kernel0_0";
    const WS_GEMM: &str = "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedCooperative<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> >, cutlass::gemm::KernelTmaWarpSpecializedCooperative>, cute::tuple<cute::C<128>, cute::C<256>, cute::C<64> >, cutlass::bfloat16_t, cute::tuple<long, cute::C<1>, long>, cutlass::bfloat16_t> > >(cutlass::gemm::kernel::GemmUniversal::Params)";
    const TRANSPOSE: &str = "void deep_gemm::transpose_fp32<128, 32>(float const*, float*, unsigned int)";
    const TENSORMAP: &str = "void cutlass::gemm::kernel::fill_tensormap_kernel<cutlass::bfloat16_t>(CUtensorMap_st*, cutlass::gemm::GemmGroupedArguments)";
    const PREPARE: &str = "void at::cuda::detail::prepare_grouped_gemm_data<cutlass::bfloat16_t, cutlass::bfloat16_t, float>(cutlass::bfloat16_t*, cutlass::bfloat16_t*, long*, long*)";
    let kinds = [
        (FA3, (Attention, Yes, Precision::Bf16)),
        (FA3_FP8, (Attention, Yes, Precision::Fp8)),
        (FA3_PREP, (Attention, Unknown, Precision::Unknown)),
        (FA2, (Attention, Yes, Precision::Fp16)),
        (FA2_DOT, (Attention, No, Precision::Bf16)),
        (FA2_COMBINE, (Attention, No, Precision::Bf16)),
        (SDPA90, (Attention, Yes, Precision::Unknown)),
        (SDPA80, (Attention, Yes, Precision::Fp16)),
        (WS_GEMM, (Gemm, Yes, Precision::Bf16)),
        // Helpers in GEMM namespaces: no multiply, so not GEMM (and never GEMM time in fp32-gemm).
        (TRANSPOSE, (Other, Unknown, Precision::Fp32)),
        (TENSORMAP, (Other, Unknown, Precision::Bf16)),
        (PREPARE, (Other, Unknown, Precision::Bf16)),
        // Near misses: a real GEMM whose template mentions a transpose-free layout; an Inductor
        // template fusing a transpose is still a matmul.
        ("void deep_gemm::fp8_gemm_kernel<128, 128, 128, 4, 1>(float*, int*, unsigned int)", (Gemm, Yes, Precision::Fp8)),
        ("triton_tem_fused_mm_transpose_0", (Gemm, Yes, Precision::Unknown)),
    ];
    for (name, want) in kinds {
        let k = classify(name);
        assert_eq!((k.class, k.tensor_cores, k.precision), want, "{name}");
    }
    assert!(!is_gemm(TRANSPOSE) && !is_gemm(TENSORMAP) && is_gemm(WS_GEMM));
}

#[test]
fn precision_with_near_misses() {
    use Precision::*;
    check(
        &[
            (serve::MOE_FC1, Fp4),
            (serve::MOE_FC2, Fp4),
            ("bmm_E4m3_E4m3E4m3_Fp32_t128x8x256u2_s6_et64x8_m64x8x32_cga1x1x1_16dp256b_TN_sm100a", Fp8),
            (serve::ATTN_FP8, Fp8),
            ("fmhaSm100f_QkvE4m3OBfloat16_H128PagedKvCausalP64VarSeqQ128Kv128PersistentContext", Fp8),
            ("bmm_Bfloat16_E2m1E2m1_Fp32_t128x8x512u2_s4_et64x8_m64x8x64_cga1x1x1_16dp256b_TN_transOut_schedS_sm100f", Fp4),
            // `Fp8KVCacheDataType` is a template parameter's type name (0 = auto: bf16 cache).
            ("void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0>", Bf16),
            ("ampere_int32_i8816gemm_int8_128x128_ldg16_stages_64x3_nt", Int8),
            (serve::O_PROJ, Bf16),
            ("Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN", Bf16),
            ("volta_h884gemm_64x64_ldg8_nn", Fp16),
            ("ampere_fp16_sgemm_fp16_64x64_tn", Fp16),
            ("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0", Fp16),
            ("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_kernel", Tf32),
            ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_ffma_kernel", Fp32),
            ("volta_sgemm_128x64_nt", Fp32),
            ("ampere_gcgemm_64x64_nt", Fp32),
            ("Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN", Fp32),
            ("fmha_cutlassF_f32_aligned_64x64_rf_sm80", Fp32),
            ("volta_dgemm_64x64_nn", Fp64),
            // CUTLASS's `s1688gemm` without a half type is TF32 (Turing's spells `fp16`, issue
            // #44); cuBLASLt's `nvjet` does not spell its types: unknown, not a guess.
            ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_16x6_tn_align4>", Tf32),
            ("s1688gemm_128x128_16x4_nn_align4", Tf32),
            ("s1688gemm_f16_128x64_tn_align1", Fp16),
            ("turing_fp16_s1688gemm_fp16_256x128_ldg8_f2f_tn", Fp16),
            (serve::QKV, Unknown),
            ("void fbgemm_gpu::_FP8rowwise_to_float_cuda_kernel<float>(unsigned char const*)", Unknown),
            ("matmul_kernel", Unknown),
        ],
        |n| classify(n).precision,
    );
}

/// The predicates the rest of the engine uses, on the names the old `tensor_cores` module
/// pinned: mangled CUTLASS, MIOpen xdlops vs plain, SIMT markers, GEMMs from real traces.
#[test]
fn views_keep_their_verdicts() {
    for (name, tc) in [
        ("void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::arch::OpClassTensorOp, cutlass::tfloat32_t>>", true),
        ("igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8_ws2x1", true),
        ("igemm_fwd_gtc_nhwc_fp32_bx0_ex0_bt128x128x16", false),
        ("cutlass_80_simt_sgemm_wmma_like", false),
    ] {
        assert_eq!(uses_tensor_cores(name), tc, "{name}");
    }
    for name in [
        "ampere_sgemm_32x32_sliced1x4_tn",
        "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel",
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_16x6_tn_align4>(cutlass_80_tensorop_s1688gemm_128x64_16x6_tn_align4::Params)",
        "triton_mm_4",
        "matmul_kernel",
        "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, float const*, int, float*)",
        "void fbgemm_gpu::gemm_kernel<float>()",
    ] {
        assert!(is_gemm(name), "{name}");
    }
    for name in [
        "triton_poi_fused_add_cos_sin_0",
        "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
        "void gemv2T_kernel_val<int, int, float, float, float, 128, 16, 4>",
    ] {
        assert!(!is_gemm(name), "{name}");
    }
}

/// docs/definitions.md §3 holds the code's table, row for row.
#[test]
fn docs_hold_the_table() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/definitions.md")).unwrap();
    assert!(docs.contains(&rules_markdown()), "paste this into docs/definitions.md §3:\n{}", rules_markdown());
}

/// Time of the host ops named `op` during which no kernel runs, ns (by a 1 ns sweep over the
/// ops' spans: the synthetic traces are small).
fn host_outside_kernels(t: &kinetoscope::model::Trace, op: &str) -> i64 {
    use kinetoscope::model::CatClass;
    let s = &t.slices;
    let spans = |keep: &dyn Fn(usize) -> bool| -> Vec<(i64, i64)> { (0..s.len()).filter(|&i| keep(i)).map(|i| (s.start_ns[i], s.end_ns(i))).collect() };
    let kernels = spans(&|i| t.class(s.cat[i]) == CatClass::Kernel);
    let ops = spans(&|i| t.class(s.cat[i]) == CatClass::CpuOp && t.strings.get(s.name[i]) == op);
    let mut times: Vec<i64> = ops.iter().flat_map(|&(a, b)| a..b).collect();
    times.sort_unstable();
    times.dedup();
    times.iter().filter(|&&x| !kernels.iter().any(|&(a, b)| a <= x && x < b)).count() as i64
}

fn row<'a>(rows: &'a [KernelRow], name: &str) -> &'a KernelRow {
    rows.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no row {name}"))
}

/// The synthetic B200 trace (`synth::serve`; no public B200 trace exists to take one from): its
/// top kernels are tensor-core GEMMs with their precision, its all-reduces communication, and
/// the tensor-core share is 87% of kernel time (25% before the table knew trtllm-gen and FP8
/// attention: the B200 trace read 7%).
#[test]
fn b200_kernel_table() {
    assert_eq!(serve::generate(), serve::generate(), "deterministic");
    let (engine, _) = common::load_bytes("b200.json", serve::generate());
    let t = engine.trace().unwrap();
    let table = kernel_table(t, None);
    let top: Vec<(&str, KernelClass, bool, Precision)> = table.rows[..4]
        .iter()
        .map(|r| (r.name.as_str(), r.class, r.tensor_cores, r.precision))
        .collect();
    assert_eq!(
        top,
        [
            (serve::MOE_FC1, Gemm, true, Precision::Fp4),
            (serve::MOE_FC2, Gemm, true, Precision::Fp4),
            (serve::QKV, Gemm, true, Precision::Unknown),
            (serve::O_PROJ, Gemm, true, Precision::Bf16),
        ]
    );
    let fp8 = row(&table.rows, serve::ATTN_FP8);
    assert_eq!((fp8.class, fp8.tensor_cores, fp8.precision), (Attention, true, Precision::Fp8));
    for name in [serve::ALL_REDUCE_NVLS, serve::ALL_REDUCE_CUSTOM] {
        let r = row(&table.rows, name);
        assert_eq!((r.class, r.tensor_cores), (Communication, false), "{name}");
        assert!(is_communication_kernel(name));
    }
    // The step breakdown over the whole trace (no steps) counts the all-reduces' time as
    // communication, not as kernel time, and the host's `vllm::all_reduce` ops (a namespaced
    // collective) where no kernel runs (kernels take priority).
    let comm_ns: i64 = [serve::ALL_REDUCE_NVLS, serve::ALL_REDUCE_CUSTOM]
        .iter()
        .map(|n| row(&table.rows, n).total_ns)
        .sum();
    let b = Roles::new(t).breakdown(i64::MIN / 2, i64::MAX / 2);
    assert_eq!(b.get(Category::Communication), comm_ns + host_outside_kernels(t, "vllm::all_reduce"));
    assert_eq!(row(&table.rows, serve::ADD).class, Elementwise);
    assert_eq!(row(&table.rows, serve::QUANT).precision, Precision::Fp8);
    let share = gpu_metrics(t, None)[0].tensor_core_share.unwrap();
    assert!((0.8..0.9).contains(&share), "{share}");
    let json = kernels_json(&table.rows);
    assert_eq!((json[0]["class"].as_str(), json[0]["precision"].as_str()), (Some("gemm"), Some("fp4")));
}

/// `(class, tensor cores, precision)` of a row.
type Kind = (KernelClass, bool, Precision);

/// The [`Kind`] of a row.
fn kind(r: &KernelRow) -> Kind {
    (r.class, r.tensor_cores, r.precision)
}

/// The first rows of each real fixture's kernel table, checked by hand against the names
/// (`kinetoscope report FILE`).
#[test]
fn real_fixtures_top_kernels() {
    use Precision::*;
    let cases: [(&str, &[Kind]); 6] = [
        // cutlass wmma bf16, cutlass bf16 s16816, FlashAttention bf16, sm90_xmma bf16, layer norm.
        (
            "tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz",
            &[(Gemm, true, Bf16), (Gemm, true, Bf16), (Attention, true, Bf16), (Gemm, true, Bf16), (Other, false, Bf16)],
        ),
        // Triton `attn_fwd` (says neither), then hipBLASLt `Cijk_*_B_BS_*_MI16x16x1`.
        (
            "tracelens__mi300__gaunernst_bert-small-uncased__1016001.json.gz",
            &[(Attention, false, Unknown), (Gemm, true, Bf16), (Other, false, Bf16), (Gemm, true, Bf16)],
        ),
        // batch-norm backward, add, MIOpen transpose (`_half`), batch-norm stats, a tensor op.
        (
            "tracelens__mi210__gpu_only_trace.json.gz",
            &[(Other, false, Bf16), (Elementwise, false, Bf16), (Other, false, Fp16), (Other, false, Bf16), (Other, false, Unknown), (Gemm, true, Bf16)],
        ),
        // Tensile fp32 on matrix cores (`SB`, `MI16x16x1`), a reduction, another Tensile GEMM.
        (
            "hta__mi250_minitoy_train_ROCm6_2_kineto.json.gz",
            &[(Gemm, true, Fp32), (Other, false, Unknown), (Gemm, true, Fp32)],
        ),
        // hipBLASLt bf16, vLLM's ROCm paged attention (MFMA), hipBLASLt bf16.
        (
            "tracelens__sglang_Qwen3-8B_decode.json.gz",
            &[(Gemm, true, Bf16), (Attention, true, Bf16), (Gemm, true, Bf16)],
        ),
        // CUDA-graph capture: fills and a gather.
        (
            "tracelens__vllm_decode_full__graph_capture_rank_0.pt.trace.json.gz",
            &[(Memory, false, Unknown), (Memory, false, Unknown), (Other, false, Unknown)],
        ),
    ];
    for (fixture, want) in cases {
        let engine = common::load_real(fixture);
        let table = kernel_table(engine.trace().unwrap(), None);
        let got: Vec<_> = table.rows.iter().take(want.len()).map(kind).collect();
        assert_eq!(got, want, "{fixture}");
    }
}

/// ROCm traces link kernels to their launches through `hipLaunchKernel`,
/// `hipExtModuleLaunchKernel` and `hipModuleLaunchKernel`, so every kernel has its op.
#[test]
fn rocm_kernels_have_their_launching_op() {
    for fixture in [
        "tracelens__mi300__gaunernst_bert-small-uncased__1016001.json.gz",
        "hta__mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    ] {
        let engine = common::load_real(fixture);
        let table = kernel_table(engine.trace().unwrap(), None);
        let gemm = table.rows.iter().find(|r| r.class == Gemm).unwrap();
        assert!(gemm.top_op.is_some(), "{fixture}: {}", gemm.name);
        let unattributed: u64 = table.rows.iter().map(|r| r.unattributed_calls).sum();
        assert_eq!(unattributed, 0, "{fixture}");
    }
}

/// r44: communication recognised by where a kernel comes from. The synthetic expert-parallel
/// trace (`synth::moe`; no shared fixture records a library the name table does not know)
/// launches kernels named by no table row under `my_ep::dispatch` / `my_ep::combine` and under
/// `c10d::allgather_` > `record_param_comms`; its module header draws each step. Every number
/// below is derived from that drawing by hand, and every analysis reads the same classes.
#[test]
fn r44_communication_by_launch_context() {
    use kinetoscope::analysis::critical_path::BoundBy;
    use kinetoscope::analysis::kernel_class::class_row;
    use kinetoscope::analysis::steps::analyze;
    use kinetoscope::run::temporal::temporal;
    use kinetoscope::synth::moe;
    const US: i64 = 1_000;
    assert_eq!(moe::generate(), moe::generate(), "deterministic");
    let (engine, result) = common::load_bytes("moe.json", moe::generate());
    result.unwrap();
    let t = engine.trace().unwrap();
    let session = engine.session().unwrap();
    // No table row classes the four communication kernels: the launch context decides.
    for name in [moe::NOTIFY, moe::DISPATCH, moe::COMBINE, moe::RING, moe::PERMUTE] {
        assert_eq!(class_row(name), None, "{name}");
    }
    let table = session.kernels(None);
    let of = |name: &str| {
        let r = row(&table.rows, name);
        (r.class, r.class_source.as_str(), r.tensor_cores)
    };
    assert_eq!(of(moe::NOTIFY), (Communication, "launch: my_ep::dispatch", false));
    assert_eq!(of(moe::DISPATCH), (Communication, "launch: my_ep::dispatch", false));
    assert_eq!(of(moe::COMBINE), (Communication, "launch: my_ep::combine", false));
    assert_eq!(of(moe::RING), (Communication, "launch: record_param_comms", false));
    // Near misses: the name table wins (a fill under the dispatch op stays memory), and
    // `moe::dispatch` (no communication namespace) is routing.
    assert_eq!(of(moe::FILL), (Memory, "name #9", false));
    assert_eq!(of(moe::PERMUTE), (Other, "none", false));
    assert_eq!(of(moe::GEMM).0, Gemm);
    let json = kernels_json(&table.rows);
    let dispatch = json.as_array().unwrap().iter().find(|k| k["name"] == moe::DISPATCH).unwrap();
    assert_eq!((dispatch["class"].as_str(), dispatch["class_source"].as_str()), (Some("communication"), Some("launch: my_ep::dispatch")));

    // Step breakdown of each step span [0, 700] µs (module header): Kernel = GEMM ∪ PERMUTE ∪
    // ADD = 300 + 30 + 50; Communication = comm ops and comm kernels outside those: [35,50] +
    // [390,395] + [400,550] + [575,595] + [600,620] + [670,700] = 15 + 5 + 150 + 20 + 20 + 30;
    // Runtime = the launch calls outside both ([15,17], [562,564]; [302,304] runs beside the
    // GEMM) = 4; CPU Exec = aten::mm and aten::add outside those = 18 + 8; Other = the rest.
    let steps = analyze(t, None);
    assert_eq!(steps.steps.len(), 3);
    for s in &steps.steps {
        assert_eq!(s.dur_ns(), 700 * US);
        let b = &s.breakdown;
        let got = [Category::Kernel, Category::Communication, Category::Runtime, Category::CpuExec, Category::Other].map(|c| b.get(c) / US);
        assert_eq!(got, [380, 240, 4, 26, 50], "step {}", s.number);
    }

    // HTA's temporal breakdown (the run's overlap) over the first two steps (the last one is
    // dropped): kernel time 50 -> 1700 µs; union of kernels 580 per step; compute (GEMM, FILL,
    // PERMUTE, ADD) 380 per step; communication 480 per step, of which NOTIFY and DISPATCH
    // under the GEMM and 50 µs of RING beside the ADD overlap: 280.
    let tb = temporal(t, &steps);
    let got = [tb.kernel_time_ns, tb.compute_ns, tb.comm_overlapped_ns, tb.comm_non_overlapped_ns, tb.memory_ns, tb.idle_ns].map(|v| v / US);
    assert_eq!(got, [1650, 760, 560, 400, 0, 490]);
    assert!((tb.overlap_pct.unwrap() - 100.0 * 280.0 / 480.0).abs() < 1e-9);

    // The critical path ends with RING (launched at 580, run [600, 700]): 100 µs of
    // communication per step, none of it counted as compute.
    for p in session.critical_paths() {
        assert_eq!(p.shares[BoundBy::GpuCommunication.index()], 100 * US, "step {:?}", p.step);
    }

    // Findings read the same classes: `compute-bound` (GPU busy 580 of 700 µs per step) fires
    // and its evidence holds no communication kernel.
    let f = session.findings().iter().find(|f| f.rule == "compute-bound").expect("compute-bound");
    assert!(!f.evidence.slices.is_empty());
    for &k in &f.evidence.slices {
        let name = t.strings.get(t.slices.name[k as usize]);
        assert!(![moe::NOTIFY, moe::DISPATCH, moe::COMBINE, moe::RING].contains(&name.as_ref()), "{name}");
    }
}
