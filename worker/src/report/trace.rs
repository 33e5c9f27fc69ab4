//! `kinetoscope report`: every analysis of one trace over a range, assembled once from its
//! [`Session`] and rendered as text tables, the stable `--json` form or Markdown (a PR comment
//! or a CI job summary: summary, top ops, top kernels, steps, findings); its HTML form is in
//! `html.rs`.
//!
//! The op table, findings and GPU profiles come from the session, the same values the page's
//! queries answer with; range-limited tables are computed here for the range asked.

use super::{findings, gpu, idle, kernels, memory, op_table_text, ops_json, sorted, steps, work, SortKey};
use crate::analysis::gpu::GpuMetrics;
use crate::analysis::idle::Idle;
use crate::analysis::kernels::KernelTable;
use crate::analysis::memory::Memory;
use crate::analysis::breakdown::Category;
use crate::analysis::ops::{OpOptions, OpTable};
use crate::analysis::steps::step_name;
use crate::analysis::unavailable;
use crate::analysis::steps::Steps;
use crate::session::Session;
use super::markdown::{text as md, Align, Table, NAME_CHARS};
use super::{cut, time};
use std::fmt::Write as _;

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
    /// Widest Name column of the op and kernel tables ([`super::NAME_WIDTH`] by default).
    pub name_width: usize,
}

impl Default for ReportOptions {
    /// The whole trace, ops by name, the default tables, 20 rows, PyTorch's name width.
    fn default() -> Self {
        Self { range: None, by_shape: false, sort: None, top: 20, name_width: super::NAME_WIDTH }
    }
}

