//! Builds the per-op columns of [`super::OpIndex`]: PyTorch's op tree, merged, with self times,
//! memory and device time per op. Runs once per trace; range queries only aggregate.
//!
//! Steps, each O(ops) unless noted (ops = `cpu_op`, `user_annotation` and launch-call slices):
//! 1. **Collect** the ops of every lane, in the lane's order (start ascending, end descending,
//!    input order: PyTorch's sort key `[start, -end]`), skipping the names PyTorch drops.
//! 2. **Nest** per lane with PyTorch's stack rule (`_populate_cpu_children`): pop the top while
//!    `start >= top.end || end > top.end`, else become its child. Unlike `model::nest` there is
//!    no "ends included" and no overflow layer: a zero-length op at an open op's end, and an
//!    op partially overlapping it, nest under a higher open op (or none), exactly as in
//!    PyTorch; a popped op gets no later children.
//! 3. **Merge** (`_remove_dup_nodes`): an op whose parent has the same (rewritten) name and no
//!    other child disappears; its children and device work move to the parent. Repeated until
//!    nothing changes; chains collapse into the top op.
//! 4. **Memory**: every CPU (device) `[memory]` instant's `Bytes` counts toward every op whose
//!    closed interval `[start, end]` contains it, on any lane (prefix sums over the time-sorted
//!    instants, found by galloping forward from the lane's previous op: O(log distance) per
//!    op). Instants inside no op become "loose" (PyTorch's zero-time `[memory]` row).
//! 5. **Device**: each device activity with a launch link is owned by the innermost op
//!    enclosing its launch call that is not itself a launch call (after merging); when the
//!    call runs in no op, by the call itself. Totals add up the tree bottom-up.
//!
//! Invariant produced: ops of a lane are contiguous and sorted; a parent precedes its children.

use super::{Group, LooseMemory, OpKind};
use crate::analysis::args::ArgKey;
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, StrId, Trace, NONE};
use std::ops::Range;

/// Names PyTorch drops from its events before anything else (`_filter_name` in
/// torch/autograd/profiler.py): they are no rows, no parents and cover no memory.
const FILTERED: [&str; 8] = [
    "[memory]",
    "[OutOfMemory]",
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
];

/// Name key for every `ProfilerStep#N` (PyTorch renames them `ProfilerStep*`).
pub(super) const PROFILER_STEP: u32 = u32::MAX - 1;
const UNSET: u32 = u32::MAX;

/// What the build produces (alive ops only, see the module invariant).
pub(super) struct Built {
    pub slice: Vec<u32>,
    pub lanes: Vec<Range<u32>>,
    pub group: Vec<u32>,
    pub groups: Vec<Group>,
    pub self_cpu_ns: Vec<i64>,
    /// `[cpu, self_cpu, device, self_device]` bytes per op; empty without memory instants.
    pub mem: Vec<[i64; 4]>,
    /// `(self, total)` device ns per op; empty when nothing is attributed.
    pub device: Vec<(i64, i64)>,
    pub loose_memory: Vec<LooseMemory>,
    pub unattributed_device_ns: i64,
}

/// Runs steps 1-5.
pub(super) fn build(trace: &Trace) -> Built {
    let (cand, lanes) = collect(trace);
    let kinds: Vec<OpKind> = cand
        .iter()
        .map(|&s| kind_of(trace.class(trace.slices.cat[s as usize])))
        .collect();
    let name = rewritten_names(trace, &cand);
    let raw_parent = nest(trace, &cand, &lanes);
    let (alive, up) = merge(&raw_parent, &name);
    let (own_device, unattributed_device_ns) = device_owners(trace, &cand, &kinds, &alive, &up);

    // Compaction: keep alive ops, re-point parents at survivors.
    let mut new_index = vec![NONE; cand.len()];
    let mut kept = 0u32;
    for (i, &a) in alive.iter().enumerate() {
        if a {
            new_index[i] = kept;
            kept += 1;
        }
    }
    let n = kept as usize;
    let mut slice = Vec::with_capacity(n);
    let mut parent = Vec::with_capacity(n);
    let mut names = Vec::with_capacity(n);
    let mut op_kinds = Vec::with_capacity(n);
    let mut device = if own_device.is_empty() {
        Vec::new()
    } else {
        Vec::with_capacity(n)
    };
    for i in (0..cand.len()).filter(|&i| alive[i]) {
        slice.push(cand[i]);
        let p = find(&alive, &up, raw_parent[i]);
        parent.push(if p == NONE {
            NONE
        } else {
            new_index[p as usize]
        });
        names.push(name[i]);
        op_kinds.push(kinds[i]);
        if !own_device.is_empty() {
            device.push((own_device[i], own_device[i]));
        }
    }
    let lanes = lanes
        .iter()
        .map(|r| {
            let lo = (r.start..r.end)
                .find(|&i| alive[i as usize])
                .map_or(NONE, |i| new_index[i as usize]);
            let count = (r.start..r.end).filter(|&i| alive[i as usize]).count() as u32;
            if lo == NONE {
                0..0
            } else {
                lo..lo + count
            }
        })
        .filter(|r| !r.is_empty())
        .collect();

    let dur = |op: usize| trace.slices.dur_ns[slice[op] as usize];
    let mut self_cpu_ns: Vec<i64> = (0..n).map(dur).collect();
    for op in (0..n).rev() {
        let p = parent[op];
        if p != NONE {
            self_cpu_ns[p as usize] -= dur(op);
            if !device.is_empty() {
                device[p as usize].1 += device[op].1;
            }
        }
    }
    let (mem, loose_memory) = memory(trace, &slice, &parent);
    let (group, groups) = group_ids(&names, &op_kinds);
    Built {
        slice,
        lanes,
        group,
        groups,
        self_cpu_ns,
        mem,
        device,
        loose_memory,
        unattributed_device_ns,
    }
}

