//! The dependency graph of one step window (rules in the module docs of `super`).
//!
//! Built per window from binary searches into each lane's slices (sorted by start), so the
//! whole trace is never walked per step. Nodes carry their observed time; every edge's weight
//! is chosen so that the latest `cause + weight` of each node equals its observed time.

use super::sync_record::{SyncRecords, Waited};
use super::BoundBy;
use crate::analysis::kernel_context::KernelClasses;
use crate::analysis::steps::StepSpan;
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, ProcessKind, Trace, NONE};

/// A cross-stream wait is an activity starting this close after another stream's activity
/// ended, when neither its launch nor its stream explains its start (a trace without
/// `cuda_sync` records).
const CROSS_STREAM_NS: i64 = 10_000;

/// Slices looked at before a window's first on a GPU lane, for activities running into it.
const LOOK_BACK: usize = 8;

/// Typical launch delay when the trace shows none (an empty stream, ~5 µs on recent GPUs).
const DEFAULT_LAUNCH_NS: i64 = 5_000;

/// Typical gap between queued kernels when the trace shows none.
const DEFAULT_GAP_NS: i64 = 1_000;

/// A trace without steps is followed in windows of about this many slices (a graph costs
/// ~200 bytes per slice), cut where the busiest thread is between top-level ops.
pub(super) const WINDOW_SLICES: usize = 32_768;

/// A removed edge's weight: never the latest cause.
pub(super) const REMOVED: i64 = i64::MIN / 4;

/// How an edge arose (what a what-if may change about it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A CPU thread's segment inside or between its slices.
    Cpu,
    /// A thread's idle stretch (weighs 0: the thread waited for something else).
    Idle,
    /// The step's thread handing work to another thread.
    Handoff,
    /// The step's thread resuming after another thread's work it waited for.
    Join,
    /// Launch call start -> activity start.
    Launch,
    /// Previous activity on the stream -> activity start.
    Stream,
    /// Another stream's activity -> activity start (cross-stream wait).
    CrossStream,
    /// An activity running.
    Run,
    /// GPU work's end -> the end of the blocking call that waited for it.
    SyncReturn,
    /// A cause before the window, from the window's start.
    Enter,
    /// A step's last CPU or GPU work -> the step's end.
    End,
}

/// One edge.
#[derive(Clone, Copy, Debug)]
pub(super) struct Edge {
    pub from: u32,
    pub to: u32,
    pub weight: i64,
    pub slice: u32,
    pub class: BoundBy,
    pub kind: Kind,
}

/// One step window's graph.
#[derive(Clone, Debug, Default)]
pub(super) struct Graph {
    /// Observed time of every node, ns.
    pub time: Vec<i64>,
    pub edges: Vec<Edge>,
    /// Incoming edges of node `n`: `incoming[in_start[n]..in_start[n + 1]]`.
    pub in_start: Vec<u32>,
    pub incoming: Vec<u32>,
    /// Nodes in an order where every edge goes forward.
    pub order: Vec<u32>,
    pub source: u32,
    pub sink: u32,
    /// Blocking calls in the window that returned after GPU work (HTA cannot see those waits).
    pub waits: u32,
}

impl Graph {
    /// The observed weights.
    pub fn weights(&self) -> Vec<i64> {
        self.edges.iter().map(|e| e.weight).collect()
    }

    /// Approximate heap bytes (nodes, edges and their indexes).
    pub fn heap_bytes(&self) -> usize {
        self.time.capacity() * 8
            + self.edges.capacity() * std::mem::size_of::<Edge>()
            + (self.in_start.capacity() + self.incoming.capacity() + self.order.capacity()) * 4
    }

    /// Incoming edge ids of `node`.
    pub fn incoming(&self, node: u32) -> &[u32] {
        let n = node as usize;
        match (self.in_start.get(n), self.in_start.get(n + 1)) {
            (Some(&a), Some(&b)) => self.incoming.get(a as usize..b as usize).unwrap_or_default(),
            _ => &[],
        }
    }
}

