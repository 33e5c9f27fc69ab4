//! Memory categories from the trace alone: what each allocation was for, in PyTorch's words
//! (`torch.profiler._memory_profiler.Category`).
//!
//! **Inputs.** [`Lifetimes`] (allocation time, free time) and the slices around each
//! allocation on its thread: the innermost `cpu_op` that made it, its outermost `cpu_op`
//! (the top-level op), an enclosing `Optimizer.step#...` annotation, and the backward passes
//! (runs of top-level `autograd::engine::evaluate_function: ...` ops).
//!
//! **Output.** One [`Category`] per allocation (same index as [`Lifetimes`]).
//!
//! **Rules**, first match wins (docs/definitions.md, "Memory categories"):
//! 1. made in no op (Python scalars wrapped as tensors): input;
//! 2. freed before its innermost op ends (scratch with no tensor identity): unknown;
//! 3. freed before its top-level op ends: temporary;
//! 4. under `Optimizer.step`: optimizer state when it outlives the step, else temporary;
//! 5. under a backward op: gradient when it outlives its backward pass, else autograd detail;
//! 6. otherwise (forward, kept past its op): activation.
//!
//! Parameters are never inferred: they are allocated before the capture in every trace we
//! know, and what PyTorch tells apart by tensor identity (a gradient handed to the optimizer
//! vs a saved activation) the trace only shows as a lifetime.
//!
//! **Cost.** Per allocation one binary search and a walk up the parent chain (O(depth));
//! one pass over the slices for the backward passes. One byte per allocation.

use super::lifetime::{Lifetimes, NEVER};
use super::enclosing_op_at;
use crate::model::{CatClass, LaneId, Trace, NONE};

/// What an allocation holds; PyTorch's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// Model parameters (never inferred from a trace: see the module docs).
    Parameter,
    /// Optimizer state (Adam's moments, momentum buffers).
    OptimizerState,
    /// Parameter gradients.
    Gradient,
    /// Forward results kept past their op (saved for backward).
    Activation,
    /// Freed within the op that made it.
    Temporary,
    /// Inputs (here: tensors made outside any op).
    Input,
    /// Intermediate gradients and buffers of the backward pass.
    AutogradDetail,
    /// No tensor identity (allocator scratch) or no rule applies.
    Unknown,
}

impl Category {
    /// Every category, in the order reports list them.
    pub const ALL: [Self; 8] = [
        Self::Parameter,
        Self::OptimizerState,
        Self::Gradient,
        Self::Activation,
        Self::Temporary,
        Self::Input,
        Self::AutogradDetail,
        Self::Unknown,
    ];

    /// `parameter`, `optimizer_state`, ... (stable JSON names).
    pub fn name(self) -> &'static str {
        match self {
            Self::Parameter => "parameter",
            Self::OptimizerState => "optimizer_state",
            Self::Gradient => "gradient",
            Self::Activation => "activation",
            Self::Temporary => "temporary",
            Self::Input => "input",
            Self::AutogradDetail => "autograd_detail",
            Self::Unknown => "unknown",
        }
    }

    /// Index in [`Category::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The slices that tell what an allocation is for.
struct Context {
    /// Innermost `cpu_op` containing the allocation, or `NONE`.
    inner: u32,
    /// Outermost `cpu_op` containing it, or `NONE`.
    top: u32,
    /// Enclosing `Optimizer.step#` annotation, or `NONE`.
    optimizer: u32,
}

/// The category of every allocation of `lt` (same order).
pub fn categorize(trace: &Trace, lt: &Lifetimes) -> Vec<Category> {
    let passes = backward_passes(trace);
    let ins = &trace.instants;
    let s = &trace.slices;
    (0..lt.len())
        .map(|i| {
            let (ts, freed) = (lt.ts_ns[i], lt.freed_ns[i]);
            let lane = ins.lane.get(lt.instant[i] as usize).copied().unwrap_or(LaneId(NONE));
            let c = context(trace, lane, ts);
            let end = |slice: u32| s.end_ns(slice as usize);
            if c.inner == NONE {
                Category::Input
            } else if freed <= end(c.inner) {
                Category::Unknown
            } else if freed <= end(c.top) {
                Category::Temporary
            } else if c.optimizer != NONE {
                if freed > end(c.optimizer) {
                    Category::OptimizerState
                } else {
                    Category::Temporary
                }
            } else if is_backward(trace, c.top) {
                let pass_end = pass_end(&passes, ts);
                if freed == NEVER || freed > pass_end {
                    Category::Gradient
                } else {
                    Category::AutogradDetail
                }
            } else {
                Category::Activation
            }
        })
        .collect()
}

