//! Compare two traces: a baseline and a candidate (before / after one change); docs/cli.md#diff.
//!
//! **What.** Runs the per-trace analyses on both traces ([`TraceFigures`]) and diffs them into
//! one plain-data [`Comparison`]: summary rows with deltas ([`summary`]), a one-line verdict
//! ([`verdict`]), the op table diff ([`ops`]), the kernel table diff ([`kernels`]) and the
//! module tree diff ([`modules`]). Nothing is re-implemented here: every number is one the
//! per-trace analyses (and `kinetoscope report`) already give, so a diff can be checked
//! against the two reports.
//!
//! **Inputs and outputs.** Two loaded [`Trace`]s and [`CompareOptions`]. Times are f64 ns
//! (per-step values are not integers), rates are percent 0–100, memory is bytes. Every row
//! holds both sides' values; deltas are `candidate - base`, ratios `candidate / base`
//! (`None` when the base is 0 or missing).
//!
//! **Per-step normalisation.** When both traces have `ProfilerStep#N` annotations, op and
//! kernel table values (calls, times; not the per-call mean) are divided by each trace's
//! number of host steps ([`Comparison::per_step`] says so, with both step counts): a trace of
//! 5 steps and one of 3 compare fairly. Tables are the whole-trace tables `report` prints, so
//! a diff row is `report`'s row / steps. Otherwise values are totals.
//!
//! **Order.** Rows come in the base table's order (ops: first occurrence; kernels: total time
//! descending), then rows only the candidate has, in its order. [`sort::sort_rows`] reorders
//! them by a [`SortKey`]; ties fall back to name, so output is deterministic.
//!
//! **Cost.** Both sessions' analyses (op index, GPU profiles and memory are the sessions'
//! cached ones; steps and kernels are computed here), then O(rows) hashing to match rows by key.
//!
//! **Why** one struct of plain rows: the CLI renders it as text or JSON (`report::diff`), and
//! `answer::comparison` turns it and both sides' findings into the Compare tab's wire form.

pub mod kernels;
pub mod modules;
pub mod ops;
pub mod same_run;
pub mod sort;
pub mod summary;
pub mod verdict;

pub use kernels::{KernelColumn, KernelDiffRow};
pub use modules::ModuleDiffRow;
pub use ops::{OpColumn, OpDiffRow};
pub use sort::{headline_column, order, parse_sort, sort_rows, DiffRow, SortKey, SortKeys};
pub use summary::{Metric, SummaryRow, Unit};
pub use same_run::SameRun;
pub use verdict::{Bound, BoundKind, Verdict};

use crate::analysis::breakdown::{Breakdown, Roles};
use crate::analysis::gpu::{self, GpuMetrics};
use crate::analysis::kernels::KernelTable;
use crate::analysis::memory::Memory;
use crate::analysis::ops::{OpOptions, OpTable};
use crate::analysis::stats::Summary;
use crate::analysis::steps;
use crate::run::rank::RankIdentity;
use crate::session::Session;

/// What to compare.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompareOptions {
    /// Match op rows by name + input shapes (`key_averages(group_by_input_shape=True)`).
    pub by_shape: bool,
}

/// Per-trace numbers a comparison is made of (each from the existing analyses).
#[derive(Clone, Debug)]
pub struct TraceFigures {
    /// Host `ProfilerStep#N` annotations (incomplete tail included), the per-step divisor.
    pub steps: usize,
    /// Step duration statistics over complete steps, ns; `None` without complete steps.
    pub step_stats: Option<Summary>,
    /// Whole-trace op table (by name, or by name + shapes).
    pub ops: OpTable,
    /// Whole-trace kernel table.
    pub kernels: KernelTable,
    /// GPU metrics per device over the step window.
    pub gpus: Vec<GpuMetrics>,
    /// Largest `peak_allocated` over GPU devices (all devices when none is a GPU), bytes.
    pub peak_memory_bytes: Option<i64>,
    /// Time breakdown of the metrics window (the steps, or the whole active span).
    pub breakdown: Breakdown,
    /// Rank, world size and backend from `distributedInfo`, when it names a rank.
    pub rank: Option<RankIdentity>,
    /// The host steps' numbers (`ProfilerStep#N`), in order.
    pub step_numbers: Vec<u64>,
    /// The `nn.Module` tree by path (empty without `nn.Module` frames).
    pub modules: Vec<modules::ModulePath>,
}

