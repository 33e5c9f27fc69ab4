//! Trace health and host setup: is the trace complete (`partial-trace`), did the
//! host spend long before the first op (`lazy-init`), does it query the device in a loop
//! (`device-query-loop`).
//!
//! Cost: one pass over the slices per rule, a sort of the launch calls' correlation ids.

use super::thresholds::*;
use super::{dur, finding, pct, Ctx, Finding, Severity};
use crate::analysis::stats::median;
use crate::model::{CatClass, ProcessKind, NO_ID};

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    partial_trace(ctx, out);
    lazy_init(ctx, out);
    device_query_loop(ctx, out);
}

/// `partial-trace` (info): the trace is not the whole run. Either the launch calls'
/// correlation ids jump by a median >= [`PARTIAL_CORRELATION_GAP`] (events were sampled out:
/// every CUDA call takes the next id), or >= [`PARTIAL_UNLINKED_SHARE`] of device activities
/// have no launch call although the trace has launch calls (the host side was cut). Each over
/// at least [`PARTIAL_MIN_EVENTS`] events. Evidence: the launch calls after the largest jumps,
/// largest first, or the unlinked activities.
fn partial_trace(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let mut calls: Vec<(u32, u32)> = (0..s.len() as u32)
        .filter(|&i| ctx.trace.class(s.cat[i as usize]) == CatClass::Launch)
        .filter(|&i| s.correlation[i as usize] != NO_ID)
        .map(|i| (s.correlation[i as usize], i))
        .collect();
    calls.sort_unstable();
    calls.dedup_by_key(|c| c.0);
    let jumps: Vec<(u64, u32)> = calls.windows(2).map(|w| (u64::from(w[1].0 - w[0].0), w[1].1)).collect();
    let med = median(&jumps.iter().map(|j| j.0 as i64).collect::<Vec<_>>()).unwrap_or(0.0);
    let unlinked: Vec<u32> = ctx.activities.iter().copied().filter(|&a| super::launch_of(ctx.trace, a).is_none()).collect();
    let acts = ctx.activities.len();
    let sampled = calls.len() >= PARTIAL_MIN_EVENTS && med >= PARTIAL_CORRELATION_GAP as f64;
    let cut = !calls.is_empty()
        && acts >= PARTIAL_MIN_EVENTS
        && unlinked.len() as f64 >= PARTIAL_UNLINKED_SHARE * acts as f64;
    if !sampled && !cut {
        return;
    }
    let share = pct(unlinked.len() as f64 / acts.max(1) as f64);
    let why = format!(
        "median jump between consecutive correlation ids of {} launch calls {med:.0} (>= {PARTIAL_CORRELATION_GAP} \
         means sampled); {} of {acts} device activities ({share}) without a launch call (>= {} means cut)",
        calls.len(),
        unlinked.len(),
        pct(PARTIAL_UNLINKED_SHARE)
    );
    let (title, evidence) = if sampled {
        let mut big = jumps;
        big.sort_by_key(|j| (std::cmp::Reverse(j.0), j.1));
        (
            format!(
                "Sampled trace: correlation ids of {} launch calls jump by {med:.0} (median); most events are missing",
                calls.len()
            ),
            ctx.evidence(big.into_iter().map(|j| j.1)),
        )
    } else {
        (
            format!("Partial trace: {} of {acts} device activities ({share}) have no launch call", unlinked.len()),
            ctx.evidence(unlinked),
        )
    };
    out.push(finding(
        "partial-trace",
        Severity::Info,
        title,
        why,
        "The trace holds only part of what ran (a sampled or filtered trace, or one cut at the \
         start): totals, shares, call counts and per-step numbers describe the part that was \
         kept, not the program.",
        "Read ratios and patterns, not totals; for numbers, capture a complete trace of a few \
         steps (torch.profiler schedule with active=N).",
        evidence,
    ));
}

