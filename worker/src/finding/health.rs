//! Trace health and host setup: is the trace complete (`partial-trace`), did the
//! host spend long before the first op (`lazy-init`), does it query the device in a loop
//! (`device-query-loop`); the `health-*` rules read [`crate::analysis::health`]: unlinked
//! launches and activities, activities outside the capture window, overlapping on a stream or
//! starting before their launch call, and what the parse lost.
//!
//! Cost: one pass over the slices per rule, a sort of the launch calls' correlation ids, the
//! health analysis once (linear, plus a sort of the problem ids).

use super::thresholds::*;
use super::{dur, finding, pct, Ctx, Evidence, Finding, Severity};
use crate::analysis::health::{self, Health, TIMER_TOLERANCE_NS};
use crate::analysis::stats::median;
use crate::model::{CatClass, ProcessKind, NO_ID};

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    partial_trace(ctx, out);
    lazy_init(ctx, out);
    device_query_loop(ctx, out);
    let h = health::analyze(ctx.trace);
    unlinked(ctx, &h, out);
    outside_window(ctx, &h, out);
    stream_overlap(ctx, &h, out);
    clock_skew(ctx, &h, out);
    data_loss(&h, out);
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

/// `health-unlinked` (info): >= [`HEALTH_UNLINKED_SHARE`] of >= [`HEALTH_MIN_EVENTS`] kernel /
/// graph launch calls have no device activity, or as large a share of device activities have no
/// launch call. Evidence: the unlinked launch calls, then the unlinked activities, time order.
fn unlinked(ctx: &Ctx, h: &Health, out: &mut Vec<Finding>) {
    let over = |c: &health::Check| c.of >= HEALTH_MIN_EVENTS && c.share() >= HEALTH_UNLINKED_SHARE;
    let (calls, acts) = (&h.launches_without_activity, &h.activities_without_launch);
    if !over(calls) && !over(acts) {
        return;
    }
    let title = format!(
        "{} of {} launch calls ({}) ran nothing, {} of {} device activities ({}) have no launch call",
        calls.count(),
        calls.of,
        pct(calls.share()),
        acts.count(),
        acts.of,
        pct(acts.share())
    );
    let why = format!(
        "launch calls without a device activity {}, device activities without a launch call {} \
         ({} of them with a correlation id below every launch call's: launched before the capture); \
         either >= {} over >= {HEALTH_MIN_EVENTS} events fires",
        pct(calls.share()),
        pct(acts.share()),
        h.launched_before_capture,
        pct(HEALTH_UNLINKED_SHARE)
    );
    out.push(finding(
        "health-unlinked",
        Severity::Info,
        title,
        why,
        "Launches and the work they queued are not paired. Activities without a launch call were \
         usually queued before the profiler started (their correlation ids are lower than every \
         launch call's) or the host side was filtered out; launch calls without an activity were \
         made during CUDA graph capture (captured, not run), right before the profiler stopped, \
         or their activities were dropped (CUPTI buffer full). Per-op device time and the \
         launch -> kernel arrows miss these events.",
        "Start the profiler after a warm-up step and synchronize before it stops \
         (torch.cuda.synchronize()); for graph capture, profile the replays rather than the \
         capture.",
        ctx.evidence(calls.ids.iter().chain(&acts.ids).copied()),
    ));
}

/// `health-outside-window` (info): >= [`HEALTH_OUTSIDE_SHARE`] of >= [`HEALTH_MIN_EVENTS`]
/// device activities start before the first host slice or after the last host slice ends.
/// Evidence: those activities, time order.
fn outside_window(ctx: &Ctx, h: &Health, out: &mut Vec<Finding>) {
    let c = &h.outside_window;
    let Some((w0, w1)) = h.window_ns else { return };
    if c.of < HEALTH_MIN_EVENTS || c.share() < HEALTH_OUTSIDE_SHARE {
        return;
    }
    let s = &ctx.trace.slices;
    let early = c.ids.iter().filter(|&&a| s.start_ns.get(a as usize).is_some_and(|&t| t < w0)).count();
    out.push(finding(
        "health-outside-window",
        Severity::Info,
        format!("{} of {} device activities ({}) run outside the host's capture window", c.count(), c.of, pct(c.share())),
        format!(
            "window {} .. {} (first host slice start to last host slice end); {early} start before it, \
             {} after it; {} >= {}",
            dur(w0),
            dur(w1),
            c.count() - early as u64,
            pct(c.share()),
            pct(HEALTH_OUTSIDE_SHARE)
        ),
        "The host side of the trace does not cover the device side. Activities after the window \
         are work still queued when the host events end (the GPU ran behind, often replayed \
         CUDA graphs); activities before it were queued before the capture, or the clocks \
         disagree. Steps, breakdowns and utilization only count what falls in their host ranges.",
        "Synchronize before the profiler stops (torch.cuda.synchronize() in the last step) and \
         start it after a warm-up step; read the device time of the first and last step with care.",
        ctx.evidence(c.ids.iter().copied()),
    ));
}

