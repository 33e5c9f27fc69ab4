//! The timeline's "Critical path" overlay as draw commands, a layer of the [`super::DrawList`]: everything dimmed by a veil, the
//! path's slices drawn again above it in their own colors and outlined, and an arrow wherever
//! the path moves to another lane (docs/viewer.md "Critical path").
//!
//! Inputs: the [`Overlay`] in [`TimelineState::critical`] (built once per toggle, step or
//! answer, not per frame). Cost per frame: one pass over the path's slices (at most
//! `protocol::MAX_PATH_SEGMENTS` per step), culled to the view; sub-pixel slices get at least
//! [`MIN_PX`] so a short kernel on the path still shows.

use super::{Cmd, Rect, RULER_H};
use crate::timeline::theme::{self, Theme};
use crate::state::critical::{Overlay, PathSlice};
use crate::state::tiles::name_hash;
use crate::state::timeline::TimelineState;
use crate::state::tracks::{self, ROW_H};

/// Narrowest outline drawn, CSS px.
const MIN_PX: f64 = 3.0;
/// The outline's color: the same in both themes, unused by the slice palette.
pub const OUTLINE: &str = "#ff1f8f";
/// Width of the outline, CSS px.
const OUTLINE_PX: f64 = 2.0;

/// The veil over everything off the path.
fn veil(theme: Theme) -> &'static str {
    match theme {
        Theme::Light => "rgba(255,255,255,0.75)",
        Theme::Dark => "rgba(16,18,22,0.75)",
    }
}

/// Appends the overlay of `t.critical` (nothing when the toggle is off); `width`, `height`:
/// the canvas in CSS px, `dpr` for snapping edges to device pixels.
pub fn draw(out: &mut Vec<Cmd>, t: &TimelineState, theme: Theme, (width, height, dpr): (f64, f64, f64)) {
    let Some(o) = &t.critical else { return };
    out.push(Cmd::Fill { color: veil(theme), rect: Rect::new(0.0, RULER_H, width, height - RULER_H) });
    let snap = |x: f64| (x * dpr).round() / dpr;
    let palette = theme.palette();
    let rows = Rows::new(t);
    let mut fills: Vec<Vec<Rect>> = vec![Vec::new(); palette.len()];
    let mut outlines = Vec::new();
    for (slice, rect) in rects(t, &rows, o, width) {
        let (x0, x1) = (snap(rect.x), snap(rect.x + rect.w));
        let rect = Rect::new(x0, snap(rect.y), (x1 - x0).max(1.0), rect.h);
        if let Some(slot) = fills.get_mut(theme::slot(name_hash(&slice.name))) {
            slot.push(rect);
        }
        // Inside the rect: a stroke centered half its width in from a whole-pixel edge covers
        // whole pixels, so the outline's color is exact where the e2e test samples it.
        let half = OUTLINE_PX / 2.0;
        outlines.push(Rect::new(rect.x + half, rect.y + half, (rect.w - OUTLINE_PX).max(0.0), rect.h - OUTLINE_PX));
    }
    for (rects, (fill, _)) in fills.into_iter().zip(palette) {
        if !rects.is_empty() {
            out.push(Cmd::FillRects { color: fill.as_str(), rects });
        }
    }
    if !outlines.is_empty() {
        out.push(Cmd::StrokeRects { color: OUTLINE, width: OUTLINE_PX, rects: outlines });
    }
    arrows(out, t, &rows, o, width);
}

