//! What a rank did before a collective: time per kernel name and per host-op name inside a
//! window `[start, end)` (the previous collective's end on the same stream, this one's start),
//! kept to the [`TOP_NAMES`] largest of each. A straggler's window holds its extra work.
//!
//! **Inputs and outputs.** A [`Trace`]; windows in ns from the trace origin; names as owned
//! strings so the model can be dropped. Kernels: device activities (kernels, memcpys, memsets)
//! that are not collectives. Host ops: `cpu_op` slices with no `cpu_op` above them (nested ops
//! would count their time twice). Each item counts its part inside the window (clipped).
//!
//! **Cost.** [`WindowIndex::new`]: O(n log n) over the trace's kernels and ops. [`WindowIndex::of`]:
//! a binary search, then the items starting in `[start - longest item, end)`.

use crate::analysis::breakdown::{is_dataloader, merge};
use crate::analysis::kernel_context::KernelClasses;
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, StrId, Trace, NONE};

/// Names kept per window and kind (kernels, ops): enough to explain a straggler, small enough
/// for thousands of collectives x hundreds of ranks.
pub const TOP_NAMES: usize = 8;

/// Time per name inside one window.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Window {
    /// Window length, ns.
    pub dur_ns: i64,
    /// Kernel names and their time in the window, ns; largest first (ties: by name).
    pub kernels: Vec<(Box<str>, i64)>,
    /// Top-level host ops and their time in the window, ns; same order.
    pub ops: Vec<(Box<str>, i64)>,
}

/// Items of one kind as columns sorted by start.
#[derive(Default)]
struct Items {
    start: Vec<i64>,
    end: Vec<i64>,
    name: Vec<StrId>,
    longest: i64,
}

impl Items {
    fn from(mut v: Vec<(i64, i64, StrId)>) -> Self {
        v.sort_unstable_by_key(|x| (x.0, x.1, x.2 .0));
        let mut items = Self::default();
        for (a, b, n) in v {
            items.longest = items.longest.max(b - a);
            items.start.push(a);
            items.end.push(b);
            items.name.push(n);
        }
        items
    }

    /// Clipped time per name in `[w0, w1)`.
    fn time_in(&self, w0: i64, w1: i64) -> FxHashMap<StrId, i64> {
        let mut by_name: FxHashMap<StrId, i64> = FxHashMap::default();
        let from = self
            .start
            .partition_point(|&s| s < w0.saturating_sub(self.longest));
        for i in from..self.start.len() {
            let (a, b) = (self.start[i], self.end[i]);
            if a >= w1 {
                break;
            }
            let part = b.min(w1) - a.max(w0);
            if part > 0 {
                *by_name.entry(self.name[i]).or_default() += part;
            }
        }
        by_name
    }
}

/// Kernels and top-level ops of one trace, ready for window queries.
pub struct WindowIndex<'t> {
    trace: &'t Trace,
    kernels: Items,
    ops: Items,
}

impl<'t> WindowIndex<'t> {
    /// Collects and sorts the trace's non-collective device activities and top-level ops.
    pub fn new(trace: &'t Trace) -> Self {
        let s = &trace.slices;
        let classes = KernelClasses::new(trace);
        let (mut kernels, mut ops) = (Vec::new(), Vec::new());
        for i in 0..s.len() {
            let class = trace.class(s.cat[i]);
            let item = (s.start_ns[i], s.end_ns(i), s.name[i]);
            if class.is_device_activity() {
                let is_comm = classes.is_communication(s.name[i]);
                if !is_comm {
                    kernels.push(item);
                }
            } else if class == CatClass::CpuOp && !under_op(trace, i) {
                ops.push(item);
            }
        }
        Self {
            trace,
            kernels: Items::from(kernels),
            ops: Items::from(ops),
        }
    }

    /// The window `[w0, w1)` (ns from the origin) with its top names.
    pub fn of(&self, w0: i64, w1: i64) -> Window {
        Window {
            dur_ns: (w1 - w0).max(0),
            kernels: self.top(self.kernels.time_in(w0, w1)),
            ops: self.top(self.ops.time_in(w0, w1)),
        }
    }

    fn top(&self, by_name: FxHashMap<StrId, i64>) -> Vec<(Box<str>, i64)> {
        let mut v: Vec<(Box<str>, i64)> = by_name
            .into_iter()
            .map(|(n, t)| (Box::from(self.trace.strings.get(n).as_ref()), t))
            .collect();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v.truncate(TOP_NAMES);
        v
    }
}

/// The trace's data-loading spans (`enumerate(DataLoader)`, [`is_dataloader`]), ns from the
/// origin, merged where they overlap (an op inside its annotation) and in time order.
pub fn data_loading(trace: &Trace) -> Vec<(i64, i64)> {
    let s = &trace.slices;
    let loads: Vec<bool> = (0..trace.strings.len())
        .map(|id| is_dataloader(&trace.strings.get(StrId(id as u32))))
        .collect();
    merge(
        (0..s.len())
            .filter(|&i| loads.get(s.name[i].0 as usize).copied().unwrap_or(false))
            .map(|i| (s.start_ns[i], s.end_ns(i)))
            .collect(),
    )
}

/// Time of the disjoint, ordered `spans` inside `[w0, w1)`, ns.
pub fn time_in(spans: &[(i64, i64)], w0: i64, w1: i64) -> i64 {
    let from = spans.partition_point(|x| x.1 <= w0);
    spans
        .iter()
        .skip(from)
        .take_while(|x| x.0 < w1)
        .map(|x| (x.1.min(w1) - x.0.max(w0)).max(0))
        .sum()
}

/// Whether slice `i` has a `cpu_op` among its ancestors.
fn under_op(trace: &Trace, i: usize) -> bool {
    let s = &trace.slices;
    let mut p = s.parent[i];
    while p != NONE {
        let Some(&cat) = s.cat.get(p as usize) else {
            return false;
        };
        if trace.class(cat) == CatClass::CpuOp {
            return true;
        }
        p = s.parent.get(p as usize).copied().unwrap_or(NONE);
    }
    false
}
