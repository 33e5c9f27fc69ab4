//! The call tree: host work aggregated by call path (callers -> callees), over Python frames
//! where the trace records them (`with_stack=True`), `record_function` ranges, ops and runtime
//! calls, with CPU time and the GPU time of the device work each path launched; what a flame
//! graph draws (docs/definitions.md "Call tree").
//!
//! **Rules.** Per CPU thread, the host slices (`python_function`, ops, annotations, launch
//! calls) nest by time: a slice is the child of the innermost open one that contains it (ends
//! included; a slice straddling its would-be parent's end nests under the next that contains
//! it). Instances on the same path with the same name are one node: `calls` counts them,
//! `total` sums their durations, `self` their durations minus the union of their children's
//! spans (a range that straddles a sibling's end, as `ProfilerStep#N` does with Python frames,
//! is not counted twice, so self time is never negative). A device
//! activity's time goes to the launch call that launched it (`gpu_self`), and `gpu_total` is a
//! node's own plus its children's. The root's children are the threads. A scope keeps the
//! slices that start inside it (a step, a range).
//!
//! **Invariants.** For every node, `total = self + Σ children's total` where no two of its
//! children's instances overlap (else `total <= self + Σ children's total`: the overlap counts
//! once in self), and `gpu_total = gpu_self + Σ children's gpu_total` always; the totals of the nodes named after an op sum to the
//! op's CPU total in the op table (each event is in exactly one node).
//!
//! Cost: one pass over each thread's slices (already sorted by start, then longest first), a
//! hash map from (parent node, name) to node; O(nodes) memory, no per-slice allocation.
//!
//! **Diff.** [`diff`] merges two traces' trees by call path (the names from the root down), each
//! merged node holding its totals on both sides; [`Growth::of`] says grew / shrank / same within
//! [`SAME_WITHIN`] of the baseline (`diff --tree`, the Flame tab against a baseline).

use crate::model::strings::FxHashMap;
use crate::model::{CatClass, ProcessKind, StrId, Trace, NONE};
use std::borrow::Cow;

/// What a node stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// The whole scope.
    Root,
    /// A CPU thread.
    Thread,
    /// A Python frame (`python_function`).
    Python,
    /// A `record_function` range or other annotation (`ProfilerStep#N` included).
    Annotation,
    /// A PyTorch operator.
    Op,
    /// A runtime call (`cudaLaunchKernel`, `cudaMemcpyAsync`, ...).
    Runtime,
}

impl NodeKind {
    /// The `--json` key.
    pub fn key(self) -> &'static str {
        match self {
            NodeKind::Root => "root",
            NodeKind::Thread => "thread",
            NodeKind::Python => "python",
            NodeKind::Annotation => "annotation",
            NodeKind::Op => "op",
            NodeKind::Runtime => "runtime",
        }
    }
}

/// One node of the aggregated tree.
#[derive(Clone, Debug, PartialEq)]
pub struct CallNode {
    /// The frame's, op's or thread's name (unused for the root).
    pub name: StrId,
    /// What it is.
    pub kind: NodeKind,
    /// Parent node (`NONE` for the root).
    pub parent: u32,
    /// Child nodes, in first-seen order.
    pub children: Vec<u32>,
    /// Instances merged into it.
    pub calls: u64,
    /// Summed duration of its instances, ns.
    pub total_ns: i64,
    /// `total_ns` minus its instances' children's, ns.
    pub self_ns: i64,
    /// Device time launched by its own instances (launch calls), ns.
    pub gpu_self_ns: i64,
    /// `gpu_self_ns` plus the children's `gpu_total_ns`.
    pub gpu_total_ns: i64,
    /// Its first instance (a slice id; `NONE` for the root and threads).
    pub first_slice: u32,
}

/// The aggregated tree; node 0 is the root.
#[derive(Clone, Debug, PartialEq)]
pub struct CallTree {
    /// Nodes, a parent before its children.
    pub nodes: Vec<CallNode>,
}

impl CallTree {
    /// Node `i`'s display name.
    pub fn label<'t>(&self, trace: &'t Trace, i: u32) -> Cow<'t, str> {
        match self.nodes.get(i as usize) {
            Some(n) if n.kind == NodeKind::Root => Cow::Borrowed("all threads"),
            Some(n) => trace.strings.get(n.name),
            None => Cow::Borrowed(""),
        }
    }

    /// Whether node `i` holds at least `min_pct`% of the root's CPU total or of its GPU total.
    pub fn kept(&self, i: u32, min_pct: f64) -> bool {
        let (Some(root), Some(n)) = (self.nodes.first(), self.nodes.get(i as usize)) else { return false };
        let share = |part: i64, whole: i64| whole > 0 && 100.0 * part as f64 / whole as f64 >= min_pct;
        share(n.total_ns, root.total_ns) || share(n.gpu_total_ns, root.gpu_total_ns)
    }

    /// Node `i`'s children [`Self::kept`] at `min_pct`, largest CPU total first (then GPU
    /// total, then first seen).
    pub fn kept_children(&self, i: u32, min_pct: f64) -> Vec<u32> {
        let Some(node) = self.nodes.get(i as usize) else { return Vec::new() };
        let mut c: Vec<u32> = node.children.iter().copied().filter(|&c| self.kept(c, min_pct)).collect();
        c.sort_by_key(|&c| {
            let n = &self.nodes[c as usize];
            (std::cmp::Reverse(n.total_ns), std::cmp::Reverse(n.gpu_total_ns), c)
        });
        c
    }
}

