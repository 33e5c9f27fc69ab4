//! The band marking a collective instance on a stacked rank's panel: its kernel's span on that
//! rank, shaded across the lanes and outlined, over the painted canvas (at least 3 px wide, so
//! a kernel shorter than a pixel at this zoom still shows). Drawn here rather than by the
//! painter because only the ranks timeline has it; time in the panel's own trace ns.

use super::draw::RULER_H;
use super::theme::Theme;
use crate::state::timeline::TimelineState;
use leptos::html;
use leptos::prelude::NodeRef;

/// Narrowest band drawn, CSS px.
const MIN_BAND_PX: f64 = 3.0;

/// Draws band `[start_ns, end_ns]` of `t`'s trace over the canvas, below the ruler.
pub fn paint(canvas: NodeRef<html::Canvas>, t: &TimelineState, (start_ns, end_ns): (f64, f64), theme: Theme) {
    let Some((ctx, width, height, _)) = super::context(canvas) else { return };
    let (x0, x1) = (t.view.x_of(start_ns), t.view.x_of(end_ns));
    if x1 < 0.0 || x0 > width {
        return;
    }
    let w = (x1 - x0).max(MIN_BAND_PX);
    let x = (x0 + x1 - w) / 2.0;
    let c = theme.colors();
    ctx.set_fill_style_str(c.range);
    ctx.fill_rect(x, RULER_H, w, height - RULER_H);
    ctx.set_stroke_style_str(c.matched);
    ctx.set_line_width(2.0);
    ctx.stroke_rect(x, RULER_H + 1.0, w, height - RULER_H - 2.0);
}
