//! Roofline rules (`analysis::work`): steps that use little of the GPU's peak (`low-mfu`) and
//! GEMMs held below the compute roof by their shape (`memory-bound-gemm`). Both need the GPU's
//! peaks (table or given) and FLOPs estimated from recorded shapes; without them they are
//! silent rather than guess.
//!
//! Cost: one pass over the kernel rows, one MFU sum per step (`WorkIndex::step_mfu`).

use super::thresholds::*;
use super::{dur, finding, pct, Ctx, Finding, Severity};
use crate::analysis::kernel_class::KernelClass;
use crate::analysis::kernels::KernelRow;
use crate::analysis::work::dtype::PeakClass;
use crate::analysis::work::Bound;
use crate::model::CatClass;

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    low_mfu(ctx, out);
    memory_bound_gemm(ctx, out);
}

/// Rows doing the FLOP-heavy work: GEMMs and attention.
fn heavy(r: &KernelRow) -> bool {
    r.gemm || r.class == KernelClass::Attention
}

/// `low-mfu`: the median complete step's MFU is below [`LOW_MFU_PCT`], with FLOPs known for at
/// least [`LOW_MFU_MIN_COVERAGE`] of GEMM and attention kernel time. Where the time went: the
/// median step's GPU busy share and the heavy kernels' share of peak while they run.
/// Evidence: the complete steps, lowest MFU first.
fn low_mfu(ctx: &Ctx, out: &mut Vec<Finding>) {
    let Some(peaks) = ctx.work.peaks() else { return };
    let heavy_ns: i64 = ctx.kernels.rows.iter().filter(|r| heavy(r)).map(|r| r.total_ns).sum();
    let known_ns: i64 = ctx
        .kernels
        .rows
        .iter()
        .filter(|r| heavy(r))
        .filter_map(|r| r.achieved.filter(|a| a.has_flops).map(|a| a.measured_ns))
        .sum();
    if heavy_ns <= 0 || (known_ns as f64) < LOW_MFU_MIN_COVERAGE * heavy_ns as f64 {
        return;
    }
    let mfu = ctx.work.step_mfu(ctx.trace, &ctx.steps);
    let mut steps: Vec<(f64, &crate::analysis::steps::StepSpan)> = ctx
        .steps
        .steps
        .iter()
        .zip(&mfu)
        .filter(|(s, _)| !s.incomplete && s.device_activities > 0)
        .filter_map(|(s, m)| m.map(|m| (m, s)))
        .collect();
    if steps.is_empty() {
        return;
    }
    steps.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Sorted: the median is the middle value, or the mean of the middle two.
    let n = steps.len();
    let mid = if n % 2 == 1 { steps[n / 2].0 } else { (steps[n / 2 - 1].0 + steps[n / 2].0) / 2.0 };
    if mid >= LOW_MFU_PCT {
        return;
    }
    // The step whose MFU is nearest the median tells where the time went.
    let Some(&(m, step)) = steps.iter().min_by(|a, b| (a.0 - mid).abs().total_cmp(&(b.0 - mid).abs())) else { return };
    let busy = ctx.busy_ns((step.start_ns, step.end_ns)) as f64 / step.dur_ns().max(1) as f64;
    let heavy_rows: Vec<_> = ctx.kernels.rows.iter().filter(|r| heavy(r)).filter_map(|r| r.achieved).collect();
    let heavy_peak_pct = {
        let (at_peak, time): (f64, f64) = heavy_rows
            .iter()
            .filter_map(|a| Some((a.peak_pct? * a.measured_ns as f64, a.measured_ns as f64)))
            .fold((0.0, 0.0), |acc, (p, t)| (acc.0 + p, acc.1 + t));
        if time > 0.0 { at_peak / time } else { 0.0 }
    };
    let class = ctx.kernels.rows.iter().filter(|r| heavy(r)).find_map(|r| r.achieved?.peak).unwrap_or(PeakClass::Fp32);
    let peak = peaks.tflops(class).unwrap_or(0.0);
    out.push(finding(
        "low-mfu",
        Severity::Info,
        format!(
            "Steps use {mid:.2}% of the GPU's {} peak (MFU, median of {} step{}); the GPU is busy {} of step #{}",
            class.key(),
            steps.len(),
            if steps.len() == 1 { "" } else { "s" },
            pct(busy),
            step.number
        ),
        format!(
            "median step MFU {mid:.2}% < {LOW_MFU_PCT}% against {} ({} {peak} TFLOP/s dense; {}). In step #{} ({}, MFU {m:.2}%) \
             the GPU is busy {} of the time; while they run, GEMM and attention kernels reach {heavy_peak_pct:.1}% of peak. \
             FLOPs are known for {} of GEMM and attention kernel time ({} of {}).",
            peaks.model,
            class.key(),
            peaks.source,
            step.number,
            dur(step.dur_ns()),
            pct(busy),
            pct(known_ns as f64 / heavy_ns as f64),
            dur(known_ns),
            dur(heavy_ns)
        ),
        "Most of the GPU's arithmetic goes unused. Either the GPU waits (low busy share: the host, \
         data loading or synchronization holds it back) or the kernels that run are far from the \
         roof (small or skinny matrices, memory-bound work, low precision not used).",
        "If the GPU is idle much of the step, see overhead-bound, gpu-idle and the step's breakdown; \
         if it is busy, grow the batch or fuse small ops (torch.compile), use bf16/fp8 where the \
         model allows, and check memory-bound-gemm for shapes below the ridge point.",
        ctx.evidence(steps.iter().map(|(_, s)| s.slice)),
    ));
}

