//! The visible time window and the conversions between time (ns from the trace origin) and
//! horizontal pixels of the timeline's drawing area.
//!
//! Invariants: `start < end`; the span is at least [`MIN_SPAN_NS`] and at most the trace span
//! plus margins; `width > 0`. Zoom keeps the time under the anchor pixel fixed (Perfetto's
//! behaviour for W/S and ctrl+wheel).

/// Narrowest window: 100 ns across the whole width.
pub const MIN_SPAN_NS: f64 = 100.0;
/// A slice brought into view narrower than this many pixels is zoomed into ([`Viewport::bring`]).
const MIN_SHOWN_PX: f64 = 3.0;
/// The width, in pixels, a slice zoomed into by [`Viewport::bring`] gets.
const ZOOMED_PX: f64 = 40.0;
/// Room left of the first and right of the last event when fully zoomed out, as a share of the
/// trace span.
const MARGIN: f64 = 0.02;

/// The visible window over a trace of `trace_end_ns`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    /// Left edge, ns.
    pub start: f64,
    /// Right edge, ns.
    pub end: f64,
    /// Width of the drawing area in CSS pixels.
    pub width: f64,
    /// End of the trace, ns (its start is 0).
    pub trace_end: f64,
}

impl Default for Viewport {
    fn default() -> Self {
        Self::new(1_000.0, 1_000.0)
    }
}

impl Viewport {
    /// The whole trace across `width` pixels.
    pub fn new(trace_end: f64, width: f64) -> Self {
        let mut v = Self {
            start: 0.0,
            end: 1.0,
            width: width.max(1.0),
            trace_end: trace_end.max(1.0),
        };
        v.reset();
        v
    }

    /// Shows the whole trace.
    pub fn reset(&mut self) {
        let m = self.trace_end * MARGIN;
        self.start = -m;
        self.end = self.trace_end + m;
        self.clamp();
    }

    /// Nanoseconds per pixel.
    pub fn ns_per_px(&self) -> f64 {
        (self.end - self.start) / self.width
    }

    /// Span in ns.
    pub fn span(&self) -> f64 {
        self.end - self.start
    }

    /// Pixel of time `ns` (may be outside `0..width`).
    pub fn x_of(&self, ns: f64) -> f64 {
        (ns - self.start) / self.ns_per_px()
    }

    /// Time at pixel `x`.
    pub fn ns_at(&self, x: f64) -> f64 {
        self.start + x * self.ns_per_px()
    }

    /// Multiplies the span by `factor` (< 1 zooms in) keeping the time at pixel `anchor` fixed.
    pub fn zoom(&mut self, factor: f64, anchor: f64) {
        if !factor.is_finite() || factor <= 0.0 {
            return;
        }
        let t = self.ns_at(anchor.clamp(0.0, self.width));
        let span = (self.span() * factor).clamp(MIN_SPAN_NS, self.max_span());
        let left = (t - self.start) / self.span();
        self.start = t - left * span;
        self.end = self.start + span;
        self.clamp();
    }

    /// Moves the window by `dx` pixels (positive: later times come into view).
    pub fn pan_px(&mut self, dx: f64) {
        let d = dx * self.ns_per_px();
        self.start += d;
        self.end += d;
        self.clamp();
    }

    /// Shows `[start, end]` with a 10 % margin on each side (at least [`MIN_SPAN_NS`]).
    pub fn show(&mut self, start: f64, end: f64) {
        let span = (end - start).max(MIN_SPAN_NS / 1.2);
        let mid = (start + end) / 2.0;
        let half = span * 0.6;
        self.start = mid - half;
        self.end = mid + half;
        self.clamp();
    }

    /// Brings `[start, end]` into view the least surprising way: zooms out to a slice wider
    /// than the window, zooms in on one narrower than a few pixels (a 1 µs kernel found by
    /// search in a 2 s view is otherwise a hairline), centers one off screen, else leaves the
    /// window alone.
    pub fn bring(&mut self, start: f64, end: f64) {
        let dur = end - start;
        if dur > self.span() * 0.9 {
            self.show(start, end);
        } else if dur < MIN_SHOWN_PX * self.ns_per_px() {
            let span = (dur.max(1.0) * self.width / ZOOMED_PX).min(self.span());
            let mid = (start + end) / 2.0;
            self.set(mid - span / 2.0, mid + span / 2.0);
        } else if start < self.start || end > self.end {
            self.center((start + end) / 2.0);
        }
    }

    /// Shows exactly `[start, end]` (clamped to the trace), e.g. from a share link.
    pub fn set(&mut self, start: f64, end: f64) {
        if start < end {
            self.start = start;
            self.end = end;
            self.clamp();
        }
    }

    /// Centers `ns` keeping the span.
    pub fn center(&mut self, ns: f64) {
        let half = self.span() / 2.0;
        self.start = ns - half;
        self.end = ns + half;
        self.clamp();
    }

