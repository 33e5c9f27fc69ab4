//! The call tree (`analysis::call_tree`, `report --tree`) on every real fixture: a node's GPU
//! total is its own plus its children's; its CPU total is its self time plus its children's
//! wherever no two children overlap, and never more; the totals of every op-table row's nodes
//! sum to the row's CPU total (each event is in exactly one node); the root's GPU time is every
//! device activity with a launch call on a CPU thread, counted from the trace's columns.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::call_tree::{build, CallTree, NodeKind};
use kinetoscope::analysis::ops::{OpKind, OpOptions};
use kinetoscope::model::{ProcessKind, NONE};
use std::collections::HashMap;

/// Checks the sums of every node of `tree`; returns the nodes whose children overlap.
fn check_sums(name: &str, tree: &CallTree) -> usize {
    let mut overlapping = 0;
    for (i, n) in tree.nodes.iter().enumerate() {
        let kids = n.children.iter().map(|&c| &tree.nodes[c as usize]);
        let (cpu, gpu): (i64, i64) = kids.fold((0, 0), |(a, b), c| (a + c.total_ns, b + c.gpu_total_ns));
        assert_eq!(n.gpu_total_ns, n.gpu_self_ns + gpu, "{name}: node {i} GPU");
        assert!(n.self_ns >= 0, "{name}: node {i} self {}", n.self_ns);
        assert!(n.total_ns <= n.self_ns + cpu, "{name}: node {i} total {} > self {} + children {cpu}", n.total_ns, n.self_ns);
        overlapping += usize::from(n.total_ns != n.self_ns + cpu);
    }
    overlapping
}

#[test]
fn every_real_fixture_sums_and_equals_the_op_table() {
    let mut checked = 0;
    for path in common::real_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (engine, _) = common::load(&path);
        let session = engine.session().unwrap();
        let trace = session.trace();
        let tree = build(trace, None);
        let overlapping = check_sums(&name, &tree);
        // Only Python frames straddle each other's ends (with ProfilerStep#N); ops nest.
        let python = tree.nodes.iter().any(|n| n.kind == NodeKind::Python);
        if !python {
            assert_eq!(overlapping, 0, "{name}: children overlap without Python frames");
        }

        // Every op-table row: its events' time is the sum of its nodes' totals. A name that
        // nests under itself is left out: PyTorch merges such a child into its parent when it
        // is the only child (`_remove_dup_nodes`), which a call path keeps apart.
        let mut by_name: HashMap<String, (i64, u64)> = HashMap::new();
        let mut nested_in_itself: std::collections::HashSet<String> = Default::default();
        for (i, n) in tree.nodes.iter().enumerate().skip(1) {
            let label = tree.label(trace, i as u32).into_owned();
            if tree.nodes.get(n.parent as usize).is_some_and(|p| p.kind == n.kind && p.name == n.name) {
                nested_in_itself.insert(label.clone());
            }
            if matches!(n.kind, NodeKind::Op | NodeKind::Annotation | NodeKind::Runtime) {
                let e = by_name.entry(label).or_default();
                e.0 += n.total_ns;
                e.1 += n.calls;
            }
        }
        let table = session.op_table(&OpOptions::default());
        let (mut skipped, mut compared) = (0, 0);
        for row in table.rows.iter().filter(|r| r.kind != OpKind::Memory) {
            let Some(&(total, calls)) = by_name.get(&row.name) else { continue };
            if nested_in_itself.contains(&row.name) {
                skipped += 1;
                continue;
            }
            assert_eq!((total, calls), (row.cpu_total_ns, row.calls), "{name}: {}", row.name);
            compared += 1;
        }
        // 2020's traces record many ops twice, nested (resnet50: 25 of 78 names).
        assert!(skipped <= compared, "{name}: {skipped} names nest under themselves, {compared} compared");
        checked += compared;

        // GPU: every device activity launched from a CPU thread.
        let s = &trace.slices;
        let cpu_lane = |l: u32| trace.lanes.get(l as usize).and_then(|l| trace.processes.get(l.process as usize)).is_some_and(|p| p.kind == ProcessKind::Cpu);
        let device: i64 = (0..s.len())
            .filter(|&a| trace.class(s.cat[a]).is_device_activity() && s.launch[a] != NONE && cpu_lane(s.lane[s.launch[a] as usize].0))
            .map(|a| s.dur_ns[a])
            .sum();
        assert_eq!(tree.nodes[0].gpu_total_ns, device, "{name}: GPU time launched from the host");
    }
    assert!(checked > 1000, "op rows compared: {checked}");
}

/// A step's tree holds the slices starting in it: its root's CPU time is the step's threads'
/// top-level time, at most the whole trace's, and its sums hold.
#[test]
fn a_step_scope_keeps_what_starts_in_the_step() {
    let engine = common::load_real("kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz");
    let session = engine.session().unwrap();
    let trace = session.trace();
    let whole = build(trace, None);
    let step = trace.slices.name.iter().position(|&n| trace.strings.get(n) == "ProfilerStep#6").unwrap();
    let (a, b) = (trace.slices.start_ns[step], trace.slices.end_ns(step));
    let scoped = build(trace, Some((a, b)));
    assert_eq!(check_sums("step 6", &scoped), 0);
    assert!(scoped.nodes[0].total_ns < whole.nodes[0].total_ns);
    let labels: Vec<String> = scoped.nodes.iter().enumerate().skip(1).map(|(i, _)| scoped.label(trace, i as u32).into_owned()).collect();
    assert!(labels.iter().any(|l| l == "ProfilerStep#6") && !labels.iter().any(|l| l == "ProfilerStep#7"), "{labels:?}");
}

/// `report --tree --json`: `call_tree` has the root's totals and the kept nodes; the text's
/// first row is the busiest thread.
#[test]
fn report_tree_json_and_text() {
    let path = common::real("tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope")).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let p = path.to_str().unwrap();
    let doc: serde_json::Value = serde_json::from_str(&run(&["report", p, "--json", "--tree", "--min-pct", "3"])).unwrap();
    let t = &doc["call_tree"];
    assert_eq!(t["min_pct"], 3.0);
    let root = &t["root"];
    assert_eq!(root["kind"], "root");
    let kids: f64 = root["children"].as_array().unwrap().iter().map(|c| c["total_us"].as_f64().unwrap()).sum();
    assert!((root["total_us"].as_f64().unwrap() - kids).abs() < 1e-6, "threads sum to the root");
    // A kept node is at least 3% of the root's CPU or GPU time.
    fn walk(n: &serde_json::Value, cpu: f64, gpu: f64, count: &mut usize) {
        for c in n["children"].as_array().unwrap() {
            let share = |k: &str, whole: f64| whole > 0.0 && 100.0 * c[k].as_f64().unwrap() / whole >= 3.0;
            assert!(share("total_us", cpu) || share("gpu_total_us", gpu), "{}", c["name"]);
            *count += 1;
            walk(c, cpu, gpu, count);
        }
    }
    let mut kept = 0;
    walk(root, root["total_us"].as_f64().unwrap(), root["gpu_total_us"].as_f64().unwrap(), &mut kept);
    assert_eq!(kept + t["left_out"].as_u64().unwrap() as usize + 1, t["nodes"].as_u64().unwrap() as usize);
    assert!(kept > 50, "{kept}");
    let text = run(&["report", p, "--tree", "--min-pct", "3"]);
    let section = text.split("==== Call tree").nth(1).unwrap();
    assert!(section.lines().nth(2).unwrap().trim_end().ends_with("thread 19392 (python3)"), "{section}");
    assert!(section.lines().all(|l| l.chars().count() <= 120), "{section}");
}
