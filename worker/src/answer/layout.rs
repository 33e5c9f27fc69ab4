//! The timeline's layout: processes and devices in display order with their lanes, and the
//! profiler steps drawn along the ruler.
//!
//! The stacked compare view (docs/viewer.md#compare-two-traces) asks for an *aligned* layout of
//! each trace ([`aligned`]): the same, plus the step it aligns at (`focus`: the step number asked
//! for, else the first number both traces share, else the trace's first step), folded to the lanes
//! with slices during that step, so two panels of a few hundred pixels show what ran then.
//! Cost: one LOD query per lane over the step window at one bucket per window (O(rows · log n)).

use crate::analysis::args::parse_i64;
use crate::analysis::steps::{profiler_steps, Step};
use crate::index::Index;
use crate::model::{LaneId, ProcessKind, Trace};
use crate::ranks::stack::Clock;
use crate::ranks::RunState;
use protocol::{Align, LaneGroup, LaneInfo, Layout, StepMark};

/// The layout of `trace`. GPU devices come first (their streams, communication ones included,
/// are what a practitioner reads first and must not sit below the fold), then the CPU process
/// holding the main thread ([`main_thread`], listed first in its process), then the other
/// processes in trace order. Processes without lanes are left out; the Python frames of a
/// process's threads (`with_stack=True`) follow it as a group of their own that starts folded,
/// so its ops and ranges fit the first screen. Each lane is listed once, but for a thread with
/// both: its ops and ranges, then its Python rows.
pub fn layout(trace: &Trace) -> Layout {
    // One pass over the slices finds the steps, for the ruler's marks and the main thread.
    let steps = profiler_steps(trace);
    let mut out = trace_order(trace, &steps);
    let main = main_thread(trace, &steps, &out);
    for g in &mut out.groups {
        if let Some(at) = g.lanes.iter().position(|l| Some(l.lane) == main && l.first_row == 0) {
            g.lanes[..=at].rotate_right(1);
        }
    }
    // Stable: within each rank the trace's order stays; a Python group keeps following its process.
    let owns_main = |g: &LaneGroup| g.lanes.iter().any(|l| Some(l.lane) == main);
    out.groups.sort_by_key(|g| match (g.kind == "gpu", owns_main(g)) {
        (true, _) => 0,
        (false, true) => 1,
        (false, false) => 2,
    });
    out
}

/// The layout in the trace's own process and lane order, `steps` marked on the ruler.
fn trace_order(trace: &Trace, steps: &[Step]) -> Layout {
    let mut groups = Vec::with_capacity(trace.processes.len());
    for p in trace.processes.iter().filter(|p| !p.lanes.is_empty()) {
        let gpu = p.kind == ProcessKind::Gpu;
        let mut group = LaneGroup {
            name: trace.strings.get(p.name).into_owned(),
            kind: if gpu { "gpu" } else { "cpu" }.into(),
            device: gpu.then(|| parse_i64(trace.strings.bytes_of(p.pid))).flatten(),
            lanes: Vec::with_capacity(p.lanes.len()),
            folded: false,
        };
        let mut python = LaneGroup { name: format!("{} · Python stack", group.name), folded: true, ..group.clone() };
        for (id, lane) in p.lanes.iter().filter_map(|&l| Some((l.0, trace.lanes.get(l.0 as usize)?))) {
            let name = trace.strings.get(lane.name).into_owned();
            let slices = u64::from(lane.slices.end - lane.slices.start);
            let own = lane.rows - lane.python_rows;
            if lane.python_rows > 0 {
                python.lanes.push(LaneInfo { lane: id, name: name.clone(), rows: lane.python_rows, first_row: own, slices });
            }
            // A thread of nothing but Python frames (a tqdm monitor) is all in the folded group.
            if own > 0 || lane.python_rows == 0 {
                group.lanes.push(LaneInfo { lane: id, name, rows: own.max(1), first_row: 0, slices });
            }
        }
        if !group.lanes.is_empty() {
            groups.push(group);
        }
        if !python.lanes.is_empty() {
            groups.push(python);
        }
    }
    let steps = steps
        .iter()
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
        origin_ns: 0,
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
    out.origin_ns = out.focus.as_ref().map_or(0, |f| f.start_ns);
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
        Align::First | Align::Recorded | Align::Collectives => None,
    };
    asked
        .or_else(|| steps.iter().find(|s| others.contains(&s.number)))
        .or(steps.first())
        .cloned()
}

/// The layout of rank `rank` of `run` in the stacked ranks view: its GPU lanes and its main CPU
/// thread (the one holding the `ProfilerStep#N` spans, else the one with most slices) in their
/// groups, every other CPU thread in a group per process that starts folded; lanes without a
/// slice left out. Time 0 of the view is the run's axis start on the clock `align` names
/// (`Recorded` / `Collectives`, [`crate::ranks::stack`]) or the step it names.
pub fn rank(trace: &Trace, run: &RunState, rank: u32, align: Align) -> Layout {
    let mut out = layout(trace);
    out.focus = focus(&out.steps, &[], align);
    out.origin_ns = match align {
        Align::Recorded => run.axis_origin_ns(rank, Clock::Recorded).unwrap_or(0),
        Align::Collectives => run.axis_origin_ns(rank, Clock::Collectives).unwrap_or(0),
        Align::First | Align::Step(_) => out.focus.as_ref().map_or(0, |f| f.start_ns),
    };
    // [`layout`] lists the main thread first among the CPU lanes.
    let main = out.groups.iter().find(|g| g.kind == "cpu").and_then(|g| g.lanes.first()).map(|l| l.lane);
    let mut groups = Vec::with_capacity(out.groups.len() * 2);
    for mut g in std::mem::take(&mut out.groups) {
        g.lanes.retain(|l| l.slices > 0);
        if g.kind == "cpu" {
            let lanes = std::mem::take(&mut g.lanes);
            let (shown, other): (Vec<LaneInfo>, Vec<LaneInfo>) = lanes.into_iter().partition(|l| Some(l.lane) == main);
            let folded = LaneGroup { name: format!("{} · other threads", g.name), lanes: other, folded: true, ..g.clone() };
            groups.push(LaneGroup { lanes: shown, ..g });
            groups.push(folded);
        } else {
            groups.push(g);
        }
    }
    groups.retain(|g| !g.lanes.is_empty());
    out.groups = groups;
    out
}

/// The main CPU thread's lane: the one holding the first `ProfilerStep#N`, else the CPU lane
/// with most slices.
fn main_thread(trace: &Trace, steps: &[Step], layout: &Layout) -> Option<u32> {
    let step = steps.first().and_then(|st| trace.slices.lane.get(st.slice as usize)).map(|l| l.0);
    let cpu = layout.groups.iter().filter(|g| g.kind == "cpu").flat_map(|g| g.lanes.iter());
    step.or_else(|| cpu.max_by_key(|l| l.slices).map(|l| l.lane))
}

/// True when a slice of `lane` overlaps `[start_ns, end_ns)` (one LOD bucket over the window).
fn has_slices(trace: &Trace, index: &Index, lane: u32, (start_ns, end_ns): (i64, i64)) -> bool {
    let span = (end_ns - start_ns).max(1) as u64;
    let resolution = span.next_power_of_two().min(1 << 62) as i64;
    !index.lane_tile(trace, LaneId(lane), start_ns, end_ns, resolution).is_empty()
}
