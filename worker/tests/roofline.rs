//! Work and the roofline (`analysis::work`): FLOP estimates against PyTorch's own counts on
//! `fixtures/torch-cpu/flops.*`, kernel FLOPs and achieved rates on the real H100 trace
//! recomputed from the raw JSON, and step MFU from the same sums.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::ops::OpOptions;
use kinetoscope::analysis::work::dtype::PeakClass;
use kinetoscope::analysis::work::Bound;
use serde_json::Value;
use std::collections::HashMap;

fn torch_cpu(name: &str) -> std::path::PathBuf {
    common::shared().join("fixtures/torch-cpu").join(name)
}

/// Every op PyTorch counts FLOPs for, by name and input shapes, equals our estimate summed
/// over its calls, exactly.
#[test]
fn flops_equal_pytorch_for_every_op_it_counts() {
    let (engine, _) = common::load(&torch_cpu("flops.pt.trace.json"));
    let truth: Value = serde_json::from_slice(&std::fs::read(torch_cpu("flops.truth.json")).unwrap()).unwrap();
    let session = engine.session().unwrap();
    let table = session.op_table(&OpOptions { by_shape: true, range: None });
    let ours: HashMap<(&str, &str), (Option<u64>, u64)> =
        table.rows.iter().map(|r| ((r.name.as_str(), r.input_shapes.as_str()), (r.flops, r.calls))).collect();
    let rows = truth["ops"].as_array().unwrap();
    assert_eq!(rows.len(), 29, "PyTorch counted 29 (op, shape) rows");
    for row in rows {
        let key = (row["name"].as_str().unwrap(), row["input_shapes"].as_str().unwrap());
        let (flops, calls) = ours.get(&key).unwrap_or_else(|| panic!("no row {key:?}"));
        assert_eq!(*calls, row["calls"].as_u64().unwrap(), "{key:?} calls");
        assert_eq!(*flops, row["flops"].as_u64(), "{key:?} flops");
    }
    // By name, a row sums its calls: aten::mm is the sum of its seven shapes.
    let by_name = session.op_table(&OpOptions::default());
    let mm: u64 = rows.iter().filter(|r| r["name"] == "aten::mm").map(|r| r["flops"].as_u64().unwrap()).sum();
    assert_eq!(by_name.rows.iter().find(|r| r.name == "aten::mm").unwrap().flops, Some(mm));
    // Ops PyTorch does not count and we cannot estimate stay unknown, not 0.
    for name in ["aten::empty", "aten::randn", "aten::t", "aten::view"] {
        assert_eq!(by_name.rows.iter().find(|r| r.name == name).unwrap().flops, None, "{name}");
    }
    // PyTorch does not count linear; ours is its GEMM, 2·M·K·N from the printed shapes
    // (x [.., K], w [N, K]) times the calls.
    let linear: Vec<_> = table.rows.iter().filter(|r| r.name == "aten::linear").collect();
    assert!(!linear.is_empty());
    for row in linear {
        let shapes: Vec<Vec<u64>> = serde_json::from_str(&row.input_shapes).unwrap();
        let (x, w) = (&shapes[0], &shapes[1]);
        let m: u64 = x[..x.len() - 1].iter().product();
        assert_eq!(row.flops, Some(2 * m * x[x.len() - 1] * w[0] * row.calls), "{}", row.input_shapes);
    }
}