/// Per-trace facts every window reads: lane kinds, name masks, typical delays.
pub(super) struct Prepared {
    cpu_lanes: Vec<u32>,
    gpu_lanes: Vec<u32>,
    /// Per string id: a blocking runtime call's name.
    blocking: Vec<bool>,
    /// Per string id: a DataLoader span's name.
    dataloader: Vec<bool>,
    /// Per string id: a communication kernel's name.
    comm: Vec<bool>,
    typical_launch_ns: i64,
    typical_gap_ns: i64,
    /// The trace's `cuda_sync` records.
    syncs: SyncRecords,
}

impl Prepared {
    pub fn new(trace: &Trace) -> Self {
        let (mut cpu_lanes, mut gpu_lanes) = (Vec::new(), Vec::new());
        for (i, lane) in trace.lanes.iter().enumerate() {
            match trace.processes.get(lane.process as usize).map(|p| p.kind) {
                Some(ProcessKind::Gpu) => gpu_lanes.push(i as u32),
                _ => cpu_lanes.push(i as u32),
            }
        }
        let n = trace.strings.len();
        let (mut blocking, mut dataloader) = (vec![false; n], vec![false; n]);
        for id in 0..n {
            let name = trace.strings.get(crate::model::StrId(id as u32));
            blocking[id] = is_blocking(&name);
            dataloader[id] = name.contains("DataLoader");
        }
        // The trace's classes (name table, then launching op), as every analysis reads them.
        let comm = KernelClasses::new(trace).communication_mask(trace);
        let (typical_launch_ns, typical_gap_ns) = typical_delays(trace, &gpu_lanes);
        let syncs = SyncRecords::new(trace);
        Prepared { cpu_lanes, gpu_lanes, blocking, dataloader, comm, typical_launch_ns, typical_gap_ns, syncs }
    }

    fn flag(mask: &[bool], trace: &Trace, slice: usize) -> bool {
        trace.slices.name.get(slice).and_then(|n| mask.get(n.0 as usize)).copied().unwrap_or(false)
    }
}

/// Runtime calls that return only when GPU work is done.
fn is_blocking(name: &str) -> bool {
    name.ends_with("Synchronize")
        || name.starts_with("cudaMemcpy")
        || name.starts_with("hipMemcpy")
        || name.starts_with("cuMemcpy")
}

/// Typical launch delay on an empty stream and gap between queued activities.
fn typical_delays(trace: &Trace, gpu_lanes: &[u32]) -> (i64, i64) {
    let s = &trace.slices;
    let (mut launch, mut gap) = (Vec::new(), Vec::new());
    for &lane in gpu_lanes {
        let mut prev_end: Option<i64> = None;
        for i in trace.lanes[lane as usize].slices.clone() {
            let i = i as usize;
            if !trace.class(s.cat[i]).is_device_activity() {
                continue;
            }
            let start = s.start_ns[i];
            let launched = (s.launch[i] != NONE).then(|| s.start_ns[s.launch[i] as usize]);
            match (launched, prev_end) {
                (Some(l), Some(p)) if p >= l && start >= p => gap.push(start - p),
                (Some(l), _) if start >= l => launch.push(start - l),
                _ => {}
            }
            prev_end = Some(prev_end.map_or(s.end_ns(i), |p| p.max(s.end_ns(i))));
        }
    }
    // The lower decile, not the median: a launch that also waited for another stream (or a
    // slow host) is not what a launch costs when nothing else holds it.
    let typical = |v: &mut Vec<i64>, default: i64| {
        v.sort_unstable();
        v.get(v.len() / 10).copied().unwrap_or(default)
    };
    (typical(&mut launch, DEFAULT_LAUNCH_NS), typical(&mut gap, DEFAULT_GAP_NS))
}

/// Edges and nodes as they are added.
struct Builder {
    time: Vec<i64>,
    edges: Vec<Edge>,
    source: u32,
    start: i64,
}

impl Builder {
    fn node(&mut self, t: i64) -> u32 {
        self.time.push(t);
        (self.time.len() - 1) as u32
    }

    fn edge(&mut self, from: u32, to: u32, weight: i64, slice: u32, class: BoundBy, kind: Kind) -> usize {
        self.edges.push(Edge { from, to, weight, slice, class, kind });
        self.edges.len() - 1
    }

