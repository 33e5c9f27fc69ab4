//! Kernel table (`analysis::kernels`) and the tensor-core / GEMM name rules
//! (`analysis::kernel_class`): tb_plugin's oracle numbers on every real fixture, a hand-built
//! trace with known answers for every column, the range rule, and the text / JSON rendering.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::kernels::{kernel_durations, kernel_table, KernelTable};
use kinetoscope::analysis::kernel_class::{is_gemm, uses_tensor_cores};
use kinetoscope::report::kernels::{kernel_table_text, kernels_json};
use serde_json::Value;
use std::collections::BTreeSet;

/// Every real fixture whose tb_plugin oracle has a kernel table, with that oracle.
fn oracles() -> Vec<(String, Value)> {
    let dir = common::shared().join("fixtures/oracle");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().ends_with(".tbhead.json") {
            continue;
        }
        let oracle: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        if oracle["status"] == "ok"
            && oracle["kernels_by_name"]
                .as_array()
                .is_some_and(|k| !k.is_empty())
        {
            out.push((oracle["trace"].as_str().unwrap().to_owned(), oracle));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Kernel names where our tensor-core verdict differs from tb_plugin's on purpose: its
/// PyProf allow-list predates Ampere (see `analysis::tensor_cores`). All four kinds run on
/// tensor cores: tf32 / f16 `xmma_fprop` convolutions (`tensor16x8x8`, `tensor16x8x16`) and
/// CUTLASS `wmma_tensorop` GEMMs.
fn tc_differs_on_purpose(name: &str) -> bool {
    name.starts_with("sm80_xmma_fprop_implicit_gemm_indexed_")
        || name.contains("_wmma_tensorop_f16_s161616gemm_")
}

#[test]
fn oracle_kernel_tables() {
    let oracles = oracles();
    assert_eq!(oracles.len(), 10, "fixtures with a tb_plugin kernel table");
    let (mut rows, mut worst_total, mut worst_mean, mut worst_blocks, mut worst_occ) =
        (0, 0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for (name, oracle) in &oracles {
        let (engine, _) = common::load(&common::real(name));
        let table = kernel_table(engine.trace().unwrap(), None);
        let theirs = oracle["kernels_by_name"].as_array().unwrap();
        let ours_names: BTreeSet<&str> = table.rows.iter().map(|r| r.name.as_str()).collect();
        let their_names: BTreeSet<&str> =
            theirs.iter().map(|k| k["name"].as_str().unwrap()).collect();
        assert_eq!(ours_names, their_names, "{name}: kernel names");
        for k in theirs {
            let kname = k["name"].as_str().unwrap();
            let at = format!("{name} {kname:?}");
            let r = table.rows.iter().find(|r| r.name == kname).unwrap();
            assert_eq!(r.calls(), k["calls"].as_u64().unwrap(), "{at}: calls");
            let f = |key: &str| k[key].as_f64().unwrap();
            let total_rel =
                (r.total_ns as f64 / 1000.0 - f("total_us")).abs() / f("total_us").max(1e-9);
            assert!(
                total_rel <= 0.001,
                "{at}: total {} vs {}",
                r.total_ns,
                f("total_us")
            );
            let mean = (r.stats.mean / 1000.0 - f("mean_us")).abs();
            assert!(mean <= 0.001, "{at}: mean");
            assert!(
                (r.stats.min as f64 / 1000.0 - f("min_us")).abs() <= 0.001,
                "{at}: min"
            );
            assert!(
                (r.stats.max as f64 / 1000.0 - f("max_us")).abs() <= 0.001,
                "{at}: max"
            );
            // tb_plugin fills a missing arg with 0; every real kernel carries both args.
            let blocks = (r.blocks_per_sm.unwrap_or(0.0) - f("mean_blocks_per_sm")).abs();
            let occ = (r.occupancy_pct.unwrap_or(0.0) - f("mean_est_occupancy_pct")).abs();
            assert!(
                blocks <= 1e-6 * f("mean_blocks_per_sm").max(1.0),
                "{at}: blocks per SM"
            );
            assert!(
                occ <= 1e-6 * f("mean_est_occupancy_pct").max(1.0),
                "{at}: occupancy"
            );
            if !tc_differs_on_purpose(kname) {
                assert_eq!(
                    r.tensor_cores,
                    k["tc_used"].as_bool().unwrap(),
                    "{at}: tensor cores"
                );
            }
            (worst_total, worst_mean, worst_blocks, worst_occ) = (
                worst_total.max(total_rel),
                worst_mean.max(mean),
                worst_blocks.max(blocks),
                worst_occ.max(occ),
            );
            rows += 1;
        }
    }
    // 459 rows over 10 traces; measured: total 1.9e-16 relative, mean 4e-12 µs, blocks per SM
    // 6e-14, occupancy 3e-14 (binary noise of tb_plugin's float µs).
    println!("{rows} rows; worst: total {worst_total:.1e} rel, mean {worst_mean:.1e} us, blocks {worst_blocks:.1e}, occ {worst_occ:.1e}");
    assert_eq!(rows, 459);
}

/// tb_plugin's `kernels_by_name_op` attributes gpumodel's GEMM to `aten::mm`; so do we (by
/// correlation and time containment, not External id).
#[test]
fn oracle_top_op_gpumodel() {
    let (engine, _) = common::load(&common::real("gpumodel__trace.json"));
    let table = kernel_table(engine.trace().unwrap(), None);
    let row = &table.rows[0];
    let op = row.top_op.as_ref().unwrap();
    assert_eq!(
        (op.name.as_str(), op.calls, row.unattributed_calls),
        ("aten::mm", 5, 0)
    );
    assert!(row.tensor_cores && row.gemm);
}

// ---------------------------------------------------------------------------------------
// Hand-built: `gemm` x5 (10, 20, 30 µs launched in aten::mm; 40, 100 µs in aten::addmm),
// a tensor-core GEMM launched outside any op, an elementwise kernel with no launch and no
// args. Origin 0, so ns = µs x 1000.

const HAND: &str = r#"{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":50},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":5,"args":{"correlation":2}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":30,"dur":5,"args":{"correlation":3}},
{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":100,"dur":50},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":110,"dur":5,"args":{"correlation":4}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":120,"dur":5,"args":{"correlation":5}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":300,"dur":5,"args":{"correlation":6}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":40,"dur":10,"args":{"correlation":1,"device":0,"blocks per SM":1,"est. achieved occupancy %":50}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":60,"dur":20,"args":{"correlation":2,"device":0,"blocks per SM":1,"est. achieved occupancy %":50}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":90,"dur":30,"args":{"correlation":3,"device":0,"blocks per SM":1,"est. achieved occupancy %":50}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":160,"dur":40,"args":{"correlation":4,"device":0,"blocks per SM":1,"est. achieved occupancy %":50}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":210,"dur":100,"args":{"correlation":5,"device":0,"blocks per SM":6,"est. achieved occupancy %":0}},
{"ph":"X","cat":"kernel","name":"volta_h884gemm_64x64_nn","pid":0,"tid":8,"ts":320,"dur":50,"args":{"correlation":6,"device":0}},
{"ph":"X","cat":"kernel","name":"relu","pid":0,"tid":8,"ts":400,"dur":5},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":8,"ts":500,"dur":70}
]}"#;

fn hand() -> kinetoscope::engine::Engine {
    common::load_str(HAND).0
}

#[test]
fn hand_built_every_column() {
    let engine = hand();
    let table = kernel_table(engine.trace().unwrap(), None);
    // Memcpy is not a kernel.
    assert_eq!((table.total_ns, table.calls), (255_000, 7));
    let names: Vec<&str> = table.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["gemm", "volta_h884gemm_64x64_nn", "relu"],
        "total descending"
    );
    let gemm = &table.rows[0];
    assert_eq!(
        (gemm.calls(), gemm.total_ns, gemm.stats.min, gemm.stats.max),
        (5, 200_000, 10_000, 100_000)
    );
    let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
    // numpy: mean 40, median 30, percentile(95) = 40 + 0.8 * 60 = 88; pandas std (ddof 1)
    // = sqrt(5000 / 4).
    assert!(
        close(gemm.stats.mean, 40_000.0)
            && close(gemm.stats.median, 30_000.0)
            && close(gemm.stats.p95, 88_000.0)
    );
    assert!(close(gemm.stats.std, 1000.0 * 1250f64.sqrt()));
    assert!(close(gemm.share, 200.0 / 255.0));
    // Weighted by duration: (10+20+30+40 + 6*100) / 200 and 50 * 100 / 200.
    assert!(close(gemm.blocks_per_sm.unwrap(), 3.5) && close(gemm.occupancy_pct.unwrap(), 25.0));
    assert!(!gemm.tensor_cores && gemm.gemm);
    // aten::mm launched more calls (3), aten::addmm more time (140 µs): time wins.
    let op = gemm.top_op.as_ref().unwrap();
    assert_eq!(
        (
            op.name.as_str(),
            op.calls,
            op.total_ns,
            gemm.unattributed_calls
        ),
        ("aten::addmm", 2, 140_000, 0)
    );
    let tc = &table.rows[1];
    assert!(tc.tensor_cores && tc.gemm);
    assert_eq!(
        (tc.top_op.clone(), tc.unattributed_calls, tc.blocks_per_sm),
        (None, 1, None),
        "launch call in no op"
    );
    let relu = &table.rows[2];
    assert_eq!(
        (
            relu.top_op.clone(),
            relu.unattributed_calls,
            relu.occupancy_pct
        ),
        (None, 1, None),
        "no launch link"
    );
    assert_eq!(relu.stats.std, 0.0, "one call");
}

/// Range rule: a kernel counts when it starts in `[t0, t1)`, with its whole duration.
#[test]
fn hand_built_range_counts_kernels_starting_inside() {
    let engine = hand();
    let trace = engine.trace().unwrap();
    // gemm@60 (ends 80) overlaps 65 but starts before; gemm@210 starts at t1: both out.
    let table = kernel_table(trace, Some((65_000, 210_000)));
    assert_eq!(
        (table.rows.len(), table.calls, table.total_ns),
        (1, 2, 70_000)
    );
    assert_eq!(
        kernel_durations(trace, "gemm", Some((65_000, 210_000))),
        [30_000, 40_000]
    );
    // gemm@210 runs to 310 µs, past t1, and still counts whole.
    assert_eq!(
        kernel_table(trace, Some((200_000, 300_000))).total_ns,
        100_000
    );
    assert_eq!(
        kernel_table(trace, Some((1_000_000, 2_000_000))),
        KernelTable::default()
    );
    assert_eq!(
        kernel_durations(trace, "gemm", None),
        [10_000, 20_000, 30_000, 40_000, 100_000],
        "start order"
    );
    assert!(kernel_durations(trace, "no such kernel", None).is_empty());
}

#[test]
fn text_and_json() {
    let engine = hand();
    let table = kernel_table(engine.trace().unwrap(), None);
    let text = kernel_table_text("Kernels", &table, 10, kinetoscope::report::NAME_WIDTH);
    for line in text.lines() {
        assert!(line.chars().count() <= 120, "too wide: {line:?}");
    }
    assert!(
        text.contains("launched by aten::addmm (2 of 5 calls)"),
        "{text}"
    );
    let gemm_line = text.lines().find(|l| l.starts_with("gemm ")).unwrap();
    let cells: Vec<&str> = gemm_line.split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "gemm",
            "5",
            "200.000us",
            "78.4%",
            "40.000us",
            "30.000us",
            "88.000us",
            "100.000us",
            "3.50",
            "25.0",
            "-",
            "?"
        ]
    );
    assert!(
        text.contains(
            "Kernel time total: 255.000us; calls: 7; kernel names: 3; tensor-core kernels: 19.61%"
        ),
        "{text}"
    );
    let json = kernels_json(&table.rows);
    let g = &json[0];
    for (key, value) in [
        ("calls", 5.0),
        ("total_us", 200.0),
        ("mean_us", 40.0),
        ("median_us", 30.0),
        ("min_us", 10.0),
        ("max_us", 100.0),
        ("p95_us", 88.0),
        ("blocks_per_sm", 3.5),
        ("achieved_occupancy_pct", 25.0),
    ] {
        assert!(
            (g[key].as_f64().unwrap() - value).abs() < 1e-9,
            "{key}: {}",
            g[key]
        );
    }
    assert!((g["std_us"].as_f64().unwrap() - 1250f64.sqrt()).abs() < 1e-9);
    assert_eq!(
        (
            g["name"].as_str(),
            g["tensor_cores"].as_bool(),
            g["top_op"]["name"].as_str()
        ),
        (Some("gemm"), Some(false), Some("aten::addmm"))
    );
    assert_eq!(
        (json[2]["blocks_per_sm"].clone(), json[2]["top_op"].clone()),
        (Value::Null, Value::Null)
    );
}

