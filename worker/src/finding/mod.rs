//! Cheatsheet findings: rules that read a loaded trace the way an experienced person would
//! ("if you see this, it usually means that") and point at the exact slices (docs/findings.md).
//!
//! **Inputs and outputs.** [`detect`] takes the [`Inputs`] of one loaded trace (a session's analyses) and returns [`Finding`]s, at most one
//! per rule: a stable rule id ([`RULES`]), a [`Severity`], a one-line title that says how many
//! instances, `why` (the numbers the rule compared with its thresholds, so a reader can check
//! them), what the pattern usually means, what to try, and [`Evidence`] (slice ids capped at
//! [`thresholds::EVIDENCE_CAP`] with the true count, a time range in ns from the trace origin,
//! the lanes involved). The rule table with thresholds and blind spots is `docs/findings.md`.
//! Always over the whole trace: rules compare steps with each other, so a sub-range would
//! change what they mean.
//!
//! **Structure.** One file per family of rules (`table`, `cpu`, `gpu`, `tensor_cores`, `attention`,
//! `layout`, `sm_efficiency`, `dispatch`, `compile`, `collective`, `training`, `data`,
//! `health`), each exporting `rules(&Ctx, &mut Vec<Finding>)`. [`Ctx`] holds the shared
//! analyses, read once from the session (its op index and GPU profiles are the ones the page's
//! tables use, not rebuilt: steps, op table, kernel table, GPU metrics) plus the launch ->
//! activity links, and
//! name predicates become per-string masks ([`Ctx::mask`]) so rules scan the slice columns
//! without touching strings per slice. Every threshold is a constant in [`thresholds`].
//!
//! **Impact.** [`impact`] measures each finding's evidence on the critical path of the steps
//! (what fixing it could save at most), says it in `why`, and tells a warning under 2% of step
//! time as info.
//!
//! **Incomplete recordings.** On a truncated, sampled or cut trace, [`incomplete`] tells the
//! warnings measured over the missing events as info.
//!
//! **Invariants.** Output order is deterministic: severity (alert first), `health-data-loss`
//! first, then impact (most first), then rule id, then the order each rule emits (its own defined order). Evidence slice ids are **most telling
//! first** (each rule documents its order: longest, slowest, largest first, ties by id); the UI
//! selects `slices[0]` when a finding is clicked. Rules never panic on input: lookups past a
//! column end yield no finding.
//!
//! **Cost.** The shared analyses dominate (O(n log n) over slices); each rule is one or two
//! passes over the slice columns or over the kernels. No per-event heap objects.
//!
//! **Why** existing analyses are reused (op table, steps, GPU metrics, tensor-core names):
//! a finding's numbers must equal what the tables beside it show.
//!
//! References: docs/findings.md (the rule table); docs/definitions.md §3–5 (tb_plugin
//! recommendations, HTA, Nsight rules).

mod accumulation;
mod attention;
mod collective;
mod compile;
mod cpu;
mod data;
mod dispatch;
mod graphs;
mod gpu;
mod memory;
mod health;
mod incomplete;
mod layout;
pub mod impact;
pub mod remedy;
mod roofline;
mod sm_efficiency;
mod table;
mod tensor_cores;
mod training;
pub mod thresholds;

use crate::analysis::gpu::{GpuIndex, GpuMetrics};
use crate::analysis::kernel_context::KernelClasses;
use crate::analysis::kernels::KernelTable;
use crate::analysis::ops::OpTable;
use crate::analysis::steps::{StepSpan, Steps};
use crate::analysis::device::{device_properties, DeviceProps};
use crate::analysis::work::WorkIndex;
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, Trace, NONE};
use thresholds::EVIDENCE_CAP;

/// Titles and why lines format durations and shares as every engine text does.
pub(crate) use crate::text::{duration as dur, percent as pct};

/// How much a finding matters; ordered `Info < Warn < Alert`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; explains what the trace shows.
    Info,
    /// Likely costs time; worth trying the suggestion.
    Warn,
    /// Likely to fail or to cost a lot.
    Alert,
}

impl Severity {
    /// `"info"`, `"warn"` or `"alert"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Alert => "alert",
        }
    }

    /// The severity named by [`Severity::as_str`], if any.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Info, Self::Warn, Self::Alert].into_iter().find(|s| s.as_str() == name)
    }
}