/// `memory-bound-gemm`: GEMM kernels whose arithmetic intensity (FLOPs / bytes of their op's
/// operands) is below the ridge point hold at least [`MEMORY_BOUND_GEMM_MIN_SHARE`] of GEMM
/// time. The title names the shape of the longest one (M, N, K: one small dimension makes the
/// operands' traffic dominate). Evidence: those kernels, longest first.
fn memory_bound_gemm(ctx: &Ctx, out: &mut Vec<Finding>) {
    let Some(peaks) = ctx.work.peaks() else { return };
    let rows = &ctx.kernels.rows;
    let gemm_ns: i64 = rows.iter().filter(|r| r.gemm).map(|r| r.total_ns).sum();
    let bound: Vec<&KernelRow> = rows
        .iter()
        .filter(|r| r.gemm && r.achieved.is_some_and(|a| a.bound == Some(Bound::Memory)))
        .collect();
    let bound_ns: i64 = bound.iter().map(|r| r.total_ns).sum();
    if bound.is_empty() || gemm_ns <= 0 || (bound_ns as f64) < MEMORY_BOUND_GEMM_MIN_SHARE * gemm_ns as f64 {
        return;
    }
    let mask = ctx.mask(|n| bound.iter().any(|r| r.name == n));
    let ids = ctx.longest_first(ctx.slices_named(&mask, Some(CatClass::Kernel)));
    let Some(first) = ids.first().copied() else { return };
    let Some(work) = ctx.work.kernel(first) else { return };
    let (Some(flops), Some(bytes)) = (work.flops, work.bytes) else { return };
    let class = work.peak.unwrap_or(PeakClass::Fp32);
    let (Some(tflops), Some(gbps)) = (peaks.tflops(class), peaks.gbps) else { return };
    let ridge = tflops * 1e12 / (gbps * 1e9);
    let shape = work.gemm.map_or_else(String::new, |[b, m, n, k]| {
        let batch = if b > 1 { format!("{b} x ") } else { String::new() };
        format!("{batch}M={m} N={n} K={k}, ")
    });
    let intensity = flops / bytes.max(1.0);
    out.push(finding(
        "memory-bound-gemm",
        Severity::Info,
        format!(
            "{} GEMM kernel names are memory-bound by their shape ({} of GEMM time; e.g. {shape}{intensity:.0} FLOP/B < ridge {ridge:.0})",
            bound.len(),
            pct(bound_ns as f64 / gemm_ns as f64),
        ),
        format!(
            "memory-bound GEMM time {} / GEMM time {} = {} >= {}; the longest, {}, does {intensity:.1} FLOPs per byte of its \
             operands, below {}'s ridge point {} {tflops} TFLOP/s / {gbps} GB/s = {ridge:.1} FLOP/B",
            dur(bound_ns),
            dur(gemm_ns),
            pct(bound_ns as f64 / gemm_ns as f64),
            pct(MEMORY_BOUND_GEMM_MIN_SHARE),
            crate::text::cut(&ctx.name(first), 60),
            peaks.model,
            class.key()
        ),
        "These matrix multiplies move more bytes than the GPU can feed its tensor cores: with one \
         small dimension (a few rows of tokens, a thin projection) the time goes to reading the \
         weights, and no kernel choice reaches the compute peak.",
        "Batch more rows per GEMM (larger batch or sequence, fused QKV / gate-up projections), \
         keep weights in a smaller dtype (fp8 / int8 weight-only), or accept it and measure GB/s \
         against the bandwidth instead of TFLOP/s.",
        ctx.evidence(ids),
    ));
}
