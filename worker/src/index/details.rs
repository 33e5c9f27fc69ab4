//! Event details: everything the details panel shows about one slice, and stable slice keys
//! for share links: an event by id with its args, parent / children, flows in and out, and
//! "launched by" / "launched" (docs/viewer.md).
//!
//! Inputs: a [`Trace`], its [`Index`] and a slice id (`u32` into the slice columns). Output:
//! [`Details`] with owned strings (name, category, raw args JSON text), times in ns from the
//! trace origin, and related slice ids: parent, children, flow partners, the launching runtime
//! call of a device activity, the device activities a runtime call launched, the enclosing op.
//!
//! Relies on the model's invariants: children of slice `p` sit in row `row(p) + 1` of the same
//! lane (same layer, depth + 1) inside `[start(p), end(p)]` and do not overlap each other;
//! `trace.flows` is sorted by (from, to).
//!
//! Cost: O(log n + c) for c slices in the child row under the parent (children, self time);
//! O(log F) per flow direction and O(log K) for launched, through the reverse maps the index
//! builds (`flows_by_to`, `launched`: 4 bytes per flow and per linked device activity).
//! Lists are capped at [`LIST_CAP`] entries; totals are exact.
//!
//! Why: args stay raw JSON text (the model keeps them minified, docs/contributing.md) and the panel
//! decodes one object on demand. Stable keys are (lane, start, name, nth) rather than slice ids
//! because ids are positions in sorted columns, which a change of the sort rule would shuffle; the
//! key survives as long as lanes and times are read the same way.

use super::Index;
use crate::model::link::enclosing_op;
use crate::model::{Flow, LaneId, Trace, NONE};

/// Longest list returned for children, flows and launched activities.
pub const LIST_CAP: usize = 256;

/// What the details panel shows for one slice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Details {
    /// The slice.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Category.
    pub cat: String,
    /// Owning lane.
    pub lane: LaneId,
    /// Start, ns from the trace origin.
    pub start_ns: i64,
    /// Duration in ns.
    pub dur_ns: i64,
    /// Duration minus the durations of its children (same layer), >= 0.
    pub self_ns: i64,
    /// Nesting depth within its layer.
    pub depth: u16,
    /// Display row in the lane.
    pub row: u16,
    /// Raw args as minified JSON text (`{}` when none).
    pub args: String,
    /// Enclosing slice in the same layer.
    pub parent: Option<u32>,
    /// Children in time order, at most [`LIST_CAP`].
    pub children: Vec<u32>,
    /// Number of children.
    pub children_total: u32,
    /// Flows arriving at this slice (`to` = this id), at most [`LIST_CAP`].
    pub flows_in: Vec<Flow>,
    /// Flows leaving this slice (`from` = this id), at most [`LIST_CAP`].
    pub flows_out: Vec<Flow>,
    /// Device activity: the runtime or driver call that launched it (by correlation).
    pub launch: Option<u32>,
    /// Runtime or driver call: the device activities it launched, by id, at most [`LIST_CAP`].
    pub launched: Vec<u32>,
    /// Number of device activities launched.
    pub launched_total: u32,
    /// Innermost `cpu_op` enclosing the slice on its thread (itself excluded); for a device
    /// activity, the op enclosing its launch call.
    pub op: Option<u32>,
}

/// A key for a slice that stays valid across reloads of the same file (share links).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StableKey {
    /// Lane id (lanes are numbered in order of first appearance in the file).
    pub lane: u32,
    /// Start, ns from the trace origin.
    pub start_ns: i64,
    /// Slice name.
    pub name: String,
    /// Among slices of the lane with this start and name, which one (0 = the longest).
    pub nth: u32,
}

fn some(id: u32) -> Option<u32> {
    (id != NONE).then_some(id)
}

/// Details of slice `id`, or `None` for an unknown id.
pub fn slice_details(trace: &Trace, index: &Index, id: u32) -> Option<Details> {
    let s = &trace.slices;
    let i = id as usize;
    if i >= s.len() {
        return None;
    }
    let (lane, row, start_ns, dur_ns) = (s.lane[i], s.row[i], s.start_ns[i], s.dur_ns[i]);
    let (children, children_total, children_ns) = children(trace, index, id);
    let launch = some(s.launch[i]);
    let (launched, launched_total) = launched_by(trace, index, id);
    Some(Details {
        id,
        name: trace.strings.get(s.name[i]).into_owned(),
        cat: trace.strings.get(s.cat[i]).into_owned(),
        lane,
        start_ns,
        dur_ns,
        self_ns: (dur_ns - children_ns).max(0),
        depth: s.depth[i],
        row,
        args: match trace.args_text(s.args[i]) {
            text if text.is_empty() => "{}".to_owned(),
            text => text,
        },
        parent: some(s.parent[i]),
        children,
        children_total,
        flows_in: flows_in(trace, index, id),
        flows_out: flows_out(trace, id),
        launch,
        launched,
        launched_total,
        op: enclosing_op(trace, launch.unwrap_or(id)),
    })
}

