//! Time breakdown of a span (a step, or any range) into Kernel / Memcpy / Memset /
//! Communication / Runtime / DataLoader / CPU Exec / Other, by tb_plugin's priority rule
//! (docs/definitions.md §3): walking the categories in that order, each takes the part of the span
//! covered by its events and not yet taken; Other is what nothing covers.
//!
//! **Inputs and outputs.** A [`Trace`]; [`Roles::breakdown`] takes `[start_ns, end_ns)` (ns from
//! the origin) and returns integer ns per [`Category`] that sum exactly to the span.
//!
//! **Which events play which role** (every lane and device together, as tb_plugin does):
//! - Kernel: device kernels, except communication kernels; Memcpy / Memset: device copies, sets.
//! - Communication: communication kernels by the trace's classes (`kernel_context`: the name
//!   table, `nccl*`, `rccl*`, ..., then kernels launched under collectives) and host ops /
//!   annotations that communicate (`kernel_context::communicates`: `kernel_context::is_communication_op`'s
//!   `nccl:*`, `gloo:*`, `c10d::*`, `record_param_comms`, exact `all_reduce`, `broadcast`, ...,
//!   and namespaced collectives / expert-parallel dispatch and combine). tb_plugin only
//!   knows ten exact names (`nccl:all_reduce`, ...) and tags a kernel by its External id.
//! - Runtime: launch calls (`cuda_runtime` and `cuda_driver`; tb_plugin ignores `cuda_driver`).
//! - DataLoader: ops / annotations `enumerate(DataLoader)#*.__next__`, `enumerate(DataPipe)#*`.
//! - CPU Exec: every other `cpu_op` and `user_annotation` except `ProfilerStep#N` itself.
//! - Not counted anywhere (so Other): `python_function`, overhead, flows, and GPU-side
//!   annotations (`gpu_user_annotation`). tb_plugin counts the latter as CPU Exec; they are a
//!   device-side mirror of host annotations, not host work, so we do not.
//!
//! **Invariants.** Each role's intervals are merged (sorted, disjoint) at build time, so a span
//! query only binary-searches and clips. Zero-length events cover nothing.
//!
//! **Cost.** [`Roles::new`]: O(n) over slices plus a sort per role, one name classification per
//! distinct name. [`Roles::breakdown`]: O(k log k) for the k role intervals touching the span.
//!
//! **Why** a boundary sweep over merged roles instead of tb_plugin's repeated
//! intersect/subtract of range lists: same result, one pass, and per-span queries stay cheap
//! for a brushed range. References: docs/definitions.md §3; tb_plugin `overall_parser.py`,
//! `event_parser.py`.

use super::args::ArgKey;
use super::kernel_class;
use super::kernel_context::{communicates, KernelClasses};
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, Trace};

/// A breakdown category, in priority order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// Device kernels (not communication).
    Kernel,
    /// Device copies.
    Memcpy,
    /// Device memsets.
    Memset,
    /// Collective communication kernels and host ops.
    Communication,
    /// Launch / runtime calls.
    Runtime,
    /// `enumerate(DataLoader)#...__next__`.
    DataLoader,
    /// Other host ops and annotations.
    CpuExec,
    /// Time no role covers.
    Other,
}

/// All categories in priority order (index = `Category as usize`).
pub const CATEGORIES: [Category; 8] = [
    Category::Kernel,
    Category::Memcpy,
    Category::Memset,
    Category::Communication,
    Category::Runtime,
    Category::DataLoader,
    Category::CpuExec,
    Category::Other,
];

impl Category {
    /// The name tb_plugin shows (`Kernel`, `CPU Exec`, ...).
    pub fn label(self) -> &'static str {
        match self {
            Self::Kernel => "Kernel",
            Self::Memcpy => "Memcpy",
            Self::Memset => "Memset",
            Self::Communication => "Communication",
            Self::Runtime => "Runtime",
            Self::DataLoader => "DataLoader",
            Self::CpuExec => "CPU Exec",
            Self::Other => "Other",
        }
    }

    /// The `--json` key (`kernel`, `cpu_exec`, ...).
    pub fn key(self) -> &'static str {
        match self {
            Self::Kernel => "kernel",
            Self::Memcpy => "memcpy",
            Self::Memset => "memset",
            Self::Communication => "communication",
            Self::Runtime => "runtime",
            Self::DataLoader => "dataloader",
            Self::CpuExec => "cpu_exec",
            Self::Other => "other",
        }
    }
}

/// Time per category of one span, ns; the parts sum to the span's length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    /// ns per category, indexed by `Category as usize`.
    pub ns: [i64; 8],
}

