//! Kernel table: device kernels grouped by name, with the distribution of their durations,
//! their launch configuration (blocks per SM, estimated achieved occupancy), class, tensor-core
//! use, precision and the op that launched them (the kernel table, docs/cli.md#report).
//!
//! **Inputs and outputs.** A loaded [`Trace`] and an optional range `[t0, t1)` in ns from the
//! origin. Kernels are slices of class [`crate::model::CatClass::Kernel`] (`kernel`, 2021 `Kernel`) on any
//! lane and device; memcpy / memset are not kernels. [`KernelTable`] holds one [`KernelRow`]
//! per name; durations are i64 ns, statistics ([`Summary`]) f64 ns.
//!
//! **Rules.**
//! - Range: a kernel counts when its **start** lies in `[t0, t1)`, with its whole duration (as
//!   the op table counts ops; a per-call distribution of clipped calls would be meaningless).
//! - Statistics: [`super::stats`] definitions (numpy percentiles, sample std with ddof 1, the
//!   same as the step statistics).
//! - Share: a row's total / the total of all kernels counted (all devices).
//! - `blocks per SM` and `est. achieved occupancy %` are averaged weighted by duration over
//!   the calls that carry the arg (`None` when none does; unweighted when all those calls last
//!   0 ns). tb_plugin fills a missing arg with 0 instead; real traces carry both args on every
//!   kernel or on none, so the two agree where it matters. Negative values (a CUPTI quirk
//!   tb_plugin also skips in its GPU metrics) count as missing.
//! - Class, tensor cores, precision: [`super::kernel_class`], by name, once per row.
//! - Top launching op: kernel -> launch call (`slices.launch`, by correlation) -> innermost
//!   enclosing `cpu_op` on the call's thread ([`enclosing_op`]), grouped by op name; the op
//!   name with the most kernel time wins (then most calls, then first seen). Kernels without a
//!   launch link or outside every op are counted in [`KernelRow::unattributed_calls`].
//!   External ids are not used (docs/definitions.md §1).
//! - Source: the `kernel_file` of the op that launched the row's first call with one
//!   ([`super::source`]; Triton kernels), else none.
//! - Rows: total time descending, then name.
//!
//! **Cost.** Two binary searches per lane, O(k) over the k kernels in range with two args
//! lookups each (only the two keys, no JSON decode) and a parent walk for the op, then one
//! sort per name for the percentiles: O(k log k). No index is kept: a range query costs the
//! same as the whole-trace one restricted to its kernels.
//!
//! **Why** per-call durations are kept per row ([`kernel_durations`]): the same kernel can
//! take 580 µs in four steps and 2 ms in the fifth; the mean hides it, a histogram shows it.
//!
//! References: docs/definitions.md §3; tb_plugin `kernel_parser.py` (weighted averages).

use super::args::ArgKey;
use super::stats::Summary;
use super::kernel_class::{KernelClass, Precision, TensorCores};
use super::kernel_context::KernelClasses;
use super::source::{KernelSource, SourceKeys};
use super::work::{Achieved, WorkIndex};
use crate::model::link::enclosing_op;
use crate::model::strings::FxHashMap;
use crate::model::{StrId, Trace, NONE};

/// The op that launched most of a kernel's time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopOp {
    /// Op name (`aten::mm`).
    pub name: String,
    /// Calls of the kernel launched from this op.
    pub calls: u64,
    /// Their total duration, ns.
    pub total_ns: i64,
}

/// One kernel name.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelRow {
    /// Kernel name as written.
    pub name: String,
    /// Number of calls and duration statistics, ns (`stats.sum` = total).
    pub stats: Summary,
    /// Total duration, ns.
    pub total_ns: i64,
    /// Share of the table's kernel time, 0..=1.
    pub share: f64,
    /// Duration-weighted mean of `blocks per SM`, if any call carries it.
    pub blocks_per_sm: Option<f64>,
    /// Duration-weighted mean of `est. achieved occupancy %`, if any call carries it.
    pub occupancy_pct: Option<f64>,
    /// What the kernel does (the trace's [`KernelClasses`]: name table, then launching op).
    pub class: KernelClass,
    /// What decided `class`, in words ([`KernelClasses::source_label`]: `name #6`,
    /// `launch: c10d::alltoall_base_`, `none`).
    pub class_source: String,
    /// Runs on tensor cores by name ([`classify`]; `unknown` counts as no).
    pub tensor_cores: bool,
    /// A matrix multiply (`class` is GEMM).
    pub gemm: bool,
    /// Precision as the name spells it ([`classify`]).
    pub precision: Precision,
    /// The op that launched most of this kernel's time, if any call is attributed.
    pub top_op: Option<TopOp>,
    /// Calls with no launch link or whose launch call runs in no op.
    pub unattributed_calls: u64,
    /// Source of the first call launched by an op with a `kernel_file` (Triton), if any.
    pub source: Option<KernelSource>,
    /// FLOPs, bytes and achieved rates of the calls with known work (`super::work`); `None`
    /// when no call has any.
    pub achieved: Option<Achieved>,
}

