//! How a duration reads, in the page and in the report the worker exports: one implementation,
//! so a time on the page and the same time in an exported report are the same text.

/// Three significant digits without a trailing `.0` beyond them: 1.23, 12.3, 123, 1234.
pub fn sig3(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A duration in microseconds with an adaptive unit: ns, µs, ms, s, or min + s; `—` when it is
/// not a duration (negative or not finite).
pub fn span_us(us: f64) -> String {
    if !us.is_finite() || us < 0.0 {
        return "—".into();
    }
    if us < 1.0 {
        format!("{:.0} ns", us * 1e3)
    } else if us < 1e3 {
        format!("{} µs", sig3(us))
    } else if us < 1e6 {
        format!("{} ms", sig3(us / 1e3))
    } else if us < 60e6 {
        format!("{} s", sig3(us / 1e6))
    } else {
        let s = us / 1e6;
        format!("{:.0} min {:.1} s", (s / 60.0).floor(), s % 60.0)
    }
}

/// A signed time in microseconds (a clock offset, a difference) as [`span_us`] with its sign:
/// `-500 ns`.
pub fn signed_us(us: f64) -> String {
    if us < 0.0 {
        format!("-{}", span_us(-us))
    } else {
        span_us(us)
    }
}
