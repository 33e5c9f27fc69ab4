//! Search and event details on real fixtures: match counts equal an independent count (names
//! plus serde_json-decoded arg values), next / previous walk the matches in time order, and
//! details (children, self time, flows, launch / launched, stable keys) equal brute force.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::index::details::{find_stable, stable_key, LIST_CAP};
use kinetoscope::index::{Cursor, Index, Query};
use kinetoscope::model::{StrId, Trace, NONE};
use serde_json::Value;

fn trace_of(path: &std::path::Path) -> Trace {
    let (engine, _) = common::load(path);
    engine.trace().unwrap().clone()
}

/// Leaf texts of an args object: string contents, numbers and literals (keys excluded).
fn leaves(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.values().for_each(|x| leaves(x, out)),
        Value::Array(a) => a.iter().for_each(|x| leaves(x, out)),
        Value::String(s) => out.push(s.clone()),
        other => out.push(other.to_string()),
    }
}

/// Independent matcher (`args` already lowercased): lowercase both sides, substring of the name or of any leaf value.
fn independent(trace: &Trace, args: &[Vec<String>], text: &str) -> Vec<u32> {
    let needle = text.to_ascii_lowercase();
    let s = &trace.slices;
    let names: Vec<bool> = (0..trace.strings.len() as u32)
        .map(|i| {
            trace
                .strings
                .get(StrId(i))
                .to_ascii_lowercase()
                .contains(&needle)
        })
        .collect();
    let mut ids: Vec<u32> = (0..s.len() as u32)
        .filter(|&id| {
            names[s.name[id as usize].0 as usize]
                || args[id as usize].iter().any(|v| v.contains(&needle))
        })
        .collect();
    ids.sort_by_key(|&id| (s.start_ns[id as usize], id));
    ids
}

fn decoded_args(trace: &Trace) -> Vec<Vec<String>> {
    (0..trace.slices.len())
        .map(|i| {
            let text = trace.args_text(trace.slices.args[i]);
            let mut out = Vec::new();
            if !text.is_empty() {
                leaves(&serde_json::from_str(&text).unwrap(), &mut out);
            }
            out.iter_mut().for_each(|v| v.make_ascii_lowercase());
            out
        })
        .collect()
}

const QUERIES: &[&str] = &[
    "aten::",
    "cudaLaunchKernel",
    "GEMM",
    "memcpy",
    "float",
    "ProfilerStep",
    "nccl",
    "256",
    "grid",
    "Input Dims",
    "sgemm_128",
    "c10::",
    "zzz-no-such-text",
];

#[test]
fn counts_and_first_matches_equal_an_independent_count() {
    let mut checked = 0;
    for path in common::real_fixtures() {
        let trace = trace_of(&path);
        let index = Index::build(&trace);
        let args = decoded_args(&trace);
        let mut queries: Vec<String> = QUERIES.iter().map(|q| q.to_string()).collect();
        // Texts taken from the trace: part of a name, and a string arg value.
        if let Some(&name) = trace.slices.name.get(trace.slices.len() / 2) {
            let n = trace.strings.get(name).into_owned();
            queries.push(n.chars().take(12).collect());
        }
        if let Some(v) = args
            .iter()
            .flatten()
            .find(|v| v.len() > 3 && v.is_ascii() && !v.contains('\\'))
        {
            queries.push(v.clone());
        }
        for q in &queries {
            let want = independent(&trace, &args, q);
            let got = index.search(&trace, q, 50);
            assert_eq!(got.total, want.len() as u64, "{path:?} {q:?}");
            assert_eq!(
                got.ids,
                want.iter().take(50).copied().collect::<Vec<_>>(),
                "{path:?} {q:?}"
            );
            checked += got.total;
        }
    }
    assert!(checked > 10_000, "only {checked} matches checked");
}

#[test]
fn next_and_previous_walk_the_matches_in_time_order() {
    let trace = trace_of(&common::real(
        "param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json",
    ));
    let index = Index::build(&trace);
    let args = decoded_args(&trace);
    for q in ["aten::mm", "cudaLaunchKernel", "nccl"] {
        let query = Query::new(&trace, &index, q);
        let want = independent(&trace, &args, q);
        assert!(!want.is_empty() && want.len() < 5000, "{q}: {}", want.len());
        let mut forward = Vec::new();
        let mut at = query.next(&trace, Cursor::Time(i64::MIN));
        while let Some(id) = at {
            forward.push(id);
            at = query.next(&trace, Cursor::Slice(id));
        }
        assert_eq!(forward, want, "{q} forward");
        let mut backward = Vec::new();
        let mut at = query.prev(&trace, Cursor::Time(i64::MAX));
        while let Some(id) = at {
            backward.push(id);
            at = query.prev(&trace, Cursor::Slice(id));
        }
        backward.reverse();
        assert_eq!(backward, want, "{q} backward");
        // From a time: the first match starting at or after it, the last one before it.
        let mid = trace.slices.start_ns[want[want.len() / 2] as usize];
        let after = want
            .iter()
            .copied()
            .find(|&id| trace.slices.start_ns[id as usize] >= mid);
        let before = want
            .iter()
            .copied()
            .rev()
            .find(|&id| trace.slices.start_ns[id as usize] < mid);
        assert_eq!(query.next(&trace, Cursor::Time(mid)), after);
        assert_eq!(query.prev(&trace, Cursor::Time(mid)), before);
    }
    let empty = Query::new(&trace, &index, "");
    assert_eq!(empty.run(&trace, 10).total, 0);
    assert_eq!(empty.next(&trace, Cursor::Time(0)), None);
    assert_eq!(
        Query::new(&trace, &index, "x").next(&trace, Cursor::Slice(NONE)),
        None
    );
}

