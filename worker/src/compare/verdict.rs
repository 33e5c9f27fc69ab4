//! The verdict: one deterministic line saying what changed, in plain words first, e.g.
//! `Candidate faster by 38.0%: step time -38.0% (12.100ms -> 7.500ms); GPU-bound (82% GPU) ->
//! GPU-bound (64% GPU); largest op change: aten::addmm Self CUDA -1.200ms/step; largest kernel
//! change: volta_sgemm_128x64_nn disappeared (-1.000ms/step)`.
//!
//! **Rules.**
//! - Plain words: `Candidate faster / slower by X%` (step time), `Candidate uses less / more
//!   GPU (CPU) time by X%` (the totals), `About the same` under [`SAME_REL`]. Two ranks of one
//!   run ([`super::same_run`]) are no change anyone made: the line says they are ranks, that
//!   their difference is load imbalance and waiting in collectives, and marks a largest change
//!   in a collective as waiting.
//! - Headline: the mean step time when both traces have complete steps; else Self CUDA time
//!   total when either has device time; else Self CPU time total.
//! - Bound: the largest part of the metrics window's breakdown (the steps, docs/definitions.md §3),
//!   grouping Kernel + Memcpy + Memset as GPU and Runtime + CPU Exec as CPU, next to
//!   Communication and DataLoader (ties: that order). Other (nothing running) is no bound;
//!   a window where none of the four ran is `idle`. The share is that part / the window.
//! - Largest op change: the op row (not `ProfilerStep*`) with the largest |delta| of Self
//!   CUDA when either trace has device time, else of Self CPU; largest kernel change: the
//!   kernel row with the largest |delta| of total time. Ties: name order. Rows with no change
//!   are not mentioned.
//!
//! Wording and number formats are fixed (times as `report` prints them, percentages with one
//! decimal) so tests and users can match the line.

use super::kernels::KernelDiffRow;
use super::ops::{OpColumn, OpDiffRow};
use super::sort::{sort_rows, DiffRow, SortKey};
use super::summary::{Metric, SummaryRow};
use super::same_run::{same_run, SameRun};
use super::{KernelColumn, Status, TraceFigures};
use crate::analysis::breakdown::is_communication_kernel;
use crate::analysis::kernel_context::is_communication_op;
use crate::analysis::breakdown::{Breakdown, Category};
use crate::text::pytorch_time as time;

/// What most of a trace's window is spent on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoundKind {
    /// Kernels, copies and sets on the device.
    Gpu,
    /// Collective communication.
    Communication,
    /// Data loading.
    DataLoader,
    /// Host ops and launch calls.
    Cpu,
    /// Nothing ran in the window (or it is empty).
    Idle,
}

impl BoundKind {
    /// `GPU-bound`, `communication-bound`, `dataloader-bound`, `CPU-bound`, `idle`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Gpu => "GPU-bound",
            Self::Communication => "communication-bound",
            Self::DataLoader => "dataloader-bound",
            Self::Cpu => "CPU-bound",
            Self::Idle => "idle",
        }
    }

    /// Short name of the part (`GPU`, `communication`, `dataloader`, `CPU`, `idle`).
    fn part(self) -> &'static str {
        match self {
            Self::Gpu => "GPU",
            Self::Communication => "communication",
            Self::DataLoader => "dataloader",
            Self::Cpu => "CPU",
            Self::Idle => "idle",
        }
    }
}

/// The bound of one trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    /// What the window is mostly spent on.
    pub kind: BoundKind,
    /// That part's share of the window, 0..=1 (0 when idle).
    pub share: f64,
}

impl Bound {
    /// The bound of a breakdown (see the module rules).
    pub fn of(b: &Breakdown) -> Self {
        use Category as C;
        let parts = [
            (
                BoundKind::Gpu,
                b.get(C::Kernel) + b.get(C::Memcpy) + b.get(C::Memset),
            ),
            (BoundKind::Communication, b.get(C::Communication)),
            (BoundKind::DataLoader, b.get(C::DataLoader)),
            (BoundKind::Cpu, b.get(C::Runtime) + b.get(C::CpuExec)),
        ];
        let total = b.total();
        // The first of the largest parts: `max_by_key` keeps the last of equals, so reverse.
        match parts.iter().rev().max_by_key(|p| p.1) {
            Some(&(kind, ns)) if ns > 0 && total > 0 => Self {
                kind,
                share: ns as f64 / total as f64,
            },
            _ => Self {
                kind: BoundKind::Idle,
                share: 0.0,
            },
        }
    }

    /// `GPU-bound (82% GPU)` or `idle`.
    pub fn text(self) -> String {
        match self.kind {
            BoundKind::Idle => "idle".to_owned(),
            k => format!("{} ({:.0}% {})", k.label(), self.share * 100.0, k.part()),
        }
    }
}

/// The verdict of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// The headline metric (see the module rules).
    pub metric: Metric,
    /// Its baseline value.
    pub base: Option<f64>,
    /// Its candidate value.
    pub cand: Option<f64>,
    /// Its relative change, `(cand - base) / base`.
    pub rel_delta: Option<f64>,
    /// Bound of the baseline.
    pub base_bound: Bound,
    /// Bound of the candidate.
    pub cand_bound: Bound,
    /// The two traces are ranks of one run, if they are.
    pub same_run: Option<SameRun>,
    /// The line.
    pub text: String,
}

