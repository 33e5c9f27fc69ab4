//! Kernel classes of one trace: the name table ([`kernel_class`]) first, then where a kernel
//! comes from. A name no table row classes (`other` by default) is **communication** when every
//! call of it that is linked to a launch was launched under a communication op: a collective
//! (`nccl:*`, `gloo:*`, `c10d::*`, `record_param_comms`, bare collective names; breakdown's
//! [`is_communication_op`]), a namespaced op named for a collective (`vllm::all_reduce`,
//! `my_lib::all_to_all`), or an expert-parallel dispatch / combine / notify op in a
//! communication library's namespace (`deep_ep::dispatch`, `ep_comm::combine`).
//!
//! **Inputs and outputs.** A [`Trace`] -> [`KernelClasses`]: per kernel name (interned id), its
//! class and the source that decided it ([`ClassSource`]). Every analysis that splits kernels
//! by class (step breakdown, overlap, the run's temporal breakdown and collectives, findings,
//! the critical path, the kernel table) asks this one value, so a class is the same everywhere.
//!
//! **Invariants.** The name table always wins: a name it classes (GEMM, memory, elementwise,
//! ...) keeps that class whatever launched it (a copy under `record_param_comms` stays memory).
//! The context only turns `other` into communication, never anything else, so GEMM / attention
//! predicates need no context.
//!
//! **Cost.** One class lookup per distinct kernel name; for the names left `other`, one walk up
//! the launch call's enclosing slices per call (bounded by [`Trace::ancestors`]), op names
//! tested once each.
//!
//! **Why** by name, not by call: the tables, masks and per-name caches downstream key on the
//! name, and a library kernel does one job. "Every linked call" rather than "most": a generic
//! kernel that also runs outside collectives (a reduction under `c10d::allreduce_` and in the
//! loss) stays `other`. References: docs/definitions.md §3 (kernel classes, sources).

use super::kernel_class::{class_row, classify, KernelClass, KernelKind, TensorCores};
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, StrId, Trace, NONE};

/// What decided a kernel's class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassSource {
    /// Row `n` (1-based) of the name table (docs/definitions.md §3).
    Name(usize),
    /// Every linked call was launched under a communication op; the innermost one of the
    /// first call (an op or annotation name).
    Launch(StrId),
    /// Nothing: no row matches and the launches say nothing (`other`).
    Default,
}

/// Class and source of every kernel name of one trace.
#[derive(Clone, Debug, Default)]
pub struct KernelClasses {
    by_name: FxHashMap<StrId, (KernelClass, ClassSource)>,
}

/// What the walk has seen of a name the table leaves `other`.
#[derive(Clone, Copy)]
enum Seen {
    /// Every linked call so far under a communication op (the first call's op).
    Under(StrId),
    /// Some linked call was not.
    Outside,
}

impl KernelClasses {
    /// The classes of every kernel name in `trace`.
    pub fn new(trace: &Trace) -> Self {
        let s = &trace.slices;
        let mut by_name: FxHashMap<StrId, (KernelClass, ClassSource)> = FxHashMap::default();
        let mut seen: FxHashMap<StrId, Seen> = FxHashMap::default();
        let mut op_is_comm: FxHashMap<StrId, bool> = FxHashMap::default();
        for k in 0..s.len() {
            if trace.class(s.cat[k]) != CatClass::Kernel {
                continue;
            }
            let name = s.name[k];
            let entry = by_name.entry(name).or_insert_with(|| match class_row(&trace.strings.get(name)) {
                Some((class, row)) => (class, ClassSource::Name(row)),
                None => (KernelClass::Other, ClassSource::Default),
            });
            if entry.1 != ClassSource::Default {
                continue;
            }
            let launch = s.launch[k];
            if launch == NONE || launch as usize >= s.len() {
                continue;
            }
            let op = trace.ancestors(launch).map(|a| a as usize).find(|&a| {
                matches!(trace.class(s.cat[a]), CatClass::CpuOp | CatClass::Annotation)
                    && *op_is_comm.entry(s.name[a]).or_insert_with(|| communicates(&trace.strings.get(s.name[a])))
            });
            let next = match (seen.get(&name), op) {
                (Some(Seen::Outside), _) | (_, None) => Seen::Outside,
                (Some(&Seen::Under(first)), Some(_)) => Seen::Under(first),
                (None, Some(a)) => Seen::Under(s.name[a]),
            };
            seen.insert(name, next);
        }
        for (name, how) in seen {
            if let Seen::Under(op) = how {
                by_name.insert(name, (KernelClass::Communication, ClassSource::Launch(op)));
            }
        }
        Self { by_name }
    }

    /// The class of kernel name `name` (`other` for a name no kernel carries).
    pub fn class(&self, name: StrId) -> KernelClass {
        self.by_name.get(&name).map_or(KernelClass::Other, |e| e.0)
    }

    /// Class, tensor-core use and precision of kernel name `name`: the name table's
    /// ([`classify`]), with the class its launches decided (communication never runs on tensor
    /// cores, as the table says of its own communication rows).
    pub fn kind(&self, trace: &Trace, name: StrId) -> KernelKind {
        let kind = classify(&trace.strings.get(name));
        match self.source(name) {
            ClassSource::Launch(_) => KernelKind { class: KernelClass::Communication, tensor_cores: TensorCores::No, ..kind },
            _ => kind,
        }
    }