/// An instance open on the walk's stack.
struct Open {
    start: i64,
    end: i64,
    node: u32,
    dur: i64,
    /// Union of its children's spans so far, ns, and where that union ends.
    children: i64,
    covered_until: i64,
}

/// The call tree of `trace`'s host work starting in `[scope.0, scope.1)` (all of it for `None`).
pub fn build(trace: &Trace, scope: Option<(i64, i64)>) -> CallTree {
    let s = &trace.slices;
    let python = trace.strings.lookup("python_function");
    let mut launched: FxHashMap<u32, i64> = FxHashMap::default();
    for a in 0..s.len() {
        if trace.class(s.cat[a]).is_device_activity() && s.launch[a] != NONE {
            *launched.entry(s.launch[a]).or_default() += s.dur_ns[a];
        }
    }
    let root = CallNode { name: StrId(NONE), kind: NodeKind::Root, parent: NONE, children: Vec::new(), calls: 1, total_ns: 0, self_ns: 0, gpu_self_ns: 0, gpu_total_ns: 0, first_slice: NONE };
    let mut nodes = vec![root];
    let mut index: FxHashMap<(u32, StrId), u32> = FxHashMap::default();
    let mut child = |nodes: &mut Vec<CallNode>, parent: u32, name: StrId, kind: NodeKind, slice: u32| -> u32 {
        *index.entry((parent, name)).or_insert_with(|| {
            let id = nodes.len() as u32;
            nodes.push(CallNode { name, kind, parent, children: Vec::new(), calls: 0, total_ns: 0, self_ns: 0, gpu_self_ns: 0, gpu_total_ns: 0, first_slice: slice });
            if let Some(p) = nodes.get_mut(parent as usize) {
                p.children.push(id);
            }
            id
        })
    };
    let mut stack: Vec<Open> = Vec::new();
    for p in trace.processes.iter().filter(|p| p.kind == ProcessKind::Cpu) {
        for lane_id in &p.lanes {
            let Some(lane) = trace.lanes.get(lane_id.0 as usize) else { continue };
            let thread = child(&mut nodes, 0, lane.name, NodeKind::Thread, NONE);
            stack.clear();
            for i in lane.slices.start..lane.slices.end {
                let k = i as usize;
                let (start, dur) = (s.start_ns[k], s.dur_ns[k]);
                if scope.is_some_and(|(a, b)| start < a || start >= b) {
                    continue;
                }
                let kind = match trace.class(s.cat[k]) {
                    _ if Some(s.cat[k]) == python => NodeKind::Python,
                    CatClass::CpuOp => NodeKind::Op,
                    CatClass::Annotation => NodeKind::Annotation,
                    CatClass::Launch => NodeKind::Runtime,
                    _ => continue,
                };
                let end = start + dur;
                while stack.last().is_some_and(|o| o.end < end) {
                    close(&mut nodes, &mut stack);
                }
                let parent = stack.last().map_or(thread, |o| o.node);
                let node = child(&mut nodes, parent, s.name[k], kind, i);
                if let Some(n) = nodes.get_mut(node as usize) {
                    n.gpu_self_ns += launched.get(&i).copied().unwrap_or(0);
                }
                stack.push(Open { start, end, node, dur, children: 0, covered_until: start });
            }
            while !stack.is_empty() {
                close(&mut nodes, &mut stack);
            }
        }
    }
    // Children after parents: sum totals bottom-up.
    for i in (1..nodes.len()).rev() {
        let (total, gpu, parent) = (nodes[i].total_ns, nodes[i].gpu_self_ns + nodes[i].gpu_total_ns, nodes[i].parent);
        nodes[i].gpu_total_ns = gpu;
        if let Some(p) = nodes.get_mut(parent as usize) {
            p.gpu_total_ns += gpu;
            if matches!(p.kind, NodeKind::Root | NodeKind::Thread) {
                p.total_ns += total;
            }
        }
    }
    nodes[0].gpu_total_ns += nodes[0].gpu_self_ns;
    CallTree { nodes }
}