impl Breakdown {
    /// Time of `cat`, ns.
    pub fn get(&self, cat: Category) -> i64 {
        self.ns[cat as usize]
    }

    /// Sum of all categories (= the span length), ns.
    pub fn total(&self) -> i64 {
        self.ns.iter().sum()
    }
}

/// Number of roles (every category but Other).
const ROLES: usize = 7;

/// Which role rules to apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rules {
    /// Ours (module header): communication by name, `cuda_driver` is Runtime, GPU-side
    /// annotations are nobody's.
    #[default]
    Kinetoscope,
    /// tb_plugin's, to check the machinery against its numbers: communication = the ten ops
    /// `nccl:` / `gloo:` {broadcast, reduce, all_reduce, all_gather, reduce_scatter} and
    /// kernels whose External id is one of theirs; `cuda_driver` ignored; GPU-side
    /// annotations counted as CPU Exec.
    TbPlugin,
}

/// Merged intervals of every role over the whole trace; build once, query many spans.
#[derive(Clone, Debug, Default)]
pub struct Roles {
    /// Per role (index = `Category as usize`): sorted, disjoint `[start, end)` in ns.
    merged: [Vec<(i64, i64)>; ROLES],
}

impl Roles {
    /// Collects and merges every role's intervals with [`Rules::Kinetoscope`].
    pub fn new(trace: &Trace) -> Self {
        Self::with_rules(trace, Rules::Kinetoscope)
    }

    /// Collects and merges every role's intervals under `rules`.
    pub fn with_rules(trace: &Trace, rules: Rules) -> Self {
        let s = &trace.slices;
        let tb = rules == Rules::TbPlugin;
        // External ids are read from args only here: our own rules never use them
        // (docs/definitions.md §1).
        let ext_keys = [ArgKey::new("external id"), ArgKey::new("External id")];
        let mut reader = trace.args.reader();
        let mut ext = |i: usize| {
            let args = reader.bytes(s.args[i]);
            ext_keys.iter().find_map(|k| k.i64(args))
        };
        let tb_comm_ext: FxHashMap<i64, ()> = if tb {
            (0..s.len())
                .filter(|&i| {
                    is_op(trace.class(s.cat[i]))
                        && TB_COMM_OPS.contains(&&*trace.strings.get(s.name[i]))
                })
                .filter_map(|i| Some((ext(i)?, ())))
                .collect()
        } else {
            FxHashMap::default()
        };
        let driver = trace.strings.lookup("cuda_driver");
        // Kernels by the trace's classes (name table, then launching op); tb_plugin's by ext id.
        let classes = if tb { KernelClasses::default() } else { KernelClasses::new(trace) };
        let mut op_roles: Vec<u8> = vec![UNKNOWN; trace.strings.len()];
        let mut raw: [Vec<(i64, i64)>; ROLES] = Default::default();
        for i in 0..s.len() {
            if s.dur_ns[i] <= 0 {
                continue;
            }
            let class = trace.class(s.cat[i]);
            let role = match class {
                CatClass::Kernel if tb => {
                    Some(if ext(i).is_some_and(|e| tb_comm_ext.contains_key(&e)) {
                        Category::Communication
                    } else {
                        Category::Kernel
                    })
                }
                CatClass::Kernel if classes.is_communication(s.name[i]) => Some(Category::Communication),
                CatClass::Kernel => Some(Category::Kernel),
                CatClass::CpuOp | CatClass::Annotation => cached(&mut op_roles, trace, i, rules),
                CatClass::GpuAnnotation if tb => cached(&mut op_roles, trace, i, rules),
                CatClass::Memcpy => Some(Category::Memcpy),
                CatClass::Memset => Some(Category::Memset),
                CatClass::Launch if tb && Some(s.cat[i]) == driver => None,
                CatClass::Launch => Some(Category::Runtime),
                CatClass::GpuAnnotation | CatClass::Other => None,
            };
            if let Some(role) = role {
                raw[role as usize].push((s.start_ns[i], s.end_ns(i)));
            }
        }
        Self {
            merged: raw.map(merge),
        }
    }

