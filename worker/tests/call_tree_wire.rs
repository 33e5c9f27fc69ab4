//! The Flame tab's call tree on the wire (`answer::call_tree`): what the page receives equals
//! `report --tree --min-pct 0.1 --json`'s `call_tree`, node for node in pre-order, on the H100
//! bert trace (with_stack: Python frames) and the MI250 toy training (no Python frames); the
//! rows left out are counted, a step's tree is no larger than the whole trace's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::call_tree::build;
use kinetoscope::answer::call_tree::MIN_PCT;
use kinetoscope::engine::Engine;
use protocol::{Answer, CallTreeData, Query};
use serde_json::Value;

const H100: &str = "tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz";
const MI250: &str = "hta__mi250_minitoy_train_ROCm6_2_kineto.json.gz";

fn call_tree(engine: &mut Engine, range_ns: Option<(i64, i64)>) -> CallTreeData {
    match engine.query(&Query::CallTree { range_ns, baseline: false }).unwrap().0 {
        Answer::CallTree(t) => *t,
        other => panic!("{other:?}"),
    }
}

/// The report's nodes in pre-order with their depth.
fn pre_order(node: &Value, depth: u16, out: &mut Vec<(Value, u16)>) {
    out.push((node.clone(), depth));
    for c in node["children"].as_array().unwrap() {
        pre_order(c, depth + 1, out);
    }
}

fn close(ns: i64, us: &Value, what: &str) {
    let b = us.as_f64().unwrap_or_else(|| panic!("{what}: {us}"));
    assert!((ns as f64 / 1e3 - b).abs() <= 1e-6 * b.abs().max(1.0), "{what}: {ns} ns != {b} us");
}

/// Every row equals the report's node at the same position; returns the rows.
fn assert_wire_equals_report(name: &str) -> usize {
    let mut engine = common::load_real(name);
    let wire = call_tree(&mut engine, None);
    let session = engine.session().unwrap();
    let trace = session.trace();
    let tree = build(trace, None);
    let json = kinetoscope::report::tree::json(trace, &tree, MIN_PCT);
    let mut nodes = Vec::new();
    pre_order(&json["root"], 0, &mut nodes);
    assert_eq!(wire.rows.len(), nodes.len(), "{name}");
    assert_eq!(Value::from(wire.nodes), json["nodes"], "{name}");
    assert_eq!(Value::from(wire.left_out), json["left_out"], "{name}");
    assert!(wire.left_out > 0 && wire.rows.len() > 10, "{name}: {} rows, {} left out", wire.rows.len(), wire.left_out);
    for (k, (r, (n, depth))) in wire.rows.iter().zip(&nodes).enumerate() {
        let what = format!("{name} row {k} {}", r.name);
        assert_eq!((Value::from(r.name.clone()), Value::from(r.kind.clone()), r.depth), (n["name"].clone(), n["kind"].clone(), *depth), "{what}");
        assert_eq!(Value::from(r.calls), n["calls"], "{what}");
        close(r.total_ns, &n["total_us"], &what);
        close(r.self_ns, &n["self_us"], &what);
        close(r.gpu_total_ns, &n["gpu_total_us"], &what);
        assert_eq!(r.first.as_ref().map(|f| Value::from(f.id)).unwrap_or(Value::Null), n["slice"], "{what}");
        match r.parent {
            Some(p) => assert_eq!(wire.rows[p as usize].depth + 1, r.depth, "{what}: parent"),
            None => assert_eq!(k, 0, "{what}: only the root has no parent"),
        }
    }
    wire.rows.len()
}

#[test]
fn h100_with_stack_rows_equal_the_report() {
    let rows = assert_wire_equals_report(H100);
    assert!(rows > 50, "{rows}");
}

#[test]
fn mi250_rows_equal_the_report() {
    assert_wire_equals_report(MI250);
}

#[test]
fn a_step_tree_is_within_the_whole_trace() {
    let mut engine = common::load_real(MI250);
    let whole = call_tree(&mut engine, None);
    let steps = engine.session().unwrap().steps(None);
    let step = steps.steps.first().expect("a step");
    let scoped = call_tree(&mut engine, Some((step.cpu_start_ns, step.cpu_end_ns)));
    assert!(scoped.rows[0].total_ns > 0 && scoped.rows[0].total_ns < whole.rows[0].total_ns, "{} vs {}", scoped.rows[0].total_ns, whole.rows[0].total_ns);
}
