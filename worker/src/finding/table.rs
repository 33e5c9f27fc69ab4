//! Table-level rules: where the time goes overall (`overhead-bound`, `compute-bound`) and which
//! ops dominate (`hotspot-op`, `many-small-calls`). Numbers come from the op table
//! (`key_averages()` semantics) and the step spans, so they match the tables the user sees.
//!
//! Cost: O(rows) over the op table, O(log k) per step for GPU busy time (the shared
//! `GpuIndex`), one slice pass per op named in a finding.

use super::thresholds::*;
use super::{dur, finding, pct, Ctx, Finding, Severity};
use crate::analysis::ops::OpKind;
use crate::model::CatClass;

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    overhead_bound(ctx, out);
    compute_bound(ctx, out);
    hotspot_op(ctx, out);
    many_small_calls(ctx, out);
}

/// Per-step GPU busy share: (step slice, busy ns, step ns) of complete steps with device work.
fn step_busy(ctx: &Ctx) -> Vec<(u32, i64, i64)> {
    ctx.complete_steps()
        .iter()
        .filter(|s| s.device_activities > 0 && s.dur_ns() > 0)
        .map(|s| (s.slice, ctx.busy_ns((s.start_ns, s.end_ns)), s.dur_ns()))
        .collect()
}

/// `overhead-bound`: there is GPU work, but the GPU idles while the host dispatches: most steps
/// leave the GPU idle > [`OVERHEAD_STEP_IDLE_SHARE`], or (no steps) Self CUDA total <
/// [`OVERHEAD_DEVICE_SHARE`] of Self CPU total.
fn overhead_bound(ctx: &Ctx, out: &mut Vec<Finding>) {
    let ops = &ctx.ops;
    if ctx.kernels.rows.is_empty() {
        return;
    }
    let steps = step_busy(ctx);
    let title = if steps.is_empty() {
        let (cpu, dev) = (ops.self_cpu_total_ns, ops.self_device_total_ns);
        if cpu <= 0 || dev as f64 >= OVERHEAD_DEVICE_SHARE * cpu as f64 {
            return;
        }
        format!(
            "Self CUDA total {} is {} of Self CPU total {}",
            dur(dev),
            pct(dev as f64 / cpu as f64),
            dur(cpu)
        )
    } else {
        let idle: Vec<&(u32, i64, i64)> = steps
            .iter()
            .filter(|(_, busy, d)| (d - busy) as f64 > OVERHEAD_STEP_IDLE_SHARE * *d as f64)
            .collect();
        // Most steps, not one: a single slow step is cold-start-step's business.
        if idle.len() * 2 <= steps.len() {
            return;
        }
        let busy: i64 = steps.iter().map(|s| s.1).sum();
        let total: i64 = steps.iter().map(|s| s.2).sum();
        format!(
            "GPU idle {} of step time in {} of {} steps (busy {} of {})",
            pct(1.0 - busy as f64 / total.max(1) as f64),
            idle.len(),
            steps.len(),
            dur(busy),
            dur(total)
        )
    };
    let ids = steps.iter().map(|s| s.0);
    let evidence = if steps.is_empty() {
        ctx.evidence(ctx.activities.iter().copied())
    } else {
        ctx.evidence(ids)
    };
    out.push(finding(
        "overhead-bound",
        Severity::Warn,
        title,
        "The GPU waits for the CPU: Python, the dispatcher and kernel launches take longer than \
         the kernels they issue, typically small batches or many small ops.",
        "Increase the batch size, fuse ops (torch.compile), use CUDA graphs \
         (torch.compile(mode=\"reduce-overhead\")), and remove host work from the step.",
        evidence,
    ));
}

/// `compute-bound` (info): the GPU is busy at least [`COMPUTE_BOUND_BUSY_SHARE`] of the steps'
/// time (tb_plugin's window when there are no steps).
fn compute_bound(ctx: &Ctx, out: &mut Vec<Finding>) {
    let steps = step_busy(ctx);
    let (busy, total) = if steps.is_empty() {
        let Some(m) = ctx.gpus.iter().max_by_key(|m| m.busy_ns) else {
            return;
        };
        (m.busy_ns, m.window.1 - m.window.0)
    } else {
        (steps.iter().map(|s| s.1).sum(), steps.iter().map(|s| s.2).sum())
    };
    if total <= 0 || (busy as f64) < COMPUTE_BOUND_BUSY_SHARE * total as f64 {
        return;
    }
    out.push(finding(
        "compute-bound",
        Severity::Info,
        format!("GPU busy {} of step time ({} of {})", pct(busy as f64 / total as f64), dur(busy), dur(total)),
        "The GPU is kept busy: host overhead is hidden, and speed now depends on the kernels \
         themselves.",
        "Look at the top kernels: use tensor cores (bf16/fp16 autocast, TF32), fuse \
         memory-bound ops, and check occupancy.",
        ctx.evidence(ctx.kernels_sorted_by_time(true)),
    ));
}