    /// An edge from a cause at `cause_t` that may lie before the window (then it enters from
    /// the source, its time before the window cut off).
    fn cause(&mut self, (cause, cause_t): (Option<u32>, i64), to: u32, weight: i64, slice: u32, class: BoundBy, kind: Kind) {
        match cause {
            Some(node) => {
                self.edge(node, to, weight, slice, class, kind);
            }
            None => {
                let w = (cause_t + weight - self.start).max(0);
                self.edge(self.source, to, w, slice, class, kind);
            }
        }
    }
}

/// A CPU thread's chain in the window.
struct Chain {
    /// (time, node), ascending; the first is the source.
    nodes: Vec<(i64, u32)>,
    /// Busy stretches: (start node, end node, start time, end time).
    busy: Vec<(u32, u32, i64, i64)>,
    /// The step thread's segments outside any op (between ops or in an annotation's own
    /// time): (edge id, start time, end time).
    gaps: Vec<(usize, i64, i64)>,
    /// The latest end of its slices in the window (the window's start without any).
    last_end: i64,
}

/// Builds the graph of window `[start, end]`; `step` is the step it belongs to, if any.
pub(super) fn build(trace: &Trace, prep: &Prepared, start: i64, end: i64, step: Option<&StepSpan>) -> Graph {
    let mut b = Builder { time: Vec::new(), edges: Vec::new(), source: 0, start };
    b.source = b.node(start);
    let main_lane = step
        .and_then(|s| trace.slices.lane.get(s.slice as usize))
        .map(|l| l.0)
        .or_else(|| busiest_lane(trace, &prep.cpu_lanes, start, end));

    // CPU chains; launch calls' start nodes and blocking calls' segments on the way.
    let mut launch_node: FxHashMap<u32, u32> = FxHashMap::default();
    let mut blocking: Vec<(u32, usize, u32)> = Vec::new();
    // The step's thread first: another thread's gap is idle only if the step's thread moved
    // during it.
    let main = main_lane.and_then(|lane| cpu_chain(trace, prep, &mut b, lane, start, end, None, &mut launch_node, &mut blocking));
    let main_times: Vec<i64> = main.as_ref().map(|c| c.nodes.iter().map(|n| n.0).collect()).unwrap_or_default();
    let others: Vec<Chain> = prep
        .cpu_lanes
        .iter()
        .filter(|&&lane| Some(lane) != main_lane)
        .filter_map(|&lane| cpu_chain(trace, prep, &mut b, lane, start, end, Some(&main_times), &mut launch_node, &mut blocking))
        .collect();
    link_threads(&mut b, main.as_ref(), &others);

    // Device activities: nodes first, then their causes.
    let acts = activities(trace, prep, &mut b, start, end);
    let mut by_end: Vec<usize> = (0..acts.len()).collect();
    by_end.sort_by_key(|&a| (acts[a].end, a));
    for a in 0..acts.len() {
        activity_causes(trace, prep, &mut b, &acts, &by_end, a, &launch_node);
    }
    let waits =
        blocking.iter().filter(|&&(call, edge, end_node)| sync_return(trace, prep, &mut b, &acts, &by_end, call, edge, end_node)).count();

    // The sink: the step's CPU end and the ends of the device work it launched.
    let sink = b.node(end);
    let mut latest = i64::MIN;
    if let Some(chain) = &main {
        let cpu_end = step.map_or(chain.last_end, |s| s.cpu_end_ns.min(end));
        if let Some(&(t, node)) = chain.nodes.iter().rev().find(|(t, _)| *t <= cpu_end) {
            b.edge(node, sink, 0, NONE, BoundBy::CpuOverhead, Kind::End);
            latest = latest.max(t);
        }
    }
    for act in &acts {
        let launched_in_step = match step {
            Some(s) => act.launch_at.is_some_and(|(l, le)| l >= s.cpu_start_ns && le <= s.cpu_end_ns),
            None => true,
        };
        if launched_in_step && act.end <= end {
            b.edge(act.end_node, sink, 0, NONE, BoundBy::KernelGap, Kind::End);
            latest = latest.max(act.end);
        }
    }
    if latest < end {
        // The step's end comes from work the trace shows only as GPU-side annotations.
        let (t, node) = main.as_ref().and_then(|c| c.nodes.last().copied()).unwrap_or((start, b.source));
        b.edge(node, sink, end - t, NONE, BoundBy::KernelGap, Kind::End);
    }
    finish(b, sink, waits as u32)
}

