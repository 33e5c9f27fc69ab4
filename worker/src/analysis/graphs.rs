//! CUDA graphs: which kernels ran inside a graph, which `cudaGraphLaunch` call launched them, and
//! the dependency edges between graph nodes (docs/definitions.md, "CUDA graphs").
//!
//! Format (Kineto, cited in docs/definitions.md): a graphed kernel carries `"graph id"` and
//! `"graph node id"` args (`libkineto/src/CudaMetadataFields.h`); every kernel of one replay
//! shares the `correlation` of its `cudaGraphLaunch` (`hipGraphLaunch`, `cuGraphLaunch`), so the
//! model's correlation link (`model::link`) already points each kernel at its launch call and,
//! through it, at the enclosing CPU op. Dependency edges between nodes are flows from one
//! graphed kernel to another of the same graph (PyTorch's graph-dependency export draws them as
//! flow events, pytorch/pytorch#190850); any flow category counts, since the edge is told by
//! its two ends.
//!
//! A kernel runs inside a graph when it has a non-zero graph id (CUPTI writes 0 outside graphs)
//! or when its launch call is a graph launch: ROCm traces write no graph id, but their kernels
//! share the `hipGraphLaunch`'s correlation all the same (the SGLang MI300 fixture). Captures (`cudaStreamBeginCapture` / `hipStreamBeginCapture`) are counted so a
//! trace that captures graphs but never launches one can say so.
//!
//! Cost: one pass over the slices with an args lookup per kernel, one pass over the flows.

use super::args::ArgKey;
use crate::model::{CatClass, Trace, NONE};

/// One graph launch call and the kernels it launched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GraphLaunch {
    /// The launch call (`cudaGraphLaunch` ...).
    pub call: u32,
    /// Graph id of its kernels (the first one's), none when none carries one.
    pub graph_id: Option<i64>,
    /// The kernels it launched, in slice order.
    pub kernels: Vec<u32>,
}

/// Everything the trace says about CUDA graphs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Graphs {
    /// Every graph launch call, in slice order (lane, then time).
    pub launches: Vec<GraphLaunch>,
    /// Kernels inside a graph: a non-zero graph id, or launched by a graph launch call.
    pub graphed_kernels: u64,
    /// Their total duration, ns.
    pub graphed_ns: i64,
    /// Total duration of all kernels, ns.
    pub kernel_ns: i64,
    /// Graphed kernels whose launch is not a graph launch call (or missing), in slice order.
    pub unlaunched: Vec<u32>,
    /// Dependency edges between graph nodes: (from kernel, to kernel).
    pub edges: Vec<(u32, u32)>,
    /// Stream-capture begin calls (graphs being recorded).
    pub captures: u64,
}

impl Graphs {
    /// Graph launch calls that launched at least one kernel.
    pub fn launches_with_kernels(&self) -> u64 {
        self.launches.iter().filter(|l| !l.kernels.is_empty()).count() as u64
    }

    /// Graph launch calls with no kernel recorded, in slice order.
    pub fn empty_launches(&self) -> Vec<u32> {
        self.launches.iter().filter(|l| l.kernels.is_empty()).map(|l| l.call).collect()
    }

    /// Share of kernel time spent in graphed kernels (0 without kernels).
    pub fn graphed_share(&self) -> f64 {
        if self.kernel_ns <= 0 {
            0.0
        } else {
            self.graphed_ns as f64 / self.kernel_ns as f64
        }
    }
}

/// Graph launch calls of the CUDA runtime and driver and of HIP.
pub fn is_graph_launch(name: &str) -> bool {
    ["cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"].iter().any(|p| name.starts_with(p))
}

/// Stream-capture begin calls.
pub fn is_capture_begin(name: &str) -> bool {
    ["cudaStreamBeginCapture", "cuStreamBeginCapture", "hipStreamBeginCapture"].iter().any(|p| name.starts_with(p))
}

/// The graph analysis of `trace`.
pub fn analyze(trace: &Trace) -> Graphs {
    let s = &trace.slices;
    let (graph_key, name_flags) = (ArgKey::new("graph id"), name_flags(trace));
    let mut out = Graphs::default();
    // Launch call slice -> index into `out.launches`.
    let mut call_index = vec![u32::MAX; s.len()];
    for (i, slot) in call_index.iter_mut().enumerate() {
        let flags = name_flags.get(s.name[i].0 as usize).copied().unwrap_or(0);
        match trace.class(s.cat[i]) {
            CatClass::Launch if flags & GRAPH_LAUNCH != 0 => {
                *slot = out.launches.len() as u32;
                out.launches.push(GraphLaunch { call: i as u32, ..GraphLaunch::default() });
            }
            CatClass::Launch if flags & CAPTURE != 0 => out.captures += 1,
            _ => {}
        }
    }
    let mut graph_of = vec![0i64; s.len()];
    let mut reader = trace.args.reader();
    for i in (0..s.len()).filter(|&i| trace.class(s.cat[i]) == CatClass::Kernel) {
        out.kernel_ns += s.dur_ns[i];
        let args = reader.bytes(s.args[i]);
        let graph = graph_key.i64(args).filter(|&g| g != 0);
        let launch = s.launch[i];
        let call = call_index.get(launch as usize).copied().filter(|&k| launch != NONE && k != u32::MAX);
        if graph.is_none() && call.is_none() {
            continue;
        }
        out.graphed_kernels += 1;
        out.graphed_ns += s.dur_ns[i];
        match call {
            Some(k) => {
                let l = &mut out.launches[k as usize];
                if let Some(g) = graph {
                    l.graph_id.get_or_insert(g);
                }
                l.kernels.push(i as u32);
            }
            None => out.unlaunched.push(i as u32),
        }
        // Edges join nodes of one graph; HIP writes no graph id, so its launch stands in.
        graph_of[i] = graph.unwrap_or(-1 - i64::from(call.unwrap_or(0)));
    }
    out.edges = trace
        .flows
        .iter()
        .filter(|f| {
            let (a, b) = (graph_of.get(f.from as usize), graph_of.get(f.to as usize));
            matches!((a, b), (Some(&x), Some(&y)) if x != 0 && x == y)
        })
        .map(|f| (f.from, f.to))
        .collect();
    out
}

/// The dependency edges between the kernels graph launch call `call` ran: flows whose two ends
/// it launched, in flow order. One pass over the flows, for one details answer.
pub fn launch_edges(trace: &Trace, call: u32) -> Vec<(u32, u32)> {
    let launch = &trace.slices.launch;
    let by_call = |k: u32| launch.get(k as usize) == Some(&call);
    trace.flows.iter().filter(|f| by_call(f.from) && by_call(f.to)).map(|f| (f.from, f.to)).collect()
}

const GRAPH_LAUNCH: u8 = 1;
const CAPTURE: u8 = 2;

/// Per string id: whether it names a graph launch or a capture begin (strings are few, slices
/// many).
fn name_flags(trace: &Trace) -> Vec<u8> {
    (0..trace.strings.len() as u32)
        .map(|k| {
            let name = trace.strings.get(crate::model::StrId(k));
            u8::from(is_graph_launch(&name)) * GRAPH_LAUNCH + u8::from(is_capture_begin(&name)) * CAPTURE
        })
        .collect()
}
