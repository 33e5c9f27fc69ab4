//! What a finding's remedy saves (`finding::remedy`, docs/findings.md "Impact and severity").
//!
//! Synthetic steps (`synth::paths`, ground truth by construction): a remedy's what-if on the
//! finding's evidence equals a re-run of the generator with the remedy applied. Real
//! fixtures: a remedy that only shortens its evidence never saves more than the finding's
//! impact (a longest path shrinks by at most what left the old path); one that removes a wait
//! raises the impact to what it saves; never a negative time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::critical_path::{analyze, analyze_with, StepPath};
use kinetoscope::analysis::steps;
use kinetoscope::finding::{remedy, Evidence, Finding, Severity};
use kinetoscope::synth::paths::{generate, Case, Knobs};

/// The one step's wall time of `bytes`, and after the remedy of `rule` with evidence the
/// slices whose name contains `evidence`.
fn remedied(bytes: Vec<u8>, rule: &'static str, evidence: &str) -> (i64, i64) {
    let (engine, _) = common::load_bytes("remedy.json", bytes);
    let session = engine.session().unwrap();
    let t = session.trace();
    let all: Vec<u32> = (0..t.slices.len() as u32).filter(|&i| t.strings.get(t.slices.name[i as usize]).contains(evidence)).collect();
    assert!(!all.is_empty(), "{rule}: evidence named {evidence}");
    let f = Finding {
        rule,
        severity: Severity::Warn,
        title: String::new(),
        why: String::new(),
        meaning: String::new(),
        try_this: String::new(),
        evidence: Evidence { all, ..Evidence::default() },
        impact: None,
        remedy: None,
    };
    let (what, edits) = remedy::model(t, &f).expect("a modelled remedy");
    let steps = steps::analyze(t, None);
    let (paths, after) = analyze_with(t, &steps, std::slice::from_ref(&edits));
    let r = remedy::saved(what, &edits, &paths, &after[0]);
    assert_eq!(paths.len(), 1);
    (paths[0].wall_ns(), paths[0].wall_ns() - r.saved_ns)
}

fn wall(bytes: Vec<u8>) -> i64 {
    let (engine, _) = common::load_bytes("rerun.json", bytes);
    let session = engine.session().unwrap();
    let t = session.trace();
    let paths: Vec<StepPath> = analyze(t, &steps::analyze(t, None));
    paths[0].wall_ns()
}

#[test]
fn a_remedy_equals_the_generator_rerun_with_it_applied() {
    // The sync removed: the step as generated with blocking calls that do not wait.
    let (before, after) = remedied(generate(Case::DeviceSync, Knobs::default()), "long-device-sync", "cudaDeviceSynchronize");
    let rerun = wall(generate(Case::DeviceSync, Knobs { sync: false, ..Knobs::default() }));
    assert!(after < before, "the sync bound the step: {before} -> {after}");
    assert_eq!(after, rerun);
    // GEMMs at twice the speed: the GPU-bound step as generated with half-length GEMMs.
    let (before, after) = remedied(generate(Case::GpuBound, Knobs::default()), "fp32-gemm", "gemm");
    assert_eq!(after, wall(generate(Case::GpuBound, Knobs { gemm_scale: 0.5, ..Knobs::default() })));
    assert!(after < before);
    // On the CPU-bound step the same remedy buys nothing: the path is on the CPU.
    let (before, after) = remedied(generate(Case::CpuBound, Knobs::default()), "fp32-gemm", "gemm");
    assert_eq!(after, before);
}

#[test]
fn a_remedy_never_saves_more_than_the_impact() {
    let mut modelled = 0;
    let mut raised = 0;
    for path in common::real_fixtures() {
        let (engine, _) = common::load(&path);
        let session = engine.session().unwrap();
        for f in session.findings() {
            let Some(r) = &f.remedy else { continue };
            modelled += 1;
            let i = f.impact.expect("a remedy comes with an impact");
            assert!(r.saved_ns >= 0, "{path:?} {}", f.rule);
            assert!(r.saved_ns <= i.ns, "{path:?} {}: saves {} ns, impact {} ns", f.rule, r.saved_ns, i.ns);
            if r.removes_waits && r.saved_ns == i.ns && r.saved_ns > 0 {
                raised += 1;
            }
            assert!(f.why.contains(&format!("Modelled with {}", r.what)), "{}", f.why);
        }
    }
    assert!(modelled >= 30, "{modelled} findings with a modelled remedy");
    // tracelens mi300's blocking copies: removing their waits saves 24.9 µs, more than their
    // 24.2 µs on the path.
    assert!(raised >= 1, "a removed wait saved more than its time on the path somewhere");
}
