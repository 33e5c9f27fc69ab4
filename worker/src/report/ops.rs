//! Op tables as text (PyTorch's `key_averages().table()` columns) and as `ops[]` JSON.

use super::memory::bytes;
use super::{column_width, cut, printable, time, title_line};
use crate::analysis::ops::{OpRow, OpTable};
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Which column orders a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// Self CPU time.
    SelfCpu,
    /// CPU total time.
    CpuTotal,
    /// Self device time.
    SelfDevice,
    /// Device total time.
    DeviceTotal,
    /// Number of calls.
    Calls,
    /// Self CPU Mem (bytes allocated in the op minus its children's).
    SelfCpuMem,
    /// CPU Mem (bytes allocated while the op ran).
    CpuMem,
    /// Self CUDA Mem.
    SelfDeviceMem,
    /// CUDA Mem.
    DeviceMem,
}

impl SortKey {
    /// Parses a `--sort` value (`self_cpu`, `cpu_total`, `self_cuda`, `cuda_total`, `calls`,
    /// `self_cpu_mem`, `cpu_mem`, `self_cuda_mem`, `cuda_mem`).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "self_cpu" => Self::SelfCpu,
            "cpu_total" => Self::CpuTotal,
            "self_cuda" | "self_device" => Self::SelfDevice,
            "cuda_total" | "device_total" => Self::DeviceTotal,
            "calls" => Self::Calls,
            "self_cpu_mem" => Self::SelfCpuMem,
            "cpu_mem" => Self::CpuMem,
            "self_cuda_mem" | "self_device_mem" => Self::SelfDeviceMem,
            "cuda_mem" | "device_mem" => Self::DeviceMem,
            _ => return None,
        })
    }

    /// The `--sort` name of this key.
    pub fn name(self) -> &'static str {
        match self {
            Self::SelfCpu => "self_cpu",
            Self::CpuTotal => "cpu_total",
            Self::SelfDevice => "self_cuda",
            Self::DeviceTotal => "cuda_total",
            Self::Calls => "calls",
            Self::SelfCpuMem => "self_cpu_mem",
            Self::CpuMem => "cpu_mem",
            Self::SelfDeviceMem => "self_cuda_mem",
            Self::DeviceMem => "cuda_mem",
        }
    }

    fn value(self, r: &OpRow) -> i64 {
        match self {
            Self::SelfCpu => r.self_cpu_ns,
            Self::CpuTotal => r.cpu_total_ns,
            Self::SelfDevice => r.self_device_ns,
            Self::DeviceTotal => r.device_total_ns,
            Self::Calls => i64::try_from(r.calls).unwrap_or(i64::MAX),
            Self::SelfCpuMem => r.self_cpu_mem,
            Self::CpuMem => r.cpu_mem,
            Self::SelfDeviceMem => r.self_device_mem,
            Self::DeviceMem => r.device_mem,
        }
    }
}

/// Rows of `table` sorted by `key` descending (ties keep first-occurrence order), at most `top`.
pub fn sorted(table: &OpTable, key: SortKey, top: usize) -> Vec<&OpRow> {
    let mut rows: Vec<&OpRow> = table.rows.iter().collect();
    rows.sort_by_key(|r| std::cmp::Reverse(key.value(r)));
    rows.truncate(top);
    rows
}

fn pct(part: i64, total: i64) -> String {
    if total == 0 {
        return "0.00%".into();
    }
    format!("{:.2}%", part as f64 * 100.0 / total as f64)
}

/// Widest Input Shapes column (PyTorch's `table()` caps it at 80 too).
const SHAPES_WIDTH: usize = 80;

