//! Descriptive statistics over integer samples (durations in ns, byte counts): mean, standard
//! deviation, median, percentiles, min, max. Shared by the step, kernel and launch analyses so
//! every table in the report uses the same definitions.
//!
//! **Definitions** (numpy / pandas defaults, so a user checking with `df.describe()` agrees):
//! - percentile `p` of `n` sorted values: linear interpolation between closest ranks, at
//!   rank `p/100 · (n-1)` (numpy `method="linear"`); median = percentile 50.
//! - `std`: sample standard deviation (`ddof = 1`, pandas `.std()`); 0 for fewer than 2 values.
//!   [`std_dev`] takes `ddof` for callers who want the population value.
//! - mean and variance are summed in `i128` / `f64` from the integer values: no running-float
//!   drift for large counts.
//!
//! **Inputs and outputs.** `&[i64]` in any order (sorted internally where needed); results are
//! `f64` in the input's unit (a median of ns is in ns and may end in .5).
//!
//! **Cost.** [`Summary::of`]: one copy and one `sort_unstable` (O(n log n)); the others O(n).
//!
//! **Why** f64 out but i64 in: the model's times are integer ns; averages are not integers and
//! rounding them would hide sub-ns differences that tests compare against other tools.

/// Mean, std, median, percentiles, min and max of a sample (see the module definitions).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Number of values.
    pub count: usize,
    /// Sum of the values.
    pub sum: i128,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (ddof = 1; 0 when `count < 2`).
    pub std: f64,
    /// Smallest value.
    pub min: i64,
    /// Largest value.
    pub max: i64,
    /// Median (percentile 50, interpolated).
    pub median: f64,
    /// Percentile 95, interpolated.
    pub p95: f64,
    /// Percentile 99, interpolated.
    pub p99: f64,
}

impl Summary {
    /// The summary of `values`, or `None` when empty.
    pub fn of(values: &[i64]) -> Option<Self> {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        Self::of_sorted(&sorted)
    }

    /// The summary of values already sorted ascending, or `None` when empty.
    pub fn of_sorted(sorted: &[i64]) -> Option<Self> {
        debug_assert!(
            sorted.windows(2).all(|w| w[0] <= w[1]),
            "values must be sorted"
        );
        let (&min, &max) = (sorted.first()?, sorted.last()?);
        Some(Self {
            count: sorted.len(),
            sum: sorted.iter().map(|&v| i128::from(v)).sum(),
            mean: mean(sorted)?,
            std: std_dev(sorted, 1).unwrap_or(0.0),
            min,
            max,
            median: percentile_sorted(sorted, 50.0)?,
            p95: percentile_sorted(sorted, 95.0)?,
            p99: percentile_sorted(sorted, 99.0)?,
        })
    }
}

/// Arithmetic mean, or `None` when empty.
pub fn mean(values: &[i64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let sum: i128 = values.iter().map(|&v| i128::from(v)).sum();
    Some(sum as f64 / values.len() as f64)
}

/// Standard deviation with `ddof` delta degrees of freedom (1: sample, 0: population), or
/// `None` when `values.len() <= ddof`.
pub fn std_dev(values: &[i64], ddof: usize) -> Option<f64> {
    if values.len() <= ddof {
        return None;
    }
    let m = mean(values)?;
    let ss: f64 = values.iter().map(|&v| (v as f64 - m).powi(2)).sum();
    Some((ss / (values.len() - ddof) as f64).sqrt())
}

/// Percentile `p` (0..=100, clamped) of values sorted ascending, linear interpolation between
/// closest ranks (numpy's default); `None` when empty.
pub fn percentile_sorted(sorted: &[i64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let rank = p.clamp(0.0, 100.0) / 100.0 * last as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let (a, b) = (*sorted.get(lo)? as f64, *sorted.get(hi)? as f64);
    Some(a + (b - a) * (rank - lo as f64))
}

/// Median of values in any order (copies and sorts); `None` when empty.
pub fn median(values: &[i64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    percentile_sorted(&sorted, 50.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy_and_pandas() {
        // numpy.percentile([1, 2, 3, 4, 10], [50, 95, 99]) = 3, 8.8, 9.76;
        // pandas Series.std() = 3.5355339...
        let s = Summary::of(&[10, 1, 4, 3, 2]).unwrap_or_default();
        assert_eq!((s.count, s.sum, s.min, s.max), (5, 20, 1, 10));
        assert!((s.mean - 4.0).abs() < 1e-12);
        assert!((s.median - 3.0).abs() < 1e-12);
        assert!((s.p95 - 8.8).abs() < 1e-9);
        assert!((s.p99 - 9.76).abs() < 1e-9);
        assert!((s.std - 3.535_533_905_932_737_6).abs() < 1e-9);
        assert!(
            (std_dev(&[1, 2, 3, 4, 10], 0).unwrap_or(0.0) - 3.162_277_660_168_379_5).abs() < 1e-9
        );
        assert_eq!(median(&[4, 1]), Some(2.5));
        assert_eq!(Summary::of(&[]), None);
        let one = Summary::of(&[7]).unwrap_or_default();
        assert_eq!((one.std, one.median, one.p99), (0.0, 7.0, 7.0));
    }
}
