//! A straggler's delay is named first (issue #45, Run tab): on the four real dlrm ranks, the
//! engine's start offset, arrival lateness, data-loading gap and per-step collective waits equal
//! counts made here from the raw events, and the straggler's "why" starts with the delay in
//! the finding, the text report and the JSON.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use common::DLRM;
use kinetoscope::run::delay::Cause;
use kinetoscope::run::{self, ClockChoice, Format, RunAnalysis};
use serde_json::Value;

/// What this test reads from one rank's raw events, µs as written.
struct Raw {
    /// `ProfilerStep#10` ts.
    step_ts: f64,
    /// NCCL kernel starts in order (all on one stream in these traces).
    nccl: Vec<f64>,
    /// `enumerate(DataLoader)` spans (ts, ts + dur).
    loading: Vec<(f64, f64)>,
}

fn raw(name: &str) -> Raw {
    let v: Value = serde_json::from_slice(&common::json_bytes(&common::real(name))).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let (mut step_ts, mut nccl, mut loading) = (None, Vec::new(), Vec::new());
    for e in events {
        let (Some(n), Some(ts)) = (e["name"].as_str(), e["ts"].as_f64()) else { continue };
        let dur = e["dur"].as_f64().unwrap_or(0.0);
        if n == "ProfilerStep#10" && e["cat"] != "gpu_user_annotation" {
            step_ts = Some(ts);
        } else if n.starts_with("ncclKernel") && e["cat"] == "kernel" {
            nccl.push(ts);
        } else if n.starts_with("enumerate(DataLoader)#") && n.ends_with("__next__") {
            loading.push((ts, ts + dur));
        }
    }
    nccl.sort_by(f64::total_cmp);
    Raw { step_ts: step_ts.unwrap(), nccl, loading }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

fn analyse() -> RunAnalysis {
    let paths: Vec<_> = DLRM.iter().map(|n| common::real(n)).collect();
    let summaries = run::load::summarize_files(&paths, 2).unwrap().into_iter().map(Result::unwrap).collect();
    run::analyze(summaries, &[], ClockChoice::Auto).remove(0)
}

/// Absolute times on these traces are ~1.7e18 ns, past f64's exact integers: 1 µs of slack.
fn close(ns: i64, us: f64) -> bool {
    (ns as f64 / 1000.0 - us).abs() < 1.0
}

#[test]
fn dlrm_straggler_delay_equals_the_raw_events() {
    let raws: Vec<Raw> = DLRM.iter().map(|n| raw(n)).collect();
    let run = analyse();
    assert!(!run.clock.aligned, "one host: times as recorded, so raw ts compare directly");
    let top = &run.stragglers[0];
    assert_eq!(run.ranks[top.member].identity.rank, Some(2));
    let d = top.delay.as_ref().expect("the straggler's delay");
    assert_eq!((d.step, d.instance), (Some(10), 0), "its worst collective is the step's first");

    // Independent counts: rank 2 against the median of ranks 0, 1, 3.
    let own = &raws[2];
    let others: Vec<&Raw> = raws.iter().enumerate().filter(|(r, _)| *r != 2).map(|(_, r)| r).collect();
    let start_offset = own.step_ts - median(others.iter().map(|r| r.step_ts).collect());
    let late = own.nccl[0] - median(others.iter().map(|r| r.nccl[0]).collect());
    let loading_before_first = |r: &Raw| -> f64 {
        r.loading.iter().map(|&(a, b)| (b.min(r.nccl[0]) - a.max(r.step_ts)).max(0.0)).sum()
    };
    let loading_gap = loading_before_first(own) - median(others.iter().map(|r| loading_before_first(r)).collect());
    println!("start offset {start_offset} us, late {late} us, data-loading gap {loading_gap} us");
    assert!((6000.0..6500.0).contains(&start_offset), "{start_offset}");
    assert!(close(d.start_offset_ns.unwrap(), start_offset), "{:?} vs {start_offset}", d.start_offset_ns);
    assert!(close(d.late_ns, late), "{} vs {late}", d.late_ns);
    let (cause, gap) = d.cause.clone().unwrap();
    assert_eq!(cause, Cause::DataLoading);
    assert!(close(gap, loading_gap), "{gap} vs {loading_gap}");

    // Per rank x step wait in collectives: Σ over the k-th NCCL kernels of (last start - own).
    for (p, r) in raws.iter().enumerate() {
        let wait: f64 = (0..r.nccl.len())
            .map(|k| raws.iter().map(|q| q.nccl[k]).fold(f64::MIN, f64::max) - r.nccl[k])
            .sum();
        let cell = run.steps.iter().find(|c| c.member == p && c.step == 10).unwrap();
        assert!(close(cell.wait_ns, wait), "rank {p}: {} vs {wait}", cell.wait_ns);
    }
}

#[test]
fn the_delay_comes_first_in_every_output() {
    let run = analyse();
    let sentence = run.stragglers[0].delay.as_ref().unwrap().sentence();
    assert!(sentence.starts_with("started step 10 6.") && sentence.contains("data loading +182"), "{sentence}");
    let finding = run.findings.iter().find(|f| f.rule == "straggler-rank").unwrap();
    assert!(finding.title.contains(&sentence), "{}", finding.title);
    let text = run::render(std::slice::from_ref(&run), Format::Text);
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(&sentence)).collect();
    assert_eq!(lines.len(), 2, "the straggler row and the finding: {text}");
    for line in lines {
        let at = line.find(&sentence).unwrap_or(usize::MAX);
        assert!(line.find("kernel ").is_none_or(|k| k > at), "the delay before the kernels: {line}");
    }
    let md = run::render(std::slice::from_ref(&run), Format::Markdown);
    assert!(md.contains("| started step 10 6."), "{md}");
    let json = run::json::run_json(&run);
    assert_eq!(json["straggler"], 2);
    assert_eq!(json["stragglers"][0]["why"]["delay"]["text"], sentence.as_str());
    assert_eq!(json["stragglers"][0]["why"]["delay"]["cause"]["kind"], "data_loading");
    let waits: Vec<f64> = json["collectives"]["per_rank"].as_array().unwrap().iter().map(|r| r["wait_us"].as_f64().unwrap()).collect();
    let cells: Vec<f64> = json["steps"].as_array().unwrap().iter().map(|s| s["wait_us"].as_f64().unwrap()).collect();
    assert_eq!(cells, waits, "one step per rank: the step's wait is the rank's");
}
