//! "Why is this step slow?" and step markers. The explanation on a synthetic trace whose ground truth is known by construction
//! (`synth::run` with one rank): every step fetches from the DataLoader for 1 ms and runs four
//! phases of six 50 µs kernels and an all-reduce; step 7's last kernel of phase 2
//! (`reduce_kernel`) runs 3 ms longer and its DataLoader fetch 0.5 ms longer. Kernel times
//! jitter by less than 2 µs each. The page's answer is checked against the CLI on a real trace.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::breakdown::Category;
use kinetoscope::analysis::explain::{explain, sentences, Which};
use kinetoscope::engine::Engine;
use kinetoscope::synth::run::{generate_rank, Delay, RunSpec};
use protocol::{Answer, ItemDeltaData, Query};
use serde_json::Value;

const SLOW_KERNEL: &str = "void at::native::reduce_kernel<512, 1>";

fn engine() -> Engine {
    let spec = RunSpec {
        ranks: 1,
        world_size: 1,
        steps: 10,
        first_step: 0,
        kernel_ns: 50_000,
        delays: vec![Delay { rank: 0, step: 7, collective: 2, extra_ns: 3_000_000 }],
        dataloader_ns: 1_000_000,
        dataloader_delays: vec![(7, 500_000)],
        ..RunSpec::default()
    };
    let mut e = Engine::new();
    e.load("slow-step.json", generate_rank(&spec, 0), &mut |_, _, _| {}).unwrap();
    e
}

fn near(got: f64, want: f64, tol: f64) -> bool {
    (got - want).abs() <= tol
}

#[test]
fn the_slowest_step_names_the_slow_kernel_and_the_dataloader_wait() {
    let e = engine();
    let session = e.session().unwrap();
    let steps = session.steps(None);
    let x = explain(session.trace(), &steps, Which::Slowest).unwrap();
    assert_eq!(x.step, 7);
    assert!(near(x.delta_ns(), 3_500_000.0, 50_000.0), "step delta {}", x.delta_ns());
    // The kernel: +3 ms, same call count, its longest slice in the step as the evidence.
    let k = &x.kernels[0];
    assert_eq!(k.name, SLOW_KERNEL);
    assert!(near(k.delta_ns(), 3_000_000.0, 20_000.0), "kernel delta {}", k.delta_ns());
    assert_eq!(f64::from(k.step_calls), k.median_calls);
    let t = session.trace();
    let slice = k.slice.unwrap() as usize;
    assert_eq!(t.strings.get(t.slices.name[slice]), SLOW_KERNEL);
    assert!(t.slices.dur_ns[slice] >= 3_050_000, "the 3 ms longer one");
    // The DataLoader: +0.5 ms in the step breakdown; the kernel category carries the 3 ms.
    let cat = |c: Category| x.categories.iter().find(|d| d.category == c).unwrap().delta_ns();
    assert!(near(cat(Category::DataLoader), 500_000.0, 1_000.0), "dataloader {}", cat(Category::DataLoader));
    assert!(near(cat(Category::Kernel), 3_000_000.0, 20_000.0), "kernel category {}", cat(Category::Kernel));
    let text = sentences(&x).join("\n");
    assert!(text.contains("ProfilerStep#7 took"), "{text}");
    assert!(text.contains("DataLoader +500.0 µs"), "{text}");
    assert!(text.contains("Kernel void at::native::reduce_kernel<512, 1> +3.0"), "{text}");
}

#[test]
fn an_ordinary_step_has_nothing_to_explain() {
    let e = engine();
    let session = e.session().unwrap();
    let steps = session.steps(None);
    let x = explain(session.trace(), &steps, Which::Number(3)).unwrap();
    assert!(x.delta_ns().abs() < 50_000.0, "{}", x.delta_ns());
    assert!(x.kernels.iter().chain(&x.ops).all(|i| i.delta_ns().abs() < 100_000.0), "{:?}", x.kernels);
    assert!(x.categories.iter().all(|c| c.delta_ns().abs() < 50_000.0), "{:?}", x.categories);
    let err = explain(session.trace(), &steps, Which::Number(99)).unwrap_err();
    assert!(err.contains("no ProfilerStep#99") && err.contains("0, 1, 2"), "{err}");
}