/// The training phase at time `ts` on `lane`, by the same context the categories read:
/// `optimizer` under an `Optimizer.step#` annotation, `backward` under a backward op,
/// `forward` under any other op; `None` outside ops.
pub fn phase_at(trace: &Trace, lane: LaneId, ts: i64) -> Option<&'static str> {
    let c = context(trace, lane, ts);
    if c.inner == NONE {
        None
    } else if c.optimizer != NONE {
        Some("optimizer")
    } else if is_backward(trace, c.top) {
        Some("backward")
    } else {
        Some("forward")
    }
}

/// The innermost and outermost ops and the optimizer step around time `ts` on `lane`.
fn context(trace: &Trace, lane: LaneId, ts: i64) -> Context {
    let mut c = Context { inner: NONE, top: NONE, optimizer: NONE };
    let Some(inner) = enclosing_op_at(trace, lane, ts) else {
        return c;
    };
    c.inner = inner;
    let s = &trace.slices;
    for a in trace.ancestors(inner) {
        let cat = trace.class(s.cat[a as usize]);
        if cat == CatClass::CpuOp {
            c.top = a;
        } else if cat == CatClass::Annotation
            && c.optimizer == NONE
            && trace.strings.get(s.name[a as usize]).starts_with("Optimizer.step#")
        {
            c.optimizer = a;
        }
    }
    c
}

/// True when slice `i` is one autograd node's backward (`autograd::engine::evaluate_function: X`).
fn is_backward(trace: &Trace, i: u32) -> bool {
    trace
        .slices
        .name
        .get(i as usize)
        .is_some_and(|&n| trace.strings.get(n).starts_with("autograd::engine::evaluate_function"))
}

/// Backward passes: `[start, end]` ns of each run of top-level backward ops on a lane, a run
/// ending at a top-level op that is not backward or at an `Optimizer.` annotation; sorted by
/// start.
fn backward_passes(trace: &Trace) -> Vec<(i64, i64)> {
    let s = &trace.slices;
    let mut optimizer_starts: Vec<i64> = (0..s.len())
        .filter(|&i| trace.class(s.cat[i]) == CatClass::Annotation)
        .filter(|&i| trace.strings.get(s.name[i]).starts_with("Optimizer."))
        .map(|i| s.start_ns[i])
        .collect();
    optimizer_starts.sort_unstable();
    let mut passes = Vec::new();
    for lane in &trace.lanes {
        let mut run: Option<(i64, i64)> = None;
        for i in lane.slices.start..lane.slices.end {
            let iu = i as usize;
            let top_level = trace.class(s.cat[iu]) == CatClass::CpuOp
                && trace.ancestors(i).skip(1).all(|a| trace.class(s.cat[a as usize]) != CatClass::CpuOp);
            if !top_level {
                continue;
            }
            let (start, end) = (s.start_ns[iu], s.end_ns(iu));
            let optimizer_between = |from: i64| {
                let k = optimizer_starts.partition_point(|&t| t <= from);
                optimizer_starts.get(k).is_some_and(|&t| t < start)
            };
            run = match (run, is_backward(trace, i)) {
                (Some((s0, e0)), true) if !optimizer_between(e0) => Some((s0, e0.max(end))),
                (prev, true) => {
                    passes.extend(prev);
                    Some((start, end))
                }
                (prev, false) => {
                    passes.extend(prev);
                    None
                }
            };
        }
        passes.extend(run);
    }
    passes.sort_unstable();
    passes
}

/// End of the backward pass containing `ts` (`ts` itself when none does).
fn pass_end(passes: &[(i64, i64)], ts: i64) -> i64 {
    let k = passes.partition_point(|&(start, _)| start <= ts);
    k.checked_sub(1)
        .and_then(|k| passes.get(k))
        .filter(|&&(_, end)| end >= ts)
        .map_or(ts, |&(_, end)| end)
}