/// Kernel rows of the H100 bert trace: FLOPs and bytes equal a recount from the raw JSON
/// (kernel -> correlation -> launch -> innermost op with an estimate, split by duration), and
/// achieved TFLOP/s is FLOPs / time, as a reader recomputes it from the columns.
#[test]
fn h100_kernel_rates_recompute_from_the_columns() {
    let name = "tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz";
    let engine = common::load_real(name);
    let session = engine.session().unwrap();
    let work = session.work();
    let peaks = work.peaks().expect("H100 is in the table");
    assert_eq!(peaks.model, "NVIDIA H100 SXM");
    let table = session.kernels(None);
    let gemms: Vec<_> = table.rows.iter().filter(|r| r.gemm).collect();
    assert!(!gemms.is_empty());
    for row in &gemms {
        let a = row.achieved.expect("every GEMM of this trace is launched by aten::addmm or aten::mm");
        assert!(a.has_flops, "{}", row.name);
        assert_eq!(a.measured_ns, row.total_ns, "{}: every call has work", row.name);
        let tflops = a.flops / (row.total_ns as f64 / 1e9) / 1e12;
        assert!((a.tflops.unwrap() - tflops).abs() < 1e-9, "{}", row.name);
        let pct = 100.0 * tflops / peaks.tflops(PeakClass::Bf16).unwrap();
        assert!((a.peak_pct.unwrap() - pct).abs() < 1e-6, "{}: bf16 GEMM against 989.4 TFLOP/s", row.name);
        let gbps = a.bytes.unwrap() / (row.total_ns as f64 / 1e9) / 1e9;
        assert!((a.gbps.unwrap() - gbps).abs() < 1e-6);
        let ridge = 989.4e12 / 3350e9;
        let expect = if a.flops / a.bytes.unwrap() >= ridge { Bound::Compute } else { Bound::Memory };
        assert_eq!(a.bound, Some(expect), "{}", row.name);
    }
    // Independent recount of the GEMM FLOPs from the raw JSON.
    let recount = recount_gemm_flops(&common::json_bytes(&common::real(name)));
    let ours: f64 = gemms.iter().map(|r| r.achieved.unwrap().flops).sum();
    assert!((ours - recount).abs() / recount < 1e-9, "ours {ours} recount {recount}");
    // Elementwise kernels are memory-bound by kind.
    let elementwise = table.rows.iter().filter(|r| r.name.contains("elementwise") && r.achieved.is_some());
    for row in elementwise {
        assert_eq!(row.achieved.unwrap().bound, Some(Bound::Memory), "{}", row.name);
    }
}

/// Sums 2·M·K·N of every `aten::addmm` / `aten::mm` call that launched a GEMM kernel, found
/// through `correlation` and the call's enclosing op by time, straight from the JSON.
fn recount_gemm_flops(bytes: &[u8]) -> f64 {
    let doc: Value = serde_json::from_slice(bytes).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let x = |e: &Value| e["ph"] == "X";
    let span = |e: &Value| {
        let ts = e["ts"].as_f64().unwrap();
        (ts, ts + e["dur"].as_f64().unwrap_or(0.0))
    };
    let gemm_ops: Vec<(&Value, (f64, f64))> = events
        .iter()
        .filter(|e| x(e) && e["cat"] == "cpu_op" && (e["name"] == "aten::addmm" || e["name"] == "aten::mm"))
        .map(|e| (e, span(e)))
        .collect();
    let launches: HashMap<u64, &Value> = events
        .iter()
        .filter(|e| x(e) && (e["cat"] == "cuda_runtime" || e["cat"] == "cuda_driver"))
        .filter_map(|e| Some((e["args"]["correlation"].as_u64()?, e)))
        .collect();
    let mut per_op: HashMap<usize, u64> = HashMap::new();
    for k in events.iter().filter(|e| x(e) && e["cat"] == "kernel") {
        let name = k["name"].as_str().unwrap();
        let gemm = name.contains("gemm") || name.contains("nvjet") || name.contains("cutlass");
        if !gemm {
            continue;
        }
        let Some(launch) = k["args"]["correlation"].as_u64().and_then(|c| launches.get(&c)) else { continue };
        let (t0, t1) = span(launch);
        let op = gemm_ops
            .iter()
            .enumerate()
            .filter(|(_, (o, (a, b)))| o["tid"] == launch["tid"] && *a <= t0 && t1 <= *b)
            .min_by(|x, y| (x.1 .1 .1 - x.1 .1 .0).total_cmp(&(y.1 .1 .1 - y.1 .1 .0)));
        if let Some((i, _)) = op {
            *per_op.entry(i).or_default() += 1;
        }
    }
    per_op
        .keys()
        .map(|&i| {
            let dims = &gemm_ops[i].0["args"]["Input Dims"];
            let (a, b) = if gemm_ops[i].0["name"] == "aten::addmm" { (&dims[1], &dims[2]) } else { (&dims[0], &dims[1]) };
            let (m, k, n) = (a[0].as_f64().unwrap(), a[1].as_f64().unwrap(), b[1].as_f64().unwrap());
            2.0 * m * k * n
        })
        .sum()
}

