//! The schedule a graph implies and its critical path: every node at the latest of
//! `cause + weight` over its incoming edges (the source at the window's start), then the
//! binding edges walked back from the sink.

use super::graph::{Graph, REMOVED};
use super::{BoundBy, PathEvent, PathSegment, Shares, StepPath, TOP_EVENTS};
use crate::model::strings::FxHashMap;
use crate::model::NONE;

/// The path of `graph` under `weights` (one per edge).
pub(super) fn path(graph: &Graph, step: Option<u64>, weights: &[i64]) -> StepPath {
    let times = forward(graph, weights);
    let edges = binding_path(graph, weights, &times);
    let mut shares: Shares = [0; BoundBy::ALL.len()];
    let mut segments: Vec<PathSegment> = Vec::new();
    let mut per_slice: FxHashMap<u32, Shares> = FxHashMap::default();
    for &e in &edges {
        let edge = &graph.edges[e as usize];
        let (a, z) = (times[edge.from as usize], times[edge.to as usize]);
        if z <= a {
            continue;
        }
        shares[edge.class.index()] += z - a;
        if edge.slice != NONE {
            per_slice.entry(edge.slice).or_insert([0; BoundBy::ALL.len()])[edge.class.index()] += z - a;
        }
        match segments.last_mut() {
            Some(last) if last.slice == edge.slice && last.class == edge.class && last.end_ns == a => last.end_ns = z,
            _ => segments.push(PathSegment { start_ns: a, end_ns: z, slice: edge.slice, class: edge.class }),
        }
    }
    let (start, end) = span(graph, &times);
    let mut top: Vec<PathEvent> = per_slice
        .into_iter()
        .map(|(slice, by)| {
            let class = BoundBy::ALL.into_iter().max_by_key(|c| (by[c.index()], std::cmp::Reverse(c.index()))).unwrap_or(BoundBy::CpuOp);
            PathEvent { slice, class, ns: by.iter().sum() }
        })
        .collect();
    top.sort_by(|a, b| b.ns.cmp(&a.ns).then(a.slice.cmp(&b.slice)));
    top.truncate(TOP_EVENTS);
    StepPath { step, start_ns: start, end_ns: end, shares, segments, top, graph_size: (graph.time.len(), graph.edges.len()), sync_waits: graph.waits }
}

/// The path of `graph` under `weights` with its span and shares only (no segments, no top
/// events): what a what-if answer needs.
pub(super) fn shares(graph: &Graph, step: Option<u64>, weights: &[i64]) -> StepPath {
    let times = forward(graph, weights);
    let mut shares: Shares = [0; BoundBy::ALL.len()];
    for e in binding_path(graph, weights, &times) {
        let edge = &graph.edges[e as usize];
        shares[edge.class.index()] += (times[edge.to as usize] - times[edge.from as usize]).max(0);
    }
    let (start, end) = span(graph, &times);
    let graph_size = (graph.time.len(), graph.edges.len());
    StepPath { step, start_ns: start, end_ns: end, shares, segments: Vec::new(), top: Vec::new(), graph_size, sync_waits: graph.waits }
}

/// The window's start and the sink's time under the schedule `times`.
fn span(graph: &Graph, times: &[i64]) -> (i64, i64) {
    let start = graph.time.get(graph.source as usize).copied().unwrap_or(0);
    (start, times.get(graph.sink as usize).copied().unwrap_or(start).max(start))
}

/// The binding edges walked back from the sink, in time order.
fn binding_path(graph: &Graph, weights: &[i64], times: &[i64]) -> Vec<u32> {
    let mut edges = Vec::new();
    let mut node = graph.sink;
    // Each step back moves to an earlier node in the topological order, so this ends.
    for _ in 0..graph.time.len() {
        if node == graph.source {
            break;
        }
        let Some(edge) = binding(graph, weights, times, node) else {
            break;
        };
        edges.push(edge);
        node = graph.edges[edge as usize].from;
    }
    edges.reverse();
    edges
}

/// Every node's time under `weights`; nodes the order misses keep their observed time.
fn forward(graph: &Graph, weights: &[i64]) -> Vec<i64> {
    let mut times = graph.time.clone();
    for &node in &graph.order {
        if node == graph.source {
            continue;
        }
        let latest = graph
            .incoming(node)
            .iter()
            .filter(|&&e| weights[e as usize] > REMOVED)
            .map(|&e| times[graph.edges[e as usize].from as usize].saturating_add(weights[e as usize]))
            .max();
        if let Some(t) = latest {
            times[node as usize] = t;
        }
    }
    times
}

/// The incoming edge that sets `node`'s time: of those that reach it exactly, the one that
/// carries the most time (then the first built).
fn binding(graph: &Graph, weights: &[i64], times: &[i64], node: u32) -> Option<u32> {
    let t = times[node as usize];
    graph
        .incoming(node)
        .iter()
        .copied()
        .filter(|&e| {
            let w = weights[e as usize];
            w > REMOVED && times[graph.edges[e as usize].from as usize].saturating_add(w) == t
        })
        .max_by_key(|&e| (weights[e as usize], std::cmp::Reverse(e)))
}
