//! Kernel tables as text (one row per kernel name, the op that launched it on a second line)
//! and as the `kernels[]` JSON of `report --json`.
//!
//! Text columns: Calls, Total, GPU% (share of kernel time), Mean, Median, P95, Max,
//! Blk/SM, Occ%, TC (tensor cores) and Prec (precision, `?` unknown), then, when some row has
//! known work, TFLOP/s, %Peak, GB/s and Bound (the roofline); the class and min and std are
//! in the JSON. The Name column is as wide as the longest name, at most `name_width`.

use super::{column_width, cut, printable, time, title_line};
use crate::analysis::kernel_class::Precision;
use crate::analysis::kernels::{KernelRow, KernelTable};
use crate::analysis::ops::us;
use crate::analysis::work::dtype::PeakClass;
use crate::analysis::work::Bound;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Header and width of the value columns, in order (the roofline's four only when some
/// row has known work: [`ROOFLINE`]).
const COLS: [(&str, usize); 15] = [
    ("Calls", 6),
    ("Total", 9),
    ("GPU%", 6),
    ("Mean", 9),
    ("Median", 9),
    ("P95", 9),
    ("Max", 9),
    ("Blk/SM", 6),
    ("Occ%", 5),
    ("TC", 2),
    ("Prec", 4),
    ("TFLOP/s", 7),
    ("%Peak", 5),
    ("GB/s", 7),
    ("Bound", 7),
];

/// Number of trailing roofline columns in [`COLS`].
const ROOFLINE: usize = 4;

/// f64 ns -> i64 ns for [`time`] (statistics are sub-ns exact; display is not).
fn ns(v: f64) -> i64 {
    v.round() as i64
}

/// The first `top` rows of `table` as text, titled, with a totals line; names cut at
/// `name_width` characters.
pub fn kernel_table_text(title: &str, table: &KernelTable, top: usize, name_width: usize) -> String {
    let rows = &table.rows[..top.min(table.rows.len())];
    let with_work = rows.iter().any(|r| r.achieved.is_some());
    let cols = &COLS[..COLS.len() - if with_work { 0 } else { ROOFLINE }];
    let fixed: usize = cols.iter().map(|(_, w)| w + 1).sum();
    let names: Vec<String> = rows.iter().map(|r| printable(&r.name)).collect();
    let name_w = column_width("Name", names.iter().map(String::as_str), name_width);
    let width = name_w + fixed;
    let mut out = String::new();
    let _ = writeln!(out, "{}", title_line(title, width));
    let mut header = format!("{:<name_w$}", "Name");
    for &(h, w) in cols {
        let _ = write!(header, " {h:>w$}");
    }
    let rule = "-".repeat(width);
    let _ = writeln!(out, "{rule}\n{header}\n{rule}");
    for (r, name) in rows.iter().zip(&names) {
        let opt = |v: Option<f64>, digits: usize| {
            v.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
        };
        let cells = [
            r.calls().to_string(),
            time(r.total_ns),
            format!("{:.1}%", r.share * 100.0),
            time(ns(r.stats.mean)),
            time(ns(r.stats.median)),
            time(ns(r.stats.p95)),
            time(r.stats.max),
            opt(r.blocks_per_sm, 2),
            opt(r.occupancy_pct, 1),
            if r.tensor_cores {
                "Y".into()
            } else {
                "-".into()
            },
            match r.precision {
                Precision::Unknown => "?".into(),
                p => p.as_str().into(),
            },
            opt(r.achieved.and_then(|a| a.tflops), 2),
            opt(r.achieved.and_then(|a| a.peak_pct), 1),
            opt(r.achieved.and_then(|a| a.gbps), 1),
            r.achieved.and_then(|a| a.bound).map_or("-", Bound::key).into(),
        ];
        let _ = write!(out, "{:<name_w$}", cut(name, name_w));
        for (cell, &(_, w)) in cells.iter().zip(cols) {
            let _ = write!(out, " {cell:>w$}");
        }
        out.push('\n');
        if let Some(op) = &r.top_op {
            let line = format!(
                "    launched by {} ({} of {} calls)",
                printable(&op.name),
                op.calls,
                r.calls()
            );
            let _ = writeln!(out, "{}", cut(&line, width));
        }
    }
    let tc_ns: i64 = table
        .rows
        .iter()
        .filter(|r| r.tensor_cores)
        .map(|r| r.total_ns)
        .sum();
    let tc_pct = if table.total_ns > 0 {
        tc_ns as f64 * 100.0 / table.total_ns as f64
    } else {
        0.0
    };
    let _ = writeln!(
        out,
        "{rule}\nKernel time total: {}; calls: {}; kernel names: {}; tensor-core kernels: {tc_pct:.2}%\n",
        time(table.total_ns),
        table.calls,
        table.rows.len(),
    );
    out
}

/// The `kernels[]` array of `report --json`. Stable keys: `name`, `calls`, `total_us`,
/// `mean_us`, `median_us`, `min_us`, `max_us`, `std_us` (sample, ddof 1), `p95_us`,
/// `blocks_per_sm`, `achieved_occupancy_pct` (null without the arg), `tensor_cores`; also
/// `gpu_time_pct`, `gemm`, `class`, `class_source` (what decided it: `name #N`, the name
/// table's row; `launch: OP`, the communication op it was launched under; `none`), `precision`, `top_op` {`name`, `calls`, `total_us`}
/// (null when unattributed) and `source` {`file`, `line`, `function`, `kernel_name`,
/// `kernel_hash`, `num_warps`, `num_stages`} (null unless launched by an op with `kernel_file`);
/// the roofline (`analysis::work`): `flops`, `bytes` (of the calls with known work),
/// `work_us` (their time), `achieved_tflops`, `achieved_gbps`, `peak_pct`, `bandwidth_pct`,
/// `bound` (`compute` / `memory`), `peak_class`, each null when unknown.
pub fn kernels_json(rows: &[KernelRow]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| {
                let a = r.achieved.as_ref();
                json!({
                    "name": r.name,
                    "calls": r.calls(),
                    "total_us": us(r.total_ns),
                    "mean_us": r.stats.mean / 1000.0,
                    "median_us": r.stats.median / 1000.0,
                    "min_us": us(r.stats.min),
                    "max_us": us(r.stats.max),
                    "std_us": r.stats.std / 1000.0,
                    "p95_us": r.stats.p95 / 1000.0,
                    "blocks_per_sm": r.blocks_per_sm,
                    "achieved_occupancy_pct": r.occupancy_pct,
                    "tensor_cores": r.tensor_cores,
                    "gpu_time_pct": r.share * 100.0,
                    "gemm": r.gemm,
                    "class": r.class.as_str(),
                    "class_source": r.class_source,
                    "precision": r.precision.as_str(),
                    "top_op": r.top_op.as_ref().map(|op| json!({
                        "name": op.name,
                        "calls": op.calls,
                        "total_us": us(op.total_ns),
                    })),
                    "source": r.source.as_ref().map(|src| json!({
                        "file": src.file,
                        "line": src.line,
                        "function": src.function,
                        "kernel_name": src.kernel_name,
                        "kernel_hash": src.kernel_hash,
                        "num_warps": src.num_warps,
                        "num_stages": src.num_stages,
                    })),
                    "flops": a.filter(|a| a.has_flops).map(|a| a.flops),
                    "bytes": a.and_then(|a| a.bytes),
                    "work_us": a.map(|a| us(a.measured_ns)),
                    "achieved_tflops": a.and_then(|a| a.tflops),
                    "achieved_gbps": a.and_then(|a| a.gbps),
                    "peak_pct": a.and_then(|a| a.peak_pct),
                    "bandwidth_pct": a.and_then(|a| a.bandwidth_pct),
                    "bound": a.and_then(|a| a.bound).map(Bound::key),
                    "peak_class": a.and_then(|a| a.peak).map(PeakClass::key),
                })
            })
            .collect(),
    )
}
