//! CUDA graphs (`analysis::graphs`, docs/definitions.md "CUDA graphs"): the synthetic graph
//! trace (`synth::graphs`, ground truth by construction: no public trace launches a CUDA graph
//! with `graph id` args), a hand-written near miss, and the two real ROCm fixtures: SGLang
//! (one `hipGraphLaunch` replaying 544 kernels) and vLLM (a capture, never launched).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::{graphs, idle};
use kinetoscope::answer::details::slice_details;
use kinetoscope::model::link::enclosing_op;
use kinetoscope::model::{CatClass, Trace};
use kinetoscope::synth::graphs::{GRAPH_ID, NODES, REPLAYS};

fn name(t: &Trace, i: u32) -> String {
    t.strings.get(t.slices.name[i as usize]).into_owned()
}

#[test]
fn synthetic_graph_trace_links_every_node_to_its_launch_and_op() {
    let (engine, _) = common::load_bytes("graphs.json", kinetoscope::synth::graphs::generate());
    let session = engine.session().unwrap();
    let t = session.trace();
    let g = graphs::analyze(t);
    let replays = REPLAYS as usize;
    // REPLAYS launches with kernels, plus the near miss with none.
    assert_eq!(g.launches.len(), replays + 1);
    assert_eq!(g.launches_with_kernels(), REPLAYS as u64);
    assert_eq!(g.empty_launches().len(), 1);
    for l in g.launches.iter().filter(|l| !l.kernels.is_empty()) {
        assert_eq!(l.kernels.len(), NODES);
        assert_eq!(l.graph_id, Some(GRAPH_ID));
        assert_eq!(name(t, l.call), "cudaGraphLaunch");
        for &k in &l.kernels {
            assert_eq!(t.slices.launch[k as usize], l.call, "the kernel's launch is its graph launch");
            let op = enclosing_op(t, l.call).unwrap();
            assert_eq!(name(t, op), "CUDAGraph::replay");
        }
    }
    // Near misses: a graphed kernel with no launch call; the eager warm-up is not graphed.
    assert_eq!(g.unlaunched.len(), 1);
    assert_eq!(t.slices.launch[g.unlaunched[0] as usize], kinetoscope::model::NONE);
    let kernels = (0..t.slices.len()).filter(|&i| t.class(t.slices.cat[i]) == CatClass::Kernel).count();
    assert_eq!(kernels, NODES * (replays + 1) + 1);
    assert_eq!(g.graphed_kernels as usize, NODES * replays + 1);
    assert!(g.graphed_share() > 0.8 && g.graphed_share() < 1.0, "{}", g.graphed_share());
    // Node arrows: one per consecutive pair of nodes in each replay, each inside one launch.
    assert_eq!(g.edges.len(), replays * (NODES - 1));
    assert!(g.edges.iter().all(|&(a, b)| t.slices.launch[a as usize] == t.slices.launch[b as usize]));
    // The call's ac2g flows fan out to every node (one `s`, NODES `f`).
    let call = g.launches[0].call;
    assert_eq!(t.flows.iter().filter(|f| f.from == call).count(), NODES);

    let launch = idle::analyze(t, None).launch;
    assert_eq!(launch.graph_launches, REPLAYS as u64);
    assert_eq!(launch.graph_kernels as usize, NODES * replays);
    assert_eq!(launch.kernels_per_graph_launch(), Some(NODES as f64));

    // The details panel: graph place, graph launch and node arrows (flows to the next node).
    let node = g.launches[0].kernels[0];
    let d = slice_details(t, session.index(), node).unwrap();
    let place = d.graph.unwrap();
    assert_eq!((place.graph_id, place.node_id), (Some(GRAPH_ID), Some((GRAPH_ID << 32) | 1)));
    assert_eq!((place.launch.unwrap().name.as_str(), place.launch_kernels as usize), ("cudaGraphLaunch", NODES));
    assert!(d.flows_out.iter().any(|r| r.id == g.launches[0].kernels[1]), "node 1 -> node 2");
    // The whole graph's arrows, for drawing on request: the launch's NODES - 1 edges, no other.
    let ids: Vec<(u32, u32)> = place.edges.iter().map(|(a, b)| (a.id, b.id)).collect();
    let first: Vec<(u32, u32)> = g.edges.iter().copied().filter(|&(a, _)| t.slices.launch[a as usize] == g.launches[0].call).collect();
    assert_eq!((ids.clone(), place.edges_total as usize), (first, NODES - 1));
    assert!(ids.contains(&(g.launches[0].kernels[0], g.launches[0].kernels[1])));
    let lone = slice_details(t, session.index(), g.unlaunched[0]).unwrap().graph.unwrap();
    assert_eq!((lone.edges.len(), lone.edges_total), (0, 0), "no launch, no graph to draw");
    let eager = (0..t.slices.len() as u32).find(|&i| t.class(t.slices.cat[i as usize]) == CatClass::Kernel).unwrap();
    assert!(slice_details(t, session.index(), eager).unwrap().graph.is_none(), "the warm-up kernel is not a node");

    let found = session.findings().to_vec();
    let f = found.iter().find(|f| f.rule == "cuda-graph").unwrap();
    assert!(f.title.contains(&format!("({REPLAYS} graph launches, {} kernels, 7.0 kernels per launch)", NODES * replays + 1)), "{}", f.title);
    assert!(f.why.contains("without a kernel recorded: 1;") && f.why.contains("without a graph launch call: 1;"), "{}", f.why);
    assert_eq!(f.evidence.slices[0], g.launches[0].call);
    assert_eq!(f.evidence.total as usize, replays + 2);
}

