//! Allocated memory over the whole trace: one curve per device, in MB (10^6 bytes). Each bucket
//! holds its peak (the worker keeps spikes narrower than a bucket visible). Also the shared
//! time-axis helpers of the counter charts.

use super::{mesh, message, series_legend, Area, Drawn, Palette};
use plotters::prelude::*;
use protocol::{CounterSeries, CounterSet};

/// Draws the memory series (a message while loading or without memory events).
pub fn draw(root: &Area, data: &Option<CounterSet>, p: &Palette) -> Drawn {
    let Some(set) = data else {
        return message(root, p, "loading…");
    };
    let series: Vec<&CounterSeries> = set.series.iter().filter(|s| s.metric == "memory").collect();
    if series.is_empty() {
        return message(
            root,
            p,
            "No memory events in this trace (profile_memory=True records them)",
        );
    }
    let plot = series_legend(root, p, &series)?;
    let top_mb = series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .fold(0.0f64, |m, &v| m.max(v))
        / 1e6;
    let mut cc = ChartBuilder::on(&plot)
        .margin(p.px(10.0))
        .x_label_area_size(p.px(38.0))
        .y_label_area_size(p.px(64.0))
        .build_cartesian_2d(0f64..end_ms(set), 0f64..(top_mb * 1.08).max(1e-3))?;
    let end = end_ms(set);
    let x_label = |x: &f64| super::tick(*x, end);
    let y_label = |y: &f64| super::tick(*y, top_mb);
    mesh!(cc, p, "time (ms)", "allocated (MB)")
        .x_labels(8)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .draw()?;
    for (i, s) in series.iter().enumerate() {
        let color = p.color(i);
        let points = points(set, s, 1e-6);
        cc.draw_series(LineSeries::new(
            points,
            color.stroke_width(p.px(1.5).max(1)),
        ))?;
    }
    Ok(())
}

/// End of the set's window, ms (at least 1 µs, so the axis range is never empty).
pub fn end_ms(set: &CounterSet) -> f64 {
    let buckets = set.series.iter().map(|s| s.values.len()).max().unwrap_or(0) as f64;
    ((set.start_ns as f64 + buckets * set.bucket_ns as f64) / 1e6).max(1e-3)
}

/// (bucket middle in ms, value × `factor`) for the buckets with data.
pub fn points(set: &CounterSet, s: &CounterSeries, factor: f64) -> Vec<(f64, f64)> {
    s.values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let mid_ns = set.start_ns as f64 + (i as f64 + 0.5) * set.bucket_ns as f64;
            v.map(|v| (mid_ns / 1e6, v * factor))
        })
        .collect()
}
