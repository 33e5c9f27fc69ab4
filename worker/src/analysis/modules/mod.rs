//! The module tree: `nn.Module` frames (recorded with `with_stack=True`) as a tree of
//! (module name, module id) nodes with occurrences, host and device times, the numbers of the
//! TensorBoard plugin's Module view (docs/definitions.md "Modules").
//!
//! **Nodes.** The names PyTorch gives module calls already tell instances apart (`Linear_3`
//! is the fourth `Linear`), and each carries its `Python module id`: a node is one
//! (name, id), so the same module type at different paths stays apart. The tree comes from
//! the Python frame chain ([`hierarchy`]); `Module Hierarchy` args are not read (the plugin
//! does not, and names with ids already separate the instances).
//!
//! **Numbers** of a node, summed over every call of its (name, id) anywhere in the trace (so
//! children need not sum to their parent), from the host tree ([`host`]):
//! - occurrences: its calls reached from the thread's root through steps and modules only (a
//!   module run under an operator, e.g. `Torch-Compiled Region` or a checkpoint's
//!   recomputation in backward, is not one: the plugin's rule);
//! - host: the calls' durations; self host: minus their direct children (operators and
//!   modules) and launches;
//! - device: the device time of the kernels, copies and memsets launched (`cuda_runtime`)
//!   under the call; self device: of its direct child operators and own launches;
//! - backward device: the device time of the backward ops tied by a `fwdbwd` flow to a
//!   forward op under the call (no flows: [`Modules::backward_tied`] is false, never guessed).
//!
//! Cost: computed on demand (not kept in the session): one pass over the slices, the
//! `python_function` args read once, a sort of the host nodes per thread.

mod hierarchy;
mod host;

use crate::analysis::args::ArgKey;
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, StrId, Trace};
use host::{Candidate, HostTree, Kind};

/// The numbers of one (name, module id), summed over its calls; times in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModuleStats {
    /// Calls counted (see the module docs).
    pub occurrences: u32,
    /// Operators directly under its calls.
    pub operators: u32,
    /// Host time of the calls.
    pub host_ns: i64,
    /// Host time outside child operators, modules and launches (negative when launches
    /// outlast the call, as in the plugin).
    pub self_host_ns: i64,
    /// Device time launched under the calls.
    pub device_ns: i64,
    /// Device time of the direct child operators and own launches.
    pub self_device_ns: i64,
    /// Device time of the backward ops tied (`fwdbwd`) to forward ops under the calls.
    pub backward_device_ns: i64,
    /// The earliest counted call's slice (what the page selects on the timeline).
    pub first: Option<u32>,
}

/// One node of the tree, in pre-order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleRow {
    /// The frame's name (`nn.Module: Linear_3`).
    pub name: StrId,
    /// `Python module id`.
    pub module_id: i64,
    /// 0 for a root.
    pub depth: u16,
    /// Its (name, id)'s numbers.
    pub stats: ModuleStats,
}

impl ModuleRow {
    /// The module name without the `nn.Module: ` prefix.
    pub fn label<'a>(&self, trace: &'a Trace) -> std::borrow::Cow<'a, str> {
        match trace.strings.get(self.name) {
            std::borrow::Cow::Borrowed(s) => std::borrow::Cow::Borrowed(s.strip_prefix("nn.Module: ").unwrap_or(s)),
            std::borrow::Cow::Owned(s) => std::borrow::Cow::Owned(s.strip_prefix("nn.Module: ").unwrap_or(&s).to_owned()),
        }
    }
}

/// The module tree of a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Modules {
    /// Every distinct root tree in pre-order (a repeated tree once).
    pub rows: Vec<ModuleRow>,
    /// Whether backward ops could be tied to forward ops (`fwdbwd` flows); when false every
    /// `backward_device_ns` is 0 because it cannot be told, not because it is none.
    pub backward_tied: bool,
}

/// The module tree of `trace` (see the module docs).
pub fn analyze(trace: &Trace) -> Modules {
    analyze_in(trace, None)
}

