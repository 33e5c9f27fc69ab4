//! The Flame tab's icicle chart as plain structs: the worker's [`CallTreeData`], the node the
//! chart is zoomed into, which time sizes the boxes (CPU or GPU), and the layout (row -> box).
//!
//! Layout ([`layout`]): one band [`ROW_H_PX`] tall per depth, roots at the top. The zoomed node
//! and its ancestors span the whole width; below it, a child's width is its share of its
//! parent's width (`parent_w * value / max(parent value, Σ children's values)`: Python frames
//! may straddle each other, so children's CPU totals can add up past the parent's, and are
//! then scaled down together), children side by side from the parent's left edge, largest
//! first. Boxes under [`MIN_BOX_PX`] are not laid out, nor is anything under them. Labels are
//! cut arithmetically ([`fit_label`]). Cost: O(rows) per layout.

use protocol::CallTreeData;
use std::sync::Arc;

/// Height of one depth band, CSS px.
pub const ROW_H_PX: f64 = 18.0;
/// Narrowest box laid out, CSS px.
pub const MIN_BOX_PX: f64 = 0.5;
/// Narrowest label shown, characters (one letter and the ellipsis).
const MIN_LABEL_CHARS: usize = 2;
/// Room left on each side of a label, CSS px.
pub const LABEL_PAD_PX: f64 = 3.0;

/// Which time sizes the boxes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Metric {
    /// Host (CPU) time.
    #[default]
    Cpu,
    /// Device (GPU) time launched under the node.
    Gpu,
}

impl Metric {
    /// `cpu` or `gpu` (test ids and `window.kinetoscope.flame.metric`).
    pub fn key(self) -> &'static str {
        match self {
            Metric::Cpu => "cpu",
            Metric::Gpu => "gpu",
        }
    }
}

/// One laid-out box: row `row` of the tree at (x, y), w x h CSS px from the canvas' top-left.
#[derive(Clone, Debug, PartialEq)]
pub struct FlameBox {
    /// The row of [`CallTreeData::rows`].
    pub row: usize,
    /// Left edge, CSS px.
    pub x: f64,
    /// Top edge, CSS px.
    pub y: f64,
    /// Width, CSS px.
    pub w: f64,
    /// Height, CSS px.
    pub h: f64,
}

/// The call tree shown on the Flame tab.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlameTree {
    /// The worker's tree (pre-order, row 0 the root).
    pub data: Arc<CallTreeData>,
    /// The row the chart is zoomed into (0: the root).
    pub zoom: usize,
    /// Which time sizes the boxes.
    pub metric: Metric,
    /// The boxes as last drawn (what the pointer and `window.kinetoscope.flame` see).
    pub drawn: Vec<FlameBox>,
    /// Per row: the rows right under it, in the worker's order.
    children: Vec<Vec<usize>>,
}

impl FlameTree {
    /// The tree of `data`, zoomed out, sized by `metric`.
    pub fn new(data: CallTreeData, metric: Metric) -> Self {
        let mut children = vec![Vec::new(); data.rows.len()];
        for (k, r) in data.rows.iter().enumerate() {
            // Rows come in pre-order: a parent's index is below its children's.
            if let Some(p) = r.parent.and_then(|p| children.get_mut(p as usize)).filter(|_| k > 0) {
                p.push(k);
            }
        }
        FlameTree { data: Arc::new(data), zoom: 0, metric, drawn: Vec::new(), children }
    }

    /// Row `k`'s time in the metric, ns (0 for an unknown row).
    pub fn value(&self, k: usize) -> i64 {
        self.data.rows.get(k).map_or(0, |r| match self.metric {
            Metric::Cpu => r.total_ns,
            Metric::Gpu => r.gpu_total_ns,
        })
    }

    /// The rows from the root down to `k` (the breadcrumb of a zoom into `k`).
    pub fn path(&self, k: usize) -> Vec<usize> {
        let mut path = vec![k];
        let mut at = k;
        while let Some(p) = self.data.rows.get(at).and_then(|r| r.parent).map(|p| p as usize).filter(|&p| p < at) {
            path.push(p);
            at = p;
        }
        path.reverse();
        path
    }

    /// Zooms into row `k` (ignored for an unknown row).
    pub fn zoom_to(&mut self, k: usize) {
        if k < self.data.rows.len() {
            self.zoom = k;
        }
    }