/// `## Call CompiledFxGraph <hash> ##` annotations of a vLLM decode trace (no ProfilerStep#N),
/// counted straight from the JSON: outermost ones only.
fn compiled_graph_calls(path: &std::path::Path) -> Vec<(f64, f64)> {
    let v: serde_json::Value = serde_json::from_slice(&common::json_bytes(path)).unwrap();
    let mut spans: Vec<(f64, f64)> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "user_annotation")
        .filter(|e| e["name"].as_str().is_some_and(|n| n.starts_with("## Call CompiledFxGraph")))
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap();
            (ts, ts + e["dur"].as_f64().unwrap())
        })
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut end = f64::MIN;
    spans.retain(|&(a, b)| {
        let outer = a >= end;
        end = end.max(b);
        outer
    });
    spans
}

#[test]
fn a_step_marker_makes_steps_of_a_trace_without_profiler_steps() {
    let path = common::real("tracelens__vllm_decode_full__graph_capture_rank_0.pt.trace.json.gz");
    let want = compiled_graph_calls(&path);
    assert!(want.len() > 20, "{}", want.len());
    let bytes = std::fs::read(&path).unwrap();
    let mut plain = Engine::new();
    plain.load("vllm.json.gz", bytes.clone(), &mut |_, _, _| {}).unwrap();
    let none = plain.session().unwrap().steps(None);
    assert!(none.steps.is_empty(), "no ProfilerStep#N in this trace");
    assert!(explain(plain.trace().unwrap(), &none, Which::Slowest).unwrap_err().contains("no complete step"));

    let mut e = Engine::new();
    e.set_step_marker(Some("## Call CompiledFxGraph*".into()));
    e.load("vllm.json.gz", bytes, &mut |_, _, _| {}).unwrap();
    let session = e.session().unwrap();
    let steps = session.steps(None);
    assert_eq!(steps.steps.len(), want.len());
    let t = session.trace();
    for (n, (st, (a, b))) in steps.steps.iter().zip(&want).enumerate() {
        assert_eq!(st.number, n as u64);
        // CPU spans are the annotations' (µs in the file, ns from the origin here).
        let abs = |ns: i64| (t.origin_ns + ns) as f64 / 1e3;
        assert!((abs(st.cpu_start_ns) - a).abs() < 0.002 && (abs(st.cpu_end_ns) - b).abs() < 0.002, "step {n}");
    }
    let x = session.explain(Which::Slowest).unwrap();
    assert!(x.name.starts_with("step "), "{}", x.name);
    assert!(sentences(&x)[0].starts_with(&format!("{} took", x.name)));
}

const RESNET: &str = "kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz";

