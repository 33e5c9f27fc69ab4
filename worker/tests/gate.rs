//! `kinetoscope diff --fail-if` (docs/ci.md) through the built binary: a trace against itself
//! passes every gate (exit 0), a slower candidate fails with its reason on one line (exit 1),
//! a bad expression or an unreadable input is a usage error (exit 2); `--format md` of `diff`,
//! `report` and `run`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::synth::run::{generate_rank, RunSpec};
use std::path::PathBuf;
use std::process::Command;

const DLRM0: &str = "param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json";

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Rank 0 of a synthetic run whose compute kernels take `kernel_ns` each.
fn synthetic(name: &str, kernel_ns: i64) -> PathBuf {
    let spec = RunSpec { ranks: 1, world_size: 1, kernel_ns, ..RunSpec::default() };
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, generate_rank(&spec, 0)).unwrap();
    path
}

const GATES: [&str; 6] = [
    "step_time_mean>+5%",
    "self_cuda_time_total>+10%",
    "self_cuda_total>+10%",
    "step_time_p95 > +2ms",
    "kernels_per_step>+1",
    "new-finding>=info",
];

fn with_gates<'a>(mut args: Vec<&'a str>, gates: &[&'a str]) -> Vec<&'a str> {
    for g in gates {
        args.extend(["--fail-if", g]);
    }
    args
}

#[test]
fn a_trace_against_itself_passes_every_gate() {
    for path in [common::real(DLRM0), synthetic("gate_same.json", 50_000)] {
        let p = path.to_str().unwrap();
        let (code, out, err) = run(&with_gates(vec!["diff", p, p], &GATES));
        assert_eq!((code, err.as_str()), (0, ""), "{p}");
        assert!(out.contains("Verdict:"), "the report is printed as usual");
    }
}

#[test]
fn a_slower_candidate_fails_the_gate_with_its_reason_on_one_line() {
    let base = synthetic("gate_base.json", 50_000);
    let cand = synthetic("gate_slow.json", 65_000);
    let (b, c) = (base.to_str().unwrap(), cand.to_str().unwrap());
    let (code, _, err) = run(&with_gates(vec!["diff", b, c], &["step_time_mean>+5%", "new-finding>=alert"]));
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("kinetoscope: --fail-if failed: step_time_mean>+5%: step_time_mean +"), "{err}");
    assert!(err.contains("->"), "base -> candidate values: {err}");
    assert!(!err.contains("new-finding"), "only the failing gate is named: {err}");
    // The same pair passes a looser gate, and the reverse direction passes the slow-down gate.
    let (code, _, err) = run(&with_gates(vec!["diff", b, c], &["step_time_mean>+100%"]));
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, _, err) = run(&with_gates(vec!["diff", c, b], &["step_time_mean>+5%"]));
    assert_eq!((code, err.as_str()), (0, ""));
    // A faster candidate trips a "got faster" gate; absolute thresholds work the same way.
    let (code, _, err) = run(&with_gates(vec!["diff", c, b], &["step_time_mean<-5%", "step_time_mean<-1us"]));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("step_time_mean<-5%: ") && err.contains("; step_time_mean<-1us: "), "{err}");
}

#[test]
fn the_issue_s_gates_work_as_written_both_ways() {
    // `self_cuda_total` is the short name of `self_cuda_time_total` (docs/ci.md).
    let base = synthetic("gate_alias_base.json", 50_000);
    let cand = synthetic("gate_alias_slow.json", 65_000);
    let (b, c) = (base.to_str().unwrap(), cand.to_str().unwrap());
    let gates = ["step_time_mean>+5%", "self_cuda_total>+10%", "new-finding>=warn"];
    let (code, _, err) = run(&with_gates(vec!["diff", b, c], &gates));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("; self_cuda_total>+10%: self_cuda_time_total +"), "{err}");
    let (code, _, err) = run(&with_gates(vec!["diff", c, b], &gates));
    assert_eq!((code, err.as_str()), (0, ""));
}

