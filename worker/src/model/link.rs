//! Links: device activity -> launching call (by `correlation`), and flows bound to slices.
//!
//! Launches: every runtime/driver call (`CatClass::Launch`) registers its correlation; every
//! device activity with a correlation looks it up. External ids are not used
//! (docs/definitions.md §1 explains why they mislead on real traces). The enclosing op of a
//! launch is found later by walking `parent` (time containment on its thread), see
//! [`enclosing_op`].
//!
//! Flows: endpoints are grouped by (category, id) and chained in time order `s -> t* -> f+`
//! (more than one `f` fan out from the same source: a graph launch's kernels).
//! `s`/`t` and `f` with `bp: "e"` bind to the innermost slice enclosing their time on their
//! lane; other `f`s bind to the next slice starting at or after it (Trace Event format).
//!
//! Cost: O(n) hashing for launches; O(p log p) sort plus O(log n) binding per flow endpoint.
//! Launches and flows are found apart (at once with a [`Fork`]), then written in that order.

use super::builder::FlowPoint;
use super::category::CatClass;
use super::strings::FxHashMap;
use super::{Flow, LaneId, Trace, NONE, NO_ID};
use crate::diag::DiagKind;
use crate::fork::Fork;

/// Fills `slices.launch`, `flows` and `flows_unlinked`; `order` is [`flow_order`] of `points`.
pub(super) fn link(trace: &mut Trace, points: &[FlowPoint], order: &[u32], fork: &impl Fork) {
    let shared = &*trace;
    let ((launch, missing), (flows, unlinked)) = fork.join(|| launches(shared), || link_flows(shared, points, order, fork));
    trace.slices.launch = launch;
    for i in missing {
        let corr = trace.slices.correlation[i];
        trace.diagnostics.report(DiagKind::LinkKernelWithoutLaunch, Some(trace.slices.offset[i]), || format!("correlation {corr}"));
    }
    trace.flows = flows;
    trace.flows_unlinked = unlinked;
    if unlinked > 0 {
        trace.diagnostics.report(DiagKind::LinkFlowUnmatched, None, || format!("{unlinked} endpoints"));
    }
}

/// Every slice's launching call (`NONE` if none), and the device activities whose correlation
/// no call has.
fn launches(trace: &Trace) -> (Vec<u32>, Vec<usize>) {
    let s = &trace.slices;
    let mut by_correlation: FxHashMap<u32, u32> = FxHashMap::default();
    for i in 0..s.len() {
        if s.correlation[i] != NO_ID && trace.cat_class.get(s.cat[i].0 as usize) == Some(&CatClass::Launch) {
            by_correlation.entry(s.correlation[i]).or_insert(i as u32);
        }
    }
    let mut launch = vec![NONE; s.len()];
    let mut missing = Vec::new();
    for (i, call) in launch.iter_mut().enumerate() {
        if !trace.class(s.cat[i]).is_device_activity() || s.correlation[i] == NO_ID {
            continue;
        }
        match by_correlation.get(&s.correlation[i]) {
            Some(&launching) => *call = launching,
            None => missing.push(i),
        }
    }
    (launch, missing)
}

/// The innermost `cpu_op` slice enclosing slice `i` on its thread (itself excluded), if any.
pub fn enclosing_op(trace: &Trace, i: u32) -> Option<u32> {
    let mut p = *trace.slices.parent.get(i as usize)?;
    while p != NONE {
        if trace.class(trace.slices.cat[p as usize]) == CatClass::CpuOp {
            return Some(p);
        }
        p = trace.slices.parent[p as usize];
    }
    None
}

/// Innermost slice on `lane` with `start <= ts <= end`, or `NONE`.
fn enclosing(trace: &Trace, lane: LaneId, ts: i64) -> u32 {
    let Some(l) = trace.lanes.get(lane.0 as usize) else { return NONE };
    let s = &trace.slices;
    let (lo, hi) = (l.slices.start as usize, l.slices.end as usize);
    // Walk back from the last slice starting at or before ts. Every main-layer slice that
    // contains ts is an ancestor of the last main-layer slice starting before ts, so the walk
    // stops there; overflow-layer slices passed on the way are candidates too.
    let mut i = lo + s.start_ns[lo..hi].partition_point(|&st| st <= ts);
    let mut best = NONE;
    let mut best_depth = 0u16;
    while i > lo {
        i -= 1;
        let mut c = i as u32;
        while c != NONE && s.start_ns[c as usize] + s.dur_ns[c as usize] < ts {
            c = s.parent[c as usize];
        }
        if c != NONE && (best == NONE || s.depth[c as usize] >= best_depth) {
            best = c;
            best_depth = s.depth[c as usize];
        }
        if s.row[i] == s.depth[i] {
            break;
        }
    }
    best
}

