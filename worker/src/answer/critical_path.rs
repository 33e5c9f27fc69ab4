//! Every step's critical path ([`crate::analysis::critical_path`]) as [`CriticalPathData`]
//! (shares per class), the path's slices in a window as [`PathSegmentsData`] (for the
//! timeline), and what-if answers as [`WhatIfData`], read from the session's cached paths and
//! graphs: a what-if re-runs only the forward pass over graphs built once.
//!
//! Segments: the path's stretches in a slice (time between ops has none), consecutive ones of
//! one slice merged, so the page outlines slices and draws an arrow where the path changes
//! lane. An answer keeps at most [`MAX_PATH_SEGMENTS`], in time order: those of the slices
//! with the most time on the path, then the longest.

use crate::analysis::critical_path::{BoundBy, Edit, PathSegment};
use crate::model::{Trace, NONE};
use crate::session::Session;
use protocol::{
    CriticalPathData, PathSegmentData, PathSegmentsData, StepPathData, StepSegmentsData, WhatIfData, WhatIfStep,
    MAX_PATH_SEGMENTS,
};
use std::collections::HashMap;

/// The critical path of every step of `session`'s trace.
pub fn paths(session: &Session) -> CriticalPathData {
    session.prepare_what_if();
    let steps = session
        .critical_paths()
        .iter()
        .map(|p| StepPathData {
            step: p.step,
            start_ns: p.start_ns,
            end_ns: p.end_ns,
            shares_ns: p.shares.to_vec(),
            bound_by: p.bound_by().as_str().to_owned(),
        })
        .collect();
    CriticalPathData {
        classes: BoundBy::ALL.iter().map(|c| c.as_str().to_owned()).collect(),
        labels: BoundBy::ALL.iter().map(|c| c.label().to_owned()).collect(),
        steps,
    }
}

/// A step and its merged stretches in the window (with each one's longest class time).
type StepStretches = (Option<u64>, Vec<(PathSegment, i64)>);

/// The path's slices of step `step` (`None`: every step) overlapping `start_ns..end_ns`.
pub fn segments(session: &Session, step: Option<u64>, start_ns: i64, end_ns: i64) -> PathSegmentsData {
    let trace = session.trace();
    let chosen: Vec<StepStretches> = session
        .critical_paths()
        .iter()
        .filter(|p| (step.is_none() || p.step == step) && p.start_ns < end_ns && p.end_ns > start_ns)
        .map(|p| {
            let merged = merge(&p.segments).into_iter().filter(|(s, _)| s.start_ns < end_ns && s.end_ns > start_ns).collect();
            (p.step, merged)
        })
        .collect();
    let keep = kept(&chosen);
    let dropped = keep.iter().filter(|k| !**k).count();
    let mut flags = keep.into_iter();
    let mut names = Names::default();
    let steps = chosen
        .iter()
        .map(|(step, merged)| {
            let segments = merged
                .iter()
                .zip(flags.by_ref())
                .filter(|(_, keep)| *keep)
                .filter_map(|((seg, _), _)| wire(trace, seg, &mut names))
                .collect();
            StepSegmentsData { step: *step, segments }
        })
        .collect();
    PathSegmentsData { step, start_ns, end_ns, steps, dropped: u32::try_from(dropped).unwrap_or(u32::MAX), names: names.list }
}

/// Whether each stretch (in order over `chosen`) is kept under the cap of
/// [`MAX_PATH_SEGMENTS`].
fn kept(chosen: &[StepStretches]) -> Vec<bool> {
    let all: Vec<&PathSegment> = chosen.iter().flat_map(|(_, m)| m.iter().map(|(s, _)| s)).collect();
    if all.len() <= MAX_PATH_SEGMENTS {
        return vec![true; all.len()];
    }
    // The stretches of the slices with the most time on the path first (the report's top
    // events are kept whole), then the longest.
    let mut per_slice: HashMap<u32, i64> = HashMap::new();
    for seg in &all {
        *per_slice.entry(seg.slice).or_default() += seg.end_ns - seg.start_ns;
    }
    let rank = |s: &PathSegment| (per_slice.get(&s.slice).copied().unwrap_or(0), s.end_ns - s.start_ns);
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(all.get(k).map_or((0, 0), |s| rank(s))));
    let mut keep = vec![false; all.len()];
    for k in order.into_iter().take(MAX_PATH_SEGMENTS) {
        keep[k] = true;
    }
    keep
}

fn wire(trace: &Trace, seg: &PathSegment, names: &mut Names) -> Option<PathSegmentData> {
    let s = &trace.slices;
    let i = seg.slice as usize;
    Some(PathSegmentData {
        slice: seg.slice,
        lane: s.lane.get(i)?.0,
        row: *s.row.get(i)?,
        slice_start_ns: *s.start_ns.get(i)?,
        slice_dur_ns: *s.dur_ns.get(i)?,
        start_ns: seg.start_ns,
        end_ns: seg.end_ns,
        class: seg.class.index() as u8,
        name: names.of(trace, i),
    })
}

