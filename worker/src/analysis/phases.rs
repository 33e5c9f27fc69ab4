//! The phases of each step: data loading, forward, backward, optimizer, and the communication
//! the others do not hide (docs/definitions.md "Phases").
//!
//! **Rules.** Every outermost unit of work (below) that starts inside a step's CPU span, on any
//! CPU thread, belongs to one phase, the first that holds:
//! - **data loading**: under a span whose name holds `DataLoader`;
//! - **optimizer**: under `Optimizer.step#...` or `Optimizer.zero_grad#...`;
//! - **backward**: an autograd-engine op (`autograd::engine::evaluate_function: ...`, a
//!   `...Backward...` node, `AccumulateGrad`), an op on a thread other than the step's that
//!   runs such ops (the engine's device threads), or the end of a `fwdbwd` flow (a backward op
//!   tied to its forward op);
//! - **forward**: the rest of the step (its thread's work outside the above).
//!
//! A phase's CPU time is the time of its units of work: outermost ops, and DataLoader and
//! optimizer spans counted whole (their Python time is theirs too); a step's own span is not a
//! unit (2020's traces write it, and the optimizer's, as ops). Its GPU time is the device
//! activities (not communication kernels) launched by a runtime call under its units.
//! Communication: the communication kernels launched in the step, and the time they run with
//! no other device work of the step running (exposed).
//!
//! **Never guessed.** A trace without `Optimizer.*#` spans cannot tell the optimizer from the
//! forward; one without autograd-engine ops or `fwdbwd` flows cannot tell backward from
//! forward; one without DataLoader spans has no data loading: each is listed in
//! [`Phases::not_told_apart`], its time counted in forward.
//!
//! Cost: one pass over the slices (O(n) with the ancestor walks bounded by nesting depth).

use crate::analysis::kernel_context::KernelClasses;
use crate::analysis::steps::Steps;
use crate::model::strings::FxHashSet;
use crate::model::{CatClass, StrId, Trace, NONE};

/// One phase of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// Under a DataLoader span.
    DataLoading,
    /// The step's own work outside the other phases.
    Forward,
    /// The autograd engine's work.
    Backward,
    /// Under `Optimizer.step#` / `Optimizer.zero_grad#`.
    Optimizer,
}

impl Phase {
    /// Every phase, in output order.
    pub const ALL: [Phase; 4] = [Phase::DataLoading, Phase::Forward, Phase::Backward, Phase::Optimizer];

    /// The `--json` key.
    pub fn key(self) -> &'static str {
        match self {
            Phase::DataLoading => "data_loading",
            Phase::Forward => "forward",
            Phase::Backward => "backward",
            Phase::Optimizer => "optimizer",
        }
    }

    /// The header label.
    pub fn label(self) -> &'static str {
        match self {
            Phase::DataLoading => "Data loading",
            Phase::Forward => "Forward",
            Phase::Backward => "Backward",
            Phase::Optimizer => "Optimizer",
        }
    }

    /// Why the phase cannot be told apart when it is in [`Phases::not_told_apart`].
    pub fn why_not_told(self) -> &'static str {
        match self {
            Phase::DataLoading => "No DataLoader spans in the trace: data loading cannot be told apart (any is counted in forward).",
            Phase::Forward => "",
            Phase::Backward => {
                "No autograd-engine ops and no fwdbwd flows in the trace: backward cannot be told from forward (counted in forward)."
            }
            Phase::Optimizer => {
                "No Optimizer.step# / Optimizer.zero_grad# spans in the trace: the optimizer cannot be told from forward (counted in forward)."
            }
        }
    }
}

/// The phases of one step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepPhases {
    /// N of `ProfilerStep#N`.
    pub step: u64,
    /// CPU time of each phase ([`Phase::ALL`] order), ns.
    pub cpu_ns: [i64; 4],
    /// GPU time of the device work each phase launched (communication kernels apart), ns.
    pub gpu_ns: [i64; 4],
    /// Communication kernels launched in the step, ns.
    pub comm_ns: i64,
    /// The step's time with communication and no other device work running, ns.
    pub comm_exposed_ns: i64,
}

/// The phases of every step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Phases {
    /// One per step, in step order.
    pub steps: Vec<StepPhases>,
    /// Phases the trace has no markers for (their time is in forward).
    pub not_told_apart: Vec<Phase>,
}

/// Name masks, per string id.
struct Names {
    step: Vec<bool>,
    dataloader: Vec<bool>,
    optimizer: Vec<bool>,
    backward: Vec<bool>,
    /// Communication kernels (the trace's one kernel classification).
    comm: Vec<bool>,
}

impl Names {
    fn new(trace: &Trace, classes: &KernelClasses) -> Self {
        let n = trace.strings.len();
        let no = || vec![false; n];
        let mut m = Names { step: no(), dataloader: no(), optimizer: no(), backward: no(), comm: classes.communication_mask(trace) };
        for id in 0..n {
            let name = trace.strings.get(StrId(id as u32));
            m.step[id] = name.starts_with("ProfilerStep#");
            m.dataloader[id] = name.contains("DataLoader");
            m.optimizer[id] = name.starts_with("Optimizer.step#") || name.starts_with("Optimizer.zero_grad#");
            m.backward[id] = is_backward(&name);
        }
        m
    }

    fn is(mask: &[bool], trace: &Trace, slice: u32) -> bool {
        trace.slices.name.get(slice as usize).and_then(|n| mask.get(n.0 as usize)).copied().unwrap_or(false)
    }
}

