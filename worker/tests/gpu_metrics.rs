//! GPU metrics (`analysis::gpu`): tb_plugin's oracle numbers per device on every real fixture,
//! hand-built traces with known answers (stream overlap, SM efficiency below and above one
//! block per SM, occupancy weighting, range clipping, the step window), time series, a
//! brute-force cross-check on random windows, and the text / JSON rendering.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::gpu::{
    gpu_metrics, gpu_timeseries, metrics_window, GpuIndex, GpuMetrics,
};
use kinetoscope::analysis::kernels::kernel_table;
use kinetoscope::model::{CatClass, Trace};
use kinetoscope::report::gpu::{gpu_text, gpus_json};
use serde_json::Value;


/// Real fixtures for which tb_plugin computed GPU metrics.
const WITH_GPU_METRICS: [&str; 10] = [
    "gpumodel__trace.json",
    "hta__benchmark_result_493459_1694039959_trace.json.gz",
    "hta__df_index_resolver.json.gz",
    "hta__triton_example.json.gz",
    "param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json",
    "param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json",
    "param__dlrm_kineto__worker2_step_12.1694128201554.pt.trace.json",
    "param__dlrm_kineto__worker3_step_12.1694128201557.pt.trace.json",
    "partx__profiler_trace_single_sample.json",
    "qatut__dcb0aa1a78e7_4399.1752181589589738346.pt.trace.json",
];

fn pp(ours: Option<f64>, theirs: &Value) -> f64 {
    (ours.unwrap_or(f64::NAN) - theirs.as_f64().unwrap()).abs() * 100.0
}

/// Utilization, SM efficiency, occupancy within 0.5 percentage points on every device (the
/// issue's bar; measured: 2e-6 pp at worst, partx occupancy, float noise), same devices.
#[test]
fn oracle_gpu_metrics() {
    let mut worst = [0.0f64; 3];
    for name in WITH_GPU_METRICS {
        let o = common::oracle(name);
        let per_gpu = o["gpu_metrics"]["per_gpu"].as_object().unwrap();
        let (engine, _) = common::load(&common::real(name));
        let ours = gpu_metrics(engine.trace().unwrap(), None);
        let devices: Vec<String> = ours.iter().map(|m| m.device.to_string()).collect();
        assert_eq!(
            devices,
            per_gpu.keys().cloned().collect::<Vec<_>>(),
            "{name}: devices"
        );
        for m in &ours {
            let g = &per_gpu[&m.device.to_string()];
            let d = [
                pp(Some(m.utilization), &g["gpu_utilization"]),
                pp(m.sm_efficiency, &g["est_sm_efficiency"]),
                // Occupancy is in percent on both sides already.
                pp(
                    m.occupancy_pct.map(|v| v / 100.0),
                    &(g["est_achieved_occupancy_pct"].as_f64().unwrap() / 100.0).into(),
                ),
            ];
            for (k, what) in ["utilization", "SM efficiency", "occupancy"]
                .iter()
                .enumerate()
            {
                assert!(
                    d[k] <= 0.5,
                    "{name} device {}: {what} off by {} pp",
                    m.device,
                    d[k]
                );
                worst[k] = worst[k].max(d[k]);
            }
        }
    }
    println!(
        "worst pp: utilization {:.1e}, SM efficiency {:.1e}, occupancy {:.1e}",
        worst[0], worst[1], worst[2]
    );
    assert!(worst.iter().all(|&w| w < 1e-4), "{worst:?}");
}

/// tb_plugin's allow-list (PyProf's), only to show where our tensor-core shares differ.
fn tb_allow_listed(name: &str) -> bool {
    const LIST: [&str; 18] = [
        "h884",
        "s884",
        "h1688",
        "s1688",
        "hmma",
        "i8816",
        "16816",
        "dgrad_1x1_stride_2x2",
        "first_layer_wgrad_kernel",
        "conv1x1",
        "conv2d_c1_k1",
        "direct_group",
        "xmma_implicit_gemm",
        "xmma_sparse_conv",
        "xmma_warp_specialized_implicit_gemm",
        "xmma_gemm",
        "xmma_sparse_gemm",
        "c1688",
    ];
    LIST.iter().any(|p| name.contains(p))
}