/// `[start, end]` cut into windows of about [`WINDOW_SLICES`] slices (all lanes), at ends of
/// the busiest thread's top-level slices; one window when there are fewer.
pub(super) fn capture_windows(trace: &Trace, prep: &Prepared, start: i64, end: i64) -> Vec<(i64, i64)> {
    let s = &trace.slices;
    let before = |t: i64| -> usize {
        trace.lanes.iter().map(|l| s.start_ns[l.slices.start as usize..l.slices.end as usize].partition_point(|&x| x < t)).sum()
    };
    let cuts: Vec<i64> = busiest_lane(trace, &prep.cpu_lanes, start, end)
        .map(|lane| {
            let r = trace.lanes[lane as usize].slices.clone();
            let mut ends: Vec<i64> = r
                .map(|i| i as usize)
                .filter(|&i| s.parent[i] == NONE && is_chain_slice(trace, i))
                .map(|i| s.end_ns(i))
                .filter(|&t| t > start && t < end)
                .collect();
            ends.sort_unstable();
            ends.dedup();
            ends
        })
        .unwrap_or_default();
    let mut windows = Vec::new();
    let (mut from, mut next) = (start, 0);
    while before(end) - before(from) > WINDOW_SLICES && next < cuts.len() {
        let base = before(from);
        // The farthest cut keeping the window under the limit (at least the next one).
        let fits = cuts[next..].partition_point(|&t| before(t) - base <= WINDOW_SLICES).max(1);
        let cut = cuts[next + fits - 1];
        next += fits;
        if cut > from {
            windows.push((from, cut));
            from = cut;
        }
    }
    windows.push((from, end));
    windows
}

/// The CPU lane with the most slices in `[start, end]` (the step thread of a stepless trace).
fn busiest_lane(trace: &Trace, lanes: &[u32], start: i64, end: i64) -> Option<u32> {
    lanes
        .iter()
        .map(|&l| {
            let r = trace.lanes[l as usize].slices.clone();
            let starts = &trace.slices.start_ns[r.start as usize..r.end as usize];
            let n = starts.partition_point(|&t| t < end) - starts.partition_point(|&t| t < start);
            (n, std::cmp::Reverse(l))
        })
        .max()
        .filter(|(n, _)| *n > 0)
        .map(|(_, std::cmp::Reverse(l))| l)
}

/// Slices that are chain boundaries on a CPU lane.
fn is_chain_slice(trace: &Trace, i: usize) -> bool {
    matches!(trace.class(trace.slices.cat[i]), CatClass::CpuOp | CatClass::Launch | CatClass::Annotation)
}