/// `hotspot-op`: one op (by name) holds >= [`HOTSPOT_OP_SHARE`] of Self CUDA time total, among
/// at least two ops with device time (with a single such op there is no choice to point at).
fn hotspot_op(ctx: &Ctx, out: &mut Vec<Finding>) {
    let ops = &ctx.ops;
    let total = ops.self_device_total_ns;
    let with_device = ops.rows.iter().filter(|r| r.self_device_ns > 0).count();
    if total <= 0 || with_device < 2 {
        return;
    }
    // Ties: first occurrence (the table's order), so the result is deterministic.
    let Some(top) = ops
        .rows
        .iter()
        .filter(|r| r.kind != OpKind::Memory)
        .reduce(|a, b| if b.self_device_ns > a.self_device_ns { b } else { a })
    else {
        return;
    };
    let share = top.self_device_ns as f64 / total as f64;
    if share < HOTSPOT_OP_SHARE {
        return;
    }
    let mask = ctx.mask(|n| n == top.name);
    out.push(finding(
        "hotspot-op",
        Severity::Info,
        format!(
            "{} holds {} of Self CUDA time ({} in {} calls)",
            top.name,
            pct(share),
            dur(top.self_device_ns),
            top.calls
        ),
        "One op dominates GPU time: any speed-up of the model starts here.",
        "Check this op's kernels (tensor cores, dtype, shapes that tile well), or whether it \
         can be fused or avoided.",
        ctx.evidence(ctx.slices_named(&mask, None)),
    ));
}

/// `many-small-calls`: an op (`cpu_op`) with >= [`MANY_SMALL_CALLS_PER_STEP`] calls per step
/// (per trace without steps) and an average CPU total < [`MANY_SMALL_CALLS_MAX_AVG_NS`].
/// One finding per op, most calls first.
fn many_small_calls(ctx: &Ctx, out: &mut Vec<Finding>) {
    let steps = ctx.steps.steps.len().max(1) as f64;
    let mut rows: Vec<_> = ctx
        .ops
        .rows
        .iter()
        .filter(|r| r.kind == OpKind::Op && r.calls > 0)
        .filter(|r| r.calls as f64 / steps >= MANY_SMALL_CALLS_PER_STEP)
        .filter(|r| r.cpu_total_ns / (r.calls as i64) < MANY_SMALL_CALLS_MAX_AVG_NS)
        .collect();
    rows.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.name.cmp(&b.name)));
    for r in rows {
        let mask = ctx.mask(|n| n == r.name);
        out.push(finding(
            "many-small-calls",
            Severity::Warn,
            format!(
                "{} called {:.0} times per step, {} on average ({} CPU total)",
                r.name,
                r.calls as f64 / steps,
                dur(r.cpu_total_ns / r.calls as i64),
                dur(r.cpu_total_ns)
            ),
            "Thousands of tiny calls per step: each pays dispatcher and launch overhead, which \
             adds up to more than the work itself (Python loops over tensors, per-parameter \
             optimizer updates).",
            "Vectorize the loop, use foreach/fused optimizers (foreach=True, fused=True), or \
             torch.compile the region.",
            ctx.evidence(ctx.slices_named(&mask, Some(CatClass::CpuOp))),
        ));
    }
}

impl Ctx<'_> {
    /// Kernel slice ids, longest first when `longest_first`, ascending ids otherwise.
    pub(crate) fn kernels_sorted_by_time(&self, longest_first: bool) -> Vec<u32> {
        let s = &self.trace.slices;
        let mut ids: Vec<u32> = self
            .activities
            .iter()
            .copied()
            .filter(|&i| self.trace.class(s.cat[i as usize]) == CatClass::Kernel)
            .collect();
        if longest_first {
            ids.sort_by_key(|&i| (std::cmp::Reverse(s.dur_ns[i as usize]), i));
        }
        ids
    }
}
