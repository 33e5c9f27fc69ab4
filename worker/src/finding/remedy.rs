//! What acting on a finding would buy, where its remedy has a clear model: the remedy as
//! what-if edits on the finding's own evidence (its slices, the calls that launched them and
//! the device work they launched), recomputed over every step's critical-path graph. Unlike
//! the impact (the evidence's time on today's path, an upper bound), this is the step time the
//! model saves once another path may have become critical (docs/findings.md "Impact and
//! severity").
//!
//! Models, per rule (the evidence's classes in brackets, scaled by the factor):
//! - `long-device-sync`, `sync-heavy`: the syncs removed ([sync wait] → 0: the CPU goes on);
//! - `hidden-memcpy`: the copies made asynchronous ([sync wait] → 0; the copy still runs);
//! - `pageable-memcpy`: pinned memory with `non_blocking=True` ([sync wait] → 0 and the copies
//!   at twice the speed, pinned host memory's usual gain);
//! - `fp32-gemm`, `amp-opportunity`: the GEMMs on tensor cores ([GPU compute] × 0.5, the least
//!   TF32 / bf16 gives over FP32 SIMT);
//! - `tf32-fp32`: the TF32 GEMMs in bf16 ([GPU compute] × 0.5, the datasheets' TF32 : bf16 rate);
//! - `dataloader-bound`: the loading stall gone (all its time → 0);
//! - `device-query-loop`, `occupancy-query`: the queries out of the loop (their CPU time → 0);
//! - `dtod-before-gemm`: the bias copies gone ([memcpy] → 0);
//! - `launch-overhead`: the kernels' launch delays gone, as in a CUDA graph ([launch delay] →
//!   0; the launch calls' own CPU time is not in the evidence, so not modelled);
//! - `small-allreduces`: the latency-bound all-reduces fused into the larger buckets
//!   ([GPU communication] → 0: their bytes add little to a bucket's time);
//! - `h2d-not-overlapped`: the copies moved to a side stream ([memcpy] → 0: the closest edit the
//!   critical-path model has, since it cannot move an edge to another stream; the copy engine
//!   runs them beside compute, so off the path unless the next kernel waits for them);
//! - `allreduce-every-microstep`: the all-reduces before each step's last backward pass gone
//!   (`no_sync()`: [GPU communication] → 0);
//! - `exposed-comm-tail`: the tail's communication overlapped with the backward pass
//!   ([GPU communication] → 0: hidden behind compute, as DDP's earlier buckets are).
//!
//! - `unfused-attention`: one fused attention kernel for each chain ([GPU compute] and [memcpy] ×
//!   0.5: FlashAttention's paper, Dao et al. 2022, measures its kernel 2-4x faster than PyTorch's
//!   op-by-op attention and 7.6x on GPT-2's; half the time is the low end).
//!
//! No model, on purpose:
//! - `gemm-alignment`: what padding buys depends on the library, not the trace (NVIDIA's
//!   "Matrix Multiplication Background" guide shows cuBLAS 10.1 leaving tensor cores for
//!   misaligned shapes while 11.0 keeps them with narrower loads): no factor holds for both;
//! - `copy-overhead`: which copies are avoidable depends on the code (autocast's weight casts
//!   run every forward unless the weights are kept in bf16; a `contiguous` may feed a kernel that
//!   needs it), so removing them all would overstate and any share would be a guess;
//! - `low-sm-efficiency`: the fix (a larger batch, split-K, fusion) changes the kernels' work,
//!   not only their time; time × fill would be the ideal, not a model;
//! - the rest: no model holds without knowing the code (overlap, fusion, shapes).

use super::Finding;
use crate::analysis::critical_path::edit::Selector;
use crate::analysis::critical_path::{BoundBy, Edit, StepPath};
use crate::model::{Trace, NONE};
use crate::text::{duration, percent};

/// What the remedy's what-if saved.
#[derive(Clone, Debug, PartialEq)]
pub struct Remedy {
    /// The remedy modelled, in words ("the syncs removed").
    pub what: &'static str,
    /// Step time saved over all steps, ns.
    pub saved_ns: i64,
    /// The same per step.
    pub per_step_ns: i64,
    /// `saved_ns` as a share of all steps' wall time, %.
    pub pct: f64,
    /// The remedy removes waits (a sync, a blocking copy): the CPU no longer waits for the GPU
    /// work before it, so it can save more than the evidence's own time on the path.
    pub removes_waits: bool,
}