/// `report FILE --explain-step WHICH --json`'s `explanation`.
fn cli_explanation(which: &str) -> Value {
    let path = common::real(RESNET);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(["report", path.to_str().unwrap(), "--explain-step", which, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["explanation"].clone()
}

fn same_us(ns: f64, us: &Value) -> bool {
    (ns / 1e3 - us.as_f64().unwrap()).abs() < 1e-6
}

fn same_items(wire: &[ItemDeltaData], cli: &Value) {
    let cli = cli.as_array().unwrap();
    assert_eq!(wire.len(), cli.len());
    for (w, c) in wire.iter().zip(cli) {
        assert_eq!(w.name, c["name"].as_str().unwrap());
        assert!(same_us(w.step_ns as f64, &c["step_us"]), "{} step", w.name);
        assert!(same_us(w.median_ns, &c["median_us"]), "{} median", w.name);
        assert_eq!(u64::from(w.step_calls), c["step_calls"].as_u64().unwrap());
        assert_eq!(w.median_calls, c["median_calls"].as_f64().unwrap());
        assert_eq!(w.slice.as_ref().map(|s| u64::from(s.id)), c["slice"].as_u64());
        if let Some(s) = &w.slice {
            assert_eq!(s.name, w.name, "the evidence is a slice of that name");
        }
    }
}

#[test]
fn the_page_answer_equals_report_explain_step_json() {
    let mut e = common::load_real(RESNET);
    for (step, which) in [(None, "slowest".to_owned()), (Some(6), "6".to_owned())] {
        let Answer::Explanation(x) = e.query(&Query::ExplainStep { step }).unwrap().0 else {
            panic!("not an explanation");
        };
        let cli = cli_explanation(&which);
        assert_eq!(x.step, cli["step"].as_u64().unwrap());
        assert_eq!(x.slice.as_ref().map(|s| u64::from(s.id)), cli["slice"].as_u64());
        assert!(same_us(x.dur_ns as f64, &cli["dur_us"]));
        assert!(same_us(x.median_ns, &cli["median_us"]));
        assert_eq!(u64::from(x.steps), cli["steps"].as_u64().unwrap());
        let sentences: Vec<&str> = cli["sentences"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
        assert_eq!(x.sentences, sentences);
        assert_eq!(x.sentence_slices.len(), x.sentences.len());
        assert_eq!(x.sentence_slices[0], x.slice, "the first sentence cites the step");
        let items: Vec<_> = x.kernels.iter().take(3).chain(x.ops.iter().take(3)).map(|i| i.slice.clone()).collect();
        let tail = x.sentence_slices.len() - items.len();
        assert_eq!(x.sentence_slices[tail..], items[..], "item sentences cite their evidence");
        let cats = cli["categories"].as_array().unwrap();
        assert_eq!(x.categories.len(), cats.len());
        for (w, c) in x.categories.iter().zip(cats) {
            assert_eq!(w.key, c["category"].as_str().unwrap());
            assert!(same_us(w.step_ns as f64, &c["step_us"]) && same_us(w.median_ns, &c["median_us"]), "{}", w.key);
        }
        same_items(&x.kernels, &cli["kernels"]);
        same_items(&x.ops, &cli["ops"]);
    }
    let err = e.query(&Query::ExplainStep { step: Some(9_999) }).unwrap_err();
    assert!(err.contains("no ProfilerStep#9999"), "{err}");
}

#[test]
fn a_trace_without_steps_names_its_repeating_annotations_as_step_marker_candidates() {
    // Ground truth counted from the JSON itself: `user_annotation` events by name.
    let name = "tracelens__vllm_decode_full__graph_capture_rank_0.pt.trace.json.gz";
    let doc: Value = serde_json::from_slice(&common::json_bytes(&common::real(name))).unwrap();
    let mut want: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    for ev in doc["traceEvents"].as_array().unwrap() {
        if ev["ph"] == "X" && ev["cat"] == "user_annotation" {
            *want.entry(ev["name"].as_str().unwrap().to_owned()).or_default() += 1;
        }
    }
    let engine = common::load_real(name);
    let trace = engine.trace().unwrap();
    let got = kinetoscope::analysis::steps::marker_candidates(trace, usize::MAX);
    assert!(!got.is_empty(), "vLLM's graph capture repeats one compiled graph's call");
    assert!(got.windows(2).all(|w| w[0].1 >= w[1].1), "most frequent first");
    for (n, count) in &got {
        assert_eq!(Some(count), want.get(n), "{n}");
        assert!(*count >= 2 && !n.starts_with("ProfilerStep#"));
    }
    assert_eq!(got.len(), want.values().filter(|&&c| c >= 2).count());
    // The first candidate, used as the marker, gives one step per occurrence (minus nested ones).
    let mut e = Engine::new();
    e.set_step_marker(Some(got[0].0.clone()));
    e.load(name, common::json_bytes(&common::real(name)), &mut |_, _, _| {}).unwrap();
    let steps = e.session().unwrap().steps(None);
    assert!(steps.steps.len() >= 2 && steps.steps.len() as u64 <= got[0].1, "{} steps", steps.steps.len());
    // The report says which annotations could be the step.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(["report", common::real(name).to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Repeating annotations (--step-marker candidates):"), "{text}");
}

#[test]
fn marking_the_loaded_trace_equals_loading_it_with_the_marker() {
    // The page's picker (`SetStepMarker`) re-marks the loaded model; the CLI loads with the
    // marker. Every step-dependent answer must be the same either way.
    let name = "tracelens__vllm_decode_full__graph_capture_rank_0.pt.trace.json.gz";
    let mut e = common::load_real(name);
    let marking = e.step_marking();
    assert_eq!(marking.marker, None);
    let first = marking.candidates.first().expect("vLLM's graph capture has a candidate").clone();
    assert_eq!(first.count, 23);
    // Asked before the marker changes, so the session's kept steps and kernel table exist.
    for q in [Query::Steps { workload: Default::default() }, Query::Findings, Query::Kernels { range_ns: None }] {
        e.query(&q).unwrap();
    }
    e.query(&Query::KeepAsBaseline).unwrap();

    let started = std::time::Instant::now();
    e.mark_steps(Some(first.name.clone())).unwrap();
    let layout = e.layout().unwrap();
    let marked_ms = started.elapsed().as_secs_f64() * 1e3;
    eprintln!("mark_steps + layout on {name}: {marked_ms:.1} ms");

    let mut want = Engine::new();
    want.set_step_marker(Some(first.name.clone()));
    want.load(name, common::json_bytes(&common::real(name)), &mut |_, _, _| {}).unwrap();
    for q in [Query::Steps { workload: Default::default() }, Query::Findings, Query::ExplainStep { step: None }] {
        assert_eq!(e.query(&q).unwrap().0, want.query(&q).unwrap().0, "{q:?}");
    }
    assert_eq!(layout.steps.len(), 23);
    assert_eq!(layout, want.layout().unwrap());
    let marking = e.step_marking();
    assert_eq!(marking.marker.as_deref(), Some(first.name.as_str()));
    assert_eq!(marking.candidates.first(), Some(&first), "the picker still lists the candidates");

    // The baseline shared the session: it keeps its (absent) steps.
    let Answer::Comparison(c) = e.query(&Query::Compare { by_shape: false }).unwrap().0 else { panic!() };
    assert_eq!((c.base_steps, c.cand_steps), (0, 23));
    e.mark_steps(None).unwrap();
    assert!(e.layout().unwrap().steps.is_empty());
    assert_eq!(e.step_marking().marker, None);
}

/// A trace with one complete step (a dlrm rank: ProfilerStep#10 only) is not compared with
/// itself: the sentences say so, name the largest categories and the step's own bound-by, and
/// none says "median". The numbers are the step's own, from `report --json`.
#[test]
fn the_only_complete_step_is_not_compared_with_itself() {
    let path = common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(["report", "--json", path.to_str().unwrap(), "--explain-step", "slowest"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sentences: Vec<&str> = doc["explanation"]["sentences"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert_eq!(doc["steps"].as_array().unwrap().len(), 1);
    assert!(sentences[0].starts_with("ProfilerStep#10 took 14.46 ms. It is the only complete step"), "{sentences:?}");
    assert!(sentences.iter().all(|s| !s.contains("median")), "{sentences:?}");
    assert_eq!(doc["critical_path"]["steps"][0]["bound_by"], "cpu_op");
    assert!(sentences.iter().any(|s| s.ends_with("% CPU ops: that is what bounds the step.")), "{sentences:?}");
    assert!(sentences.iter().any(|s| s.starts_with("By category (step breakdown), the largest: ")), "{sentences:?}");
    // Its own largest kernels and ops are listed, largest first (no median to differ from).
    for kind in ["kernels", "ops"] {
        let items = doc["explanation"][kind].as_array().unwrap();
        assert!(!items.is_empty(), "{kind}");
        let ns: Vec<f64> = items.iter().map(|i| i["step_us"].as_f64().unwrap()).collect();
        assert!(ns.windows(2).all(|w| w[0] >= w[1]), "{kind}: {ns:?}");
    }
    // The text's table has the step's own column and calls, no median or delta.
    let text = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(["report", path.to_str().unwrap(), "--explain-step", "slowest"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    let table = text.split("WHY IS PROFILERSTEP#10 SLOW").nth(1).unwrap();
    let head = table.lines().find(|l| l.trim_start().starts_with("step")).unwrap();
    assert_eq!(head.split_whitespace().collect::<Vec<_>>(), ["step", "calls"], "{table}");
    assert!(!table.contains("+0.000") && !table.contains("median"), "{table}");
    assert!(table.contains("category Communication") && table.contains("5.860ms"), "{table}");
}
