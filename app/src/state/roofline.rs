//! The roofline chart's rules as plain functions: the axes, the two roofs, the caption, what is
//! said in the chart's place (no kernel to plot, or the GPU's peaks unknown), which circle the
//! pointer is over and what its tip says, and the peaks typed into the page turned into the
//! worker's spec (`ToWorker::SetPeaks`).
//!
//! Inputs: the worker's [`RooflineData`] (points, peaks, the compute roof's class and rate).
//! Outputs: log-axis ranges in data units (FLOP/B, TFLOP/s), roof polylines, display text.
//!
//! Units: intensity in FLOP per byte, rates in TFLOP/s and GB/s, so the bandwidth roof at
//! intensity I is `GB/s * I / 1000` TFLOP/s and the ridge point is `TFLOP/s * 1000 / GB/s`.
//! Why here: the chart only draws; these rules have native tests (docs/contributing.md).

use super::format;
use protocol::{RooflineData, RooflinePoint};

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

/// Factor between the outermost point and the axis' end, so the largest circle stays whole
/// inside the plot (a third of a decade).
const PAD: f64 = 2.15;

/// The axes: every point and the ridge and compute roof inside, padded by [`PAD`] and no wider
/// (whole decades left up to a decade of empty range beside the points).
pub fn axes(data: &RooflineData) -> Option<Axes> {
    let xs = data.points.iter().map(|p| p.intensity).chain(ridge(data));
    let roof = roofs(data).map(|(_, t)| t);
    let ys = data.points.iter().map(|p| p.tflops).chain(roof);
    Some(Axes { x: padded(xs)?, y: padded(ys)? })
}