/// The module tree of `trace` with the numbers of the calls that start in `range` (ns,
/// `[start, end)`; `None`: every call): the page's per-step scope. The tree's shape is the
/// whole trace's, so a module not called in the range keeps its row with 0 occurrences.
pub fn analyze_in(trace: &Trace, range: Option<(i64, i64)>) -> Modules {
    let within = |slice: u32| match (range, trace.slices.start_ns.get(slice as usize)) {
        (None, _) => true,
        (Some((a, b)), Some(&t)) => a <= t && t < b,
        (Some(_), None) => false,
    };
    let (frames, candidates) = read(trace);
    if !candidates.iter().any(|c| c.kind == Kind::Module) {
        return Modules::default();
    }
    let flows: Vec<(u32, u32)> = match trace.strings.lookup("fwdbwd") {
        Some(cat) => trace.flows.iter().filter(|f| f.cat == cat).map(|f| (f.from, f.to)).collect(),
        None => Vec::new(),
    };
    let ends: Vec<u32> = flows.iter().flat_map(|&(a, b)| [a, b]).collect();
    let tree = HostTree::build(trace, &candidates, &ends);
    let (keys, mut stats) = aggregate(trace, &tree, &within);
    add_backward(trace, &tree, &flows, &keys, &within, &mut stats);
    let shapes = hierarchy::build(&frames);
    let mut rows = Vec::new();
    for &root in &shapes.roots {
        let mut stack = vec![(root, 0u16)];
        while let Some((k, depth)) = stack.pop() {
            let Some(shape) = shapes.nodes.get(k as usize) else { continue };
            let key = keys.get(&(shape.name, shape.module_id));
            let stats = key.and_then(|&j| stats.get(j)).copied().unwrap_or_default();
            rows.push(ModuleRow { name: shape.name, module_id: shape.module_id, depth, stats });
            stack.extend(shape.children.iter().rev().map(|&c| (c, depth.saturating_add(1))));
        }
    }
    Modules { rows, backward_tied: !flows.is_empty() }
}

/// The `python_function` frames (file order) and the host tree's candidates (file order).
fn read(trace: &Trace) -> (Vec<hierarchy::Frame>, Vec<Candidate>) {
    let s = &trace.slices;
    let python_function = trace.strings.lookup("python_function");
    let python = trace.strings.lookup("python");
    let (id, parent, module) = (ArgKey::new("Python id"), ArgKey::new("Python parent id"), ArgKey::new("Python module id"));
    let mut reader = trace.args.reader();
    let mut kinds: FxHashMap<StrId, Option<Kind>> = FxHashMap::default();
    let mut frames: Vec<(u64, hierarchy::Frame)> = Vec::new();
    let mut candidates: Vec<(u64, Candidate)> = Vec::new();
    for i in 0..s.len() as u32 {
        let (cat, name, offset) = (s.cat[i as usize], s.name[i as usize], s.offset[i as usize]);
        if Some(cat) == python_function {
            let args = reader.bytes(s.args[i as usize]);
            let frame = hierarchy::Frame { name, id: id.i64(args), parent: parent.i64(args), module: module.i64(args) };
            if let Some(module_id) = frame.module {
                candidates.push((offset, Candidate { slice: i, kind: Kind::Module, module_id }));
            }
            frames.push((offset, frame));
            continue;
        }
        let class = trace.class(cat);
        let kind = if Some(cat) == python {
            Some(Kind::Other)
        } else if matches!(class, CatClass::CpuOp | CatClass::Annotation) {
            *kinds.entry(name).or_insert_with(|| name_kind(&trace.strings.get(name), class == CatClass::CpuOp))
        } else {
            None
        };
        if let Some(kind) = kind {
            candidates.push((offset, Candidate { slice: i, kind, module_id: 0 }));
        }
    }
    frames.sort_by_key(|&(o, _)| o);
    candidates.sort_by_key(|&(o, c)| (o, c.slice));
    (frames.into_iter().map(|(_, f)| f).collect(), candidates.into_iter().map(|(_, c)| c).collect())
}

