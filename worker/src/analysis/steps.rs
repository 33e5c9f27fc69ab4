//! Profiler steps: the host `ProfilerStep#N` list, each step's CPU span, GPU span and step span,
//! duration statistics, the first-step cold-start ratio, and a per-step time breakdown.
//!
//! **Inputs and outputs.** A loaded [`Trace`]; times are i64 ns from the trace origin.
//! [`profiler_steps`] lists the host annotations; [`analyze`] returns [`Steps`].
//!
//! **Rules** (tb_plugin's, `event_parser.py`, so the list equals its `steps` output):
//! - A step is a host `ProfilerStep#N` slice (`user_annotation`; 2021 traces: `Operator`).
//!   GPU-side mirrors (`gpu_user_annotation` of the same name) are not steps, so each step is
//!   counted once (tb_plugin's event map would count the mirror as a second step).
//! - **CPU span**: the annotation's `[start, end]`.
//! - **GPU span**: first start to last end of the device activities (kernel, memcpy, memset)
//!   launched by a launch call lying wholly inside the CPU span (start >= step start,
//!   end <= step end), on any thread. Launch calls are `cuda_runtime` and `cuda_driver`
//!   (tb_plugin ignores `cuda_driver`, so it misses `cuLaunchKernel` work). A step that
//!   launched nothing takes the span of its GPU-side mirrors, if the trace has them.
//! - **Step span** (what the step "costs", what the breakdown divides): when any step has a
//!   GPU span, start = max(CPU start, end of the previous step span), end = max(CPU end, GPU
//!   end). Before the first step, the "previous end" is the latest end of device work that no
//!   step launched and that ended before the first step's GPU start. Without GPU work the step
//!   span is the CPU span.
//! - **Incomplete tail**: as tb_plugin, trailing steps that launched no device work, and a
//!   last step that launched < 80% of the device activities of the one before, are flagged
//!   `incomplete` (the profiler likely stopped before their kernels ran). They stay in the list
//!   (never dropped silently) but not in the statistics.
//! - Statistics ([`super::stats`]) are over the step spans' durations of complete steps;
//!   cold-start ratio = first duration / median of the others.
//! - With a range, steps whose CPU start lies in `[t0, t1)` are listed; the spans are those of
//!   the whole trace (a step's start depends on the step before it).
//!
//! **Cost.** O(n) to collect launches and roles, O(d log d) to order the d linked device
//! activities by launch time, O(log d + k) per step for its k activities.
//!
//! References: docs/definitions.md §1 and §3; tb_plugin `StepParser._find_device_steps`
//! and `_update_steps_duration`.

use super::breakdown::{Breakdown, Roles};
use super::stats::{median, Summary};
use crate::model::{CatClass, Trace, NONE};
use std::borrow::Borrow;

/// One `ProfilerStep#N` on the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// N.
    pub number: u64,
    /// The annotation slice.
    pub slice: u32,
    /// Start, ns from origin.
    pub start_ns: i64,
    /// End, ns from origin.
    pub end_ns: i64,
}

/// Every host `ProfilerStep#N` (`user_annotation` or 2021 `Operator`), ordered by start; with
/// a step marker ([`Trace::step_marker`]), the marker's slices instead, numbered in time order.
///
/// Names are checked once per distinct string, not once per slice: on a 1 GB trace this scan
/// runs before the first timeline paint.
pub fn profiler_steps(trace: &Trace) -> Vec<Step> {
    let s = &trace.slices;
    let marker = trace.step_marker.as_deref().map(|m| match m.strip_suffix('*') {
        Some(prefix) => (prefix.as_bytes(), true),
        None => (m.as_bytes(), false),
    });
    // Per string: None = unknown yet, Some(None) = not a step name, Some(Some(n)) = step n.
    let mut seen: Vec<Option<Option<u64>>> = vec![None; trace.strings.len()];
    let mut steps = Vec::new();
    for i in 0..s.len() {
        let Some(known) = seen.get_mut(s.name[i].0 as usize) else {
            continue;
        };
        if *known == Some(None) || !matches!(trace.class(s.cat[i]), CatClass::Annotation | CatClass::CpuOp) {
            continue;
        }
        let number = *known.get_or_insert_with(|| {
            let name = trace.strings.bytes_of(s.name[i]);
            match marker {
                Some((m, prefix)) => (name == m || (prefix && name.starts_with(m))).then_some(0),
                None => step_number(name),
            }
        });
        let Some(number) = number else { continue };
        steps.push(Step { number, slice: i as u32, start_ns: s.start_ns[i], end_ns: s.end_ns(i) });
    }
    steps.sort_by_key(|st| (st.start_ns, st.number));
    if marker.is_some() {
        // Steps do not overlap: a marker nested in another (recursion) is not a step.
        let mut end = i64::MIN;
        steps.retain(|st| {
            let outer = st.start_ns >= end;
            end = end.max(st.end_ns);
            outer
        });
        for (n, st) in steps.iter_mut().enumerate() {
            st.number = n as u64;
        }
    }
    steps
}

