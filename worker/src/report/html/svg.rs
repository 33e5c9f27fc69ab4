//! Inline SVG charts for `report --format html`: step time stacked by breakdown category, GPU
//! utilization over the trace, and allocated memory over the trace, each as one `<svg>` string
//! of at most a few hundred elements (steps x 8 categories, or one path per series).
//!
//! Inputs: the report's [`Steps`] (ns) and a [`CounterSet`] bucketed by
//! `answer::counters::counters` (the numbers the page's Charts tab draws). Output: markup whose
//! colors are CSS classes (`k0`..`k7` categories, `s0`..`s7` series, `ink`, `grid`), styled by
//! the report's stylesheet.
//!
//! **Why a small writer and not `plotters`' SVG backend**: plotters writes every color as a
//! literal `fill="#RRGGBB"`, so one file cannot follow `prefers-color-scheme: dark` or print in
//! black on white; it would also add a dependency tree to the engine for three bar / line charts.
//! Classes let the stylesheet pick the palette, and every text node goes through
//! [`super::escape`] (op and kernel names are untrusted).

use super::escape;
use crate::analysis::breakdown::CATEGORIES;
use crate::analysis::steps::Steps;
use protocol::CounterSet;
use std::fmt::Write as _;

/// Chart width and height in SVG user units (the element scales to its box).
const W: f64 = 720.0;
const H: f64 = 240.0;
/// Plot margins: left for y labels, bottom for x labels.
const LEFT: f64 = 64.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;
/// Y-axis ticks per chart.
const TICKS: usize = 4;

/// The plot area's pixel mapping for values in `[0, y_max]` and x in `[0, x_max]`.
struct Plot {
    x_max: f64,
    y_max: f64,
}

impl Plot {
    fn x(&self, v: f64) -> f64 {
        LEFT + (W - LEFT - RIGHT) * (v / self.x_max.max(f64::MIN_POSITIVE))
    }

    fn y(&self, v: f64) -> f64 {
        H - BOTTOM - (H - TOP - BOTTOM) * (v / self.y_max.max(f64::MIN_POSITIVE))
    }
}

/// Opens an `<svg>` with its accessible title.
fn open(title: &str) -> String {
    format!(
        "<svg class=\"chart\" viewBox=\"0 0 {W} {H}\" role=\"img\"><title>{}</title>",
        escape(title)
    )
}

/// Grid lines and labels for `TICKS` steps of the y axis, and the x axis line.
fn axes(out: &mut String, plot: &Plot, label: impl Fn(f64) -> String) {
    for i in 0..=TICKS {
        let v = plot.y_max * i as f64 / TICKS as f64;
        let y = plot.y(v);
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/><text class=\"ink\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            escape(&label(v))
        );
    }
}

/// A rounded-up axis maximum: 1, 2 or 5 times a power of ten, at least `v`.
fn nice_max(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * p).find(|m| *m >= v).unwrap_or(10.0 * p)
}

/// Milliseconds with as few decimals as the axis needs.
fn ms(v: f64) -> String {
    if v >= 10.0 || v == 0.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.2} ms")
    }
}

/// Step time per step, each bar stacked by breakdown category (tb_plugin's step chart), with a
/// legend of the categories that have time; `None` without steps.
pub fn step_bars(steps: &Steps, name_of: impl Fn(u64) -> String) -> Option<String> {
    if steps.steps.is_empty() {
        return None;
    }
    let longest = steps.steps.iter().map(|s| s.breakdown.total().max(s.dur_ns())).max().unwrap_or(0);
    let plot = Plot { x_max: steps.steps.len() as f64, y_max: nice_max(longest as f64 / 1e6) };
    let mut out = open("Step time by category (ms)");
    axes(&mut out, &plot, ms);
    let slot = plot.x(1.0) - plot.x(0.0);
    let bar = (slot * 0.7).max(1.0);
    for (i, s) in steps.steps.iter().enumerate() {
        let x = plot.x(i as f64) + (slot - bar) / 2.0;
        let _ = write!(out, "<g><title>{}: {}</title>", escape(&name_of(s.number)), escape(&crate::text::span(s.dur_ns())));
        let mut base = 0.0;
        for (k, cat) in CATEGORIES.iter().enumerate() {
            let v = s.breakdown.get(*cat) as f64 / 1e6;
            if v <= 0.0 {
                continue;
            }
            let (y0, y1) = (plot.y(base), plot.y(base + v));
            let _ = write!(out, "<rect class=\"k{k}\" x=\"{x:.1}\" y=\"{y1:.1}\" width=\"{bar:.1}\" height=\"{:.1}\"/>", (y0 - y1).max(0.1));
            base += v;
        }
        out.push_str("</g>");
        // Label every bar when they fit, else about ten of them.
        let every = steps.steps.len().div_ceil(12).max(1);
        if i % every == 0 {
            let _ = write!(
                out,
                "<text class=\"ink\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                x + bar / 2.0,
                H - BOTTOM + 16.0,
                s.number
            );
        }
    }
    out.push_str("</svg>");
    let mut legend = String::from("<p class=\"legend\">");
    for (k, cat) in CATEGORIES.iter().enumerate() {
        if steps.steps.iter().any(|s| s.breakdown.get(*cat) > 0) {
            let _ = write!(legend, "<span><i class=\"k{k}\"></i>{}</span> ", cat.label());
        }
    }
    legend.push_str("</p>");
    Some(out + &legend)
}

