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

/// What makes a recording partial ([`partial`]).
pub(super) struct Partial {
    /// Launch calls' (correlation id, slice), sorted and distinct by id.
    calls: Vec<(u32, u32)>,
    /// Median jump between consecutive correlation ids.
    median_jump: f64,
    /// Device activities without a launch call.
    unlinked: Vec<u32>,
    /// Synchronizing calls >= [`PARTIAL_BLIND_WAIT_NS`] with almost nothing recorded on the
    /// device while they wait: (slice, wait ns, recorded device ns in it), longest first.
    blind: Vec<(u32, i64, i64)>,
    sampled: bool,
    cut: bool,
    /// The file ends before its event array closes (what follows the cut is missing).
    truncated: bool,
}

impl Partial {
    /// Why events are missing all over the trace, if they are: the file is truncated, the
    /// trace is sampled, or its host side was cut. `None` for blind waits alone (the host side
    /// is whole; only device work such as a graph replay went unrecorded).
    pub(super) fn stops_early(&self) -> Option<&'static str> {
        if self.truncated {
            Some("the file is truncated, so the events after the cut are missing")
        } else if self.sampled {
            Some("the trace is sampled, so most events are missing")
        } else if self.cut {
            Some("the trace's host side was cut, so most device activities have no launch call")
        } else {
            None
        }
    }
}

