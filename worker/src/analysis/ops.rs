//! Op table: torch.profiler `key_averages()` over the whole trace or a time range.
//!
//! **What.** Rows of (name, is_user_annotation[, input shapes]) with # of Calls, Self CPU,
//! CPU total, Self CUDA, CUDA total, CPU Mem, Self CPU Mem (and the device-memory pair),
//! following docs/definitions.md §2 exactly; `worker/tests/ops.rs` checks it row for row against
//! the tables PyTorch printed for the `fixtures/torch-cpu` traces.
//!
//! **Inputs and outputs.** A loaded [`Trace`]. Ops are the `cpu_op` / `user_annotation`
//! slices and the launch calls (`cuda_runtime`, `cuda_driver`: rows too on GPU traces, as in
//! PyTorch's printed GPU tables). Times are integer ns internally ([`OpRow::self_cpu_ns`] ...)
//! and µs as f64 only at the edge ([`OpRow::self_cpu_us`] ...). Memory is in bytes.
//!
//! **Rules** (details in `ops/build.rs`): PyTorch's own nesting (not the model's `parent`,
//! whose "ends included" and overflow layers differ); same-name single-child merge; Self CPU =
//! dur - direct children's dur; memory instants count toward every op containing them, on
//! any lane; device activities belong to the op whose launch call they came from (the
//! innermost enclosing op that is not itself a launch call; the call itself when it runs in
//! no op; launch calls' own rows therefore show no device time unless they are top-level);
//! `ProfilerStep#N` -> one `ProfilerStep*` row; rows in order of first occurrence
//! (start ascending, end descending, input order). "Self CPU time total" = sum of Self CPU of
//! the rows (= sum of root durations for the whole trace); "Self CUDA time total" likewise.
//! CPU Mem counts `[memory]` instants of `Device Type` CPU (0, MKLDNN 2, IDEEP 5), device
//! memory those of CUDA 1, HIP 6, PrivateUse1 20, as PyTorch does.
//!
//! **Differences from PyTorch, on purpose.** GPU-side events (kernels, memcpy, memset) are
//! no rows (docs/definitions.md §2; the kernel table covers them), so a device activity without a
//! launch link (no matching correlation) is in no row and not in "Self CUDA time total".
//!
//! **Range rule.** With `range: Some((t0, t1))` an op counts when its **start** lies in
//! `[t0, t1)` (half-open: adjacent ranges split the ops between them, and a ProfilerStep's
//! `[start, end)` holds exactly the step and its descendants, since PyTorch only nests ops
//! starting before the parent's end). A counted op contributes all of its values (full
//! duration, its full self time, all of its memory and device work, even where they run past
//! `t1`); ops starting outside contribute nothing, even if they overlap the range. Loose
//! `[memory]` instants count when their time lies in `[t0, t1)`.
//!
//! **Cost.** [`OpIndex::new`]: O(n) over slices, O(k log ops) for k linked device
//! activities, one args scan per `[memory]` instant; ~70 bytes per op, and 4 more once the
//! first table has estimated the ops' work (an id into the distinct estimates). [`OpIndex::table`]:
//! two binary searches per lane and O(ops in range) array-indexed adds (no hashing, no
//! allocation per op), then O(groups · log groups) to order rows. Input-shape groups are
//! computed on the first `by_shape` query (one args scan per op, shape strings interned by
//! raw text) and cached. Measured (`bench_op_table` in tests/ops.rs, release, 2-core VM under
//! load): 2 M ops (382 MB trace): build 0.4-0.5 s, first by-shape query 0.3 s, a half-trace
//! range query 10-13 ms (vs 3-5 s to load the trace).
//!
//! **Why.** Nesting, merging, memory and device attribution do not depend on the range, so
//! they are done once; a brushed range only selects ops. Rejected: recomputing the tree per
//! range (the merge needs whole subtrees) and clipping ops to the range (PyTorch has no such
//! notion; clipped self times would match nothing a user can check).
//!
//! References: docs/definitions.md §2; torch/autograd/profiler_util.py (`_populate_cpu_children`,
//! `_remove_dup_nodes`, `key_averages`), torch/autograd/profiler.py (`_parse_kineto_results`).

