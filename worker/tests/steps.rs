//! Steps and breakdown (`analysis::steps`, `analysis::breakdown`, `report::steps`): step lists
//! against tb_plugin's oracle, the breakdown machinery against its numbers, our deliberate
//! differences pinned, and hand-built traces for the priority rule, GPU-side duplicates,
//! step spans, the incomplete tail and the statistics.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::breakdown::{Category, Roles, Rules, CATEGORIES};
use kinetoscope::analysis::steps::{analyze, profiler_steps, GpuSource, StepSpan, Steps};
use kinetoscope::engine::Engine;
use kinetoscope::model::Trace;
use kinetoscope::report::steps::{step_stats_json, steps_json, steps_text};
use serde_json::Value;



/// An oracle time (absolute µs, maybe fractional) as ns from the trace origin, exactly:
/// `x * 1000.0` in f64 loses up to ~100 ns at 1.7e15 µs.
fn ns(trace: &Trace, v: &Value) -> i64 {
    let f = v.as_f64().unwrap();
    (f.trunc() as i64) * 1000 + ((f - f.trunc()) * 1000.0).round() as i64 - trace.origin_ns
}

/// tb_plugin's per-step breakdown as ns, in our category order.
fn tb_breakdown(step: &Value) -> [i64; 8] {
    let labels = CATEGORIES.map(Category::label);
    labels.map(|l| (step[l].as_f64().unwrap() * 1000.0).round() as i64)
}

fn close(a: i64, b: i64, tol: i64) -> bool {
    (a - b).abs() <= tol
}

const FIXTURES_WITH_STEPS: [&str; 7] = [
    "hta__df_index_resolver.json.gz",
    "hta__triton_example.json.gz",
    "param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json",
    "param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json",
    "param__dlrm_kineto__worker2_step_12.1694128201554.pt.trace.json",
    "param__dlrm_kineto__worker3_step_12.1694128201557.pt.trace.json",
    "qatut__dcb0aa1a78e7_4399.1752181589589738346.pt.trace.json",
];

/// Fixtures with steps but no tb_plugin oracle (added after the plugin's removal); their steps
/// are recounted from the JSON in the test.
const STEPS_WITHOUT_ORACLE: [&str; 5] = [
    "hta__mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "hta__trace_filter__sampled_rank-0.json.gz",
    "hta__trace_filter__sampled_rank-1.json.gz",
    "tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz",
    "tracelens__mi300__gaunernst_bert-small-uncased__1016001.json.gz",
];

/// Each step's number and duration in µs read from the raw JSON (serde_json, not our
/// parser): the host `user_annotation` events named `ProfilerStep#N`, in number order.
fn steps_in_json(path: &std::path::Path) -> Vec<(u64, f64)> {
    let raw: Value = serde_json::from_slice(&common::json_bytes(path)).unwrap();
    let mut steps: Vec<(u64, f64)> = raw["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "user_annotation")
        .filter_map(|e| {
            let n = e["name"].as_str()?.strip_prefix("ProfilerStep#")?;
            Some((n.parse().ok()?, e["dur"].as_f64()?))
        })
        .collect();
    steps.sort_by_key(|s| s.0);
    steps
}

#[test]
fn steps_without_an_oracle_equal_independent_counts() {
    for name in STEPS_WITHOUT_ORACLE {
        let expected = steps_in_json(&common::real(name));
        assert!(
            !expected.is_empty(),
            "{name}: the JSON has ProfilerStep#N annotations"
        );
        let engine = common::load_real(name);
        let got: Vec<(u64, f64)> = profiler_steps(engine.trace().unwrap())
            .iter()
            .map(|s| (s.number, (s.end_ns - s.start_ns) as f64 / 1000.0))
            .collect();
        assert_eq!(got.len(), expected.len(), "{name}: {got:?}");
        for ((n, d), (en, ed)) in got.iter().zip(&expected) {
            assert_eq!(n, en, "{name}");
            assert!((d - ed).abs() < 0.002, "{name} step {n}: {d} vs {ed}");
        }
    }
}

#[test]
fn every_fixture_with_steps_is_checked() {
    for path in common::real_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (engine, result) = common::load_bytes(&name, common::json_bytes(&path));
        if result.is_err() {
            continue;
        }
        let has_steps = !profiler_steps(engine.trace().unwrap()).is_empty();
        // resnet50 has 6 steps but tb_plugin failed on it (2021 format): checked below.
        let listed = FIXTURES_WITH_STEPS.contains(&name.as_str())
            || STEPS_WITHOUT_ORACLE.contains(&name.as_str())
            || name.starts_with("kineto__resnet50");
        assert_eq!(has_steps, listed, "{name}");
    }
}

