//! Grids smaller than the GPU (`low-sm-efficiency`): SM efficiency well below
//! utilization. tb_plugin's Est. SM Efficiency is the kernel time weighted by
//! min(blocks per SM, 1); divided by the busy time it is the share of the SMs the running
//! kernels occupy (the fill), which is what this rule compares.
//!
//! **Inputs.** Each kernel's `blocks per SM` (CUPTI's, in its args: per kernel, since a
//! per-name mean overstates the fill of names launched at several sizes) and duration;
//! communication kernels left out (a few blocks by design, as in `low-occupancy`).
//! **Cost.** One pass over the kernels, one arg read each.

use super::thresholds::*;
use super::{dur, finding, pct, Ctx, Finding, Severity};
use crate::analysis::args::ArgKey;
use crate::analysis::kernel_class::KernelClass;
use crate::analysis::kernels::f64_arg;

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    low_sm_efficiency(ctx, out);
}

/// `low-sm-efficiency`: over non-communication kernels reporting blocks per SM (running >=
/// [`LOW_SM_FILL_MIN_KERNEL_NS`]), the time-weighted mean of min(blocks per SM, 1) per kernel
/// is below
/// [`LOW_SM_FILL`]: SM efficiency under that share of utilization. Evidence: the kernels with
/// fewer blocks than SMs, longest first.
fn low_sm_efficiency(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let comm = ctx.mask(|n| ctx.kernels.rows.iter().any(|r| r.name == n && r.class == KernelClass::Communication));
    let key = ArgKey::new("blocks per SM");
    let mut reader = ctx.trace.args.reader();
    let (mut time, mut filled) = (0i64, 0.0f64);
    let mut small: Vec<u32> = Vec::new();
    for k in ctx.kernels_sorted_by_time(false) {
        if ctx.is(&comm, k) {
            continue;
        }
        let Some(blocks) = f64_arg(&key, reader.bytes(s.args[k as usize])).filter(|b| *b >= 0.0) else { continue };
        let d = s.dur_ns[k as usize];
        time += d;
        filled += blocks.min(1.0) * d as f64;
        if blocks < 1.0 {
            small.push(k);
        }
    }
    if time < LOW_SM_FILL_MIN_KERNEL_NS {
        return;
    }
    let fill = filled / time as f64;
    if fill >= LOW_SM_FILL {
        return;
    }
    let small_ns: i64 = small.iter().map(|&k| s.dur_ns[k as usize]).sum();
    let ids = ctx.longest_first(small);
    let Some(&worst) = ids.first() else { return };
    let names = {
        let mut n: Vec<u32> = ids.iter().map(|&k| s.name[k as usize].0).collect();
        n.sort_unstable();
        n.dedup();
        n.len()
    };
    let worst_blocks = f64_arg(&key, reader.bytes(s.args[worst as usize])).unwrap_or(0.0);
    let device = ctx.gpus.iter().filter(|m| m.kernels > 0).max_by_key(|m| m.kernel_ns);
    let metrics = device.and_then(|m| Some((m.sm_efficiency?, m.utilization))).map_or_else(String::new, |(e, u)| {
        format!("; tb_plugin's Est. SM Efficiency {} vs GPU utilization {}", pct(e), pct(u))
    });
    out.push(finding(
        "low-sm-efficiency",
        Severity::Warn,
        format!(
            "Kernels fill {} of the SMs while they run; {} kernel names launch fewer blocks than SMs ({}; e.g. {} at {:.2} blocks per SM)",
            pct(fill),
            names,
            dur(small_ns),
            crate::text::cut(&ctx.name(worst), 50),
            worst_blocks
        ),
        format!(
            "time-weighted min(blocks per SM, 1) = SM efficiency / utilization {} < {} over {} of non-communication kernels \
             (>= {}){metrics}",
            pct(fill),
            pct(LOW_SM_FILL),
            dur(time),
            dur(LOW_SM_FILL_MIN_KERNEL_NS)
        ),
        "The GPU is busy but most of its SMs are not: these kernels launch fewer thread blocks \
         than the GPU has SMs (small batches, per-sample or per-head loops, reductions over a \
         small output), so the rest of the SMs idle while they run.",
        "Give each kernel more parallel work: larger batches, batch the loop into one call \
         (vmap, bmm, foreach ops), fuse small kernels (torch.compile), or run independent work on \
         other streams beside them.",
        ctx.evidence(ids),
    ));
}