mod build;

use crate::analysis::args::ArgKey;
use crate::analysis::shapes::python_shapes;
use crate::analysis::work::dtype::PeakClass;
use crate::analysis::work::estimate::OpWork;
use crate::analysis::work::Estimator;
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, StrId, Trace};
use std::ops::Range;
use std::sync::OnceLock;

/// What to aggregate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpOptions {
    /// Group by name + input shapes (`key_averages(group_by_input_shape=True)`).
    pub by_shape: bool,
    /// Only ops starting in `[t0, t1)` ns from the trace origin; `None`: the whole trace.
    pub range: Option<(i64, i64)>,
}

/// What kind of event a row aggregates (taken from its first event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// `cpu_op`.
    Op,
    /// `user_annotation` (record_function, ProfilerStep).
    Annotation,
    /// A launch call (`cuda_runtime`, `cuda_driver`).
    Runtime,
    /// `[memory]` instants inside no op (PyTorch's zero-time `[memory]` row).
    Memory,
}

/// One row of the op table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpRow {
    /// Name (`ProfilerStep*` for all steps).
    pub name: String,
    /// `str(input_shapes)` as PyTorch prints it when grouped by shape; empty otherwise.
    pub input_shapes: String,
    /// Part of the grouping key: a record_function and an op of the same name are two rows.
    pub is_annotation: bool,
    /// Kind of the row's events.
    pub kind: OpKind,
    /// # of Calls (after merging).
    pub calls: u64,
    /// Self CPU, ns.
    pub self_cpu_ns: i64,
    /// CPU total, ns.
    pub cpu_total_ns: i64,
    /// Self CUDA: device activities launched by the op's own launch calls, ns.
    pub self_device_ns: i64,
    /// CUDA total: device activities launched by the op or any descendant, ns.
    pub device_total_ns: i64,
    /// Self CPU Mem, bytes (often negative).
    pub self_cpu_mem: i64,
    /// CPU Mem, bytes.
    pub cpu_mem: i64,
    /// Self CUDA Mem, bytes.
    pub self_device_mem: i64,
    /// CUDA Mem, bytes.
    pub device_mem: i64,
    /// FLOPs summed over the calls with an estimate (`super::work::estimate`); `None` when no
    /// call has one. Inclusive like CPU total: `aten::linear` and its `aten::addmm` both show it.
    pub flops: Option<u64>,
    /// Bytes read and written, summed like `flops`.
    pub bytes: Option<u64>,
    /// The peak class of the first call with an estimate (its input dtype).
    pub peak: Option<PeakClass>,
}

impl OpRow {
    /// Self CPU in µs.
    pub fn self_cpu_us(&self) -> f64 {
        us(self.self_cpu_ns)
    }
    /// CPU total in µs.
    pub fn cpu_total_us(&self) -> f64 {
        us(self.cpu_total_ns)
    }
    /// Self CUDA in µs.
    pub fn self_device_us(&self) -> f64 {
        us(self.self_device_ns)
    }
    /// CUDA total in µs.
    pub fn device_total_us(&self) -> f64 {
        us(self.device_total_ns)
    }
    /// FLOPs over CUDA total (inclusive, like the FLOPs), TFLOP/s; `None` when either is
    /// unknown or 0.
    pub fn achieved_tflops(&self) -> Option<f64> {
        per_second(self.flops, self.device_total_ns, 1e12)
    }
    /// Bytes over CUDA total, GB/s.
    pub fn achieved_gbps(&self) -> Option<f64> {
        per_second(self.bytes, self.device_total_ns, 1e9)
    }
}

/// `value` per second of `ns`, in `unit`s; `None` when either is unknown or 0.
fn per_second(value: Option<u64>, ns: i64, unit: f64) -> Option<f64> {
    (ns > 0).then(|| value.map(|v| v as f64 / (ns as f64 / 1e9) / unit)).flatten()
}