/// What a finding points at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evidence {
    /// Slice ids, most telling first (distinct), at most [`EVIDENCE_CAP`].
    pub slices: Vec<u32>,
    /// How many slices the finding is about (may exceed `slices.len()`).
    pub total: u32,
    /// Time range `[start, end]` in ns from the trace origin, if the finding has one.
    pub range_ns: Option<(i64, i64)>,
    /// Lanes involved (ascending lane ids).
    pub lanes: Vec<u32>,
    /// Every slice, ascending, while the impact is computed ([`impact::apply`] empties it).
    pub all: Vec<u32>,
}

/// One cheatsheet finding.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// Stable rule id (see [`RULES`]).
    pub rule: &'static str,
    /// Severity.
    pub severity: Severity,
    /// One line with the measured numbers; says how many instances.
    pub title: String,
    /// Why we think so: the numbers the rule compared, with its thresholds.
    pub why: String,
    /// What the pattern usually means.
    pub meaning: String,
    /// What to try.
    pub try_this: String,
    /// The slices, time range and lanes it is about.
    pub evidence: Evidence,
    /// Its evidence's time on the critical path ([`impact`]); `None` without evidence slices.
    pub impact: Option<impact::Impact>,
    /// What its remedy saves, recomputed over the steps' graphs ([`remedy`]); `None` where the
    /// rule's remedy has no model.
    pub remedy: Option<remedy::Remedy>,
}

/// Every rule: (id, one-line description), ordered by id. Ids are stable API.
pub const RULES: &[(&str, &str)] = &[
    ("activation-peak", "activations hold at least half of the highest step's memory peak"),
    ("activity-buffer-request", "profiler overhead (Activity Buffer Request) on a GPU lane"),
    ("addmm-fusion", "linear layers run as aten::addmm (bias folded into the GEMM)"),
    ("allreduce-every-microstep", "gradient accumulation all-reducing after every micro-step's backward (DDP without no_sync)"),
    ("amp-opportunity", "tensor-core GPU, no tensor-core or reduced-precision kernels, matmul/conv ops present"),
    ("annotation-dispatch-gap", "record_function to its first op is slow in the first step only"),
    ("bmm-dispatch", "aten::matmul dispatched to aten::bmm (batched inputs)"),
    ("cold-start-step", "first step's CPU time much longer than the median of the others"),
    ("comm-heavy", "communication takes more than 10% of step time"),
    ("comm-not-overlapped", "NCCL kernels mostly not overlapped with compute kernels"),
    ("compile-cpu-tax", "torch.compile wrapper CPU time >= the GPU time it launches"),
    ("compiled-region", "torch.compile regions present"),
    ("compute-bound", "GPU busy for most of the step time"),
    ("copy-overhead", "layout and dtype copies (copy_, contiguous, repeat, to) take at least 10% of device time"),
    ("cuda-graph", "share of kernel time inside CUDA graphs, graph launches; or graphs captured, never launched"),
    ("dataloader-bound", "DataLoader takes more than 5% of step time"),
    ("device-query-loop", "thousands of device property / attribute queries (a query in a loop)"),
    ("dtod-before-gemm", "addmm/baddbmm bias copy (DtoD) right before its GEMM"),
    ("exposed-comm-tail", "communication running alone after the backward pass, before the optimizer (the exposed tail per step)"),
    ("fp32-gemm", "GEMM kernels whose name says FP32, without tensor cores (SIMT)"),
    ("gemm-alignment", "bf16/fp16 (fp8/int8) GEMMs whose M, N or K is not a multiple of 8 (16)"),
    ("gpu-idle", "GPU utilization below 50% or gaps of 500 ms and more"),
    ("grad-scaler-skips", "GradScaler skipped the optimizer (inf/NaN gradients) in a quarter of the steps or more"),
    ("h2d-not-overlapped", "host-to-device copies serialized with compute (on its stream or with the GPU idle), or many small ones per step"),
    ("health-clock-skew", "device activities start before their launch call (CPU/GPU clock offset)"),
    ("health-data-loss", "truncated file, or events the parse skipped or could not represent"),
    ("health-outside-window", "device activities outside the host's capture window"),
    ("health-stream-overlap", "device activities overlap on one stream (dependent launch or bad times)"),
    ("health-unlinked", "launch calls without device activity, or activities without launch call"),
    ("hidden-memcpy", "cudaMemcpy issued inside an op that is not a copy"),
    ("hotspot-op", "one op holds at least 40% of Self CUDA time"),
    ("kernel-time-variance", "same kernel and launch shape varies across steps"),
    ("launch-overhead", "most kernels are shorter than their launch calls"),
    ("lazy-init", "half a second or more of host time before the first op"),
    ("long-device-sync", "long cudaDeviceSynchronize while the GPU does little"),
    ("low-mfu", "steps use under 10% of the GPU's peak FLOP/s (MFU), with where the time went"),
    ("low-occupancy", "time-weighted achieved occupancy below 25%"),
    ("low-sm-efficiency", "kernels fill under half of the SMs while they run (SM efficiency well below utilization)"),
    ("many-small-calls", "ops called 1000+ times per step with a tiny average (outermost calls)"),
    ("memory-bound-gemm", "GEMM kernels below the ridge point: memory-bound by their shape"),
    ("memory-fragmentation", "reserved memory 1.5x allocated (and 1 GiB more) at the peak"),
    ("memory-leak", "allocated memory at step start grows at every step"),
    ("memory-near-limit", "peak device memory above 90% of the device's memory"),
    ("no-backward", "optimizer steps and no backward pass in the trace (an eval loop or no_grad profiled)"),
    ("occupancy-query", "cudaOccupancyMaxActiveBlocksPerMultiprocessor before kernel launches"),
    ("optimizer-state-peak", "optimizer state holds at least half of the highest step's memory peak"),
    ("overhead-bound", "GPU mostly idle, waiting for the host (host wait is most idle time)"),
    ("pageable-memcpy", "host-device copies from pageable (unpinned) memory"),
    ("partial-trace", "sampled or cut trace: correlation ids jump, activities without launches"),
    ("profiler-gap", "gap between kernels caused by the profiler's buffer request"),
    ("recompilation", "torch.compile graphs change across steps (recompiles)"),
    ("slow-step", "a step much slower than its neighbours, in the middle of the run"),
    ("small-allreduces", "50+ all-reduce kernels per step, median under 100 µs (latency-bound gradient communication)"),
    ("sync-heavy", "synchronizing calls take at least 20% of CPU time"),
    ("tf32-fp32", "TF32 tensor-core GEMMs on fp32 inputs, where bf16/fp16 would run twice as fast"),
    ("unfused-attention", "bmm -> softmax -> bmm attention chains and no fused attention kernel"),
];