/// A synthetic H100 step, ground truth by construction: one bf16 `aten::mm` of
/// 4096 x 4096 x 4096 (2·4096³ = 137.44 GFLOP) runs as one 500 µs kernel inside a 1000 µs
/// `ProfilerStep#1`. At 989.4 TFLOP/s the work needs 138.91 µs: MFU 13.891%, the kernel
/// achieves 274.88 TFLOP/s (27.78% of peak).
const SYNTH_STEP: &str = r#"{"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3"}],"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":20,"args":{"Input Dims":[[4096,4096],[4096,4096]],"Input type":["c10::BFloat16","c10::BFloat16"]}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":5,"args":{"correlation":7}},
{"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64","pid":0,"tid":7,"ts":100,"dur":500,"args":{"correlation":7,"device":0,"stream":7}}
]}"#;

#[test]
fn step_mfu_by_construction() {
    let (engine, _) = common::load_str(SYNTH_STEP);
    let session = engine.session().unwrap();
    let steps = session.steps(None);
    assert_eq!(steps.steps.len(), 1);
    let flops = 2.0 * 4096f64.powi(3);
    let mfu = session.step_mfu(&steps)[0].unwrap();
    let expect = 100.0 * (flops / 989.4e12) / 1000e-6;
    assert!((mfu - expect).abs() < 1e-9, "{mfu} vs {expect}");
    assert!((mfu - 13.891).abs() < 1e-3);
    let row = &session.kernels(None).rows[0];
    let a = row.achieved.unwrap();
    assert!((a.tflops.unwrap() - flops / 500e-6 / 1e12).abs() < 1e-9);
    assert!((a.peak_pct.unwrap() - 27.782).abs() < 1e-3);
    // Intensity 137.44e9 / (3 · 4096² · 2 B) = 1365 FLOP/B, above H100's ridge of 295: compute-bound.
    assert_eq!(a.bound, Some(Bound::Compute));
    // The same trace with peaks given by hand: half the bf16 peak doubles the MFU.
    let given = kinetoscope::analysis::work::peaks::Peaks::with_overrides(None, "bf16=494.7,gbps=3350").unwrap();
    let work = kinetoscope::analysis::work::WorkIndex::new(session.trace(), Some(given));
    assert!((work.step_mfu(session.trace(), &steps)[0].unwrap() - 2.0 * expect).abs() < 1e-9);
    // The whole trace's kernel table is kept by the session, and rebuilt with the peaks.
    assert_eq!(session.kernels(None), session.kernels(None));
    let mut engine = engine;
    engine.set_peaks(Some("bf16=494.7,gbps=3350")).unwrap();
    let row = &engine.session().unwrap().kernels(None).rows[0];
    assert!((row.achieved.unwrap().peak_pct.unwrap() - 2.0 * 27.782).abs() < 2e-3);
}

/// Without a known GPU there are no peaks: no MFU, no percentages, rates still shown.
#[test]
fn no_peaks_without_a_known_gpu() {
    let (engine, _) = common::load(&torch_cpu("flops.pt.trace.json"));
    let session = engine.session().unwrap();
    assert!(session.work().peaks().is_none());
    let (engine, _) = common::load_str(&SYNTH_STEP.replace("NVIDIA H100 80GB HBM3", "Mystery GPU"));
    let session = engine.session().unwrap();
    assert_eq!(session.work().device(), "Mystery GPU");
    assert!(session.step_mfu(&session.steps(None)).iter().all(Option::is_none));
    let a = session.kernels(None).rows[0].achieved.unwrap();
    assert!(a.tflops.is_some() && a.peak_pct.is_none() && a.bound.is_none());
}