/// Union of every device activity's interval, sorted and disjoint.
fn device_union(ctx: &Ctx) -> Vec<(i64, i64)> {
    let s = &ctx.trace.slices;
    let mut iv: Vec<(i64, i64)> = ctx.activities.iter().map(|&a| (s.start_ns[a as usize], s.end_ns(a as usize))).collect();
    iv.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(iv.len());
    for (a, b) in iv {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Time of the sorted disjoint `union` inside `[a, b)`, ns.
fn covered_ns(union: &[(i64, i64)], a: i64, b: i64) -> i64 {
    let first = union.partition_point(|iv| iv.1 <= a);
    union[first..].iter().take_while(|iv| iv.0 < b).map(|iv| iv.1.min(b) - iv.0.max(a)).sum()
}

/// Calls that block the host until the device is done: [`super::cpu::is_sync_call`] and HIP's
/// `hipMemcpyWithStream` (a synchronous copy on a stream).
fn is_blocking_call(n: &str) -> bool {
    super::cpu::is_sync_call(n) || n == "hipMemcpyWithStream"
}

/// Whether the recording misses device work, and how: the launch calls' correlation ids jump
/// by a median >= [`PARTIAL_CORRELATION_GAP`] (events were sampled out: every CUDA call takes
/// the next id), or >= [`PARTIAL_UNLINKED_SHARE`] of device activities have no launch call
/// although the trace has launch calls (the host side was cut), each over at least
/// [`PARTIAL_MIN_EVENTS`] events; or a synchronizing call waits >= [`PARTIAL_BLIND_WAIT_NS`]
/// while device activities cover < [`PARTIAL_BLIND_MAX_RECORDED_SHARE`] of it: a sync on an
/// idle device returns at once, so the device ran work the trace does not hold (a CUDA-graph
/// replay or kernels launched before the capture, only partly recorded); or the file is
/// truncated. `None` when complete.
pub(super) fn partial(ctx: &Ctx) -> Option<Partial> {
    let s = &ctx.trace.slices;
    let mut calls: Vec<(u32, u32)> = (0..s.len() as u32)
        .filter(|&i| ctx.trace.class(s.cat[i as usize]) == CatClass::Launch)
        .filter(|&i| s.correlation[i as usize] != NO_ID)
        .map(|i| (s.correlation[i as usize], i))
        .collect();
    calls.sort_unstable();
    calls.dedup_by_key(|c| c.0);
    let jumps: Vec<i64> = calls.windows(2).map(|w| i64::from(w[1].0 - w[0].0)).collect();
    let median_jump = median(&jumps).unwrap_or(0.0);
    let unlinked: Vec<u32> = ctx.activities.iter().copied().filter(|&a| super::launch_of(ctx.trace, a).is_none()).collect();
    let acts = ctx.activities.len();
    let sampled = calls.len() >= PARTIAL_MIN_EVENTS && median_jump >= PARTIAL_CORRELATION_GAP as f64;
    let cut = !calls.is_empty()
        && acts >= PARTIAL_MIN_EVENTS
        && unlinked.len() as f64 >= PARTIAL_UNLINKED_SHARE * acts as f64;
    let mask = ctx.mask(is_blocking_call);
    let long: Vec<u32> = ctx
        .slices_named(&mask, Some(CatClass::Launch))
        .into_iter()
        .filter(|&i| s.dur_ns[i as usize] >= PARTIAL_BLIND_WAIT_NS)
        .collect();
    let mut blind: Vec<(u32, i64, i64)> = Vec::new();
    if !long.is_empty() {
        let union = device_union(ctx);
        for i in long {
            let (a, d) = (s.start_ns[i as usize], s.dur_ns[i as usize]);
            let recorded = covered_ns(&union, a, a + d);
            if (recorded as f64) < PARTIAL_BLIND_MAX_RECORDED_SHARE * d as f64 {
                blind.push((i, d, recorded));
            }
        }
    }
    blind.sort_by_key(|b| (std::cmp::Reverse(b.1), b.0));
    let truncated = ctx.trace.truncated;
    (sampled || cut || truncated || !blind.is_empty())
        .then_some(Partial { calls, median_jump, unlinked, blind, sampled, cut, truncated })
}

/// `partial-trace` (info): the trace is not the whole run ([`partial`]). Evidence: the launch
/// calls after the largest correlation jumps, largest first; or the unlinked activities; or
/// the blind waits, longest first. A truncated file alone is `health-data-loss`'s to say.
fn partial_trace(ctx: &Ctx, out: &mut Vec<Finding>) {
    let Some(p) = ctx.partial.as_ref().filter(|p| p.sampled || p.cut || !p.blind.is_empty()) else { return };
    let acts = ctx.activities.len();
    let med = p.median_jump;
    let share = pct(p.unlinked.len() as f64 / acts.max(1) as f64);
    let blind_ns: i64 = p.blind.iter().map(|b| b.1).sum();
    let why = format!(
        "median jump between consecutive correlation ids of {} launch calls {med:.0} (>= {PARTIAL_CORRELATION_GAP} \
         means sampled); {} of {acts} device activities ({share}) without a launch call (>= {} means cut); \
         {} synchronizing calls >= {} wait {} with device activity recorded under {} of it (unrecorded \
         device work); GPU utilization and host wait are not judged on such a recording (no gpu-idle, \
         no overhead-bound)",
        p.calls.len(),
        p.unlinked.len(),
        pct(PARTIAL_UNLINKED_SHARE),
        p.blind.len(),
        dur(PARTIAL_BLIND_WAIT_NS),
        dur(blind_ns),
        pct(PARTIAL_BLIND_MAX_RECORDED_SHARE)
    );
    let (title, evidence) = if p.sampled {
        let mut big: Vec<(u64, u32)> = p.calls.windows(2).map(|w| (u64::from(w[1].0 - w[0].0), w[1].1)).collect();
        big.sort_by_key(|j| (std::cmp::Reverse(j.0), j.1));
        (
            format!(
                "Sampled trace: correlation ids of {} launch calls jump by {med:.0} (median); most events are missing",
                p.calls.len()
            ),
            ctx.evidence(big.into_iter().map(|j| j.1)),
        )
    } else if p.cut {
        (
            format!("Partial trace: {} of {acts} device activities ({share}) have no launch call", p.unlinked.len()),
            ctx.evidence(p.unlinked.iter().copied()),
        )
    } else {
        let (first, d, recorded) = p.blind[0];
        (
            format!(
                "Unrecorded device work: {} synchronizing calls wait {} with almost no device activity recorded \
                 (longest {} {}, {} recorded)",
                p.blind.len(),
                dur(blind_ns),
                ctx.name(first),
                dur(d),
                dur(recorded)
            ),
            ctx.evidence(p.blind.iter().map(|b| b.0)),
        )
    };
    out.push(finding(
        "partial-trace",
        Severity::Info,
        title,
        why,
        "The trace holds only part of what ran (a sampled or filtered trace, one cut at the \
         start, or device work such as a CUDA-graph replay launched before the capture and only \
         partly recorded): totals, shares, call counts, GPU idle time and per-step numbers \
         describe the part that was kept, not the program.",
        "Read ratios and patterns, not totals; for numbers, capture a complete trace of a few \
         steps (torch.profiler schedule with active=N, started before the work it should see).",
        evidence,
    ));
}

/// `lazy-init`: from the first host event (the profiler's own span left out) to the first op
/// (the first kernel when there are no ops) takes >= [`LAZY_INIT_MIN_NS`]: one-time setup
/// before any work, usually lazy CUDA initialization (context creation) or imports. Or the
/// setup happens inside the first ops: runtime calls that launch nothing, made before the
/// first device activity starts, last >= [`LAZY_INIT_CALL_MIN_NS`] (context creation in the
/// first `aten::to` or `cudaFree`). Evidence: the host slices before the first op, longest
/// first; or those calls, longest first.
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
    let (title, why, ids) = if wait >= LAZY_INIT_MIN_NS {
        let before: Vec<u32> = (0..s.len())
            .filter(|&i| host(i) && !ctx.is(&is_profiler, i as u32) && s.start_ns[i] < work)
            .map(|i| i as u32)
            .collect();
        (
            format!("{} of host time before the first op ({} host slices in it)", dur(wait), before.len()),
            format!("first host event to first op / kernel {} >= {}", dur(wait), dur(LAZY_INIT_MIN_NS)),
            before,
        )
    } else {
        let first_activity = ctx.activities.iter().map(|&a| s.start_ns[a as usize]).min().unwrap_or(i64::MAX);
        let setup: Vec<u32> = (0..s.len() as u32)
            .filter(|&i| t.class(s.cat[i as usize]) == CatClass::Launch)
            .filter(|&i| s.start_ns[i as usize] < first_activity && s.dur_ns[i as usize] >= LAZY_INIT_CALL_MIN_NS)
            .filter(|&i| ctx.launched(i).is_none())
            .collect();
        let Some(&longest) = ctx.longest_first(setup.clone()).first() else { return };
        let total: i64 = setup.iter().map(|&i| s.dur_ns[i as usize]).sum();
        let inside = crate::model::link::enclosing_op(t, longest).map(|op| format!(" inside {}", ctx.name(op))).unwrap_or_default();
        (
            format!(
                "{} in {} runtime calls before the first device activity (longest {} {}{inside})",
                dur(total),
                setup.len(),
                ctx.name(longest),
                dur(s.dur_ns[longest as usize])
            ),
            format!(
                "first host event to first op {} < {}, but {} runtime calls that launch nothing, before the \
                 first device activity, each >= {}: {} in all",
                dur(wait),
                dur(LAZY_INIT_MIN_NS),
                setup.len(),
                dur(LAZY_INIT_CALL_MIN_NS),
                dur(total)
            ),
            setup,
        )
    };
    out.push(finding(
        "lazy-init",
        Severity::Warn,
        title,
        why,
        "The program spends a long time on one-time setup: lazy CUDA initialization (context \
         creation on the first CUDA call, often inside the first op such as .to(\"cuda\")), \
         module imports, model loading or compilation.",
        "Initialize CUDA before profiling (torch.cuda.init(), a warm-up step), and start the \
         profiler after setup (schedule with wait/warmup steps).",
        ctx.evidence(ctx.longest_first(ids)),
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
        format!(
            "truncated: {}; data-losing diagnostics: {}{}",
            h.truncated,
            if kinds.is_empty() { "none".into() } else { kinds.join(", ") },
            if h.truncated {
                "; findings measured over the events are told as info (they describe the part that \
                 was read), and GPU idle time is not judged (no gpu-idle, no overhead-bound)"
            } else {
                ""
            }
        ),
        "Part of the file is not in what you see: a truncated file (the profiler or a copy was \
         interrupted) ends early, and skipped events leave gaps. `kinetoscope info` lists each \
         kind with the byte offset of its first occurrence.",
        "Re-export or re-copy the trace (check free disk space and that the profiler finished \
         writing); look at the first offset `kinetoscope info` names for what was malformed.",
        Evidence::default(),
    ));
}