/// Every step after `edits` (the `--what-if` grammar), or the first edit that does not parse.
pub fn what_if(session: &Session, edits: &[String]) -> WhatIfData {
    let parsed: Result<Vec<Edit>, String> = edits.iter().map(|e| e.parse::<Edit>().map_err(|err| err.to_string())).collect();
    let parsed = match parsed {
        Ok(p) => p,
        Err(error) => return WhatIfData { edits: edits.to_vec(), error: Some(error), steps: Vec::new() },
    };
    let before = session.critical_paths();
    let after = session.critical_graphs().what_if(session.trace(), &parsed);
    let steps = before
        .iter()
        .zip(&after)
        .map(|(b, a)| WhatIfStep {
            step: b.step,
            before_ns: b.wall_ns(),
            after_ns: a.wall_ns(),
            shares_after_ns: a.shares.to_vec(),
            bound_by_before: b.bound_by().as_str().to_owned(),
            bound_by_after: a.bound_by().as_str().to_owned(),
        })
        .collect();
    WhatIfData { edits: edits.to_vec(), error: None, steps }
}

/// Slice names, each once.
#[derive(Default)]
struct Names {
    list: Vec<String>,
    index: HashMap<u32, u32>,
}

impl Names {
    /// The index of the name of slice `i`.
    fn of(&mut self, trace: &Trace, i: usize) -> u32 {
        let id = trace.slices.name.get(i).map_or(0, |n| n.0);
        let next = u32::try_from(self.list.len()).unwrap_or(u32::MAX);
        *self.index.entry(id).or_insert_with(|| {
            self.list.push(trace.slices.name.get(i).map(|&n| trace.strings.get(n).into_owned()).unwrap_or_default());
            next
        })
    }
}

/// The segments with a slice, consecutive ones of one slice merged (class: the one with the
/// most time, kept with that time).
fn merge(segments: &[PathSegment]) -> Vec<(PathSegment, i64)> {
    let mut out: Vec<(PathSegment, i64)> = Vec::new();
    for seg in segments.iter().filter(|s| s.slice != NONE) {
        let len = seg.end_ns - seg.start_ns;
        match out.last_mut() {
            Some((last, best)) if last.slice == seg.slice && last.end_ns == seg.start_ns => {
                last.end_ns = seg.end_ns;
                if len > *best {
                    last.class = seg.class;
                    *best = len;
                }
            }
            _ => out.push((*seg, len)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_runs_of_one_slice_and_drops_time_between_ops() {
        let seg = |start_ns, end_ns, slice, class| PathSegment { start_ns, end_ns, slice, class };
        let merged = merge(&[
            seg(0, 5, 1, BoundBy::CpuOp),
            seg(5, 15, 1, BoundBy::LaunchDelay),
            seg(15, 20, NONE, BoundBy::CpuOverhead),
            seg(20, 30, 2, BoundBy::GpuCompute),
        ]);
        let got: Vec<_> = merged.iter().map(|(s, _)| (s.start_ns, s.end_ns, s.slice, s.class)).collect();
        assert_eq!(got, [(0, 15, 1, BoundBy::LaunchDelay), (20, 30, 2, BoundBy::GpuCompute)]);
    }

    #[test]
    fn the_cap_keeps_the_slices_with_most_time_on_the_path() {
        // Two steps of 3,000 one-slice stretches each; slice k lasts 1 + k % 7 ns, slice 9's
        // stretches add up to the most.
        let seg = |i: i64, slice: u32| (PathSegment { start_ns: 10 * i, end_ns: 10 * i + 1 + i % 7, slice, class: BoundBy::CpuOp }, 0);
        let step = |from: i64| -> StepStretches { (None, (from..from + 3_000).map(|i| seg(i, if i % 500 == 0 { 9 } else { i as u32 + 100 })).collect()) };
        let chosen = [step(0), step(3_000)];
        let keep = kept(&chosen);
        assert_eq!(keep.len(), 6_000);
        assert_eq!(keep.iter().filter(|k| **k).count(), MAX_PATH_SEGMENTS);
        let all: Vec<&PathSegment> = chosen.iter().flat_map(|(_, m)| m.iter().map(|(s, _)| s)).collect();
        assert!(all.iter().zip(&keep).filter(|(s, _)| s.slice == 9).all(|(_, k)| *k), "slice 9 kept whole");
        let shortest_kept = all.iter().zip(&keep).filter(|(s, k)| **k && s.slice != 9).map(|(s, _)| s.end_ns - s.start_ns).min();
        let longest_dropped = all.iter().zip(&keep).filter(|(_, k)| !**k).map(|(s, _)| s.end_ns - s.start_ns).max();
        assert!(shortest_kept >= longest_dropped, "{shortest_kept:?} < {longest_dropped:?}");
    }
}
