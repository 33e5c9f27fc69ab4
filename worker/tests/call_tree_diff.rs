//! `call_tree::diff` and `diff --tree`: a trace compared with itself is all `same` (CPU and
//! GPU, every node, text and JSON); two different traces merge by call path with every node of
//! each tree counted once on its side; the ±2% rule at its edges.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::call_tree::{build, diff, Growth};
use kinetoscope::report::diff::{DiffOptions, DiffReport};
use serde_json::Value;

const H100: &str = "tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz";
const MI250: &str = "hta__mi250_minitoy_train_ROCm6_2_kineto.json.gz";
const DLRM0: &str = "param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json";
const DLRM1: &str = "param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json";

/// Every node of a `call_tree_diff` JSON tree, depth first.
fn walk<'v>(node: &'v Value, out: &mut Vec<&'v Value>) {
    out.push(node);
    for c in node["children"].as_array().unwrap() {
        walk(c, out);
    }
}

#[test]
fn a_trace_against_itself_is_all_the_same() {
    for name in [H100, MI250] {
        let engine = common::load_real(name);
        let session = engine.session().unwrap();
        let trace = session.trace();
        let tree = build(trace, None);
        let d = diff((trace, &tree), (trace, &tree));
        assert_eq!(d.nodes.len(), tree.nodes.len(), "{name}: one merged node per path");
        for n in &d.nodes {
            assert_eq!((n.total_ns[0], n.gpu_total_ns[0]), (n.total_ns[1], n.gpu_total_ns[1]), "{name}: {}", n.name);
        }
        let report = DiffReport::build(session, session, DiffOptions { top: 20, tree: Some(0.1), ..DiffOptions::default() });
        let json = report.json();
        let mut nodes = Vec::new();
        walk(&json["call_tree_diff"]["root"], &mut nodes);
        assert!(nodes.len() > 10, "{name}: {} nodes", nodes.len());
        for n in &nodes {
            assert_eq!((n["growth"].as_str(), n["gpu_growth"].as_str()), (Some("same"), Some("same")), "{name}: {}", n["name"]);
        }
        let text = report.text();
        let section = text.split("==== Call tree diff").nth(1).expect("the --tree section");
        let marks: Vec<&str> = section.lines().skip(2).filter_map(|l| l.split_whitespace().nth(3)).collect();
        assert!(marks.len() > 10 && marks.iter().all(|m| *m == "="), "{name}: {marks:?}");
    }
}

#[test]
fn two_traces_merge_by_path_each_node_counted_once_on_its_side() {
    let (a, b) = (common::load_real(DLRM0), common::load_real(DLRM1));
    let (ta, tb) = (a.session().unwrap().trace(), b.session().unwrap().trace());
    let (tree_a, tree_b) = (build(ta, None), build(tb, None));
    let d = diff((ta, &tree_a), (tb, &tree_b));
    let sum = |f: &dyn Fn(usize) -> i64, n: usize| (0..n).map(f).sum::<i64>();
    assert_eq!(sum(&|i| d.nodes[i].total_ns[0], d.nodes.len()), sum(&|i| tree_a.nodes[i].total_ns, tree_a.nodes.len()));
    assert_eq!(sum(&|i| d.nodes[i].total_ns[1], d.nodes.len()), sum(&|i| tree_b.nodes[i].total_ns, tree_b.nodes.len()));
    assert_eq!(sum(&|i| d.nodes[i].gpu_total_ns[1], d.nodes.len()), sum(&|i| tree_b.nodes[i].gpu_total_ns, tree_b.nodes.len()));
    assert_eq!((d.nodes[0].total_ns[0], d.nodes[0].total_ns[1]), (tree_a.nodes[0].total_ns, tree_b.nodes[0].total_ns));
    assert!(d.nodes.len() >= tree_a.nodes.len().max(tree_b.nodes.len()));
    // Two ranks of one run share most paths: fewer merged nodes than both trees' together.
    assert!(d.nodes.len() < tree_a.nodes.len() + tree_b.nodes.len() - 1);
    assert!(d.nodes.iter().any(|n| Growth::of(n.total_ns[0], n.total_ns[1]) != Growth::Same));
    // Threads match by name without their id: the main threads are one node with both sides.
    let both = |c: &u32| d.nodes[*c as usize].total_ns.iter().all(|&t| t > 0);
    assert!(d.nodes[0].children.iter().any(both), "no thread on both sides: {:?}", d.nodes[0].children.iter().map(|&c| &d.nodes[c as usize].name).collect::<Vec<_>>());
    let rows = kinetoscope::report::tree::diff_json(&d, 1.0)["root"]["children"][0]["children"].as_array().unwrap().len();
    assert!(rows > 0, "the main thread's children on both sides");
}

#[test]
fn two_percent_either_way_is_the_same() {
    assert_eq!(Growth::of(1000, 1020), Growth::Same);
    assert_eq!(Growth::of(1000, 980), Growth::Same);
    assert_eq!(Growth::of(1000, 1021), Growth::Grew);
    assert_eq!(Growth::of(1000, 979), Growth::Shrank);
    assert_eq!(Growth::of(0, 0), Growth::Same);
    assert_eq!(Growth::of(0, 1), Growth::Grew);
    assert_eq!(Growth::of(5, 0), Growth::Shrank);
}

/// The Flame tab's differential colors over the protocol: the H100 bert trace kept as the
/// baseline and loaded again is `same` on every row (CPU and GPU), each row's baseline totals
/// its own; without `baseline` or with a range the rows carry none.
#[test]
fn the_flame_tab_against_its_own_baseline_is_all_same() {
    use protocol::{Answer, CallTreeData, Query};
    let mut engine = common::load_real(H100);
    engine.query(&Query::KeepAsBaseline).unwrap();
    engine.load(H100, common::json_bytes(&common::real(H100)), &mut |_, _, _| {}).unwrap();
    let mut ask = |range_ns, baseline| -> CallTreeData {
        match engine.query(&Query::CallTree { range_ns, baseline }).unwrap().0 {
            Answer::CallTree(t) => *t,
            other => panic!("{other:?}"),
        }
    };
    let t = ask(None, true);
    assert!(t.against_baseline && t.rows.len() > 50);
    for r in &t.rows {
        assert_eq!(r.base_ns, Some((r.total_ns, r.gpu_total_ns)), "{}", r.name);
        assert_eq!(r.growth, Some(("same".to_owned(), "same".to_owned())), "{}", r.name);
    }
    for t in [ask(None, false), ask(Some((0, i64::MAX)), true)] {
        assert!(!t.against_baseline && t.rows.iter().all(|r| r.base_ns.is_none() && r.growth.is_none()));
    }
}