/// Children of `id` in time order (capped), their number, and the sum of their durations.
fn children(trace: &Trace, index: &Index, id: u32) -> (Vec<u32>, u32, i64) {
    let s = &trace.slices;
    let i = id as usize;
    let (start, end) = (s.start_ns[i], s.end_ns(i));
    let Some(child_row) = s.row[i].checked_add(1) else {
        return (Vec::new(), 0, 0);
    };
    let row = index.row_slices(s.lane[i], child_row);
    let from = row.partition_point(|&c| s.start_ns[c as usize] < start);
    let mut list = Vec::new();
    let (mut total, mut sum) = (0u32, 0i64);
    for &c in &row[from..] {
        let c_i = c as usize;
        if s.start_ns[c_i] > end {
            break;
        }
        if s.parent[c_i] == id {
            total += 1;
            sum = sum.saturating_add(s.dur_ns[c_i]);
            if list.len() < LIST_CAP {
                list.push(c);
            }
        }
    }
    (list, total, sum)
}

fn flows_out(trace: &Trace, id: u32) -> Vec<Flow> {
    let from = trace.flows.partition_point(|f| f.from < id);
    trace.flows[from..]
        .iter()
        .take_while(|f| f.from == id)
        .take(LIST_CAP)
        .copied()
        .collect()
}

fn flows_in(trace: &Trace, index: &Index, id: u32) -> Vec<Flow> {
    let to = |k: u32| trace.flows.get(k as usize).map_or(NONE, |f| f.to);
    let from = index.flows_by_to.partition_point(|&k| to(k) < id);
    index.flows_by_to[from..]
        .iter()
        .take_while(|&&k| to(k) == id)
        .take(LIST_CAP)
        .filter_map(|&k| trace.flows.get(k as usize).copied())
        .collect()
}

/// Device activities launched by `id` (capped) and their number.
fn launched_by(trace: &Trace, index: &Index, id: u32) -> (Vec<u32>, u32) {
    let launch = |k: u32| trace.slices.launch.get(k as usize).copied().unwrap_or(NONE);
    let from = index.launched.partition_point(|&k| launch(k) < id);
    let to = from + index.launched[from..].partition_point(|&k| launch(k) == id);
    let all = &index.launched[from..to];
    (
        all.iter().take(LIST_CAP).copied().collect(),
        u32::try_from(all.len()).unwrap_or(u32::MAX),
    )
}

/// `trace.flows` positions sorted by (to, from): a stable sort by `to` of a list sorted by
/// (from, to).
pub(crate) fn flows_by_to(trace: &Trace) -> Vec<u32> {
    let mut order: Vec<u32> = (0..trace.flows.len() as u32).collect();
    super::sort_by_u32_key(&mut order, |k| trace.flows[k as usize].to);
    order
}

/// Ids of slices with a launch call, sorted by (launch, id).
pub(crate) fn launched(trace: &Trace) -> Vec<u32> {
    let launch = &trace.slices.launch;
    let mut ids: Vec<u32> = (0..launch.len() as u32)
        .filter(|&i| launch[i as usize] != NONE)
        .collect();
    super::sort_by_u32_key(&mut ids, |i| launch[i as usize]);
    ids.shrink_to_fit();
    ids
}

/// The stable key of slice `id`, or `None` for an unknown id.
pub fn stable_key(trace: &Trace, id: u32) -> Option<StableKey> {
    let s = &trace.slices;
    let i = id as usize;
    let lane = trace.lanes.get(s.lane.get(i)?.0 as usize)?;
    let (start, name) = (s.start_ns[i], s.name[i]);
    let lo = lane.slices.start as usize;
    let first = lo + s.start_ns.get(lo..i)?.partition_point(|&t| t < start);
    let nth = (first..i).filter(|&j| s.name[j] == name).count();
    Some(StableKey {
        lane: s.lane[i].0,
        start_ns: start,
        name: trace.strings.get(name).into_owned(),
        nth: u32::try_from(nth).ok()?,
    })
}

/// The slice a [`StableKey`] names, or `None` when this trace has no such slice.
pub fn find_stable(trace: &Trace, key: &StableKey) -> Option<u32> {
    let lane = trace.lanes.get(key.lane as usize)?;
    let name = trace.strings.lookup(&key.name)?;
    let s = &trace.slices;
    let (lo, hi) = (lane.slices.start as usize, lane.slices.end as usize);
    let starts = s.start_ns.get(lo..hi)?;
    let first = lo + starts.partition_point(|&t| t < key.start_ns);
    let last = lo + starts.partition_point(|&t| t <= key.start_ns);
    (first..last)
        .filter(|&j| s.name[j] == name)
        .nth(key.nth as usize)
        .and_then(|j| u32::try_from(j).ok())
}

impl Index {
    /// Details of slice `id`; see [`slice_details`].
    pub fn details(&self, trace: &Trace, id: u32) -> Option<Details> {
        slice_details(trace, self, id)
    }
}