/// Near miss: `"graph id": 0` (CUPTI's value outside graphs) on a kernel launched by
/// `cudaLaunchKernel` is not graphed, and nothing fires.
#[test]
fn graph_id_zero_is_not_a_graph() {
    let (engine, _) = common::load_str(
        r#"[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":20},
        {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":5,"args":{"correlation":9}},
        {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":5,"args":{"correlation":9,"graph id":0,"graph node id":0}}]"#,
    );
    let session = engine.session().unwrap();
    let g = graphs::analyze(session.trace());
    assert_eq!((g.graphed_kernels, g.launches.len()), (0, 0));
    assert!(session.findings().iter().all(|f| f.rule != "cuda-graph"));
}

/// SGLang on MI300: one `hipGraphLaunch` (correlation 92178) whose kernels carry no graph id
/// but share its correlation. Independent count (python over the raw JSON): 544 of the 555
/// `kernel` events have correlation 92178, 9656.404 of 9765.437 µs.
#[test]
fn sglang_hip_graph_launch() {
    let engine = common::load_real("tracelens__sglang_Qwen3-8B_decode.json.gz");
    let session = engine.session().unwrap();
    let t = session.trace();
    let g = graphs::analyze(t);
    assert_eq!(g.launches.len(), 1);
    assert_eq!(name(t, g.launches[0].call), "hipGraphLaunch");
    assert_eq!(g.launches[0].kernels.len(), 544);
    assert_eq!(g.launches[0].graph_id, None);
    assert!((g.graphed_ns - 9_656_404).abs() <= 544, "{}", g.graphed_ns);
    assert!((g.kernel_ns - 9_765_437).abs() <= 555, "{}", g.kernel_ns);
    assert!(g.unlaunched.is_empty());
    let launch = idle::analyze(t, None).launch;
    assert_eq!((launch.graph_launches, launch.graph_kernels), (1, 544));
    let f = session.findings().iter().find(|f| f.rule == "cuda-graph").unwrap().clone();
    assert!(f.title.starts_with("98.9% of kernel time runs inside CUDA graphs (1 graph launches, 544 kernels"), "{}", f.title);
}

/// vLLM on MI300: `hipStreamBeginCapture` and no graph launch: the finding says so.
#[test]
fn vllm_capture_without_launch() {
    let engine = common::load_real("tracelens__vllm_decode_full__graph_capture_rank_0.pt.trace.json.gz");
    let session = engine.session().unwrap();
    let g = graphs::analyze(session.trace());
    assert_eq!((g.captures, g.launches.len(), g.graphed_kernels), (1, 0, 0));
    let f = session.findings().iter().find(|f| f.rule == "cuda-graph").unwrap().clone();
    assert_eq!(f.title, "CUDA graphs are captured (1 stream captures) but never launched in this trace");
    assert_eq!(f.evidence.slices.len(), 1);
}
