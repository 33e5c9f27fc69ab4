//! Memory of one device over the whole trace, in MB (10^6 bytes): the bytes live by category
//! stacked, allocated and reserved as lines, each step's peak as a dot, and the moment whose
//! live allocations the list below shows. Each bucket holds its peak (the worker keeps spikes
//! narrower than a bucket visible). Also the shared time-axis helpers of the counter charts.

use super::{mesh, message, with_legend, Area, Drawn, Palette};
use plotters::prelude::*;
use protocol::{CategorySeries, CounterSeries, CounterSet, MemoryData};
use std::cell::Cell;

/// What the memory chart draws: the device's data and the moment whose live allocations are
/// listed (marked by a vertical line).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Picture {
    /// The worker's chart of one device.
    pub data: Option<MemoryData>,
    /// The moment listed, ns.
    pub at_ns: Option<i64>,
}

thread_local! {
    /// The last drawn plot's x axis: (device px of time 0, device px of the axis end, axis end
    /// in ms). The shared redraw calls a plain `fn`, and the pointer handler needs the mapping
    /// that drawing used to turn a hovered pixel into a time.
    static X_AXIS: Cell<Option<(f64, f64, f64)>> = const { Cell::new(None) };
}

/// The time (ns) under canvas x `device_px`, when a chart is drawn and the point is on its axis.
pub fn ns_at(device_px: f64) -> Option<i64> {
    let (x0, x1, end_ms) = X_AXIS.with(Cell::get)?;
    let f = (device_px - x0) / (x1 - x0);
    ((0.0..=1.0).contains(&f)).then(|| (f * end_ms * 1e6).round() as i64)
}

/// Draws the device's bytes by category as stacked areas, allocated and reserved as lines,
/// each step's peak as a dot and the listed moment as a vertical line (a message while
/// loading or without memory events).
pub fn draw(root: &Area, pic: &Picture, p: &Palette) -> Drawn {
    X_AXIS.with(|x| x.set(None));
    let Some(data) = &pic.data else {
        return message(root, p, "loading…");
    };
    if data.device.is_empty() {
        return message(root, p, "No memory events in this trace (profile_memory=True records them)");
    }
    let shown: Vec<(usize, &CategorySeries)> =
        data.categories.iter().enumerate().filter(|(_, c)| c.values.iter().any(|&v| v > 0)).collect();
    let mut entries: Vec<(String, RGBColor)> = shown.iter().map(|&(i, c)| (c.name.replace('_', " "), p.color(i))).collect();
    entries.push(("allocated".into(), p.ink));
    entries.push(("reserved".into(), p.muted));
    let plot = with_legend(root, p, &entries)?;
    let stacks = stacked(data);
    let top = data
        .allocated
        .iter()
        .chain(&data.reserved)
        .flatten()
        .copied()
        .chain(stacks.last().into_iter().flatten().copied())
        .fold(0.0f64, f64::max)
        / 1e6;
    let end = axis_end_ms(data);
    let mut cc = ChartBuilder::on(&plot)
        .margin(p.px(10.0))
        .x_label_area_size(p.px(38.0))
        .y_label_area_size(p.px(64.0))
        .build_cartesian_2d(0f64..end, 0f64..(top * 1.08).max(1e-3))?;
    let x_label = |x: &f64| super::tick(*x, end);
    let y_label = |y: &f64| super::tick(*y, top);
    mesh!(cc, p, "time (ms)", "MB").x_labels(8).x_label_formatter(&x_label).y_label_formatter(&y_label).draw()?;
    let mid = |b: usize| (data.start_ns as f64 + (b as f64 + 0.5) * data.bucket_ns as f64) / 1e6;
    // Stacked: each category's cumulative top, drawn from the highest down so each lower
    // band paints over the one above it.
    for k in (0..shown.len()).rev() {
        let (i, _) = shown[k];
        let points: Vec<(f64, f64)> = stacks[k].iter().enumerate().map(|(b, &v)| (mid(b), v / 1e6)).collect();
        cc.draw_series(AreaSeries::new(points, 0.0, p.color(i).filled()))?;
    }
    let line = |values: &[Option<f64>]| -> Vec<(f64, f64)> {
        values.iter().enumerate().filter_map(|(b, v)| v.map(|v| (mid(b), v / 1e6))).collect()
    };
    cc.draw_series(LineSeries::new(line(&data.reserved), p.muted.stroke_width(p.px(1.5).max(1))))?;
    cc.draw_series(LineSeries::new(line(&data.allocated), p.ink.stroke_width(p.px(1.5).max(1))))?;
    let dot = p.px(3.5).max(2);
    cc.draw_series(
        data.steps
            .iter()
            .map(|s| Circle::new((s.peak_ns as f64 / 1e6, s.peak_bytes as f64 / 1e6), dot, p.ink.filled())),
    )?;
    if let Some(at) = pic.at_ns {
        let x = at as f64 / 1e6;
        cc.draw_series(std::iter::once(PathElement::new(
            vec![(x, 0.0), (x, top * 1.08)],
            p.ink.stroke_width(p.px(1.0).max(1)),
        )))?;
    }
    let (x0, x1) = (cc.backend_coord(&(0.0, 0.0)).0, cc.backend_coord(&(end, 0.0)).0);
    if x1 > x0 {
        X_AXIS.with(|x| x.set(Some((f64::from(x0), f64::from(x1), end))));
    }
    Ok(())
}

/// The cumulative bytes of the categories with data, bottom first: `[k][bucket]`.
fn stacked(data: &MemoryData) -> Vec<Vec<f64>> {
    let mut out: Vec<Vec<f64>> = Vec::new();
    for c in data.categories.iter().filter(|c| c.values.iter().any(|&v| v > 0)) {
        let below = out.last();
        let row = c.values.iter().enumerate().map(|(b, &v)| v as f64 + below.map_or(0.0, |r| r[b])).collect();
        out.push(row);
    }
    out
}

/// End of the chart's time axis, ms (at least 1 µs).
fn axis_end_ms(data: &MemoryData) -> f64 {
    let buckets = data.allocated.len() as f64;
    ((data.start_ns as f64 + buckets * data.bucket_ns as f64) / 1e6).max(1e-3)
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
