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
//! Cost: O(n) for launches (a table by correlation, hashing where correlations are sparse);
//! O(p log p) sort plus O(log d) binding per flow endpoint, d the slices between it and the
//! last endpoint bound on its lane (endpoints come nearly in time order per lane, so d is small
//! where a search of the lane cost O(log n)).
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
    let calls: Vec<(u32, u32)> = (0..s.len())
        .filter(|&i| s.correlation[i] != NO_ID && trace.cat_class.get(s.cat[i].0 as usize) == Some(&CatClass::Launch))
        .map(|i| (s.correlation[i], i as u32))
        .collect();
    let by_correlation = ByCorrelation::of(&calls);
    let mut launch = vec![NONE; s.len()];
    let mut missing = Vec::new();
    for (i, call) in launch.iter_mut().enumerate() {
        if !trace.class(s.cat[i]).is_device_activity() || s.correlation[i] == NO_ID {
            continue;
        }
        match by_correlation.get(s.correlation[i]) {
            Some(launching) => *call = launching,
            None => missing.push(i),
        }
    }
    (launch, missing)
}

/// Each correlation's first launching call. Kineto numbers correlations from 1 up, so they are
/// nearly always dense enough to index a table directly, a fraction of a hash lookup's cost, in
/// no more memory than a map (at most 4 entries per call); sparse ones go in a map.
enum ByCorrelation {
    Table(Vec<u32>),
    Map(FxHashMap<u32, u32>),
}

impl ByCorrelation {
    /// From `(correlation, call)` pairs in slice order.
    fn of(calls: &[(u32, u32)]) -> Self {
        let max = calls.iter().map(|&(c, _)| c as usize).max().unwrap_or(0);
        if max < calls.len().saturating_mul(4).max(1 << 16) {
            let mut table = vec![NONE; max + 1];
            for &(c, i) in calls {
                if table[c as usize] == NONE {
                    table[c as usize] = i;
                }
            }
            return Self::Table(table);
        }
        let mut map = FxHashMap::default();
        for &(c, i) in calls {
            map.entry(c).or_insert(i);
        }
        Self::Map(map)
    }

    fn get(&self, correlation: u32) -> Option<u32> {
        match self {
            Self::Table(table) => table.get(correlation as usize).copied().filter(|&i| i != NONE),
            Self::Map(map) => map.get(&correlation).copied(),
        }
    }
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

/// Innermost slice on `lane` with `start <= ts <= end`, or `NONE`; `near[lane]` is where the
/// last search on the lane ended, and is set to where this one does.
fn enclosing(trace: &Trace, lane: LaneId, ts: i64, near: &mut [u32]) -> u32 {
    let Some(l) = trace.lanes.get(lane.0 as usize) else { return NONE };
    let s = &trace.slices;
    let (lo, hi) = (l.slices.start as usize, l.slices.end as usize);
    // Walk back from the last slice starting at or before ts. Every main-layer slice that
    // contains ts is an ancestor of the last main-layer slice starting before ts, so the walk
    // stops there; overflow-layer slices passed on the way are candidates too.
    let mut i = lo + search_near(&s.start_ns[lo..hi], &mut near[lane.0 as usize], |st| st <= ts);
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

/// First slice on `lane` starting at or after `ts`, or `NONE`; `near` as for [`enclosing`].
fn next_slice(trace: &Trace, lane: LaneId, ts: i64, near: &mut [u32]) -> u32 {
    let Some(l) = trace.lanes.get(lane.0 as usize) else { return NONE };
    let (lo, hi) = (l.slices.start as usize, l.slices.end as usize);
    let idx = lo + search_near(&trace.slices.start_ns[lo..hi], &mut near[lane.0 as usize], |st| st < ts);
    if idx < hi { idx as u32 } else { NONE }
}

/// `starts.partition_point(below)`, searched outward from `near` in doubling steps (then by
/// halves between the last two probes), and stored in `near` for the next search.
fn search_near(starts: &[i64], near: &mut u32, below: impl Fn(i64) -> bool) -> usize {
    let n = starts.len();
    let from = (*near as usize).min(n);
    let mut step = 1;
    let (lo, hi) = if from < n && below(starts[from]) {
        // The answer is past `from`.
        let mut lo = from + 1;
        while lo + step <= n && below(starts[lo + step - 1]) {
            lo += step;
            step *= 2;
        }
        (lo, (lo + step - 1).min(n))
    } else {
        // The answer is at or before `from`.
        let mut hi = from;
        while hi >= step && !below(starts[hi - step]) {
            hi -= step;
            step *= 2;
        }
        (hi.saturating_sub(step - 1), hi)
    };
    let at = lo + starts[lo..hi].partition_point(|&st| below(st));
    *near = at as u32;
    at
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
    // Each point's slice, found in two halves at once (a search per point, from where the
    // last one on its lane ended).
    let mut bound = vec![NONE; points.len()];
    let bind = |points: &[FlowPoint], bound: &mut [u32]| {
        let mut near = vec![0; trace.lanes.len()];
        for (b, p) in bound.iter_mut().zip(points) {
            *b = if p.enclosing { enclosing(trace, p.lane, p.ts_ns, &mut near) } else { next_slice(trace, p.lane, p.ts_ns, &mut near) };
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

#[cfg(test)]
mod tests {
    use super::{search_near, ByCorrelation};

    #[test]
    fn by_correlation_keeps_each_first_call_dense_or_sparse() {
        let dense = [(3, 10), (1, 11), (3, 12), (2, 13)];
        let sparse = [(3_000_000, 10), (1, 11), (3_000_000, 12), (2, 13)];
        for (calls, table) in [(&dense[..], true), (&sparse[..], false)] {
            let by = ByCorrelation::of(calls);
            assert_eq!(matches!(by, ByCorrelation::Table(_)), table);
            let first = calls[0].0;
            assert_eq!([by.get(first), by.get(1), by.get(2), by.get(4), by.get(u32::MAX - 1)], [Some(10), Some(11), Some(13), None, None]);
        }
    }

    #[test]
    fn search_near_finds_the_partition_point_from_any_start() {
        let starts: Vec<i64> = vec![1, 3, 3, 3, 7, 8, 8, 12, 15, 15, 15, 15, 20, 31, 40];
        for ts in -1..42 {
            for strict in [false, true] {
                let below = |st: i64| if strict { st < ts } else { st <= ts };
                for from in 0..=starts.len() as u32 + 2 {
                    for len in [0, 1, 2, 5, starts.len()] {
                        let mut near = from;
                        let part = &starts[..len];
                        let want = part.partition_point(|&st| below(st));
                        assert_eq!(search_near(part, &mut near, below), want, "ts {ts} from {from} len {len}");
                        assert_eq!(near as usize, want);
                    }
                }
            }
        }
    }
}
