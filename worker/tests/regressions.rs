//! One test per bug that was fixed, named after the bug, so `cargo test BUG` finds it and a
//! reader sees what once went wrong. Behaviour tests live beside their feature; this file holds
//! only the pins.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// `kinetoscope report TRACE --bogus-flag` printed a report and exited 0: an unknown or
/// misspelt flag was silently ignored. It is a usage error with a hint, exit code 2.
#[test]
fn cli_silently_ignored_unknown_flags() {
    let path = common::real("gpumodel__trace.json");
    let path = path.to_str().unwrap();
    for args in [
        &["report", path, "--bogus-flag"][..],
        &["report", path, "--by-shap"][..],
        &["report", path, "--top", "many"][..],
        &["report", path, "--range", "5"][..],
        &["report", path, "--sort", "speed"][..],
        &["report", path, "--step", "1", "--range", "0:1"][..],
        &["diff", path][..],
        &["bench", path, "--threads", "0"][..],
        &["info"][..],
    ] {
        let (code, out, err) = run(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert!(err.contains("error:"), "{args:?}: {err}");
    }
    let (_, _, err) = run(&["report", path, "--by-shap"]);
    assert!(err.contains("--by-shape"), "the hint names the flag meant: {err}");
}


/// A CUDA-graph launch (`hipGraphLaunch` in the SGLang decode fixture, ROCm) launches 544 kernels;
/// the details panel's "launched" list holds the first `LIST_CAP` and the true total, and the
/// brute-force check compared the whole list, so the new fixture looked like a lost link.
#[test]
fn cuda_graph_launch_details_hold_the_total_beyond_the_list_cap() {
    use kinetoscope::index::details::LIST_CAP;
    let engine = common::load_real("tracelens__sglang_Qwen3-8B_decode.json.gz");
    let session = engine.session().unwrap();
    let (trace, index) = (session.trace(), session.index());
    let s = &trace.slices;
    let mut launched = vec![0u32; s.len()];
    for &l in &s.launch {
        if let Some(n) = launched.get_mut(l as usize) {
            *n += 1;
        }
    }
    let (call, &most) = launched.iter().enumerate().max_by_key(|&(_, n)| *n).unwrap();
    assert!(most as usize > LIST_CAP, "{most}");
    let d = index.details(trace, call as u32).unwrap();
    assert_eq!((d.launched.len(), d.launched_total), (LIST_CAP, most));
}

/// The Compare tab listed its op and kernel diffs in the worker's match order (the dlrm ranks'
/// op diff began with `ProfilerStep*` and `## zero_grad ##`, whose deltas are 0), not largest
/// |Δ| first as `kinetoscope diff` and the docs say. The worker now sends them in that order.
#[test]
fn compare_tab_diffs_were_not_largest_change_first() {
    use protocol::{Answer, Query};
    let mut engine = common::load_real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json");
    engine.query(&Query::KeepAsBaseline).unwrap();
    let bytes = common::json_bytes(&common::real("param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json"));
    engine.load("worker1.json", bytes, &mut |_, _, _| {}).unwrap();
    let Ok((Answer::Comparison(c), _)) = engine.query(&Query::Compare { by_shape: false }) else {
        panic!("no comparison");
    };
    let deltas: Vec<f64> = c.ops.iter().map(|r| r.self_device_ns.cand - r.self_device_ns.base).map(f64::abs).collect();
    assert!(deltas.windows(2).all(|w| w[0] >= w[1]), "ops by |Δ Self CUDA| descending: {deltas:?}");
    assert_eq!(c.ops[0].name, "nccl:all_to_all");
    let kernels: Vec<f64> = c.kernels.iter().map(|r| (r.total_ns.cand - r.total_ns.base).abs()).collect();
    assert!(kernels.windows(2).all(|w| w[0] >= w[1]), "kernels by |Δ total| descending");
}

/// An async finish (`F`) with no matching start between a thread's `B` and `E` was reported as
/// "E event with no open B on its lane", so a reader looked for a parser bug in the thread's
/// slices (catapult `async_begin_end.json`: 3 such finishes). The thread's slice is whole and
/// the diagnostic names async ends too.
#[test]
fn unmatched_async_finish_was_blamed_on_a_thread_end() {
    let (engine, summary) = common::load_str(
        r#"{"traceEvents":[
        {"ph":"B","name":"BE1","pid":1,"tid":1,"ts":120,"cat":"r"},
        {"ph":"F","name":"D","pid":1,"tid":1,"ts":150,"id":"bf1","cat":"r"},
        {"ph":"E","name":"BE1","pid":1,"tid":1,"ts":170,"cat":"r"}]}"#,
    );
    let t = engine.trace().unwrap();
    assert_eq!(t.slices.len(), 1);
    assert_eq!((t.slices.start_ns[0], t.slices.dur_ns[0]), (0, 50_000));
    let w = summary.warnings.iter().find(|w| w.starts_with("model_unmatched_end")).unwrap();
    assert!(w.contains("1 ×") && w.contains("async e / F"), "{w}");
}
