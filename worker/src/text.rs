//! Numbers and names as text for people: finding titles and why lines, the comparison's
//! verdict, the CLI's tables. One module, so a title the page shows and the line the CLI prints
//! are the same string, and no analysis imports an output layer to format a number. (The page
//! formats the raw numbers it receives itself, in `app/src/state/format.rs`.)

/// A duration for sentences: `850 ns`, `12.3 µs`, `4.56 ms`, `1.23 s`.
pub fn duration(ns: i64) -> String {
    let a = ns.unsigned_abs();
    if a < 1_000 {
        format!("{ns} ns")
    } else if a < 1_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else if a < 1_000_000_000 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else {
        format!("{:.2} s", ns as f64 / 1e9)
    }
}

/// A duration as the page shows it ([`protocol::units::signed_us`] of ns): `129 ms`,
/// `4.56 µs`, `0 ns`.
pub fn span(ns: i64) -> String {
    protocol::units::signed_us(ns as f64 / 1e3)
}

/// A fraction (0..=1) as a percent with one decimal: `12.3%`.
pub fn percent(fraction: f64) -> String {
    format!("{:.1}%", fraction * 100.0)
}

/// A time in PyTorch's printed table format: `12.345us`, `1.234ms`, `2.000s`.
pub fn pytorch_time(ns: i64) -> String {
    let us = ns as f64 / 1000.0;
    if us.abs() >= 1e6 {
        format!("{:.3}s", us / 1e6)
    } else if us.abs() >= 1e3 {
        format!("{:.3}ms", us / 1e3)
    } else {
        format!("{us:.3}us")
    }
}

/// `s` cut to `width` characters, ending in `...` when cut (as PyTorch cuts names).
pub fn cut(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let keep: String = s.chars().take(width.saturating_sub(3)).collect();
    format!("{keep}...")
}

/// `s` with control characters replaced: trace text never reaches a terminal raw.
pub fn printable(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// Bytes with a decimal unit and 2 decimals (1 MB = 10^6 B; PyTorch's `_format_memory` prints
/// 1024-based sizes as `Mb`, which reads as megabits).
pub fn bytes(n: i64) -> String {
    let v = n as f64;
    if v.abs() >= 1e9 {
        format!("{:.2} GB", v / 1e9)
    } else if v.abs() >= 1e6 {
        format!("{:.2} MB", v / 1e6)
    } else if v.abs() >= 1e3 {
        format!("{:.2} KB", v / 1e3)
    } else {
        format!("{n} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(
            [duration(850), duration(12_345), duration(4_561_000), duration(1_234_000_000)],
            ["850 ns", "12.3 µs", "4.56 ms", "1.23 s"]
        );
        assert_eq!(percent(0.1234), "12.3%");
        // The page's span_us cases (app/src/state/format.rs), in ns.
        assert_eq!(
            [span(250), span(12_500), span(3_000), span(1_500_000), span(2_346_000_000), span(125_000_000_000), span(0), span(-128_700_000)],
            ["250 ns", "12.5 µs", "3.00 µs", "1.50 ms", "2.35 s", "2 min 5.0 s", "0 ns", "-129 ms"]
        );
        assert_eq!([pytorch_time(12_345), pytorch_time(1_234_000), pytorch_time(2_000_000_000)], ["12.345us", "1.234ms", "2.000s"]);
        assert_eq!((cut("abcdef", 5), cut("abc", 5)), ("ab...".to_owned(), "abc".to_owned()));
        assert_eq!(printable("a\tb\u{7}"), "a?b?");
    }
}