/// How a step is named to people: `ProfilerStep#N`, or `step N` when a marker defines the
/// steps ([`Trace::step_marker`]).
pub fn step_name(trace: &Trace, number: u64) -> String {
    match trace.step_marker {
        Some(_) => format!("step {number}"),
        None => format!("ProfilerStep#{number}"),
    }
}

/// Step marker candidates for a trace without `ProfilerStep#N`: names of host annotations
/// (`user_annotation`) that occur at least twice, with their counts, most frequent first (then
/// by name), at most `limit`. One pass over the slices, counting per distinct string.
pub fn marker_candidates(trace: &Trace, limit: usize) -> Vec<(String, u64)> {
    let s = &trace.slices;
    let mut counts = vec![0u64; trace.strings.len()];
    for i in 0..s.len() {
        if trace.class(s.cat[i]) == CatClass::Annotation {
            if let Some(c) = counts.get_mut(s.name[i].0 as usize) {
                *c += 1;
            }
        }
    }
    let mut out: Vec<(String, u64)> = counts
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c >= 2)
        .filter_map(|(id, &c)| {
            let name = trace.strings.get(crate::model::StrId(u32::try_from(id).ok()?)).into_owned();
            (step_number(name.as_bytes()).is_none()).then_some((name, c))
        })
        .collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out.truncate(limit);
    out
}

fn step_number(name: &[u8]) -> Option<u64> {
    std::str::from_utf8(name.strip_prefix(b"ProfilerStep#")?).ok()?.parse().ok()
}

/// Where a step's GPU span comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuSource {
    /// Device activities launched from within the step.
    Launches,
    /// The step's GPU-side `ProfilerStep#N` mirror (no linked launches).
    Mirror,
    /// No device work found for the step.
    None,
}

/// A step with its spans and breakdown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepSpan {
    /// N of `ProfilerStep#N`.
    pub number: u64,
    /// The host annotation slice.
    pub slice: u32,
    /// CPU span start, ns from origin.
    pub cpu_start_ns: i64,
    /// CPU span end, ns.
    pub cpu_end_ns: i64,
    /// GPU span `(start, end)`, ns; `None` when the step has no device work.
    pub gpu: Option<(i64, i64)>,
    /// Where `gpu` comes from.
    pub gpu_source: GpuSource,
    /// Device activities launched from within the step.
    pub device_activities: u32,
    /// Step span start (see the module rules), ns.
    pub start_ns: i64,
    /// Step span end, ns.
    pub end_ns: i64,
    /// In the incomplete tail (see the module rules): listed, not in the statistics.
    pub incomplete: bool,
    /// Breakdown of the step span; its parts sum to `end_ns - start_ns`.
    pub breakdown: Breakdown,
}

impl StepSpan {
    /// Step span duration, ns.
    pub fn dur_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }

    /// CPU span duration, ns.
    pub fn cpu_dur_ns(&self) -> i64 {
        self.cpu_end_ns - self.cpu_start_ns
    }

    /// GPU span duration, ns (0 without device work).
    pub fn gpu_dur_ns(&self) -> i64 {
        self.gpu.map_or(0, |(a, b)| b - a)
    }
}

/// Statistics of step durations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepStats {
    /// Over the step spans of complete steps, ns.
    pub duration: Summary,
    /// First complete step's duration / median of the other complete steps (needs >= 2).
    pub cold_start_ratio: Option<f64>,
}