/// The remedy of `f`'s rule as edits on its evidence, if the rule has a model and evidence.
pub fn model(trace: &Trace, f: &Finding) -> Option<(&'static str, Vec<Edit>)> {
    use BoundBy as B;
    let (what, parts): (&'static str, &[(&[BoundBy], f64)]) = match f.rule {
        "long-device-sync" | "sync-heavy" => ("the syncs removed", &[(&[B::SyncWait], 0.0)]),
        "hidden-memcpy" => ("the copies made asynchronous", &[(&[B::SyncWait], 0.0)]),
        "pageable-memcpy" => ("pinned memory, non_blocking copies", &[(&[B::SyncWait], 0.0), (&[B::MemcpyMemset], 0.5)]),
        "fp32-gemm" | "amp-opportunity" => ("the GEMMs on tensor cores at twice the speed", &[(&[B::GpuCompute], 0.5)]),
        "tf32-fp32" => ("bf16 autocast (the TF32 GEMMs at twice the speed)", &[(&[B::GpuCompute], super::thresholds::TF32_TO_BF16_TIME)]),
        "dataloader-bound" => ("the loading stall gone", &[(&[], 0.0)]),
        "device-query-loop" | "occupancy-query" => ("the queries out of the loop", &[(&[B::CpuOp, B::CpuOverhead], 0.0)]),
        "dtod-before-gemm" => ("the bias copies gone", &[(&[B::MemcpyMemset], 0.0)]),
        "launch-overhead" => ("the launch delays gone (a CUDA graph)", &[(&[B::LaunchDelay], 0.0)]),
        "small-allreduces" => ("the small all-reduces fused into buckets", &[(&[B::GpuCommunication], 0.0)]),
        "h2d-not-overlapped" => ("the copies on a side stream, beside compute", &[(&[B::MemcpyMemset], 0.0)]),
        "unfused-attention" => ("one fused attention kernel per chain", &[(&[B::GpuCompute, B::MemcpyMemset], super::thresholds::FUSED_ATTENTION_TIME)]),
        "allreduce-every-microstep" => ("no_sync() on every micro-step but the last", &[(&[B::GpuCommunication], 0.0)]),
        "exposed-comm-tail" => ("the tail's communication overlapped with backward", &[(&[B::GpuCommunication], 0.0)]),
        _ => return None,
    };
    if f.evidence.all.is_empty() {
        return None;
    }
    // What the impact counts, so a remedy that only shortens its evidence never saves more
    // than the impact (a longest path shrinks by at most what left the old path). A pageable
    // copy's wait is spent in the call that launched it: its calls are added (that remedy
    // removes waits, and the impact is raised to what it saves).
    let mut slices = f.evidence.all.clone();
    if f.rule == "pageable-memcpy" {
        slices.extend(f.evidence.all.iter().filter_map(|&i| trace.slices.launch.get(i as usize).copied().filter(|&l| l != NONE)));
        slices.sort_unstable();
        slices.dedup();
    }
    let edits = parts
        .iter()
        .map(|(classes, factor)| Edit {
            selector: Selector::Slices { slices: slices.clone(), classes: classes.to_vec() },
            factor: *factor,
            text: what.to_owned(),
        })
        .collect();
    Some((what, edits))
}

/// The remedy `what` saved: `before` against `after`, step by step.
pub fn saved(what: &'static str, edits: &[Edit], before: &[StepPath], after: &[StepPath]) -> Remedy {
    let removes_waits = edits.iter().any(|e| e.factor == 0.0 && matches!(&e.selector, Selector::Slices { classes, .. } if classes.contains(&BoundBy::SyncWait)));
    let wall: i64 = before.iter().map(StepPath::wall_ns).sum();
    let saved_ns: i64 = before.iter().zip(after).map(|(b, a)| (b.wall_ns() - a.wall_ns()).max(0)).sum();
    let n = before.len().max(1) as i64;
    let pct = if wall > 0 { 100.0 * saved_ns as f64 / wall as f64 } else { 0.0 };
    Remedy { what, saved_ns, per_step_ns: saved_ns / n, pct, removes_waits }
}

/// The sentence `why` gains.
pub fn sentence(r: &Remedy) -> String {
    if r.saved_ns == 0 {
        return format!(" Modelled with {}: no step would be shorter (another path sets it).", r.what);
    }
    let share = if r.pct < 1.0 { format!("{:.2}%", r.pct) } else { percent(r.pct / 100.0) };
    format!(" Modelled with {}: each step {} shorter ({share}).", r.what, duration(r.per_step_ns))
}