    /// The boxes on a canvas `width_px` wide, zoomed into [`Self::zoom`].
    pub fn layout(&self, width_px: f64) -> Vec<FlameBox> {
        let mut out: Vec<FlameBox> = self
            .path(self.zoom)
            .into_iter()
            .filter(|&k| k < self.data.rows.len())
            .enumerate()
            .map(|(depth, row)| FlameBox { row, x: 0.0, y: depth as f64 * ROW_H_PX, w: width_px, h: ROW_H_PX })
            .collect();
        let Some(zoomed) = out.last().cloned() else { return out };
        let mut stack = vec![zoomed];
        while let Some(parent) = stack.pop() {
            let mut kids = self.children.get(parent.row).cloned().unwrap_or_default();
            kids.sort_by_key(|&c| std::cmp::Reverse(self.value(c)));
            let sum: i64 = kids.iter().map(|&c| self.value(c).max(0)).sum();
            let whole = self.value(parent.row).max(sum);
            if whole <= 0 {
                continue;
            }
            let mut x = parent.x;
            for c in kids {
                let w = parent.w * self.value(c).max(0) as f64 / whole as f64;
                if w >= MIN_BOX_PX {
                    let b = FlameBox { row: c, x, y: parent.y + ROW_H_PX, w, h: ROW_H_PX };
                    out.push(b.clone());
                    stack.push(b);
                }
                x += w;
            }
        }
        out
    }

    /// `window.kinetoscope.flame`: `{metric, zoom, zoomName, rows, nodes, leftOut, minPct,
    /// againstBaseline, root: {totalNs, gpuTotalNs}, children: the root's, [{index, name, calls,
    /// totalNs, gpuTotalNs}], rects: the boxes as last drawn, [{index, name, kind, x, y, w, h,
    /// firstId, growth (null without the baseline)}]}`.
    pub fn hook_json(&self) -> serde_json::Value {
        use serde_json::json;
        let rows = &self.data.rows;
        let root = rows.first().map(|r| json!({"totalNs": r.total_ns, "gpuTotalNs": r.gpu_total_ns}));
        let children: Vec<serde_json::Value> = self
            .children
            .first()
            .into_iter()
            .flatten()
            .filter_map(|&k| {
                let r = rows.get(k)?;
                Some(json!({"index": k, "name": r.name, "calls": r.calls, "totalNs": r.total_ns, "gpuTotalNs": r.gpu_total_ns}))
            })
            .collect();
        let rects: Vec<serde_json::Value> = self
            .drawn
            .iter()
            .filter_map(|b| {
                let r = rows.get(b.row)?;
                Some(json!({"index": b.row, "name": r.name, "kind": r.kind, "x": b.x, "y": b.y, "w": b.w, "h": b.h, "firstId": r.first.as_ref().map(|f| f.id), "growth": self.growth(b.row)}))
            })
            .collect();
        json!({
            "metric": self.metric.key(), "zoom": self.zoom, "zoomName": rows.get(self.zoom).map(|r| r.name.clone()),
            "rows": rows.len(), "nodes": self.data.nodes, "againstBaseline": self.data.against_baseline, "leftOut": self.data.left_out, "minPct": self.data.min_pct,
            "root": root, "children": children, "rects": rects,
        })
    }

    /// Row `k`'s change against the baseline in the metric (`grew`, `shrank`, `same`); `None`
    /// when the tree came without the baseline's totals.
    pub fn growth(&self, k: usize) -> Option<&str> {
        let (cpu, gpu) = self.data.rows.get(k)?.growth.as_ref()?;
        Some(match self.metric {
            Metric::Cpu => cpu,
            Metric::Gpu => gpu,
        })
    }

    /// The box drawn under (`x`, `y`) CSS px, if any.
    pub fn box_at(&self, x: f64, y: f64) -> Option<&FlameBox> {
        self.drawn.iter().find(|b| x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + b.h)
    }
}