/// Every analysis of one report, computed once for text or JSON.
///
/// Fields are visible to the other renderers of `report` (`html`), not outside it.
pub struct TraceReport<'s> {
    pub(super) session: &'s Session,
    pub(super) options: ReportOptions,
    pub(super) ops: OpTable,
    pub(super) kernels: KernelTable,
    pub(super) steps: Steps,
    pub(super) gpus: Vec<GpuMetrics>,
    pub(super) memory: Memory,
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
            "steps": steps::steps_json(trace, &self.steps, &self.session.step_mfu(&self.steps)),
            "gpu_peaks": work::peaks_json(self.session.work()),
            "roofline": work::roofline_json(&self.kernels),
            "step_stats": steps::step_stats_json(&self.steps),
            "gpus": gpu::gpus_json(&self.gpus),
            "memory": self.memory_json(),
            "idle": idle::idle_json(&self.idle),
            "launch": idle::launch_json(trace, &self.idle),
            "findings": findings::findings_json(self.session.findings()),
            "critical_path": super::critical_path::json(trace, &self.paths()),
            "phases": super::phases::json(&self.phases()),
            "modules": super::modules::json(trace, &crate::analysis::modules::analyze(trace)),
            "unavailable": self.unavailable(),
        })
    }

    /// The phases of the report's steps.
    pub fn phases(&self) -> crate::analysis::phases::Phases {
        crate::analysis::phases::analyze(self.session.trace(), &self.steps, self.session.kernel_classes())
    }

    /// `memory[]`: each device's series and largest allocations, with what holds it
    /// (`report::held`: step peaks by category, live allocations at the highest peak, leak).
    fn memory_json(&self) -> serde_json::Value {
        let trace = self.session.trace();
        let mut out = memory::memory_json(trace, &self.memory);
        super::held::extend_memory_json(&mut out, trace, self.session.memory_held(), self.options.range, self.options.top);
        out
    }

    /// The text of `report --roofline` (the kernel names the roofline leaves off, and why).
    pub fn roofline_text(&self) -> String {
        work::left_off_text(&self.kernels, self.options.top, self.options.name_width)
    }

    /// The text of `report --memory` (what holds memory, per step and at the peak).
    pub fn held_text(&self) -> String {
        super::held::held_text(self.session.trace(), self.session.memory_held(), self.options.range, self.options.top)
    }

    /// The critical paths of the report's steps (all of them without a range; the capture
    /// window's for a trace without steps).
    pub fn paths(&self) -> Vec<crate::analysis::critical_path::StepPath> {
        let all = self.session.critical_paths();
        if self.options.range.is_none() {
            return all.to_vec();
        }
        all.iter().filter(|p| p.step.is_some_and(|n| self.steps.steps.iter().any(|s| s.number == n))).cloned().collect()
    }

    /// The steps the report covers (with a range: those starting in it), or none.
    pub fn steps_analyzed(&self) -> Steps {
        self.steps.clone()
    }

    /// `unavailable{}`: for each empty section, why (`analysis::unavailable`); `{}` when none is.
    fn unavailable(&self) -> serde_json::Value {
        let trace = self.session.trace();
        let mut out = serde_json::Map::new();
        let mut put = |key: &str, why: Option<String>| {
            if let Some(why) = why {
                out.insert(key.to_owned(), why.into());
            }
        };
        let steps = unavailable::steps(trace, &self.steps, self.options.range);
        put("step_stats", self.steps.stats.is_none().then(|| steps.clone().unwrap_or_else(|| "no complete step".to_owned())));
        put("step_findings", steps.clone());
        put("steps", steps);
        put("ops", self.ops.rows.is_empty().then(|| unavailable::ops(trace)));
        put("kernels", self.kernels.rows.is_empty().then(|| unavailable::NO_KERNELS.to_owned()));
        put("gpus", self.gpus.is_empty().then(|| unavailable::NO_KERNELS.to_owned()));
        put("memory", self.memory.devices.is_empty().then(|| unavailable::NO_MEMORY.to_owned()));
        put("idle", self.idle.streams.is_empty().then(|| unavailable::NO_DEVICE_ACTIVITY.to_owned()));
        serde_json::Value::Object(out)
    }

    /// Text tables shaped like `torch.profiler`'s, then the other sections that have data.
    pub fn text(&self) -> String {
        let trace = self.session.trace();
        let (ops, top) = (&self.ops, self.options.top);
        let shape = if self.options.by_shape { ", grouped by input shape" } else { "" };
        let tables: Vec<(String, SortKey)> = match self.options.sort {
            Some(key) => vec![(format!("ops by {}{shape}", key.name()), key)],
            None if ops.self_device_total_ns > 0 => vec![
                (format!("TOP CUDA ops (by Self CUDA){shape}"), SortKey::SelfDevice),
                (format!("TOP CPU ops (by Self CPU){shape}"), SortKey::SelfCpu),
            ],
            None => vec![(format!("TOP CPU ops (by Self CPU){shape}"), SortKey::SelfCpu)],
        };
        let mut out = String::new();
        for (title, key) in tables {
            out.push_str(&op_table_text(&title, ops, &sorted(ops, key, top), key, self.options.by_shape, self.options.name_width));
        }
        if !self.kernels.rows.is_empty() {
            out.push_str(&kernels::kernel_table_text("TOP kernels (by total time)", &self.kernels, top, self.options.name_width));
            out.push_str(&work::peaks_text(self.session.work(), &self.session.step_mfu(&self.steps), &self.steps));
        }
        // Without steps the section says so and how to get them, instead of vanishing.
        out.push_str(&steps::steps_text(&self.steps, unavailable::steps(trace, &self.steps, self.options.range).as_deref()));
        if self.steps.steps.is_empty() {
            let candidates = crate::analysis::steps::marker_candidates(trace, 5);
            out.push_str(&steps::candidates_text(&candidates));
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

    /// The report as GitHub Markdown: summary, top ops (by Self CUDA, else Self CPU), top
    /// kernels, steps and findings, at most `top` rows per table.
    pub fn markdown(&self) -> String {
        let ops = &self.ops;
        let mut out = format!("### kinetoscope report: {}\n\n", md(self.session.name()));
        let mut summary = Table::new(&[("Metric", Align::Left), ("Value", Align::Right)]);
        if let Some((t0, t1)) = self.options.range {
            summary.row(vec!["Range".into(), format!("{} - {}", time(t0), time(t1))]);
        }
        summary.row(vec![
            "Self CPU time total".into(),
            time(ops.self_cpu_total_ns),
        ]);
        summary.row(vec![
            "Self CUDA time total".into(),
            time(ops.self_device_total_ns),
        ]);
        summary.row(vec![
            "Kernels (calls)".into(),
            self.kernels.calls.to_string(),
        ]);
        summary.row(vec!["Steps".into(), self.steps.steps.len().to_string()]);
        if let Some(st) = &self.steps.stats {
            summary.row(vec![
                "Step time (mean)".into(),
                time(st.duration.mean.round() as i64),
            ]);
            summary.row(vec![
                "Step time (p95)".into(),
                time(st.duration.p95.round() as i64),
            ]);
        }
        for g in &self.gpus {
            summary.row(vec![
                format!("GPU {} utilization", g.device),
                format!("{:.2} %", g.utilization * 100.0),
            ]);
        }
        out.push_str(&summary.render());
        out.push_str(&self.ops_md());
        out.push_str(&self.kernels_md());
        out.push_str(&self.steps_md());
        out.push_str(&findings_md(self.session.findings()));
        out
    }

    fn ops_md(&self) -> String {
        let (ops, top) = (&self.ops, self.options.top);
        let (key, by) = match self.options.sort {
            Some(key) => (key, key.name().to_owned()),
            None if ops.self_device_total_ns > 0 => (SortKey::SelfDevice, "Self CUDA".to_owned()),
            None => (SortKey::SelfCpu, "Self CPU".to_owned()),
        };
        let mut table = Table::new(&[
            ("Name", Align::Left),
            ("Self CPU", Align::Right),
            ("CPU total", Align::Right),
            ("Self CUDA", Align::Right),
            ("CUDA total", Align::Right),
            ("# of Calls", Align::Right),
        ]);
        for r in sorted(ops, key, top) {
            let name = if self.options.by_shape && !r.input_shapes.is_empty() {
                format!("{} {}", r.name, r.input_shapes)
            } else {
                r.name.clone()
            };
            table.row(vec![
                md(&cut(&name, NAME_CHARS)),
                time(r.self_cpu_ns),
                time(r.cpu_total_ns),
                time(r.self_device_ns),
                time(r.device_total_ns),
                r.calls.to_string(),
            ]);
        }
        format!("#### Top ops (by {by})\n\n{}", table.render())
    }

    fn kernels_md(&self) -> String {
        if self.kernels.rows.is_empty() {
            return String::new();
        }
        let mut table = Table::new(&[
            ("Kernel", Align::Left),
            ("Calls", Align::Right),
            ("Total", Align::Right),
            ("Share", Align::Right),
            ("Mean", Align::Right),
            ("Max", Align::Right),
            ("Launched by", Align::Left),
        ]);
        for k in self.kernels.rows.iter().take(self.options.top) {
            table.row(vec![
                md(&cut(&k.name, NAME_CHARS)),
                k.calls().to_string(),
                time(k.total_ns),
                format!("{:.2} %", k.share * 100.0),
                time(k.stats.mean.round() as i64),
                time(k.stats.max),
                k.top_op
                    .as_ref()
                    .map_or_else(String::new, |o| md(&cut(&o.name, NAME_CHARS))),
            ]);
        }
        format!("#### Top kernels (by total time)\n\n{}", table.render())
    }

    fn steps_md(&self) -> String {
        if self.steps.steps.is_empty() {
            return String::new();
        }
        let mut table = Table::new(&[
            ("Step", Align::Left),
            ("CPU dur", Align::Right),
            ("GPU dur", Align::Right),
            ("Step dur", Align::Right),
            ("Kernel", Align::Right),
        ]);
        for s in &self.steps.steps {
            let mark = if s.incomplete { " (incomplete)" } else { "" };
            let kernel = s.breakdown.get(Category::Kernel);
            table.row(vec![
                md(&format!("{}{mark}", step_name(self.session.trace(), s.number))),
                time(s.cpu_dur_ns()),
                time(s.gpu_dur_ns()),
                time(s.dur_ns()),
                time(kernel),
            ]);
        }
        format!("#### Steps\n\n{}", table.render())
    }
}

/// Findings as a list, alert first (the session's order), with rule id and title.
fn findings_md(findings: &[crate::finding::Finding]) -> String {
    let mut out = "#### Findings\n\n".to_owned();
    if findings.is_empty() {
        out.push_str("No finding.\n");
    }
    for f in findings {
        let _ = writeln!(
            out,
            "- **{}** {}: {}",
            f.severity.as_str(),
            md(f.rule),
            md(&f.title)
        );
    }
    out
}
