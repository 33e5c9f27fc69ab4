//! Painting the timeline canvas from [`TimelineState`]: ruler with adaptive ticks and step
//! marks, lane stripes, slices from the tile cache (merged when narrower than a pixel, labelled
//! when wide enough), counter tracks, the selected range, the selection and its flow arrows.
//!
//! Cost per frame is bounded by the tiles (at most rows × buckets rects per visible lane, see
//! the engine's LOD contract), not by the trace: runs of sub-pixel rects in a row become one
//! rect, rects are batched by palette slot into one path and one `fill` per color (a fill style
//! crosses the wasm boundary as a string, a rect as four numbers), and labels are drawn only on
//! slices at least [`LABEL_MIN_PX`] wide.

use super::theme::{self, Theme};
use crate::state::timeline::TimelineState;
use crate::state::tracks::{self, TrackKind, ROW_H};
use crate::state::viewport::{format_tick, tick_step};
use protocol::SliceRef;
use web_sys::CanvasRenderingContext2d as Ctx;

/// Height of the ruler at the top of the canvas, CSS px.
pub const RULER_H: f64 = 32.0;
/// Narrowest slice that gets a label.
const LABEL_MIN_PX: f64 = 48.0;
/// The font of slice labels and the ruler.
const LABEL_FONT: &str = "11px system-ui, sans-serif";
/// Approximate width of a label character at the label font.
const CHAR_PX: f64 = 6.4;
/// Minimum distance between ruler ticks.
const TICK_MIN_PX: f64 = 90.0;