/// Adds a call's known value to a row's sum (unknown calls add nothing).
fn add_known(sum: &mut Option<u64>, value: Option<u64>) {
    if let Some(v) = value {
        *sum = Some(sum.unwrap_or(0).saturating_add(v));
    }
}

/// ns -> µs, for output only.
pub fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// The op table: rows in order of first occurrence, and the totals percentages divide by.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpTable {
    /// Rows, first occurrence first.
    pub rows: Vec<OpRow>,
    /// "Self CPU time total", ns.
    pub self_cpu_total_ns: i64,
    /// "Self CUDA time total", ns (sum of the rows' Self CUDA).
    pub self_device_total_ns: i64,
    /// Linked device time whose launch call is not an op (whole trace; in no row).
    pub unattributed_device_ns: i64,
}

/// Name + annotation flag of a by-name group.
#[derive(Clone, Copy, Debug)]
struct Group {
    /// Name `StrId`, or `build::PROFILER_STEP`.
    name: u32,
    is_annotation: bool,
    kind: OpKind,
}

/// A `[memory]` instant inside no op.
#[derive(Clone, Copy, Debug)]
struct LooseMemory {
    ts_ns: i64,
    cpu_bytes: i64,
    device_bytes: i64,
}

/// By-shape groups: per op a dense id into `keys` = (by-name group, shape text index).
struct ShapeGroups {
    id: Vec<u32>,
    keys: Vec<(u32, u32)>,
    texts: Vec<String>,
}

/// The estimated work of every op: most calls repeat a few shapes, so each op holds an id
/// into the distinct works.
struct OpWorks {
    /// Per op: index in `distinct`, or `u32::MAX` when it has no estimate.
    id: Vec<u32>,
    distinct: Vec<OpWork>,
}

impl OpWorks {
    fn of(&self, op: usize) -> Option<&OpWork> {
        self.distinct.get(*self.id.get(op)? as usize)
    }
}

/// Everything about the ops that does not depend on the range; build once per trace.
pub struct OpIndex {
    /// Slice id of each op; ops grouped by lane (see `build`'s invariant).
    slice: Vec<u32>,
    /// Op ranges of the lanes that have ops.
    lanes: Vec<Range<u32>>,
    /// By-name group of each op.
    group: Vec<u32>,
    groups: Vec<Group>,
    self_cpu_ns: Vec<i64>,
    mem: Vec<[i64; 4]>,
    device: Vec<(i64, i64)>,
    loose_memory: Vec<LooseMemory>,
    unattributed_device_ns: i64,
    shapes: OnceLock<ShapeGroups>,
    /// Estimated work (built on the first table).
    work: OnceLock<OpWorks>,
}

#[derive(Clone, Copy)]
struct Acc {
    calls: u64,
    self_cpu: i64,
    total: i64,
    self_device: i64,
    device_total: i64,
    mem: [i64; 4],
    /// (start, -end, input offset) of the first event.
    first: (i64, i64, u64),
    flops: Option<u64>,
    bytes: Option<u64>,
    peak: Option<PeakClass>,
}

const EMPTY_ACC: Acc = Acc {
    calls: 0,
    self_cpu: 0,
    total: 0,
    self_device: 0,
    device_total: 0,
    mem: [0; 4],
    first: (i64::MAX, 0, 0),
    flops: None,
    bytes: None,
    peak: None,
};

/// The op table of `trace` (builds an [`OpIndex`]; keep one for repeated queries).
pub fn op_table(trace: &Trace, opts: &OpOptions) -> OpTable {
    OpIndex::new(trace).table(trace, opts)
}

impl OpIndex {
    /// Builds the op tree and per-op values of `trace`.
    pub fn new(trace: &Trace) -> Self {
        let b = build::build(trace);
        Self {
            slice: b.slice,
            lanes: b.lanes,
            group: b.group,
            groups: b.groups,
            self_cpu_ns: b.self_cpu_ns,
            mem: b.mem,
            device: b.device,
            loose_memory: b.loose_memory,
            unattributed_device_ns: b.unattributed_device_ns,
            shapes: OnceLock::new(),
            work: OnceLock::new(),
        }
    }