/// One op table as text, titled, with PyTorch's columns and its two total lines; names cut
/// at `name_width` characters. The memory pairs show when the table has such memory, as
/// PyTorch shows them when profiling memory; by shape only the one rows are sorted by (`key`).
pub fn op_table_text(title: &str, table: &OpTable, rows: &[&OpRow], key: SortKey, by_shape: bool, name_width: usize) -> String {
    const COLS: [(&str, usize); 14] = [
        ("Self CPU%", 9),
        ("Self CPU", 9),
        ("CPU tot%", 8),
        ("CPU total", 9),
        ("CPU avg", 9),
        ("Self CUDA", 9),
        ("Self CUDA%", 10),
        ("CUDA total", 10),
        ("CUDA avg", 9),
        ("Calls", 6),
        ("CPU Mem", 10),
        ("Self CPU Mem", 12),
        ("CUDA Mem", 10),
        ("Self CUDA Mem", 13),
    ];
    // By shape, the shapes column needs room, and with memory the memory columns do: the
    // derived columns (CPU tot%, CPU avg, Self CUDA%, CUDA avg) are left out so a row stays
    // within the report's width.
    const DERIVED: [usize; 4] = [2, 4, 6, 8];
    const MEMORY: [SortKey; 4] = [SortKey::CpuMem, SortKey::SelfCpuMem, SortKey::DeviceMem, SortKey::SelfDeviceMem];
    let cpu_mem = table.rows.iter().any(|r| r.cpu_mem != 0 || r.self_cpu_mem != 0);
    let device_mem = table.rows.iter().any(|r| r.device_mem != 0 || r.self_device_mem != 0);
    let memory = |i: usize| {
        let has = if i < 12 { cpu_mem } else { device_mem };
        has && (!by_shape || MEMORY.get(i - 10) == Some(&key))
    };
    let narrow = by_shape || (10..COLS.len()).any(memory);
    let shown: Vec<usize> = (0..COLS.len())
        .filter(|i| !narrow || !DERIVED.contains(i))
        .filter(|&i| i < 10 || memory(i))
        .collect();
    let fixed: usize = shown.iter().map(|&i| COLS[i].1 + 1).sum();
    let names: Vec<String> = rows.iter().map(|r| printable(&r.name)).collect();
    let name_w = column_width("Name", names.iter().map(String::as_str), name_width);
    let shapes_w = if by_shape {
        column_width("Input Shapes", rows.iter().map(|r| r.input_shapes.as_str()), SHAPES_WIDTH) + 1
    } else {
        0
    };
    let width = name_w + fixed + shapes_w;
    let mut out = String::new();
    let _ = writeln!(out, "{}", title_line(title, width));
    let mut header = format!("{:<name_w$}", "Name");
    for &i in &shown {
        let (h, w) = COLS[i];
        let _ = write!(header, " {h:>w$}");
    }
    if by_shape {
        let _ = write!(header, " Input Shapes");
    }
    let rule = "-".repeat(width);
    let _ = writeln!(out, "{rule}\n{header}\n{rule}");
    let (cpu_total, dev_total) = (table.self_cpu_total_ns, table.self_device_total_ns);
    for (r, name) in rows.iter().zip(&names) {
        let calls = i64::try_from(r.calls.max(1)).unwrap_or(i64::MAX);
        let cells = [
            pct(r.self_cpu_ns, cpu_total),
            time(r.self_cpu_ns),
            pct(r.cpu_total_ns, cpu_total),
            time(r.cpu_total_ns),
            time(r.cpu_total_ns / calls),
            time(r.self_device_ns),
            pct(r.self_device_ns, dev_total),
            time(r.device_total_ns),
            time(r.device_total_ns / calls),
            r.calls.to_string(),
            bytes(r.cpu_mem),
            bytes(r.self_cpu_mem),
            bytes(r.device_mem),
            bytes(r.self_device_mem),
        ];
        let _ = write!(out, "{:<name_w$}", cut(name, name_w));
        for &i in &shown {
            let (cell, w) = (&cells[i], COLS[i].1);
            let _ = write!(out, " {cell:>w$}");
        }
        if by_shape {
            let _ = write!(out, " {}", cut(&r.input_shapes, SHAPES_WIDTH));
        }
        out.push('\n');
    }
    let _ = writeln!(out, "{rule}\nSelf CPU time total: {}\nSelf CUDA time total: {}\n", time(cpu_total), time(dev_total));
    out
}

/// The `ops[]` array of `report --json` (keys are stable API, documented in docs/cli.md):
/// `flops` and `bytes` are summed over calls as `key_averages` sums them (null when no call
/// has an estimate); `achieved_tflops` / `achieved_gbps` divide them by CUDA total.
pub fn ops_json(rows: &[&OpRow]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "input_shapes": r.input_shapes,
                    "calls": r.calls,
                    "self_cpu_us": r.self_cpu_us(),
                    "cpu_total_us": r.cpu_total_us(),
                    "self_device_us": r.self_device_us(),
                    "device_total_us": r.device_total_us(),
                    "flops": r.flops,
                    "bytes": r.bytes,
                    "achieved_tflops": r.achieved_tflops(),
                    "achieved_gbps": r.achieved_gbps(),
                    "cpu_mem_bytes": r.cpu_mem,
                    "self_cpu_mem_bytes": r.self_cpu_mem,
                    "device_mem_bytes": r.device_mem,
                    "self_device_mem_bytes": r.self_device_mem,
                })
            })
            .collect(),
    )
}
