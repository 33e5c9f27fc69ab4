//! The Run tab's rank x step heatmap, drawn with plotters on a `<canvas>`: one row per rank,
//! one column per step, each cell shaded by its value in the [`HeatMode`] (step time, or step
//! time minus the rank's collective waits; light: lowest of the run, dark: highest), outliers
//! outlined in red with a mark, the value written when the cell has room, the straggler's row
//! outlined and its label starred. Cell geometry comes from [`layout_heatmap`], so the cells drawn, the cells clicked
//! and the cells `window.kinetoscope.run.heatmap` reports are the same rects.

use super::Palette;
use crate::state::format;
use crate::state::run::{heatmap_axes, heatmap_height, layout_heatmap, HeatCell, HeatMode, HEAT_LEFT, HEAT_TOP};
use crate::timeline::theme::Theme;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_canvas::CanvasBackend;
use protocol::RunData;
use web_sys::HtmlCanvasElement;

/// Fastest and slowest cell colors (light and dark blue), and the outlier outline.
const FAST: (f64, f64, f64) = (219.0, 231.0, 251.0);
const SLOW: (f64, f64, f64) = (29.0, 79.0, 168.0);
const OUTLIER: RGBColor = RGBColor(0xd9, 0x3f, 0x3f);
/// The straggler's row outline and label (orange: apart from the outliers' red).
const STRAGGLER: RGBColor = RGBColor(0xe8, 0x8a, 0x00);

/// What one draw shows: the value mode and the straggler's rank.
#[derive(Clone, Copy, Debug)]
pub struct Shown {
    /// The cells' values.
    pub mode: HeatMode,
    /// The rank whose row is outlined.
    pub straggler: Option<u32>,
}

/// Draws `data`'s heatmap on `canvas`, `width_css` CSS px wide (its height follows the rank
/// count); returns the cells drawn.
pub fn draw(canvas: HtmlCanvasElement, data: &RunData, width_css: f64, shown: Shown, theme: Theme, scale: f64) -> Vec<HeatCell> {
    let cells = layout_heatmap(data, width_css, shown.mode);
    let (ranks, steps) = heatmap_axes(data);
    let p = Palette::new(theme, scale);
    canvas.set_width(p.px(width_css).max(1));
    canvas.set_height(p.px(heatmap_height(ranks.len())).max(1));
    let Some(backend) = CanvasBackend::with_canvas_object(canvas) else {
        return cells;
    };
    let root = backend.into_drawing_area();
    if let Err(e) = paint(&root, &cells, (&ranks, &steps), shown.straggler, &p) {
        web_sys::console::warn_1(&format!("heatmap not drawn: {e}").into());
    }
    cells
}

type Area = DrawingArea<CanvasBackend, plotters::coord::Shift>;

fn paint(root: &Area, cells: &[HeatCell], (ranks, steps): (&[u32], &[u64]), straggler: Option<u32>, p: &Palette) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&p.background)?;
    let px = |v: f64| (v * p.scale).round() as i32;
    if cells.is_empty() {
        root.draw(&Text::new("No steps to compare", (px(HEAT_LEFT), px(HEAT_TOP)), p.font(13.0, p.muted)))?;
        return root.present().map_err(Into::into);
    }
    let (lo, hi) = cells.iter().fold((f64::MAX, f64::MIN), |(lo, hi), c| (lo.min(c.dur_us), hi.max(c.value_us)));
    let shade = |dur: f64| {
        let t = if hi > lo { ((dur - lo) / (hi - lo)).clamp(0.0, 1.0) } else { 0.5 };
        let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
        (RGBColor(mix(FAST.0, SLOW.0), mix(FAST.1, SLOW.1), mix(FAST.2, SLOW.2)), t > 0.5)
    };
    let row_h = cells.first().map_or(0.0, |c| c.h);
    let col_w = cells.first().map_or(0.0, |c| c.w);
    let left = Pos::new(HPos::Left, VPos::Center);
    let center = Pos::new(HPos::Center, VPos::Center);
    for (i, rank) in ranks.iter().enumerate() {
        let y = HEAT_TOP + (i as f64 + 0.5) * row_h;
        if Some(*rank) == straggler {
            root.draw(&Text::new(format!("rank {rank} ★"), (px(6.0), px(y)), p.font(12.0, STRAGGLER).pos(left)))?;
        } else {
            root.draw(&Text::new(format!("rank {rank}"), (px(6.0), px(y)), p.font(12.0, p.ink).pos(left)))?;
        }
    }
    // Step labels: as many as fit (one per 44 px at least).
    let every = ((44.0 / col_w).ceil() as usize).max(1);
    for (j, step) in steps.iter().enumerate().filter(|(j, _)| j % every == 0) {
        let x = HEAT_LEFT + (j as f64 + 0.5) * col_w;
        root.draw(&Text::new(step.to_string(), (px(x), px(HEAT_TOP / 2.0)), p.font(11.0, p.muted).pos(center)))?;
    }
    for c in cells {
        let (fill, dark) = shade(c.value_us);
        let (x0, y0, x1, y1) = (px(c.x + 1.0), px(c.y + 1.0), px(c.x + c.w - 1.0), px(c.y + c.h - 1.0));
        root.draw(&Rectangle::new([(x0, y0), (x1.max(x0 + 1), y1)], fill.filled()))?;
        if c.outlier {
            root.draw(&Rectangle::new([(x0, y0), (x1.max(x0 + 1), y1)], OUTLIER.stroke_width(p.px(2.0))))?;
        }
        if c.w >= 56.0 {
            let ink = if dark { RGBColor(0xff, 0xff, 0xff) } else { p.ink };
            let mark = if c.outlier { "▲ " } else { "" };
            let text = format!("{mark}{}", format::span_us(c.value_us));
            root.draw(&Text::new(text, (px(c.x + c.w / 2.0), px(c.y + c.h / 2.0)), p.font(11.0, ink).pos(center)))?;
        } else if c.outlier {
            root.draw(&Text::new("▲", (px(c.x + c.w / 2.0), px(c.y + c.h / 2.0)), p.font(10.0, OUTLIER).pos(center)))?;
        }
    }
    // Over the cells, so no cell hides the outline.
    if let Some(i) = ranks.iter().position(|&r| Some(r) == straggler) {
        let (top, bottom) = (HEAT_TOP + i as f64 * row_h, HEAT_TOP + (i as f64 + 1.0) * row_h);
        let right = cells.iter().map(|c| c.x + c.w).fold(HEAT_LEFT, f64::max);
        let outline = [(px(2.0), px(top + 1.0)), (px(right), px(bottom - 1.0))];
        root.draw(&Rectangle::new(outline, STRAGGLER.stroke_width(p.px(2.0))))?;
    }
    root.present()?;
    Ok(())
}