fn kind_of(class: CatClass) -> OpKind {
    match class {
        CatClass::Annotation => OpKind::Annotation,
        CatClass::Launch => OpKind::Runtime,
        _ => OpKind::Op,
    }
}

/// Step 1: op slices per lane (ascending slice ids, so lanes come in `LaneId` order).
fn collect(trace: &Trace) -> (Vec<u32>, Vec<Range<u32>>) {
    let mut dropped = vec![false; trace.strings.len()];
    for name in FILTERED {
        if let Some(id) = trace.strings.lookup(name) {
            dropped[id.0 as usize] = true;
        }
    }
    let mut cand = Vec::new();
    let mut lanes = Vec::new();
    let s = &trace.slices;
    for lane in &trace.lanes {
        let lo = cand.len() as u32;
        for i in lane.slices.clone() {
            let class = trace.class(s.cat[i as usize]);
            let op = matches!(
                class,
                CatClass::CpuOp | CatClass::Annotation | CatClass::Launch
            );
            if op
                && !dropped
                    .get(s.name[i as usize].0 as usize)
                    .copied()
                    .unwrap_or(false)
            {
                cand.push(i);
            }
        }
        let hi = cand.len() as u32;
        if hi > lo {
            lanes.push(lo..hi);
        }
    }
    (cand, lanes)
}

/// Name key per op: the name's `StrId`, or [`PROFILER_STEP`] for `ProfilerStep#N`.
fn rewritten_names(trace: &Trace, cand: &[u32]) -> Vec<u32> {
    let mut cache = vec![UNSET; trace.strings.len()];
    cand.iter()
        .map(|&s| {
            let id: StrId = trace.slices.name[s as usize];
            let slot = &mut cache[id.0 as usize];
            if *slot == UNSET {
                let step = trace.strings.bytes_of(id).starts_with(b"ProfilerStep#");
                *slot = if step { PROFILER_STEP } else { id.0 };
            }
            *slot
        })
        .collect()
}

/// Step 2: parent of every op (index into `cand`), PyTorch's stack rule per lane.
fn nest(trace: &Trace, cand: &[u32], lanes: &[Range<u32>]) -> Vec<u32> {
    let s = &trace.slices;
    let mut parent = vec![NONE; cand.len()];
    let mut stack: Vec<(u32, i64)> = Vec::new();
    for lane in lanes {
        stack.clear();
        for c in lane.clone() {
            let i = cand[c as usize] as usize;
            let (start, end) = (s.start_ns[i], s.end_ns(i));
            while let Some(&(top, top_end)) = stack.last() {
                if start >= top_end || end > top_end {
                    stack.pop();
                } else {
                    parent[c as usize] = top;
                    break;
                }
            }
            stack.push((c, end));
        }
    }
    parent
}

/// The alive op `x` stands for: itself, or the op it was merged into (transitively).
fn find(alive: &[bool], up: &[u32], mut x: u32) -> u32 {
    while x != NONE && !alive[x as usize] {
        x = up[x as usize];
    }
    x
}

/// Step 3: returns `alive` and `up` (alive ops: the raw parent; merged ops: the op they
/// were merged into), so the effective parent of an alive op is `find(up[op])`.
fn merge(parent: &[u32], name: &[u32]) -> (Vec<bool>, Vec<u32>) {
    let n = parent.len();
    let mut alive = vec![true; n];
    let mut up = parent.to_vec();
    let mut children = vec![0u32; n];
    for &p in parent {
        if p != NONE {
            children[p as usize] += 1;
        }
    }
    loop {
        let mut changed = false;
        for c in 0..n {
            if !alive[c] {
                continue;
            }
            let p = find(&alive, &up, up[c]);
            if p != NONE && name[p as usize] == name[c] && children[p as usize] == 1 {
                alive[c] = false;
                up[c] = p;
                children[p as usize] = children[c];
                changed = true;
            }
        }
        if !changed {
            return (alive, up);
        }
    }
}