#[test]
fn bad_expressions_and_inputs_exit_2() {
    let p = common::real(DLRM0);
    let p = p.to_str().unwrap();
    let (code, out, err) = run(&["diff", p, p, "--fail-if", "self_cuda_totl>+10%"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("error: invalid value 'self_cuda_totl>+10%' for '--fail-if <EXPR>'"), "{err}");
    assert!(err.contains("tip: a similar metric exists: 'self_cuda_time_total'"), "{err}");
    let (code, _, err) = run(&["diff", p, p, "--fail-if", "step_time_mean>+5pp"]);
    assert_eq!(code, 2);
    assert!(err.contains("unit \"pp\" does not fit step_time_mean"), "{err}");
    let (code, _, err) = run(&["diff", p, "/nonexistent.json", "--fail-if", "step_time_mean>+5%"]);
    assert_eq!(code, 2, "with gates, 1 only means a gate failed: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let (code, _, _) = run(&["diff", p, "/nonexistent.json"]);
    assert_eq!(code, 1, "without gates, unreadable input keeps exit 1");
    // A gate on a metric the traces lack cannot pass or fail: bad input, not a silent pass.
    let cpu = common::shared().join("fixtures/torch-cpu/mlp_train.pt.trace.json");
    let cpu = cpu.to_str().unwrap();
    let (code, _, err) = run(&["diff", cpu, cpu, "--fail-if", "gpu_utilization<-3%"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot check gpu_utilization: the baseline has no value for it"), "{err}");
    // A relative gate on a zero baseline: passes when nothing changed, else asks for an absolute one.
    let (code, _, err) = run(&["diff", cpu, cpu, "--fail-if", "self_cuda_time_total>+10%"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, _, err) = run(&["diff", cpu, p, "--fail-if", "self_cuda_time_total>+10%"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot check self_cuda_time_total relatively: its baseline is 0"), "{err}");
    assert!(err.contains("tip: use an absolute threshold, e.g. self_cuda_time_total>+2ms"), "{err}");
}

#[test]
fn markdown_diff_has_the_verdict_tables_and_gates() {
    let base = synthetic("gate_md_base.json", 50_000);
    let cand = synthetic("gate_md_slow.json", 65_000);
    let (b, c) = (base.to_str().unwrap(), cand.to_str().unwrap());
    let (code, out, _) = run(&["diff", b, c, "--format", "md", "--fail-if", "step_time_mean>+5%"]);
    assert_eq!(code, 1);
    assert!(out.starts_with("### kinetoscope diff: gate\\_md\\_base.json → gate\\_md\\_slow.json\n"), "{out}");
    assert!(out.contains("\n**Verdict:** Candidate slower by "), "{out}");
    assert!(out.contains("**Gates:** 1 of 1 failed\n\n- step\\_time\\_mean&gt;+5%: "), "{out}");
    assert!(out.contains("| Metric ") && out.contains(" | -------: |"), "{out}");
    assert!(out.contains("#### Top kernel changes (per step)"), "{out}");
    assert!(out.contains("#### Findings"), "{out}");
    // Every table row has as many cells as its header.
    for block in out.split("\n\n").filter(|b| b.starts_with('|')) {
        let cells = |l: &str| l.replace("\\|", "").matches('|').count();
        let head = cells(block.lines().next().unwrap());
        assert!(block.lines().all(|l| cells(l) == head), "{block}");
        assert!(block.lines().nth(1).unwrap().contains(": |"), "numbers right-aligned: {block}");
    }
}

#[test]
fn markdown_report_has_every_section() {
    let p = common::real(DLRM0);
    let (code, out, err) = run(&["report", p.to_str().unwrap(), "--format", "md", "--top", "5"]);
    assert_eq!(code, 0, "{err}");
    for head in ["### kinetoscope report: ", "#### Top ops (by Self CUDA)", "#### Top kernels (by total time)", "#### Steps\n", "#### Findings"] {
        assert!(out.contains(head), "{head}:\n{out}");
    }
    assert!(!out.contains("aten::add_ "), "names are escaped: {out}");
    let (code, _, err) = run(&["report", p.to_str().unwrap(), "--format", "md", "--json"]);
    assert_eq!(code, 2, "--json and --format conflict: {err}");
}

#[test]
fn markdown_run_has_the_rank_table_and_heatmap() {
    let dir = common::shared().join("fixtures/real");
    let ranks: Vec<String> = (0..4)
        .map(|r| {
            let prefix = format!("param__dlrm_kineto__worker{r}_");
            let name = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).find(|n| n.starts_with(&prefix)).unwrap();
            dir.join(name).to_string_lossy().into_owned()
        })
        .collect();
    let mut args = vec!["run", "--format", "md"];
    args.extend(ranks.iter().map(String::as_str));
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("### kinetoscope run: world size 8, backend nccl\n\n4 ranks loaded"), "{out}");
    for head in ["#### Ranks", "| Rank | Steps |", "#### Step times", "#### Findings"] {
        assert!(out.contains(head), "{head}:\n{out}");
    }
    assert_eq!(out.lines().filter(|l| l.starts_with("| ") && l.contains("param\\_\\_dlrm")).count(), 4, "{out}");
}