/// The step analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct Steps {
    /// Steps ordered by CPU start.
    pub steps: Vec<StepSpan>,
    /// `None` without complete steps.
    pub stats: Option<StepStats>,
}

/// Steps, spans, breakdowns and statistics; `range`: only steps whose CPU start is in
/// `[t0, t1)` ns (spans are computed over the whole trace first).
pub fn analyze(trace: &Trace, range: Option<(i64, i64)>) -> Steps {
    analyze_with(trace, &Roles::new(trace), range)
}

/// [`analyze`] with breakdown roles already built (callers that also break down ranges).
pub fn analyze_with(trace: &Trace, roles: &Roles, range: Option<(i64, i64)>) -> Steps {
    let host = profiler_steps(trace);
    let mut spans = gpu_spans(trace, &host);
    let prev = prev_step_end(trace, &spans);
    step_spans(&mut spans, prev);
    flag_tail(&mut spans);
    if let Some((t0, t1)) = range {
        spans.retain(|s| s.cpu_start_ns >= t0 && s.cpu_start_ns < t1);
    }
    for s in &mut spans {
        s.breakdown = roles.breakdown(s.start_ns, s.end_ns);
    }
    let durs: Vec<i64> = spans
        .iter()
        .filter(|s| !s.incomplete)
        .map(StepSpan::dur_ns)
        .collect();
    let stats = Summary::of(&durs).map(|duration| StepStats {
        duration,
        cold_start_ratio: match durs.split_first() {
            Some((&first, rest)) => median(rest).filter(|&m| m > 0.0).map(|m| first as f64 / m),
            None => None,
        },
    });
    Steps {
        steps: spans,
        stats,
    }
}

/// A device activity linked to its launch call.
struct Linked {
    launch_start: i64,
    launch_end: i64,
    start: i64,
    end: i64,
    slice: u32,
}

/// Per step: CPU span and GPU span (launches first, mirrors as fallback); step span = CPU span.
fn gpu_spans(trace: &Trace, host: &[Step]) -> Vec<StepSpan> {
    let linked = linked_activities(trace);
    let mirrors = mirror_spans(trace);
    host.iter()
        .map(|st| {
            let first = linked.partition_point(|l| l.launch_start < st.start_ns);
            let mut gpu: Option<(i64, i64)> = None;
            let mut count = 0u32;
            for l in linked[first..]
                .iter()
                .take_while(|l| l.launch_start <= st.end_ns)
            {
                if l.launch_end <= st.end_ns {
                    count += 1;
                    gpu =
                        Some(gpu.map_or((l.start, l.end), |(a, b)| (a.min(l.start), b.max(l.end))));
                }
            }
            let mut source = if gpu.is_some() {
                GpuSource::Launches
            } else {
                GpuSource::None
            };
            if gpu.is_none() {
                if let Ok(k) = mirrors.binary_search_by_key(&st.number, |m| m.0) {
                    gpu = mirrors.get(k).map(|m| m.1);
                    source = GpuSource::Mirror;
                }
            }
            StepSpan {
                number: st.number,
                slice: st.slice,
                cpu_start_ns: st.start_ns,
                cpu_end_ns: st.end_ns,
                gpu,
                gpu_source: source,
                device_activities: count,
                start_ns: st.start_ns,
                end_ns: st.end_ns,
                incomplete: false,
                breakdown: Breakdown::default(),
            }
        })
        .collect()
}

/// Device activities with a launch link, ordered by launch start.
fn linked_activities(trace: &Trace) -> Vec<Linked> {
    let s = &trace.slices;
    let mut out: Vec<Linked> = (0..s.len())
        .filter(|&i| s.launch[i] != NONE && trace.class(s.cat[i]).is_device_activity())
        .filter_map(|i| {
            let l = s.launch[i] as usize;
            Some(Linked {
                launch_start: *s.start_ns.get(l)?,
                launch_end: *s.start_ns.get(l)? + *s.dur_ns.get(l)?,
                start: s.start_ns[i],
                end: s.end_ns(i),
                slice: i as u32,
            })
        })
        .collect();
    out.sort_unstable_by_key(|l| (l.launch_start, l.slice));
    out
}