/// Step 5 (own part): device ns owned by each op (indexed like `cand`; empty when no device
/// activity is linked), and the linked device ns whose launch call is not an op.
fn device_owners(
    trace: &Trace,
    cand: &[u32],
    kinds: &[OpKind],
    alive: &[bool],
    up: &[u32],
) -> (Vec<i64>, i64) {
    let s = &trace.slices;
    let mut own: Vec<i64> = Vec::new();
    let mut unattributed = 0;
    for i in 0..s.len() {
        let launch = s.launch[i];
        if launch == NONE {
            continue;
        }
        let Ok(c) = cand.binary_search(&launch) else {
            unattributed += s.dur_ns[i];
            continue;
        };
        if own.is_empty() {
            own = vec![0; cand.len()];
        }
        let call = find(alive, up, c as u32);
        let mut owner = find(alive, up, up[call as usize]);
        while owner != NONE && kinds[owner as usize] == OpKind::Runtime {
            owner = find(alive, up, up[owner as usize]);
        }
        let owner = if owner == NONE { call } else { owner };
        own[owner as usize] += s.dur_ns[i];
    }
    (own, unattributed)
}

/// Step 4: `[cpu, self_cpu, device, self_device]` bytes per op and the loose instants.
fn memory(trace: &Trace, slice: &[u32], parent: &[u32]) -> (Vec<[i64; 4]>, Vec<LooseMemory>) {
    let Some(mem_name) = trace.strings.lookup("[memory]") else {
        return (Vec::new(), Vec::new());
    };
    let bytes_key = ArgKey::new("Bytes");
    let device_key = ArgKey::new("Device Type");
    let t = &trace.instants;
    let mut ts = Vec::new();
    let mut bytes = Vec::new(); // (cpu, device)
    let mut reader = trace.args.reader();
    for i in 0..t.ts_ns.len() {
        if t.name[i] != mem_name {
            continue;
        }
        let args = reader.bytes(t.args[i]);
        let b = bytes_key.i64(args).unwrap_or(0);
        // c10::DeviceType: CPU 0, MKLDNN 2, IDEEP 5 count as CPU memory; CUDA 1, HIP 6,
        // PrivateUse1 20 as device memory (profiler_util's _cpu/_device_memory_usage).
        let (cpu, dev) = match device_key.i64(args).unwrap_or(0) {
            0 | 2 | 5 => (b, 0),
            1 | 6 | 20 => (0, b),
            _ => (0, 0),
        };
        ts.push(t.ts_ns[i]);
        bytes.push((cpu, dev));
    }
    if ts.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let mut prefix = Vec::with_capacity(ts.len() + 1);
    prefix.push((0i64, 0i64));
    for &(c, d) in &bytes {
        let &(pc, pd) = prefix.last().unwrap_or(&(0, 0));
        prefix.push((pc + c, pd + d));
    }
    let mut covered = vec![0i32; ts.len() + 1];
    let s = &trace.slices;
    // Ops of a lane come by ascending start, and most are short: search forward from the
    // previous op's position (galloping) instead of bisecting the whole array.
    let (mut lo, mut last_start) = (0, i64::MIN);
    let mut mem: Vec<[i64; 4]> = slice
        .iter()
        .map(|&i| {
            let (start, end) = (s.start_ns[i as usize], s.end_ns(i as usize));
            if start < last_start {
                lo = 0; // next lane
            }
            last_start = start;
            lo = gallop(&ts, lo, |x| x < start);
            let hi = gallop(&ts, lo, |x| x <= end);
            covered[lo] += 1;
            covered[hi] -= 1;
            let (c, d) = (prefix[hi].0 - prefix[lo].0, prefix[hi].1 - prefix[lo].1);
            [c, c, d, d]
        })
        .collect();
    for op in 0..mem.len() {
        let p = parent[op];
        if p != NONE {
            let child = mem[op];
            let m = &mut mem[p as usize];
            m[1] -= child[0];
            m[3] -= child[2];
        }
    }
    let mut loose = Vec::new();
    let mut depth = 0;
    for (k, &t) in ts.iter().enumerate() {
        depth += covered[k];
        if depth == 0 {
            loose.push(LooseMemory {
                ts_ns: t,
                cpu_bytes: bytes[k].0,
                device_bytes: bytes[k].1,
            });
        }
    }
    (mem, loose)
}

/// The first index at or after `from` where `before` is false (`before` must be true on a
/// prefix of `sorted[from..]`). O(log distance).
fn gallop(sorted: &[i64], from: usize, before: impl Fn(i64) -> bool) -> usize {
    let mut lo = from;
    let mut step = 1;
    while lo + step <= sorted.len() && before(sorted[lo + step - 1]) {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(sorted.len());
    lo + sorted[lo..hi].partition_point(|&x| before(x))
}

/// Dense group id per op for the key (name, is_user_annotation); groups in id order.
fn group_ids(names: &[u32], kinds: &[OpKind]) -> (Vec<u32>, Vec<Group>) {
    let mut map: FxHashMap<(u32, bool), u32> = FxHashMap::default();
    let mut groups = Vec::new();
    let ids = names
        .iter()
        .zip(kinds)
        .map(|(&name, &kind)| {
            let is_annotation = kind == OpKind::Annotation;
            *map.entry((name, is_annotation)).or_insert_with(|| {
                groups.push(Group {
                    name,
                    is_annotation,
                    kind,
                });
                (groups.len() - 1) as u32
            })
        })
        .collect();
    (ids, groups)
}
