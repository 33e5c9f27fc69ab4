//! The host tree the module view reads: TensorBoard's op tree (`op_tree.py`, `node.py`), rebuilt
//! over the columns so the numbers are the plugin's.
//!
//! **Nodes**: operators, `ProfilerStep#N`, `nn.Module` frames (`python_function` slices with a
//! `Python module id`), `python` spans, and the annotations the plugin keeps (DataLoader,
//! DataPipe, `Optimizer.step`, collectives). Other `python_function` frames and annotations are
//! not in it. Per thread (`tid`), nodes nest by time, sorted by start then end descending; a node
//! that straddles its would-be parent's end is dropped, as the plugin does.
//!
//! **Launches**: a runtime call (`cuda_runtime`, 2021's `Runtime`; not `cuda_driver`, which the
//! plugin does not read) belongs to the first node, in file order thread by thread, with its
//! `External id`; calls without one go to the first node without one (an `nn.Module` frame has
//! none: that is how a module gets launches of its own). A call's device time is the time of
//! the kernels, copies and memsets it launched.
//!
//! **Merges**: an operator whose only child is an operator of the same name takes that child's
//! children and launches (its own launches are dropped), as PyTorch's `_remove_dup_nodes`.
//!
//! Cost: O(n log n) in the host nodes (the per-thread sort), O(n) memory in them; built on
//! demand and dropped after the module statistics.

use crate::model::strings::FxHashMap;
use crate::model::{StrId, Trace, NONE};

/// Parent of a node the plugin drops (it straddles its parent's end).
const DROPPED: u32 = NONE - 1;

/// What a host node is, for the module statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// An operator the module view counts (its `operators` and self device time).
    Op,
    /// An operator it does not count: `Optimizer.*`, DataLoader `__next__`, `DataParallel.forward`.
    UncountedOp,
    /// `ProfilerStep#N`.
    Step,
    /// An `nn.Module` frame.
    Module,
    /// A `python` span or a kept annotation: in the tree, never counted.
    Other,
}

impl Kind {
    /// Operator-typed (the merge rule's condition).
    fn is_op(self) -> bool {
        matches!(self, Kind::Op | Kind::UncountedOp)
    }
}

/// One candidate: a slice, its kind and, for a module frame, its `Python module id`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidate {
    pub slice: u32,
    pub kind: Kind,
    pub module_id: i64,
}

/// The tree and its statistics, one row per node in tree order (a parent before its children).
pub(super) struct HostTree {
    pub slice: Vec<u32>,
    pub kind: Vec<Kind>,
    pub module_id: Vec<i64>,
    /// Parent node after merges; [`NONE`] under the thread's root; [`DROPPED`] or merged
    /// nodes are not in the tree (see [`HostTree::in_tree`]).
    pub parent: Vec<u32>,
    /// Node that merged this one, or [`NONE`].
    merged_into: Vec<u32>,
    /// Device time of the node's launches and its children's, ns.
    pub device_ns: Vec<i64>,
    /// Duration minus the children's and the launches' durations, ns (may be negative, as
    /// the plugin's is when launches outlast their node).
    pub self_host_ns: Vec<i64>,
    /// Modules: own launches' device time plus the counted child operators' device time, ns.
    pub self_device_ns: Vec<i64>,
    /// Counted operators among the children.
    pub operators: Vec<u32>,
    /// Reached from the root through steps and modules only: the modules the view counts
    /// (an `nn.Module` under an operator, e.g. `Torch-Compiled Region` or a checkpoint's
    /// recomputation in backward, is not).
    pub counted: Vec<bool>,
    /// Node of each slice that `lookup` asked for.
    pub node_of: FxHashMap<u32, u32>,
}

impl HostTree {
    /// Whether node `n` is in the tree (not dropped, not merged into its parent).
    pub fn in_tree(&self, n: u32) -> bool {
        self.parent[n as usize] != DROPPED && self.merged_into[n as usize] == NONE
    }

    /// The node holding slice `s` (its merger when merged).
    pub fn node(&self, s: u32) -> Option<u32> {
        let n = *self.node_of.get(&s)?;
        let m = self.merged_into[n as usize];
        let n = if m == NONE { n } else { m };
        (self.parent[n as usize] != DROPPED).then_some(n)
    }

