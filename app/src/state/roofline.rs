//! The roofline chart's rules as plain functions: the axes, the two roofs, the caption, the
//! message drawn in the chart's place when the GPU's peaks are unknown, and the peaks typed
//! into the page turned into the worker's spec (`ToWorker::SetPeaks`).
//!
//! Inputs: the worker's [`RooflineData`] (points, peaks, the compute roof's class and rate).
//! Outputs: log-axis ranges in data units (FLOP/B, TFLOP/s), roof polylines, display text.
//!
//! Units: intensity in FLOP per byte, rates in TFLOP/s and GB/s, so the bandwidth roof at
//! intensity I is `GB/s * I / 1000` TFLOP/s and the ridge point is `TFLOP/s * 1000 / GB/s`.
//! Why here: the chart only draws; these rules have native tests (docs/contributing.md).

use super::format;
use protocol::RooflineData;

/// Log-axis ranges of the chart, data units; both bounds > 0 and `lo < hi`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axes {
    /// Arithmetic intensity, FLOP/B.
    pub x: (f64, f64),
    /// Achieved TFLOP/s.
    pub y: (f64, f64),
}

/// The bandwidth in GB/s and the compute roof in TFLOP/s, when both are known.
pub fn roofs(data: &RooflineData) -> Option<(f64, f64)> {
    let gbps = data.peaks.as_ref()?.gbps.filter(|g| *g > 0.0)?;
    let (_, tflops) = data.roof.as_ref().filter(|(_, t)| *t > 0.0)?;
    Some((gbps, *tflops))
}

/// The ridge point, FLOP/B: where the bandwidth roof meets the compute roof.
pub fn ridge(data: &RooflineData) -> Option<f64> {
    roofs(data).map(|(gbps, tflops)| tflops * 1000.0 / gbps)
}

/// The axes: every point and the ridge inside, padded to whole decades.
pub fn axes(data: &RooflineData) -> Option<Axes> {
    let xs = data.points.iter().map(|p| p.intensity).chain(ridge(data));
    let roof = roofs(data).map(|(_, t)| t);
    let ys = data.points.iter().map(|p| p.tflops).chain(roof);
    Some(Axes { x: decades(xs)?, y: decades(ys)? })
}

/// The smallest range of whole decades holding every positive finite value of `values`.
fn decades(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(None, |acc: Option<(f64, f64)>, v| Some(acc.map_or((v, v), |(a, b)| (a.min(v), b.max(v)))))?;
    let lo = 10f64.powf(lo.log10().floor());
    let hi = 10f64.powf(hi.log10().ceil());
    Some(if hi > lo { (lo, hi) } else { (lo, lo * 10.0) })
}

/// The roof polyline over `x` (FLOP/B): the bandwidth slope up to the ridge, then flat.
pub fn roof_line(data: &RooflineData, x: (f64, f64)) -> Vec<(f64, f64)> {
    let Some((gbps, tflops)) = roofs(data) else {
        return Vec::new();
    };
    let ridge = tflops * 1000.0 / gbps;
    let at = |i: f64| (i, (gbps * i / 1000.0).min(tflops));
    if ridge > x.0 && ridge < x.1 {
        vec![at(x.0), at(ridge), at(x.1)]
    } else {
        vec![at(x.0), at(x.1)]
    }
}

/// The chart's caption: the GPU model (and where its peaks come from), the compute roof's
/// class and rate, the bandwidth.
pub fn caption(data: &RooflineData) -> String {
    let Some(peaks) = &data.peaks else {
        return String::new();
    };
    let model = if data.known { peaks.model.clone() } else { format!("{} (given peaks)", gpu_name(data)) };
    let mut parts = vec![model];
    if let Some((class, tflops)) = &data.roof {
        parts.push(format!("{class} roof {} TFLOP/s", format::rate(*tflops)));
    }
    if let Some(g) = peaks.gbps {
        parts.push(format!("{} GB/s", format::rate(g)));
    }
    parts.join(" · ")
}

