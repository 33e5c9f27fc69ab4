//! Gradient accumulation that all-reduces at every micro-step (`allreduce-every-microstep`):
//! with DDP, `loss.backward()` all-reduces the gradients each time it runs unless the
//! micro-steps before the last run under `model.no_sync()`, so a step of k micro-steps moves
//! its gradients k times where once would do.
//!
//! **Inputs.** Per complete step, its outermost CPU ops (no op above them): autograd-engine ops
//! ([`is_backward`], on any thread) and the step thread's other ops (the forward, the loss).
//! A **micro-step's backward** is a run of backward ops; a new one starts when a backward op
//! follows a step-thread op that began after the previous run's last backward op ended (a
//! forward in between), so a DataLoader thread's ops or the main thread waiting inside
//! `backward()` never split one. Each all-reduce kernel (communication class, all-reduce name)
//! belongs to the latest run that started before its launch call. **Cost.** One pass over the
//! slices for the outermost ops, a sort per step.

use super::thresholds::*;
use super::{dur, finding, Ctx, Finding, Severity};
use crate::analysis::phases::is_backward;
use crate::model::{CatClass, NONE};

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    allreduce_every_microstep(ctx, out);
}

/// True when slice `i` is a CPU op with no CPU op above it.
fn outermost_op(ctx: &Ctx, i: u32) -> bool {
    let s = &ctx.trace.slices;
    let op = |i: u32| ctx.trace.class(s.cat[i as usize]) == CatClass::CpuOp;
    if !op(i) {
        return false;
    }
    let mut p = s.parent[i as usize];
    while p != NONE {
        if op(p) {
            return false;
        }
        p = s.parent[p as usize];
    }
    true
}

/// `allreduce-every-microstep`: in at least [`MICROSTEP_ALLREDUCE_MIN_SHARE`] of the complete
/// steps, two or more micro-steps' backward passes are each followed by their own all-reduces.
/// Evidence: the all-reduce kernels of every micro-step but the last of its step, which
/// `no_sync()` would leave out.
fn allreduce_every_microstep(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let steps = ctx.complete_steps();
    if steps.is_empty() {
        return;
    }
    let backward = ctx.mask(is_backward);
    let names = ctx.mask(super::collective::is_allreduce);
    let class = ctx.classes.communication_mask(ctx.trace);
    // (start, end, backward, lane) of each outermost op, per step.
    let mut ops: Vec<Vec<(i64, i64, bool, u32)>> = vec![Vec::new(); steps.len()];
    for i in 0..s.len() as u32 {
        let k = i as usize;
        let start = s.start_ns[k];
        // Complete steps are in time order and do not overlap.
        let Some(j) = steps.partition_point(|st| st.cpu_start_ns <= start).checked_sub(1) else { continue };
        if start < steps[j].cpu_end_ns && outermost_op(ctx, i) {
            ops[j].push((start, start + s.dur_ns[k], ctx.is(&backward, i), s.lane[k].0));
        }
    }
    // Per step, the micro-steps' backward starts.
    let runs: Vec<Vec<i64>> = ops
        .iter_mut()
        .zip(&steps)
        .map(|(ops, st)| {
            ops.sort_unstable();
            let own_lane = s.lane[st.slice as usize].0;
            let (mut starts, mut last_end, mut forward) = (Vec::new(), i64::MIN, true);
            for &(start, end, is_bwd, lane) in ops.iter() {
                if is_bwd {
                    if forward {
                        starts.push(start);
                        forward = false;
                    }
                    last_end = last_end.max(end);
                } else if lane == own_lane && start >= last_end && !starts.is_empty() {
                    forward = true;
                }
            }
            starts
        })
        .collect();
    // All-reduce kernels by (step, micro-step).
    let mut by_run: Vec<Vec<Vec<u32>>> = runs.iter().map(|r| vec![Vec::new(); r.len()]).collect();
    for a in ctx.kernels_sorted_by_time(false) {
        if !ctx.is(&names, a) || !ctx.is(&class, a) {
            continue;
        }
        let Some(j) = ctx.launch_step(&steps, a) else { continue };
        let call = s.launch[a as usize];
        let at = if call == NONE { s.start_ns[a as usize] } else { s.start_ns[call as usize] };
        if let Some(m) = runs[j].iter().rposition(|&r| r <= at) {
            by_run[j][m].push(a);
        }
    }
    let repeated: Vec<usize> = (0..steps.len()).filter(|&j| by_run[j].iter().filter(|r| !r.is_empty()).count() >= 2).collect();
    let share = repeated.len() as f64 / steps.len() as f64;
    if repeated.is_empty() || share < MICROSTEP_ALLREDUCE_MIN_SHARE {
        return;
    }
    let evidence: Vec<u32> = repeated
        .iter()
        .flat_map(|&j| {
            let last = by_run[j].iter().rposition(|r| !r.is_empty()).unwrap_or(0);
            by_run[j][..last].iter().flatten().copied().collect::<Vec<_>>()
        })
        .collect();
    let extra_ns: i64 = evidence.iter().map(|&a| s.dur_ns[a as usize]).sum();
    let micro: usize = repeated.iter().map(|&j| runs[j].len()).max().unwrap_or(0);
    let n = repeated.len() as i64;
    out.push(finding(
        "allreduce-every-microstep",
        Severity::Warn,
        format!(
            "All-reduce after every micro-step: {} of {} steps run up to {micro} backward passes, each with its own all-reduces; the extra ones take {} per step",
            repeated.len(),
            steps.len(),
            dur(extra_ns / n)
        ),
        format!(
            "steps whose all-reduce kernels follow two or more separate backward passes: {} of {} >= {}; \
             {} all-reduce kernels before each step's last backward pass, {} in all",
            repeated.len(),
            steps.len(),
            super::pct(MICROSTEP_ALLREDUCE_MIN_SHARE),
            evidence.len(),
            dur(extra_ns)
        ),
        "Each backward pass of the step all-reduces its gradients: gradient accumulation under \
         DistributedDataParallel without no_sync(), so the gradients of every micro-step cross \
         the network where only the accumulated ones need to. The communication grows with the \
         number of micro-steps while the work it synchronizes does not.",
        "Run every micro-step but the last under `with model.no_sync():` (DDP), or \
         `model.require_backward_grad_sync = False` (FSDP: `no_sync()` too, at the cost of \
         unsharded gradients), so only the last backward pass all-reduces.",
        ctx.evidence(ctx.longest_first(evidence)),
    ));
}