/// Union span of the GPU-side `ProfilerStep#N` mirrors per N, ordered by N.
fn mirror_spans(trace: &Trace) -> Vec<(u64, (i64, i64))> {
    let s = &trace.slices;
    let mut v: Vec<(u64, (i64, i64))> = (0..s.len())
        .filter(|&i| trace.class(s.cat[i]) == CatClass::GpuAnnotation)
        .filter_map(|i| {
            Some((
                step_number(trace.strings.bytes_of(s.name[i]))?,
                (s.start_ns[i], s.end_ns(i)),
            ))
        })
        .collect();
    v.sort_unstable();
    v.dedup_by(|b, a| {
        // `a` is kept: widen it with `b` when the step number repeats.
        let same = a.0 == b.0;
        if same {
            a.1 = (a.1 .0.min(b.1 .0), a.1 .1.max(b.1 .1));
        }
        same
    });
    v
}

/// End of the "previous step" before the first one: the first step's CPU start, pushed later by
/// device work launched outside every step that ended before the first step's GPU start.
/// `None` when no step has device work (step spans stay CPU spans).
fn prev_step_end(trace: &Trace, spans: &[StepSpan]) -> Option<i64> {
    let first = spans.first()?;
    if !spans.iter().any(|s| s.gpu.is_some()) {
        return None;
    }
    let mut prev = first.cpu_start_ns;
    let Some((first_gpu, _)) = first.gpu else {
        return Some(prev);
    };
    let s = &trace.slices;
    for i in 0..s.len() {
        if !trace.class(s.cat[i]).is_device_activity() || s.end_ns(i) >= first_gpu {
            continue;
        }
        if !launched_in_step(trace, i, spans) {
            prev = prev.max(s.end_ns(i));
        }
    }
    Some(prev)
}

/// Whether device activity `i` was launched from within some step's CPU span.
fn launched_in_step(trace: &Trace, i: usize, spans: &[StepSpan]) -> bool {
    launching_step(trace, i, spans).is_some()
}

/// Index in `spans` (ordered, CPU spans disjoint) of the step that launched device activity
/// `i`: the one whose CPU span holds its whole launch call, as for the step's GPU span
/// (tb_plugin's rule). `None` when unlinked or launched outside every step. GPU work belongs
/// to the step that launched it, not to the step it happens to run in.
pub fn launching_step<S: Borrow<StepSpan>>(trace: &Trace, i: usize, spans: &[S]) -> Option<usize> {
    let s = &trace.slices;
    let l = *s.launch.get(i)? as usize;
    let (ls, ld) = (*s.start_ns.get(l)?, *s.dur_ns.get(l)?);
    let k = spans.partition_point(|st| st.borrow().cpu_start_ns <= ls);
    let j = k.checked_sub(1)?;
    let st: &StepSpan = spans.get(j)?.borrow();
    (ls + ld <= st.cpu_end_ns).then_some(j)
}

/// Step spans from CPU and GPU spans (tb_plugin's `_update_steps_duration`).
fn step_spans(spans: &mut [StepSpan], prev: Option<i64>) {
    let Some(mut prev) = prev else { return };
    for s in spans {
        let start = prev.max(s.cpu_start_ns);
        let end = match s.gpu {
            Some((_, gpu_end)) => s.cpu_end_ns.max(gpu_end),
            None => s.cpu_end_ns,
        };
        s.start_ns = start;
        s.end_ns = end.max(start);
        prev = s.end_ns;
    }
}

/// Flags the incomplete tail (tb_plugin's tail removal, see the module rules).
fn flag_tail(spans: &mut [StepSpan]) {
    if spans.len() < 2 || !spans.iter().any(|s| s.gpu.is_some()) {
        return;
    }
    let counts: Vec<u32> = spans.iter().map(|s| s.device_activities).collect();
    let Some(last) = counts.iter().rposition(|&c| c > 0) else {
        return;
    };
    let mut keep = last + 1;
    if last > 0 && f64::from(counts[last - 1]) * 0.8 > f64::from(counts[last]) {
        keep = last;
    }
    for s in spans.iter_mut().skip(keep) {
        s.incomplete = true;
    }
}
