//! Wire tables: converts analysis results (op, kernel and step tables) into
//! [`protocol::TableData`] for the app. Column keys are the app's and the tests' contract
//! (`col-<key>` test ids); units tell the app how to format (`ns`, `count`, `pct`, `text`).
//!
//! Percentages are 0–100. Averages are ns (floats). Missing values (no GPU span, no launch
//! config, unknown FLOPs or bytes) are [`CellValue::Empty`], never 0. Work columns
//! (docs/definitions.md §8): `flops` (unit `flops`), `bytes`, rates in TFLOP/s and
//! GB/s (unit `rate`), `bound` (`compute` / `memory`). The op table's memory columns
//! (`key_averages()`'s CPU Mem, Self CPU Mem, CUDA Mem, Self CUDA Mem) are signed bytes (unit
//! `mem`): a Self Mem is negative when the children allocated more than the op kept.

use crate::analysis::breakdown::CATEGORIES;
use crate::analysis::kernels::KernelTable;
use crate::analysis::ops::OpTable;
use crate::analysis::phases::{Phase, Phases};
use crate::analysis::steps::Steps;
use crate::report::throughput;
use protocol::{CellValue, Column, TableData, Workload};
use std::collections::BTreeMap;

fn col(key: &str, label: &str, unit: &str) -> Column {
    Column {
        key: key.into(),
        label: label.into(),
        unit: unit.into(),
        note: None,
    }
}

fn pct(part: i64, total: i64) -> CellValue {
    if total > 0 {
        CellValue::Float(part as f64 * 100.0 / total as f64)
    } else {
        CellValue::Float(0.0)
    }
}

fn avg(total: i64, n: u64) -> CellValue {
    if n > 0 {
        CellValue::Float(total as f64 / n as f64)
    } else {
        CellValue::Empty
    }
}

