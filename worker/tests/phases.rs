//! Each step's phases (`analysis::phases`, docs/definitions.md "Phases").
//!
//! Real fixtures: every step's numbers equal an independent recount (`scripts/check/phases.py`,
//! run by the test command's `recounts` stage). Here, the real PyTorch CPU runs of
//! `../shared/fixtures/torch-cpu*/` (forward, backward, optimizer per step by construction of
//! their scripts): every `Optimizer.*#` span is the optimizer phase, every autograd-engine op
//! is in backward, DataLoader spans are data loading; traces without a marker say so.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::phases::{self, Phase};
use kinetoscope::analysis::steps;
use kinetoscope::model::{StrId, Trace};

/// Per step (by number): the time of the outermost slices in its CPU span whose name `pick`s.
fn outermost_time(t: &Trace, st: &steps::Steps, pick: impl Fn(&str) -> bool) -> Vec<i64> {
    let s = &t.slices;
    let picked = |i: u32| pick(&t.strings.get(s.name[i as usize]));
    st.steps
        .iter()
        .map(|step| {
            (0..s.len() as u32)
                .filter(|&i| picked(i) && t.ancestors(i).skip(1).all(|a| !picked(a)))
                .filter(|&i| (step.cpu_start_ns..step.cpu_end_ns).contains(&s.start_ns[i as usize]))
                .map(|i| s.dur_ns[i as usize])
                .sum()
        })
        .collect()
}

#[test]
fn pytorch_cpu_runs_split_into_their_phases() {
    let shared = common::shared().join("fixtures");
    let files = ["torch-cpu/mlp_train", "torch-cpu/dataloader", "torch-cpu-memory/cnn_ckpt", "torch-cpu-memory/mlp_adam", "torch-cpu-memory/transformer_leak"];
    for name in files {
        let (engine, _) = common::load(&shared.join(format!("{name}.pt.trace.json")));
        let session = engine.session().unwrap();
        let t = session.trace();
        let st = steps::analyze(t, None);
        let p = phases::analyze(t, &st, session.kernel_classes());
        assert_eq!(p.steps.len(), st.steps.len(), "{name}");
        assert!(!p.steps.is_empty(), "{name}: has steps");
        let optimizer = outermost_time(t, &st, |n| n.starts_with("Optimizer.step#") || n.starts_with("Optimizer.zero_grad#"));
        let backward = outermost_time(t, &st, |n| n.starts_with("autograd::engine::evaluate_function"));
        let loading = outermost_time(t, &st, |n| n.contains("DataLoader"));
        for (k, s) in p.steps.iter().enumerate() {
            let cpu = |ph: Phase| s.cpu_ns[ph as usize];
            assert_eq!(cpu(Phase::Optimizer), optimizer[k], "{name} step {}: optimizer = its spans", s.step);
            assert_eq!(cpu(Phase::DataLoading), loading[k], "{name} step {}: data loading = its spans", s.step);
            assert!(cpu(Phase::Backward) >= backward[k], "{name} step {}: backward holds every autograd-engine op", s.step);
            assert!(cpu(Phase::Forward) > 0, "{name} step {}: a forward", s.step);
            assert_eq!(s.gpu_ns, [0; 4], "{name}: CPU-only");
        }
        let has = |needle: &str| (0..t.strings.len() as u32).any(|i| t.strings.get(StrId(i)).contains(needle));
        assert_eq!(p.not_told_apart.contains(&Phase::Optimizer), !has("Optimizer.step#"), "{name}");
        assert_eq!(p.not_told_apart.contains(&Phase::DataLoading), !has("DataLoader"), "{name}");
        assert!(!p.not_told_apart.contains(&Phase::Backward), "{name}: backward is marked");
    }
}

/// `report --phases` prints the section, `--json` always carries `phases`, and a trace
/// without steps says phases are per step.
#[test]
fn report_prints_the_phases() {
    let path = common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope")).arg("report").arg(&path).args(args).output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run(&["--phases"]);
    assert!(text.contains("==== Phases"), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&run(&["--json"])).unwrap();
    let step = &doc["phases"]["steps"][0];
    assert_eq!(step["step"], 10);
    // Recounted by scripts/check/phases.py: 1.101 ms in the DataLoader span, 1.437 ms under the
    // optimizer's spans, the all-to-all's 5.798 ms of which 5.537 ms with nothing else running.
    assert_eq!(step["cpu_us"]["data_loading"], 1101.0);
    assert_eq!(step["cpu_us"]["optimizer"], 1437.0);
    assert_eq!((step["communication_us"].as_f64(), step["communication_exposed_us"].as_f64()), (Some(5798.0), Some(5537.0)));
    let none = common::real("gpumodel__trace.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope")).arg("report").arg(&none).arg("--phases").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("No steps: phases are per ProfilerStep#N."));
}

/// The slow step's explanation names the phase that moved most against the median complete
/// step: on df_index's slowest step (ProfilerStep#3), backward (its CPU + GPU time; the other
/// phases moved less).
#[test]
fn the_slow_step_names_the_phase_that_grew() {
    let engine = common::load_real("hta__df_index_resolver.json.gz");
    let session = engine.session().unwrap();
    let e = session.explain(kinetoscope::analysis::explain::Which::Slowest).unwrap();
    let t = session.trace();
    let st = steps::analyze(t, None);
    let p = phases::analyze(t, &st, session.kernel_classes());
    let time = |s: &phases::StepPhases, ph: Phase| s.cpu_ns[ph as usize] + s.gpu_ns[ph as usize];
    let complete: Vec<&phases::StepPhases> = p.steps.iter().filter(|s| st.steps.iter().any(|x| x.number == s.step && !x.incomplete)).collect();
    let median = |ph: Phase| {
        let mut v: Vec<i64> = complete.iter().map(|s| time(s, ph)).collect();
        v.sort_unstable();
        v[v.len() / 2] as f64
    };
    let mine = p.steps.iter().find(|s| s.step == e.step).unwrap();
    let moved = |ph: Phase| (time(mine, ph) as f64 - median(ph)).abs();
    assert_eq!(complete.len() % 2, 1, "an odd count: the median is one step's");
    let most = [Phase::Forward, Phase::Backward, Phase::Optimizer].into_iter().max_by(|a, b| moved(*a).total_cmp(&moved(*b))).unwrap();
    assert_eq!(most, Phase::Backward);
    let d = e.phase.as_ref().unwrap();
    assert_eq!((d.phase, d.step_ns, d.median_ns), (most, time(mine, most), median(most)));
    let line = kinetoscope::analysis::explain::sentences(&e).into_iter().find(|s| s.starts_with("By phase")).unwrap();
    assert!(line.starts_with("By phase, backward grew most: "), "{line}");
}
