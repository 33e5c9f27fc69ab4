//! The roofline: one circle per kernel name with known FLOPs and bytes, at its arithmetic
//! intensity (FLOP/B, x) and achieved TFLOP/s (y), both axes log; its area grows with the
//! kernel's total time and it is colored by bound (compute, memory, unknown). The roofs: the
//! memory-bandwidth slope up to the ridge point, then the flat compute roof of the dominant
//! precision. Axes and roofs come from `state::roofline`; the worker computed every number.
//! Returns the circles as drawn (canvas pixels), so the pointer can be matched to a kernel.

use super::{mesh, message, with_legend, Area, Drawing, Palette};
use crate::state::format;
use crate::state::roofline::{axes, empty_message, roof_line, roofs, Circle};
use plotters::prelude::*;
use protocol::RooflineData;

/// Radius of the smallest and the largest circle, CSS px.
const MIN_R_PX: f64 = 3.0;
const MAX_R_PX: f64 = 14.0;

/// What [`draw`] returns: the circles drawn, in drawing order (the points' order).
type Circles = Drawing<Vec<Circle>>;

/// Draws the roofline (a message while loading or with no kernel to plot).
pub fn draw(root: &Area, data: &Option<RooflineData>, p: &Palette) -> Circles {
    let Some(d) = data else {
        return message(root, p, "loading…").map(|()| Vec::new());
    };
    let Some(a) = axes(d) else {
        let text = if empty_message(d).is_some() { "No kernel with known FLOPs and bytes" } else { "" };
        return message(root, p, text).map(|()| Vec::new());
    };
    let (compute, memory, unknown) = (p.color(0), p.color(1), p.color(7));
    let plot = with_legend(
        root,
        p,
        &[
            ("compute-bound".to_owned(), compute),
            ("memory-bound".to_owned(), memory),
            ("bound unknown".to_owned(), unknown),
            ("roofs".to_owned(), p.ink),
        ],
    )?;
    let mut cc = ChartBuilder::on(&plot)
        .margin(p.px(10.0))
        .x_label_area_size(p.px(38.0))
        .y_label_area_size(p.px(58.0))
        .build_cartesian_2d((a.x.0..a.x.1).log_scale(), (a.y.0..a.y.1).log_scale())?;
    mesh!(cc, p, "arithmetic intensity (FLOP/B)", "achieved TFLOP/s")
        .x_label_formatter(&|x| decade(*x))
        .y_label_formatter(&|y| decade(*y))
        .draw()?;
    let line = roof_line(d, a.x);
    if !line.is_empty() {
        cc.draw_series(std::iter::once(PathElement::new(line, p.ink.stroke_width(p.px(2.0).max(1)))))?;
    }
    if let (Some((gbps, tflops)), Some((class, _))) = (roofs(d), d.roof.as_ref()) {
        let label = format!("{class} {} TFLOP/s", format::rate(tflops));
        cc.draw_series(std::iter::once(Text::new(label, (a.x.1 / 30.0, tflops * 1.15), p.font(11.0, p.ink))))?;
        // On the slope, a decade left of the ridge, above the line.
        let x = (tflops * 1000.0 / gbps / 30.0).max(a.x.0 * 1.5);
        let y = gbps * x / 1000.0 * 1.6;
        cc.draw_series(std::iter::once(Text::new(format!("{} GB/s", format::rate(gbps)), (x, y), p.font(11.0, p.ink))))?;
    }
    let longest = d.points.iter().map(|pt| pt.total_ns).max().unwrap_or(1).max(1) as f64;
    // Longest first, so shorter kernels' smaller circles stay visible on top.
    let radius = |total_ns: i64| {
        let share = (total_ns.max(0) as f64 / longest).sqrt();
        p.px(MIN_R_PX + (MAX_R_PX - MIN_R_PX) * share).max(1)
    };
    let circles = d.points.iter().map(|pt| {
        let color = match pt.bound.as_deref() {
            Some("compute") => compute,
            Some("memory") => memory,
            _ => unknown,
        };
        plotters::element::Circle::new((pt.intensity, pt.tflops), radius(pt.total_ns), color.mix(0.6).filled())
    });
    cc.draw_series(circles)?;
    Ok(d.points
        .iter()
        .map(|pt| {
            let (x, y) = cc.backend_coord(&(pt.intensity, pt.tflops));
            Circle { x: f64::from(x), y: f64::from(y), r: f64::from(radius(pt.total_ns)) }
        })
        .collect())
}

/// A log-axis tick: `0.01`, `0.1`, `1`, `10`, `1k`, `10k` (others as three digits).
fn decade(v: f64) -> String {
    let (v, unit) = if v >= 1000.0 { (v / 1000.0, "k") } else { (v, "") };
    let digits = format::rate(v);
    let digits = if digits.contains('.') { digits.trim_end_matches('0').trim_end_matches('.') } else { &digits };
    format!("{digits}{unit}")
}