/// The verdict of two traces' figures and their diffs.
pub fn verdict(
    base: &TraceFigures,
    cand: &TraceFigures,
    summary: &[SummaryRow],
    ops: &[OpDiffRow],
    kernels: &[KernelDiffRow],
    per_step: bool,
) -> Verdict {
    let device = base.ops.self_device_total_ns > 0 || cand.ops.self_device_total_ns > 0;
    let metric = if base.step_stats.is_some() && cand.step_stats.is_some() {
        Metric::StepMean
    } else if device {
        Metric::SelfDeviceTotal
    } else {
        Metric::SelfCpuTotal
    };
    let row = summary
        .iter()
        .find(|r| r.metric == metric)
        .copied()
        .unwrap_or_else(|| SummaryRow::new(metric, metric.value(base), metric.value(cand)));
    let (base_bound, cand_bound) = (Bound::of(&base.breakdown), Bound::of(&cand.breakdown));
    let unit = if per_step { "/step" } else { "" };
    let run = same_run(base, cand);
    // A collective that changed between ranks of one run is waiting, not work.
    let waiting = |communication: bool| if run.is_some() && communication { " (waiting in a collective)" } else { "" };
    let mut parts = match &run {
        // Its own part: the text report cuts a part longer than its width.
        Some(run) => vec![ranks_of_one_run(run), headline(&row)],
        None => vec![format!("{}: {}", plain(&row), headline(&row))],
    };
    parts.push(format!("{} -> {}", base_bound.text(), cand_bound.text()));
    let column = if device {
        OpColumn::SelfDevice
    } else {
        OpColumn::SelfCpu
    };
    let op_rows: Vec<OpDiffRow> = ops
        .iter()
        .filter(|r| r.name != "ProfilerStep*")
        .cloned()
        .collect();
    if let Some(r) = largest(op_rows, SortKey::AbsDelta(column)) {
        let what = change(r.status, r.pair(column).delta(), unit);
        parts.push(format!(
            "largest op change: {} {} {what}{}",
            r.name,
            column.label(),
            waiting(is_communication_op(&r.name))
        ));
    }
    if let Some(r) = largest(kernels.to_vec(), SortKey::AbsDelta(KernelColumn::Total)) {
        let d = r.total_ns.delta();
        let what = match r.status {
            Status::Appeared | Status::Disappeared => {
                format!("{} ({}{unit})", r.status.key(), signed_time(d))
            }
            _ => change(r.status, d, unit),
        };
        parts.push(format!("largest kernel change: {} {what}{}", r.name, waiting(is_communication_kernel(&r.name))));
    }
    Verdict {
        metric,
        base: row.base,
        cand: row.cand,
        rel_delta: row.rel_delta,
        base_bound,
        cand_bound,
        same_run: run,
        text: parts.join("; "),
    }
}

/// The row first under `key` (descending), if it changed at all.
fn largest<R: DiffRow>(mut rows: Vec<R>, key: SortKey<R::Column>) -> Option<R> {
    sort_rows(&mut rows, key, true);
    let first = rows.into_iter().next()?;
    match key {
        SortKey::AbsDelta(c) | SortKey::Delta(c) if first.pair(c).delta() != 0.0 => Some(first),
        _ => None,
    }
}

/// `-1.200ms/step`, or `-1.200ms/step (appeared)` for rows on one side only.
fn change(status: Status, delta_ns: f64, unit: &str) -> String {
    match status {
        Status::Appeared | Status::Disappeared => {
            format!("{}{unit} ({})", signed_time(delta_ns), status.key())
        }
        _ => format!("{}{unit}", signed_time(delta_ns)),
    }
}

/// Below this relative change (1%, ours) the headline metric is `About the same`.
pub const SAME_REL: f64 = 0.01;

/// The verdict on two ranks of one run, in plain words (module rules).
fn ranks_of_one_run(run: &SameRun) -> String {
    format!("Two ranks of one run ({}): a difference is load imbalance and waiting, not a speedup", run.text())
}

/// The verdict in plain words (module rules).
fn plain(row: &SummaryRow) -> String {
    let Some(rel) = row.rel_delta else {
        return "Not comparable (the headline metric is missing on one side)".to_owned();
    };
    if rel.abs() < SAME_REL {
        return "About the same".to_owned();
    }
    let by = format!("by {:.1}%", rel.abs() * 100.0);
    let less = rel < 0.0;
    match row.metric {
        Metric::StepMean => format!("Candidate {} {by}", if less { "faster" } else { "slower" }),
        m => format!(
            "Candidate uses {} {} time {by}",
            if less { "less" } else { "more" },
            if m == Metric::SelfDeviceTotal { "GPU" } else { "CPU" }
        ),
    }
}

/// `step time -38.0% (12.100ms -> 7.500ms)`; `n/a` parts when a side lacks the value.
fn headline(row: &SummaryRow) -> String {
    let name = match row.metric {
        Metric::StepMean => "step time",
        Metric::SelfDeviceTotal => "Self CUDA time total",
        _ => "Self CPU time total",
    };
    let rel = row
        .rel_delta
        .map_or_else(|| "n/a".to_owned(), |r| format!("{:+.1}%", r * 100.0));
    let t = |v: Option<f64>| v.map_or_else(|| "n/a".to_owned(), |v| time(v.round() as i64));
    format!("{name} {rel} ({} -> {})", t(row.base), t(row.cand))
}

/// A time delta with its sign: `+1.234ms`, `-12.000us`, `+0.000us`.
pub fn signed_time(delta_ns: f64) -> String {
    let ns = delta_ns.round() as i64;
    if ns < 0 {
        time(ns)
    } else {
        format!("+{}", time(ns))
    }
}