/// The chain of CPU lane `lane` over `[start, end]`, or `None` when it has no slice there.
/// `main_times`: the step thread's node times when this is another thread. Such a thread's
/// gap is idle (weighs 0; its next work is handed off by the step's thread) when the step's
/// thread moved during it, else it is the thread's own overhead between ops (the autograd
/// engine between backward ops while the step's thread waits): its busy stretches are the runs
/// between idle gaps.
#[allow(clippy::too_many_arguments)]
fn cpu_chain(
    trace: &Trace,
    prep: &Prepared,
    b: &mut Builder,
    lane: u32,
    start: i64,
    end: i64,
    main_times: Option<&[i64]>,
    launch_node: &mut FxHashMap<u32, u32>,
    blocking: &mut Vec<(u32, usize, u32)>,
) -> Option<Chain> {
    let s = &trace.slices;
    let range = trace.lanes[lane as usize].slices.clone();
    let (lo, hi) = (range.start as usize, range.end as usize);
    let starts = &s.start_ns[lo..hi];
    let first = lo + starts.partition_point(|&t| t < start);
    let last = lo + starts.partition_point(|&t| t < end);
    // Slices open at `start`: the slice starting last before it and its ancestors.
    let mut open = Vec::new();
    if first > lo {
        open.extend(trace.ancestors((first - 1) as u32).filter(|&i| s.end_ns(i as usize) > start && is_chain_slice(trace, i as usize)));
        open.reverse();
    }
    let slices: Vec<u32> =
        open.into_iter().chain((first..last).filter(|&i| is_chain_slice(trace, i)).map(|i| i as u32)).collect();
    let is_main = main_times.is_none();
    if slices.is_empty() && !is_main {
        return None;
    }
    let mut times: Vec<i64> = slices
        .iter()
        .flat_map(|&i| [s.start_ns[i as usize], s.end_ns(i as usize)])
        .filter(|&t| t > start && t < end)
        .collect();
    times.push(end);
    times.sort_unstable();
    times.dedup();

    let last_end = slices.iter().map(|&i| s.end_ns(i as usize).min(end)).max().unwrap_or(start);
    let mut chain = Chain { nodes: vec![(start, b.source)], busy: Vec::new(), gaps: Vec::new(), last_end };
    let mut stack: Vec<u32> = Vec::new();
    let mut next = 0;
    let mut busy_from: Option<(u32, i64)> = None;
    let mut busy_to = (b.source, start);
    let (mut prev_t, mut prev_node) = (start, b.source);
    for &t in &times {
        while let Some(&i) = slices.get(next) {
            if s.start_ns[i as usize] > prev_t {
                break;
            }
            stack.push(i);
            next += 1;
        }
        while stack.last().is_some_and(|&i| s.end_ns(i as usize) <= prev_t) {
            stack.pop();
        }
        let node = b.node(t);
        let top = stack.last().copied().unwrap_or(NONE);
        let seg = t - prev_t;
        let idle = match main_times {
            _ if top != NONE => false,
            None => false,
            Some(main) => busy_from.is_none() || main.get(main.partition_point(|&m| m <= prev_t)).is_some_and(|&m| m < t),
        };
        if idle {
            if let Some((from, from_t)) = busy_from.take() {
                chain.busy.push((from, busy_to.0, from_t, busy_to.1));
            }
            b.edge(prev_node, node, 0, NONE, BoundBy::CpuOverhead, Kind::Idle);
        } else if top == NONE {
            let edge = b.edge(prev_node, node, seg, NONE, BoundBy::CpuOverhead, Kind::Cpu);
            if is_main {
                chain.gaps.push((edge, prev_t, t));
            }
        } else {
            busy_from.get_or_insert((prev_node, prev_t));
            busy_to = (node, t);
            let class = segment_class(trace, prep, &stack, top);
            let edge = b.edge(prev_node, node, seg, top, class, Kind::Cpu);
            if is_main && class == BoundBy::CpuOverhead {
                chain.gaps.push((edge, prev_t, t));
            }
            let at = top as usize;
            if class == BoundBy::SyncWait && s.start_ns[at] == prev_t && s.end_ns(at) == t {
                blocking.push((top, edge, node));
            }
        }
        // Launch calls starting here get their node (activities' launch edges leave from it).
        for &i in slices[..next].iter().rev().take_while(|&&i| s.start_ns[i as usize] == prev_t) {
            if trace.class(s.cat[i as usize]) == CatClass::Launch {
                launch_node.insert(i, prev_node);
            }
        }
        chain.nodes.push((t, node));
        (prev_t, prev_node) = (t, node);
    }
    if let Some((from, from_t)) = busy_from {
        chain.busy.push((from, busy_to.0, from_t, busy_to.1));
    }
    Some(chain)
}

/// What a CPU segment whose innermost slice is `top` is spent on.
fn segment_class(trace: &Trace, prep: &Prepared, stack: &[u32], top: u32) -> BoundBy {
    let t = top as usize;
    if stack.iter().any(|&i| Prepared::flag(&prep.dataloader, trace, i as usize)) {
        return BoundBy::DataLoading;
    }
    match trace.class(trace.slices.cat[t]) {
        CatClass::Launch if Prepared::flag(&prep.blocking, trace, t) => BoundBy::SyncWait,
        CatClass::Launch | CatClass::CpuOp => BoundBy::CpuOp,
        _ => BoundBy::CpuOverhead,
    }
}