/// Tensor-core share of the first device's kernel time in the step window, recounted from the
/// trace JSON without the engine: the `kernel` events of that device clipped to the window, the
/// tensor-core ones named by tb_plugin's list plus the two families our table adds.
fn json_tensor_core_share(name: &str, device: i64, (w0, w1): (i64, i64), origin_ns: i64) -> (f64, usize) {
    let raw: Value = serde_json::from_slice(&common::json_bytes(&common::real(name))).unwrap();
    let events = raw["traceEvents"].as_array().unwrap();
    let (mut tc, mut all, mut tc_kernels) = (0.0f64, 0.0f64, 0usize);
    let (w0, w1) = ((w0 + origin_ns) as f64 / 1000.0, (w1 + origin_ns) as f64 / 1000.0);
    for e in events {
        let cat = e["cat"].as_str().unwrap_or("");
        if e["ph"] != "X" || !cat.eq_ignore_ascii_case("kernel") {
            continue;
        }
        let dev = e["args"]["device"].as_i64().or_else(|| e["pid"].as_i64()).unwrap_or(-1);
        if dev != device {
            continue;
        }
        let ts = e["ts"].as_f64().unwrap();
        let dur = e["dur"].as_f64().unwrap_or(0.0);
        let clipped = (ts + dur).min(w1) - ts.max(w0);
        if clipped <= 0.0 {
            continue;
        }
        let name = e["name"].as_str().unwrap();
        all += clipped;
        if tb_allow_listed(name) || name.contains("xmma_fprop") || name.contains("wmma_tensorop") {
            tc += clipped;
            tc_kernels += 1;
        }
    }
    assert!(all > 0.0, "{name}: no kernel time in the window");
    (tc / all, tc_kernels)
}

/// Tensor-core share of kernel time, pinned on every fixture and equal to the recount from the
/// trace JSON ([`json_tensor_core_share`]). tb_plugin reports none per device
/// (`tc_kernel_time_ratio` is null in every oracle); its whole-trace `tc_used_ratio` over our
/// kernel table is checked below. Where ours differs from tb_plugin's list:
/// - partx and hta benchmark: our patterns also count the Ampere `xmma_fprop` convolutions and
///   CUTLASS `wmma_tensorop` GEMMs (see `analysis::tensor_cores`). With tb_plugin's list on
///   our kernel table we get its whole-trace `tc_used_ratio` exactly, so only the list differs.
/// - qatut: tb_plugin says 1.0 inside its window, but 24 of the 48 kernels there
///   (elementwise, softmax, layer norm: 40% of kernel time) match none of its patterns; its
///   own whole-trace ratio over the same kernels is 0.5959..., which is our number.
///
/// gpumodel's 5 kernels are all tensor-core GEMMs (1.0); the dlrm ranks, df_index and the
/// Triton example run none (0.0, with no tensor-core kernel in their JSON).
#[test]
fn oracle_tensor_core_share() {
    let pinned: [(&str, f64); 10] = [
        ("gpumodel__trace.json", 1.0),
        ("hta__benchmark_result_493459_1694039959_trace.json.gz", 0.168_344_519),
        ("hta__df_index_resolver.json.gz", 0.0),
        ("hta__triton_example.json.gz", 0.0),
        ("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json", 0.0),
        ("param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json", 0.0),
        ("param__dlrm_kineto__worker2_step_12.1694128201554.pt.trace.json", 0.0),
        ("param__dlrm_kineto__worker3_step_12.1694128201557.pt.trace.json", 0.0),
        ("partx__profiler_trace_single_sample.json", 0.121_840_783),
        ("qatut__dcb0aa1a78e7_4399.1752181589589738346.pt.trace.json", 0.595_907_928),
    ];
    assert_eq!(pinned.map(|p| p.0), WITH_GPU_METRICS);
    for (name, value) in pinned {
        let o = common::oracle(name);
        let (engine, _) = common::load(&common::real(name));
        let trace = engine.trace().unwrap();
        let ours = gpu_metrics(trace, None);
        let share = ours[0].tensor_core_share.unwrap();
        assert!((share - value).abs() < 1e-8, "{name}: pinned {value}, got {share}");
        let (recount, tc_kernels) =
            json_tensor_core_share(name, ours[0].device, ours[0].window, trace.origin_ns);
        assert!((share - recount).abs() < 1e-6, "{name}: {share} vs {recount} recounted from the JSON");
        assert_eq!(tc_kernels == 0, value == 0.0, "{name}: {tc_kernels} tensor-core kernels in the JSON");
        let table = kernel_table(trace, None);
        let tb_ns: i64 = table
            .rows
            .iter()
            .filter(|r| tb_allow_listed(&r.name))
            .map(|r| r.total_ns)
            .sum();
        let tb_ratio = tb_ns as f64 / table.total_ns as f64;
        assert!(
            (tb_ratio - o["tc_used_ratio"].as_f64().unwrap()).abs() < 1e-9,
            "{name}: tb list on our table"
        );
    }
}