    /// `n` and its ancestors in the tree, innermost first.
    pub fn ancestors(&self, n: u32) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(Some(n), |&k| Some(self.parent[k as usize]).filter(|&p| p < DROPPED))
    }

    /// Builds the tree over `candidates` (in file order); records the nodes of `lookup`'s slices.
    pub fn build(trace: &Trace, candidates: &[Candidate], lookup: &[u32]) -> Self {
        let s = &trace.slices;
        let order = tree_order(trace, candidates);
        let mut rank = vec![0u32; candidates.len()];
        for (n, &c) in order.iter().enumerate() {
            rank[c as usize] = n as u32;
        }
        let pick = |c: u32| candidates[c as usize];
        let slice: Vec<u32> = order.iter().map(|&c| pick(c).slice).collect();
        let wanted: crate::model::strings::FxHashSet<u32> = lookup.iter().copied().collect();
        let node_of = slice.iter().enumerate().filter(|(_, sl)| wanted.contains(sl)).map(|(n, &sl)| (sl, n as u32)).collect();
        let mut tree = HostTree {
            kind: order.iter().map(|&c| pick(c).kind).collect(),
            module_id: order.iter().map(|&c| pick(c).module_id).collect(),
            parent: nest(trace, &slice),
            merged_into: vec![NONE; slice.len()],
            device_ns: vec![0; slice.len()],
            self_host_ns: vec![0; slice.len()],
            self_device_ns: vec![0; slice.len()],
            operators: vec![0; slice.len()],
            counted: vec![false; slice.len()],
            node_of,
            slice,
        };
        let launches = Launches::claim(trace, candidates, &rank);
        let tail = tree.merge(&s.name);
        tree.fill(trace, &launches, &tail);
        tree
    }

    /// Merges each operator whose only child is a same-named operator; returns per node the
    /// last node merged into it (itself when none), whose launches it keeps.
    fn merge(&mut self, name: &[StrId]) -> Vec<u32> {
        let n = self.slice.len();
        let (mut children, mut only) = (vec![0u32; n], vec![NONE; n]);
        for k in 0..n {
            let p = self.parent[k];
            if p < DROPPED {
                children[p as usize] += 1;
                only[p as usize] = k as u32;
            }
        }
        let mut tail: Vec<u32> = Vec::with_capacity(n);
        let slice = &self.slice;
        let same = |a: u32, b: u32| name.get(slice[a as usize] as usize) == name.get(slice[b as usize] as usize);
        for k in 0..n as u32 {
            let p = self.parent[k as usize];
            if p != NONE && p != DROPPED && self.merged_into[p as usize] != NONE {
                self.parent[k as usize] = self.merged_into[p as usize];
            }
            let mut last = k;
            if p != DROPPED && self.merged_into[k as usize] == NONE && self.kind[k as usize].is_op() {
                loop {
                    let c = only[last as usize];
                    if children[last as usize] != 1 || !self.kind[c as usize].is_op() || !same(k, c) {
                        break;
                    }
                    self.merged_into[c as usize] = k;
                    last = c;
                }
            }
            tail.push(last);
        }
        tail
    }

    /// Device, self host and self device times, operators and `counted`, bottom-up then top-down.
    fn fill(&mut self, trace: &Trace, launches: &Launches, tail: &[u32]) {
        let s = &trace.slices;
        let dur = |n: usize| s.dur_ns[self.slice[n] as usize];
        let mut child_ns = vec![0i64; self.slice.len()];
        for k in (0..self.slice.len()).rev() {
            if !self.in_tree(k as u32) {
                continue;
            }
            let t = tail[k] as usize;
            self.device_ns[k] += launches.device_ns[t];
            self.self_host_ns[k] = dur(k) - child_ns[k] - launches.host_ns[t];
            if self.kind[k] == Kind::Module {
                self.self_device_ns[k] += launches.device_ns[t];
            }
            let p = self.parent[k];
            if p == NONE {
                continue;
            }
            let p = p as usize;
            self.device_ns[p] += self.device_ns[k];
            child_ns[p] += dur(k);
            if self.kind[k] == Kind::Op {
                self.operators[p] += 1;
                if self.kind[p] == Kind::Module {
                    self.self_device_ns[p] += self.device_ns[k];
                }
            }
        }
        for k in 0..self.slice.len() {
            let p = self.parent[k];
            self.counted[k] = p == NONE || p < DROPPED && self.counted[p as usize] && matches!(self.kind[p as usize], Kind::Step | Kind::Module);
        }
    }
}

