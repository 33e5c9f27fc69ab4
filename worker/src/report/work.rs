//! The roofline's report parts: the GPU peaks in use (`gpu_peaks` of `report --json`), in
//! the text report a peaks line and the MFU of each step, and the kernel names the roofline
//! leaves off with the reason (`--roofline`, `roofline` of `--json`).

use super::{column_width, cut, printable, time, title_line, WIDTH};
use crate::analysis::kernels::KernelTable;
use crate::analysis::roofline;
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

/// `--roofline`: how many kernel names the roofline draws and each one it leaves off, longest
/// first (at most `top`), with the reason ([`crate::analysis::roofline`]).
pub fn left_off_text(table: &KernelTable, top: usize, name_width: usize) -> String {
    let left = roofline::left_off(table);
    let plotted = table.rows.len() - left.len();
    let plotted_share = table.rows.iter().filter(|r| roofline::point(r).is_ok()).fold(0.0, |sum, r| sum + r.share);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}\nRoofline: {plotted} of {} kernel names plotted ({:.1}% of kernel time); {} left off{}",
        title_line("Roofline", WIDTH),
        table.rows.len(),
        plotted_share * 100.0,
        left.len(),
        if left.is_empty() { "." } else { ":" }
    );
    let shown = &left[..top.min(left.len())];
    let names: Vec<String> = shown.iter().map(|l| cut(&printable(&l.row.name), name_width)).collect();
    let name_w = column_width("Name", names.iter().map(String::as_str), name_width);
    for (l, name) in shown.iter().zip(&names) {
        let _ = writeln!(
            out,
            "  {name:<name_w$} {:>6} {:>12} {:>6.1}%  {}",
            l.row.calls(),
            time(l.row.total_ns),
            l.row.share * 100.0,
            printable(&l.reason.text())
        );
    }
    if left.len() > shown.len() {
        let _ = writeln!(out, "  ... {} more (--top)", left.len() - shown.len());
    }
    out.push('\n');
    out
}

/// `roofline`: `plotted` (kernel names on the chart) and `left_off[]` {`name`, `calls`,
/// `total_us`, `share`, `reason` (a [`roofline::Reason::key`]), `why`}, longest first.
pub fn roofline_json(table: &KernelTable) -> Value {
    let left = roofline::left_off(table);
    json!({
        "plotted": table.rows.len() - left.len(),
        "left_off": left.iter().map(|l| json!({
            "name": l.row.name,
            "calls": l.row.calls(),
            "total_us": l.row.total_ns as f64 / 1000.0,
            "share": l.row.share,
            "reason": l.reason.key(),
            "why": l.reason.text(),
        })).collect::<Vec<_>>(),
    })
}