#[test]
fn step_lists_equal_tb_plugin() {
    for name in FIXTURES_WITH_STEPS {
        let engine = common::load_real(name);
        let t = engine.trace().unwrap();
        let o = common::oracle(name);
        assert_eq!(o["steps"]["from_profiler_step_events"], true, "{name}");
        assert_eq!(o["steps"]["trimmed_tail_steps"], 0, "{name}");
        let ours = analyze(t, None);
        let finals = o["steps"]["final"].as_array().unwrap();
        assert_eq!(ours.steps.len(), finals.len(), "{name}");
        for (k, (s, f)) in ours.steps.iter().zip(finals).enumerate() {
            let host = &o["steps"]["host"][k];
            assert_eq!(s.number.to_string(), f["name"].as_str().unwrap(), "{name}");
            assert!(!s.incomplete, "{name} #{}", s.number);
            // Float µs traces (triton) carry binary noise in the oracle: 1 ns.
            let same = |(a, b): (i64, i64), v: &Value| {
                close(a, ns(t, &v["start"]), 1) && close(b, ns(t, &v["end"]), 1)
            };
            assert!(same((s.start_ns, s.end_ns), f), "{name} #{} span", s.number);
            assert!(same((s.cpu_start_ns, s.cpu_end_ns), host), "{name} cpu");
            let dev = &o["steps"]["device_span_per_step"][k];
            if name.starts_with("hta__triton") {
                // Deliberate: the step's only kernel is launched by cuLaunchKernel (cuda_driver),
                // which tb_plugin ignores; we link it (docs/definitions.md §6). It lies inside the
                // CPU span, so the step span is the same.
                assert!(dev.is_null());
                let got = (s.gpu_source, s.device_activities, s.gpu_dur_ns());
                assert_eq!(got, (GpuSource::Launches, 1, 1760));
                continue;
            }
            assert!(same(s.gpu.unwrap(), dev), "{name} gpu");
            let matched = o["steps"]["matched_device_ops"][k].as_u64();
            assert_eq!(Some(u64::from(s.device_activities)), matched, "{name}");
        }
    }
}

#[test]
fn resnet50_steps_2021_operator_category() {
    // tb_plugin failed on this file; it still has six `Operator` ProfilerStep#5..10.
    let engine = common::load_real("kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz");
    let steps = analyze(engine.trace().unwrap(), None);
    let numbers: Vec<u64> = steps.steps.iter().map(|s| s.number).collect();
    assert_eq!(numbers, [5, 6, 7, 8, 9, 10]);
    assert!(steps
        .steps
        .iter()
        .all(|s| s.gpu_source == GpuSource::Launches && s.breakdown.total() == s.dur_ns()));
}

/// The breakdown machinery under tb_plugin's rules equals its numbers on every oracle step,
/// including the whole-trace pseudo-step "0" it makes for traces without ProfilerStep.
#[test]
fn breakdown_with_tb_rules_equals_tb_plugin() {
    let mut checked = 0;
    for path in common::real_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(o) = common::oracle_if_any(&name) else {
            continue;
        };
        if o["status"] != "ok" || o["steps"]["final"][0].is_null() {
            continue;
        }
        let engine = common::load_real(&name);
        let t = engine.trace().unwrap();
        let roles = Roles::with_rules(t, Rules::TbPlugin);
        for (k, f) in o["steps"]["final"].as_array().unwrap().iter().enumerate() {
            let b = roles.breakdown(ns(t, &f["start"]), ns(t, &f["end"]));
            let tb = tb_breakdown(&o["step_breakdown"]["per_step"][k]);
            // tb_plugin sums float µs: up to ~20 ns of noise on partx's 1 s step.
            let ok = b.ns.iter().zip(tb).all(|(&x, y)| close(x, y, 50));
            assert!(ok, "{name} step {k}: ours {:?} tb {tb:?}", b.ns);
            checked += 1;
        }
    }
    assert_eq!(checked, 16);
}

