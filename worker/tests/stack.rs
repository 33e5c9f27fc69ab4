//! The stacked compare view's engine side (docs/viewer.md): layouts aligned at a step and tiles
//! addressed to the baseline, on two real dlrm ranks. Alignment offsets are checked against
//! `kinetoscope report --json`'s steps table, rect counts against a plain scan of the slices.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::engine::Engine;
use kinetoscope::model::Trace;
use protocol::{Align, Answer, Layout, Query, TileSet, TraceRef, RECT_WORDS};
use std::process::Command;

const DLRM0: &str = "param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json";
const DLRM1: &str = "param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json";
const QATUT: &str = "qatut__dcb0aa1a78e7_4399.1752181589589738346.pt.trace.json";

/// An engine holding `base` as the baseline and `cand` as the loaded trace.
fn pair(base: &str, cand: &str) -> Engine {
    let mut e = common::load_real(base);
    e.query(&Query::KeepAsBaseline).unwrap();
    e.load(
        cand,
        common::json_bytes(&common::real(cand)),
        &mut |_, _, _| {},
    )
    .unwrap();
    e
}

fn layout(e: &mut Engine, trace: TraceRef, align: Align) -> Layout {
    match e.query(&Query::Layout { trace, align }).unwrap().0 {
        Answer::Layout(l) => l,
        other => panic!("not a layout: {other:?}"),
    }
}

fn tiles(
    e: &mut Engine,
    trace: TraceRef,
    lanes: &[u32],
    window: (i64, i64),
    res: i64,
) -> (TileSet, Vec<u32>) {
    let q = Query::Tiles {
        trace,
        lanes: lanes.to_vec(),
        start_ns: window.0,
        end_ns: window.1,
        resolution_ns: res,
        search: Some("mm".into()),
    };
    match e.query(&q).unwrap() {
        (Answer::Tiles(set), Some(words)) => (set, words),
        other => panic!("not tiles: {other:?}"),
    }
}

/// `(number, start_ns, end_ns)` of every step in `kinetoscope report --json FILE`.
fn report_steps(name: &str) -> Vec<(u64, i64, i64)> {
    let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(["report", "--json"])
        .arg(common::real(name))
        .output()
        .unwrap();
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let number = s["name"]
                .as_str()
                .unwrap()
                .trim_start_matches("ProfilerStep#")
                .parse()
                .unwrap();
            let start = (s["cpu_start_us"].as_f64().unwrap() * 1e3).round() as i64;
            let dur = (s["cpu_dur_us"].as_f64().unwrap() * 1e3).round() as i64;
            (number, start, start + dur)
        })
        .collect()
}

/// Slices of `lane` whose extent `[start, max(end, start + 1))` meets `[a, b)`.
fn slices_in(trace: &Trace, lane: u32, (a, b): (i64, i64)) -> u64 {
    let s = &trace.slices;
    (0..s.len())
        .filter(|&i| {
            s.lane[i].0 == lane && s.start_ns[i] < b && s.end_ns(i).max(s.start_ns[i] + 1) > a
        })
        .count() as u64
}

fn lanes_of(l: &Layout) -> Vec<u32> {
    l.groups
        .iter()
        .flat_map(|g| g.lanes.iter().map(|x| x.lane))
        .collect()
}

#[test]
fn aligned_layouts_focus_the_common_step_at_the_reported_start() {
    let mut e = pair(DLRM0, DLRM1);
    for (which, name) in [(TraceRef::Baseline, DLRM0), (TraceRef::Current, DLRM1)] {
        let steps = report_steps(name);
        let l = layout(&mut e, which, Align::First);
        let focus = l.focus.clone().unwrap();
        assert_eq!(
            (focus.number, focus.start_ns, focus.end_ns),
            steps[0],
            "{name}"
        );
        // Asking for the step by number gives the same; a number the trace lacks falls back.
        assert_eq!(
            layout(&mut e, which, Align::Step(10)).focus,
            Some(focus.clone())
        );
        assert_eq!(
            layout(&mut e, which, Align::Step(999)).focus,
            Some(focus.clone())
        );
        // Lanes kept: exactly those with a slice during the step, in the full layout's order.
        let trace = common::load_real(if which == TraceRef::Baseline { DLRM0 } else { DLRM1 });
        let full = trace.layout().unwrap();
        assert_eq!(full.focus, None);
        let t = trace.trace().unwrap();
        let expected: Vec<u32> = lanes_of(&full)
            .into_iter()
            .filter(|&lane| slices_in(t, lane, (focus.start_ns, focus.end_ns)) > 0)
            .collect();
        assert!(!expected.is_empty());
        assert_eq!(lanes_of(&l), expected, "{name}");
    }
}

