//! The details panel's content on the wire: the index's [`Details`](crate::index::Details)
//! with names resolved, args split into (key, value text) pairs, and related slices as
//! [`SliceRef`]s; for a kernel in a CUDA graph its graph place, for a Triton kernel or op its
//! source.

use super::slice_ref;
use crate::index::{details, Index};
use crate::json::{unescape, Cursor};
use crate::analysis::args::ArgKey;
use crate::analysis::graphs;
use crate::analysis::source::SourceKeys;
use crate::model::{CatClass, Trace};
use protocol::{GraphNode, KernelSource, SliceDetails, SliceKey, SliceRef, GRAPH_EDGES_MAX};

/// Details of slice `id`, or `None` for an unknown id.
pub fn slice_details(trace: &Trace, index: &Index, id: u32) -> Option<SliceDetails> {
    let d = index.details(trace, id)?;
    let key = details::stable_key(trace, id)?;
    let refs = |ids: &[u32]| -> Vec<SliceRef> {
        ids.iter().filter_map(|&i| slice_ref(trace, i)).collect()
    };
    let one = |i: Option<u32>| i.and_then(|i| slice_ref(trace, i));
    // A device activity without a correlation link may still have a flow from its launch.
    let launched_by = one(d.launch).or_else(|| {
        d.flows_in
            .iter()
            .find(|f| is_runtime(trace, f.from))
            .and_then(|f| slice_ref(trace, f.from))
    });
    let lane_name = trace
        .lanes
        .get(d.lane.0 as usize)
        .map(|l| trace.strings.get(l.name).into_owned())
        .unwrap_or_default();
    Some(SliceDetails {
        slice: slice_ref(trace, id)?,
        key: SliceKey {
            lane: key.lane,
            start_ns: key.start_ns,
            name: key.name,
            nth: key.nth,
        },
        cat: d.cat,
        lane_name,
        row: d.row,
        self_ns: d.self_ns,
        args: arg_pairs(d.args.as_bytes()),
        parent: one(d.parent),
        children: refs(&d.children),
        children_total: d.children_total,
        launched_by,
        launched: refs(&d.launched),
        flows_in: d.flows_in.iter().filter_map(|f| slice_ref(trace, f.from)).collect(),
        flows_out: d.flows_out.iter().filter_map(|f| slice_ref(trace, f.to)).collect(),
        op: one(d.op),
        graph: graph_node(trace, id, d.launch, index),
        source: source(trace, id),
        // Added by the engine for `Query::Details` (`super::roofline::slice_work`).
        work: None,
    })
}

/// The graph place of kernel `id` launched by `launch`: a non-zero `graph id`, or a graph
/// launch call (`analysis::graphs`).
fn graph_node(trace: &Trace, id: u32, launch: Option<u32>, index: &Index) -> Option<GraphNode> {
    let s = &trace.slices;
    if trace.class(*s.cat.get(id as usize)?) != CatClass::Kernel {
        return None;
    }
    let text = trace.args_text(s.args[id as usize]);
    let args = text.as_bytes();
    let graph_id = ArgKey::new("graph id").i64(args).filter(|&g| g != 0);
    let launch = launch.filter(|&l| graphs::is_graph_launch(&trace.strings.get(s.name[l as usize])));
    if graph_id.is_none() && launch.is_none() {
        return None;
    }
    let edges: Vec<(u32, u32)> = launch.map_or_else(Vec::new, |l| graphs::launch_edges(trace, l));
    Some(GraphNode {
        graph_id,
        node_id: graph_id.and_then(|_| ArgKey::new("graph node id").i64(args)),
        launch: launch.and_then(|l| slice_ref(trace, l)),
        launch_kernels: launch.and_then(|l| index.details(trace, l)).map_or(0, |d| d.launched_total),
        edges_total: edges.len() as u32,
        edges: edges
            .into_iter()
            .filter_map(|(a, b)| Some((slice_ref(trace, a)?, slice_ref(trace, b)?)))
            .take(GRAPH_EDGES_MAX)
            .collect(),
    })
}

/// The source of a compiled kernel (from its launching op) or of the op itself.
fn source(trace: &Trace, id: u32) -> Option<KernelSource> {
    let keys = SourceKeys::default();
    let class = trace.class(*trace.slices.cat.get(id as usize)?);
    let src = if class.is_device_activity() { keys.of_kernel(trace, id) } else { keys.of_op(trace, id) }?;
    Some(KernelSource { op: slice_ref(trace, src.op), file: src.file, line: src.line, function: src.function })
}

/// The slice a stable key names in this trace.
pub fn resolve(trace: &Trace, key: &SliceKey) -> Option<u32> {
    details::find_stable(
        trace,
        &details::StableKey {
            lane: key.lane,
            start_ns: key.start_ns,
            name: key.name.clone(),
            nth: key.nth,
        },
    )
}

fn is_runtime(trace: &Trace, id: u32) -> bool {
    trace
        .slices
        .cat
        .get(id as usize)
        .is_some_and(|&c| trace.class(c) == CatClass::Launch)
}

/// The top-level members of a minified args object as (key, raw value text), in file order.
/// Stops quietly at the first syntax problem (the model only stores well-formed args).
pub fn arg_pairs(args: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut c = Cursor::new(args, 0);
    if c.expect(b'{', "").is_err() {
        return out;
    }
    loop {
        match c.peek_nonws() {
            Some(b'}') | None => return out,
            Some(b',') => c.pos += 1,
            Some(_) => {}
        }
        let Ok(key) = c.string() else { return out };
        if c.expect(b':', "").is_err() {
            return out;
        }
        c.peek_nonws();
        let from = c.pos;
        if c.skip_value().is_err() {
            return out;
        }
        let value = String::from_utf8_lossy(&args[from..c.pos]).into_owned();
        out.push((unescape(key), value));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::arg_pairs;

    #[test]
    fn splits_args_in_file_order() {
        let pairs = arg_pairs(br#"{"z":1,"grid":[1,2,3],"name":"a\"b","o":{"k":[]}}"#);
        let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "grid", "name", "o"]);
        assert_eq!(pairs[1].1, "[1,2,3]");
        assert_eq!(pairs[2].1, r#""a\"b""#);
        assert_eq!(pairs[3].1, r#"{"k":[]}"#);
        assert!(arg_pairs(b"{}").is_empty());
        assert!(arg_pairs(b"").is_empty());
        assert_eq!(arg_pairs(br#"{"a":1,"b""#).len(), 1);
    }
}