/// First slice on `lane` starting at or after `ts`, or `NONE`.
fn next_slice(trace: &Trace, lane: LaneId, ts: i64) -> u32 {
    let Some(l) = trace.lanes.get(lane.0 as usize) else { return NONE };
    let (lo, hi) = (l.slices.start as usize, l.slices.end as usize);
    let idx = lo + trace.slices.start_ns[lo..hi].partition_point(|&st| st < ts);
    if idx < hi { idx as u32 } else { NONE }
}

/// `points` by (category, id, time, `s` then `t` then `f`): each flow's endpoints in chain
/// order. Needs only the points, so it runs while the slices are sorted.
pub(super) fn flow_order(points: &[FlowPoint]) -> Vec<u32> {
    let rank = |k: u8| match k {
        b's' => 0,
        b't' => 1,
        _ => 2,
    };
    let key = |i: u32| {
        let p = &points[i as usize];
        (p.cat, p.id, p.ts_ns, rank(p.kind))
    };
    // Nearly in order already: ids (correlations) grow with time, in one run for the starts
    // and one for the ends.
    let mut order: Vec<u32> = (0..points.len() as u32).collect();
    super::nearly::sort_by_key(&mut order, &mut Vec::new(), &key);
    order
}

/// The flows chained from `points` taken in `order`, sorted, and how many endpoints stayed
/// unlinked.
fn link_flows(trace: &Trace, points: &[FlowPoint], order: &[u32], fork: &impl Fork) -> (Vec<Flow>, u64) {
    // Each point's slice, found in two halves at once (a search per point).
    let mut bound = vec![NONE; points.len()];
    let bind = |points: &[FlowPoint], bound: &mut [u32]| {
        for (b, p) in bound.iter_mut().zip(points) {
            *b = if p.enclosing { enclosing(trace, p.lane, p.ts_ns) } else { next_slice(trace, p.lane, p.ts_ns) };
        }
    };
    let half = points.len() / 2;
    let ((first, rest), (first_bound, rest_bound)) = (points.split_at(half), bound.split_at_mut(half));
    fork.join(|| bind(first, first_bound), || bind(rest, rest_bound));
    let mut flows = Vec::new();
    let mut unlinked = 0u64;
    let mut g = 0;
    while g < order.len() {
        let first = &points[order[g] as usize];
        let mut end = g;
        while end < order.len() && points[order[end] as usize].cat == first.cat && points[order[end] as usize].id == first.id {
            end += 1;
        }
        unlinked += chain(&order[g..end], points, &bound, &mut flows);
        g = end;
    }
    // Chains come in id order, which is nearly time order, so flows come nearly sorted by source.
    super::nearly::sort_by_key(&mut flows, &mut Vec::new(), &|f: Flow| (f.from, f.to));
    (flows, unlinked)
}

/// Chains one (cat, id) group in time order; returns how many endpoints stayed unlinked.
fn chain(group: &[u32], points: &[FlowPoint], bound: &[u32], flows: &mut Vec<Flow>) -> u64 {
    let mut unlinked = 0;
    let mut from: Option<u32> = None;
    // Source of the last `f`: Kineto writes one `ac2g` `f` per kernel of a `cudaGraphLaunch`,
    // all with the call's id after its one `s`, so an `f` right after an `f` fans out from it.
    let mut fan: Option<u32> = None;
    for &i in group {
        let p = &points[i as usize];
        let slice = bound[i as usize];
        match p.kind {
            b's' => {
                if from.is_some() {
                    unlinked += 1;
                }
                from = (slice != NONE).then_some(slice);
                fan = None;
                unlinked += u64::from(slice == NONE);
            }
            _ => match from.or(if p.kind == b'f' { fan } else { None }) {
                Some(f) if slice != NONE => {
                    flows.push(Flow { from: f, to: slice, cat: p.cat });
                    fan = (p.kind == b'f').then_some(f);
                    from = (p.kind == b't').then_some(slice);
                }
                _ => unlinked += 1,
            },
        }
    }
    unlinked + u64::from(from.is_some())
}
