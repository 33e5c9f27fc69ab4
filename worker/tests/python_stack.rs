//! Traces recorded `with_stack=True`: a thread's Python frames (`python_function`) get rows of
//! their own below its ops and `record_function` ranges, and the layout shows them as a second,
//! folded group, so the ranges stay above the ops they contain and a GPU stream stays near the
//! top (docs/viewer.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::model::{CatClass, Trace, NONE};

/// Real fixtures with `python_function` events.
const WITH_STACK: [&str; 3] = [
    "tracelens__vllm_decode_full__graph_capture_rank_0.pt.trace.json.gz",
    "tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz",
    "qatut__dcb0aa1a78e7_4399.1752181589589738346.pt.trace.json",
];

fn is_python(trace: &Trace, i: usize) -> bool {
    Some(trace.slices.cat[i]) == trace.strings.lookup("python_function")
}

#[test]
fn python_frames_have_rows_of_their_own() {
    for name in WITH_STACK {
        let e = common::load_real(name);
        let trace = e.trace().unwrap();
        let s = &trace.slices;
        let mut python_lanes = 0;
        for lane in &trace.lanes {
            let own = lane.rows - lane.python_rows;
            python_lanes += usize::from(lane.python_rows > 0);
            for i in lane.slices.start as usize..lane.slices.end as usize {
                let parent = s.parent[i];
                if is_python(trace, i) {
                    assert!(s.row[i] >= own && s.row[i] < lane.rows, "{name}: Python frame {i} on row {}", s.row[i]);
                    assert!(parent == NONE || is_python(trace, parent as usize), "{name}: frame {i}");
                } else {
                    assert!(s.row[i] < own, "{name}: slice {i} on row {} under the Python rows", s.row[i]);
                    assert!(parent == NONE || !is_python(trace, parent as usize), "{name}: slice {i} under a frame");
                    if parent != NONE {
                        assert!(s.row[parent as usize] < s.row[i], "{name}: slice {i} above its parent");
                    }
                }
            }
        }
        assert!(python_lanes > 0, "{name}: no lane with Python rows");
    }
}

#[test]
fn annotations_sit_above_the_ops_they_contain() {
    let name = WITH_STACK[0];
    let e = common::load_real(name);
    let trace = e.trace().unwrap();
    let s = &trace.slices;
    let (mut ops, mut nested) = (0, 0);
    for i in 0..s.len() {
        if trace.class(s.cat[i]) != CatClass::CpuOp {
            continue;
        }
        ops += 1;
        let mut p = s.parent[i];
        while p != NONE {
            if trace.class(s.cat[p as usize]) == CatClass::Annotation {
                nested += 1;
                assert!(s.row[p as usize] < s.row[i]);
                break;
            }
            p = s.parent[p as usize];
        }
    }
    assert!(ops > 0 && nested > 0, "{name}: {nested} of {ops} ops under a range");
    let busiest = trace.lanes.iter().max_by_key(|l| l.python_rows).unwrap();
    println!(
        "{name}: {} rows for ops and ranges + {} Python rows; {nested} of {ops} ops under a range",
        busiest.rows - busiest.python_rows, busiest.python_rows
    );
}

#[test]
fn layout_folds_the_python_stack_after_its_process() {
    for name in WITH_STACK {
        let e = common::load_real(name);
        let trace = e.trace().unwrap();
        let layout = e.layout().unwrap();
        let mut seen = 0;
        for (g, group) in layout.groups.iter().enumerate() {
            if !group.name.ends_with(" · Python stack") {
                assert!(group.lanes.iter().all(|l| l.first_row == 0), "{name}: {}", group.name);
                continue;
            }
            assert!(group.folded, "{name}: {}", group.name);
            let owner = layout.groups[..g].iter().rev().find(|o| group.name == format!("{} · Python stack", o.name));
            assert!(owner.is_none_or(|o| o.kind == group.kind && o.device == group.device));
            for l in &group.lanes {
                let lane = &trace.lanes[l.lane as usize];
                assert_eq!((l.first_row, l.rows), (lane.rows - lane.python_rows, lane.python_rows));
                let ops = owner.and_then(|o| o.lanes.iter().find(|o| o.lane == l.lane));
                match ops {
                    Some(ops) => {
                        assert_eq!(ops.rows, l.first_row);
                        assert!(!ops.shows(l.first_row) && l.shows(l.first_row));
                    }
                    None => assert_eq!(l.first_row, 0, "{name}: a thread with ops keeps its entry"),
                }
                seen += 1;
            }
        }
        let python = trace.lanes.iter().filter(|l| l.python_rows > 0).count();
        assert!(seen == python && seen > 0, "{name}: {seen} of {python}");
    }
}
