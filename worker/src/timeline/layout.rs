//! The timeline's layout: processes and devices in display order with their lanes, and the
//! profiler steps drawn along the ruler.

use crate::analysis::args::parse_i64;
use crate::analysis::steps::profiler_steps;
use crate::model::{ProcessKind, Trace};
use protocol::{LaneGroup, LaneInfo, Layout, StepMark};

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
    }
}