/// The whole-trace analyses the rules read: a session's (`Session::findings` builds this), so the
/// rules depend on the analyses, not on who caches them.
pub struct Inputs<'t> {
    /// The trace.
    pub trace: &'t Trace,
    /// Its steps.
    pub steps: &'t Steps,
    /// The op table by name.
    pub ops: OpTable,
    /// The kernel table.
    pub kernels: KernelTable,
    /// GPU metrics over tb_plugin's window, per device.
    pub gpus: Vec<GpuMetrics>,
    /// Per-device kernel profiles for arbitrary windows.
    pub gpu_index: &'t GpuIndex,
    /// FLOPs and bytes per kernel, the GPU's peaks.
    pub work: &'t WorkIndex,
    /// Every kernel name's class.
    pub classes: &'t KernelClasses,
}

/// Analyses shared by the rules, computed once per [`detect`].
pub(crate) struct Ctx<'t> {
    /// The trace.
    pub trace: &'t Trace,
    /// Steps over the whole trace.
    pub steps: Steps,
    /// The op table by name, whole trace.
    pub ops: OpTable,
    /// The kernel table, whole trace.
    pub kernels: KernelTable,
    /// GPU metrics over tb_plugin's window, per device.
    pub gpus: Vec<GpuMetrics>,
    /// Per-device kernel profiles for arbitrary windows.
    pub gpu_index: &'t GpuIndex,
    /// Device activity slice ids, ascending.
    pub activities: Vec<u32>,
    /// Launch call -> (its first device activity, total device ns it launched).
    launched: FxHashMap<u32, (u32, i64)>,
    /// FLOPs and bytes per kernel, the GPU's peaks.
    pub work: &'t WorkIndex,
    /// Every kernel name's class (name table, then launching op).
    pub classes: &'t KernelClasses,
    /// How the recording misses device work, if it does (`partial-trace`'s conditions or a
    /// truncated file, computed once): idle time measured over it says nothing about the host, so `gpu-idle`
    /// and `overhead-bound` stay silent.
    partial: Option<health::Partial>,
}

