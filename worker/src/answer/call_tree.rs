//! The Flame tab's call tree: [`crate::analysis::call_tree`] flattened in pre-order, nodes under
//! [`MIN_PCT`]% of the root's CPU and GPU totals left out with their subtrees (counted), so the
//! answer stays a few thousand rows on a 1 GB trace while every node a flame graph can draw a
//! pixel wide on a 1000 px canvas is kept. Siblings and the threshold are `report --tree`'s.

use super::slice_ref;
use crate::analysis::call_tree::{self, NodeKind};
use crate::model::{Trace, NONE};
use crate::report::tree::MAX_DEPTH;
use protocol::{CallTreeData, CallTreeRow};

/// The share of the root's totals under which a node is left out, percent.
pub const MIN_PCT: f64 = 0.1;

/// The call tree of `trace`'s host work starting in `range` (ns; `None`: the whole trace).
pub fn flame(trace: &Trace, range: Option<(i64, i64)>) -> CallTreeData {
    let tree = call_tree::build(trace, range);
    let mut rows = Vec::new();
    // (node, depth, parent row), popped in pre-order.
    let mut stack: Vec<(u32, usize, Option<u32>)> = vec![(0, 0, None)];
    while let Some((i, depth, parent)) = stack.pop() {
        let Some(n) = tree.nodes.get(i as usize) else { continue };
        let row = rows.len() as u32;
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
        });
        if depth < MAX_DEPTH {
            stack.extend(tree.kept_children(i, MIN_PCT).into_iter().rev().map(|c| (c, depth + 1, Some(row))));
        }
    }
    let nodes = tree.nodes.len() as u32;
    CallTreeData { left_out: nodes.saturating_sub(rows.len() as u32), nodes, rows, min_pct: MIN_PCT }
}