/// Palettes per theme, built once, and the per-frame batch (kept to reuse its buffers).
pub struct Painter {
    light: Vec<(String, &'static str)>,
    dark: Vec<(String, &'static str)>,
    batch: std::cell::RefCell<Batch>,
}

impl Default for Painter {
    fn default() -> Self {
        Self {
            light: Theme::Light.palette(),
            dark: Theme::Dark.palette(),
            batch: std::cell::RefCell::new(Batch::default()),
        }
    }
}

/// Slice rects of one frame, grouped for drawing: rects per palette slot, search-match
/// outlines, and labels (text, x, y).
#[derive(Default)]
struct Batch {
    rects: Vec<Vec<[f64; 4]>>,
    outlines: Vec<[f64; 4]>,
    labels: Vec<(String, f64, f64)>,
}

impl Batch {
    fn clear(&mut self, slots: usize) {
        self.rects.resize_with(slots, Vec::new);
        self.rects.iter_mut().for_each(Vec::clear);
        self.outlines.clear();
        self.labels.clear();
    }

    /// Draws everything batched; returns the number of rects.
    fn draw(&self, ctx: &Ctx, palette: &[(String, &'static str)], theme: Theme) -> u32 {
        let mut n = 0;
        for (slot, rects) in self.rects.iter().enumerate() {
            if rects.is_empty() {
                continue;
            }
            ctx.set_fill_style_str(&palette[slot].0);
            ctx.begin_path();
            for r in rects {
                ctx.rect(r[0], r[1], r[2], r[3]);
            }
            ctx.fill();
            n += rects.len() as u32;
        }
        if !self.outlines.is_empty() {
            ctx.set_stroke_style_str(theme.colors().matched);
            ctx.set_line_width(2.0);
            ctx.begin_path();
            for r in &self.outlines {
                ctx.rect(r[0], r[1], r[2], r[3]);
            }
            ctx.stroke();
        }
        if let Some((_, text)) = palette.first() {
            ctx.set_fill_style_str(text);
            for (label, x, y) in &self.labels {
                let _ = ctx.fill_text(label, *x, *y);
            }
        }
        n
    }
}

impl Painter {
    /// Uses every palette color and the label font once on a canvas that shows nothing yet,
    /// so the browser parses and caches them now rather than in the first frame after a load.
    pub fn warm(&self, ctx: &Ctx, theme: Theme, width: f64, height: f64) {
        ctx.set_font(LABEL_FONT);
        for (fill, text) in self.palette(theme) {
            ctx.set_fill_style_str(fill);
            ctx.fill_rect(0.0, 0.0, 1.0, 1.0);
            ctx.set_fill_style_str(text);
            let _ = ctx.fill_text("aten::mm 0.5 ms", 0.0, 0.0);
        }
        ctx.set_fill_style_str(theme.colors().background);
        ctx.fill_rect(0.0, 0.0, width, height);
    }

    fn palette(&self, theme: Theme) -> &[(String, &'static str)] {
        match theme {
            Theme::Light => &self.light,
            Theme::Dark => &self.dark,
        }
    }

    /// Paints the whole canvas (`width` × `height` CSS px, `dpr` device pixels per CSS px) and
    /// returns the number of rects drawn.
    pub fn paint(&self, ctx: &Ctx, t: &TimelineState, theme: Theme, width: f64, height: f64, dpr: f64) -> u32 {
        let c = theme.colors();
        ctx.set_fill_style_str(c.background);
        ctx.fill_rect(0.0, 0.0, width, height);
        ctx.set_font(LABEL_FONT);
        ctx.set_text_baseline("middle");
        if t.layout.is_none() {
            return 0;
        }
        let palette = self.palette(theme);
        let mut batch = self.batch.borrow_mut();
        batch.clear(palette.len());
        ctx.save();
        ctx.begin_path();
        ctx.rect(0.0, RULER_H, width, height - RULER_H);
        ctx.clip();
        for (i, track) in t.tracks.iter().enumerate() {
            let y = RULER_H + track.y - t.scroll_y;
            if y + track.height < RULER_H || y > height {
                continue;
            }
            match track.kind {
                TrackKind::Group { .. } => {
                    ctx.set_fill_style_str(c.header);
                    ctx.fill_rect(0.0, y, width, track.height);
                }
                TrackKind::Lane { lane, .. } => {
                    if i % 2 == 0 {
                        ctx.set_fill_style_str(c.stripe);
                        ctx.fill_rect(0.0, y, width, track.height);
                    }
                    if !t.tiles.is_empty() {
                        lane_rects(&mut batch, t, lane, y, width, dpr);
                    }
                }
                TrackKind::Counter { series } => counter(ctx, t, theme, series, y, track.height, width),
            }
        }
        let drawn = batch.draw(ctx, palette, theme);
        steps(ctx, t, theme, width, height);
        range(ctx, t, theme, height);
        highlight(ctx, t, theme);
        selection(ctx, t, theme);
        ctx.restore();
        ruler(ctx, t, theme, width);
        drawn
    }
}

/// Adds one lane's rects to the batch: sub-pixel rects of a row that touch are merged into one
/// (colored as the first), wide ones get a label, search matches an outline.
///
/// Rect edges are snapped to device pixels: a path of thousands of rects with fractional edges
/// is rasterized with anti-aliasing after our frame's script ends, which in software raster cost
/// several times the script's own time and made the page's long tasks.
fn lane_rects(batch: &mut Batch, t: &TimelineState, lane: u32, y: f64, width: f64, dpr: f64) {
    let v = &t.view;
    let snap = |x: f64| (x * dpr).round() / dpr;
    let y = snap(y);
    let searching = !t.search.text.trim().is_empty()
        && t.tiles.request.as_ref().is_some_and(|r| r.search.is_some());
    // A run of sub-pixel rects of one row waiting to be added: (row, x0, x1, slot).
    let mut run: Option<(u16, f64, f64, usize)> = None;
    let flush = |batch: &mut Batch, run: &mut Option<(u16, f64, f64, usize)>| {
        if let Some((row, x0, x1, slot)) = run.take() {
            let ry = y + tracks::LANE_PAD + f64::from(row) * ROW_H;
            if let Some(rects) = batch.rects.get_mut(slot) {
                let (x0, x1) = (snap(x0), snap(x1));
                rects.push([x0, ry + 1.0, (x1 - x0).max(1.0), ROW_H - 2.0]);
            }
        }
    };
    for r in t.tiles.lane(lane) {
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
                Some((row, _, end, _)) if *row == r.row && x0 <= *end + 0.5 => *end = x1.max(*end),
                _ => {
                    flush(batch, &mut run);
                    run = Some((r.row, x0, x1.max(x0 + 1.0), slot));
                }
            }
            continue;
        }
        flush(batch, &mut run);
        run = Some((r.row, x0, x1, slot));
        flush(batch, &mut run);
        let ry = y + tracks::LANE_PAD + f64::from(r.row) * ROW_H;
        if r.matched && searching {
            batch.outlines.push([x0 + 1.0, ry + 1.5, (w - 2.0).max(1.0), ROW_H - 3.0]);
        }
        if w >= LABEL_MIN_PX {
            let text = label(t.tiles.name(r.name), w - 8.0);
            if !text.is_empty() {
                batch.labels.push((text, x0.max(0.0) + 4.0, ry + ROW_H / 2.0));
            }
        }
    }
    flush(batch, &mut run);
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

/// The ruler: background, ticks with adaptive units, step numbers.
fn ruler(ctx: &Ctx, t: &TimelineState, theme: Theme, width: f64) {
    let c = theme.colors();
    let v = &t.view;
    ctx.set_fill_style_str(c.ruler);
    ctx.fill_rect(0.0, 0.0, width, RULER_H);
    let step = tick_step(v.ns_per_px() * TICK_MIN_PX);
    // Ticks and labels count from the origin (a stacked compare panel's step start).
    let o = t.origin_ns;
    let first = ((v.start - o) / step).ceil() * step + o;
    ctx.set_fill_style_str(c.ink);
    ctx.set_stroke_style_str(c.ink);
    ctx.set_line_width(1.0);
    ctx.begin_path();
    let mut ns = first;
    while ns <= v.end {
        let x = v.x_of(ns).round() + 0.5;
        ctx.move_to(x, 0.0);
        ctx.line_to(x, 14.0);
        let _ = ctx.fill_text(&format_tick(ns - o, step), x + 3.0, 8.0);
        ns += step;
    }
    ctx.stroke();
    if let Some(layout) = &t.layout {
        ctx.set_fill_style_str(c.step);
        for s in &layout.steps {
            let (x0, x1) = (v.x_of(s.start_ns as f64), v.x_of(s.end_ns as f64));
            if x1 < 0.0 || x0 > width {
                continue;
            }
            ctx.fill_rect(x0.max(0.0), RULER_H - 3.0, (x1.min(width) - x0.max(0.0)).max(1.0), 3.0);
            if x1 - x0 > 60.0 {
                let _ = ctx.fill_text(&format!("step {}", s.number), x0.max(0.0) + 3.0, RULER_H - 10.0);
            }
        }
    }
}

/// Step boundaries as faint vertical lines across the tracks; an aligned layout's focus step
/// (stacked compare panels) gets bold lines at its start and end.
fn steps(ctx: &Ctx, t: &TimelineState, theme: Theme, width: f64, height: f64) {
    let Some(layout) = &t.layout else { return };
    let lines = |ns: &mut dyn Iterator<Item = i64>, line_width: f64| {
        ctx.set_line_width(line_width);
        ctx.begin_path();
        for ns in ns {
            let x = t.view.x_of(ns as f64).round() + 0.5;
            if (0.0..=width).contains(&x) {
                ctx.move_to(x, RULER_H);
                ctx.line_to(x, height);
            }
        }
        ctx.stroke();
    };
    ctx.set_stroke_style_str(theme.colors().step);
    lines(&mut layout.steps.iter().map(|s| s.start_ns), 1.0);
    if let Some(f) = &layout.focus {
        lines(&mut [f.start_ns, f.end_ns].into_iter(), 2.0);
    }
}

/// A counter series as a filled area scaled to its maximum.
fn counter(ctx: &Ctx, t: &TimelineState, theme: Theme, series: usize, y: f64, h: f64, width: f64) {
    let Some(set) = &t.counters else { return };
    let Some(s) = set.series.get(series) else { return };
    let max = if s.max > 0.0 { s.max } else { 1.0 };
    let v = &t.view;
    let base = y + h - 2.0;
    let scale = (h - 6.0) / max;
    ctx.set_fill_style_str(theme.colors().counter);
    ctx.begin_path();
    ctx.move_to(v.x_of(set.start_ns as f64).max(0.0), base);
    // One step per pixel column: buckets narrower than a pixel are folded into their column's
    // peak, so a path never has more points than the canvas is wide.
    let mut column: Option<(f64, f64, f64)> = None;
    let step = |ctx: &Ctx, c: (f64, f64, f64)| {
        ctx.line_to(c.0, c.2);
        ctx.line_to(c.1, c.2);
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
                step(ctx, c);
                Some((x0, x1, top))
            }
            None => Some((x0, x1, top)),
        };
    }
    if let Some(c) = column {
        step(ctx, c);
    }
    ctx.line_to(width.min(v.x_of(set.start_ns as f64 + s.values.len() as f64 * set.bucket_ns as f64)), base);
    ctx.close_path();
    ctx.fill();
}

/// The selected range: shaded, with its duration.
fn range(ctx: &Ctx, t: &TimelineState, theme: Theme, height: f64) {
    let Some((a, b)) = t.range else { return };
    let (x0, x1) = (t.view.x_of(a), t.view.x_of(b));
    let c = theme.colors();
    ctx.set_fill_style_str(c.range);
    ctx.fill_rect(x0, RULER_H, (x1 - x0).max(1.0), height - RULER_H);
    ctx.set_stroke_style_str(c.step);
    ctx.stroke_rect(x0 + 0.5, RULER_H + 0.5, (x1 - x0).max(1.0), height - RULER_H - 1.0);
}

/// Screen rectangle of a slice reference, if its lane is laid out.
fn place(t: &TimelineState, r: &SliceRef) -> Option<(f64, f64, f64)> {
    let track = t.lane_track(r.lane)?;
    let y = RULER_H + tracks::row_y(track, r.row) - t.scroll_y;
    let x0 = t.view.x_of(r.start_ns as f64);
    let x1 = t.view.x_of((r.start_ns + r.dur_ns) as f64);
    Some((x0, x1.max(x0 + 1.0), y))
}

/// Evidence of a finding: outlined in the search-match color, at least 3 px wide so a
/// sub-pixel kernel still shows.
fn highlight(ctx: &Ctx, t: &TimelineState, theme: Theme) {
    if t.highlight.is_empty() {
        return;
    }
    ctx.set_stroke_style_str(theme.colors().matched);
    ctx.set_line_width(2.5);
    for r in &t.highlight {
        if let Some((x0, x1, y)) = place(t, r) {
            let w = (x1 - x0).max(3.0);
            ctx.stroke_rect(x0 - (w - (x1 - x0)) / 2.0, y + 0.5, w, ROW_H - 1.0);
        }
    }
}

/// The selection's outline and its flow arrows: launched by / launched, flows in / out.
fn selection(ctx: &Ctx, t: &TimelineState, theme: Theme) {
    let Some(d) = &t.selected else { return };
    let c = theme.colors();
    let Some((x0, x1, y)) = place(t, &d.slice) else { return };
    ctx.set_stroke_style_str(c.selection);
    ctx.set_line_width(2.0);
    ctx.stroke_rect(x0, y + 0.5, x1 - x0, ROW_H - 1.0);
    ctx.set_stroke_style_str(c.flow);
    ctx.set_fill_style_str(c.flow);
    ctx.set_line_width(1.5);
    let me = (x0, y);
    let sources = d.launched_by.iter().chain(&d.flows_in);
    for r in sources {
        if let Some((sx, _, sy)) = place(t, r) {
            arrow(ctx, (sx, sy), me);
        }
    }
    for r in d.launched.iter().chain(&d.flows_out) {
        if let Some((tx, _, ty)) = place(t, r) {
            arrow(ctx, me, (tx, ty));
        }
    }
}

/// A curved arrow between the row-centers of two slice starts.
fn arrow(ctx: &Ctx, from: (f64, f64), to: (f64, f64)) {
    let (fx, fy) = (from.0, from.1 + ROW_H / 2.0);
    let (tx, ty) = (to.0, to.1 + ROW_H / 2.0);
    let bend = ((tx - fx).abs() / 2.0).clamp(20.0, 120.0);
    ctx.begin_path();
    ctx.move_to(fx, fy);
    ctx.bezier_curve_to(fx + bend, fy, tx - bend, ty, tx, ty);
    ctx.stroke();
    ctx.begin_path();
    ctx.move_to(tx, ty);
    ctx.line_to(tx - 7.0, ty - 4.0);
    ctx.line_to(tx - 7.0, ty + 4.0);
    ctx.close_path();
    ctx.fill();
}

#[cfg(test)]
mod tests {
    use super::label;

    #[test]
    fn labels_are_cut_with_an_ellipsis() {
        assert_eq!(label("aten::mm", 100.0), "aten::mm");
        assert_eq!(label("aten::convolution_backward", 64.0), "aten::con…");
        assert_eq!(label("aten::convolution", 20.0), "");
    }
}
