//! The Flame tab on the wire: the call tree (callers -> callees over Python frames, ranges, ops
//! and runtime calls) flattened in pre-order, nodes too small to draw left out and counted.

use crate::SliceRef;
use serde::{Deserialize, Serialize};

/// The call tree of the loaded trace ([`crate::Query::CallTree`]); docs/definitions.md "Call
/// tree".
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CallTreeData {
    /// The kept nodes in pre-order: the root first, a parent right before its children,
    /// siblings largest CPU total first.
    pub rows: Vec<CallTreeRow>,
    /// Nodes of the whole tree, kept or not.
    pub nodes: u32,
    /// Nodes left out (each under `min_pct`% of the root's CPU and GPU totals, or below a left
    /// out node, or deeper than the depth kept).
    pub left_out: u32,
    /// The share under which a node is left out, percent of the root's totals.
    pub min_pct: f64,
    /// Whether the rows carry the baseline's totals and their growth (asked for, a baseline
    /// kept, the whole trace in scope).
    pub against_baseline: bool,
}

/// One node of the call tree; times in ns, summed over its calls in the scope asked for.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CallTreeRow {
    /// The frame's, range's, op's or thread's name (`all threads` for the root).
    pub name: String,
    /// `root`, `thread`, `python`, `annotation`, `op` or `runtime` (`report --tree --json`'s).
    pub kind: String,
    /// 0 for the root, 1 for a thread.
    pub depth: u16,
    /// The parent's row (`None` for the root); always a smaller index.
    pub parent: Option<u32>,
    /// Instances merged into the node.
    pub calls: u64,
    /// Summed duration of its instances.
    pub total_ns: i64,
    /// `total_ns` minus the union of its instances' children's spans.
    pub self_ns: i64,
    /// Device time launched by it and its descendants.
    pub gpu_total_ns: i64,
    /// Its first instance, to select on the timeline (`None` for the root and threads).
    pub first: Option<SliceRef>,
    /// The same call path's CPU and GPU totals in the baseline (0 when absent there); `None`
    /// unless [`CallTreeData::against_baseline`].
    pub base_ns: Option<(i64, i64)>,
    /// `grew`, `shrank` or `same` (within 2% of the baseline) for CPU and GPU time
    /// (docs/definitions.md "Call tree", diff); `None` with [`Self::base_ns`].
    pub growth: Option<(String, String)>,
}
