//! What acting on a finding could buy: the time of its evidence that lies on the critical
//! path of the steps (an upper bound on what fixing it saves), and the severity rule that
//! follows from it (docs/findings.md "Impact and severity").
//!
//! A path segment counts for a finding when its slice is an evidence slice, lies below one on
//! its lane (an op's launch calls), or is a device activity launched by one; for rules whose
//! evidence is whole steps (GPU idle, overhead- or compute-bound, low MFU), the path's time in
//! the classes their remedy shortens. Without steps the capture window's path is the "step".

use super::{Finding, Severity};
use crate::analysis::critical_path::edit::under;
use crate::analysis::critical_path::{BoundBy, PathSegment, StepPath};
use crate::model::strings::FxHashMap;
use crate::model::{Trace, NONE};
use crate::text::{duration, percent};

/// A warning whose impact is under this share of step time is told as info ("negligible").
pub const NEGLIGIBLE_PCT: f64 = 2.0;

/// Rules about something other than step time (memory, the trace's own health): their
/// severity never follows the critical path.
const NOT_ABOUT_TIME: &[&str] =
    &["activation-peak", "memory-fragmentation", "memory-leak", "memory-near-limit", "no-backward", "optimizer-state-peak", "partial-trace"];

/// Rules whose evidence is whole steps: their impact is the path's time in the classes their
/// remedy shortens, not everything under the step.
fn classes_of(rule: &str) -> Option<&'static [BoundBy]> {
    use BoundBy as B;
    match rule {
        "gpu-idle" | "overhead-bound" => Some(&[B::CpuOp, B::CpuOverhead, B::LaunchDelay]),
        "compute-bound" | "low-mfu" => Some(&[B::GpuCompute]),
        _ => None,
    }
}

/// Rules whose evidence shows each cost beside the kernel it precedes (a query and the kernel
/// it sized): the kernels are context, only the host calls are the cost.
const KERNELS_AS_CONTEXT: &[&str] = &["occupancy-query"];

/// Rules about one step against the others (their evidence is that step): no per-step impact.
const ABOUT_ONE_STEP: &[&str] = &["slow-step", "cold-start-step"];

/// A finding's evidence on the critical path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Impact {
    /// ns of evidence on the paths of all steps.
    pub ns: i64,
    /// The same per step (over every step's path).
    pub per_step_ns: i64,
    /// The mean step's wall time, ns.
    pub step_ns: i64,
    /// `ns` as a share of all steps' wall time, %.
    pub pct: f64,
    /// Steps whose path holds some of it.
    pub steps: u32,
}

/// The impact of evidence slices `all` (sorted), or `None` without slices or paths.
pub fn of(trace: &Trace, paths: &[StepPath], all: &[u32]) -> Option<Impact> {
    if all.is_empty() || paths.is_empty() {
        return None;
    }
    let s = &trace.slices;
    let mut memo: FxHashMap<u32, bool> = FxHashMap::default();
    let mut counts = |slice: u32| -> bool {
        if let Some(&hit) = memo.get(&slice) {
            return hit;
        }
        let launch = s.launch.get(slice as usize).copied().unwrap_or(NONE);
        let hit = under(trace, all, slice) || (launch != NONE && under(trace, all, launch));
        memo.insert(slice, hit);
        hit
    };
    Some(sum(paths, |g| g.slice != NONE && counts(g.slice)))
}

/// The path's time in `classes`, or `None` without paths.
pub fn of_classes(paths: &[StepPath], classes: &[BoundBy]) -> Option<Impact> {
    (!paths.is_empty()).then(|| sum(paths, |g| classes.contains(&g.class)))
}

/// The time of the path segments `on` picks, over every step.
fn sum(paths: &[StepPath], mut on: impl FnMut(&PathSegment) -> bool) -> Impact {
    let (mut ns, mut steps, mut wall) = (0i64, 0u32, 0i64);
    for p in paths {
        wall += p.wall_ns();
        let here: i64 = p.segments.iter().filter(|g| on(g)).map(|g| g.end_ns - g.start_ns).sum();
        ns += here;
        steps += u32::from(here > 0);
    }
    let n = paths.len().max(1) as i64;
    let pct = if wall > 0 { 100.0 * ns as f64 / wall as f64 } else { 0.0 };
    Impact { ns, per_step_ns: ns / n, step_ns: wall / n, pct, steps }
}

/// Sets each finding's impact from its evidence, says it in `why`, and tells a warning under
/// [`NEGLIGIBLE_PCT`] of step time as info.
pub fn apply(trace: &Trace, paths: &[StepPath], findings: &mut [Finding]) {
    for f in findings.iter_mut() {
        f.impact = match classes_of(f.rule) {
            _ if ABOUT_ONE_STEP.contains(&f.rule) => None,
            Some(classes) => of_classes(paths, classes),
            None if KERNELS_AS_CONTEXT.contains(&f.rule) => {
                let cost: Vec<u32> =
                    f.evidence.all.iter().copied().filter(|&i| !trace.class(trace.slices.cat[i as usize]).is_device_activity()).collect();
                of(trace, paths, &cost)
            }
            None => of(trace, paths, &f.evidence.all),
        };
        // A removed wait can save more than its own time on the path (module docs of
        // `remedy`): the impact is then what the remedy saves.
        if let (Some(i), Some(r)) = (f.impact.as_mut(), f.remedy.as_ref()) {
            if r.removes_waits && r.saved_ns > i.ns {
                *i = Impact { ns: r.saved_ns, per_step_ns: r.per_step_ns, pct: r.pct, ..*i };
            }
        }
        // The full list was only needed here; the evidence keeps its capped, ordered ids.
        f.evidence.all = Vec::new();
        let Some(i) = f.impact else {
            continue;
        };
        let share = if i.pct < 1.0 { format!("{:.2}%", i.pct) } else { percent(i.pct / 100.0) };
        let per_step = format!("{} of {} per step ({share})", duration(i.per_step_ns), duration(i.step_ns));
        let about_time = !f.rule.starts_with("health-") && !NOT_ABOUT_TIME.contains(&f.rule);
        if !about_time {
            // Fixing a memory or recording problem is not about step time: no saving to tell.
            continue;
        }
        // The rules' `why` is measurements, often without a closing stop.
        if !f.why.trim_end().ends_with(['.', '!', '?']) {
            f.why.push('.');
        }
        if f.severity == Severity::Warn && i.pct < NEGLIGIBLE_PCT {
            f.severity = Severity::Info;
            f.why.push_str(&format!(
                " Negligible: {per_step} on the critical path, under {NEGLIGIBLE_PCT}% of step time, so not a warning."
            ));
        } else if i.ns > 0 {
            f.why.push_str(&format!(" On the critical path: fixing it would save up to {per_step}."));
        } else {
            f.why.push_str(" None of it is on the critical path: fixing it alone would not shorten a step.");
        }
        if let Some(r) = &f.remedy {
            f.why.push_str(&super::remedy::sentence(r));
        }
    }
}
