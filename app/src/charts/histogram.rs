//! Kernel duration histogram: the worker's equal-width bins of one kernel's launches, in µs or
//! ms (whichever reads better for the longest launch), with the median marked.

use super::{mesh, message, Area, Drawn, Palette};
use plotters::prelude::*;
use protocol::Histogram;

/// Draws the histogram (a message while loading or when the kernel has no launches).
pub fn draw(root: &Area, data: &Option<Histogram>, p: &Palette) -> Drawn {
    let Some(h) = data else {
        return message(root, p, "loading…");
    };
    if h.total == 0 || h.counts.is_empty() {
        return message(root, p, "No kernel launches to show");
    }
    let (unit, per_ns) = if h.max_ns >= 1_000_000 {
        ("ms", 1e-6)
    } else {
        ("µs", 1e-3)
    };
    let x0 = h.min_ns as f64 * per_ns;
    let x1 = (h.min_ns + h.width_ns * h.counts.len() as i64) as f64 * per_ns;
    let top = h.counts.iter().copied().max().unwrap_or(1) as f64 * 1.1;
    let mut cc = ChartBuilder::on(root)
        .margin(p.px(10.0))
        .x_label_area_size(p.px(38.0))
        .y_label_area_size(p.px(58.0))
        .build_cartesian_2d(x0..x1.max(x0 + per_ns), 0f64..top.max(1.0))?;
    let x_label = |x: &f64| super::tick(*x, x1 - x0);
    // Counts are whole: fractional ticks stay unlabeled.
    let y_label = |y: &f64| {
        if y.fract() == 0.0 {
            format!("{y:.0}")
        } else {
            String::new()
        }
    };
    mesh!(cc, p, format!("duration ({unit})"), "launches")
        .x_labels(8)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .draw()?;
    let color = p.color(0);
    cc.draw_series(
        h.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let a = (h.min_ns + h.width_ns * i as i64) as f64 * per_ns;
                let b = a + h.width_ns as f64 * per_ns;
                let mut rect = Rectangle::new([(a, 0.0), (b, c as f64)], color.filled());
                rect.set_margin(0, 0, 0, 1);
                rect
            }),
    )?;
    let median = h.median_ns as f64 * per_ns;
    let accent = p.color(4);
    cc.draw_series(std::iter::once(PathElement::new(
        vec![(median, 0.0), (median, top)],
        accent.stroke_width(p.px(2.0).max(1)),
    )))?;
    cc.draw_series(std::iter::once(Text::new(
        format!("median {median:.1} {unit}"),
        (median, top),
        p.font(11.0, p.ink),
    )))?;
    Ok(())
}