    /// Number of ops (after merging).
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// True when the trace has no ops.
    pub fn is_empty(&self) -> bool {
        self.slice.is_empty()
    }

    /// The op table for `opts`; `trace` must be the one this index was built from.
    pub fn table(&self, trace: &Trace, opts: &OpOptions) -> OpTable {
        let (ids, count): (&[u32], usize) = if opts.by_shape {
            let shapes = self.shapes.get_or_init(|| self.shape_groups(trace));
            (&shapes.id, shapes.keys.len())
        } else {
            (&self.group, self.groups.len())
        };
        let (t0, t1) = opts.range.unwrap_or((i64::MIN, i64::MAX));
        let work = self.work.get_or_init(|| self.op_work(trace));
        let mut acc = vec![EMPTY_ACC; count];
        let s = &trace.slices;
        for lane in &self.lanes {
            let ops = &self.slice[lane.start as usize..lane.end as usize];
            let lo = lane.start as usize + ops.partition_point(|&i| s.start_ns[i as usize] < t0);
            let hi = lane.start as usize + ops.partition_point(|&i| s.start_ns[i as usize] < t1);
            for op in lo..hi {
                let i = self.slice[op] as usize;
                let a = &mut acc[ids[op] as usize];
                let (start, dur) = (s.start_ns[i], s.dur_ns[i]);
                a.calls += 1;
                a.self_cpu += self.self_cpu_ns[op];
                a.total += dur;
                if let Some(&(own, total)) = self.device.get(op) {
                    a.self_device += own;
                    a.device_total += total;
                }
                if let Some(m) = self.mem.get(op) {
                    for (sum, v) in a.mem.iter_mut().zip(m) {
                        *sum += v;
                    }
                }
                if let Some(w) = work.of(op) {
                    add_known(&mut a.flops, w.flops);
                    add_known(&mut a.bytes, w.bytes);
                    a.peak = a.peak.or(w.peak);
                }
                // Within a lane starts only grow: most ops cannot be a group's first.
                if start <= a.first.0 {
                    let key = (start, -(start + dur), s.offset[i]);
                    a.first = a.first.min(key);
                }
            }
        }
        let mut rows: Vec<((i64, i64, u64), OpRow)> = acc
            .iter()
            .enumerate()
            .filter(|(_, a)| a.calls > 0)
            .map(|(id, a)| (a.first, self.row(trace, opts.by_shape, id, a)))
            .collect();
        if let Some(row) = self.loose_row(t0, t1, opts.by_shape) {
            rows.push(row);
        }
        rows.sort_by_key(|(first, _)| *first);
        let rows: Vec<OpRow> = rows.into_iter().map(|(_, r)| r).collect();
        OpTable {
            self_cpu_total_ns: rows.iter().map(|r| r.self_cpu_ns).sum(),
            self_device_total_ns: rows.iter().map(|r| r.self_device_ns).sum(),
            unattributed_device_ns: self.unattributed_device_ns,
            rows,
        }
    }

    fn row(&self, trace: &Trace, by_shape: bool, id: usize, a: &Acc) -> OpRow {
        let (group, shape) = match (by_shape, self.shapes.get()) {
            (true, Some(s)) => {
                let (g, t) = s.keys[id];
                (self.groups[g as usize], s.texts[t as usize].clone())
            }
            _ => (self.groups[id], String::new()),
        };
        let name = if group.name == build::PROFILER_STEP {
            "ProfilerStep*".to_owned()
        } else {
            trace.strings.get(StrId(group.name)).into_owned()
        };
        OpRow {
            name,
            input_shapes: shape,
            is_annotation: group.is_annotation,
            kind: group.kind,
            calls: a.calls,
            self_cpu_ns: a.self_cpu,
            cpu_total_ns: a.total,
            self_device_ns: a.self_device,
            device_total_ns: a.device_total,
            cpu_mem: a.mem[0],
            self_cpu_mem: a.mem[1],
            device_mem: a.mem[2],
            self_device_mem: a.mem[3],
            flops: a.flops,
            bytes: a.bytes,
            peak: a.peak,
        }
    }