/// Our rules differ from tb_plugin's on purpose in three places; pinned here.
#[test]
fn breakdown_deliberate_differences_pinned() {
    let check = |name: &str, step: usize, ours: [i64; 8]| {
        let engine = common::load_real(name);
        let t = engine.trace().unwrap();
        let o = common::oracle(name);
        let s = &analyze(t, None).steps[step];
        assert_eq!(s.breakdown.ns, ours, "{name}");
        let tb = tb_breakdown(&o["step_breakdown"]["per_step"][step]);
        // Copies, sets, data loading and uncovered time agree exactly; what moves between
        // Kernel, Communication, Runtime and CPU Exec keeps their sum.
        for c in [Category::Memcpy, Category::DataLoader, Category::Other] {
            assert_eq!(s.breakdown.get(c), tb[c as usize], "{name} {c:?}");
        }
        let moved = [
            Category::Kernel,
            Category::Communication,
            Category::Runtime,
            Category::CpuExec,
        ];
        let sum = |v: &[i64; 8]| moved.iter().map(|&c| v[c as usize]).sum::<i64>();
        assert_eq!(sum(&s.breakdown.ns), sum(&tb), "{name}");
        tb
    };
    let us = |v: [i64; 8]| v.map(|x| x * 1000);
    // 1. NCCL kernels are Communication by name. tb_plugin tags a kernel only when its
    //    External id is that of an `nccl:*` op, which never happens here: the ncclKernel_*
    //    time (mostly waiting for the other ranks) shows as Kernel in tb_plugin (6.571 ms).
    let dlrm = "param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json";
    let tb = check(dlrm, 0, us([1_034, 19, 0, 5_860, 1_081, 1_090, 5_231, 140]));
    assert_eq!(tb[Category::Kernel as usize], 6_571_000);
    // 2. Host collectives by name too (c10d::allreduce_, record_param_comms, ...), not only
    //    nccl:all_reduce: their launch calls and CPU time count as Communication.
    let ours = us([124_235, 4_401, 176, 77_306, 19_238, 0, 108_869, 11_545]);
    let tb = check("hta__df_index_resolver.json.gz", 0, ours);
    assert_eq!(tb[Category::Communication as usize], 10_342_000);
    // 3. cuLaunchKernel (cuda_driver) is a launch call: Runtime 62.854 us vs tb's 16.846 us.
    let tb = check(
        "hta__triton_example.json.gz",
        0,
        [1_760, 0, 0, 0, 62_854, 0, 1_340_787, 13_334_910_404],
    );
    assert_eq!(tb[Category::Runtime as usize], 16_846);
}

// -------------------------------------------------------------------------------------------
// Hand-built traces. Times in µs; pid 1 = host, pid 0 = GPU (tid = stream).

fn ev(cat: &str, name: &str, pid: u32, tid: u32, ts: f64, dur: f64, args: &str) -> String {
    format!(
        r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},"ts":{ts},"dur":{dur},"args":{{{args}}}}}"#
    )
}

/// A host event on thread 1.
fn host(cat: &str, name: &str, ts: f64, dur: f64) -> String {
    ev(cat, name, 1, 1, ts, dur, "")
}

/// `ProfilerStep#n` on thread 1.
fn step(n: usize, ts: f64, dur: f64) -> String {
    host("user_annotation", &format!("ProfilerStep#{n}"), ts, dur)
}

