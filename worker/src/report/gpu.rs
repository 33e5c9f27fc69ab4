//! GPU metrics as text (tb_plugin's overview names, one row per device) and as the `gpus[]`
//! JSON of `report --json`.

use super::{time, WIDTH};
use crate::analysis::gpu::GpuMetrics;
use crate::analysis::ops::us;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Header and width of the columns after `Device`, in order.
const COLS: [(&str, usize); 5] = [
    ("GPU Utilization", 15),
    ("Est. SM Efficiency", 18),
    ("Est. Achieved Occupancy", 23),
    ("Tensor Cores (kernel time)", 26),
    ("Kernels", 9),
];

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{:.2} %", v))
}

/// GPU metrics of every device as text; the title line states the window.
pub fn gpu_text(metrics: &[GpuMetrics]) -> String {
    let mut out = String::new();
    let title = match metrics.first() {
        Some(m) => {
            let (w0, w1) = m.window;
            format!(
                "GPU metrics (window {} .. {}, {})",
                time(w0),
                time(w1),
                time(w1 - w0)
            )
        }
        None => "GPU metrics".to_owned(),
    };
    let _ = writeln!(
        out,
        "==== {title} {}",
        "=".repeat(WIDTH.saturating_sub(title.chars().count() + 6))
    );
    let rule = "-".repeat(WIDTH);
    let mut header = format!("{:<8}", "Device");
    for (h, w) in COLS {
        let _ = write!(header, " {h:>w$}");
    }
    let _ = writeln!(out, "{rule}\n{header}\n{rule}");
    if metrics.is_empty() {
        let _ = writeln!(out, "(no kernels)");
    }
    for m in metrics {
        let cells = [
            pct(Some(m.utilization * 100.0)),
            pct(m.sm_efficiency.map(|v| v * 100.0)),
            pct(m.occupancy_pct),
            pct(m.tensor_core_share.map(|v| v * 100.0)),
            m.kernels.to_string(),
        ];
        let _ = write!(out, "{:<8}", m.device);
        for (cell, (_, w)) in cells.iter().zip(COLS) {
            let _ = write!(out, " {cell:>w$}");
        }
        out.push('\n');
    }
    let _ = writeln!(out, "{rule}\n");
    out
}

/// The `gpus[]` array of `report --json`. Stable keys: `device`, `utilization_pct`,
/// `sm_efficiency_pct`, `achieved_occupancy_pct`, `tensor_core_pct` (null when undefined, see
/// `analysis::gpu`); also `window_start_us`, `window_end_us`, `kernels`.
pub fn gpus_json(metrics: &[GpuMetrics]) -> Value {
    Value::Array(
        metrics
            .iter()
            .map(|m| {
                json!({
                    "device": m.device,
                    "utilization_pct": m.utilization * 100.0,
                    "sm_efficiency_pct": m.sm_efficiency.map(|v| v * 100.0),
                    "achieved_occupancy_pct": m.occupancy_pct,
                    "tensor_core_pct": m.tensor_core_share.map(|v| v * 100.0),
                    "window_start_us": us(m.window.0),
                    "window_end_us": us(m.window.1),
                    "kernels": m.kernels,
                })
            })
            .collect(),
    )
}