fn count(n: u64) -> CellValue {
    CellValue::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

fn float(x: Option<f64>) -> CellValue {
    x.map_or(CellValue::Empty, CellValue::Float)
}

fn known(x: Option<u64>) -> CellValue {
    x.map_or(CellValue::Empty, count)
}

/// The op table (PyTorch's `key_averages` columns; `Input Shapes` when grouped by shape).
pub fn ops(table: &OpTable, by_shape: bool) -> TableData {
    let mut columns = vec![col("name", "Name", "text")];
    if by_shape {
        columns.push(col("input_shapes", "Input Shapes", "text"));
    }
    columns.extend([
        col("self_cpu_pct", "Self CPU %", "pct"),
        col("self_cpu", "Self CPU", "ns"),
        col("cpu_total_pct", "CPU total %", "pct"),
        col("cpu_total", "CPU total", "ns"),
        col("cpu_avg", "CPU time avg", "ns"),
        col("self_cuda", "Self CUDA", "ns"),
        col("self_cuda_pct", "Self CUDA %", "pct"),
        col("cuda_total", "CUDA total", "ns"),
        col("cuda_avg", "CUDA time avg", "ns"),
        col("calls", "# of Calls", "count"),
        col("flops", "FLOPs", "flops"),
        col("bytes", "Bytes", "bytes"),
        col("achieved_tflops", "TFLOP/s", "rate"),
        col("achieved_gbps", "GB/s", "rate"),
        col("cpu_mem", "CPU Mem", "mem"),
        col("self_cpu_mem", "Self CPU Mem", "mem"),
        col("cuda_mem", "CUDA Mem", "mem"),
        col("self_cuda_mem", "Self CUDA Mem", "mem"),
    ]);
    let (cpu, dev) = (table.self_cpu_total_ns, table.self_device_total_ns);
    let rows = table
        .rows
        .iter()
        .map(|r| {
            let mut row = vec![CellValue::Text(r.name.clone())];
            if by_shape {
                row.push(CellValue::Text(r.input_shapes.clone()));
            }
            row.extend([
                pct(r.self_cpu_ns, cpu),
                CellValue::Int(r.self_cpu_ns),
                pct(r.cpu_total_ns, cpu),
                CellValue::Int(r.cpu_total_ns),
                avg(r.cpu_total_ns, r.calls),
                CellValue::Int(r.self_device_ns),
                pct(r.self_device_ns, dev),
                CellValue::Int(r.device_total_ns),
                avg(r.device_total_ns, r.calls),
                count(r.calls),
                known(r.flops),
                known(r.bytes),
                float(r.achieved_tflops()),
                float(r.achieved_gbps()),
                CellValue::Int(r.cpu_mem),
                CellValue::Int(r.self_cpu_mem),
                CellValue::Int(r.device_mem),
                CellValue::Int(r.self_device_mem),
            ]);
            row
        })
        .collect();
    let totals = BTreeMap::from([
        ("self_cpu_total_ns".to_owned(), cpu as f64),
        ("self_device_total_ns".to_owned(), dev as f64),
        (
            "unattributed_device_ns".to_owned(),
            table.unattributed_device_ns as f64,
        ),
    ]);
    TableData {
        kind: "ops".into(),
        columns,
        rows,
        totals,
    }
}

/// The kernel table, by name.
pub fn kernels(table: &KernelTable) -> TableData {
    let columns = vec![
        col("name", "Name", "text"),
        col("calls", "Calls", "count"),
        col("total", "Total", "ns"),
        col("mean", "Mean", "ns"),
        col("median", "Median", "ns"),
        col("p95", "P95", "ns"),
        col("max", "Max", "ns"),
        col("gpu_pct", "GPU %", "pct"),
        col("blocks_per_sm", "Blocks/SM", "count"),
        col("occupancy", "Occupancy %", "pct"),
        col("class", "Class", "text"),
        col("tensor_cores", "Tensor cores", "text"),
        col("precision", "Precision", "text"),
        col("top_op", "Top op", "text"),
        col("source", "Source", "text"),
        col("flops", "FLOPs", "flops"),
        col("achieved_tflops", "TFLOP/s", "rate"),
        col("peak_pct", "% of peak", "pct"),
        col("achieved_gbps", "GB/s", "rate"),
        col("bandwidth_pct", "% of BW", "pct"),
        col("bound", "Bound", "text"),
    ];
    let rows = table
        .rows
        .iter()
        .map(|r| {
            let a = r.achieved.as_ref();
            vec![
                CellValue::Text(r.name.clone()),
                count(r.calls()),
                CellValue::Int(r.total_ns),
                CellValue::Float(r.stats.mean),
                CellValue::Float(r.stats.median),
                CellValue::Float(r.stats.p95),
                CellValue::Int(r.stats.max),
                CellValue::Float(r.share * 100.0),
                float(r.blocks_per_sm),
                float(r.occupancy_pct),
                CellValue::Text(r.class.as_str().into()),
                CellValue::Text(if r.tensor_cores { "yes" } else { "no" }.into()),
                CellValue::Text(r.precision.as_str().into()),
                r.top_op
                    .as_ref()
                    .map_or(CellValue::Empty, |t| CellValue::Text(t.name.clone())),
                // Triton kernels: the launching op's `kernel_file` (docs/definitions.md).
                r.source.as_ref().map_or(CellValue::Empty, |src| match src.line {
                    Some(line) => CellValue::Text(format!("{}:{line}", src.file)),
                    None => CellValue::Text(src.file.clone()),
                }),
                float(a.filter(|a| a.has_flops).map(|a| a.flops)),
                float(a.and_then(|a| a.tflops)),
                float(a.and_then(|a| a.peak_pct)),
                float(a.and_then(|a| a.gbps)),
                float(a.and_then(|a| a.bandwidth_pct)),
                a.and_then(|a| a.bound)
                    .map_or(CellValue::Empty, |b| CellValue::Text(b.key().into())),
            ]
        })
        .collect();
    let totals = BTreeMap::from([
        ("total_ns".to_owned(), table.total_ns as f64),
        ("calls".to_owned(), table.calls as f64),
    ]);
    TableData {
        kind: "kernels".into(),
        columns,
        rows,
        totals,
    }
}

/// The step table, in step order, with the time breakdown of each step span, its MFU (`mfu`:
/// one per step, in %, `None` when unknown) and its phases' CPU and GPU time (`phases`, one
/// per step; a phase the trace cannot tell apart is empty, its column's note says why).
pub fn steps(steps: &Steps, mfu: &[Option<f64>], phases: &Phases, w: Workload) -> TableData {
    let mut columns = vec![
        col("step", "Step", "count"),
        col("cpu_dur", "CPU dur", "ns"),
        col("gpu_dur", "GPU dur", "ns"),
        col("step_dur", "Step dur", "ns"),
    ];
    const CATS: [(&str, &str); 8] = [
        ("kernel", "Kernel"),
        ("memcpy", "Memcpy"),
        ("memset", "Memset"),
        ("communication", "Communication"),
        ("runtime", "Runtime"),
        ("dataloader", "DataLoader"),
        ("cpu_exec", "CPU Exec"),
        ("other", "Other"),
    ];
    columns.extend(CATS.iter().map(|(k, l)| col(k, l, "ns")));
    columns.push(col("mfu_pct", "MFU %", "pct"));
    if w.batch_size.is_some() {
        columns.push(col("samples_per_s", "Samples/s", "rate"));
    }
    if w.tokens_per_step.is_some() {
        columns.push(col("tokens_per_s", "Tokens/s", "rate"));
    }
    columns.extend(phase_columns(phases));
    let rates = throughput::per_step(steps, w);
    let rows = steps
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut row = vec![
                count(s.number),
                CellValue::Int(s.cpu_dur_ns()),
                if s.gpu.is_some() {
                    CellValue::Int(s.gpu_dur_ns())
                } else {
                    CellValue::Empty
                },
                CellValue::Int(s.dur_ns()),
            ];
            row.extend(
                CATEGORIES
                    .iter()
                    .map(|&c| CellValue::Int(s.breakdown.get(c))),
            );
            row.push(float(mfu.get(i).copied().flatten()));
            let (samples, tokens) = rates.get(i).copied().unwrap_or_default();
            if w.batch_size.is_some() {
                row.push(float(samples));
            }
            if w.tokens_per_step.is_some() {
                row.push(float(tokens));
            }
            row.extend(phase_cells(phases, i, s.number));
            row
        })
        .collect();
    // The run's rates: the work of the complete steps over their summed spans.
    let (samples, tokens) = throughput::overall(steps, w);
    let totals = [("samples_per_s", samples), ("tokens_per_s", tokens)]
        .into_iter()
        .filter_map(|(k, v)| Some((k.to_owned(), v?)))
        .chain(std::iter::once(("complete_steps".to_owned(), steps.steps.iter().filter(|s| !s.incomplete).count() as f64)))
        .collect();
    TableData {
        kind: "steps".into(),
        columns,
        rows,
        totals,
    }
}