/// Hand-offs from the step's thread to the others, and the step thread's gaps that another
/// thread's work fills for at least half of it (it waited for that work: backward on the
/// autograd thread).
fn link_threads(b: &mut Builder, main: Option<&Chain>, others: &[Chain]) {
    let Some(main) = main else {
        return;
    };
    let mut periods: Vec<(i64, i64, u32)> = Vec::new();
    for chain in others {
        for &(from, to, from_t, to_t) in &chain.busy {
            if from_t > b.start {
                let at = main.nodes.partition_point(|(t, _)| *t <= from_t);
                let (mt, mnode) = main.nodes.get(at.wrapping_sub(1)).copied().unwrap_or((b.start, b.source));
                b.edge(mnode, from, from_t - mt, NONE, BoundBy::CpuOverhead, Kind::Handoff);
            }
            periods.push((to_t, from_t, to));
        }
    }
    periods.sort_unstable();
    for &(edge, a, z) in &main.gaps {
        let lo = periods.partition_point(|p| p.0 <= a);
        let hi = periods.partition_point(|p| p.0 <= z);
        // The latest run ending inside the gap that was busy for at least half of it (it may
        // have begun before: the step's thread did a little between the other's ops).
        let filled = periods[lo..hi].iter().rev().find(|&&(e, s, _)| 2 * (e - s.max(a)) >= z - a);
        if let Some(&(e, _, node)) = filled {
            b.edges[edge].weight = 0;
            b.edges[edge].kind = Kind::Idle;
            let to = b.edges[edge].to;
            b.edge(node, to, z - e, NONE, BoundBy::CpuOverhead, Kind::Join);
        }
    }
}

/// A device activity in the window.
struct Act {
    slice: u32,
    lane: u32,
    process: u32,
    start: i64,
    end: i64,
    start_node: u32,
    end_node: u32,
    /// The launch call's (start, end), if linked.
    launch_at: Option<(i64, i64)>,
    /// The activity before it on its stream (outside the window: its end time only).
    prev: Option<(Option<u32>, i64)>,
}

/// Every device activity overlapping the window, with its start and end nodes and its run
/// edge.
fn activities(trace: &Trace, prep: &Prepared, b: &mut Builder, start: i64, end: i64) -> Vec<Act> {
    let s = &trace.slices;
    let mut acts = Vec::new();
    for &lane in &prep.gpu_lanes {
        let l = &trace.lanes[lane as usize];
        let (lo, hi) = (l.slices.start as usize, l.slices.end as usize);
        let starts = &s.start_ns[lo..hi];
        let last = lo + starts.partition_point(|&t| t < end);
        // Activities on a stream do not overlap: only the last few before the window can run
        // into it (a GPU-side annotation may sit between them).
        let first = (lo + starts.partition_point(|&t| t < start)).saturating_sub(LOOK_BACK).max(lo);
        let mut prev: Option<(Option<u32>, i64)> = (lo..first)
            .rev()
            .find(|&i| trace.class(s.cat[i]).is_device_activity())
            .map(|i| (None, s.end_ns(i)));
        for i in first..last {
            if !trace.class(s.cat[i]).is_device_activity() {
                continue;
            }
            let (st, en) = (s.start_ns[i], s.end_ns(i));
            if en <= start {
                prev = Some((None, en));
                continue;
            }
            let start_node = if st <= start { b.source } else { b.node(st) };
            let end_node = b.node(en);
            let class = activity_class(trace, prep, i);
            b.edge(start_node, end_node, en - st.max(start), i as u32, class, Kind::Run);
            let launch = s.launch[i];
            let launch_at = (launch != NONE).then(|| (s.start_ns[launch as usize], s.end_ns(launch as usize)));
            acts.push(Act { slice: i as u32, lane, process: l.process, start: st, end: en, start_node, end_node, launch_at, prev });
            prev = Some((Some(end_node), en));
        }
    }
    acts
}

/// What a device activity's running time is spent on.
fn activity_class(trace: &Trace, prep: &Prepared, i: usize) -> BoundBy {
    match trace.class(trace.slices.cat[i]) {
        CatClass::Memcpy | CatClass::Memset => BoundBy::MemcpyMemset,
        _ if Prepared::flag(&prep.comm, trace, i) => BoundBy::GpuCommunication,
        _ => BoundBy::GpuCompute,
    }
}