#[test]
fn real_fixture_names_are_cut_at_the_name_width() {
    let (engine, _) = common::load(&common::real("partx__profiler_trace_single_sample.json"));
    let table = kernel_table(engine.trace().unwrap(), None);
    let fixed = 87; // the value columns and their separators
    for (width, cut) in [(kinetoscope::report::NAME_WIDTH, "ampere_fp16_s16816gemm_fp16_128x64_ldg8_relu_f2f_sta..."), (30, "ampere_fp16_s16816gemm_fp16...")] {
        let text = kernel_table_text("Kernels", &table, 1000, width);
        assert!(text.lines().all(|l| l.chars().count() <= width + fixed), "{text}");
        assert!(text.contains(&format!("{cut} ")), "{width}: {text}");
    }
}

// ---------------------------------------------------------------------------------------
// Tensor-core and GEMM name rules.

/// Every kernel name of every real fixture, deduplicated.
fn fixture_kernel_names() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for path in common::real_fixtures() {
        let (engine, result) =
            common::load_bytes(&path.to_string_lossy(), std::fs::read(&path).unwrap());
        if result.is_err() {
            continue;
        }
        let t = engine.trace().unwrap();
        for r in kernel_table(t, None).rows {
            names.insert(r.name);
        }
    }
    names
}