/// tb_plugin's window: gpumodel has no ProfilerStep, so it is one step from the first host op
/// to the end of the GEMMs it launched (81.003 ms; the whole trace would give 93.2% instead
/// of 97.0%). dlrm worker1 starts 1.3 ms after its step's CPU start, when the kernels launched
/// before the step are done (a CPU-span window would give 61.8% instead of 65.1%).
#[test]
fn oracle_windows() {
    for (name, key) in [
        ("gpumodel__trace.json", "0"),
        (
            "param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json",
            "1",
        ),
    ] {
        let o = common::oracle(name);
        let (engine, _) = common::load(&common::real(name));
        let trace = engine.trace().unwrap();
        let (w0, w1) = metrics_window(trace);
        let steps = o["steps"]["final"].as_array().unwrap();
        let origin_us = trace.origin_ns as f64 / 1000.0;
        let tb = (
            steps[0]["start"].as_f64().unwrap() - origin_us,
            steps[steps.len() - 1]["end"].as_f64().unwrap() - origin_us,
        );
        assert!(
            (w0 as f64 / 1000.0 - tb.0).abs() < 0.01 && (w1 as f64 / 1000.0 - tb.1).abs() < 0.01,
            "{name}: {w0} {w1} vs {tb:?}"
        );
        assert!(o["gpu_metrics"]["per_gpu"][key].is_object());
    }
}

// ---------------------------------------------------------------------------------------
// Hand-built: device 0 with two streams, device 3 (pid only, no args). Origin 0 (a host op
// [0, 1000] µs, no steps, no launch links: W = [0, 1000) µs).
//   A stream 7 [100, 300) blocks/SM 0.5 occ 50 | B stream 8 [200, 400) blocks/SM 2 occ 20
//   C stream 7 [600, 700) blocks/SM 0.25 occ 10, tensor cores | Z zero length | a memcpy.

