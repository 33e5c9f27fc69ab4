//! The timeline's picture as plain data: [`draw_list`] turns a [`TimelineState`] (view,
//! tracks, tile cache, counters, steps, range, selection, finding highlight), a theme and the
//! canvas size into a [`DrawList`], the commands to replay in order. `paint_canvas2d` is the only
//! code that replays them on a `CanvasRenderingContext2d`; this module has no web dependency and
//! is unit-tested natively.
//!
//! Coordinates are CSS px from the canvas's top-left corner: the ruler takes the top
//! [`RULER_H`] px, track content height `y` is drawn at `RULER_H + y - scroll_y`, time `ns` at
//! `view.x_of(ns)`. Slice rect edges are snapped to device pixels (`dpr`).
//!
//! The picture, back to front: background; clipped below the ruler, lane stripes, group bands
//! and counter areas; slices from the tile cache (runs of sub-pixel rects of a row merged into
//! one rect at least 1 px wide, batched per palette slot into one path, search matches outlined,
//! labels on slices at least [`LABEL_MIN_PX`] wide, cut arithmetically); the critical path
//! overlay when on ([`critical`]: a veil, the path's slices above it); step lines; the
//! selected range; the finding's evidence; the selection and its flow arrows; then the ruler
//! with ticks at round times and step marks.
//!
//! Cost per frame is bounded by the tiles (at most rows × buckets rects per visible lane, see
//! the engine's LOD contract), not by the trace. Batching stays in the list, not the backend:
//! a fill style crosses the wasm boundary as a string and a rect as four numbers, and one path
//! per color is what the canvas fills fastest (and blends overlapping rects once).
//!
//! Why a list: egui separates shapes from painting and Perfetto's renderer takes whole typed
//! buffers; what the timeline draws is then testable without a browser.

use std::ops::Range;

use super::theme::{self, Theme};
use crate::state::timeline::TimelineState;
use crate::state::tracks::{self, TrackKind, ROW_H};
use crate::state::viewport::{format_tick, tick_step};
use protocol::{Layout, SliceRef};

pub mod critical;
#[cfg(test)]
mod tests;

/// Height of the ruler at the top of the canvas, CSS px.
pub const RULER_H: f64 = 32.0;
/// Narrowest slice that gets a label, CSS px.
pub const LABEL_MIN_PX: f64 = 48.0;
/// The font of slice labels and the ruler.
pub const LABEL_FONT: &str = "11px system-ui, sans-serif";
/// Approximate width of a label character at the label font, CSS px.
pub const CHAR_PX: f64 = 6.4;
/// Minimum distance between ruler ticks, CSS px.
const TICK_MIN_PX: f64 = 90.0;

/// An axis-aligned rectangle, CSS px.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    /// The rect at (`x`, `y`) of `w` × `h`.
    pub const fn new(x: f64, y: f64, w: f64, h: f64) -> Self {
        Self { x, y, w, h }
    }
}

/// A point (x, y), CSS px.
pub type Point = (f64, f64);