/// Lines of the counter series whose metric `keep` accepts, over time in ms, values times
/// `factor` on a `[0, y_max]` axis (`None`: the largest value); `None` when no series is kept.
pub fn counter_lines(
    set: &CounterSet,
    keep: impl Fn(&str) -> bool,
    factor: f64,
    y_max: Option<f64>,
    title: &str,
    label: impl Fn(f64) -> String,
) -> Option<String> {
    let series: Vec<_> = set.series.iter().filter(|s| keep(&s.metric)).collect();
    let buckets = series.iter().map(|s| s.values.len()).max().unwrap_or(0);
    if series.is_empty() || buckets == 0 {
        return None;
    }
    let largest = series.iter().flat_map(|s| s.values.iter().flatten()).fold(0.0f64, |m, v| m.max(v * factor));
    let plot = Plot { x_max: buckets as f64, y_max: y_max.unwrap_or_else(|| nice_max(largest)) };
    let mut out = open(title);
    axes(&mut out, &plot, label);
    for (n, s) in series.iter().enumerate() {
        let mut d = String::new();
        let mut pen_down = false;
        for (i, v) in s.values.iter().enumerate() {
            // A bucket without data breaks the line instead of drawing it to zero.
            let Some(v) = v else {
                pen_down = false;
                continue;
            };
            let (x, y) = (plot.x(i as f64 + 0.5), plot.y(v * factor));
            let _ = write!(d, "{}{x:.1},{y:.1}", if pen_down { " L" } else { " M" });
            pen_down = true;
        }
        let _ = write!(out, "<path class=\"s{} line\" d=\"{}\"><title>{}</title></path>", n % 8, d.trim_start(), escape(&s.label));
    }
    let end_ms = set.bucket_ns as f64 * buckets as f64 / 1e6;
    let _ = write!(
        out,
        "<text class=\"ink\" x=\"{LEFT}\" y=\"{:.1}\">{}</text><text class=\"ink\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text></svg>",
        H - BOTTOM + 16.0,
        escape(&ms(set.start_ns as f64 / 1e6)),
        W - RIGHT,
        H - BOTTOM + 16.0,
        escape(&ms(set.start_ns as f64 / 1e6 + end_ms)),
    );
    let mut legend = String::from("<p class=\"legend\">");
    for (n, s) in series.iter().enumerate() {
        let _ = write!(legend, "<span><i class=\"s{}\"></i>{}</span> ", n % 8, escape(&s.label));
    }
    legend.push_str("</p>");
    Some(out + &legend)
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::CounterSeries;

    #[test]
    fn axis_maxima_are_round() {
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(3.2), 5.0);
        assert_eq!(nice_max(12.0), 20.0);
        assert_eq!(nice_max(100.0), 100.0);
    }

    #[test]
    fn gaps_break_the_line_and_labels_are_escaped() {
        let set = CounterSet {
            start_ns: 0,
            bucket_ns: 1_000_000,
            series: vec![CounterSeries {
                device: 0,
                metric: "memory".into(),
                label: "<script>".into(),
                values: vec![Some(1.0), None, Some(2.0)],
                max: 2.0,
            }],
        };
        let svg = counter_lines(&set, |m| m == "memory", 1.0, None, "t", |v| format!("{v}")).unwrap_or_default();
        assert_eq!(svg.matches(" M").count() + usize::from(svg.contains("d=\"M")), 2, "{svg}");
        assert!(svg.contains("&lt;script&gt;") && !svg.contains("<script>"), "{svg}");
        assert!(counter_lines(&set, |m| m == "utilization", 1.0, None, "t", |v| format!("{v}")).is_none());
    }
}