/// The candidates (indices) grouped by thread in order of first appearance, each thread's
/// sorted by start, then end descending, then file order.
fn tree_order(trace: &Trace, candidates: &[Candidate]) -> Vec<u32> {
    let s = &trace.slices;
    let tid = |c: &Candidate| trace.lanes.get(s.lane[c.slice as usize].0 as usize).map_or(StrId(u32::MAX), |l| l.tid);
    let mut group: FxHashMap<StrId, u32> = FxHashMap::default();
    let mut keyed: Vec<(u32, i64, i64, u32)> = candidates
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let next = group.len() as u32;
            let g = *group.entry(tid(c)).or_insert(next);
            let i = c.slice as usize;
            (g, s.start_ns[i], -(s.start_ns[i] + s.dur_ns[i]), k as u32)
        })
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(.., k)| k).collect()
}

/// Parents by time nesting within each thread (`slice` in [`tree_order`]); [`NONE`] under the
/// thread's root, [`DROPPED`] for a node straddling the end of the one it starts in.
fn nest(trace: &Trace, slice: &[u32]) -> Vec<u32> {
    let s = &trace.slices;
    let lane_tid = |i: u32| trace.lanes.get(s.lane[i as usize].0 as usize).map(|l| l.tid);
    let end = |i: u32| s.start_ns[i as usize] + s.dur_ns[i as usize];
    let mut parent = vec![NONE; slice.len()];
    let mut stack: Vec<u32> = Vec::new();
    for (n, &i) in slice.iter().enumerate() {
        if n > 0 && lane_tid(slice[n - 1]) != lane_tid(i) {
            stack.clear();
        }
        while let Some(&top) = stack.last() {
            let t = slice[top as usize];
            if s.start_ns[i as usize] < end(t) {
                break;
            }
            stack.pop();
        }
        match stack.last() {
            Some(&top) if end(i) > end(slice[top as usize]) => parent[n] = DROPPED,
            top => {
                parent[n] = top.copied().unwrap_or(NONE);
                stack.push(n as u32);
            }
        }
    }
    parent
}

/// Launch time and device time each node owns, ns (per node in tree order).
struct Launches {
    host_ns: Vec<i64>,
    device_ns: Vec<i64>,
}

impl Launches {
    /// Runtime calls to their first node by `External id` (see the module docs).
    fn claim(trace: &Trace, candidates: &[Candidate], rank: &[u32]) -> Self {
        let s = &trace.slices;
        let runtime_cats: Vec<StrId> = ["cuda_runtime", "Runtime", "runtime"].iter().filter_map(|c| trace.strings.lookup(c)).collect();
        let is_runtime = |i: u32| runtime_cats.contains(&s.cat[i as usize]);
        // The plugin claims thread by thread (first appearance), each thread in file order.
        let tid = |c: &Candidate| trace.lanes.get(s.lane[c.slice as usize].0 as usize).map_or(StrId(u32::MAX), |l| l.tid);
        let mut group: FxHashMap<StrId, u32> = FxHashMap::default();
        let mut by_thread: Vec<(u32, u32)> = candidates
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let next = group.len() as u32;
                (*group.entry(tid(c)).or_insert(next), k as u32)
            })
            .collect();
        by_thread.sort_unstable();
        let mut owner: FxHashMap<u32, u32> = FxHashMap::default();
        for (_, k) in by_thread {
            let c = candidates[k as usize];
            let ext = if c.kind == Kind::Module { crate::model::NO_ID } else { s.external_id[c.slice as usize] };
            owner.entry(ext).or_insert(rank[k as usize]);
        }
        let mut out = Launches { host_ns: vec![0; candidates.len()], device_ns: vec![0; candidates.len()] };
        for i in 0..s.len() as u32 {
            let (call, device) = if is_runtime(i) {
                (i, false)
            } else if trace.class(s.cat[i as usize]).is_device_activity() && s.launch[i as usize] != NONE && is_runtime(s.launch[i as usize]) {
                (s.launch[i as usize], true)
            } else {
                continue;
            };
            if let Some(&n) = owner.get(&s.external_id[call as usize]) {
                let col = if device { &mut out.device_ns } else { &mut out.host_ns };
                col[n as usize] += s.dur_ns[i as usize];
            }
        }
        out
    }
}