const HAND: &str = r#"{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"main","pid":10,"tid":1,"ts":0,"dur":1000},
{"ph":"X","cat":"kernel","name":"elementwise_a","pid":0,"tid":7,"ts":100,"dur":200,"args":{"device":0,"blocks per SM":0.5,"est. achieved occupancy %":50}},
{"ph":"X","cat":"kernel","name":"reduce_b","pid":0,"tid":8,"ts":200,"dur":200,"args":{"device":0,"blocks per SM":2.0,"est. achieved occupancy %":20}},
{"ph":"X","cat":"kernel","name":"volta_h884gemm_c","pid":0,"tid":7,"ts":600,"dur":100,"args":{"device":0,"blocks per SM":0.25,"est. achieved occupancy %":10}},
{"ph":"X","cat":"kernel","name":"zero","pid":0,"tid":9,"ts":500,"dur":0,"args":{"device":0,"blocks per SM":5,"est. achieved occupancy %":90}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":7,"ts":450,"dur":100,"args":{"device":0}},
{"ph":"X","cat":"kernel","name":"dev3","pid":3,"tid":7,"ts":0,"dur":500}
]}"#;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn hand() -> (kinetoscope::engine::Engine, Vec<GpuMetrics>) {
    let (engine, _) = common::load_str(HAND);
    let m = gpu_metrics(engine.trace().unwrap(), None);
    (engine, m)
}

#[test]
fn hand_built_whole_window() {
    let (engine, m) = hand();
    assert_eq!(metrics_window(engine.trace().unwrap()), (0, 1_000_000));
    assert_eq!(
        m.iter().map(|d| d.device).collect::<Vec<_>>(),
        [0, 3],
        "device arg, else pid"
    );
    let d0 = &m[0];
    // Union [100, 400) + [600, 700) = 400 of 1000 (the memcpy is not a kernel).
    assert_eq!(
        (d0.busy_ns, d0.kernel_ns, d0.kernels),
        (400_000, 500_000, 4)
    );
    assert!(close(d0.utilization, 0.4));
    // [100,200) 0.5 + [200,300) min(1, 2.5) + [300,400) min(1, 2) + [600,700) 0.25 = 275.
    assert!(close(d0.sm_efficiency.unwrap(), 0.275));
    // (50*200 + 20*200 + 10*100) / 500.
    assert!(close(d0.occupancy_pct.unwrap(), 30.0));
    assert!(close(d0.tensor_core_share.unwrap(), 0.2));
    let d3 = &m[1];
    assert!(close(d3.utilization, 0.5));
    assert_eq!(
        (d3.sm_efficiency, d3.occupancy_pct, d3.tensor_core_share),
        (None, None, Some(0.0)),
        "no args"
    );
}

/// A range is the window; kernels are clipped to it.
#[test]
fn hand_built_range_clips() {
    let (engine, _) = hand();
    let m = gpu_metrics(engine.trace().unwrap(), Some((250_000, 650_000)));
    let d0 = &m[0];
    assert_eq!(d0.window, (250_000, 650_000));
    // [250, 400) + [600, 650) = 200 of 400.
    assert!(close(d0.utilization, 0.5));
    // [250,300) 1 + [300,400) 1 + [600,650) 0.25 = 162.5 of 400.
    assert!(close(d0.sm_efficiency.unwrap(), 0.406_25));
    // (50*50 + 20*150 + 10*50) / 250.
    assert!(close(d0.occupancy_pct.unwrap(), 24.0));
    assert!(close(d0.tensor_core_share.unwrap(), 0.2));
    assert!(close(m[1].utilization, 250.0 / 400.0));
    let empty = gpu_metrics(engine.trace().unwrap(), Some((800_000, 900_000)));
    let e = &empty[0];
    assert_eq!(
        (
            e.utilization,
            e.sm_efficiency,
            e.occupancy_pct,
            e.tensor_core_share
        ),
        (0.0, Some(0.0), None, None)
    );
}

/// A bucket as `start utilization sm_efficiency occupancy`, rounded for comparison.
fn sample(s: &kinetoscope::analysis::gpu::GpuSample) -> String {
    let occ = s.occupancy_pct.map(|o| (o * 1e6).round() / 1e6);
    format!(
        "{} {:.4} {:.4} {occ:?}",
        s.start_ns,
        s.utilization,
        s.sm_efficiency.unwrap_or(-1.0)
    )
}

