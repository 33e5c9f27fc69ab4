//! Step time: one bar per profiler step, stacked by the steps table's breakdown (kernel,
//! memcpy, …, other) or by phase (CPU or GPU time, `StepStack`), in ms, with a legend of the
//! parts that occur. With more steps than the
//! chart has room for, a bar is the slowest of its neighbours.

use super::{mesh, message, with_legend, Area, Drawn, Palette};
use crate::state::charts::StepChart;
use plotters::prelude::*;

/// Draws the step bars (a message while loading or when the trace has no steps).
pub fn draw(root: &Area, data: &Option<StepChart>, p: &Palette) -> Drawn {
    let Some(chart) = data else {
        return message(root, p, "loading…");
    };
    if chart.bars.is_empty() {
        return message(root, p, "No ProfilerStep#N in this trace: no step chart (see the Steps tab)");
    }
    // Parts that never occur would only clutter the legend.
    let shown: Vec<usize> = (0..chart.parts.len())
        .filter(|&j| {
            chart
                .bars
                .iter()
                .any(|b| b.parts_ns.get(j).is_some_and(|&v| v > 0))
        })
        .collect();
    let entries: Vec<(String, RGBColor)> = shown
        .iter()
        .map(|&j| (chart.parts[j].clone(), p.color(j)))
        .collect();
    let plot = with_legend(root, p, &entries)?;
    let n = chart.bars.len() as u32;
    let top_ms = (chart.max_ns() as f64 / 1e6).max(1e-3) * 1.05;
    // Bar i spans [i - 0.5, i + 0.5]; ticks on whole i name the step.
    let mut cc = ChartBuilder::on(&plot)
        .margin(p.px(10.0))
        .x_label_area_size(p.px(38.0))
        .y_label_area_size(p.px(58.0))
        .build_cartesian_2d(-0.5f64..(f64::from(n) - 0.5), 0f64..top_ms)?;
    let label = |x: &f64| {
        let i = x.round();
        if (x - i).abs() > 1e-6 || i < 0.0 {
            return String::new();
        }
        chart
            .bars
            .get(i as usize)
            .map_or_else(String::new, |b| b.number.to_string())
    };
    let y_label = |y: &f64| super::tick(*y, top_ms);
    mesh!(cc, p, "ProfilerStep", "time (ms)")
        .disable_x_mesh()
        .x_labels(chart.bars.len().min(24))
        .x_label_formatter(&label)
        .y_label_formatter(&y_label)
        .draw()?;
    // More steps than pairs of pixels: one bar per group of steps, the slowest of them. Drawn
    // one by one, 1,099 steps' parts made a 60 ms main-thread task for bars a pixel wide.
    let slowest = chart.slowest_per_group(plot.dim_in_pixel().0);
    let per_bar = slowest.first().map_or(1, |&(_, len, _)| len);
    // Gaps between bars shrink with many steps, so narrow bars never invert.
    let gap = (plot.dim_in_pixel().0 / n.max(1) * per_bar as u32 / 6).min(p.px(3.0));
    for &j in &shown {
        let color = p.color(j);
        let parts = slowest.iter().filter_map(|&(first, len, bar)| {
            let part = bar.parts_ns.get(j).copied().filter(|&v| v > 0)?;
            let below: i64 = bar.parts_ns.iter().take(j).sum();
            let x = first as f64;
            let mut rect = Rectangle::new(
                [
                    (x - 0.5, below as f64 / 1e6),
                    (x + len as f64 - 0.5, (below + part) as f64 / 1e6),
                ],
                color.filled(),
            );
            rect.set_margin(0, 0, gap, gap);
            Some(rect)
        });
        cc.draw_series(parts)?;
    }
    Ok(())
}
