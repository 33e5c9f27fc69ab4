//! Number formatting for the panels: byte sizes, counts, durations with adaptive units, rates.
//!
//! Inputs are raw protocol numbers (bytes, microseconds, milliseconds); outputs are short display
//! strings. Sizes use decimal units (1 MB = 10^6 bytes) so they agree with the MB/s figures.

use protocol::units::sig3;
use protocol::Phase;
use std::collections::BTreeMap;

/// `1234567` -> `"1,234,567"`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    let mut until_comma = match digits.len() % 3 {
        0 => 3,
        r => r,
    };
    for c in digits.chars() {
        if until_comma == 0 {
            out.push(',');
            until_comma = 3;
        }
        out.push(c);
        until_comma -= 1;
    }
    out
}

/// A byte size with an adaptive unit: `"812 B"`, `"12.3 KB"`, `"45.6 MB"`, `"1.23 GB"`.
pub fn bytes(n: u64) -> String {
    // Display only: the precision lost above 2^53 bytes is invisible at 3 significant digits.
    let x = n as f64;
    if n < 1_000 {
        format!("{n} B")
    } else if x < 1e6 {
        format!("{:.1} KB", x / 1e3)
    } else if x < 1e9 {
        format!("{:.1} MB", x / 1e6)
    } else {
        format!("{:.2} GB", x / 1e9)
    }
}

/// A FLOP count with a decimal prefix: `"812"`, `"12.3 M"`, `"4.56 G"`, `"1.23 T"`, `"7.89 P"`.
pub fn flops(x: f64) -> String {
    if !x.is_finite() || x < 0.0 {
        return "—".into();
    }
    const PREFIXES: [(f64, &str); 5] = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    match PREFIXES.iter().find(|(scale, _)| x >= *scale) {
        Some((scale, prefix)) => format!("{} {prefix}", rate(x / scale)),
        None => format!("{x:.0}"),
    }
}

/// A rate (TFLOP/s, GB/s) with three significant digits: `"0.0123"`, `"1.23"`, `"45.6"`, `"789"`,
/// `"1,234"`.
pub fn rate(x: f64) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    let a = x.abs();
    if a >= 1000.0 {
        let rounded = count(a.round() as u64);
        if x < 0.0 { format!("-{rounded}") } else { rounded }
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 || a == 0.0 {
        format!("{x:.2}")
    } else {
        // Three significant digits below 1: 0.123, 0.0123, ...
        let decimals = (2 - a.log10().floor() as i32).clamp(3, 9) as usize;
        format!("{x:.decimals$}")
    }
}

/// Megabytes with one decimal and no unit, for "12.3 / 45.6 MB".
pub fn mb(n: u64) -> String {
    format!("{:.1}", n as f64 / 1e6)
}

pub use protocol::units::{signed_us, span_us};

/// A measured duration in milliseconds: `"850 ms"`, `"1.25 s"`; `"< 0.1 ms"` for 0, since a
/// worker's `performance.now()` ticks in 0.1 ms steps without cross-origin isolation.
pub fn millis(ms: f64) -> String {
    if ms == 0.0 {
        return "< 0.1 ms".into();
    }
    span_us(ms * 1e3)
}

/// `"1 lane"`, `"1,234 lanes"`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// Throughput in MB/s of `n` bytes over `ms` milliseconds; `None` when `ms` is not positive.
pub fn rate_mb_s(n: u64, ms: f64) -> Option<String> {
    (ms > 0.0).then(|| format!("{} MB/s", sig3(n as f64 / 1e6 / (ms / 1e3))))
}

/// The protocol's name of a load phase (the `data-phase` values): `reading`, `decompressing`,
/// `parsing`.
pub fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Reading => "reading",
        Phase::Decompressing => "decompressing",
        Phase::Parsing => "parsing",
    }
}

/// What a Trace Event Format `ph` value means; empty for unknown values.
pub fn ph_meaning(ph: &str) -> &'static str {
    match ph {
        "X" => "complete",
        "B" => "begin",
        "E" => "end",
        "i" | "I" => "instant",
        "C" => "counter",
        "s" => "flow start",
        "t" => "flow step",
        "f" => "flow end",
        "b" => "async begin",
        "n" => "async instant",
        "e" => "async end",
        "M" => "metadata",
        "P" => "sample",
        "N" | "O" | "D" => "object",
        "R" => "mark",
        "" => "(no ph)",
        _ => "",
    }
}

/// The entries of `counts`, largest count first, ties by key.
pub fn by_count_desc(counts: &BTreeMap<String, u64>) -> Vec<(&str, u64)> {
    let mut rows: Vec<(&str, u64)> = counts.iter().map(|(k, &v)| (k.as_str(), v)).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flops_and_rates_keep_three_digits() {
        assert_eq!(flops(812.0), "812");
        assert_eq!(flops(12_345_678.0), "12.3 M");
        assert_eq!(flops(4.561e9), "4.56 G");
        assert_eq!(flops(1.5e18), "1,500 P");
        assert_eq!(rate(0.0), "0.00");
        assert_eq!(rate(0.01234), "0.0123");
        assert_eq!(rate(1.234), "1.23");
        assert_eq!(rate(45.67), "45.7");
        assert_eq!(rate(789.4), "789");
        assert_eq!(rate(3350.0), "3,350");
    }

    #[test]
    fn counts_group_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1_234_567), "1,234,567");
    }

    #[test]
    fn bytes_pick_units() {
        assert_eq!(bytes(812), "812 B");
        assert_eq!(bytes(12_345), "12.3 KB");
        assert_eq!(bytes(45_600_000), "45.6 MB");
        assert_eq!(bytes(1_234_000_000), "1.23 GB");
        assert_eq!(mb(12_345_678), "12.3");
    }

    #[test]
    fn spans_pick_units() {
        assert_eq!(span_us(0.25), "250 ns");
        assert_eq!((signed_us(-0.5), signed_us(1.5), signed_us(0.0)), ("-500 ns".into(), "1.50 µs".into(), "0 ns".into()));
        assert_eq!(span_us(12.5), "12.5 µs");
        assert_eq!(span_us(3.0), "3.00 µs");
        assert_eq!(span_us(1500.0), "1.50 ms");
        assert_eq!(span_us(2_346_000.0), "2.35 s");
        assert_eq!(span_us(125e6), "2 min 5.0 s");
        assert_eq!(span_us(f64::NAN), "—");
        assert_eq!(millis(850.0), "850 ms");
        assert_eq!(millis(0.0), "< 0.1 ms");
        assert_eq!(plural(1, "lane", "lanes"), "1 lane");
        assert_eq!(plural(1200, "lane", "lanes"), "1,200 lanes");
    }

    #[test]
    fn counts_sort_largest_first() {
        let map: BTreeMap<String, u64> = [("a", 1), ("b", 5), ("c", 5), ("d", 2)]
            .map(|(k, v)| (k.to_owned(), v))
            .into();
        assert_eq!(
            by_count_desc(&map),
            vec![("b", 5), ("c", 5), ("d", 2), ("a", 1)]
        );
        assert_eq!(ph_meaning("X"), "complete");
        assert_eq!(phase_name(Phase::Decompressing), "decompressing");
    }

    #[test]
    fn rates() {
        assert_eq!(rate_mb_s(100_000_000, 500.0).as_deref(), Some("200 MB/s"));
        assert_eq!(rate_mb_s(1, 0.0), None);
    }
}