#[test]
fn hand_built_timeseries() {
    let (engine, _) = hand();
    let trace = engine.trace().unwrap();
    let got: Vec<String> = gpu_timeseries(trace, 0, 250_000, None)
        .iter()
        .map(sample)
        .collect();
    let want = [
        "0 0.6000 0.4000 Some(42.5)",
        "250000 0.6000 0.6000 Some(27.5)",
        "500000 0.4000 0.1000 Some(10.0)",
        "750000 0.0000 0.0000 None",
    ];
    assert_eq!(got, want);
    // The last bucket is cut at the range end and divided by its own length.
    let short = gpu_timeseries(trace, 0, 400_000, Some((0, 1_000_000)));
    assert_eq!(
        short
            .iter()
            .map(|s| (s.start_ns, s.end_ns))
            .collect::<Vec<_>>(),
        [(0, 400_000), (400_000, 800_000), (800_000, 1_000_000)]
    );
    assert!(close(short[2].utilization, 0.0) && close(short[1].utilization, 0.25));
    assert!(
        gpu_timeseries(trace, 42, 1000, None).is_empty(),
        "unknown device"
    );
    assert!(gpu_timeseries(trace, 0, 0, None).is_empty(), "bucket 0");
}

/// The step window: ProfilerStep#1 [100, 200] launches K1 [150, 400); K0 [90, 130), launched
/// before the step, pushes the start to 130; ProfilerStep#2 [500, 900] launches nothing and
/// is the incomplete tail, left out. W = [130, 400).
#[test]
fn hand_built_step_window() {
    let text = r#"{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"init","pid":1,"tid":1,"ts":0,"dur":5},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100,"dur":100},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":105,"dur":20},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":110,"dur":10,"args":{"correlation":2}},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":500,"dur":400},
{"ph":"X","cat":"kernel","name":"k0","pid":0,"tid":7,"ts":90,"dur":40,"args":{"correlation":1,"device":0}},
{"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":150,"dur":250,"args":{"correlation":2,"device":0}}
]}"#;
    let (engine, _) = common::load_str(text);
    let trace = engine.trace().unwrap();
    assert_eq!(metrics_window(trace), (130_000, 400_000));
    let m = gpu_metrics(trace, None);
    assert!(close(m[0].utilization, 250.0 / 270.0));
}

// ---------------------------------------------------------------------------------------
// Cross-checks on a real trace (19 370 kernels, 4 streams).

struct K {
    start: i64,
    end: i64,
    blocks: f64,
    occ: Option<f64>,
}

fn kernels_of(trace: &Trace) -> Vec<K> {
    let s = &trace.slices;
    (0..s.len())
        .filter(|&i| trace.class(s.cat[i]) == CatClass::Kernel)
        .map(|i| {
            let args: Value = serde_json::from_str(&trace.args_text(s.args[i])).unwrap();
            K {
                start: s.start_ns[i],
                end: s.end_ns(i),
                blocks: args["blocks per SM"].as_f64().unwrap_or(0.0),
                occ: args["est. achieved occupancy %"].as_f64(),
            }
        })
        .collect()
}