/// Names only the autograd engine runs: its node wrapper (PyTorch >= 1.9), the backward nodes
/// themselves (`MmBackward0`, `CompiledFunctionBackward`; traces before the wrapper), and the
/// gradient accumulation.
pub(crate) fn is_backward(name: &str) -> bool {
    name.starts_with("autograd::engine::evaluate_function") || name.contains("Backward") || name.contains("AccumulateGrad")
}

/// The phases of the steps of `steps` (see the module rules); `classes` says which kernels
/// communicate.
pub fn analyze(trace: &Trace, steps: &Steps, classes: &KernelClasses) -> Phases {
    let s = &trace.slices;
    let names = Names::new(trace, classes);
    let flow_targets: FxHashSet<u32> = match trace.strings.lookup("fwdbwd") {
        Some(cat) => trace.flows.iter().filter(|f| f.cat == cat).map(|f| f.to).collect(),
        None => FxHashSet::default(),
    };
    let step_lanes: FxHashSet<u32> = steps.steps.iter().filter_map(|st| s.lane.get(st.slice as usize)).map(|l| l.0).collect();
    // Threads other than the steps' that run autograd-engine ops: the engine's device threads.
    let engine_lanes: FxHashSet<u32> = (0..s.len() as u32)
        .filter(|&i| Names::is(&names.backward, trace, i) && !step_lanes.contains(&s.lane[i as usize].0))
        .map(|i| s.lane[i as usize].0)
        .collect();
    // A unit of work: an op (not the step's own span, an op in 2020's traces) or a DataLoader /
    // optimizer span (counted whole: its Python time is the phase's too).
    let is_unit = |i: u32| -> bool {
        let class = trace.class(s.cat[i as usize]);
        let span = matches!(class, CatClass::CpuOp | CatClass::Annotation)
            && (Names::is(&names.dataloader, trace, i) || Names::is(&names.optimizer, trace, i));
        span || class == CatClass::CpuOp && !Names::is(&names.step, trace, i)
    };
    let outermost = |i: u32| -> Option<u32> { trace.ancestors(i).filter(|&a| is_unit(a)).last() };
    let phase_of = |unit: u32| -> Phase {
        if Names::is(&names.dataloader, trace, unit) {
            Phase::DataLoading
        } else if Names::is(&names.optimizer, trace, unit) {
            Phase::Optimizer
        } else if Names::is(&names.backward, trace, unit)
            || engine_lanes.contains(&s.lane[unit as usize].0)
            || flow_targets.contains(&unit)
        {
            Phase::Backward
        } else {
            Phase::Forward
        }
    };
    let spans: Vec<(i64, i64)> = steps.steps.iter().map(|st| (st.cpu_start_ns, st.cpu_end_ns)).collect();
    let step_at = |t: i64| -> Option<usize> {
        let k = spans.partition_point(|&(a, _)| a <= t);
        k.checked_sub(1).filter(|&k| t < spans[k].1)
    };
    let mut out: Vec<StepPhases> = steps.steps.iter().map(|st| StepPhases { step: st.number, ..StepPhases::default() }).collect();
    // Per step: (communication, other device work) intervals, for the exposed communication.
    let mut device: Vec<(Intervals, Intervals)> = vec![Default::default(); out.len()];
    // Whether any slice marks data loading, backward, optimizer.
    let mut marked = [false; 3];
    for i in 0..s.len() as u32 {
        for (seen, mask) in marked.iter_mut().zip([&names.dataloader, &names.backward, &names.optimizer]) {
            *seen |= Names::is(mask, trace, i);
        }
        let (start, dur) = (s.start_ns[i as usize], s.dur_ns[i as usize]);
        if is_unit(i) && outermost(i) == Some(i) {
            if let Some(k) = step_at(start) {
                out[k].cpu_ns[phase_of(i) as usize] += dur;
            }
        } else if trace.class(s.cat[i as usize]).is_device_activity() && s.launch[i as usize] != NONE {
            let call = s.launch[i as usize];
            let Some(k) = step_at(s.start_ns[call as usize]) else {
                continue;
            };
            if Names::is(&names.comm, trace, i) {
                out[k].comm_ns += dur;
                device[k].0.push((start, start + dur));
            } else {
                out[k].gpu_ns[outermost(call).map_or(Phase::Forward, phase_of) as usize] += dur;
                device[k].1.push((start, start + dur));
            }
        }
    }
    for (k, (comm, other)) in device.into_iter().enumerate() {
        let comm = union(comm);
        out[k].comm_exposed_ns = length(&comm) - overlap(&comm, &union(other));
    }
    let [loading, backward, optimizer] = marked;
    let mut not_told_apart = Vec::new();
    if !loading {
        not_told_apart.push(Phase::DataLoading);
    }
    if !backward && flow_targets.is_empty() {
        not_told_apart.push(Phase::Backward);
    }
    if !optimizer {
        not_told_apart.push(Phase::Optimizer);
    }
    Phases { steps: out, not_told_apart }
}

/// `[start, end)` intervals, ns.
pub(crate) type Intervals = Vec<(i64, i64)>;

/// Sorted, disjoint intervals covering `v`.
pub(crate) fn union(mut v: Intervals) -> Intervals {
    v.sort_unstable();
    let mut out: Intervals = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Total length of sorted, disjoint intervals, ns.
pub(crate) fn length(v: &[(i64, i64)]) -> i64 {
    v.iter().map(|(a, b)| b - a).sum()
}

/// Time covered by both sorted, disjoint interval lists.
pub(crate) fn overlap(x: &[(i64, i64)], y: &[(i64, i64)]) -> i64 {
    let (mut i, mut j, mut ns) = (0, 0, 0);
    while let (Some(&(a0, a1)), Some(&(b0, b1))) = (x.get(i), y.get(j)) {
        ns += (a1.min(b1) - a0.max(b0)).max(0);
        if a1 < b1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    ns
}
