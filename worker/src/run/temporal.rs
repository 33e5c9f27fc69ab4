//! HTA's temporal breakdown of one rank's GPU time (REFERENCE.md "Multi-rank definitions"):
//! compute, communication not overlapped by compute, communication overlapped by compute,
//! memcpy / memset, idle; and comm/compute overlap %.
//!
//! **Inputs and outputs.** A [`Trace`] and its step spans; integer ns, which sum exactly:
//! `compute + comm_non_overlapped + memory + idle = kernel_time` (`comm_overlapped` lies inside
//! `compute`).
//!
//! **Rules.**
//! - Device activities: kernels, memcpys, memsets (every stream of every device of the trace).
//!   Class: communication = the trace's [`KernelClasses`] (name table, then launching op, as
//!   every analysis reads it); memory = memcpy / memset
//!   activities and kernels named `Memcpy*` / `Memset*` / `dma*`; computation = the rest.
//! - With more than one step, activities starting at or after the last step's span start are
//!   left out (HTA drops the last ProfilerStep, which the profiler often cuts). HTA assigns a
//!   kernel to a step by its launching op; we use the kernel's start time.
//! - kernel time = last end - first start; idle = kernel time - |union of all|;
//!   compute = |union of computation|; comm overlapped = |union(comm) ∩ union(compute)|;
//!   comm non-overlapped = |union(comm)| - overlapped; memory = the rest of the union.
//! - overlap % = 100 · overlapped / |union(comm)|, `None` without communication.
//!
//! **Cost.** O(k log k) for k device activities (one sort per class).

use crate::analysis::breakdown::merge;
use crate::analysis::kernel_context::KernelClasses;
use crate::analysis::steps::Steps;
use crate::model::{CatClass, Trace};

/// A memory activity by kernel name (HTA: `^Memcpy`, `^Memset`, `^dma`).
fn is_memory_name(name: &str) -> bool {
    name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("dma")
}

/// The class of a device activity (see the module rules).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Compute,
    Comm,
    Memory,
}

/// One rank's GPU time by class, ns (see the module rules).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Temporal {
    /// Last device activity end - first start.
    pub kernel_time_ns: i64,
    /// Union of computation kernels.
    pub compute_ns: i64,
    /// Communication with no computation beside it.
    pub comm_non_overlapped_ns: i64,
    /// Communication while computation runs (inside `compute_ns`).
    pub comm_overlapped_ns: i64,
    /// Memcpy / memset not under computation or communication.
    pub memory_ns: i64,
    /// Kernel time with nothing running.
    pub idle_ns: i64,
    /// 100 · overlapped / union of communication; `None` without communication.
    pub overlap_pct: Option<f64>,
}

/// The temporal breakdown of `trace` (see the module rules); `steps` gives the last step.
pub fn temporal(trace: &Trace, steps: &Steps) -> Temporal {
    let cutoff = match steps.steps.as_slice() {
        [_, .., last] => last.start_ns,
        _ => i64::MAX,
    };
    let s = &trace.slices;
    let mut class_of: Vec<Option<Class>> = vec![None; trace.strings.len()];
    let classes = KernelClasses::new(trace);
    let (mut compute, mut comm, mut all) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..s.len() {
        let class = trace.class(s.cat[i]);
        if !class.is_device_activity() || s.start_ns[i] >= cutoff {
            continue;
        }
        let span = (s.start_ns[i], s.end_ns(i));
        let kind = if class == CatClass::Kernel {
            match class_of.get_mut(s.name[i].0 as usize) {
                Some(Some(k)) => *k,
                slot => {
                    let name = trace.strings.get(s.name[i]);
                    let k = if classes.is_communication(s.name[i]) {
                        Class::Comm
                    } else if is_memory_name(&name) {
                        Class::Memory
                    } else {
                        Class::Compute
                    };
                    if let Some(slot) = slot {
                        *slot = Some(k);
                    }
                    k
                }
            }
        } else {
            Class::Memory
        };
        match kind {
            Class::Compute => compute.push(span),
            Class::Comm => comm.push(span),
            Class::Memory => {}
        }
        all.push(span);
    }
    let first = all.iter().map(|a| a.0).min();
    let last = all.iter().map(|a| a.1).max();
    let (Some(first), Some(last)) = (first, last) else {
        return Temporal::default();
    };
    let (compute, comm, all) = (merge(compute), merge(comm), merge(all));
    let busy = length(&all);
    let compute_ns = length(&compute);
    let comm_ns = length(&comm);
    let overlapped = intersection(&comm, &compute);
    let comm_non_overlapped_ns = comm_ns - overlapped;
    Temporal {
        kernel_time_ns: last - first,
        compute_ns,
        comm_non_overlapped_ns,
        comm_overlapped_ns: overlapped,
        memory_ns: busy - compute_ns - comm_non_overlapped_ns,
        idle_ns: (last - first) - busy,
        overlap_pct: (comm_ns > 0).then(|| 100.0 * overlapped as f64 / comm_ns as f64),
    }
}

/// Total length of disjoint intervals.
fn length(merged: &[(i64, i64)]) -> i64 {
    merged.iter().map(|(a, b)| b - a).sum()
}

/// |a ∩ b| for two sorted lists of disjoint intervals (two pointers).
fn intersection(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    let (mut i, mut j, mut total) = (0, 0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        let (lo, hi) = (x.0.max(y.0), x.1.min(y.1));
        if hi > lo {
            total += hi - lo;
        }
        if x.1 < y.1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersection_of_merged_lists() {
        assert_eq!(intersection(&[(0, 10), (20, 30)], &[(5, 25)]), 10);
        assert_eq!(intersection(&[(0, 10)], &[(10, 20)]), 0);
        assert_eq!(intersection(&[], &[(0, 1)]), 0);
    }

    #[test]
    fn collective_kernels_include_modern_names() {
        use crate::analysis::breakdown::is_communication_kernel;
        for name in [
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
            "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
            "rcclGenericKernel",
            "multimem_all_reduce_kernel",
            "void vllm::cross_device_reduce_1stage<float, 8>",
            "void one_shot_all_reduce<__nv_bfloat16, 8>",
            "void deep_ep::intranode::dispatch<8, 768>(int4*, float*)",
        ] {
            assert!(is_communication_kernel(name), "{name}");
        }
        assert!(!is_communication_kernel("ampere_sgemm_128x64_nn"));
        assert!(!is_communication_kernel("void at::native::reduce_kernel<512, 1>"));
    }
}