/// The real names we classify as tensor-core kernels: all of them, by prefix, so a new
/// fixture cannot change the verdict on a name silently.
#[test]
fn tensor_cores_on_every_fixture_name() {
    let names = fixture_kernel_names();
    assert!(names.len() > 250, "{}", names.len());
    let tc: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| uses_tensor_cores(n))
        .collect();
    // (prefix, how many fixture names start with it): every tensor-core name is in one family.
    let expected: [(&str, usize); 14] = [
        ("Cijk_", 14), // ROCm Tensile with an MFMA shape (`_MI16x16x1_`): MI210 / MI250 / MI300
        ("ampere_fp16_s16816gemm_fp16_", 3),
        ("igemm_", 16), // MIOpen xdlops convolutions (`gtcx2`), MI250
        ("sm80_xmma_fprop_implicit_gemm_", 2),
        ("sm90_xmma_gemm_", 3), // H100: bf16 and TF32 cuBLAS
        ("void cutlass::Kernel2<cutlass_80_", 3),
        ("void cutlass::Kernel<cutlass_75_tensorop_", 2),
        ("void cutlass::Kernel<cutlass_75_wmma_tensorop_", 1),
        ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_", 53), // TF32, the sampled ranks
        ("void cutlass::Kernel<cutlass_80_wmma_tensorop_", 4),
        ("void pytorch_flash::flash_fwd_kernel<", 1),
        ("void paged_attention_ll4mi_QKV_mfma16_kernel<", 1), // SGLang on MI300: MFMA in the name
        ("ampere_", 0),
        ("volta_", 0),
    ];
    let family = |n: &str| expected.iter().position(|(p, _)| n.starts_with(p));
    for name in &tc {
        assert!(family(name).is_some(), "{name} is in no family");
    }
    // Counted independently (python over the fixtures' JSON: distinct kernel names by prefix).
    let counts: Vec<(&str, usize)> = expected
        .iter()
        .enumerate()
        .map(|(i, &(p, _))| (p, tc.iter().filter(|n| family(n) == Some(i)).count()))
        .collect();
    assert_eq!(counts, expected, "{tc:#?}");
    // SIMT GEMMs from the fixtures: fp32 sgemm, fp16-storage sgemm, complex, MAGMA, cuDNN.
    for simt in [
        "ampere_sgemm_32x32_sliced1x4_tn",
        "volta_sgemm_128x64_nt",
        "ampere_fp16_sgemm_fp16_64x64_tn",
        "ampere_fp16_sgemm_fp16_32x128_nn",
        "ampere_gcgemm_64x64_nt",
        "cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1",
        "volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1",
    ] {
        assert!(names.contains(simt), "{simt} is a fixture name");
        assert!(!uses_tensor_cores(simt), "{simt}");
    }
}

