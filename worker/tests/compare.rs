//! Comparing two traces (docs/cli.md#diff): every delta against the per-trace analyses and reports,
//! a hand-built before/after pair with exact rows, and the `kinetoscope diff` CLI.
//! Longer than ~600 lines only because rustfmt spreads the inline traces and per-row
//! expectations; split the CLI tests out if it grows.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::gpu::gpu_metrics;
use kinetoscope::analysis::kernels::kernel_table;
use kinetoscope::analysis::memory;
use kinetoscope::analysis::ops::{op_table, OpOptions};
use kinetoscope::analysis::steps;
use kinetoscope::compare::{
    compare, parse_sort, sort_rows, BoundKind, CompareOptions, Comparison, KernelColumn, Metric,
    OpColumn, Pair, SortKey, Status,
};
use kinetoscope::model::Trace;
use kinetoscope::session::Session;
use std::collections::HashMap;
use std::process::Command;

const DLRM0: &str = "param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json";
const DLRM1: &str = "param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json";
const QATUT: &str = "qatut__dcb0aa1a78e7_4399.1752181589589738346.pt.trace.json";
const HTA: &str = "hta__df_index_resolver.json.gz";

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn close_opt(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => close(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// A pair against values computed independently: both sides, delta, ratio.
fn check_pair(what: &str, p: Pair, base: f64, cand: f64) {
    assert!(close(p.base, base), "{what}: base {} != {base}", p.base);
    assert!(close(p.cand, cand), "{what}: cand {} != {cand}", p.cand);
    assert!(close(p.delta(), cand - base), "{what}: delta");
    let ratio = (base != 0.0).then(|| cand / base);
    assert!(close_opt(p.ratio(), ratio), "{what}: ratio");
}

/// Mean of the present values (how the summary combines several GPUs).
fn mean(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = v.flatten().collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Every summary value of one trace, straight from the analyses.
fn summary_of(trace: &Trace) -> HashMap<Metric, Option<f64>> {
    let st = steps::analyze(trace, None);
    let stats = st.stats.map(|s| s.duration);
    let ops = op_table(trace, &OpOptions::default());
    let gpus = gpu_metrics(trace, None);
    let kernels = kernel_table(trace, None);
    let mem = memory::analyze(trace, None, 0);
    let peak = mem
        .devices
        .iter()
        .filter(|d| d.device_type == 1)
        .map(|d| d.peak_allocated)
        .max();
    let n = st.steps.len();
    HashMap::from([
        (Metric::StepMean, stats.map(|s| s.mean)),
        (Metric::StepMedian, stats.map(|s| s.median)),
        (Metric::StepP95, stats.map(|s| s.p95)),
        (Metric::SelfCpuTotal, Some(ops.self_cpu_total_ns as f64)),
        (
            Metric::SelfDeviceTotal,
            Some(ops.self_device_total_ns as f64),
        ),
        (
            Metric::GpuUtilization,
            mean(gpus.iter().map(|g| Some(g.utilization * 100.0))),
        ),
        (
            Metric::SmEfficiency,
            mean(gpus.iter().map(|g| g.sm_efficiency.map(|v| v * 100.0))),
        ),
        (
            Metric::AchievedOccupancy,
            mean(gpus.iter().map(|g| g.occupancy_pct)),
        ),
        (Metric::PeakMemory, peak.map(|b| b as f64)),
        (
            Metric::KernelsPerStep,
            (n > 0).then(|| kernels.calls as f64 / n as f64),
        ),
    ])
}

/// Compares two traces and checks every number of the comparison against the per-trace
/// analyses: summary rows, op rows (by key, per step), kernel rows, statuses, row sets.
fn check_against_analyses(base: &Session, cand: &Session, by_shape: bool) -> Comparison {
    let c = compare(base, cand, &CompareOptions { by_shape });
    let (base, cand) = (base.trace(), cand.trace());
    let (bn, cn) = (
        steps::analyze(base, None).steps.len(),
        steps::analyze(cand, None).steps.len(),
    );
    assert_eq!((c.base_steps, c.cand_steps), (bn, cn));
    assert_eq!(c.per_step, bn > 0 && cn > 0);
    let (bd, cd) = if c.per_step {
        (bn as f64, cn as f64)
    } else {
        (1.0, 1.0)
    };

    let (bs, cs) = (summary_of(base), summary_of(cand));
    assert_eq!(c.summary.len(), 10);
    for r in &c.summary {
        let (b, k) = (bs[&r.metric], cs[&r.metric]);
        assert!(
            close_opt(r.base, b) && close_opt(r.cand, k),
            "{:?}: {r:?} vs {b:?} {k:?}",
            r.metric
        );
        assert!(
            close_opt(r.delta, b.zip(k).map(|(b, k)| k - b)),
            "{:?} delta",
            r.metric
        );
        let rel = b
            .zip(k)
            .filter(|(b, _)| *b != 0.0)
            .map(|(b, k)| (k - b) / b);
        assert!(close_opt(r.rel_delta, rel), "{:?} rel", r.metric);
    }

    let opts = OpOptions {
        by_shape,
        range: None,
    };
    let (bt, ct) = (op_table(base, &opts), op_table(cand, &opts));
    let key = |r: &kinetoscope::analysis::ops::OpRow| {
        (r.name.clone(), r.is_annotation, r.input_shapes.clone())
    };
    let bo: HashMap<_, _> = bt.rows.iter().map(|r| (key(r), r)).collect();
    let co: HashMap<_, _> = ct.rows.iter().map(|r| (key(r), r)).collect();
    let mut union: Vec<_> = bo.keys().chain(co.keys()).cloned().collect();
    union.sort();
    union.dedup();
    assert_eq!(
        c.ops.len(),
        union.len(),
        "one op row per key of either table"
    );
    for r in &c.ops {
        let k = (r.name.clone(), r.is_annotation, r.input_shapes.clone());
        let (b, x) = (bo.get(&k), co.get(&k));
        let v = |row: Option<&&kinetoscope::analysis::ops::OpRow>, d: f64| {
            row.map_or([0.0; 4], |o| {
                [
                    o.calls as f64 / d,
                    o.self_cpu_ns as f64 / d,
                    o.self_device_ns as f64 / d,
                    o.device_total_ns as f64 / d,
                ]
            })
        };
        let (vb, vc) = (v(b, bd), v(x, cd));
        for (i, col) in OpColumn::ALL.iter().enumerate() {
            check_pair(
                &format!("op {k:?} {col:?}"),
                kinetoscope::compare::DiffRow::pair(r, *col),
                vb[i],
                vc[i],
            );
        }
        let status = match (b, x) {
            (None, Some(_)) => Status::Appeared,
            (Some(_), None) => Status::Disappeared,
            _ if vb == vc => Status::Same,
            _ => Status::Changed,
        };
        assert_eq!(r.status, status, "{k:?}");
    }

    let (bk, ck) = (kernel_table(base, None), kernel_table(cand, None));
    let bk: HashMap<_, _> = bk.rows.iter().map(|r| (r.name.as_str(), r)).collect();
    let ck: HashMap<_, _> = ck.rows.iter().map(|r| (r.name.as_str(), r)).collect();
    let mut names: Vec<&str> = bk.keys().chain(ck.keys()).copied().collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(
        c.kernels.len(),
        names.len(),
        "one kernel row per name of either table"
    );
    for r in &c.kernels {
        let (b, x) = (bk.get(r.name.as_str()), ck.get(r.name.as_str()));
        assert!(b.is_some() || x.is_some());
        let calls = |k: Option<&&kinetoscope::analysis::kernels::KernelRow>, d: f64| {
            k.map_or(0.0, |k| k.calls() as f64 / d)
        };
        let total = |k: Option<&&kinetoscope::analysis::kernels::KernelRow>, d: f64| {
            k.map_or(0.0, |k| k.total_ns as f64 / d)
        };
        let mean = |k: Option<&&kinetoscope::analysis::kernels::KernelRow>| {
            k.map_or(0.0, |k| k.stats.mean)
        };
        check_pair(
            &format!("kernel {} calls", r.name),
            r.calls,
            calls(b, bd),
            calls(x, cd),
        );
        check_pair(
            &format!("kernel {} total", r.name),
            r.total_ns,
            total(b, bd),
            total(x, cd),
        );
        check_pair(
            &format!("kernel {} mean", r.name),
            r.mean_ns,
            mean(b),
            mean(x),
        );
        let expected = match (b, x) {
            (None, _) => Status::Appeared,
            (_, None) => Status::Disappeared,
            _ if r.calls.base == r.calls.cand
                && r.total_ns.base == r.total_ns.cand
                && r.mean_ns.base == r.mean_ns.cand =>
            {
                Status::Same
            }
            _ => Status::Changed,
        };
        assert_eq!(r.status, expected, "{}", r.name);
    }
    c
}

/// Two ranks of one DLRM run (1 step each): same ops, different communication time.
#[test]
fn dlrm_ranks_deltas_match_the_per_trace_analyses() {
    let (e0, e1) = (common::load_real(DLRM0), common::load_real(DLRM1));
    let (t0, t1) = (e0.session().unwrap(), e1.session().unwrap());
    let c = check_against_analyses(t0, t1, false);
    assert!(c.per_step);
    assert_eq!((c.base_steps, c.cand_steps), (1, 1));
    assert!(
        c.ops
            .iter()
            .all(|r| r.status != Status::Appeared && r.status != Status::Disappeared),
        "same model, same ops"
    );
    let step = c
        .summary
        .iter()
        .find(|r| r.metric == Metric::StepMean)
        .unwrap();
    assert!(
        step.rel_delta.unwrap() > 0.0,
        "rank 1 waits longer in all_to_all"
    );
    // Ranks of one run: rank 1's longer step is waiting, not a slowdown, and rank 0's shorter
    // all_to_all is no improvement (either direction).
    assert!(
        c.verdict.text.starts_with(
            "Two ranks of one run (0 and 1 of 8, nccl): a difference is load imbalance and waiting, \
             not a speedup; step time +28.6% (14.455ms -> 18.584ms); "
        ),
        "{}",
        c.verdict.text
    );
    assert!(
        c.verdict
            .text
            .contains("largest op change: nccl:all_to_all Self CUDA +5.507ms/step (waiting in a collective)"),
        "{}",
        c.verdict.text
    );
    let run = c.verdict.same_run.as_ref().unwrap();
    assert_eq!((run.base_rank, run.cand_rank, run.world_size, run.backend.as_deref()), (0, 1, 8, Some("nccl")));
    let ranks_back = kinetoscope::compare::compare(t1, t0, &Default::default());
    for v in [&c.verdict.text, &ranks_back.verdict.text] {
        for word in ["faster", "slower", "improv", "Candidate"] {
            assert!(!v.contains(word), "{word:?} in {v}");
        }
    }
    assert!(ranks_back.verdict.text.starts_with("Two ranks of one run (1 and 0 of 8, nccl)"), "{}", ranks_back.verdict.text);
    // By shape too, and the reverse direction flips every delta.
    let shaped = check_against_analyses(t0, t1, true);
    assert!(shaped.ops.len() >= c.ops.len());
    let back = check_against_analyses(t1, t0, false);
    for (a, b) in c.summary.iter().zip(&back.summary) {
        assert!(close_opt(a.delta, b.delta.map(|d| -d)), "{:?}", a.metric);
    }
}

/// Ranks of different runs (dlrm world 8 vs the sampled HTA rank of world 128) and traces
/// without `distributedInfo` keep the ordinary verdict.
#[test]
fn traces_of_different_runs_get_the_ordinary_verdict() {
    let (d, s) = (common::load_real(DLRM0), common::load_real("hta__trace_filter__sampled_rank-1.json.gz"));
    let c = kinetoscope::compare::compare(d.session().unwrap(), s.session().unwrap(), &Default::default());
    assert_eq!(c.verdict.same_run, None);
    assert!(c.verdict.text.starts_with("Candidate slower by 4184.1%: step time +4184.1% (14.455ms -> 619.271ms); "), "{}", c.verdict.text);
    assert!(!c.verdict.text.contains("waiting"), "{}", c.verdict.text);
    let (a, b) = (common::load_real(QATUT), common::load_real(HTA));
    let c = kinetoscope::compare::compare(a.session().unwrap(), b.session().unwrap(), &Default::default());
    assert_eq!(c.verdict.same_run, None);
    assert!(c.verdict.text.starts_with("Candidate slower by "), "{}", c.verdict.text);
}

/// Different step counts (3 vs 5 steps): op and kernel values are divided per trace.
#[test]
fn per_step_division_uses_each_traces_step_count() {
    let (a, b) = (common::load_real(QATUT), common::load_real(HTA));
    let c = check_against_analyses(a.session().unwrap(), b.session().unwrap(), false);
    assert_eq!((c.base_steps, c.cand_steps, c.per_step), (3, 5, true));
    let peak = c
        .summary
        .iter()
        .find(|r| r.metric == Metric::PeakMemory)
        .unwrap();
    assert_eq!(
        (peak.base, peak.cand),
        (Some(94_398_464.0), Some(6_629_508_096.0))
    );
    // A trace without steps: totals, no per-step kernel count.
    let gm = common::load_real("gpumodel__trace.json");
    let c = check_against_analyses(gm.session().unwrap(), a.session().unwrap(), false);
    assert!(!c.per_step);
    assert!(
        c.verdict.text.starts_with("Candidate uses less GPU time by 99.5%") && c.verdict.text.contains(": Self CUDA time total "),
        "no step time on one side: the headline falls back to device time: {}",
        c.verdict.text
    );
    let k = c
        .summary
        .iter()
        .find(|r| r.metric == Metric::KernelsPerStep)
        .unwrap();
    assert_eq!((k.base.is_none(), k.delta, k.rel_delta), (true, None, None));
}

// ---------------------------------------------------------------------------------------
// Hand-built before / after pair (times in µs).
//
// Before, 2 steps of 200 µs: aten::addmm [10, 110] runs cudaMemcpyAsync [20, 30] (a
// `Memcpy DtoD (Device -> Device)` [60, 80]) and cudaLaunchKernel [40, 50] (fp32
// `volta_sgemm_128x64_nn` [85, 185], 2 blocks/SM, 25 % occupancy); 1 MB allocated inside.
// After, 4 steps of 100 µs: aten::to [2, 8], aten::addmm [10, 60] runs cudaLaunchKernel
// [20, 30] (bf16 tensor-core GEMM [40, 80], 0.5 blocks/SM, 50 % occupancy); 0.5 MB.

const BF16: &str = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn";

fn before() -> String {
    let mut ev = Vec::new();
    for s in 0..2 {
        let t = s * 200;
        let (c1, c2) = (2 * s + 1, 2 * s + 2);
        ev.push(format!(r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{t},"dur":200}}"#, s + 1));
        ev.push(format!(r#"{{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":{},"dur":100,"args":{{"Input Dims":[[64],[64,128],[128,64]]}}}}"#, t + 10));
        ev.push(format!(r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":{},"args":{{"Device Type":1,"Device Id":0,"Addr":{c1},"Bytes":1000000,"Total Allocated":1000000,"Total Reserved":2097152}}}}"#, t + 15));
        ev.push(format!(r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":{},"args":{{"Device Type":1,"Device Id":0,"Addr":{c1},"Bytes":-1000000,"Total Allocated":0,"Total Reserved":2097152}}}}"#, t + 105));
        ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":{},"dur":10,"args":{{"correlation":{c1}}}}}"#, t + 20));
        ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":10,"args":{{"correlation":{c2}}}}}"#, t + 40));
        ev.push(format!(r#"{{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoD (Device -> Device)","pid":0,"tid":7,"ts":{},"dur":20,"args":{{"correlation":{c1},"device":0,"stream":7}}}}"#, t + 60));
        ev.push(format!(r#"{{"ph":"X","cat":"kernel","name":"volta_sgemm_128x64_nn","pid":0,"tid":7,"ts":{},"dur":100,"args":{{"correlation":{c2},"device":0,"stream":7,"blocks per SM":2.0,"est. achieved occupancy %":25}}}}"#, t + 85));
    }
    format!("{{\"traceEvents\":[\n{}\n]}}", ev.join(",\n"))
}

fn after() -> String {
    let mut ev = Vec::new();
    for s in 0..4 {
        let t = s * 100;
        let c = s + 1;
        ev.push(format!(r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{t},"dur":100}}"#, s + 1));
        ev.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::to","pid":1,"tid":1,"ts":{},"dur":6}}"#,
            t + 2
        ));
        ev.push(format!(r#"{{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":{},"dur":50,"args":{{"Input Dims":[[64],[64,128],[128,64]]}}}}"#, t + 10));
        ev.push(format!(r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":{},"args":{{"Device Type":1,"Device Id":0,"Addr":{c},"Bytes":500000,"Total Allocated":500000,"Total Reserved":2097152}}}}"#, t + 15));
        ev.push(format!(r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":{},"args":{{"Device Type":1,"Device Id":0,"Addr":{c},"Bytes":-500000,"Total Allocated":0,"Total Reserved":2097152}}}}"#, t + 55));
        ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":10,"args":{{"correlation":{c}}}}}"#, t + 20));
        ev.push(format!(r#"{{"ph":"X","cat":"kernel","name":"{BF16}","pid":0,"tid":7,"ts":{},"dur":40,"args":{{"correlation":{c},"device":0,"stream":7,"blocks per SM":0.5,"est. achieved occupancy %":50}}}}"#, t + 40));
    }
    format!("{{\"traceEvents\":[\n{}\n]}}", ev.join(",\n"))
}

/// (status, calls, self CPU, self CUDA, CUDA total) per step of both sides, in µs.
type OpExpect = (&'static str, Status, [f64; 4], [f64; 4]);

#[test]
fn hand_built_sgemm_to_bf16_rows_appear_disappear_and_change() {
    let (eb, _) = common::load_str(&before());
    let (ea, _) = common::load_str(&after());
    let (tb, ta) = (eb.session().unwrap(), ea.session().unwrap());
    let c = check_against_analyses(tb, ta, false);
    assert!(c.per_step);
    assert_eq!((c.base_steps, c.cand_steps), (2, 4));

    let ops: Vec<OpExpect> = vec![
        (
            "ProfilerStep*",
            Status::Changed,
            [1.0, 100.0, 0.0, 120.0],
            [1.0, 44.0, 0.0, 40.0],
        ),
        (
            "aten::addmm",
            Status::Changed,
            [1.0, 80.0, 120.0, 120.0],
            [1.0, 40.0, 40.0, 40.0],
        ),
        (
            "cudaMemcpyAsync",
            Status::Disappeared,
            [1.0, 10.0, 0.0, 0.0],
            [0.0; 4],
        ),
        (
            "cudaLaunchKernel",
            Status::Same,
            [1.0, 10.0, 0.0, 0.0],
            [1.0, 10.0, 0.0, 0.0],
        ),
        ("aten::to", Status::Appeared, [0.0; 4], [1.0, 6.0, 0.0, 0.0]),
    ];
    let got: Vec<&str> = c.ops.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        got,
        ops.iter().map(|o| o.0).collect::<Vec<_>>(),
        "base order, then appeared rows"
    );
    for (r, (name, status, b, a)) in c.ops.iter().zip(&ops) {
        assert_eq!(r.status, *status, "{name}");
        let us = |i: usize| if i == 0 { 1.0 } else { 1000.0 };
        for (i, col) in OpColumn::ALL.iter().enumerate() {
            let p = kinetoscope::compare::DiffRow::pair(r, *col);
            assert_eq!(
                (p.base, p.cand),
                (b[i] * us(i), a[i] * us(i)),
                "{name} {col:?}"
            );
        }
    }
    let addmm = &c.ops[1];
    assert_eq!(
        (addmm.self_device_ns.delta(), addmm.self_device_ns.ratio()),
        (-80_000.0, Some(1.0 / 3.0))
    );

    let k: Vec<(&str, Status, bool, Pair, Pair, Pair)> = c
        .kernels
        .iter()
        .map(|r| {
            (
                r.name.as_str(),
                r.status,
                r.tensor_cores,
                r.calls,
                r.total_ns,
                r.mean_ns,
            )
        })
        .collect();
    let p = |base: f64, cand: f64| Pair { base, cand };
    assert_eq!(
        k,
        [
            (
                "volta_sgemm_128x64_nn",
                Status::Disappeared,
                false,
                p(1.0, 0.0),
                p(100_000.0, 0.0),
                p(100_000.0, 0.0)
            ),
            (
                BF16,
                Status::Appeared,
                true,
                p(0.0, 1.0),
                p(0.0, 40_000.0),
                p(0.0, 40_000.0)
            ),
        ]
    );

    type Values = (Option<f64>, Option<f64>, Option<f64>);
    let s: HashMap<Metric, Values> = c
        .summary
        .iter()
        .map(|r| (r.metric, (r.base, r.cand, r.rel_delta)))
        .collect();
    assert_eq!(
        s[&Metric::StepMean],
        (Some(200_000.0), Some(100_000.0), Some(-0.5))
    );
    assert_eq!(
        s[&Metric::StepP95],
        (Some(200_000.0), Some(100_000.0), Some(-0.5))
    );
    assert_eq!(
        s[&Metric::SelfCpuTotal],
        (Some(400_000.0), Some(400_000.0), Some(0.0))
    );
    assert_eq!(s[&Metric::SelfDeviceTotal].0, Some(240_000.0));
    assert_eq!(s[&Metric::SelfDeviceTotal].1, Some(160_000.0));
    assert_eq!(s[&Metric::GpuUtilization].0, Some(50.0));
    assert_eq!(s[&Metric::GpuUtilization].1, Some(40.0));
    assert_eq!(s[&Metric::SmEfficiency].0, Some(50.0));
    assert_eq!(s[&Metric::SmEfficiency].1, Some(20.0));
    assert_eq!(
        s[&Metric::AchievedOccupancy],
        (Some(25.0), Some(50.0), Some(1.0))
    );
    assert_eq!(
        s[&Metric::PeakMemory],
        (Some(1_000_000.0), Some(500_000.0), Some(-0.5))
    );
    assert_eq!(
        s[&Metric::KernelsPerStep],
        (Some(1.0), Some(1.0), Some(0.0))
    );

    assert_eq!(
        (c.verdict.base_bound.kind, c.verdict.cand_bound.kind),
        (BoundKind::Gpu, BoundKind::Gpu)
    );
    assert_eq!(
        c.verdict.text,
        "Candidate faster by 50.0%: step time -50.0% (200.000us -> 100.000us); GPU-bound (60% GPU) -> GPU-bound (40% GPU); \
         largest op change: aten::addmm Self CUDA -80.000us/step; \
         largest kernel change: volta_sgemm_128x64_nn disappeared (-100.000us/step)"
    );
}

#[test]
fn sorting_by_delta_abs_delta_and_name() {
    let (eb, _) = common::load_str(&before());
    let (ea, _) = common::load_str(&after());
    let mut c = compare(
        eb.session().unwrap(),
        ea.session().unwrap(),
        &CompareOptions::default(),
    );
    let names = |c: &Comparison| c.ops.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
    sort_rows(&mut c.ops, SortKey::Delta(OpColumn::SelfCpu), true);
    assert_eq!(
        names(&c),
        [
            "aten::to",
            "cudaLaunchKernel",
            "cudaMemcpyAsync",
            "aten::addmm",
            "ProfilerStep*"
        ]
    );
    sort_rows(&mut c.ops, SortKey::AbsDelta(OpColumn::SelfCpu), true);
    assert_eq!(
        names(&c),
        [
            "ProfilerStep*",
            "aten::addmm",
            "cudaMemcpyAsync",
            "aten::to",
            "cudaLaunchKernel"
        ]
    );
    sort_rows(&mut c.ops, SortKey::Name, false);
    assert_eq!(
        names(&c),
        [
            "ProfilerStep*",
            "aten::addmm",
            "aten::to",
            "cudaLaunchKernel",
            "cudaMemcpyAsync"
        ]
    );
    sort_rows(&mut c.kernels, SortKey::Delta(KernelColumn::Total), false);
    assert_eq!(c.kernels[0].name, "volta_sgemm_128x64_nn");
    assert_eq!(
        parse_sort("name"),
        Some((Some(SortKey::Name), Some(SortKey::Name)))
    );
    assert_eq!(
        parse_sort("self_cuda"),
        Some((Some(SortKey::AbsDelta(OpColumn::SelfDevice)), None))
    );
    assert_eq!(
        parse_sort("delta:calls"),
        Some((
            Some(SortKey::Delta(OpColumn::Calls)),
            Some(SortKey::Delta(KernelColumn::Calls))
        ))
    );
    assert_eq!(
        parse_sort("abs:mean"),
        Some((None, Some(SortKey::AbsDelta(KernelColumn::Mean))))
    );
    assert_eq!(parse_sort("bogus"), None);
    assert_eq!(parse_sort("up:calls"), None);
}

// ---------------------------------------------------------------------------------------
// The CLI.

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write_tmp(name: &str, text: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn cli_diff_json_keys_text_verdict_and_errors() {
    let (b, a) = (
        write_tmp("compare_before.json", &before()),
        write_tmp("compare_after.json", &after()),
    );
    let (code, out, err) = run(&["diff", &b, &a, "--json"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    for key in [
        "summary",
        "verdict",
        "ops",
        "kernels",
        "base",
        "candidate",
        "per_step",
        "by_shape",
    ] {
        assert!(doc.get(key).is_some(), "diff --json has {key}");
    }
    assert_eq!(doc["summary"][0]["key"], "step_time_mean");
    assert_eq!(doc["summary"][0]["base"], 200.0);
    assert!(doc["verdict"]["text"]
        .as_str()
        .unwrap()
        .starts_with("Candidate faster by 50.0%: step time -50.0%"));
    assert_eq!(doc["verdict"]["same_run"], serde_json::Value::Null);
    let ops = doc["ops"].as_array().unwrap();
    assert_eq!(ops[0]["name"], "aten::addmm", "sorted by |Δ Self CUDA|");
    assert_eq!(ops[0]["self_device_us"]["delta"], -80.0);
    for key in [
        "name",
        "input_shapes",
        "is_annotation",
        "status",
        "calls",
        "self_cpu_us",
        "self_device_us",
        "device_total_us",
    ] {
        assert!(ops[0].get(key).is_some(), "ops[] has {key}");
    }
    let k = &doc["kernels"][0];
    for key in [
        "name",
        "status",
        "tensor_cores",
        "calls",
        "total_us",
        "mean_us",
    ] {
        assert!(k.get(key).is_some(), "kernels[] has {key}");
    }
    for key in ["base", "candidate", "delta", "ratio"] {
        assert!(k["total_us"].get(key).is_some(), "columns have {key}");
    }

    let (code, out, _) = run(&["diff", &b, &a, "--top", "3", "--by-shape", "--sort", "name"]);
    assert_eq!(code, 0);
    let verdict = out.lines().find(|l| l.starts_with("Verdict: ")).unwrap();
    assert_eq!(verdict, "Verdict: Candidate faster by 50.0%: step time -50.0% (200.000us -> 100.000us);");
    assert!(out.contains("\n         GPU-bound (60% GPU) -> GPU-bound (40% GPU);"), "{out}");
    assert!(out.contains("- kernel volta_sgemm_128x64_nn"), "{out}");
    assert!(out.contains(&format!("+ kernel {BF16}")), "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= 120), "{out}");

    let (code, out, err) = run(&["diff", &b, "/nonexistent/after.json"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/after.json"), "{err}");
    let bad = write_tmp("compare_bad.json", "{\"traceEvents\": [ nope");
    let (code, _, err) = run(&["diff", &bad, &a]);
    assert_eq!((code, err.lines().count()), (1, 1), "{err}");
    let (code, _, _) = run(&["diff", &b]);
    assert_eq!(code, 2, "missing CAND is a usage error");
    let (code, _, _) = run(&["diff", &b, &a, "--sort", "bogus"]);
    assert_eq!(code, 2);
}

/// `diff --json` of the two DLRM ranks against each rank's `report --json` (1 step each, so
/// per-step values are the report's).
#[test]
fn cli_diff_matches_the_two_reports() {
    let (p0, p1) = (common::real(DLRM0), common::real(DLRM1));
    let (p0, p1) = (p0.to_str().unwrap(), p1.to_str().unwrap());
    let json = |args: &[&str]| -> serde_json::Value {
        let (code, out, err) = run(args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let (r0, r1, d) = (
        json(&["report", p0, "--json"]),
        json(&["report", p1, "--json"]),
        json(&["diff", p0, p1, "--json"]),
    );
    let by_name = |r: &serde_json::Value, list: &str| -> HashMap<String, serde_json::Value> {
        r[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| (o["name"].as_str().unwrap().to_owned(), o.clone()))
            .collect()
    };
    let (o0, o1) = (by_name(&r0, "ops"), by_name(&r1, "ops"));
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    for row in d["ops"].as_array().unwrap() {
        let name = row["name"].as_str().unwrap();
        for key in ["self_cpu_us", "self_device_us", "device_total_us", "calls"] {
            let b = o0.get(name).map_or(0.0, |o| f(&o[key]));
            let c = o1.get(name).map_or(0.0, |o| f(&o[key]));
            assert!(
                close(f(&row[key]["base"]), b) && close(f(&row[key]["candidate"]), c),
                "{name} {key}"
            );
            assert!(close(f(&row[key]["delta"]), c - b), "{name} {key} delta");
        }
    }
    let (k0, k1) = (by_name(&r0, "kernels"), by_name(&r1, "kernels"));
    for row in d["kernels"].as_array().unwrap() {
        let name = row["name"].as_str().unwrap();
        for key in ["total_us", "mean_us", "calls"] {
            let b = k0.get(name).map_or(0.0, |o| f(&o[key]));
            let c = k1.get(name).map_or(0.0, |o| f(&o[key]));
            assert!(
                close(f(&row[key]["base"]), b) && close(f(&row[key]["candidate"]), c),
                "{name} {key}"
            );
        }
    }
    let total = |r: &serde_json::Value| f(&r["self_cpu_time_total_us"]);
    let row = d["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == "self_cpu_time_total")
        .unwrap()
        .clone();
    assert!(close(f(&row["base"]), total(&r0)) && close(f(&row["delta"]), total(&r1) - total(&r0)));
    let util = |r: &serde_json::Value| f(&r["gpus"][0]["utilization_pct"]);
    let row = d["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == "gpu_utilization")
        .unwrap()
        .clone();
    assert!(close(f(&row["base"]), util(&r0)) && close(f(&row["candidate"]), util(&r1)));
    let mean = |r: &serde_json::Value| f(&r["step_stats"]["mean_us"]);
    let row = &d["summary"][0];
    assert!(
        close(f(&row["base"]), mean(&r0)) && close(f(&row["candidate"]), mean(&r1)),
        "{row} {}",
        r0["step_stats"]
    );
}

#[test]
fn cli_module_diff_matches_the_two_reports_and_a_trace_against_itself_is_all_same() {
    let (h100, mi300) = (
        common::real("tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz"),
        common::real("tracelens__mi300__gaunernst_bert-small-uncased__1016001.json.gz"),
    );
    let (a, b) = (h100.to_str().unwrap(), mi300.to_str().unwrap());
    let json = |args: &[&str]| -> serde_json::Value {
        let (code, out, err) = run(args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let (ra, rb, d) = (json(&["report", a, "--json"]), json(&["report", b, "--json"]), json(&["diff", a, b, "--json"]));
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    let by_path = |r: &serde_json::Value| -> HashMap<String, serde_json::Value> {
        r["modules"]["nodes"].as_array().unwrap().iter().map(|n| (n["path"].as_str().unwrap().to_owned(), n.clone())).collect()
    };
    let (ma, mb) = (by_path(&ra), by_path(&rb));
    let rows = d["modules"].as_array().unwrap();
    assert_eq!(rows.len(), 84, "BERT's 84 modules on both GPUs, matched by path");
    let steps = |side: &str| if d["per_step"].as_bool().unwrap() { f(&d[side]["steps"]) } else { 1.0 };
    for row in rows {
        let path = row["path"].as_str().unwrap();
        for (key, node_key) in [("calls", "occurrences"), ("host_us", "host_us"), ("device_us", "device_us")] {
            let want_a = ma.get(path).map_or(0.0, |n| f(&n[node_key])) / steps("base");
            let want_b = mb.get(path).map_or(0.0, |n| f(&n[node_key])) / steps("candidate");
            assert!(close(f(&row[key]["base"]), want_a) && close(f(&row[key]["candidate"]), want_b), "{path} {key}");
        }
    }
    let changed = rows.iter().filter(|r| r["status"] == "changed").count();
    assert_eq!(changed, 84, "every module's host time differs between the two GPUs' runs");
    let text = run(&["diff", a, b]).1;
    assert!(text.contains("==== Module changes (per step; tree order, changed rows)"), "{text}");
    assert!(text.contains("\n    BertEncoder_0 "), "indented by depth: {text}");

    let same = json(&["diff", a, a, "--json"]);
    let rows = same["modules"].as_array().unwrap();
    assert_eq!(rows.len(), 84);
    assert!(rows.iter().all(|r| r["status"] == "same"), "a trace against itself");
    assert!(!run(&["diff", a, a]).1.contains("Module changes"), "nothing changed, no section");
}
