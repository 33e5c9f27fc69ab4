//! `report --tree [--min-pct P]`: the call tree (callers -> callees over Python frames, ranges,
//! ops and runtime calls) with CPU and GPU time, as indented text and `call_tree` in `--json`.
//! Nodes under `P`% of the root's CPU total and of its GPU total are left out with their
//! subtrees (counted in `left_out`); siblings read largest CPU total first. `diff --tree`: the
//! two traces' trees merged by call path, each node's totals on both sides and its growth.

use crate::analysis::call_tree::{CallTree, CallTreeDiff, Growth, NodeKind, SAME_WITHIN};
use crate::analysis::ops::us;
use crate::model::Trace;
use crate::text::{cut, pytorch_time as time};
use serde_json::{json, Value};
use std::fmt::Write as _;

/// The default `--min-pct`: a flame graph's one-pixel-in-a-hundred.
pub const DEFAULT_MIN_PCT: f64 = 1.0;

/// Deepest level printed or written (Python stacks of 100+ frames exist).
pub const MAX_DEPTH: usize = 64;

/// Nodes left out at `min_pct` (each with its subtree).
fn left_out(tree: &CallTree, min_pct: f64) -> usize {
    let mut shown = vec![false; tree.nodes.len()];
    shown[0] = true;
    let mut out = 0;
    for (i, n) in tree.nodes.iter().enumerate().skip(1) {
        let visible = shown[n.parent as usize] && tree.kept(i as u32, min_pct);
        shown[i] = visible;
        out += usize::from(!visible);
    }
    out
}

/// `call_tree{}`: the threshold, how many nodes it left out, and the tree from the root
/// (`name`, `kind`, `calls`, `total_us`, `self_us`, `gpu_total_us`, `gpu_self_us`, `slice`,
/// `children[]`).
pub fn json(trace: &Trace, tree: &CallTree, min_pct: f64) -> Value {
    fn node(trace: &Trace, tree: &CallTree, i: u32, min_pct: f64, depth: usize) -> Value {
        let n = &tree.nodes[i as usize];
        let kids: Vec<Value> = if depth < MAX_DEPTH { tree.kept_children(i, min_pct).into_iter().map(|c| node(trace, tree, c, min_pct, depth + 1)).collect() } else { Vec::new() };
        json!({
            "name": tree.label(trace, i),
            "kind": n.kind.key(),
            "calls": n.calls,
            "total_us": us(n.total_ns),
            "self_us": us(n.self_ns),
            "gpu_total_us": us(n.gpu_total_ns),
            "gpu_self_us": us(n.gpu_self_ns),
            "slice": (n.first_slice != crate::model::NONE).then_some(n.first_slice),
            "children": kids,
        })
    }
    json!({
        "min_pct": min_pct,
        "nodes": tree.nodes.len(),
        "left_out": left_out(tree, min_pct),
        "root": node(trace, tree, 0, min_pct, 0),
    })
}

/// The text section: one line per kept node, indented by depth.
pub fn text(trace: &Trace, tree: &CallTree, min_pct: f64, width: usize) -> String {
    let root = &tree.nodes[0];
    let mut out = format!(
        "\n==== Call tree ({} CPU, {} GPU over {} threads; nodes under {min_pct}% of both left out: {} of {})\n",
        time(root.total_ns),
        time(root.gpu_total_ns),
        root.children.len(),
        left_out(tree, min_pct),
        tree.nodes.len()
    );
    let _ = writeln!(out, "{:>12} {:>12} {:>12} {:>9}  name", "CPU total", "CPU self", "GPU total", "calls");
    let mut stack: Vec<(u32, usize)> = tree.kept_children(0, min_pct).into_iter().rev().map(|c| (c, 0)).collect();
    while let Some((i, depth)) = stack.pop() {
        let n = &tree.nodes[i as usize];
        let mark = match n.kind {
            NodeKind::Python => "py ",
            NodeKind::Runtime => "rt ",
            _ => "",
        };
        let indent = " ".repeat((2 * depth).min(width.saturating_sub(20)));
        let name = cut(&format!("{mark}{}", tree.label(trace, i)), width.saturating_sub(indent.len()));
        let _ = writeln!(out, "{:>12} {:>12} {:>12} {:>9}  {indent}{name}", time(n.total_ns), time(n.self_ns), time(n.gpu_total_ns), n.calls);
        if depth < MAX_DEPTH {
            stack.extend(tree.kept_children(i, min_pct).into_iter().rev().map(|c| (c, depth + 1)));
        }
    }
    out
}