/// Names from outside the fixtures (the patterns the fixtures do not exercise).
#[test]
fn tensor_cores_and_gemm_on_known_names() {
    let cases: [(&str, bool, bool); 24] = [
        // (name, tensor cores, gemm)
        ("volta_h884gemm_64x64_ldg8_nn", true, true),
        ("volta_s884gemm_fp16_128x128_ldg8_f2f_nn", true, true),
        ("turing_fp16_s1688gemm_fp16_256x128_ldg8_f2f_tn", true, true),
        ("turing_h1688gemm_128x128_ldg8_tn", true, true),
        ("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn", true, true),
        ("ampere_int32_i8816gemm_int8_128x128_ldg16_stages_64x3_nt", true, true),
        ("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage3_warpsize2x2x1_tensor16x8x16_kernel", true, true),
        ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", true, true),
        ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel_cublas", false, true),
        ("sm90_gemm_bf16_bf16_bf16_64x128x64_wgmma_warpspecialized_cooperative", true, true),
        ("cutlass3x_sm90_tensorop_s64x128x16gemm_bf16_bf16_f32_bf16_bf16_128x128x64_1x1x1_0_tnn_align8", true, true),
        ("void cutlass::Kernel<cutlass_75_simt_sgemm_128x128_8x2_nn_align1>(cutlass_75_simt_sgemm_128x128_8x2_nn_align1::Params)", false, true),
        ("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", true, true),
        ("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_APM1_ABV0", true, true),
        ("Cijk_Ailk_Bljk_SB_MT64x64x8_SN_1LDSB0_APM1", false, true),
        ("triton_tem_fused_mm_0", true, true),
        ("triton_tem_fused_addmm_relu_1", true, true),
        ("triton_tem_fused_flex_attention_0", true, false),
        ("triton_poi_fused_add_cos_sin_0", false, false),
        ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>", true, false),
        ("volta_sgemm_128x64_nt", false, true),
        ("void gemv2T_kernel_val<int, int, float, float, float, 128, 16, 4, 4, false, false>", false, false),
        ("void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)", false, false),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", false, false),
    ];
    for (name, tc, gemm) in cases {
        assert_eq!(
            (uses_tensor_cores(name), is_gemm(name)),
            (tc, gemm),
            "{name}"
        );
    }
}

#[test]
fn gemm_on_fixture_names() {
    let names = fixture_kernel_names();
    let gemms: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| is_gemm(n))
        .collect();
    // cuBLAS sgemm/gcgemm/s16816gemm, small-N and k=1 GEMMs, MAGMA, CUTLASS, xmma (incl. the
    // implicit-GEMM convolutions), cuDNN's implicit/explicit_convolve_sgemm.
    // MIOpen's `igemm_*` convolutions (MI250) and Tensile's `Cijk_*` (MI210/MI250/MI300) too.
    assert_eq!(gemms.len(), 143, "{gemms:#?}");
    assert!(gemms.iter().all(|n| !n.contains("fbgemm_gpu::permute")));
    assert!(gemms.iter().any(|n| n.starts_with("void gemmSN_TN_kernel")));
    assert!(gemms
        .iter()
        .any(|n| n.starts_with("void implicit_convolve_sgemm")));
}