/// `name` cut to fit a box `w_px` wide at `char_px` per character: whole, or cut with an
/// ellipsis, or `None` when not even [`MIN_LABEL_CHARS`] fit.
pub fn fit_label(name: &str, w_px: f64, char_px: f64) -> Option<String> {
    if char_px <= 0.0 {
        return None;
    }
    let room = ((w_px - 2.0 * LABEL_PAD_PX) / char_px).floor();
    let room = if room > 0.0 { room as usize } else { 0 };
    let len = name.chars().count();
    if len <= room {
        return Some(name.to_owned());
    }
    (room >= MIN_LABEL_CHARS).then(|| name.chars().take(room - 1).chain(std::iter::once('…')).collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use protocol::CallTreeRow;

    /// root(100) -> A(60: B 30, C 20), D(40); GPU: A 10 (B 10), D 30.
    fn tree() -> FlameTree {
        let row = |name: &str, depth: u16, parent: Option<u32>, total_ns: i64, gpu_total_ns: i64| CallTreeRow {
            name: name.into(),
            depth,
            parent,
            total_ns,
            gpu_total_ns,
            ..CallTreeRow::default()
        };
        let rows = vec![
            row("root", 0, None, 100, 40),
            row("A", 1, Some(0), 60, 10),
            row("B", 2, Some(1), 30, 10),
            row("C", 2, Some(1), 20, 0),
            row("D", 1, Some(0), 40, 30),
        ];
        FlameTree::new(CallTreeData { rows, ..CallTreeData::default() }, Metric::Cpu)
    }

    fn by_row(boxes: &[FlameBox], row: usize) -> FlameBox {
        boxes.iter().find(|b| b.row == row).cloned().unwrap()
    }

    /// Every box's children fit inside it, side by side.
    fn assert_children_fit(t: &FlameTree, boxes: &[FlameBox]) {
        for parent in boxes {
            let kids: Vec<&FlameBox> = boxes.iter().filter(|b| t.data.rows[b.row].parent == Some(parent.row as u32) && b.y > parent.y).collect();
            let sum: f64 = kids.iter().map(|b| b.w).sum();
            assert!(sum <= parent.w + 1e-9, "row {}: children {sum} > {}", parent.row, parent.w);
            for k in kids {
                assert!(k.x >= parent.x - 1e-9 && k.x + k.w <= parent.x + parent.w + 1e-9, "row {} outside {}", k.row, parent.row);
                assert_eq!(k.y, parent.y + ROW_H_PX);
            }
        }
    }

    #[test]
    fn widths_are_shares_of_the_parent_and_fit() {
        let t = tree();
        let boxes = t.layout(1000.0);
        assert_eq!(boxes.len(), 5);
        assert_eq!((by_row(&boxes, 0).x, by_row(&boxes, 0).w), (0.0, 1000.0));
        assert_eq!((by_row(&boxes, 1).x, by_row(&boxes, 1).w), (0.0, 600.0));
        assert_eq!((by_row(&boxes, 4).x, by_row(&boxes, 4).w), (600.0, 400.0));
        assert_eq!((by_row(&boxes, 2).w, by_row(&boxes, 3).x), (300.0, 300.0));
        assert_children_fit(&t, &boxes);
    }

    #[test]
    fn zoomed_node_fills_the_width_under_its_ancestors() {
        let mut t = tree();
        t.zoom_to(1);
        let boxes = t.layout(800.0);
        let a = by_row(&boxes, 1);
        assert_eq!((a.x, a.w, a.y), (0.0, 800.0, ROW_H_PX));
        assert_eq!(by_row(&boxes, 0).w, 800.0, "the root above spans the width");
        assert!(boxes.iter().all(|b| b.row != 4), "D is outside the zoom");
        assert_eq!(by_row(&boxes, 2).w, 400.0);
        assert_children_fit(&t, &boxes);
        assert_eq!(t.path(2), vec![0, 1, 2]);
    }

    #[test]
    fn overlapping_children_are_scaled_down_together_and_gpu_sizes_by_gpu() {
        let mut t = tree();
        // Children 30 + 20 over a parent of 40: scaled by 50.
        Arc::make_mut(&mut t.data).rows[1].total_ns = 40;
        let boxes = t.layout(1000.0);
        assert_children_fit(&t, &boxes);
        t.metric = Metric::Gpu;
        let boxes = t.layout(400.0);
        assert_eq!(by_row(&boxes, 4).x, 0.0, "D (GPU 30) comes first");
        assert_eq!(by_row(&boxes, 4).w, 300.0);
        assert!(boxes.iter().all(|b| b.row != 3), "C has no GPU time");
        assert_children_fit(&t, &boxes);
    }

    #[test]
    fn pointer_finds_the_box_drawn() {
        let mut t = tree();
        t.drawn = t.layout(1000.0);
        assert_eq!(t.box_at(650.0, ROW_H_PX + 1.0).map(|b| b.row), Some(4));
        assert_eq!(t.box_at(650.0, 2.0 * ROW_H_PX + 1.0), None);
    }

    #[test]
    fn labels_fit_cut_or_vanish() {
        assert_eq!(fit_label("aten::mm", 100.0, 7.0).as_deref(), Some("aten::mm"));
        assert_eq!(fit_label("aten::addmm", 6.0 + 5.0 * 7.0, 7.0).as_deref(), Some("aten…"));
        assert_eq!(fit_label("aten::addmm", 6.0 + 1.0 * 7.0, 7.0), None);
        assert_eq!(fit_label("ab", 6.0 + 2.0 * 7.0, 7.0).as_deref(), Some("ab"));
    }
}
