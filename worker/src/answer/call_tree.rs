//! The Flame tab's call tree: [`crate::analysis::call_tree`] flattened in pre-order, nodes under
//! [`MIN_PCT`]% of the root's CPU and GPU totals left out with their subtrees (counted), so the
//! answer stays a few thousand rows on a 1 GB trace while every node a flame graph can draw a
//! pixel wide on a 1000 px canvas is kept. Siblings and the threshold are `report --tree`'s.
//! Against a baseline, rows carry the baseline's totals of the same call path
//! ([`call_tree::diff`]) and their growth.

use super::slice_ref;
use crate::analysis::call_tree::{self, CallTreeDiff, Growth, NodeKind};
use crate::model::{Trace, NONE};
use crate::report::tree::MAX_DEPTH;
use protocol::{CallTreeData, CallTreeRow};

/// The share of the root's totals under which a node is left out, percent.
pub const MIN_PCT: f64 = 0.1;

/// The call tree of `trace`'s host work starting in `range` (ns; `None`: the whole trace);
/// with `baseline` (a whole trace), each row also carries the same call path's totals there.
pub fn flame(trace: &Trace, range: Option<(i64, i64)>, baseline: Option<&Trace>) -> CallTreeData {
    let tree = call_tree::build(trace, range);
    let mut rows = Vec::new();
    // Per row, its node of the tree.
    let mut nodes = Vec::new();
    // (node, depth, parent row), popped in pre-order.
    let mut stack: Vec<(u32, usize, Option<u32>)> = vec![(0, 0, None)];
    while let Some((i, depth, parent)) = stack.pop() {
        let Some(n) = tree.nodes.get(i as usize) else { continue };
        let row = rows.len() as u32;
        nodes.push(i);
        rows.push(CallTreeRow {
            name: tree.label(trace, i).into_owned(),
            kind: n.kind.key().to_owned(),
            depth: depth as u16,
            parent,
            calls: n.calls,
            total_ns: n.total_ns,
            self_ns: n.self_ns,
            gpu_total_ns: n.gpu_total_ns,
            first: (n.kind != NodeKind::Root && n.first_slice != NONE).then(|| slice_ref(trace, n.first_slice)).flatten(),
            base_ns: None,
            growth: None,
        });
        if depth < MAX_DEPTH {
            stack.extend(tree.kept_children(i, MIN_PCT).into_iter().rev().map(|c| (c, depth + 1, Some(row))));
        }
    }
    if let Some(base) = baseline {
        let merged = call_tree::diff((base, &call_tree::build(base, None)), (trace, &tree));
        with_baseline(&mut rows, &nodes, &merged);
    }
    let all = tree.nodes.len() as u32;
    CallTreeData { left_out: all.saturating_sub(rows.len() as u32), nodes: all, rows, min_pct: MIN_PCT, against_baseline: baseline.is_some() }
}

/// Fills each row's baseline totals and growth from `merged`; `nodes[k]`: row `k`'s node of
/// the current tree.
fn with_baseline(rows: &mut [CallTreeRow], nodes: &[u32], merged: &CallTreeDiff) {
    for (r, &i) in rows.iter_mut().zip(nodes) {
        let Some(n) = merged.current.get(i as usize).and_then(|&m| merged.nodes.get(m as usize)) else { continue };
        r.base_ns = Some((n.total_ns[0], n.gpu_total_ns[0]));
        let growth = |s: [i64; 2]| Growth::of(s[0], s[1]).key().to_owned();
        r.growth = Some((growth(n.total_ns), growth(n.gpu_total_ns)));
    }
}
