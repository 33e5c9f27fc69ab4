//! A baseline / candidate comparison on the wire (the Compare tab).

use serde::{Deserialize, Serialize};

/// A baseline / candidate comparison (the comparison view): the wire form of the engine's
/// `Comparison` plus the findings diff. Deltas are `cand - base`; op and kernel values are per step
/// when `per_step`, else totals.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ComparisonData {
    /// Baseline file name.
    pub base: String,
    /// Candidate file name.
    pub cand: String,
    /// Host steps of the baseline.
    pub base_steps: u64,
    /// Host steps of the candidate.
    pub cand_steps: u64,
    /// Op and kernel values are per step (both traces have steps).
    pub per_step: bool,
    /// Op rows are matched by name + input shapes.
    pub by_shape: bool,
    /// The one-line verdict (`kinetoscope diff`'s).
    pub verdict: String,
    /// Summary rows in the CLI's order.
    pub summary: Vec<SummaryDelta>,
    /// Op diff rows, base order then rows only the candidate has.
    pub ops: Vec<OpDelta>,
    /// Kernel diff rows, same order rule.
    pub kernels: Vec<KernelDelta>,
    /// `nn.Module` diff rows by path, in tree order (empty without `nn.Module` frames).
    pub modules: Vec<ModuleDelta>,
    /// Cheatsheet findings by rule: gone, new, kept.
    pub findings: FindingsDiff,
}

/// One summary metric on both sides.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SummaryDelta {
    /// Stable key (`step_time_mean`, …; the CLI's `summary[].key`).
    pub key: String,
    /// Human label.
    pub label: String,
    /// `ns`, `pct` (0–100), `bytes` or `count`.
    pub unit: String,
    /// Baseline value (`None`: the trace lacks it).
    pub base: Option<f64>,
    /// Candidate value.
    pub cand: Option<f64>,
    /// `cand - base`.
    pub delta: Option<f64>,
    /// `(cand - base) / base`.
    pub rel_delta: Option<f64>,
}

/// Both sides of one compared column (0 on a side that lacks the row).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DeltaPair {
    /// Baseline value.
    pub base: f64,
    /// Candidate value.
    pub cand: f64,
}

/// One op diff row.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct OpDelta {
    /// Op name.
    pub name: String,
    /// Input shapes when matched by shape, else empty.
    pub input_shapes: String,
    /// A record_function / annotation row.
    pub is_annotation: bool,
    /// `appeared`, `disappeared`, `changed` or `same`.
    pub status: String,
    /// # of Calls.
    pub calls: DeltaPair,
    /// Self CPU, ns.
    pub self_cpu_ns: DeltaPair,
    /// Self CUDA, ns.
    pub self_device_ns: DeltaPair,
    /// CUDA total, ns.
    pub device_total_ns: DeltaPair,
}

/// One kernel diff row.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelDelta {
    /// Kernel name.
    pub name: String,
    /// `appeared`, `disappeared`, `changed` or `same`.
    pub status: String,
    /// Runs on tensor cores (by name).
    pub tensor_cores: bool,
    /// Calls.
    pub calls: DeltaPair,
    /// Total duration, ns.
    pub total_ns: DeltaPair,
    /// Mean duration per call, ns.
    pub mean_ns: DeltaPair,
}

/// One module diff row: a module path on both sides.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ModuleDelta {
    /// Module names from the root, joined by `/`.
    pub path: String,
    /// 0 for a root.
    pub depth: u16,
    /// `appeared`, `disappeared`, `changed` or `same`.
    pub status: String,
    /// Calls.
    pub calls: DeltaPair,
    /// Host time, ns.
    pub host_ns: DeltaPair,
    /// Device time launched under the calls (forward), ns.
    pub device_ns: DeltaPair,
    /// Device time of the backward ops tied to the calls, ns.
    pub backward_device_ns: DeltaPair,
}

/// Cheatsheet rules that fired on one side only or on both, each list in rule order.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FindingsDiff {
    /// Only in the candidate.
    pub new: Vec<FindingChange>,
    /// Only in the baseline.
    pub gone: Vec<FindingChange>,
    /// In both.
    pub kept: Vec<FindingChange>,
}

/// One rule of the findings diff with its titles on each side.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FindingChange {
    /// Rule id.
    pub rule: String,
    /// Highest severity on the sides where it fired.
    pub severity: String,
    /// The baseline's title (first finding of the rule), if it fired there.
    pub base_title: Option<String>,
    /// The candidate's title, if it fired there.
    pub cand_title: Option<String>,
}
