//! The roofline's report parts: the GPU peaks in use (`gpu_peaks` of `report --json`) and, in
//! the text report, a peaks line and the MFU of each step.

use super::time;
use crate::analysis::steps::Steps;
use crate::analysis::work::dtype::PeakClass;
use crate::analysis::work::WorkIndex;
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

/// `gpu_peaks`: `device` (the `deviceProperties` name), `model`, `source`, `tflops` {`fp32`,
/// `tf32`, `bf16`, `fp8`, `fp4`} (dense; null where the GPU has no such unit) and `gbps`; null
/// when the GPU is not in the table, its `deviceProperties` allow no estimate (`source` then
/// starts "estimate") and no peaks were given.
pub fn peaks_json(work: &WorkIndex) -> Value {
    let Some(p) = work.peaks() else {
        return Value::Null;
    };
    let tflops: Map<String, Value> = PeakClass::ALL.iter().map(|&c| (c.key().to_owned(), json!(p.tflops[c as usize]))).collect();
    json!({
        "device": work.device(),
        "model": p.model,
        "source": p.source,
        "tflops": tflops,
        "gbps": p.gbps,
    })
}

/// The peaks line under the kernel table and each step's MFU, or what is missing.
pub fn peaks_text(work: &WorkIndex, mfu: &[Option<f64>], steps: &Steps) -> String {
    let mut out = String::new();
    let Some(p) = work.peaks() else {
        let device = if work.device().is_empty() { "this trace's GPU" } else { work.device() };
        let _ = writeln!(
            out,
            "GPU peaks: {device} is not in the peak table; for %Peak, Bound and MFU give them:\n  \
             --gpu-peak bf16=TFLOPS,fp32=TFLOPS,gbps=GBPS\n"
        );
        return out;
    };
    let units: Vec<String> = PeakClass::ALL
        .iter()
        .filter_map(|&c| p.tflops[c as usize].map(|v| format!("{} {v}", c.key())))
        .collect();
    let gbps = p.gbps.map_or_else(|| "bandwidth unknown".to_owned(), |g| format!("{g} GB/s"));
    let _ = writeln!(out, "GPU peaks: {} (dense TFLOP/s: {}; {gbps})", p.model, units.join(", "));
    let _ = writeln!(out, "  source: {}", p.source);
    let cells: Vec<String> = steps
        .steps
        .iter()
        .zip(mfu)
        .filter_map(|(s, m)| m.map(|m| format!("#{} {} of {}", s.number, mfu_text(m), time(s.dur_ns()))))
        .collect();
    // Sections keep to 120 columns: the cells wrap.
    let mut line = String::from("MFU per step:");
    for cell in cells {
        if line.len() + cell.len() + 2 > 120 {
            let _ = writeln!(out, "{line}");
            line = String::from("             ");
        }
        let _ = write!(line, " {cell};");
    }
    if line.trim() != "MFU per step:" {
        let _ = writeln!(out, "{}", line.trim_end_matches(';'));
    }
    out.push('\n');
    out
}

/// An MFU in % with the digits it needs: tiny models run at 0.001%, which `0.00%` would hide.
fn mfu_text(pct: f64) -> String {
    match pct {
        p if p >= 1.0 => format!("{p:.1}%"),
        p if p >= 0.01 => format!("{p:.2}%"),
        p => format!("{p:.4}%"),
    }
}