/// Closes the top instance: its node gains a call, its time and its self time; its parent
/// instance adds the part of its span no earlier child covered.
fn close(nodes: &mut [CallNode], stack: &mut Vec<Open>) {
    let Some(o) = stack.pop() else { return };
    if let Some(n) = nodes.get_mut(o.node as usize) {
        n.calls += 1;
        n.total_ns += o.dur;
        n.self_ns += o.dur - o.children;
    }
    if let Some(p) = stack.last_mut() {
        // Children arrive in start order: the union grows by what lies past the covered part.
        let from = o.start.max(p.covered_until);
        p.children += (o.end - from).max(0);
        p.covered_until = p.covered_until.max(o.end);
    }
}

/// Within this share of the baseline a node is neither grown nor shrunk (timing noise).
pub const SAME_WITHIN: f64 = 0.02;

/// A node's change between two traces' call trees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    /// More time in the current trace (or only there).
    Grew,
    /// Less time (or only in the baseline).
    Shrank,
    /// Within [`SAME_WITHIN`] of the baseline.
    Same,
}

impl Growth {
    /// How `current_ns` compares with `base_ns`.
    pub fn of(base_ns: i64, current_ns: i64) -> Growth {
        let delta = (current_ns - base_ns) as f64;
        if delta.abs() <= SAME_WITHIN * base_ns.abs() as f64 {
            Growth::Same
        } else if delta > 0.0 {
            Growth::Grew
        } else {
            Growth::Shrank
        }
    }

    /// The `--json` key.
    pub fn key(self) -> &'static str {
        match self {
            Growth::Grew => "grew",
            Growth::Shrank => "shrank",
            Growth::Same => "same",
        }
    }
}

/// One node of two merged call trees: the same path of names in both.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffNode {
    /// The last name of the path (`all threads` for the root).
    pub name: String,
    /// What it is (the current trace's kind when both have the path).
    pub kind: NodeKind,
    /// Parent node (`NONE` for the root).
    pub parent: u32,
    /// Child nodes: the baseline's first, then those only in the current trace.
    pub children: Vec<u32>,
    /// CPU total in the baseline and in the current trace, ns (0 where the path is absent).
    pub total_ns: [i64; 2],
    /// GPU total in the baseline and in the current trace, ns.
    pub gpu_total_ns: [i64; 2],
}

/// Two call trees merged by path; node 0 is the root.
#[derive(Clone, Debug, PartialEq)]
pub struct CallTreeDiff {
    /// Nodes, a parent before its children.
    pub nodes: Vec<DiffNode>,
    /// Per node of the current tree, its merged node.
    pub current: Vec<u32>,
}

/// A thread's name without its thread id (`thread 59812 (python3)` -> `(python3)`; `thread
/// 7` -> `thread`): two traces' threads differ by id, not by role.
fn thread_key(name: &str) -> &str {
    let Some(rest) = name.strip_prefix("thread ") else { return name };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit()).trim();
    if rest.is_empty() {
        "thread"
    } else {
        rest
    }
}

/// `base` and `current` (each a trace with its call tree) merged by path: a node of either tree
/// is the node of the merged tree whose names from the root are its own (a thread's without its
/// thread id), with its totals on its side (docs/definitions.md "Call tree", diff). O(nodes of
/// both) with a hash map.
pub fn diff(base: (&Trace, &CallTree), current: (&Trace, &CallTree)) -> CallTreeDiff {
    let root = DiffNode { name: "all threads".into(), kind: NodeKind::Root, parent: NONE, children: Vec::new(), total_ns: [0; 2], gpu_total_ns: [0; 2] };
    let mut out = CallTreeDiff { nodes: vec![root], current: Vec::new() };
    let mut index: FxHashMap<(u32, String), u32> = FxHashMap::default();
    for (side, (trace, tree)) in [base, current].into_iter().enumerate() {
        // Per node of this tree: its merged node (nodes come parent first).
        let mut merged = vec![0u32; tree.nodes.len()];
        for (i, n) in tree.nodes.iter().enumerate() {
            let at = if n.kind == NodeKind::Root {
                0
            } else {
                let parent = merged.get(n.parent as usize).copied().unwrap_or(0);
                let name = tree.label(trace, i as u32).into_owned();
                let key = if n.kind == NodeKind::Thread { thread_key(&name).to_owned() } else { name.clone() };
                let nodes = &mut out.nodes;
                *index.entry((parent, key)).or_insert_with(|| {
                    let id = nodes.len() as u32;
                    nodes.push(DiffNode { name, kind: n.kind, parent, children: Vec::new(), total_ns: [0; 2], gpu_total_ns: [0; 2] });
                    if let Some(p) = nodes.get_mut(parent as usize) {
                        p.children.push(id);
                    }
                    id
                })
            };
            merged[i] = at;
            if let Some(d) = out.nodes.get_mut(at as usize) {
                d.total_ns[side] += n.total_ns;
                d.gpu_total_ns[side] += n.gpu_total_ns;
                if side == 1 {
                    d.kind = n.kind;
                }
            }
        }
        out.current = merged;
    }
    out
}