impl<'t> Ctx<'t> {
    fn new(inputs: Inputs<'t>) -> Self {
        let Inputs { trace, steps, ops, kernels, gpus, gpu_index, work, classes } = inputs;
        let s = &trace.slices;
        let activities: Vec<u32> = (0..s.len() as u32)
            .filter(|&i| trace.class(s.cat[i as usize]).is_device_activity())
            .collect();
        let mut launched: FxHashMap<u32, (u32, i64)> = FxHashMap::default();
        for &a in &activities {
            if let Some(l) = launch_of(trace, a) {
                launched.entry(l).or_insert((a, 0)).1 += s.dur_ns[a as usize];
            }
        }
        Self {
            trace,
            steps: steps.clone(),
            ops,
            kernels,
            gpus,
            gpu_index,
            activities,
            launched,
            work,
            classes,
            partial: None,
        }
    }

    /// Start of the last device activity, ns (`i64::MIN` without any): a call ending at or
    /// after it is followed by no device work (the capture's final synchronize).
    pub fn last_activity_start_ns(&self) -> i64 {
        let s = &self.trace.slices;
        self.activities.iter().map(|&a| s.start_ns[a as usize]).max().unwrap_or(i64::MIN)
    }

    /// A mask over string ids: `mask[id]` is `pred(string)`. Classify each string once, then
    /// test slices by `mask[name]` (columnar, no string work per slice).
    pub fn mask(&self, pred: impl Fn(&str) -> bool) -> Vec<bool> {
        let strings = &self.trace.strings;
        (0..strings.len() as u32)
            .map(|i| pred(&strings.get(crate::model::StrId(i))))
            .collect()
    }

    /// Slice ids whose name satisfies `mask` and whose category class is `class` (any class
    /// when `None`), ascending.
    pub fn slices_named(&self, mask: &[bool], class: Option<CatClass>) -> Vec<u32> {
        let s = &self.trace.slices;
        (0..s.len())
            .filter(|&i| mask.get(s.name[i].0 as usize).copied().unwrap_or(false))
            .filter(|&i| class.is_none_or(|c| self.trace.class(s.cat[i]) == c))
            .map(|i| i as u32)
            .collect()
    }

    /// The slice's name.
    pub fn name(&self, i: u32) -> std::borrow::Cow<'t, str> {
        let s = &self.trace.slices;
        match s.name.get(i as usize) {
            Some(&n) => self.trace.strings.get(n),
            None => std::borrow::Cow::Borrowed(""),
        }
    }

    /// Complete steps (the incomplete tail left out, as in the statistics).
    pub fn complete_steps(&self) -> Vec<&StepSpan> {
        self.steps.steps.iter().filter(|s| !s.incomplete).collect()
    }

    /// Largest GPU busy time (over devices) inside `[w0, w1)`, ns.
    pub fn busy_ns(&self, window: (i64, i64)) -> i64 {
        self.gpu_index
            .metrics(window)
            .iter()
            .map(|m| m.busy_ns)
            .max()
            .unwrap_or(0)
    }

    /// Evidence over `ids`, given most telling first (duplicates allowed): the first
    /// [`EVIDENCE_CAP`] distinct ids are kept in that order; count, range and lanes cover all.
    pub fn evidence(&self, ids: impl IntoIterator<Item = u32>) -> Evidence {
        let s = &self.trace.slices;
        let given: Vec<u32> = ids
            .into_iter()
            .filter(|&i| (i as usize) < s.len())
            .collect();
        let mut all = given.clone();
        all.sort_unstable();
        all.dedup();
        let range = all
            .iter()
            .map(|&i| (s.start_ns[i as usize], s.end_ns(i as usize)))
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
        let mut lanes: Vec<u32> = all.iter().map(|&i| s.lane[i as usize].0).collect();
        lanes.sort_unstable();
        lanes.dedup();
        let mut kept: Vec<u32> = Vec::with_capacity(all.len().min(EVIDENCE_CAP));
        let mut seen: FxHashMap<u32, ()> = FxHashMap::default();
        for i in given {
            if kept.len() == EVIDENCE_CAP {
                break;
            }
            if seen.insert(i, ()).is_none() {
                kept.push(i);
            }
        }
        Evidence {
            slices: kept,
            total: u32::try_from(all.len()).unwrap_or(u32::MAX),
            range_ns: range,
            lanes,
            all,
        }
    }

    /// The first device activity launched by launch call `call`, if any.
    pub fn launched(&self, call: u32) -> Option<u32> {
        self.launched.get(&call).map(|l| l.0)
    }

    /// Index in `steps` of the step that launched device activity `a`
    /// ([`crate::analysis::steps::launching_step`]).
    pub fn launch_step(&self, steps: &[&StepSpan], a: u32) -> Option<usize> {
        crate::analysis::steps::launching_step(self.trace, a as usize, steps)
    }

    /// Total device time launched by launch call `call`, ns (0 when none).
    pub fn launched_ns(&self, call: u32) -> i64 {
        self.launched.get(&call).map_or(0, |l| l.1)
    }
}