#[test]
fn arg_values_match_but_keys_do_not() {
    let trace = trace_of(&common::real("gpumodel__trace.json"));
    let index = Index::build(&trace);
    let kernels = index.search(&trace, "[100,50,1]", 10);
    assert_eq!(kernels.total, 5, "the five gemm kernels");
    assert!(kernels
        .ids
        .iter()
        .all(|&k| trace.strings.get(trace.slices.cat[k as usize]) == "kernel"));
    assert_eq!(index.search(&trace, "registers per thread", 10).total, 0);
    assert_eq!(
        index.search(&trace, "AMPERE_FP16", 10).total,
        index.search(&trace, "ampere_fp16", 10).total
    );
}

#[test]
fn kernel_details_show_args_launch_and_flows() {
    let trace = trace_of(&common::real("gpumodel__trace.json"));
    let index = Index::build(&trace);
    let s = &trace.slices;
    let name = "ampere_fp16_s16816gemm_fp16_128x256_ldg8_f2f_stages_64x3_nn";
    let kernel = (0..s.len() as u32)
        .find(|&i| trace.strings.get(s.name[i as usize]) == name)
        .unwrap();
    let d = index.details(&trace, kernel).unwrap();
    assert_eq!((d.name.as_str(), d.cat.as_str()), (name, "kernel"));
    assert!(
        d.args.contains(r#""grid":[100,50,1]"#) && d.args.contains(r#""block":[256,1,1]"#),
        "{}",
        d.args
    );
    assert_eq!(d.dur_ns, 15_723_942);
    assert_eq!(d.self_ns, d.dur_ns);
    let launch = d.launch.unwrap();
    assert_eq!(
        trace.strings.get(s.name[launch as usize]),
        "cudaLaunchKernel"
    );
    assert!(
        d.flows_in
            .iter()
            .any(|f| f.from == launch && trace.strings.get(f.cat) == "ac2g"),
        "{:?}",
        d.flows_in
    );
    assert!(d.op.is_some());
    let l = index.details(&trace, launch).unwrap();
    assert_eq!(l.launched, vec![kernel]);
    assert_eq!(l.launched_total, 1);
    assert!(l.flows_out.iter().any(|f| f.to == kernel));
    assert_eq!(l.op, d.op);
    assert!(trace
        .strings
        .get(s.name[l.op.unwrap() as usize])
        .starts_with("aten::"));
    assert!(index.details(&trace, NONE).is_none());
}

#[test]
fn details_equal_brute_force_on_every_real_fixture() {
    for path in common::real_fixtures() {
        let trace = trace_of(&path);
        let index = Index::build(&trace);
        let s = &trace.slices;
        let n = s.len();
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut launched: Vec<Vec<u32>> = vec![Vec::new(); n];
        for i in 0..n {
            if s.parent[i] != NONE {
                children[s.parent[i] as usize].push(i as u32);
            }
            if s.launch[i] != NONE {
                launched[s.launch[i] as usize].push(i as u32);
            }
        }
        let step = (n / 3000).max(1);
        for i in (0..n).step_by(step) {
            let id = i as u32;
            let d = index.details(&trace, id).unwrap();
            let kids = &children[i];
            assert_eq!(d.children_total as usize, kids.len(), "{path:?} {id}");
            assert_eq!(
                d.children,
                kids.iter().take(LIST_CAP).copied().collect::<Vec<_>>()
            );
            let sum: i64 = kids.iter().map(|&c| s.dur_ns[c as usize]).sum();
            assert_eq!(d.self_ns, (s.dur_ns[i] - sum).max(0));
            let flows_in: Vec<_> = trace.flows.iter().filter(|f| f.to == id).copied().collect();
            let flows_out: Vec<_> = trace
                .flows
                .iter()
                .filter(|f| f.from == id)
                .copied()
                .collect();
            assert_eq!(d.flows_in, flows_in);
            assert_eq!(d.flows_out, flows_out);
            // A CUDA-graph launch (SGLang decode) launches more than the list holds.
            assert_eq!(d.launched_total as usize, launched[i].len(), "{path:?} {id}");
            assert_eq!(d.launched, launched[i].iter().take(LIST_CAP).copied().collect::<Vec<_>>());
            assert_eq!(d.parent, (s.parent[i] != NONE).then_some(s.parent[i]));
            let key = stable_key(&trace, id).unwrap();
            assert_eq!(find_stable(&trace, &key), Some(id), "{key:?}");
        }
    }
}