/// One drawing command. Colors are CSS color strings; line widths are CSS px.
#[derive(Clone, Debug, PartialEq)]
pub enum Cmd {
    /// Later commands draw only inside the rect, until [`Cmd::Unclip`].
    Clip(Rect),
    /// Ends the clip.
    Unclip,
    /// One filled rect.
    Fill { color: &'static str, rect: Rect },
    /// Rects filled as one path (overlaps are filled once).
    FillRects { color: &'static str, rects: Vec<Rect> },
    /// One rect outline.
    StrokeRect { color: &'static str, width: f64, rect: Rect },
    /// Rect outlines stroked as one path.
    StrokeRects { color: &'static str, width: f64, rects: Vec<Rect> },
    /// Line segments `[x0, y0, x1, y1]` stroked as one path.
    Lines { color: &'static str, width: f64, lines: Vec<[f64; 4]> },
    /// A closed polygon, filled.
    Polygon { color: &'static str, points: Vec<Point> },
    /// A cubic Bézier curve (start, two control points, end), stroked.
    Curve { color: &'static str, width: f64, points: [Point; 4] },
    /// Text in [`LABEL_FONT`], starting at `x`, vertically centered on `y`; already cut to
    /// the room it has.
    Text { color: &'static str, text: String, x: f64, y: f64 },
}

/// The commands of one frame, in drawing order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DrawList {
    /// Commands, back to front.
    pub cmds: Vec<Cmd>,
}

/// The canvas drawn on: size in CSS px and device pixels per CSS px.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Surface {
    /// Width, CSS px.
    pub width: f64,
    /// Height including the ruler, CSS px.
    pub height: f64,
    /// Device pixels per CSS px.
    pub dpr: f64,
}

/// The frame for `t` on `surface` in `theme`: only the background before a layout.
pub fn draw_list(t: &TimelineState, theme: Theme, surface: Surface) -> DrawList {
    let c = theme.colors();
    let (width, height) = (surface.width, surface.height);
    let mut out = vec![Cmd::Fill { color: c.background, rect: Rect::new(0.0, 0.0, width, height) }];
    let Some(layout) = &t.layout else { return DrawList { cmds: out } };
    out.push(Cmd::Clip(Rect::new(0.0, RULER_H, width, height - RULER_H)));
    let mut slices = Slices::new(theme);
    for (i, track) in t.tracks.iter().enumerate() {
        let y = RULER_H + track.y - t.scroll_y;
        if y + track.height < RULER_H || y > height {
            continue;
        }
        let band = Rect::new(0.0, y, width, track.height);
        match track.kind {
            TrackKind::Group { .. } => out.push(Cmd::Fill { color: c.header, rect: band }),
            TrackKind::Lane { lane, rows, first_row } => {
                if i % 2 == 0 {
                    out.push(Cmd::Fill { color: c.stripe, rect: band });
                }
                if !t.tiles.is_empty() {
                    slices.lane(t, (lane, first_row..first_row.saturating_add(rows)), y, surface);
                }
            }
            TrackKind::Counter { series } => out.extend(counter(t, theme, series, y, track.height, width)),
        }
    }
    slices.finish(&mut out, theme);
    critical::draw(&mut out, t, theme, (width, height, surface.dpr));
    steps(&mut out, t, layout, theme, width, height);
    range(&mut out, t, theme, height);
    highlight(&mut out, t, theme);
    selection(&mut out, t, theme);
    out.push(Cmd::Unclip);
    ruler(&mut out, t, layout, theme, width);
    DrawList { cmds: out }
}

/// A frame that uses every palette color and the label font once and then shows only the
/// background: drawn on a canvas before a trace is shown, so the browser parses and caches
/// them then rather than in the first frame after a load.
pub fn warm_up(theme: Theme, width: f64, height: f64) -> DrawList {
    let mut cmds = Vec::new();
    for (fill, text) in theme.palette() {
        cmds.push(Cmd::Fill { color: fill.as_str(), rect: Rect::new(0.0, 0.0, 1.0, 1.0) });
        cmds.push(Cmd::Text { color: text, text: "aten::mm 0.5 ms".to_owned(), x: 0.0, y: 0.0 });
    }
    cmds.push(Cmd::Fill { color: theme.colors().background, rect: Rect::new(0.0, 0.0, width, height) });
    DrawList { cmds }
}

/// Slice rects of one frame, grouped for drawing: rects per palette slot, search-match
/// outlines, and labels (text, x, y).
struct Slices {
    rects: Vec<Vec<Rect>>,
    outlines: Vec<Rect>,
    labels: Vec<(String, f64, f64)>,
}

/// A run of sub-pixel rects of one row waiting to be added: row, x0, x1, palette slot.
type Run = Option<(u16, f64, f64, usize)>;

impl Slices {
    /// No slices yet: an empty rect batch per slot of `theme`'s palette.
    fn new(theme: Theme) -> Self {
        let rects = vec![Vec::new(); theme.palette().len()];
        Self { rects, outlines: Vec::new(), labels: Vec::new() }
    }

    /// Adds the rects of `lane`'s rows `shown`, whose track is drawn at `y`: sub-pixel rects of a row that
    /// touch are merged into one (colored as the first), wide ones get a label, search matches
    /// an outline.
    ///
    /// Rect edges are snapped to device pixels: a path of thousands of rects with fractional
    /// edges is rasterized with anti-aliasing after our frame's script ends, which in software
    /// raster cost several times the script's own time and made the page's long tasks.
    fn lane(&mut self, t: &TimelineState, (lane, shown): (u32, Range<u16>), y: f64, surface: Surface) {
        let (v, width, dpr) = (&t.view, surface.width, surface.dpr);
        let snap = |x: f64| (x * dpr).round() / dpr;
        let y = snap(y);
        let searching = !t.search.text.trim().is_empty()
            && t.tiles.request.as_ref().is_some_and(|r| r.search.is_some());
        let mut run: Run = None;
        let flush = |rects: &mut Vec<Vec<Rect>>, run: &mut Run| {
            if let Some((row, x0, x1, slot)) = run.take() {
                let ry = y + tracks::LANE_PAD + f64::from(row) * ROW_H;
                if let Some(rects) = rects.get_mut(slot) {
                    let (x0, x1) = (snap(x0), snap(x1));
                    rects.push(Rect::new(x0, ry + 1.0, (x1 - x0).max(1.0), ROW_H - 2.0));
                }
            }
        };
        for r in t.tiles.lane(lane).filter(|r| shown.contains(&r.row)) {
            let row = r.row - shown.start;
            let x0 = v.x_of(r.start_ns as f64).max(-2.0);
            let x1 = v.x_of(r.end_ns as f64).min(width + 2.0);
            if x1 < 0.0 || x0 > width {
                continue;
            }
            let hash = t.tiles.color.get(r.name as usize).copied().unwrap_or(0);
            let dim = searching && !r.matched;
            let slot = theme::slot(hash) + if dim { theme::SLOTS } else { 0 };
            let w = x1 - x0;
            if w < 1.0 {
                match &mut run {
                    Some((at, _, end, _)) if *at == row && x0 <= *end + 0.5 => *end = x1.max(*end),
                    _ => {
                        flush(&mut self.rects, &mut run);
                        run = Some((row, x0, x1.max(x0 + 1.0), slot));
                    }
                }
                continue;
            }
            flush(&mut self.rects, &mut run);
            run = Some((row, x0, x1, slot));
            flush(&mut self.rects, &mut run);
            let ry = y + tracks::LANE_PAD + f64::from(row) * ROW_H;
            if r.matched && searching {
                self.outlines.push(Rect::new(x0 + 1.0, ry + 1.5, (w - 2.0).max(1.0), ROW_H - 3.0));
            }
            if w >= LABEL_MIN_PX {
                let text = label(t.tiles.name(r.name), w - 8.0);
                if !text.is_empty() {
                    self.labels.push((text, x0.max(0.0) + 4.0, ry + ROW_H / 2.0));
                }
            }
        }
        flush(&mut self.rects, &mut run);
    }

    /// Appends the batched slices: one path per palette slot, the outlines, the labels.
    fn finish(self, out: &mut Vec<Cmd>, theme: Theme) {
        let palette = theme.palette();
        for (rects, (fill, _)) in self.rects.into_iter().zip(palette) {
            if !rects.is_empty() {
                out.push(Cmd::FillRects { color: fill.as_str(), rects });
            }
        }
        if !self.outlines.is_empty() {
            out.push(Cmd::StrokeRects { color: theme.colors().matched, width: 2.0, rects: self.outlines });
        }
        if let Some((_, ink)) = palette.first() {
            out.extend(self.labels.into_iter().map(|(text, x, y)| Cmd::Text { color: ink, text, x, y }));
        }
    }
}

/// `name` cut to about `px` pixels, with an ellipsis when cut; empty when not even 3 characters
/// fit.
fn label(name: &str, px: f64) -> String {
    let fit = (px / CHAR_PX).floor() as usize;
    let n = name.chars().count();
    if n <= fit {
        name.to_owned()
    } else if fit >= 4 {
        let mut s: String = name.chars().take(fit - 1).collect();
        s.push('…');
        s
    } else {
        String::new()
    }
}

/// The ruler: background, ticks with adaptive units counted from the origin (a stacked
/// compare panel's step start), step marks with their numbers.
fn ruler(out: &mut Vec<Cmd>, t: &TimelineState, layout: &Layout, theme: Theme, width: f64) {
    let c = theme.colors();
    let v = &t.view;
    out.push(Cmd::Fill { color: c.ruler, rect: Rect::new(0.0, 0.0, width, RULER_H) });
    let step = tick_step(v.ns_per_px() * TICK_MIN_PX);
    let o = t.origin_ns;
    let mut ns = ((v.start - o) / step).ceil() * step + o;
    let mut lines = Vec::new();
    while ns <= v.end {
        // Half a pixel off the grid: a 1 px line then covers one pixel column exactly.
        let x = v.x_of(ns).round() + 0.5;
        lines.push([x, 0.0, x, 14.0]);
        out.push(Cmd::Text { color: c.ink, text: format_tick(ns - o, step), x: x + 3.0, y: 8.0 });
        ns += step;
    }
    if !lines.is_empty() {
        out.push(Cmd::Lines { color: c.ink, width: 1.0, lines });
    }
    for s in &layout.steps {
        let (x0, x1) = (v.x_of(s.start_ns as f64), v.x_of(s.end_ns as f64));
        if x1 < 0.0 || x0 > width {
            continue;
        }
        let rect = Rect::new(x0.max(0.0), RULER_H - 3.0, (x1.min(width) - x0.max(0.0)).max(1.0), 3.0);
        out.push(Cmd::Fill { color: c.step, rect });
        if x1 - x0 > 60.0 {
            let text = format!("step {}", s.number);
            out.push(Cmd::Text { color: c.step, text, x: x0.max(0.0) + 3.0, y: RULER_H - 10.0 });
        }
    }
}

/// Step boundaries as faint vertical lines across the tracks; an aligned layout's focus step
/// (stacked compare panels) gets bold lines at its start and end.
fn steps(out: &mut Vec<Cmd>, t: &TimelineState, layout: &Layout, theme: Theme, width: f64, height: f64) {
    let color = theme.colors().step;
    let lines = |ns: &mut dyn Iterator<Item = i64>| -> Vec<[f64; 4]> {
        ns.map(|ns| t.view.x_of(ns as f64).round() + 0.5)
            .filter(|x| (0.0..=width).contains(x))
            .map(|x| [x, RULER_H, x, height])
            .collect()
    };
    let starts = lines(&mut layout.steps.iter().map(|s| s.start_ns));
    if !starts.is_empty() {
        out.push(Cmd::Lines { color, width: 1.0, lines: starts });
    }
    if let Some(f) = &layout.focus {
        let edges = lines(&mut [f.start_ns, f.end_ns].into_iter());
        if !edges.is_empty() {
            out.push(Cmd::Lines { color, width: 2.0, lines: edges });
        }
    }
}

/// A counter series as a filled area scaled to its maximum; `None` without its series.
fn counter(t: &TimelineState, theme: Theme, series: usize, y: f64, h: f64, width: f64) -> Option<Cmd> {
    let set = t.counters.as_ref()?;
    let s = set.series.get(series)?;
    let max = if s.max > 0.0 { s.max } else { 1.0 };
    let v = &t.view;
    let base = y + h - 2.0;
    let scale = (h - 6.0) / max;
    let mut points = vec![(v.x_of(set.start_ns as f64).max(0.0), base)];
    // One step per pixel column: buckets narrower than a pixel are folded into their column's
    // peak, so a path never has more points than the canvas is wide.
    let mut column: Option<(f64, f64, f64)> = None;
    let step = |points: &mut Vec<Point>, (x0, x1, top): (f64, f64, f64)| {
        points.push((x0, top));
        points.push((x1, top));
    };
    for (i, value) in s.values.iter().enumerate() {
        let t0 = set.start_ns as f64 + i as f64 * set.bucket_ns as f64;
        let (x0, x1) = (v.x_of(t0).max(0.0), v.x_of(t0 + set.bucket_ns as f64).min(width));
        if x1 < 0.0 || x0 > width {
            continue;
        }
        let top = base - value.unwrap_or(0.0) * scale;
        column = match column {
            Some((a, _, t)) if x1 - a < 1.0 => Some((a, x1, t.min(top))),
            Some(c) => {
                step(&mut points, c);
                Some((x0, x1, top))
            }
            None => Some((x0, x1, top)),
        };
    }
    if let Some(c) = column {
        step(&mut points, c);
    }
    let end = set.start_ns as f64 + s.values.len() as f64 * set.bucket_ns as f64;
    points.push((width.min(v.x_of(end)), base));
    Some(Cmd::Polygon { color: theme.colors().counter, points })
}

/// The selected range: shaded, outlined.
fn range(out: &mut Vec<Cmd>, t: &TimelineState, theme: Theme, height: f64) {
    let Some((a, b)) = t.range else { return };
    let (x0, x1) = (t.view.x_of(a), t.view.x_of(b));
    let c = theme.colors();
    let w = (x1 - x0).max(1.0);
    out.push(Cmd::Fill { color: c.range, rect: Rect::new(x0, RULER_H, w, height - RULER_H) });
    let rect = Rect::new(x0 + 0.5, RULER_H + 0.5, w, height - RULER_H - 1.0);
    out.push(Cmd::StrokeRect { color: c.step, width: 1.0, rect });
}

/// Screen x0, x1 (at least 1 px apart) and row top of a slice reference, if its lane is laid
/// out.
fn place(t: &TimelineState, r: &SliceRef) -> Option<(f64, f64, f64)> {
    let track = t.lane_track(r.lane, r.row)?;
    let y = RULER_H + tracks::row_y(track, r.row) - t.scroll_y;
    let x0 = t.view.x_of(r.start_ns as f64);
    let x1 = t.view.x_of((r.start_ns + r.dur_ns) as f64);
    Some((x0, x1.max(x0 + 1.0), y))
}

/// Evidence of a finding: outlined in the search-match color, at least 3 px wide so a
/// sub-pixel kernel still shows.
fn highlight(out: &mut Vec<Cmd>, t: &TimelineState, theme: Theme) {
    let color = theme.colors().matched;
    for (x0, x1, y) in t.highlight.iter().filter_map(|r| place(t, r)) {
        let w = (x1 - x0).max(3.0);
        let rect = Rect::new(x0 - (w - (x1 - x0)) / 2.0, y + 0.5, w, ROW_H - 1.0);
        out.push(Cmd::StrokeRect { color, width: 2.5, rect });
    }
}

/// The selection's outline and its flow arrows: launched by / launched, flows in / out, and
/// on request every dependency arrow of its CUDA graph launch.
fn selection(out: &mut Vec<Cmd>, t: &TimelineState, theme: Theme) {
    let Some(d) = &t.selected else { return };
    let Some((x0, x1, y)) = place(t, &d.slice) else { return };
    let c = theme.colors();
    let rect = Rect::new(x0, y + 0.5, x1 - x0, ROW_H - 1.0);
    out.push(Cmd::StrokeRect { color: c.selection, width: 2.0, rect });
    let me = (x0, y);
    for r in d.launched_by.iter().chain(&d.flows_in) {
        if let Some((sx, _, sy)) = place(t, r) {
            arrow(out, c.flow, (sx, sy), me);
        }
    }
    for r in d.launched.iter().chain(&d.flows_out) {
        if let Some((tx, _, ty)) = place(t, r) {
            arrow(out, c.flow, me, (tx, ty));
        }
    }
    let graph_edges = d.graph.as_ref().filter(|_| t.graph_arrows).map_or(&[][..], |g| &g.edges[..]);
    for (from, to) in graph_edges {
        if let (Some((fx, _, fy)), Some((tx, _, ty))) = (place(t, from), place(t, to)) {
            arrow(out, c.flow, (fx, fy), (tx, ty));
        }
    }
}

/// A curved arrow between the row centers of two slice starts (row tops given).
fn arrow(out: &mut Vec<Cmd>, color: &'static str, from: Point, to: Point) {
    let (fx, fy) = (from.0, from.1 + ROW_H / 2.0);
    let (tx, ty) = (to.0, to.1 + ROW_H / 2.0);
    let bend = ((tx - fx).abs() / 2.0).clamp(20.0, 120.0);
    let points = [(fx, fy), (fx + bend, fy), (tx - bend, ty), (tx, ty)];
    out.push(Cmd::Curve { color, width: 1.5, points });
    out.push(Cmd::Polygon { color, points: vec![(tx, ty), (tx - 7.0, ty - 4.0), (tx - 7.0, ty + 4.0)] });
}