/// r44: every GPU the issue lists resolves to its datasheet row (names as `deviceProperties`
/// writes them), each beside a near miss that must not take its row.
#[test]
fn r44_listed_gpus_resolve_to_their_datasheet_rows() {
    use kinetoscope::analysis::work::peaks::lookup;
    let rows = [
        ("NVIDIA H800", "NVIDIA H800 SXM", 989.4),
        ("NVIDIA H800 PCIe", "NVIDIA H800 PCIe", 756.0),
        ("NVIDIA H20", "NVIDIA H20", 148.0),
        ("NVIDIA GH200 480GB", "NVIDIA GH200 (96 GB HBM3)", 989.4),
        ("NVIDIA GB200", "NVIDIA GB200 (per GPU)", 2500.0),
        ("NVIDIA B300 SXM6 AC", "NVIDIA B300", 2250.0),
        ("NVIDIA L40S", "NVIDIA L40S", 362.05),
        ("NVIDIA L4", "NVIDIA L4", 121.0),
        ("NVIDIA A10", "NVIDIA A10", 125.0),
        ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090", 165.2),
        ("NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5090", 209.5),
        ("AMD Instinct MI325X", "AMD Instinct MI325X", 1307.4),
        ("AMD Instinct MI355X", "AMD Instinct MI355X", 2516.6),
    ];
    for (name, model, bf16) in rows {
        let p = lookup(name).unwrap_or_else(|| panic!("{name} has no row"));
        assert_eq!((p.model.as_str(), p.tflops(PeakClass::Bf16)), (model, Some(bf16)), "{name}");
        assert!(p.gbps.is_some() && !p.source.contains("estimate"), "{name}: {}", p.source);
    }
    let near = |n: &str| lookup(n).map(|p| p.model);
    assert_eq!(near("NVIDIA A100-SXM4-80GB").as_deref(), Some("NVIDIA A100 SXM 80GB"), "A100 is not A10");
    assert_eq!(near("NVIDIA H200").as_deref(), Some("NVIDIA H200 SXM"), "H200 is not H20");
    assert_eq!(near("NVIDIA B200").as_deref(), Some("NVIDIA B200"), "B200 is not B300 or GB200");
    assert_eq!(near("NVIDIA L40"), None, "L40 is neither L40S nor L4");
    assert_eq!(near("NVIDIA GeForce RTX 4080"), None);
    // MI355X has no TF32: its fp32 vector rate stands in.
    assert_eq!(lookup("AMD Instinct MI355X").unwrap().tflops(PeakClass::Tf32), Some(157.3));
}

/// r44: a GPU the table does not know gets peaks estimated from its `deviceProperties`
/// (compute capability -> architecture, `numSms`), labelled as estimates, with their source
/// named. The real H100 fixture renamed: 132 SMs x 4096 bf16 FLOPs per SM per clock x 1.83 GHz
/// = 989.4 TFLOP/s, the H100 SXM datasheet's figure; no memory clocks in Kineto's
/// `deviceProperties`, so no bandwidth (and no bound). An AMD name with a compute capability
/// (ROCm's is not an NVIDIA architecture) gets none.
#[test]
fn r44_unknown_gpu_gets_estimated_peaks() {
    const FIXTURE: &str = "tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz";
    let text = String::from_utf8(common::json_bytes(&common::real(FIXTURE))).unwrap();
    assert!(text.contains("\"computeMajor\": 9") || text.contains("\"computeMajor\":9"));
    let renamed = text.replace("NVIDIA H100 80GB HBM3", "NVIDIA Hopper Engineering Sample");
    let (engine, _) = common::load_str(&renamed);
    let session = engine.session().unwrap();
    let p = session.work().peaks().expect("estimated peaks");
    assert_eq!(p.model, "NVIDIA Hopper Engineering Sample (estimated)");
    assert!(p.source.starts_with("estimate, not a datasheet: compute capability 9.0 (Hopper (H100 SXM)), 132 SMs"), "{}", p.source);
    assert!((p.tflops(PeakClass::Bf16).unwrap() - 989.4).abs() < 0.1);
    assert!((p.tflops(PeakClass::Fp8).unwrap() - 1978.9).abs() < 0.2);
    assert_eq!(p.gbps, None);
    assert!(session.step_mfu(&session.steps(None)).iter().any(Option::is_some), "MFU from estimated peaks");
    let report = kinetoscope::report::work::peaks_json(session.work());
    assert_eq!(report["source"].as_str(), Some(p.source.as_str()));
    let amd = text.replace("NVIDIA H100 80GB HBM3", "AMD Instinct MI999X");
    let (engine, _) = common::load_str(&amd);
    assert!(engine.session().unwrap().work().peaks().is_none());
}