/// The range holding every positive finite value of `values`, widened by [`PAD`] each way.
fn padded(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(None, |acc: Option<(f64, f64)>, v| Some(acc.map_or((v, v), |(a, b)| (a.min(v), b.max(v)))))?;
    Some((lo / PAD, hi * PAD))
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

/// Why nothing is plotted, said first in the chart's place; `None` when some kernel is.
pub fn empty_message(data: &RooflineData) -> Option<String> {
    if !data.points.is_empty() {
        return None;
    }
    Some(match data.left_off.first() {
        None => "No kernel in this trace.".to_owned(),
        Some(top) => format!(
            "No kernel with known FLOPs and bytes in this trace: {} left off (below); the longest, {}, because {}.",
            format::plural(data.left_off.len() as u64, "kernel name", "kernel names"),
            top.name,
            top.why
        ),
    })
}

/// Why the chart cannot draw its roofs, said in its place; `None` when it can, or when there
/// is no point to measure against them ([`empty_message`] says so instead of asking for peaks).
pub fn unknown_message(data: &RooflineData) -> Option<String> {
    if data.peaks.is_some() || data.points.is_empty() {
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

/// A circle as drawn: center and radius in canvas pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Circle {
    /// Center, x.
    pub x: f64,
    /// Center, y.
    pub y: f64,
    /// Radius.
    pub r: f64,
}

/// Canvas pixels the pointer may miss a circle by and still be over it (the smallest are 3 px).
const SLACK_PX: f64 = 3.0;

/// The index of the circle the pointer at (`x`, `y`) is over: the last drawn (on top) among
/// those it is within [`SLACK_PX`] (times `scale`) of; `None` when it is over none.
pub fn hit(circles: &[Circle], x: f64, y: f64, scale: f64) -> Option<usize> {
    circles.iter().rposition(|c| (c.x - x).hypot(c.y - y) <= c.r + SLACK_PX * scale)
}

/// The hover tip of a point: its name, then its work, then its achieved rates.
pub fn tip(p: &RooflinePoint) -> [String; 3] {
    [
        p.name.clone(),
        format!(
            "{} FLOPs · {} · {} FLOP/B",
            format::flops(p.flops),
            format::bytes(p.bytes.max(0.0) as u64),
            format::rate(p.intensity)
        ),
        format!("{} TFLOP/s · {} GB/s · {}", format::rate(p.tflops), format::rate(p.gbps), p.peak),
    ]
}

/// The GPU's name for display.
fn gpu_name(data: &RooflineData) -> String {
    if data.device.is_empty() { "GPU".to_owned() } else { data.device.clone() }
}

/// The peak of `class` in use (TFLOP/s), for the inputs' initial values.
pub fn peak_of(data: &RooflineData, class: &str) -> Option<f64> {
    data.peaks.as_ref()?.tflops.iter().find(|(c, _)| c == class).map(|(_, t)| *t)
}

/// The peaks form's fields in order: the spec key (`ToWorker::SetPeaks`) and the input's label.
pub const FIELDS: [(&str, &str); 5] = [
    ("bf16", "bf16/fp16 TFLOP/s"),
    ("fp32", "fp32 TFLOP/s"),
    ("fp8", "fp8 TFLOP/s"),
    ("fp4", "fp4 TFLOP/s"),
    ("gbps", "memory GB/s"),
];

/// The value of field `key` in the peaks in use, for the inputs' initial values.
pub fn field_value(data: &RooflineData, key: &str) -> Option<f64> {
    if key == "gbps" { data.peaks.as_ref()?.gbps } else { peak_of(data, key) }
}

/// The worker's peaks spec from the page's inputs, one text per [`FIELDS`] entry: empty inputs
/// are left out; `Ok(None)` when all are empty (back to the table's peaks).
///
/// # Errors
/// An input that is not a positive number, named (`bf16 TFLOP/s`, `GB/s`).
pub fn peaks_spec(texts: &[String; FIELDS.len()]) -> Result<Option<String>, String> {
    let mut parts = Vec::new();
    for ((key, _), text) in FIELDS.iter().zip(texts) {
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => parts.push(format!("{key}={v}")),
            _ => {
                let unit = if *key == "gbps" { "GB/s".to_owned() } else { format!("{key} TFLOP/s") };
                return Err(format!("{unit}: {text:?} is not a positive number"));
            }
        }
    }
    Ok((!parts.is_empty()).then(|| parts.join(",")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use protocol::{LeftOffKernel, PeakSet};

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
            left_off: Vec::new(),
        }
    }

    #[test]
    fn axes_hold_the_points_and_the_ridge_padded() {
        let d = h100();
        let ridge = ridge(&d).unwrap();
        assert!((ridge - 989.4 * 1000.0 / 3350.0).abs() < 1e-9, "{ridge}");
        let a = axes(&d).unwrap();
        assert_eq!(a.x, (2.5 / PAD, ridge * PAD), "the points and the ridge, padded");
        assert_eq!(a.y, (0.8 / PAD, 989.4 * PAD), "the points and the compute roof, padded");
        let line = roof_line(&d, a.x);
        assert_eq!(line.len(), 3);
        assert!((line[0].1 - 3.35 * a.x.0).abs() < 1e-9, "bandwidth roof at the left edge");
        assert_eq!(line[2].1, 989.4, "flat compute roof");
        assert!(caption(&d).starts_with("NVIDIA H100 SXM · bf16 roof 989 TFLOP/s · 3,350 GB/s"));
        assert_eq!(unknown_message(&d), None);
        assert_eq!(peak_of(&d, "fp32"), Some(67.0));
        assert_eq!(field_value(&d, "gbps"), Some(3350.0));
        assert_eq!(field_value(&d, "fp8"), None);
        assert_eq!(empty_message(&d), None);
    }

    #[test]
    fn an_unknown_gpu_is_named_and_given_peaks_are_checked() {
        let point = RooflinePoint { intensity: 2.0, tflops: 1.0, ..RooflinePoint::default() };
        let d = RooflineData { device: "AMD Radeon Graphics".into(), points: vec![point], ..RooflineData::default() };
        assert!(unknown_message(&d).unwrap().starts_with("GPU \"AMD Radeon Graphics\" is not in the peak table"));
        assert!(roof_line(&d, (1.0, 10.0)).is_empty());
        let d = RooflineData { points: Vec::new(), ..d };
        assert_eq!(axes(&d), None, "no point, no axes");
        let texts = |t: [&str; 5]| t.map(str::to_owned);
        assert_eq!(
            peaks_spec(&texts(["362.1", "", "1307.4", "", " 3276.8 "])).unwrap().as_deref(),
            Some("bf16=362.1,fp8=1307.4,gbps=3276.8")
        );
        assert_eq!(peaks_spec(&texts(["", " ", "", "", ""])).unwrap(), None);
        assert!(peaks_spec(&texts(["abc", "", "", "", ""])).unwrap_err().starts_with("bf16 TFLOP/s"));
        assert!(peaks_spec(&texts(["", "", "", "x", ""])).unwrap_err().starts_with("fp4 TFLOP/s"));
        assert!(peaks_spec(&texts(["1", "-2", "", "", ""])).is_err());
    }

    #[test]
    fn nothing_plotted_is_said_before_peaks_are_asked_for() {
        let d = RooflineData {
            device: "Tesla T4".into(),
            left_off: vec![LeftOffKernel {
                name: "ampere_fp16_s16816gemm".into(),
                why: "\"aten::mm\" recorded no shapes its estimate reads".into(),
                ..LeftOffKernel::default()
            }],
            ..RooflineData::default()
        };
        assert_eq!(unknown_message(&d), None, "no peak can help an empty chart");
        assert_eq!(
            empty_message(&d).unwrap(),
            "No kernel with known FLOPs and bytes in this trace: 1 kernel name left off (below); the longest, \
             ampere_fp16_s16816gemm, because \"aten::mm\" recorded no shapes its estimate reads."
        );
    }

    #[test]
    fn the_pointer_is_over_the_topmost_circle_within_reach() {
        let circles = [Circle { x: 100.0, y: 100.0, r: 14.0 }, Circle { x: 105.0, y: 100.0, r: 3.0 }];
        assert_eq!(hit(&circles, 106.0, 101.0, 1.0), Some(1), "the small one drawn on top");
        assert_eq!(hit(&circles, 90.0, 100.0, 1.0), Some(0));
        assert_eq!(hit(&circles, 100.0, 117.0, 1.0), Some(0), "within the slack");
        assert_eq!(hit(&circles, 100.0, 118.0, 1.0), None);
        assert_eq!(hit(&circles, 100.0, 118.0, 2.0), Some(0), "slack in device pixels");
        let p = RooflinePoint { name: "k".into(), flops: 2.5e12, bytes: 1.0e9, intensity: 2500.0, tflops: 312.0, gbps: 125.0, peak: "bf16".into(), ..RooflinePoint::default() };
        let t = tip(&p);
        assert_eq!(t[0], "k");
        assert!(t[1].starts_with("2.50 T FLOPs · "), "{}", t[1]);
        assert_eq!(t[2], "312 TFLOP/s · 125 GB/s · bf16");
    }
}