/// `health-stream-overlap` (warn): a device activity starts more than
/// [`TIMER_TOLERANCE_NS`] before the previous activity on its stream ends. One stream runs its
/// work in order, so any overlap is either programmatic dependent launch or broken times.
/// Evidence: the overlapping activities, largest overlap first.
fn stream_overlap(ctx: &Ctx, h: &Health, out: &mut Vec<Finding>) {
    let c = &h.stream_overlaps;
    if c.ids.is_empty() {
        return;
    }
    out.push(finding(
        "health-stream-overlap",
        Severity::Warn,
        format!("{} device activities overlap the previous one on their stream (largest {})", c.count(), dur(h.max_overlap_ns)),
        format!(
            "{} of {} activities start before the previous activity on the same device and stream \
             ends, by more than {} (timer rounding); largest overlap {}",
            c.count(),
            c.of,
            dur(TIMER_TOLERANCE_NS),
            dur(h.max_overlap_ns)
        ),
        "Work on one stream runs in order, so overlapping activities mean either programmatic \
         dependent launch (Hopper and later: a kernel may start while the previous one finishes) \
         or timestamps that cannot be trusted (clock trouble, a merged or edited trace). Busy \
         time, idle gaps and kernel durations on that stream are off by the overlap.",
        "If the kernels use programmatic dependent launch (cudaLaunchKernelEx with the \
         programmatic stream serialization attribute) this is expected; otherwise re-capture and \
         compare, and check how the trace was produced or merged.",
        ctx.evidence(c.ids.iter().copied()),
    ));
}

/// `health-clock-skew` (warn): a device activity starts more than [`TIMER_TOLERANCE_NS`]
/// before its launch call starts, which cannot happen on one clock. The offset estimate is the
/// smallest forward shift of the device clock that puts every activity after its launch call
/// (a lower bound of the skew). Evidence: those activities, earliest relative to their launch
/// first.
fn clock_skew(ctx: &Ctx, h: &Health, out: &mut Vec<Finding>) {
    let c = &h.before_launch;
    let Some(offset) = h.clock_offset_ns else { return };
    if c.ids.is_empty() {
        return;
    }
    out.push(finding(
        "health-clock-skew",
        Severity::Warn,
        format!(
            "{} device activities start before their launch call; CPU/GPU clock offset >= {}",
            c.count(),
            dur(offset)
        ),
        format!(
            "{} of {} linked activities ({}) start more than {} before their launch call; the \
             earliest by {} (the smallest shift of the device clock that puts every activity after \
             its launch)",
            c.count(),
            c.of,
            pct(c.share()),
            dur(TIMER_TOLERANCE_NS),
            dur(offset)
        ),
        "The CPU and GPU timestamps come from clocks that disagree (CUPTI's GPU-to-CPU clock \
         conversion drifted, or the trace was merged from different hosts). Launch-to-kernel \
         latency, host-wait idle classes and anything that compares host and device times are \
         wrong by about the offset.",
        "Re-capture (recent PyTorch / CUPTI versions correct the drift over long captures), keep \
         captures short, and compare only device times with each other until then.",
        ctx.evidence(c.ids.iter().copied()),
    ));
}

/// `health-data-loss` (warn): the input was truncated, or the parse skipped events or values
/// it could not represent (data-losing or error diagnostics). No slices: what was lost is not
/// in the model.
fn data_loss(h: &Health, out: &mut Vec<Finding>) {
    let lost: u64 = h.skipped.iter().map(|s| s.1).sum();
    if !h.truncated && lost == 0 {
        return;
    }
    let kinds: Vec<String> = h.skipped.iter().map(|(k, n)| format!("{k} {n}")).collect();
    out.push(finding(
        "health-data-loss",
        Severity::Warn,
        if h.truncated {
            format!("Truncated file ({lost} data-losing parse diagnostics in all)")
        } else {
            format!("{lost} events or values the parse skipped or could not represent")
        },
        format!("truncated: {}; data-losing diagnostics: {}", h.truncated, if kinds.is_empty() { "none".into() } else { kinds.join(", ") }),
        "Part of the file is not in what you see: a truncated file (the profiler or a copy was \
         interrupted) ends early, and skipped events leave gaps. `kinetoscope info` lists each \
         kind with the byte offset of its first occurrence.",
        "Re-export or re-copy the trace (check free disk space and that the profiler finished \
         writing); look at the first offset `kinetoscope info` names for what was malformed.",
        Evidence::default(),
    ));
}
