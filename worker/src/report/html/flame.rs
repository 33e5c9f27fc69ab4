//! A static flame graph for `report --format html`: the call tree ([`CallTree`]) drawn as an
//! icicle, the threads on the first row under the whole, each node as wide as its CPU total and
//! its children below it, largest first (the order of `report --tree`). Hovering a box shows
//! its `<title>`: name, calls, CPU total and self, GPU total.
//!
//! Bounds: boxes narrower than [`MIN_WIDTH`] are left out with their subtrees, and rows stop at
//! [`MAX_ROWS`], so the SVG holds at most a few thousand boxes whatever the trace (a box is at
//! least [`MIN_WIDTH`] wide and a row [`WIDTH`] wide). A child never draws past its parent's
//! end: straddling instances can make children's totals exceed their parent's
//! (`analysis::call_tree` "Invariants").
//!
//! Each box is a `<g>` with `data-depth` and `data-us` (the node's CPU total in µs, as in
//! `call_tree` of `--json`), so tests compare exactly.

use super::escape;
use crate::analysis::call_tree::{CallTree, NodeKind};
use crate::analysis::ops::us;
use crate::model::Trace;
use crate::text::{cut, span};
use std::fmt::Write as _;

/// Width of the drawing in SVG user units (it scales to its box).
pub const WIDTH: f64 = 1080.0;
/// Row height.
const ROW: f64 = 17.0;
/// Deepest row drawn (the whole is row 0).
pub const MAX_ROWS: usize = 40;
/// Narrowest box drawn, in user units.
pub const MIN_WIDTH: f64 = 0.8;
/// User units per label character at the 11 px label font.
const CHAR_W: f64 = 6.4;

/// A node kind's palette class and legend text.
fn class(kind: NodeKind) -> (&'static str, &'static str) {
    match kind {
        NodeKind::Root | NodeKind::Thread => ("k7", "thread"),
        NodeKind::Python => ("k4", "Python frame"),
        NodeKind::Annotation => ("k2", "range"),
        NodeKind::Op => ("k0", "op"),
        NodeKind::Runtime => ("k1", "runtime call"),
    }
}

/// The flame graph of `tree` with a legend and a note of what was left out; `None` when the
/// tree has no CPU time.
pub fn icicle(trace: &Trace, tree: &CallTree) -> Option<String> {
    let root = tree.nodes.first()?;
    if root.total_ns <= 0 {
        return None;
    }
    let scale = WIDTH / root.total_ns as f64;
    let mut boxes = String::new();
    let (mut drawn, mut narrow, mut deepest) = (0usize, 0usize, 0usize);
    // (node, x, the parent's right edge, row)
    let mut stack = vec![(0u32, 0.0, WIDTH, 0usize)];
    while let Some((i, x, limit, row)) = stack.pop() {
        let Some(n) = tree.nodes.get(i as usize) else { continue };
        let w = (n.total_ns as f64 * scale).min(limit - x);
        if w < MIN_WIDTH {
            narrow += 1;
            continue;
        }
        drawn += 1;
        deepest = deepest.max(row);
        let name = tree.label(trace, i);
        let y = row as f64 * ROW;
        let _ = write!(
            boxes,
            "<g data-depth=\"{row}\" data-us=\"{}\"><title>{}\n{} calls · CPU {} (self {}) · GPU {}</title><rect class=\"{}\" x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{:.1}\"/>",
            us(n.total_ns),
            escape(&name),
            n.calls,
            span(n.total_ns),
            span(n.self_ns),
            span(n.gpu_total_ns),
            class(n.kind).0,
            ROW - 1.0
        );
        let chars = ((w - 6.0) / CHAR_W).floor();
        if chars >= 3.0 {
            let _ = write!(boxes, "<text x=\"{:.2}\" y=\"{:.1}\">{}</text>", x + 3.0, y + ROW - 5.0, escape(&cut(&name, chars as usize)));
        }
        boxes.push_str("</g>");
        if row + 1 >= MAX_ROWS {
            continue;
        }
        let mut cx = x;
        let starts: Vec<(u32, f64)> = tree.kept_children(i, 0.0)
            .into_iter()
            .map(|c| {
                let at = cx;
                cx += tree.nodes.get(c as usize).map_or(0.0, |k| k.total_ns as f64 * scale);
                (c, at)
            })
            .filter(|&(_, at)| at < x + w)
            .collect();
        // Pushed last-first so the largest child is drawn (and read in the file) first.
        stack.extend(starts.into_iter().rev().map(|(c, at)| (c, at, x + w, row + 1)));
    }
    let height = (deepest + 1) as f64 * ROW;
    let mut out = format!(
        "<svg class=\"chart flame\" viewBox=\"0 0 {WIDTH} {height:.0}\" role=\"img\" data-boxes=\"{drawn}\"><title>Flame graph: CPU time by call path</title>{boxes}</svg>"
    );
    out.push_str("<p class=\"legend\">");
    for kind in [NodeKind::Thread, NodeKind::Python, NodeKind::Annotation, NodeKind::Op, NodeKind::Runtime] {
        let (c, text) = class(kind);
        let _ = write!(out, "<span><i class=\"{c}\"></i>{text}</span>");
    }
    let _ = write!(
        out,
        "</p><p class=\"muted\">Width: CPU total time of the whole trace's host work ({}). {narrow} call paths narrower than {MIN_WIDTH} of {WIDTH} units left out, with what they call; rows stop at {MAX_ROWS}. <code>kinetoscope report --tree</code> lists every path.</p>",
        span(root.total_ns)
    );
    Some(out)
}