/// Builds a finding (the rules' one constructor, so every field is always filled).
pub(crate) fn finding(
    rule: &'static str,
    severity: Severity,
    title: String,
    why: String,
    meaning: &str,
    try_this: &str,
    evidence: Evidence,
) -> Finding {
    debug_assert!(RULES.iter().any(|(id, _)| *id == rule), "unknown rule {rule}");
    Finding {
        rule,
        severity,
        title,
        why,
        meaning: meaning.to_string(),
        try_this: try_this.to_string(),
        evidence,
        impact: None,
        remedy: None,
    }
}

/// Every finding of every rule on `trace`: severity (alert first), then rule id, then the
/// rule's own order. Deterministic.
pub fn detect(inputs: Inputs<'_>) -> Vec<Finding> {
    use crate::analysis::critical_path::{analyze_with, Edit};
    let mut ctx = Ctx::new(inputs);
    ctx.partial = health::partial(&ctx);
    let mut out = Vec::new();
    table::rules(&ctx, &mut out);
    cpu::rules(&ctx, &mut out);
    gpu::rules(&ctx, &mut out);
    tensor_cores::rules(&ctx, &mut out);
    attention::rules(&ctx, &mut out);
    layout::rules(&ctx, &mut out);
    sm_efficiency::rules(&ctx, &mut out);
    dispatch::rules(&ctx, &mut out);
    compile::rules(&ctx, &mut out);
    collective::rules(&ctx, &mut out);
    accumulation::rules(&ctx, &mut out);
    training::rules(&ctx, &mut out);
    // The memory series, for the data and memory rules, dropped after them: a session copy
    // would hold every `[memory]` event past the load.
    let series = crate::analysis::memory::analyze(ctx.trace, None, 0);
    data::rules(&ctx, &series, &mut out);
    health::rules(&ctx, &mut out);
    graphs::rules(&ctx, &mut out);
    roofline::rules(&ctx, &mut out);
    memory::rules(&ctx, &series, &mut out);
    drop(series);
    debug_assert!(
        out.iter().enumerate().all(|(k, f)| out[..k].iter().all(|g| g.rule != f.rule)),
        "one finding per rule"
    );
    // The paths (and the remedies' what-ifs, from the same graphs) are followed here and
    // dropped, not cached in the session: their segments are ~8% of the JSON's size on a 1 GB
    // trace, and the load's memory budget has no room for the step graphs.
    let models: Vec<(usize, &'static str, Vec<Edit>)> =
        out.iter().enumerate().filter_map(|(k, f)| remedy::model(ctx.trace, f).map(|(what, edits)| (k, what, edits))).collect();
    let sets: Vec<Vec<Edit>> = models.iter().map(|(_, _, e)| e.clone()).collect();
    let (paths, after) = analyze_with(ctx.trace, &ctx.steps, &sets);
    for ((k, what, edits), after) in models.into_iter().zip(after) {
        if let Some(f) = out.get_mut(k) {
            f.remedy = Some(remedy::saved(what, &edits, &paths, &after));
        }
    }
    impact::apply(ctx.trace, &paths, &mut out);
    incomplete::demote(ctx.partial.as_ref(), &mut out);
    // By severity, what the parse lost first (every other finding is read in its light), then
    // by what fixing it would save (findings without evidence on a path last), then rule id;
    // stable, so within a rule the emission order stays.
    let saved = |f: &Finding| f.impact.map_or(-1, |i| i.ns);
    let lost = |f: &Finding| f.rule == "health-data-loss";
    out.sort_by(|a, b| {
        b.severity.cmp(&a.severity).then(lost(b).cmp(&lost(a))).then(saved(b).cmp(&saved(a))).then(a.rule.cmp(b.rule))
    });
    out
}

/// The launch call of device activity `i`, if it is linked to one.
pub(crate) fn launch_of(trace: &Trace, i: u32) -> Option<u32> {
    let l = *trace.slices.launch.get(i as usize)?;
    (l != NONE && (l as usize) < trace.slices.len()).then_some(l)
}

impl Ctx<'_> {
    /// The devices listed in `deviceProperties` (empty when absent or unreadable).
    pub fn devices(&self) -> Vec<DeviceProps> {
        device_properties(self.trace)
    }

    /// The highest compute capability major among the listed devices, if any is listed.
    pub fn max_compute_major(&self) -> Option<i64> {
        self.devices().iter().filter_map(|d| d.major).max()
    }
}