    /// The estimated work of every op ([`Estimator`]; annotations and launch calls have none).
    fn op_work(&self, trace: &Trace) -> OpWorks {
        let mut estimator = Estimator::new(trace);
        let s = &trace.slices;
        let id = self
            .slice
            .iter()
            .map(|&i| (trace.class(s.cat[i as usize]) == CatClass::CpuOp).then(|| estimator.id(i)).flatten().unwrap_or(u32::MAX))
            .collect();
        OpWorks { id, distinct: estimator.into_distinct() }
    }

    /// The `[memory]` row of loose instants in `[t0, t1)`, with its first-occurrence key.
    fn loose_row(&self, t0: i64, t1: i64, by_shape: bool) -> Option<((i64, i64, u64), OpRow)> {
        let lo = self.loose_memory.partition_point(|m| m.ts_ns < t0);
        let hi = self.loose_memory.partition_point(|m| m.ts_ns < t1);
        let inside = self.loose_memory.get(lo..hi).filter(|m| !m.is_empty())?;
        let cpu: i64 = inside.iter().map(|m| m.cpu_bytes).sum();
        let device: i64 = inside.iter().map(|m| m.device_bytes).sum();
        let first = (inside[0].ts_ns, -inside[0].ts_ns, u64::MAX);
        let row = OpRow {
            name: "[memory]".to_owned(),
            input_shapes: if by_shape {
                "[]".to_owned()
            } else {
                String::new()
            },
            is_annotation: false,
            kind: OpKind::Memory,
            calls: inside.len() as u64,
            self_cpu_ns: 0,
            cpu_total_ns: 0,
            self_device_ns: 0,
            device_total_ns: 0,
            self_cpu_mem: cpu,
            cpu_mem: cpu,
            self_device_mem: device,
            device_mem: device,
            flops: None,
            bytes: None,
            peak: None,
        };
        Some((first, row))
    }

    /// Input-shape groups of every op (see the module docs, **Cost**).
    fn shape_groups(&self, trace: &Trace) -> ShapeGroups {
        let dims = ArgKey::new("Input Dims");
        let dims_2021 = ArgKey::new("Input dims");
        let mut text_of_raw: FxHashMap<Box<[u8]>, u32> = FxHashMap::default();
        let mut text_id: FxHashMap<String, u32> = FxHashMap::default();
        let mut texts: Vec<String> = Vec::new();
        let mut key_id: FxHashMap<(u32, u32), u32> = FxHashMap::default();
        let mut keys = Vec::new();
        let mut id = Vec::with_capacity(self.slice.len());
        let mut reader = trace.args.reader();
        for (op, &i) in self.slice.iter().enumerate() {
            // Launch calls are not RecordFunction events: PyTorch records no shapes for them.
            let raw = if trace.class(trace.slices.cat[i as usize]) == CatClass::Launch {
                None
            } else {
                let args = reader.bytes(trace.slices.args[i as usize]);
                dims.raw(args).or_else(|| dims_2021.raw(args))
            };
            // Distinct raw texts can print alike (`[]` vs no arg): intern the printed text too.
            let text = match text_of_raw.get(raw.unwrap_or(b"")) {
                Some(&text) => text,
                None => {
                    let printed = python_shapes(raw);
                    let text = *text_id.entry(printed.clone()).or_insert_with(|| {
                        texts.push(printed);
                        (texts.len() - 1) as u32
                    });
                    text_of_raw.insert(raw.unwrap_or(b"").into(), text);
                    text
                }
            };
            let key = (self.group[op], text);
            id.push(*key_id.entry(key).or_insert_with(|| {
                keys.push(key);
                (keys.len() - 1) as u32
            }));
        }
        ShapeGroups { id, keys, texts }
    }
}