impl TraceFigures {
    /// The analyses a comparison needs, read from `session` (its op index, GPU profiles and
    /// memory series are shared with the page's tables).
    pub fn of(session: &Session, opts: &CompareOptions) -> Self {
        let trace = session.trace();
        let roles = Roles::new(trace);
        let steps = steps::analyze_with(trace, &roles, None);
        let ops = session.op_table(&OpOptions {
            by_shape: opts.by_shape,
            range: None,
        });
        let gpus = session.gpus(None);
        let (w0, w1) = gpus
            .first()
            .map_or_else(|| gpu::metrics_window(trace), |g| g.window);
        Self {
            steps: steps.steps.len(),
            step_numbers: steps.steps.iter().map(|s| s.number).collect(),
            rank: same_run::distributed_info(trace),
            step_stats: steps.stats.map(|s| s.duration),
            ops,
            kernels: session.kernels(None),
            gpus,
            peak_memory_bytes: peak_memory(session.memory()),
            breakdown: roles.breakdown(w0, w1),
            modules: modules::paths(trace, &crate::analysis::modules::analyze(trace)),
        }
    }
}

/// Largest allocated peak over GPU devices, or over all devices when none is a GPU.
fn peak_memory(mem: &Memory) -> Option<i64> {
    // c10::DeviceType: 0 CPU, 2 MKLDNN, 5 IDEEP are host memory.
    let is_host = |t: i64| matches!(t, 0 | 2 | 5);
    let gpu = mem
        .devices
        .iter()
        .filter(|d| !is_host(d.device_type))
        .map(|d| d.peak_allocated)
        .max();
    gpu.or_else(|| mem.devices.iter().map(|d| d.peak_allocated).max())
}

/// Base and candidate value of one column of a diff row (0 on the side that lacks the row).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pair {
    /// Baseline value.
    pub base: f64,
    /// Candidate value.
    pub cand: f64,
}

impl Pair {
    /// `cand - base`.
    pub fn delta(self) -> f64 {
        self.cand - self.base
    }

    /// `cand / base`; `None` when the base is 0.
    pub fn ratio(self) -> Option<f64> {
        (self.base != 0.0).then(|| self.cand / self.base)
    }
}

/// How a row changed between the two traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// Only in the candidate.
    Appeared,
    /// Only in the baseline.
    Disappeared,
    /// In both, some value differs.
    Changed,
    /// In both, every value equal.
    Same,
}

impl Status {
    /// `appeared`, `disappeared`, `changed`, `same` (JSON and text).
    pub fn key(self) -> &'static str {
        match self {
            Self::Appeared => "appeared",
            Self::Disappeared => "disappeared",
            Self::Changed => "changed",
            Self::Same => "same",
        }
    }

    /// The status of a row present in `base` / `cand` with column values `pairs`.
    pub(crate) fn of(in_base: bool, in_cand: bool, pairs: &[Pair]) -> Self {
        match (in_base, in_cand) {
            (false, _) => Self::Appeared,
            (true, false) => Self::Disappeared,
            _ if pairs.iter().all(|p| p.base == p.cand) => Self::Same,
            _ => Self::Changed,
        }
    }
}

/// A baseline / candidate comparison; see the module docs.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// Op rows are matched by name + input shapes.
    pub by_shape: bool,
    /// Op and kernel values are per step (both traces have steps), else totals.
    pub per_step: bool,
    /// Host steps of the baseline.
    pub base_steps: usize,
    /// Host steps of the candidate.
    pub cand_steps: usize,
    /// Summary rows, in [`summary::METRICS`] order.
    pub summary: Vec<SummaryRow>,
    /// The one-line verdict.
    pub verdict: Verdict,
    /// Op table diff (see the module docs for the order).
    pub ops: Vec<OpDiffRow>,
    /// Kernel table diff (see the module docs for the order).
    pub kernels: Vec<KernelDiffRow>,
    /// Module tree diff, in tree order ([`modules`]).
    pub modules: Vec<ModuleDiffRow>,
}

/// Compares `base` with `cand` (runs [`TraceFigures::of`] on both).
pub fn compare(base: &Session, cand: &Session, opts: &CompareOptions) -> Comparison {
    compare_figures(
        &TraceFigures::of(base, opts),
        &TraceFigures::of(cand, opts),
        opts,
    )
}

/// Compares figures already computed (`opts` must be the ones they were computed with).
pub fn compare_figures(
    base: &TraceFigures,
    cand: &TraceFigures,
    opts: &CompareOptions,
) -> Comparison {
    let per_step = base.steps > 0 && cand.steps > 0;
    let divisor = |f: &TraceFigures| if per_step { f.steps as f64 } else { 1.0 };
    let (bd, cd) = (divisor(base), divisor(cand));
    let ops = ops::diff(&base.ops, &cand.ops, bd, cd);
    let kernels = kernels::diff(&base.kernels, &cand.kernels, bd, cd);
    let summary = summary::rows(base, cand);
    let verdict = verdict::verdict(base, cand, &summary, &ops, &kernels, per_step);
    Comparison {
        by_shape: opts.by_shape,
        per_step,
        base_steps: base.steps,
        cand_steps: cand.steps,
        summary,
        verdict,
        ops,
        kernels,
        modules: modules::diff(&base.modules, &cand.modules, bd, cd),
    }
}