/// Straightforward per-window computation (tb_plugin's algorithm on clipped kernels).
fn brute(ks: &[K], (w0, w1): (i64, i64)) -> (f64, f64, Option<f64>) {
    let clipped: Vec<(i64, i64, &K)> = ks
        .iter()
        .map(|k| (k.start.max(w0), k.end.min(w1), k))
        .filter(|c| c.1 > c.0)
        .collect();
    let mut iv: Vec<(i64, i64)> = clipped.iter().map(|c| (c.0, c.1)).collect();
    iv.sort_unstable();
    let (mut busy, mut cur) = (0i64, None::<(i64, i64)>);
    for (a, b) in iv {
        cur = match cur {
            Some((ca, cb)) if a <= cb => Some((ca, cb.max(b))),
            Some((ca, cb)) => {
                busy += cb - ca;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    busy += cur.map_or(0, |(a, b)| b - a);
    let mut ends: Vec<(i64, f64)> = clipped
        .iter()
        .filter(|c| c.2.blocks > 0.0)
        .flat_map(|c| [(c.0, c.2.blocks), (c.1, -c.2.blocks)])
        .collect();
    ends.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let (mut sm, mut level) = (0.0, 0.0f64);
    for w in 0..ends.len() {
        level += ends[w].1;
        if let Some(next) = ends.get(w + 1) {
            sm += level.clamp(0.0, 1.0) * (next.0 - ends[w].0) as f64;
        }
    }
    let occ_ns: i64 = clipped
        .iter()
        .filter(|c| c.2.occ.is_some())
        .map(|c| c.1 - c.0)
        .sum();
    let occ: f64 = clipped
        .iter()
        .filter_map(|c| Some(c.2.occ? * (c.1 - c.0) as f64))
        .sum();
    let len = (w1 - w0) as f64;
    (
        busy as f64 / len,
        sm / len,
        (occ_ns > 0).then(|| occ / occ_ns as f64),
    )
}

#[test]
fn random_windows_match_brute_force() {
    let (engine, _) = common::load(&common::real("hta__df_index_resolver.json.gz"));
    let trace = engine.trace().unwrap();
    let ks = kernels_of(trace);
    let index = GpuIndex::new(trace);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: i64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as i64).rem_euclid(n)
    };
    for _ in 0..60 {
        let w0 = next(trace.end_ns);
        let w1 = w0 + 1 + next(trace.end_ns / 8);
        let m = &index.metrics((w0, w1))[0];
        let (util, sm, occ) = brute(&ks, (w0, w1));
        assert!(
            (m.utilization - util).abs() < 1e-9,
            "util {w0}..{w1}: {} vs {util}",
            m.utilization
        );
        assert!(
            (m.sm_efficiency.unwrap() - sm).abs() < 1e-9,
            "sm {w0}..{w1}: {:?} vs {sm}",
            m.sm_efficiency
        );
        assert!(
            m.occupancy_pct
                .zip(occ)
                .is_none_or(|(a, b)| (a - b).abs() < 1e-6)
                && m.occupancy_pct.is_some() == occ.is_some(),
            "occ {w0}..{w1}"
        );
    }
    // Buckets add up to the whole: Σ utilization x bucket length = busy time.
    let series = index.timeseries(1, (0, trace.end_ns), 1_000_000);
    let busy: f64 = series
        .iter()
        .map(|s| s.utilization * (s.end_ns - s.start_ns) as f64)
        .sum();
    assert!(
        (busy - index.metrics((0, trace.end_ns))[0].busy_ns as f64).abs() < 1.0,
        "{busy}"
    );
}

#[test]
fn text_and_json() {
    let (_, m) = hand();
    let text = gpu_text(&m);
    assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
    assert!(
        text.contains("window 0.000us .. 1.000ms, 1.000ms"),
        "{text}"
    );
    let row: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with("0 "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        row,
        ["0", "40.00", "%", "27.50", "%", "30.00", "%", "20.00", "%", "4"]
    );
    let json = gpus_json(&m);
    assert_eq!(json[0]["device"], 0);
    for (key, value) in [
        ("utilization_pct", 40.0),
        ("sm_efficiency_pct", 27.5),
        ("achieved_occupancy_pct", 30.0),
        ("tensor_core_pct", 20.0),
    ] {
        assert!(
            (json[0][key].as_f64().unwrap() - value).abs() < 1e-9,
            "{key}"
        );
    }
    assert_eq!(
        (
            json[1]["sm_efficiency_pct"].clone(),
            json[1]["achieved_occupancy_pct"].clone()
        ),
        (Value::Null, Value::Null)
    );
    let (engine, _) = common::load(&common::real("gpumodel__trace.json"));
    let text = gpu_text(&gpu_metrics(engine.trace().unwrap(), None));
    assert!(text.contains("97.02 %"), "{text}");
}
