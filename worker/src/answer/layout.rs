//! The timeline's layout: processes and devices in display order with their lanes, and the
//! profiler steps drawn along the ruler.
//!
//! The stacked compare view (docs/viewer.md#compare-two-traces) asks for an *aligned* layout of
//! each trace ([`aligned`]): the same, plus the step it aligns at (`focus`: the step number asked
//! for, else the first number both traces share, else the trace's first step), folded to the lanes
//! with slices during that step, so two panels of a few hundred pixels show what ran then.
//! Cost: one LOD query per lane over the step window at one bucket per window (O(rows · log n)).

use crate::analysis::args::parse_i64;
use crate::analysis::steps::profiler_steps;
use crate::index::Index;
use crate::model::{LaneId, ProcessKind, Trace};
use protocol::{Align, LaneGroup, LaneInfo, Layout, StepMark};

/// The layout of `trace`. Processes without lanes are left out.
pub fn layout(trace: &Trace) -> Layout {
    let groups = trace
        .processes
        .iter()
        .filter(|p| !p.lanes.is_empty())
        .map(|p| {
            let gpu = p.kind == ProcessKind::Gpu;
            LaneGroup {
                name: trace.strings.get(p.name).into_owned(),
                kind: if gpu { "gpu" } else { "cpu" }.into(),
                device: gpu.then(|| parse_i64(trace.strings.bytes_of(p.pid))).flatten(),
                lanes: p
                    .lanes
                    .iter()
                    .filter_map(|&l| {
                        let lane = trace.lanes.get(l.0 as usize)?;
                        Some(LaneInfo {
                            lane: l.0,
                            name: trace.strings.get(lane.name).into_owned(),
                            rows: lane.rows.max(1),
                            slices: u64::from(lane.slices.end - lane.slices.start),
                        })
                    })
                    .collect(),
            }
        })
        .collect();
    let steps = profiler_steps(trace)
        .into_iter()
        .map(|s| StepMark {
            number: s.number,
            start_ns: s.start_ns,
            end_ns: s.end_ns,
        })
        .collect();
    Layout {
        end_ns: trace.end_ns,
        groups,
        steps,
        focus: None,
    }
}

/// The layout of `trace` aligned at the step `align` picks, `other` being the trace it is
/// compared with (its step numbers decide [`Align::First`]); lanes without slices during the
/// focus step (without any slice, when the trace has no step) are left out, and groups left
/// without lanes.
pub fn aligned(trace: &Trace, index: &Index, other: Option<&Trace>, align: Align) -> Layout {
    let mut out = layout(trace);
    let others: Vec<u64> = other.map_or_else(Vec::new, |o| profiler_steps(o).iter().map(|s| s.number).collect());
    out.focus = focus(&out.steps, &others, align);
    let window = out.focus.as_ref().map(|s| (s.start_ns, s.end_ns.max(s.start_ns + 1)));
    for g in &mut out.groups {
        g.lanes.retain(|l| l.slices > 0 && window.is_none_or(|w| has_slices(trace, index, l.lane, w)));
    }
    out.groups.retain(|g| !g.lanes.is_empty());
    out
}

/// The step `align` picks among `steps` (time order), `others` being the other trace's step
/// numbers: the number asked for if present, else the first number both have, else the first.
pub fn focus(steps: &[StepMark], others: &[u64], align: Align) -> Option<StepMark> {
    let by_number = |n: u64| steps.iter().find(|s| s.number == n);
    let asked = match align {
        Align::Step(n) => by_number(n),
        Align::First => None,
    };
    asked
        .or_else(|| steps.iter().find(|s| others.contains(&s.number)))
        .or(steps.first())
        .cloned()
}

/// True when a slice of `lane` overlaps `[start_ns, end_ns)` (one LOD bucket over the window).
fn has_slices(trace: &Trace, index: &Index, lane: u32, (start_ns, end_ns): (i64, i64)) -> bool {
    let span = (end_ns - start_ns).max(1) as u64;
    let resolution = span.next_power_of_two().min(1 << 62) as i64;
    !index.lane_tile(trace, LaneId(lane), start_ns, end_ns, resolution).is_empty()
}