/// `lazy-init`: from the first host event (the profiler's own span left out) to the first op
/// (the first kernel when there are no ops) takes >= [`LAZY_INIT_MIN_NS`]: one-time setup
/// before any work, usually lazy CUDA initialization (context creation) or imports. Evidence:
/// the host slices that start in that time, longest first.
fn lazy_init(ctx: &Ctx, out: &mut Vec<Finding>) {
    let t = ctx.trace;
    let s = &t.slices;
    let host = |i: usize| {
        t.lanes
            .get(s.lane[i].0 as usize)
            .and_then(|l| t.processes.get(l.process as usize))
            .is_some_and(|p| p.kind == ProcessKind::Cpu)
    };
    let is_profiler = ctx.mask(|n| n.starts_with("PyTorch Profiler"));
    let first = |class: CatClass| {
        (0..s.len()).filter(|&i| t.class(s.cat[i]) == class).map(|i| s.start_ns[i]).min()
    };
    let Some(work) = first(CatClass::CpuOp).or_else(|| first(CatClass::Kernel)) else { return };
    let Some(begin) = (0..s.len())
        .filter(|&i| host(i) && !ctx.is(&is_profiler, i as u32))
        .map(|i| s.start_ns[i])
        .min()
    else {
        return;
    };
    let wait = work - begin;
    if wait < LAZY_INIT_MIN_NS {
        return;
    }
    let before: Vec<u32> = (0..s.len())
        .filter(|&i| host(i) && !ctx.is(&is_profiler, i as u32) && s.start_ns[i] < work)
        .map(|i| i as u32)
        .collect();
    out.push(finding(
        "lazy-init",
        Severity::Warn,
        format!("{} of host time before the first op ({} host slices in it)", dur(wait), before.len()),
        format!("first host event to first op / kernel {} >= {}", dur(wait), dur(LAZY_INIT_MIN_NS)),
        "The program spends a long time before its first op: lazy CUDA initialization (context \
         creation on the first CUDA call), module imports, model loading or compilation.",
        "Initialize CUDA before profiling (torch.cuda.init(), a warm-up step), and start the \
         profiler after setup (schedule with wait/warmup steps).",
        ctx.evidence(ctx.longest_first(before)),
    ));
}

/// Device property / attribute queries (CUDA runtime and driver, HIP).
fn is_device_query(n: &str) -> bool {
    [
        "cudaGetDeviceProperties",
        "cudaDeviceGetAttribute",
        "cuDeviceGetAttribute",
        "cuDeviceGetProperties",
        "hipGetDeviceProperties",
        "hipDeviceGetAttribute",
    ]
    .iter()
    .any(|p| n.starts_with(p))
}

/// `device-query-loop`: >= [`DEVICE_QUERY_MIN_CALLS`] device property / attribute queries
/// ([`is_device_query`]): the answer never changes, so asking thousands of times means a query
/// inside a loop (often `torch.cuda.get_device_properties` in Python code per step or per
/// layer). Evidence: the calls, longest first.
fn device_query_loop(ctx: &Ctx, out: &mut Vec<Finding>) {
    let mask = ctx.mask(is_device_query);
    let ids = ctx.slices_named(&mask, Some(CatClass::Launch));
    if ids.len() < DEVICE_QUERY_MIN_CALLS {
        return;
    }
    let total: i64 = ids.iter().map(|&i| ctx.trace.slices.dur_ns[i as usize]).sum();
    out.push(finding(
        "device-query-loop",
        Severity::Warn,
        format!("{} device property / attribute queries ({} in total)", ids.len(), dur(total)),
        format!("{} calls of cudaGetDeviceProperties / *DeviceGetAttribute / hipGetDeviceProperties* >= {DEVICE_QUERY_MIN_CALLS}", ids.len()),
        "The device's properties never change during a run, yet they are asked for thousands \
         of times: a query inside a loop (torch.cuda.get_device_properties, a library checking \
         the architecture per call).",
        "Query once and cache the result (functools.lru_cache); find the caller with \
         with_stack=True.",
        ctx.evidence(ctx.longest_first(ids)),
    ));
}
