//! `kinetoscope report`: every analysis of one trace over a range, assembled once from its
//! [`Session`] and rendered as text tables or the stable `--json` form.
//!
//! The op table, findings and GPU profiles come from the session, the same values the page's
//! queries answer with; range-limited tables are computed here for the range asked.

use super::{findings, gpu, idle, kernels, memory, op_table_text, ops_json, sorted, steps, SortKey};
use crate::analysis::gpu::GpuMetrics;
use crate::analysis::idle::Idle;
use crate::analysis::kernels::KernelTable;
use crate::analysis::memory::Memory;
use crate::analysis::ops::{OpOptions, OpTable};
use crate::analysis::steps::Steps;
use crate::session::Session;

/// What a report covers and how its op tables are cut.
#[derive(Clone, Copy, Debug)]
pub struct ReportOptions {
    /// `[t0, t1)` in ns from the trace origin, or the whole trace.
    pub range: Option<(i64, i64)>,
    /// Ops grouped by input shape.
    pub by_shape: bool,
    /// One op table sorted by this key instead of the default two.
    pub sort: Option<SortKey>,
    /// Rows per text table.
    pub top: usize,
}

/// Every analysis of one report, computed once for text or JSON.
pub struct TraceReport<'s> {
    session: &'s Session,
    options: ReportOptions,
    ops: OpTable,
    kernels: KernelTable,
    steps: Steps,
    gpus: Vec<GpuMetrics>,
    memory: Memory,
    idle: Idle,
}

impl<'s> TraceReport<'s> {
    /// Computes the report's analyses over `options.range`.
    pub fn build(session: &'s Session, options: ReportOptions) -> Self {
        let trace = session.trace();
        let range = options.range;
        Self {
            session,
            options,
            ops: session.op_table(&OpOptions { by_shape: options.by_shape, range }),
            kernels: session.kernels(range),
            steps: session.steps(range),
            gpus: session.gpus(range),
            memory: crate::analysis::memory::analyze(trace, range, options.top.min(10)),
            idle: crate::analysis::idle::analyze(trace, range),
        }
    }

    /// The stable `--json` form (keys documented in docs/cli.md).
    pub fn json(&self) -> serde_json::Value {
        let trace = self.session.trace();
        let (ops, range) = (&self.ops, self.options.range);
        serde_json::json!({
            "file": self.session.name(),
            "range_us": range.map(|(t0, t1)| [t0 as f64 / 1000.0, t1 as f64 / 1000.0]),
            "self_cpu_time_total_us": ops.self_cpu_total_ns as f64 / 1000.0,
            "self_device_time_total_us": ops.self_device_total_ns as f64 / 1000.0,
            "ops": ops_json(&sorted(ops, self.options.sort.unwrap_or(SortKey::SelfDevice), usize::MAX)),
            "kernels": kernels::kernels_json(&self.kernels.rows),
            "steps": steps::steps_json(trace, &self.steps),
            "step_stats": steps::step_stats_json(&self.steps),
            "gpus": gpu::gpus_json(&self.gpus),
            "memory": memory::memory_json(trace, &self.memory),
            "idle": idle::idle_json(&self.idle),
            "launch": idle::launch_json(trace, &self.idle),
            "findings": findings::findings_json(self.session.findings()),
        })
    }

    /// Text tables shaped like `torch.profiler`'s, then the other sections that have data.
    pub fn text(&self) -> String {
        let trace = self.session.trace();
        let (ops, top) = (&self.ops, self.options.top);
        let shape = if self.options.by_shape { ", grouped by input shape" } else { "" };
        let tables: Vec<(String, SortKey)> = match self.options.sort {
            Some(key) => vec![(format!("ops by {key:?}{shape}"), key)],
            None if ops.self_device_total_ns > 0 => vec![
                (format!("TOP CUDA ops (by Self CUDA){shape}"), SortKey::SelfDevice),
                (format!("TOP CPU ops (by Self CPU){shape}"), SortKey::SelfCpu),
            ],
            None => vec![(format!("TOP CPU ops (by Self CPU){shape}"), SortKey::SelfCpu)],
        };
        let mut out = String::new();
        for (title, key) in tables {
            out.push_str(&op_table_text(&title, ops, &sorted(ops, key, top), self.options.by_shape));
        }
        if !self.kernels.rows.is_empty() {
            out.push_str(&kernels::kernel_table_text("TOP kernels (by total time)", &self.kernels, top));
        }
        if !self.steps.steps.is_empty() {
            out.push_str(&steps::steps_text(&self.steps));
        }
        if !self.gpus.is_empty() {
            out.push_str(&gpu::gpu_text(&self.gpus));
        }
        if !self.memory.devices.is_empty() {
            out.push_str(&memory::memory_text(trace, &self.memory));
        }
        if !self.idle.streams.is_empty() {
            out.push_str(&idle::idle_text(trace, &self.idle));
        }
        out.push_str(&findings::findings_text(self.session.findings()));
        out
    }
}
