//! Traces without steps (docs/definitions.md "Traces without steps"): every step-dependent
//! section says what it could not do and why, in `report --json` (`unavailable{}`) and in the
//! text report, on the SGLang decode trace (no ProfilerStep#N) and the MI210 GPU-only trace (no
//! `cpu_op`, no `[memory]` event); the demo (five steps) is the near miss where nothing is unavailable.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::unavailable::STEP_RULES;
use kinetoscope::report::trace::{ReportOptions, TraceReport};

fn report(engine: &kinetoscope::engine::Engine) -> (serde_json::Value, String) {
    let r = TraceReport::build(engine.session().unwrap(), ReportOptions::default());
    (r.json(), r.text())
}

fn assert_step_reasons(json: &serde_json::Value, text: &str) {
    let why = json["unavailable"]["steps"].as_str().unwrap();
    assert!(why.starts_with("no ProfilerStep#N in this trace"), "{why}");
    assert!(STEP_RULES.iter().all(|r| why.contains(r)) && why.contains("--step-marker NAME"), "{why}");
    assert_eq!(json["unavailable"]["step_stats"], why);
    assert_eq!(json["unavailable"]["step_findings"], why);
    assert_eq!(json["steps"].as_array().unwrap().len(), 0);
    assert!(json["step_stats"].is_null());
    let fired: Vec<&str> = json["findings"].as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap()).collect();
    assert!(fired.iter().all(|r| !STEP_RULES.contains(r)), "{fired:?}");
    assert!(text.contains("No ProfilerStep#N in this trace"), "{text}");
    // Sections fit 120 columns; op and kernel tables are as wide as their names need plus their
    // value columns (the kernel table's 15, roofline included: 125 characters).
    assert!(text.lines().all(|l| l.chars().count() <= kinetoscope::report::NAME_WIDTH + 125), "{text}");
}

#[test]
fn sglang_decode_has_no_steps_and_says_so() {
    let (json, text) = report(&common::load_real("tracelens__sglang_Qwen3-8B_decode.json.gz"));
    assert_step_reasons(&json, &text);
    // It has ops, kernels and a GPU: those sections are there, with no reason.
    for key in ["ops", "kernels", "gpus", "idle"] {
        assert!(json["unavailable"].get(key).is_none(), "{key}");
    }
}

#[test]
fn mi210_gpu_only_trace_says_what_it_lacks() {
    let (json, text) = report(&common::load_real("tracelens__mi210__gpu_only_trace.json.gz"));
    assert_step_reasons(&json, &text);
    // No cpu_op: the op table holds its 4 runtime calls (hipLaunchKernel ...); no memory events.
    assert_eq!(json["ops"].as_array().unwrap().len(), 4);
    assert!(json["unavailable"].get("ops").is_none());
    assert!(json["unavailable"]["memory"].as_str().unwrap().contains("profile_memory=True"), "{}", json["unavailable"]);
    assert!(json["unavailable"].get("kernels").is_none());
}

#[test]
fn the_demo_has_steps_and_nothing_is_unavailable() {
    let (engine, _) = common::load_bytes("demo.json", kinetoscope::synth::demo::generate());
    let (json, _) = report(&engine);
    let keys: Vec<&String> = json["unavailable"].as_object().unwrap().keys().collect();
    assert!(keys.is_empty(), "{keys:?}");
}