/// Arrows where the path changes lane: a line from the end of one stretch to the start of the
/// next, with a head.
fn arrows(out: &mut Vec<Cmd>, t: &TimelineState, rows: &Rows, o: &Overlay, width: f64) {
    let mut lines = Vec::new();
    for &((fl, fr, fns), (tl, tr, tns)) in &o.arrows {
        let (Some(fy), Some(ty)) = (rows.top(t, fl, fr), rows.top(t, tl, tr)) else { continue };
        let (fx, tx) = (t.view.x_of(fns as f64), t.view.x_of(tns as f64));
        if fx.max(tx) < 0.0 || fx.min(tx) > width {
            continue;
        }
        lines.push([fx, fy + ROW_H / 2.0, tx, ty + ROW_H / 2.0]);
    }
    if !lines.is_empty() {
        let heads: Vec<[f64; 4]> = lines
            .iter()
            .flat_map(|&[fx, fy, x, y]| {
                let (dx, dy) = (x - fx, y - fy);
                let len = dx.hypot(dy).max(1e-9);
                let (ux, uy) = (dx / len * 6.0, dy / len * 6.0);
                [[x - ux - uy * 0.6, y - uy + ux * 0.6, x, y], [x - ux + uy * 0.6, y - uy - ux * 0.6, x, y]]
            })
            .collect();
        out.push(Cmd::Lines { color: OUTLINE, width: 1.5, lines });
        out.push(Cmd::Lines { color: OUTLINE, width: 1.5, lines: heads });
    }
}

/// Ids of the overlay's slices in view on a laid-out row, ascending: what it outlines
/// (`window.kinetoscope.critical.outlined`); none when the toggle is off.
pub fn outlined(t: &TimelineState) -> Vec<u32> {
    t.critical.as_ref().map_or_else(Vec::new, |o| {
        let rows = Rows::new(t);
        let mut ids: Vec<u32> = visible(t, &rows, o, t.view.width).map(|(s, _)| s.id).collect();
        ids.sort_unstable();
        ids
    })
}

/// The overlay's slices in view on a laid-out row, with their rects (CSS px, at least
/// [`MIN_PX`] wide): what the overlay covers.
fn visible<'a>(t: &'a TimelineState, rows: &'a Rows, o: &'a Overlay, width: f64) -> impl Iterator<Item = (&'a PathSlice, Rect)> + 'a {
    o.slices.iter().filter_map(move |s| {
        let x0 = t.view.x_of(s.start_ns as f64);
        let x1 = t.view.x_of((s.start_ns + s.dur_ns) as f64);
        if x1 < 0.0 || x0 > width {
            return None;
        }
        let y = rows.top(t, s.lane, s.row)?;
        let (x0, x1) = (x0.max(-OUTLINE_PX), x1.min(width + OUTLINE_PX));
        Some((s, Rect::new(x0, y + 1.0, (x1 - x0).max(MIN_PX), ROW_H - 2.0)))
    })
}

/// [`visible`] without the minimum-width rects that fall inside the previous one of their row
/// (zoomed out, thousands of sub-pixel kernels are one mark, drawn once).
fn rects<'a>(t: &'a TimelineState, rows: &'a Rows, o: &'a Overlay, width: f64) -> impl Iterator<Item = (&'a PathSlice, Rect)> + 'a {
    let mut last: std::collections::HashMap<(u32, u16), f64> = std::collections::HashMap::new();
    visible(t, rows, o, width).filter(move |(s, r)| {
        let end = last.entry((s.lane, s.row)).or_insert(f64::MIN);
        let inside = r.w <= MIN_PX && r.x + r.w <= *end + 0.5;
        *end = end.max(r.x + r.w);
        !inside
    })
}

/// The tracks of each lane, looked up once per frame rather than per slice.
struct Rows {
    by_lane: std::collections::HashMap<u32, Vec<usize>>,
}

impl Rows {
    /// The index of `t`'s tracks.
    fn new(t: &TimelineState) -> Self {
        let mut by_lane: std::collections::HashMap<u32, Vec<usize>> = std::collections::HashMap::new();
        for (i, track) in t.tracks.iter().enumerate() {
            if let tracks::TrackKind::Lane { lane, .. } = track.kind {
                by_lane.entry(lane).or_default().push(i);
            }
        }
        Rows { by_lane }
    }

    /// Top of row `row` of `lane` on the canvas, if laid out.
    fn top(&self, t: &TimelineState, lane: u32, row: u16) -> Option<f64> {
        let track = self.by_lane.get(&lane)?.iter().filter_map(|&i| t.tracks.get(i)).find(|tr| tracks::shows(tr, lane, row))?;
        Some(RULER_H + tracks::row_y(track, row) - t.scroll_y)
    }
}