/// The edges into activity `a`'s start: its launch, its stream, a cross-stream wait; the
/// latest cause weighs the observed delay, the others at most a typical one.
fn activity_causes(
    trace: &Trace,
    prep: &Prepared,
    b: &mut Builder,
    acts: &[Act],
    by_end: &[usize],
    a: usize,
    launch_node: &FxHashMap<u32, u32>,
) {
    let act = &acts[a];
    if act.start <= b.start {
        return;
    }
    let s = act.start;
    let launch = act.launch_at.filter(|(l, _)| *l <= s).map(|(l, _)| {
        let call = trace.slices.launch[act.slice as usize];
        (launch_node.get(&call).copied(), l, call)
    });
    let stream = act.prev.filter(|(_, p)| *p <= s);
    // The binding cause: the stream if the activity was queued behind it (HTA's rule).
    let stream_binds = match (launch, stream) {
        (Some((_, l, _)), Some((_, p))) => p >= l,
        (None, Some(_)) => true,
        _ => false,
    };
    let (bind_t, typical) = match (stream_binds, launch, stream) {
        (true, _, Some((_, p))) => (p, prep.typical_gap_ns),
        (false, Some((_, l, _)), _) => (l, prep.typical_launch_ns),
        _ => (b.start, 0),
    };
    let recorded = recorded_wait(prep, acts, a);
    let cross = if prep.syncs.recorded {
        recorded.filter(|&x| acts[x].end >= bind_t)
    } else if s - bind_t > typical + CROSS_STREAM_NS {
        cross_stream(acts, by_end, a, bind_t)
    } else {
        None
    };
    let binds = |kind: Kind| cross.is_none() && ((kind == Kind::Stream) == stream_binds);
    if let Some((node, l, call)) = launch {
        let w = if binds(Kind::Launch) { s - l } else { (s - l).min(prep.typical_launch_ns) };
        b.cause((node, l), act.start_node, w, call, BoundBy::LaunchDelay, Kind::Launch);
    }
    if let Some((node, p)) = stream {
        let w = if binds(Kind::Stream) { s - p } else { (s - p).min(prep.typical_gap_ns) };
        b.cause((node, p), act.start_node, w, act.slice, BoundBy::KernelGap, Kind::Stream);
    }
    if let Some(x) = cross {
        let other = &acts[x];
        b.edge(other.end_node, act.start_node, s - other.end, act.slice, BoundBy::SyncWait, Kind::CrossStream);
    } else if let Some(x) = recorded {
        // A recorded wait that did not hold the activity back: it holds it if what it waited
        // for gets longer.
        b.edge(acts[x].end_node, act.start_node, 0, act.slice, BoundBy::SyncWait, Kind::CrossStream);
    }
    if launch.is_none() && stream.is_none() {
        b.edge(b.source, act.start_node, s - b.start, act.slice, BoundBy::KernelGap, Kind::Enter);
    }
}

/// The activity a recorded `cudaStreamWaitEvent` made activity `a` wait for: of the waits on
/// its stream called after the previous activity's launch and by its own, the awaited activity
/// (the last launched on the other stream before the cutoff) ending latest, by `a`'s start.
fn recorded_wait(prep: &Prepared, acts: &[Act], a: usize) -> Option<usize> {
    let act = &acts[a];
    let (launched, _) = act.launch_at?;
    let after = match a.checked_sub(1).map(|p| &acts[p]) {
        Some(prev) if prev.lane == act.lane => prev.launch_at.map_or(prev.start, |(l, _)| l),
        _ => i64::MIN,
    };
    prep.syncs
        .waits(act.lane, after, launched)
        .iter()
        .filter_map(|w| {
            // `acts` holds each stream's activities together, lanes ascending, in launch order.
            let lo = acts.partition_point(|x| x.lane < w.on);
            let on = lo + acts[lo..].iter().take_while(|x| x.lane == w.on).count();
            acts[lo..on].iter().rposition(|x| x.launch_at.map_or(x.start, |(l, _)| l) < w.cutoff).map(|x| lo + x)
        })
        .filter(|&x| acts[x].end <= act.start)
        .max_by_key(|&x| acts[x].end)
}

