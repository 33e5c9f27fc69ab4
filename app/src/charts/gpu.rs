//! GPU utilization over the whole trace: one filled curve per device (busy share of each
//! bucket), plus SM efficiency when the trace has it, in %. Utilization is the main series
//! (a solid fill); SM efficiency is a thin line, and the
//! legend says what each measures.

use super::{mesh, message, with_noted_legend, Area, Drawn, Palette};
use crate::state::charts::gpu_legend;
use plotters::prelude::*;
use protocol::{CounterSeries, CounterSet};

/// Draws the GPU utilization and SM efficiency series (a message while loading or without GPU).
pub fn draw(root: &Area, data: &Option<CounterSet>, p: &Palette) -> Drawn {
    let Some(set) = data else {
        return message(root, p, "loading…");
    };
    let series: Vec<&CounterSeries> = set.series.iter().filter(|s| s.metric != "memory").collect();
    if series.is_empty() {
        return message(root, p, "No GPU activity in this trace");
    }
    let entries: Vec<(String, &str, RGBColor)> = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (label, note) = gpu_legend(s);
            (label, note, p.color(i))
        })
        .collect();
    let plot = with_noted_legend(root, p, &entries)?;
    let end_ms = super::memory::end_ms(set);
    let mut cc = ChartBuilder::on(&plot)
        .margin(p.px(10.0))
        .x_label_area_size(p.px(38.0))
        .y_label_area_size(p.px(58.0))
        .build_cartesian_2d(0f64..end_ms, 0f64..100.0)?;
    let x_label = |x: &f64| super::tick(*x, end_ms);
    mesh!(cc, p, "time (ms)", "busy (%)")
        .x_labels(8)
        .x_label_formatter(&x_label)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    // The fill first, so the thin SM-efficiency line (never above utilization) stays on top.
    for (i, s) in series.iter().enumerate().filter(|(_, s)| s.metric == "utilization") {
        let color = p.color(i);
        let points = super::memory::points(set, s, 100.0);
        cc.draw_series(
            AreaSeries::new(points, 0.0, color.mix(0.55))
                .border_style(color.stroke_width(p.px(2.0).max(1))),
        )?;
    }
    for (i, s) in series.iter().enumerate().filter(|(_, s)| s.metric != "utilization") {
        let points = super::memory::points(set, s, 100.0);
        cc.draw_series(LineSeries::new(points, p.color(i).stroke_width(p.px(1.0).max(1))))?;
    }
    Ok(())
}