#[test]
fn baseline_tiles_count_the_baseline_slices_of_the_window() {
    let mut e = pair(DLRM0, DLRM1);
    let base = common::load_real(DLRM0);
    let cand = common::load_real(DLRM1);
    for (which, own) in [(TraceRef::Baseline, &base), (TraceRef::Current, &cand)] {
        let l = layout(&mut e, which, Align::First);
        let focus = l.focus.clone().unwrap();
        let lanes = lanes_of(&l);
        // The first 2 ms of the step at 4 µs per bucket, and the whole step coarser.
        for (window, res) in [
            ((focus.start_ns, focus.start_ns + 2_000_000), 4096),
            ((focus.start_ns, focus.end_ns), 65_536),
        ] {
            let (set, words) = tiles(&mut e, which, &lanes, window, res);
            assert_eq!(set.lanes.len(), lanes.len());
            let mut at = 0;
            for &(lane, n) in &set.lanes {
                let counted: u64 = (at..at + n as usize)
                    .map(|r| u64::from(words[r * RECT_WORDS + 5]))
                    .sum();
                let t = own.trace().unwrap();
                assert_eq!(
                    counted,
                    slices_in(t, lane, (set.start_ns, set.end_ns)),
                    "lane {lane} of {which:?}"
                );
                at += n as usize;
            }
            assert_eq!(at * RECT_WORDS, words.len());
            // The same words, search flags included, as that trace loaded alone (any trace's
            // rects are flagged: the stacked ranks view searches every rank).
            let mut alone = common::load_real(if which == TraceRef::Baseline {
                DLRM0
            } else {
                DLRM1
            });
            let (set2, words2) = tiles(&mut alone, TraceRef::Current, &lanes, window, res);
            assert_eq!(
                (set.lanes.clone(), set.names.clone()),
                (set2.lanes, set2.names)
            );
            assert_eq!(words, words2);
        }
    }
}

#[test]
fn baseline_hover_and_errors() {
    let mut e = pair(DLRM0, DLRM1);
    let base = common::load_real(DLRM0);
    let t = base.trace().unwrap();
    let id = (t.slices.len() - 1) as u32;
    let Answer::Details(Some(d)) = e
        .query(&Query::Hover {
            trace: TraceRef::Baseline,
            slice: id,
        })
        .unwrap()
        .0
    else {
        panic!("no details");
    };
    assert_eq!(d.slice.name, t.strings.get(t.slices.name[id as usize]));
    assert_eq!(d.slice.dur_ns, t.slices.dur_ns[id as usize]);
    e.query(&Query::ClearBaseline).unwrap();
    let err = e
        .query(&Query::Layout {
            trace: TraceRef::Baseline,
            align: Align::First,
        })
        .unwrap_err();
    assert_eq!(err, "no baseline is kept");
}

#[test]
fn traces_without_a_common_step_align_at_their_first() {
    // qatut has steps numbered unlike dlrm's single #10: each side aligns at its own first step.
    let mut e = pair(QATUT, DLRM0);
    let q = layout(&mut e, TraceRef::Baseline, Align::First);
    let first = report_steps(QATUT)[0];
    let f = q.focus.unwrap();
    assert_eq!((f.number, f.start_ns, f.end_ns), first);
    assert_eq!(
        layout(&mut e, TraceRef::Current, Align::First)
            .focus
            .map(|f| f.number),
        Some(10)
    );
}