impl KernelRow {
    /// Number of calls.
    pub fn calls(&self) -> u64 {
        self.stats.count as u64
    }
}

/// The kernel table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelTable {
    /// Rows, total time descending, then name.
    pub rows: Vec<KernelRow>,
    /// Total kernel time counted, ns.
    pub total_ns: i64,
    /// Kernels counted.
    pub calls: u64,
}

/// Per-name accumulator.
struct Acc {
    name: StrId,
    durs: Vec<i64>,
    bps: Weighted,
    occ: Weighted,
    /// (op name, calls, total ns), in first-seen order.
    ops: Vec<(StrId, u64, i64)>,
    unattributed: u64,
    source: Option<KernelSource>,
    /// Slice ids of the calls, in the order of `durs`.
    ids: Vec<u32>,
}

/// Duration-weighted mean of an optional per-call value.
#[derive(Clone, Copy, Default)]
struct Weighted {
    sum_w: f64,
    weight_ns: i64,
    sum: f64,
    count: u64,
}

impl Weighted {
    fn add(&mut self, value: Option<f64>, dur_ns: i64) {
        if let Some(v) = value.filter(|v| *v >= 0.0) {
            self.sum_w += v * dur_ns as f64;
            self.weight_ns += dur_ns;
            self.sum += v;
            self.count += 1;
        }
    }

    fn mean(&self) -> Option<f64> {
        match (self.count, self.weight_ns) {
            (0, _) => None,
            (n, 0) => Some(self.sum / n as f64),
            (_, w) => Some(self.sum_w / w as f64),
        }
    }
}

/// The two launch-configuration args of a kernel, read from its raw args.
pub(crate) struct LaunchArgs {
    blocks_per_sm: ArgKey,
    occupancy: ArgKey,
}

impl LaunchArgs {
    pub(crate) fn new() -> Self {
        Self {
            blocks_per_sm: ArgKey::new("blocks per SM"),
            occupancy: ArgKey::new("est. achieved occupancy %"),
        }
    }

    /// `(blocks per SM, est. achieved occupancy %)` in a kernel's raw args, each if present
    /// and numeric.
    pub(crate) fn of(&self, text: &[u8]) -> (Option<f64>, Option<f64>) {
        (
            f64_arg(&self.blocks_per_sm, text),
            f64_arg(&self.occupancy, text),
        )
    }
}

