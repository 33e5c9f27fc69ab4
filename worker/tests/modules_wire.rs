//! The Modules tab and the Steps table's phase columns on the wire (`answer::modules`,
//! `answer::tables::steps`): what the page receives equals `report --json`'s `modules` and
//! `phases`, on the H100 bert trace (with_stack, one step, no phase markers), the MI250 toy
//! training (phase markers) and a PyTorch CPU training run (module calls in three steps).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::engine::Engine;
use kinetoscope::report::trace::{ReportOptions, TraceReport};
use protocol::{Answer, CellValue, ModulesData, Query, TableData};
use serde_json::Value;

const H100: &str = "tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz";
const MI250: &str = "hta__mi250_minitoy_train_ROCm6_2_kineto.json.gz";

fn modules(engine: &mut Engine, range_ns: Option<(i64, i64)>) -> ModulesData {
    match engine.query(&Query::Modules { range_ns }).unwrap().0 {
        Answer::Modules(m) => *m,
        other => panic!("{other:?}"),
    }
}

fn report(engine: &Engine) -> Value {
    TraceReport::build(engine.session().unwrap(), ReportOptions::default()).json()
}

/// µs as the report writes them, from ns.
fn us(ns: i64) -> f64 {
    ns as f64 / 1e3
}

fn close(a: f64, b: &Value, what: &str) {
    let b = b.as_f64().unwrap_or_else(|| panic!("{what}: {b}"));
    assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{what}: {a} != {b}");
}

/// Every row equals the report's node at the same position; each earliest call is a counted
/// call of that module.
fn assert_wire_equals_report(engine: &mut Engine) -> usize {
    let wire = modules(engine, None);
    let json = report(engine)["modules"].clone();
    let nodes = json["nodes"].as_array().unwrap();
    assert_eq!(wire.rows.len(), nodes.len());
    assert_eq!(Value::Bool(wire.backward_tied), json["backward_tied"]);
    for (r, n) in wire.rows.iter().zip(nodes) {
        let what = |k: &str| format!("{} {k}", r.name);
        assert_eq!((Value::from(r.name.clone()), Value::from(r.module_id), Value::from(r.depth)), (n["name"].clone(), n["module_id"].clone(), n["depth"].clone()));
        assert_eq!(Value::from(r.occurrences), n["occurrences"], "{}", what("occurrences"));
        close(us(r.host_ns), &n["host_us"], &what("host"));
        close(us(r.self_host_ns), &n["self_host_us"], &what("self host"));
        close(us(r.device_ns), &n["device_us"], &what("device"));
        close(us(r.self_device_ns), &n["self_device_us"], &what("self device"));
        match r.backward_device_ns {
            Some(ns) => close(us(ns), &n["backward_device_us"], &what("backward")),
            None => assert!(n["backward_device_us"].is_null()),
        }
        let first = r.first.as_ref();
        assert_eq!(first.is_some(), r.occurrences > 0, "{}", what("first"));
        if let Some(f) = first {
            assert_eq!(f.name, format!("nn.Module: {}", r.name));
        }
    }
    wire.rows.len()
}

#[test]
fn module_rows_equal_the_report() {
    let mut engine = common::load_real(H100);
    assert_eq!(assert_wire_equals_report(&mut engine), 84);
    let shared = common::shared().join("fixtures");
    let (mut engine, _) = common::load(&shared.join("torch-cpu-memory/mlp_adam.pt.trace.json"));
    assert!(assert_wire_equals_report(&mut engine) > 0);
    // A trace without nn.Module frames answers an empty tree.
    let mut engine = common::load_real(MI250);
    assert!(modules(&mut engine, None).rows.is_empty());
}

/// Scoped to each step, the tree keeps its rows; each module's calls over the steps add up to
/// at most its calls in the whole trace, and a step's earliest call starts in that step.
#[test]
fn step_scope_splits_the_calls() {
    let shared = common::shared().join("fixtures");
    let (mut engine, _) = common::load(&shared.join("torch-cpu-memory/mlp_adam.pt.trace.json"));
    let whole = modules(&mut engine, None);
    let steps = engine.session().unwrap().steps(None);
    assert!(steps.steps.len() >= 2);
    let mut sum = vec![0u32; whole.rows.len()];
    for st in &steps.steps {
        let range = (st.cpu_start_ns, st.cpu_end_ns);
        let scoped = modules(&mut engine, Some(range));
        assert_eq!(scoped.rows.len(), whole.rows.len());
        for (k, r) in scoped.rows.iter().enumerate() {
            sum[k] += r.occurrences;
            if let Some(f) = &r.first {
                assert!(range.0 <= f.start_ns && f.start_ns < range.1, "{}", r.name);
            }
        }
    }
    for (r, n) in whole.rows.iter().zip(&sum) {
        assert!(*n <= r.occurrences, "{}: {n} > {}", r.name, r.occurrences);
    }
    assert!(sum.iter().sum::<u32>() > 0, "modules are called inside the steps");
}

fn steps_table(engine: &mut Engine) -> TableData {
    match engine.query(&Query::Steps { workload: Default::default() }).unwrap().0 {
        Answer::Table(t) => t,
        other => panic!("{other:?}"),
    }
}

/// The Steps table's phase columns equal `report --json`'s `phases`; a phase the trace cannot
/// tell apart is empty and its column says why.
#[test]
fn steps_table_phases_equal_the_report() {
    let shared = common::shared().join("fixtures");
    let mut told = 0;
    for mut engine in [common::load_real(H100), common::load_real(MI250), common::load(&shared.join("torch-cpu-memory/mlp_adam.pt.trace.json")).0] {
        let table = steps_table(&mut engine);
        let phases = report(&engine)["phases"].clone();
        let untold: Vec<&str> = phases["not_told_apart"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        let json_steps = phases["steps"].as_array().unwrap();
        assert_eq!(table.rows.len(), json_steps.len());
        for (row, js) in table.rows.iter().zip(json_steps) {
            let cell = |key: &str| &row[table.columns.iter().position(|c| c.key == key).unwrap()];
            for ph in ["data_loading", "forward", "backward", "optimizer"] {
                let column = table.columns.iter().find(|c| c.key == format!("phase_{ph}_cpu")).unwrap();
                assert_eq!(column.note.is_some(), untold.contains(&ph), "{ph}");
                for side in ["cpu", "gpu"] {
                    match cell(&format!("phase_{ph}_{side}")) {
                        CellValue::Int(ns) => {
                            close(us(*ns), &js[format!("{side}_us")][ph], ph);
                            told += 1;
                        }
                        CellValue::Empty => assert!(untold.contains(&ph), "{ph} empty but told"),
                        other => panic!("{other:?}"),
                    }
                }
            }
            let CellValue::Int(exposed) = cell("comm_exposed") else { panic!() };
            close(us(*exposed), &js["communication_exposed_us"], "exposed");
        }
    }
    assert!(told > 0);
}