/// Whether merged node `i` holds at least `min_pct`% of its side's root CPU or GPU total on
/// either side.
fn diff_kept(d: &CallTreeDiff, i: usize, min_pct: f64) -> bool {
    let (Some(root), Some(n)) = (d.nodes.first(), d.nodes.get(i)) else { return false };
    let share = |part: i64, whole: i64| whole > 0 && 100.0 * part as f64 / whole as f64 >= min_pct;
    (0..2).any(|s| share(n.total_ns[s], root.total_ns[s]) || share(n.gpu_total_ns[s], root.gpu_total_ns[s]))
}

/// Merged node `i`'s kept children, largest current CPU total first (then baseline's).
fn diff_children(d: &CallTreeDiff, i: usize, min_pct: f64) -> Vec<usize> {
    let mut c: Vec<usize> = d.nodes.get(i).map(|n| n.children.iter().map(|&c| c as usize).filter(|&c| diff_kept(d, c, min_pct)).collect()).unwrap_or_default();
    c.sort_by_key(|&c| (std::cmp::Reverse(d.nodes[c].total_ns[1]), std::cmp::Reverse(d.nodes[c].total_ns[0]), c));
    c
}

/// `call_tree_diff{}` of `diff --tree --json`: the threshold, the merged tree's node count and
/// the tree from the root (`name`, `kind`, `base_total_us`, `total_us`, `base_gpu_total_us`,
/// `gpu_total_us`, `growth` and `gpu_growth`: `grew` / `shrank` / `same`, `children[]`).
pub fn diff_json(d: &CallTreeDiff, min_pct: f64) -> Value {
    fn node(d: &CallTreeDiff, i: usize, min_pct: f64, depth: usize) -> Value {
        let n = &d.nodes[i];
        let kids: Vec<Value> = if depth < MAX_DEPTH { diff_children(d, i, min_pct).into_iter().map(|c| node(d, c, min_pct, depth + 1)).collect() } else { Vec::new() };
        json!({
            "name": n.name,
            "kind": n.kind.key(),
            "base_total_us": us(n.total_ns[0]),
            "total_us": us(n.total_ns[1]),
            "base_gpu_total_us": us(n.gpu_total_ns[0]),
            "gpu_total_us": us(n.gpu_total_ns[1]),
            "growth": Growth::of(n.total_ns[0], n.total_ns[1]).key(),
            "gpu_growth": Growth::of(n.gpu_total_ns[0], n.gpu_total_ns[1]).key(),
            "children": kids,
        })
    }
    json!({ "min_pct": min_pct, "same_within_pct": 100.0 * SAME_WITHIN, "nodes": d.nodes.len(), "root": node(d, 0, min_pct, 0) })
}

/// The `diff --tree` text section: one line per kept merged node, indented by depth, with the
/// baseline's and the current CPU totals, the change, and `+` / `-` / `=` for its growth.
pub fn diff_text(d: &CallTreeDiff, min_pct: f64, width: usize) -> String {
    let mut out = format!(
        "\n==== Call tree diff (by call path; nodes under {min_pct}% of both sides' totals left out; = within ±{}%)\n",
        100.0 * SAME_WITHIN
    );
    let _ = writeln!(out, "{:>12} {:>12} {:>12}    name", "base CPU", "CPU", "change");
    let mut stack: Vec<(usize, usize)> = diff_children(d, 0, min_pct).into_iter().rev().map(|c| (c, 0)).collect();
    while let Some((i, depth)) = stack.pop() {
        let n = &d.nodes[i];
        let mark = match Growth::of(n.total_ns[0], n.total_ns[1]) {
            Growth::Grew => '+',
            Growth::Shrank => '-',
            Growth::Same => '=',
        };
        let change = if n.total_ns[0] > 0 { format!("{:+.1}%", 100.0 * (n.total_ns[1] - n.total_ns[0]) as f64 / n.total_ns[0] as f64) } else { "new".to_owned() };
        let indent = " ".repeat((2 * depth).min(width.saturating_sub(20)));
        let name = cut(&n.name, width.saturating_sub(indent.len()));
        let _ = writeln!(out, "{:>12} {:>12} {change:>12} {mark}  {indent}{name}", time(n.total_ns[0]), time(n.total_ns[1]));
        if depth < MAX_DEPTH {
            stack.extend(diff_children(d, i, min_pct).into_iter().rev().map(|c| (c, depth + 1)));
        }
    }
    out
}