/// Per phase a CPU and a GPU column (`phase_<key>_cpu` / `_gpu`), then `comm_exposed`.
fn phase_columns(phases: &Phases) -> Vec<Column> {
    let mut out = Vec::with_capacity(Phase::ALL.len() * 2 + 1);
    for ph in Phase::ALL {
        let note = phases.not_told_apart.contains(&ph).then(|| ph.why_not_told().to_owned());
        for (side, what) in [("cpu", "CPU"), ("gpu", "GPU")] {
            let key = format!("phase_{}_{side}", ph.key());
            out.push(Column { note: note.clone(), ..col(&key, &format!("{} {what}", ph.label()), "ns") });
        }
    }
    out.push(col("comm_exposed", "Exposed comm", "ns"));
    out
}

/// The cells of [`phase_columns`] of step `number`, the `i`th (phases come one per step, in
/// step order; empty if they do not).
fn phase_cells(phases: &Phases, i: usize, number: u64) -> Vec<CellValue> {
    let Some(p) = phases.steps.get(i).filter(|p| p.step == number) else {
        return vec![CellValue::Empty; Phase::ALL.len() * 2 + 1];
    };
    let mut out = Vec::with_capacity(Phase::ALL.len() * 2 + 1);
    for ph in Phase::ALL {
        let told = !phases.not_told_apart.contains(&ph);
        for ns in [p.cpu_ns[ph as usize], p.gpu_ns[ph as usize]] {
            out.push(if told { CellValue::Int(ns) } else { CellValue::Empty });
        }
    }
    out.push(CellValue::Int(p.comm_exposed_ns));
    out
}