/// A launch call with correlation `c` on host thread `tid`.
fn launch(name: &str, tid: u32, ts: f64, dur: f64, c: u32) -> String {
    ev(
        "cuda_runtime",
        name,
        1,
        tid,
        ts,
        dur,
        &format!(r#""correlation":{c}"#),
    )
}

/// A device event on `stream`, linked by correlation `c` when given.
fn gpu(cat: &str, name: &str, stream: u32, ts: f64, dur: f64, c: Option<u32>) -> String {
    let args = c.map_or(String::new(), |c| format!(r#""correlation":{c}"#));
    ev(cat, name, 0, stream, ts, dur, &args)
}

fn trace_of(events: &[String]) -> Engine {
    let text = format!("{{\"traceEvents\":[\n{}\n]}}", events.join(",\n"));
    common::load_str(&text).0
}

const DATALOADER: &str = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";

/// One step [100, 200) exercising every category and overlap:
/// - DataLoader [100, 120); op aten::foo [120, 190) with launch calls [130, 135) and [140, 145);
///   nccl:all_reduce [192, 196);
/// - GPU: kernel [150, 170) (corr 1), memcpy [160, 180) (corr 2, overlaps the kernel),
///   memset [185, 188) (no launch), ncclKernel [195, 197) (no launch).
fn priority_events() -> Vec<String> {
    vec![
        step(1, 100.0, 100.0),
        host("user_annotation", DATALOADER, 100.0, 20.0),
        host("cpu_op", "aten::foo", 120.0, 70.0),
        launch("cudaLaunchKernel", 1, 130.0, 5.0, 1),
        launch("cudaMemcpyAsync", 1, 140.0, 5.0, 2),
        host("cpu_op", "nccl:all_reduce", 192.0, 4.0),
        gpu("kernel", "gemm", 7, 150.0, 20.0, Some(1)),
        gpu("gpu_memcpy", "Memcpy HtoD", 7, 160.0, 20.0, Some(2)),
        gpu("gpu_memset", "Memset", 7, 185.0, 3.0, None),
        gpu(
            "kernel",
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
            7,
            195.0,
            2.0,
            None,
        ),
    ]
}

#[test]
fn priority_rule_each_category_takes_only_time_not_yet_taken() {
    let engine = trace_of(&priority_events());
    let t = engine.trace().unwrap();
    let steps = analyze(t, None);
    assert_eq!(steps.steps.len(), 1);
    let s = &steps.steps[0];
    let us = |v: i64| (v - 100) * 1000; // the origin is the first event, at 100 µs
    assert_eq!((s.cpu_start_ns, s.cpu_end_ns), (us(100), us(200)));
    // GPU span: the two launched activities only (memset and ncclKernel have no launch).
    assert_eq!(s.gpu, Some((us(150), us(180))));
    assert_eq!((s.start_ns, s.end_ns), (s.cpu_start_ns, s.cpu_end_ns));
    let len = |v: i64| v * 1000;
    let expected = [
        len(20), // Kernel [150, 170)
        len(10), // Memcpy [170, 180): [160, 170) was taken by the kernel
        len(3),  // Memset [185, 188)
        len(5),  // Communication [192, 197): op [192, 196) ∪ ncclKernel [195, 197)
        len(10), // Runtime [130, 135) + [140, 145)
        len(20), // DataLoader [100, 120)
        len(27), // CPU Exec: aten::foo 70 - runtime 10 - kernel+memcpy 30 - memset 3
        len(5),  // Other: [190, 192) + [197, 200)
    ];
    assert_eq!(s.breakdown.ns, expected);
    assert_eq!(s.breakdown.total(), s.dur_ns());
    // Any span works, here one cutting through the kernel and the memcpy.
    let b = Roles::new(t).breakdown(us(165), us(175));
    assert_eq!(b.ns, [len(5), len(5), 0, 0, 0, 0, 0, 0]);
    assert_eq!(Roles::new(t).breakdown(us(105), us(105)).total(), 0);
}

#[test]
fn gpu_side_profiler_step_duplicates_count_once() {
    let mut events = priority_events();
    // Kineto's GPU-side mirrors: of the step, and of a record_function, on the stream.
    events.push(gpu(
        "gpu_user_annotation",
        "ProfilerStep#1",
        7,
        150.0,
        47.0,
        None,
    ));
    events.push(gpu(
        "gpu_user_annotation",
        "## forward ##",
        7,
        150.0,
        47.0,
        None,
    ));
    let engine = trace_of(&events);
    let t = engine.trace().unwrap();
    let steps = analyze(t, None);
    assert_eq!(steps.steps.len(), 1, "the mirror is not a second step");
    assert_eq!(profiler_steps(t).len(), 1);
    let without = analyze(trace_of(&priority_events()).trace().unwrap(), None);
    assert_eq!(
        steps.steps[0].breakdown, without.steps[0].breakdown,
        "mirrors cover nothing"
    );
    // tb_plugin counts GPU-side annotations as CPU Exec: [190, 192) moves out of Other (and
    // it takes ncclDevKernel, tagged by External id only, as Kernel: 2 µs out of
    // Communication).
    let tb = Roles::with_rules(t, Rules::TbPlugin).breakdown(0, 100_000);
    let expected = [22_000, 10_000, 3_000, 3_000, 10_000, 20_000, 29_000, 3_000];
    assert_eq!(tb.ns, expected);
}

#[test]
fn mirror_gives_the_gpu_span_when_nothing_is_linked() {
    let events = [
        step(4, 0.0, 50.0),
        gpu("kernel", "k", 7, 60.0, 10.0, None),
        gpu("gpu_user_annotation", "ProfilerStep#4", 7, 60.0, 10.0, None),
        gpu("gpu_user_annotation", "ProfilerStep#4", 8, 65.0, 15.0, None),
    ];
    let engine = trace_of(&events);
    let s = &analyze(engine.trace().unwrap(), None).steps[0];
    let got = (s.gpu_source, s.gpu, s.device_activities);
    assert_eq!(got, (GpuSource::Mirror, Some((60_000, 80_000)), 0));
    assert_eq!(
        (s.start_ns, s.end_ns),
        (0, 80_000),
        "the step span reaches the GPU end"
    );
}

/// Three steps [20, 120), [120, 220), [220, 320) µs; each launches kernels that run late.
fn three_steps(kernels_per_step: [u32; 3], early_unlaunched_end: Option<f64>) -> Engine {
    let mut events = Vec::new();
    let mut c = 0;
    for (k, n) in kernels_per_step.iter().enumerate() {
        let base = 20.0 + 100.0 * k as f64;
        events.push(step(k + 7, base, 100.0));
        for j in 0..*n {
            c += 1;
            let at = base + 10.0 + f64::from(j);
            events.push(launch("cudaLaunchKernel", 1, at, 0.5, c));
            // Kernels run 80 µs later: the last ones end after the step's CPU end.
            events.push(gpu(
                "kernel",
                "k",
                7,
                at + 80.0 + f64::from(j) * 3.0,
                2.0,
                Some(c),
            ));
        }
    }
    // A launch call straddling the first step's start: its kernel belongs to no step.
    if let Some(end) = early_unlaunched_end {
        events.push(launch("cudaLaunchKernel", 2, 15.0, 10.0, 999));
        events.push(gpu("kernel", "early", 8, end - 1.0, 1.0, Some(999)));
    }
    trace_of(&events)
}

#[test]
fn step_spans_join_cpu_and_gpu_and_chain() {
    let engine = three_steps([5, 5, 5], Some(80.0));
    let t = engine.trace().unwrap();
    let o = t.origin_ns; // 15 µs: the straddling launch call
    assert_eq!(o, 15_000);
    let steps = analyze(t, None);
    let spans: Vec<(i64, i64)> = steps
        .steps
        .iter()
        .map(|s| (s.start_ns + o, s.end_ns + o))
        .collect();
    // Step 7: starts at the end of device work no step launched (80 µs), ends at its last
    // kernel (20 + 10 + 4 + 80 + 12 + 2 = 128 µs). Step 8 starts where step 7 ended.
    let expected = [(80_000, 128_000), (128_000, 228_000), (228_000, 328_000)];
    assert_eq!(spans, expected);
    let first = &steps.steps[0];
    assert_eq!(
        (first.cpu_start_ns + o, first.cpu_end_ns + o),
        (20_000, 120_000)
    );
    assert_eq!(
        first.gpu.map(|g| (g.0 + o, g.1 + o)),
        Some((110_000, 128_000))
    );
    for s in &steps.steps {
        assert_eq!(s.breakdown.total(), s.dur_ns());
    }
    // Without GPU work the step spans are the CPU spans.
    let cpu_only = trace_of(&[step(0, 0.0, 10.0), step(1, 12.0, 10.0)]);
    let s = analyze(cpu_only.trace().unwrap(), None);
    let spans: Vec<(i64, i64)> = s.steps.iter().map(|s| (s.start_ns, s.end_ns)).collect();
    assert_eq!(spans, [(0, 10_000), (12_000, 22_000)]);
    let no_gpu = |s: &StepSpan| s.gpu.is_none() && s.gpu_source == GpuSource::None;
    assert!(s.steps.iter().all(no_gpu));
}

#[test]
fn incomplete_tail_is_flagged_not_dropped() {
    // Last step launched 3 < 0.8 * 5 kernels: flagged, listed, out of the statistics.
    let steps = analyze(three_steps([5, 5, 3], None).trace().unwrap(), None);
    let flags: Vec<bool> = steps.steps.iter().map(|s| s.incomplete).collect();
    assert_eq!(flags, [false, false, true]);
    assert_eq!(steps.stats.unwrap().duration.count, 2);
    // Trailing steps without device work are flagged too; 4 >= 0.8 * 5 is complete.
    let steps = analyze(three_steps([5, 4, 0], None).trace().unwrap(), None);
    let flags: Vec<bool> = steps.steps.iter().map(|s| s.incomplete).collect();
    assert_eq!(flags, [false, false, true]);
    let text = steps_text(&steps, None);
    assert!(
        text.contains("#9*") && text.contains("* incomplete"),
        "{text}"
    );
}

#[test]
fn statistics_and_cold_start() {
    // CPU-only steps of 50, 10, 20, 30 µs.
    let mut events = Vec::new();
    let mut at = 0.0;
    for (n, d) in [50.0, 10.0, 20.0, 30.0].into_iter().enumerate() {
        events.push(step(n, at, d));
        at += d + 1.0;
    }
    let steps = analyze(trace_of(&events).trace().unwrap(), None);
    let st = steps.stats.unwrap();
    let d = st.duration;
    assert_eq!((d.count, d.min, d.max), (4, 10_000, 50_000));
    assert_eq!((d.mean, d.median), (27_500.0, 25_000.0));
    assert!(
        (d.std - 17_078.251_276_599_33).abs() < 1e-6,
        "sample std: {}",
        d.std
    );
    assert!((d.p95 - 47_000.0).abs() < 1e-6 && (d.p99 - 49_400.0).abs() < 1e-6);
    assert_eq!(st.cold_start_ratio, Some(2.5), "50 / median(10, 20, 30)");
    // A range keeps the steps whose CPU start lies in it; statistics follow.
    let ranged = analyze(trace_of(&events).trace().unwrap(), Some((50_000, 200_000)));
    let numbers: Vec<u64> = ranged.steps.iter().map(|s| s.number).collect();
    assert_eq!(numbers, [1, 2, 3]);
    assert_eq!(ranged.stats.unwrap().cold_start_ratio, Some(0.4));
    let one = analyze(trace_of(&events[..1]).trace().unwrap(), None);
    assert_eq!(one.stats.unwrap().cold_start_ratio, None);
}

fn check_report(trace: &kinetoscope::model::Trace, steps: &Steps, what: &str) {
    let text = steps_text(steps, None);
    for line in text.lines() {
        assert!(line.chars().count() <= 120, "{what}: {line:?}");
    }
    let json = steps_json(trace, steps, &[]);
    for (s, j) in steps.steps.iter().zip(json.as_array().unwrap()) {
        let keys = [
            "name",
            "cpu_start_us",
            "cpu_dur_us",
            "gpu_dur_us",
            "start_us",
            "dur_us",
        ];
        for key in keys.into_iter().chain(["breakdown"]) {
            assert!(!j[key].is_null(), "{what}: {key}");
        }
        let parts: f64 = CATEGORIES
            .iter()
            .map(|c| j["breakdown"][c.key()].as_f64().unwrap())
            .sum();
        assert!((parts - s.dur_ns() as f64 / 1000.0).abs() < 1e-6, "{what}");
    }
    let stats = step_stats_json(steps);
    if !steps.steps.is_empty() {
        let keys = [
            "count",
            "mean_us",
            "std_us",
            "median_us",
            "p95_us",
            "p99_us",
            "min_us",
        ];
        for key in keys.into_iter().chain(["max_us", "cold_start_ratio"]) {
            assert!(stats.get(key).is_some(), "{what}: {key}");
        }
    }
}

#[test]
fn report_fits_120_columns_and_json_keys() {
    for path in common::real_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (engine, result) = common::load_bytes(&name, common::json_bytes(&path));
        if result.is_ok() {
            check_report(engine.trace().unwrap(), &analyze(engine.trace().unwrap(), None), &name);
        }
    }
    let engine = trace_of(&priority_events());
    let steps = analyze(engine.trace().unwrap(), None);
    check_report(engine.trace().unwrap(), &steps, "priority");
    let j = &steps_json(engine.trace().unwrap(), &steps, &[])[0];
    assert_eq!(j["name"], "ProfilerStep#1");
    assert_eq!(
        (j["cpu_dur_us"].as_f64(), j["gpu_dur_us"].as_f64()),
        (Some(100.0), Some(30.0))
    );
    assert_eq!(j["breakdown"]["cpu_exec"].as_f64(), Some(27.0));
}