/// Why the chart cannot draw its roofs, said in its place; `None` when it can.
pub fn unknown_message(data: &RooflineData) -> Option<String> {
    if data.peaks.is_some() {
        return None;
    }
    Some(if data.device.is_empty() {
        "This trace names no GPU (no deviceProperties): give peaks (bf16 and fp32 TFLOP/s, memory GB/s) below to draw the roofs.".to_owned()
    } else {
        format!(
            "GPU {:?} is not in the peak table: give peaks (bf16 and fp32 TFLOP/s, memory GB/s) below to draw the roofs.",
            data.device
        )
    })
}

/// The GPU's name for display.
fn gpu_name(data: &RooflineData) -> String {
    if data.device.is_empty() { "GPU".to_owned() } else { data.device.clone() }
}

/// The peak of `class` in use (TFLOP/s), for the inputs' initial values.
pub fn peak_of(data: &RooflineData, class: &str) -> Option<f64> {
    data.peaks.as_ref()?.tflops.iter().find(|(c, _)| c == class).map(|(_, t)| *t)
}

/// The worker's peaks spec from the page's inputs (`bf16`, `fp32` TFLOP/s, memory GB/s):
/// empty inputs are left out; `Ok(None)` when all are empty (back to the table's peaks).
///
/// # Errors
/// An input that is not a positive number, named.
pub fn peaks_spec(bf16: &str, fp32: &str, gbps: &str) -> Result<Option<String>, String> {
    let mut parts = Vec::new();
    for (key, label, text) in [("bf16", "bf16 TFLOP/s", bf16), ("fp32", "fp32 TFLOP/s", fp32), ("gbps", "GB/s", gbps)] {
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => parts.push(format!("{key}={v}")),
            _ => return Err(format!("{label}: {text:?} is not a positive number")),
        }
    }
    Ok((!parts.is_empty()).then(|| parts.join(",")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use protocol::{PeakSet, RooflinePoint};

    fn h100() -> RooflineData {
        RooflineData {
            device: "NVIDIA H100 80GB HBM3".into(),
            known: true,
            peaks: Some(PeakSet {
                model: "NVIDIA H100 SXM".into(),
                tflops: vec![("fp32".into(), 67.0), ("bf16".into(), 989.4)],
                gbps: Some(3350.0),
                ..PeakSet::default()
            }),
            roof: Some(("bf16".into(), 989.4)),
            points: vec![
                RooflinePoint { intensity: 2.5, tflops: 0.8, ..RooflinePoint::default() },
                RooflinePoint { intensity: 120.0, tflops: 150.0, ..RooflinePoint::default() },
            ],
            unplotted: 3,
        }
    }

    #[test]
    fn axes_hold_the_points_and_the_ridge_in_whole_decades() {
        let d = h100();
        let ridge = ridge(&d).unwrap();
        assert!((ridge - 989.4 * 1000.0 / 3350.0).abs() < 1e-9, "{ridge}");
        let a = axes(&d).unwrap();
        assert_eq!(a.x, (1.0, 1000.0));
        assert_eq!(a.y, (0.1, 1000.0));
        let line = roof_line(&d, a.x);
        assert_eq!(line.len(), 3);
        assert!((line[0].1 - 3.35).abs() < 1e-9, "bandwidth roof at 1 FLOP/B");
        assert_eq!(line[2].1, 989.4, "flat compute roof");
        assert!(caption(&d).starts_with("NVIDIA H100 SXM · bf16 roof 989 TFLOP/s · 3,350 GB/s"));
        assert_eq!(unknown_message(&d), None);
        assert_eq!(peak_of(&d, "fp32"), Some(67.0));
    }

    #[test]
    fn an_unknown_gpu_is_named_and_given_peaks_are_checked() {
        let d = RooflineData { device: "AMD Radeon Graphics".into(), ..RooflineData::default() };
        assert!(unknown_message(&d).unwrap().starts_with("GPU \"AMD Radeon Graphics\" is not in the peak table"));
        assert!(roof_line(&d, (1.0, 10.0)).is_empty());
        assert_eq!(axes(&d), None, "no point, no axes");
        assert_eq!(peaks_spec("362.1", "", " 3276.8 ").unwrap().as_deref(), Some("bf16=362.1,gbps=3276.8"));
        assert_eq!(peaks_spec("", " ", "").unwrap(), None);
        assert!(peaks_spec("abc", "", "").unwrap_err().starts_with("bf16 TFLOP/s"));
        assert!(peaks_spec("1", "-2", "").is_err());
    }
}
