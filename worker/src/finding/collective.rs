//! The shape of gradient communication: many all-reduces per step, each too small to use the
//! network, the way a hand-written per-tensor `dist.all_reduce` loop, a tiny DDP
//! `bucket_cap_mb` or metrics reduced at every step look (`small-allreduces`); and the
//! communication left running alone after the backward pass, before the optimizer
//! (`exposed-comm-tail`).
//!
//! **Inputs.** Kernels of the communication class, each counted in the step that launched it;
//! for `small-allreduces` those whose name says all-reduce (NCCL's `ncclKernel_AllReduce_*` /
//! `ncclDevKernel_AllReduce_*`, RCCL's). For `exposed-comm-tail`, each kernel's phase from the
//! ops around its launch call: under an autograd-engine op ([`is_backward`]) it is backward,
//! under `Optimizer.step#` the optimizer's. **Cost.** One pass over the kernels (an ancestor
//! walk per kernel, bounded by the nesting depth).

use super::thresholds::*;
use super::{dur, finding, launch_of, pct, Ctx, Finding, Severity};
use crate::analysis::phases::{is_backward, length, overlap, union, Intervals};
use crate::model::CatClass;

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    small_allreduces(ctx, out);
    exposed_comm_tail(ctx, out);
}

/// True for an all-reduce kernel's name (NCCL and RCCL spell it `AllReduce`).
pub(super) fn is_allreduce(name: &str) -> bool {
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

/// One step's kernels, for `exposed-comm-tail`.
#[derive(Default)]
struct StepKernels {
    /// End of the last backward compute kernel, ns (`None`: no backward kernel).
    last_backward_end: Option<i64>,
    /// Start of the first optimizer kernel, ns.
    first_optimizer_start: Option<i64>,
    /// Communication kernels.
    comm: Vec<u32>,
    /// Compute kernels (neither communication nor copies), `[start, end)` ns.
    compute: Intervals,
}

/// `exposed-comm-tail`: per complete step, the communication kernels' time after the step's
/// last backward compute kernel ends and before its first optimizer kernel starts (else the
/// step's end), with no compute kernel running: the gradient communication nothing hides. Fires
/// when the median step's tail is >= [`EXPOSED_TAIL_MIN_SHARE`] of its step span and >=
/// [`EXPOSED_TAIL_MIN_NS`]. Evidence: the communication kernels with exposed tail time,
/// longest first.
fn exposed_comm_tail(ctx: &Ctx, out: &mut Vec<Finding>) {
    let (trace, s) = (ctx.trace, &ctx.trace.slices);
    let steps = ctx.complete_steps();
    if steps.is_empty() {
        return;
    }
    let comm = ctx.classes.communication_mask(trace);
    let backward = ctx.mask(is_backward);
    let optimizer = ctx.mask(|n| n.starts_with("Optimizer.step#"));
    let mut per: Vec<StepKernels> = steps.iter().map(|_| StepKernels::default()).collect();
    for &k in &ctx.activities {
        if trace.class(s.cat[k as usize]) != CatClass::Kernel {
            continue;
        }
        let (Some(call), Some(i)) = (launch_of(trace, k), ctx.launch_step(&steps, k)) else { continue };
        let (start, end) = (s.start_ns[k as usize], s.end_ns(k as usize));
        let step = &mut per[i];
        if ctx.is(&comm, k) {
            step.comm.push(k);
            continue;
        }
        step.compute.push((start, end));
        if trace.ancestors(call).any(|a| ctx.is(&optimizer, a)) {
            step.first_optimizer_start = Some(step.first_optimizer_start.map_or(start, |t| t.min(start)));
        } else if trace.ancestors(call).any(|a| ctx.is(&backward, a)) {
            step.last_backward_end = Some(step.last_backward_end.map_or(end, |t| t.max(end)));
        }
    }
    // Per step: (tail ns, step span ns); the exposed kernels.
    let mut tails: Vec<(i64, i64)> = Vec::with_capacity(steps.len());
    let mut exposed: Vec<u32> = Vec::new();
    for (st, k) in steps.iter().zip(per) {
        let Some(from) = k.last_backward_end else {
            tails.push((0, st.dur_ns()));
            continue;
        };
        let to = k.first_optimizer_start.unwrap_or(st.end_ns);
        let compute = union(k.compute);
        // Each communication kernel clipped to the tail window.
        let clipped: Intervals =
            k.comm.iter().map(|&c| (s.start_ns[c as usize].max(from), s.end_ns(c as usize).min(to))).collect();
        for (&c, &piece) in k.comm.iter().zip(&clipped) {
            if piece.0 < piece.1 && piece.1 - piece.0 > overlap(&[piece], &compute) {
                exposed.push(c);
            }
        }
        let window = union(clipped.into_iter().filter(|(a, b)| a < b).collect());
        let tail = length(&window) - overlap(&window, &compute);
        tails.push((tail, st.dur_ns()));
    }
    let mut ordered = tails.clone();
    ordered.sort_by(|a, b| (a.0 as f64 / a.1.max(1) as f64).total_cmp(&(b.0 as f64 / b.1.max(1) as f64)));
    let Some(&(tail, span)) = ordered.get((ordered.len() - 1) / 2) else { return };
    let share = tail as f64 / span.max(1) as f64;
    if share < EXPOSED_TAIL_MIN_SHARE || tail < EXPOSED_TAIL_MIN_NS {
        return;
    }
    let all: i64 = tails.iter().map(|t| t.0).sum();
    out.push(finding(
        "exposed-comm-tail",
        Severity::Warn,
        format!(
            "{} per step of communication runs alone after the backward pass ({} of the step), waiting for the optimizer",
            dur(tail),
            pct(share)
        ),
        format!(
            "median complete step: communication kernels after the last backward compute kernel and before the first optimizer \
             kernel, with no compute kernel running: {} of a {} step = {} >= {} (and >= {}); {} over {} steps, in {} kernels",
            dur(tail),
            dur(span),
            pct(share),
            pct(EXPOSED_TAIL_MIN_SHARE),
            dur(EXPOSED_TAIL_MIN_NS),
            dur(all),
            steps.len(),
            exposed.len()
        ),
        "The gradients' last all-reduce (DDP's last bucket, or a reduction launched only after \
         backward returns) starts when the backward pass ends, so nothing is left to hide it \
         behind: the optimizer waits for it. DDP fills its first bucket with the last layers' \
         gradients, so a large final bucket, or a hand-written all-reduce after loss.backward(), \
         leaves this tail.",
        "Let the communication overlap the backward pass: DDP (not a manual all-reduce after \
         backward), a smaller bucket_cap_mb so the last bucket is small, or FSDP / ZeRO with \
         prefetching; and an optimizer that can start per parameter group \
         (overlap_with_ddp, or the optimizer in backward hooks).",
        ctx.evidence(ctx.longest_first(exposed)),
    ));
}