    /// Changes the drawing width, keeping the window.
    pub fn resize(&mut self, width: f64) {
        self.width = width.max(1.0);
    }

    /// Widest window: the trace plus margins, at least [`MIN_SPAN_NS`] (a trace of a few ns).
    fn max_span(&self) -> f64 {
        (self.trace_end * (1.0 + 2.0 * MARGIN)).max(MIN_SPAN_NS)
    }

    /// Keeps the window inside the trace plus margins.
    fn clamp(&mut self) {
        let span = self.span().clamp(MIN_SPAN_NS, self.max_span());
        let lo = -self.trace_end * MARGIN;
        let hi = self.trace_end * (1.0 + MARGIN);
        let start = self.start.clamp(lo, (hi - span).max(lo));
        self.start = start;
        self.end = start + span;
    }
}

/// A tick step for the ruler: the smallest 1-2-5 × 10^k ns step at least `min_ns` apart.
pub fn tick_step(min_ns: f64) -> f64 {
    let min_ns = min_ns.max(1.0);
    let mut step = 10f64.powf(min_ns.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if step * m >= min_ns {
            step *= m;
            break;
        }
    }
    step
}

/// A time in ns as text with the unit chosen by `step` (the ruler's precision): ns, µs, ms, s,
/// switching up once a step is a tenth of the larger unit (`1.5 µs`, not `1500 ns`).
pub fn format_tick(ns: f64, step: f64) -> String {
    let step10 = step * 10.0;
    let (div, unit) = if step10 >= 1e9 {
        (1e9, "s")
    } else if step10 >= 1e6 {
        (1e6, "ms")
    } else if step10 >= 1e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    };
    // `+ 0.0` turns -0 into 0, so the origin never prints as "-0".
    let v = ns / div + 0.0;
    let digits = ((div / step).log10().ceil()).clamp(0.0, 6.0) as usize;
    format!("{v:.digits$} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoom_keeps_the_anchor_and_clamps() {
        let mut v = Viewport::new(1_000_000.0, 1000.0);
        let t = v.ns_at(250.0);
        v.zoom(0.5, 250.0);
        assert!((v.ns_at(250.0) - t).abs() < 1e-6);
        assert!((v.span() - 1_040_000.0 * 0.5).abs() < 1e-3);
        for _ in 0..200 {
            v.zoom(0.5, 500.0);
        }
        assert!((v.span() - MIN_SPAN_NS).abs() < 1e-9);
        for _ in 0..200 {
            v.zoom(2.0, 0.0);
        }
        assert!((v.span() - 1_040_000.0).abs() < 1e-3);
        assert!((v.start + 20_000.0).abs() < 1e-6);
    }

    #[test]
    fn bring_zooms_into_a_hairline_and_leaves_a_visible_slice_alone() {
        let mut v = Viewport::new(2e9, 1000.0);
        v.bring(1e9, 1e9 + 1_000.0);
        assert!((v.x_of(1e9 + 1_000.0) - v.x_of(1e9) - ZOOMED_PX).abs() < 1e-6, "{v:?}");
        assert!(v.start < 1e9 && v.end > 1e9 + 1_000.0);
        let before = v;
        v.bring(1e9 + 100.0, 1e9 + 600.0);
        assert_eq!(v, before, "a slice already wide enough and on screen keeps the window");
        v.bring(0.0, 2e9);
        assert!(v.start < 0.0 && v.end > 2e9, "a slice wider than the window zooms out");
        v.zoom(0.01, 0.0);
        let span = v.span();
        v.bring(1.5e9, 1.5e9 + span / 10.0);
        assert!((v.span() - span).abs() < 1e-6 && v.start < 1.5e9, "off screen: centered, same span");
    }

    #[test]
    fn pan_stays_inside_the_trace() {
        let mut v = Viewport::new(1_000_000.0, 1000.0);
        v.zoom(0.1, 0.0);
        let span = v.span();
        v.pan_px(1e9);
        assert!((v.end - 1_020_000.0).abs() < 1e-6);
        assert!((v.span() - span).abs() < 1e-6);
        v.pan_px(-1e9);
        assert!((v.start + 20_000.0).abs() < 1e-6);
    }

    #[test]
    fn ticks_use_1_2_5_steps_and_adaptive_units() {
        assert_eq!(tick_step(3.0), 5.0);
        assert_eq!(tick_step(1200.0), 2000.0);
        assert_eq!(tick_step(0.2), 1.0);
        assert_eq!(format_tick(1500.0, 500.0), "1.5 µs");
        assert_eq!(format_tick(2_000_000.0, 1_000_000.0), "2 ms");
        assert_eq!(format_tick(30.0, 10.0), "30 ns");
        assert_eq!(format_tick(3e9, 1e9), "3 s");
    }
}