/// Another stream's activity (same device) ending in `(after, start]` within
/// [`CROSS_STREAM_NS`] of activity `a`'s start: the latest one.
fn cross_stream(acts: &[Act], by_end: &[usize], a: usize, after: i64) -> Option<usize> {
    let act = &acts[a];
    let hi = by_end.partition_point(|&x| acts[x].end <= act.start);
    by_end[..hi]
        .iter()
        .rev()
        .take_while(|&&x| acts[x].end > after && act.start - acts[x].end <= CROSS_STREAM_NS)
        .copied()
        .find(|&x| acts[x].process == act.process && acts[x].lane != act.lane)
}

/// A blocking call returns after the latest activity launched before it (or by it) that ends
/// inside it, on the stream or device its `cuda_sync` record names if it has one: that activity's end -> the call's end, and the call's own segment weighs only
/// the return. Without one, the call's whole time stays a sync wait on the CPU. True when it
/// found one.
#[allow(clippy::too_many_arguments)]
fn sync_return(
    trace: &Trace,
    prep: &Prepared,
    b: &mut Builder,
    acts: &[Act],
    by_end: &[usize],
    call: u32,
    edge: usize,
    end_node: u32,
) -> bool {
    let s = &trace.slices;
    let (cs, ce) = (s.start_ns[call as usize], s.end_ns(call as usize));
    let lo = by_end.partition_point(|&x| acts[x].end <= cs);
    let hi = by_end.partition_point(|&x| acts[x].end <= ce);
    // A record names the stream (or device) it waited for; else any stream.
    let on = prep.syncs.waited(call);
    let waited = by_end[lo..hi]
        .iter()
        .rev()
        .map(|&x| &acts[x])
        .filter(|x| match on {
            Some(Waited::Lane(l)) => x.lane == l,
            Some(Waited::Device(p)) => x.process == p,
            None => true,
        })
        .find(|x| x.launch_at.is_some_and(|(l, _)| l <= cs));
    if let Some(x) = waited {
        let ret = ce - x.end;
        b.edges[edge].weight = ret;
        b.edge(x.end_node, end_node, ret, call, BoundBy::SyncWait, Kind::SyncReturn);
    }
    waited.is_some()
}

/// Incoming-edge index and a topological order (Kahn's algorithm; ties by node id).
fn finish(b: Builder, sink: u32, waits: u32) -> Graph {
    let n = b.time.len();
    let mut in_start = vec![0u32; n + 1];
    for e in &b.edges {
        in_start[e.to as usize + 1] += 1;
    }
    for i in 0..n {
        in_start[i + 1] += in_start[i];
    }
    let mut fill = in_start.clone();
    let mut incoming = vec![0u32; b.edges.len()];
    let mut out_count = vec![0u32; n + 1];
    for (id, e) in b.edges.iter().enumerate() {
        incoming[fill[e.to as usize] as usize] = id as u32;
        fill[e.to as usize] += 1;
        out_count[e.from as usize + 1] += 1;
    }
    for i in 0..n {
        out_count[i + 1] += out_count[i];
    }
    let mut outgoing = vec![0u32; b.edges.len()];
    let mut ofill = out_count.clone();
    for (id, e) in b.edges.iter().enumerate() {
        outgoing[ofill[e.from as usize] as usize] = id as u32;
        ofill[e.from as usize] += 1;
    }
    let mut pending: Vec<u32> = (0..n).map(|i| in_start[i + 1] - in_start[i]).collect();
    let mut order: Vec<u32> = (0..n as u32).filter(|&i| pending[i as usize] == 0).collect();
    let mut at = 0;
    while let Some(&node) = order.get(at) {
        at += 1;
        let (lo, hi) = (out_count[node as usize] as usize, out_count[node as usize + 1] as usize);
        for &e in &outgoing[lo..hi] {
            let to = b.edges[e as usize].to as usize;
            pending[to] -= 1;
            if pending[to] == 0 {
                order.push(to as u32);
            }
        }
    }
    Graph { time: b.time, edges: b.edges, in_start, incoming, order, source: b.source, sink, waits }
}