    /// What decided the class of kernel name `name`.
    pub fn source(&self, name: StrId) -> ClassSource {
        self.by_name.get(&name).map_or(ClassSource::Default, |e| e.1)
    }

    /// Whether kernel name `name` is communication (by the table or by its launches).
    pub fn is_communication(&self, name: StrId) -> bool {
        self.class(name) == KernelClass::Communication
    }

    /// A mask over every string id of `trace`: `mask[id]` = kernel name `id` is communication.
    pub fn communication_mask(&self, trace: &Trace) -> Vec<bool> {
        let mut mask = vec![false; trace.strings.len()];
        for (&name, &(class, _)) in &self.by_name {
            if let (KernelClass::Communication, Some(m)) = (class, mask.get_mut(name.0 as usize)) {
                *m = true;
            }
        }
        mask
    }

    /// `source` in words, for tables and JSON: `name #6`, `launch: c10d::alltoall_base_`,
    /// `none`.
    pub fn source_label(&self, trace: &Trace, name: StrId) -> String {
        match self.source(name) {
            ClassSource::Name(row) => format!("name #{row}"),
            ClassSource::Launch(op) => format!("launch: {}", trace.strings.get(op)),
            ClassSource::Default => "none".to_owned(),
        }
    }
}

/// An op or annotation whose kernels are communication: a collective by
/// [`is_communication_op`], or a namespaced op (`ns::name`, `name` an identifier) named for a
/// collective (`all_reduce`, `all_gather`, `reduce_scatter`, `all_to_all`, ...), or named
/// dispatch / combine / notify in a communication namespace ([`is_communication_namespace`]).
/// The identifier test keeps autograd's `evaluate_function: All2All_...Backward` wrappers out.
pub fn communicates(name: &str) -> bool {
    const COLLECTIVES: [&str; 8] =
        ["all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter", "all_to_all", "alltoall", "all2all"];
    const EXPERT_PARALLEL: [&str; 3] = ["dispatch", "combine", "notify"];
    if is_communication_op(name) {
        return true;
    }
    let Some((ns, op)) = name.rsplit_once("::") else {
        return false;
    };
    if op.is_empty() || !op.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') || ns == "aten" {
        return false;
    }
    let op = op.to_ascii_lowercase();
    COLLECTIVES.iter().any(|c| op.contains(c))
        || (is_communication_namespace(ns) && EXPERT_PARALLEL.iter().any(|c| op.contains(c)))
}

/// A namespace that names communication: an `ep` token (expert parallelism: `deep_ep`,
/// `uccl_ep`), or `comm`, `nccl`, `shmem`, `a2a`, `all2all`, `alltoall`, `pplx`, `mori`,
/// `mscclpp` in it (any case). `moe::dispatch` (routing, no communication) is not one.
fn is_communication_namespace(ns: &str) -> bool {
    const WORDS: [&str; 9] = ["comm", "nccl", "shmem", "a2a", "all2all", "alltoall", "pplx", "mori", "mscclpp"];
    let ns = ns.to_ascii_lowercase();
    ns.split(|c: char| !c.is_ascii_alphanumeric()).any(|t| t == "ep") || WORDS.iter().any(|w| ns.contains(w))
}

/// A host-side communication op or annotation, by name: the `nccl:` / `gloo:` record
/// functions, the `c10d` dispatcher ops (`c10d::allreduce_`, functional collectives),
/// `record_param_comms`, and bare collective names. Deliberately no substring match:
/// `aten::broadcast_tensors` is not communication.
pub fn is_communication_op(name: &str) -> bool {
    const PREFIXES: [&str; 9] = [
        "nccl:",
        "gloo:",
        "mpi:",
        "ucc:",
        "c10d::",
        "c10d_functional::",
        "_c10d_functional::",
        "record_param_comms",
        "ProcessGroup",
    ];
    const EXACT: [&str; 14] = [
        "all_reduce",
        "allreduce",
        "all_gather",
        "allgather",
        "all_gather_into_tensor",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "broadcast",
        "all_to_all",
        "all_to_all_single",
        "alltoall",
        "barrier",
        "send",
        "recv",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p)) || EXACT.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::{communicates, is_communication_op};

    #[test]
    fn communication_op_names() {
        for op in ["nccl:all_reduce", "gloo:broadcast", "c10d::allreduce_", "record_param_comms", "broadcast"] {
            assert!(is_communication_op(op), "{op}");
        }
        for op in ["aten::broadcast_tensors", "## alltoall_fwd_single ##", "aten::all"] {
            assert!(!is_communication_op(op), "{op}");
        }
    }

    #[test]
    fn communication_ops_with_near_misses() {
        for op in ["c10d::alltoall_base_", "record_param_comms", "nccl:all_to_all", "vllm::all_reduce", "deep_ep::dispatch", "my_ep::low_latency_combine", "ep_comm::notify_dispatch"] {
            assert!(communicates(op), "{op}");
        }
        for op in ["moe::dispatch", "aten::all", "autograd::engine::evaluate_function: All2All_Pooled_ReqBackward", "## alltoall_fwd_single ##", "vllm::moe_forward"] {
            assert!(!communicates(op), "{op}");
        }
    }
}
