//! The shape of gradient communication (`small-allreduces`): many all-reduces per step, each
//! too small to use the network, the way a hand-written per-tensor `dist.all_reduce` loop, a
//! tiny DDP `bucket_cap_mb` or metrics reduced at every step look.
//!
//! **Inputs.** Kernels of the communication class whose name says all-reduce (NCCL's
//! `ncclKernel_AllReduce_*` / `ncclDevKernel_AllReduce_*`, RCCL's), each counted in the step
//! that launched it. **Cost.** One pass over the kernels.

use super::thresholds::*;
use super::{dur, finding, Ctx, Finding, Severity};

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    small_allreduces(ctx, out);
}

/// True for an all-reduce kernel's name (NCCL and RCCL spell it `AllReduce`).
fn is_allreduce(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("allreduce") || lower.contains("all_reduce")
}

/// `small-allreduces`: over the complete steps, the median step launches at least
/// [`SMALL_ALLREDUCE_PER_STEP`] all-reduce kernels and the median one runs under
/// [`SMALL_ALLREDUCE_MAX_NS`] (latency-bound messages). Evidence: the all-reduces under that
/// bound, longest first: fused into a few buckets their time is mostly saved, while the larger
/// ones move the same bytes whichever way they are grouped.
fn small_allreduces(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let class = ctx.classes.communication_mask(ctx.trace);
    let named = ctx.mask(is_allreduce);
    let comm: Vec<bool> = named.iter().zip(&class).map(|(a, b)| *a && *b).collect();
    let steps = ctx.complete_steps();
    if steps.is_empty() {
        return;
    }
    let mut per_step = vec![0usize; steps.len()];
    let mut all: Vec<u32> = Vec::new();
    for k in ctx.kernels_sorted_by_time(false) {
        if !ctx.is(&comm, k) {
            continue;
        }
        if let Some(i) = ctx.launch_step(&steps, k) {
            per_step[i] += 1;
            all.push(k);
        }
    }
    let Some(per_step_median) = median(per_step.iter().map(|&n| n as i64).collect()) else { return };
    let Some(kernel_median) = median(all.iter().map(|&k| s.dur_ns[k as usize]).collect()) else { return };
    if per_step_median < SMALL_ALLREDUCE_PER_STEP || kernel_median >= SMALL_ALLREDUCE_MAX_NS {
        return;
    }
    let all_ns: i64 = all.iter().map(|&k| s.dur_ns[k as usize]).sum();
    let small: Vec<u32> = all.iter().copied().filter(|&k| s.dur_ns[k as usize] < SMALL_ALLREDUCE_MAX_NS).collect();
    let small_ns: i64 = small.iter().map(|&k| s.dur_ns[k as usize]).sum();
    let n = steps.len() as i64;
    out.push(finding(
        "small-allreduces",
        Severity::Warn,
        format!(
            "{per_step_median} all-reduces per step, a median {} each; the {} under {} take {} per step",
            dur(kernel_median),
            small.len() as i64 / n,
            dur(SMALL_ALLREDUCE_MAX_NS),
            dur(small_ns / n)
        ),
        format!(
            "median all-reduce kernels per complete step {per_step_median} >= {SMALL_ALLREDUCE_PER_STEP}; median kernel {} < {} \
             (latency-bound: a 25 MB DDP bucket takes ~300 µs on NVLink); {} all-reduce kernels in {} steps, {} in all, \
             {} of them under {} ({})",
            dur(kernel_median),
            dur(SMALL_ALLREDUCE_MAX_NS),
            all.len(),
            steps.len(),
            dur(all_ns),
            small.len(),
            dur(SMALL_ALLREDUCE_MAX_NS),
            dur(small_ns)
        ),
        "Gradients (or metrics) are reduced in many small pieces: a loop of dist.all_reduce \
         per tensor, DDP with a tiny bucket_cap_mb, or values synchronized at every step. Each \
         call pays NCCL's fixed launch and synchronization cost however small its message, and \
         a small message uses little of the link's bandwidth.",
        "Reduce fewer, larger buffers: DDP with its default 25 MB buckets (or larger \
         bucket_cap_mb), one flattened buffer instead of a per-tensor loop \
         (torch._utils._flatten_dense_tensors, or dist.all_reduce_coalesced), and metrics \
         reduced every N steps rather than every step.",
        ctx.evidence(ctx.longest_first(small)),
    ));
}

/// The median of `v` (the lower of the two middle values), `None` when empty.
fn median(mut v: Vec<i64>) -> Option<i64> {
    v.sort_unstable();
    v.get(v.len().checked_sub(1)? / 2).copied()
}