/// The plugin's node for an operator (`op`) or annotation of this name, if it keeps one.
fn name_kind(name: &str, op: bool) -> Option<Kind> {
    const COLLECTIVES: [&str; 5] = ["broadcast", "reduce", "all_reduce", "all_gather", "reduce_scatter"];
    let dataloader = name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__") || name.starts_with("enumerate(DataPipe)#");
    if name.starts_with("ProfilerStep#") {
        Some(Kind::Step)
    } else if op && (dataloader || name.starts_with("Optimizer.") || name == "DataParallel.forward" || name == "DistributedDataParallel.forward") {
        Some(Kind::UncountedOp)
    } else if op {
        Some(Kind::Op)
    } else {
        let collective = name.split_once(':').is_some_and(|(lib, what)| matches!(lib, "nccl" | "gloo") && COLLECTIVES.contains(&what));
        (dataloader || name.starts_with("Optimizer.step") || collective).then_some(Kind::Other)
    }
}

/// Per (name, module id): its index in the returned statistics.
type Keys = FxHashMap<(StrId, i64), usize>;

/// The numbers of the counted module calls `within` keeps, summed per (name, module id).
fn aggregate(trace: &Trace, tree: &HostTree, within: &dyn Fn(u32) -> bool) -> (Keys, Vec<ModuleStats>) {
    let s = &trace.slices;
    let (mut keys, mut stats): (Keys, Vec<ModuleStats>) = Default::default();
    for n in 0..tree.slice.len() {
        if tree.kind[n] != Kind::Module || !tree.counted[n] || !tree.in_tree(n as u32) || !within(tree.slice[n]) {
            continue;
        }
        let slice = tree.slice[n] as usize;
        let next = stats.len();
        let k = *keys.entry((s.name[slice], tree.module_id[n])).or_insert(next);
        if k == next {
            stats.push(ModuleStats::default());
        }
        let st = &mut stats[k];
        st.occurrences += 1;
        st.operators += tree.operators[n];
        st.host_ns += s.dur_ns[slice];
        st.self_host_ns += tree.self_host_ns[n];
        st.device_ns += tree.device_ns[n];
        st.self_device_ns += tree.self_device_ns[n];
        // Nodes come thread by thread: the earliest call is the one with the least start.
        if st.first.is_none_or(|f| (s.start_ns[slice], slice) < (s.start_ns[f as usize], f as usize)) {
            st.first = Some(slice as u32);
        }
    }
    (keys, stats)
}

/// Adds each `fwdbwd` flow's backward op device time to the counted module calls `within`
/// keeps that enclose its forward op (a backward op under another flow's backward op is in
/// that one's time already).
fn add_backward(trace: &Trace, tree: &HostTree, flows: &[(u32, u32)], keys: &Keys, within: &dyn Fn(u32) -> bool, stats: &mut [ModuleStats]) {
    let targets: crate::model::strings::FxHashSet<u32> = flows.iter().filter_map(|&(_, b)| tree.node(b)).collect();
    let mut done = crate::model::strings::FxHashSet::default();
    for &(f, b) in flows {
        let (Some(fwd), Some(bwd)) = (tree.node(f), tree.node(b)) else { continue };
        if tree.ancestors(bwd).skip(1).any(|a| targets.contains(&a)) || !done.insert(bwd) {
            continue;
        }
        let ns = tree.device_ns[bwd as usize];
        for m in tree.ancestors(fwd) {
            let m = m as usize;
            if tree.kind[m] != Kind::Module || !tree.counted[m] || !within(tree.slice[m]) {
                continue;
            }
            if let Some(&k) = keys.get(&(trace.slices.name[tree.slice[m] as usize], tree.module_id[m])) {
                stats[k].backward_device_ns += ns;
            }
        }
    }
}