    /// The breakdown of `[start_ns, end_ns)`; all zero when the span is empty.
    pub fn breakdown(&self, start_ns: i64, end_ns: i64) -> Breakdown {
        let mut out = Breakdown::default();
        if end_ns <= start_ns {
            return out;
        }
        // Boundaries: (time, role, +1 opens / -1 closes). Each role's intervals are disjoint,
        // so per role at most one is open and a bit mask says who covers the current segment.
        let mut edges: Vec<(i64, usize, bool)> = Vec::new();
        for (role, list) in self.merged.iter().enumerate() {
            let first = list.partition_point(|&(_, e)| e <= start_ns);
            for &(a, b) in list[first..].iter().take_while(|&&(a, _)| a < end_ns) {
                edges.push((a.max(start_ns), role, true));
                edges.push((b.min(end_ns), role, false));
            }
        }
        edges.sort_unstable();
        let mut mask: u8 = 0;
        let mut at = start_ns;
        for (t, role, open) in edges {
            let owner = if mask == 0 {
                Category::Other as usize
            } else {
                mask.trailing_zeros() as usize
            };
            out.ns[owner] += t - at;
            at = t;
            if open {
                mask |= 1 << role;
            } else {
                mask &= !(1 << role);
            }
        }
        out.ns[Category::Other as usize] += end_ns - at;
        debug_assert_eq!(out.total(), end_ns - start_ns);
        out
    }
}

const UNKNOWN: u8 = 0xFF;
const NO_ROLE: u8 = 0xFE;

fn encode(role: Option<Category>) -> u8 {
    role.map_or(NO_ROLE, |c| c as u8)
}

fn decode(v: u8) -> Option<Category> {
    CATEGORIES.get(usize::from(v)).copied()
}

/// tb_plugin's communication ops (`NcclOpNameSet`, `GlooOpNameSet` in its `trace.py`).
const TB_COMM_OPS: [&str; 10] = [
    "nccl:broadcast",
    "nccl:reduce",
    "nccl:all_reduce",
    "nccl:all_gather",
    "nccl:reduce_scatter",
    "gloo:broadcast",
    "gloo:reduce",
    "gloo:all_reduce",
    "gloo:all_gather",
    "gloo:reduce_scatter",
];

fn is_op(class: CatClass) -> bool {
    matches!(
        class,
        CatClass::CpuOp | CatClass::Annotation | CatClass::GpuAnnotation
    )
}

/// The role of op or annotation `i` by its name, through a per-name cache (`cache[name]`).
fn cached(cache: &mut [u8], trace: &Trace, i: usize, rules: Rules) -> Option<Category> {
    let name = trace.slices.name[i];
    match cache.get_mut(name.0 as usize) {
        Some(r) if *r != UNKNOWN => decode(*r),
        Some(r) => {
            let role = name_role(&trace.strings.get(name), rules);
            *r = encode(role);
            role
        }
        None => name_role(&trace.strings.get(name), rules),
    }
}

/// The role of an op or annotation, from its name.
fn name_role(name: &str, rules: Rules) -> Option<Category> {
    let comm = match rules {
        Rules::Kinetoscope => communicates(name),
        Rules::TbPlugin => TB_COMM_OPS.contains(&name),
    };
    if name.starts_with("ProfilerStep#") {
        None
    } else if is_dataloader(name) {
        Some(Category::DataLoader)
    } else if comm {
        Some(Category::Communication)
    } else {
        Some(Category::CpuExec)
    }
}

/// Sorts and merges intervals into disjoint ones (touching intervals join).
pub(crate) fn merge(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    v.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// A data-loading op: `enumerate(DataLoader)#...__next__` or `enumerate(DataPipe)#...`.
pub fn is_dataloader(name: &str) -> bool {
    (name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__"))
        || name.starts_with("enumerate(DataPipe)#")
}

/// A collective-communication kernel by its name alone: a view of the kernel-class table
/// ([`kernel_class`]: NCCL / RCCL, NVLS `multimem_*`, custom and fused all-reduce, DeepEP).
/// The analyses ask a trace's `kernel_context::KernelClasses`, which adds the launching op;
/// this is for a name without its trace. HTA's `^nccl.*Kernel` misses all but NCCL
/// (docs/runs.md says where we differ).
pub fn is_communication_kernel(name: &str) -> bool {
    kernel_class::class_of(name) == kernel_class::KernelClass::Communication
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_communication_kernel(
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"
        ));
        assert!(is_communication_kernel(
            "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
        ));
        assert!(!is_communication_kernel(
            "void at::native::vectorized_elementwise_kernel<4>"
        ));
        assert!(is_dataloader(
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
        ));
        assert!(!is_dataloader(
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__init__"
        ));
    }

    #[test]
    fn merge_joins_touching_and_nested() {
        assert_eq!(
            merge(vec![(5, 6), (0, 2), (2, 3), (1, 2), (7, 7)]),
            vec![(0, 3), (5, 6), (7, 7)]
        );
    }
}