/// The value of `key` in `args` as a finite f64.
pub(crate) fn f64_arg(key: &ArgKey, args: &[u8]) -> Option<f64> {
    let raw = std::str::from_utf8(key.raw(args)?).ok()?;
    raw.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The kernel table over kernels starting in `range` (`None`: the whole trace), without
/// achieved rates ([`kernel_table_with`] adds them).
pub fn kernel_table(trace: &Trace, range: Option<(i64, i64)>) -> KernelTable {
    kernel_table_with(trace, range, None, &KernelClasses::new(trace))
}

/// The kernel table over `range`, with achieved rates from `work` when given, classes from
/// `classes` (the whole trace's, so a kernel's class does not depend on the range).
pub fn kernel_table_with(trace: &Trace, range: Option<(i64, i64)>, work: Option<&WorkIndex>, classes: &KernelClasses) -> KernelTable {
    let s = &trace.slices;
    let args = LaunchArgs::new();
    let sources = SourceKeys::any(trace).then(SourceKeys::default);
    let mut index: FxHashMap<StrId, usize> = FxHashMap::default();
    let mut accs: Vec<Acc> = Vec::new();
    let mut reader = trace.args.reader();
    for k in trace.kernels_in(range) {
        let i = k as usize;
        let slot = *index.entry(s.name[i]).or_insert_with(|| {
            accs.push(Acc {
                name: s.name[i],
                durs: Vec::new(),
                bps: Weighted::default(),
                occ: Weighted::default(),
                ops: Vec::new(),
                unattributed: 0,
                source: None,
                ids: Vec::new(),
            });
            accs.len() - 1
        });
        let acc = &mut accs[slot];
        let dur = s.dur_ns[i];
        acc.durs.push(dur);
        acc.ids.push(k);
        let (bps, occ) = args.of(reader.bytes(s.args[i]));
        acc.bps.add(bps, dur);
        acc.occ.add(occ, dur);
        if acc.source.is_none() {
            acc.source = sources.as_ref().and_then(|keys| keys.of_kernel(trace, k));
        }
        match launching_op(trace, k) {
            Some(op) => match acc.ops.iter_mut().find(|o| o.0 == op) {
                Some(o) => {
                    o.1 += 1;
                    o.2 += dur;
                }
                None => acc.ops.push((op, 1, dur)),
            },
            None => acc.unattributed += 1,
        }
    }
    let total_ns: i64 = accs.iter().flat_map(|a| a.durs.iter()).sum();
    let calls = accs.iter().map(|a| a.durs.len() as u64).sum();
    let mut rows: Vec<KernelRow> = accs
        .into_iter()
        .filter_map(|a| row(trace, a, total_ns, work, classes))
        .collect();
    rows.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    KernelTable {
        rows,
        total_ns,
        calls,
    }
}

/// Name of the innermost op enclosing the launch call of kernel `k`, if linked.
fn launching_op(trace: &Trace, k: u32) -> Option<StrId> {
    let launch = *trace.slices.launch.get(k as usize)?;
    if launch == NONE {
        return None;
    }
    let op = enclosing_op(trace, launch)?;
    trace.slices.name.get(op as usize).copied()
}

fn row(trace: &Trace, mut a: Acc, total_ns: i64, work: Option<&WorkIndex>, classes: &KernelClasses) -> Option<KernelRow> {
    let achieved = work
        .map(|w| w.achieved(a.ids.iter().copied().zip(a.durs.iter().copied())))
        .filter(|x| x.measured_ns > 0 || x.has_flops || x.bytes.is_some());
    a.durs.sort_unstable();
    let stats = Summary::of_sorted(&a.durs)?;
    let name = trace.strings.get(a.name).into_owned();
    let row_total: i64 = a.durs.iter().sum();
    // Most time, then most calls; `max_by` keeps the last of equals, so scan reversed to
    // keep the first seen.
    let top = a
        .ops
        .iter()
        .rev()
        .max_by(|x, y| (x.2, x.1).cmp(&(y.2, y.1)));
    let kind = classes.kind(trace, a.name);
    Some(KernelRow {
        class: kind.class,
        class_source: classes.source_label(trace, a.name),
        tensor_cores: kind.tensor_cores == TensorCores::Yes,
        gemm: kind.class == KernelClass::Gemm,
        precision: kind.precision,
        top_op: top.map(|&(op, calls, total)| TopOp {
            name: trace.strings.get(op).into_owned(),
            calls,
            total_ns: total,
        }),
        unattributed_calls: a.unattributed,
        source: a.source,
        achieved,
        stats,
        total_ns: row_total,
        share: if total_ns > 0 {
            row_total as f64 / total_ns as f64
        } else {
            0.0
        },
        blocks_per_sm: a.bps.mean(),
        occupancy_pct: a.occ.mean(),
        name,
    })
}

/// Durations (ns) of every call of kernel `name` starting in `range`, in start order: the
/// samples behind a row, for a histogram. Empty when no kernel has that name.
pub fn kernel_durations(trace: &Trace, name: &str, range: Option<(i64, i64)>) -> Vec<i64> {
    let Some(id) = trace.strings.lookup(name) else {
        return Vec::new();
    };
    let s = &trace.slices;
    let mut calls: Vec<(i64, u32)> = trace.kernels_in(range)
        .into_iter()
        .filter(|&k| s.name[k as usize] == id)
        .map(|k| (s.start_ns[k as usize], k))
        .collect();
    calls.sort_unstable();
    calls
        .into_iter()
        .map(|(_, k)| s.dur_ns[k as usize])
        .collect()
}