fn fires(trace: &str, rule: &str) -> bool {
    let (engine, _) = common::load_str(trace);
    engine.session().unwrap().findings().iter().any(|f| f.rule == rule)
}

/// `low-mfu` and `memory-bound-gemm` on the synthetic step, each with its near miss: MFU
/// 13.9% (>= 10%) is quiet, the same work in a 10x longer step (1.39%) fires; the square
/// 4096³ GEMM (1365 FLOP/B) is compute-bound, a 16-row one (15.9 FLOP/B < 295) is not.
#[test]
fn roofline_rules_and_their_near_misses() {
    assert!(!fires(SYNTH_STEP, "low-mfu"));
    let long_step = SYNTH_STEP.replace(r#""ts":0,"dur":1000"#, r#""ts":0,"dur":10000"#);
    assert!(fires(&long_step, "low-mfu"));
    assert!(!fires(SYNTH_STEP, "memory-bound-gemm"));
    let skinny = SYNTH_STEP.replace("[[4096,4096],[4096,4096]]", "[[16,4096],[4096,4096]]");
    let (engine, _) = common::load_str(&skinny);
    let f = engine.session().unwrap().findings().iter().find(|f| f.rule == "memory-bound-gemm").cloned().unwrap();
    assert!(f.title.contains("M=16 N=4096 K=4096, 16 FLOP/B < ridge 295"), "{}", f.title);
    // Without peaks neither rule guesses.
    let unknown = long_step.replace("NVIDIA H100 80GB HBM3", "Mystery GPU");
    assert!(!fires(&unknown, "low-mfu"));
    assert!(!fires(&unknown.replace("[[4096,4096],[4096,4096]]", "[[16,4096],[4096,4096]]"), "memory-bound-gemm"));
}

/// What the roofline adds to a big trace's op table and kernel table: a real fixture (`FIXTURE`,
/// default the vLLM one: 3,793 ops with shapes per copy) inflated to `MB` (default 200) MB.
/// Prints figures; run with
/// `cargo test --release -p kinetoscope --test all roofline:: -- --ignored --nocapture`.
#[test]
#[ignore = "benchmark: prints figures"]
fn bench_work_index() {
    use std::time::Instant;
    let mb: u64 = std::env::var("MB").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let fixture = std::env::var("FIXTURE").unwrap_or_else(|_| "tracelens__vllm_decode_full__graph_capture_rank_0.pt.trace.json.gz".into());
    let input = common::json_bytes(&common::real(&fixture));
    let mut big = Vec::new();
    kinetoscope::synth::inflate::inflate(&input, mb * 1_000_000, &mut big).unwrap();
    let (engine, _) = common::load_bytes("big.json", big);
    let session = engine.session().unwrap().clone();
    let trace = session.trace();
    let t = Instant::now();
    let index = kinetoscope::analysis::ops::OpIndex::new(trace);
    let build = t.elapsed();
    let t = Instant::now();
    let table = index.table(trace, &OpOptions::default());
    let first = t.elapsed();
    let t = Instant::now();
    let _ = index.table(trace, &OpOptions::default());
    let again = t.elapsed();
    let with_flops = table.rows.iter().filter(|r| r.flops.is_some() || r.bytes.is_some()).count();
    let t = Instant::now();
    let work = kinetoscope::analysis::work::WorkIndex::new(trace, None);
    let work_ms = t.elapsed();
    println!(
        "{fixture} to {mb} MB, {} ops: op index {build:.2?}; first table (with the work estimates) {first:.2?}, next {again:.2?} \
         (the estimates' cost is the difference); rows with work {with_flops}/{}; work index over {} kernels {work_ms:.2?}",
        index.len(),
        table.rows.len(),
        work.len()
    );
}
