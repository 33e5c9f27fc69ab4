//! One rank's summary: the few numbers and lists the run analysis needs, extracted from a
//! loaded [`Trace`] so the model can be dropped right after (a run of 256 ranks holds 256
//! summaries, not 256 models).
//!
//! **Outputs** ([`RankSummary`]): identity; steps (number, start, duration) and their mean /
//! p95 from [`crate::analysis::steps::analyze`] (so they equal `kinetoscope report --json`
//! `steps` / `step_stats`); GPU utilization from [`crate::analysis::gpu::gpu_metrics`] over
//! the report's window (the device with most kernels); peak allocated memory of the GPU from
//! [`crate::analysis::memory`]; the HTA temporal breakdown ([`super::temporal`]); and the
//! collectives: per communication stream in start order, each collective kernel with its
//! stream, step, process group and sequence number when the trace has them, and the window
//! before it ([`super::window`]).
//!
//! **Times.** Step and collective times are **absolute ns on the rank's own clock** (trace
//! origin + model time): ranks are compared on one time axis, after [`super::clock`] aligns
//! them. Durations are ns.
//!
//! **Process group / sequence number**: newer PyTorch writes `Process Group Name` and `Seq`
//! (or `seq`) on `record_param_comms` and on the NCCL kernel; read from the kernel's args,
//! else from the ops above its launch call. Older traces (the dlrm fixtures) have neither.
//!
//! **Cost.** The step, GPU and memory analyses as in a report, plus O(n log n) for the window
//! index and O(c) window queries for c collectives.

use super::rank::{identify, RankIdentity};
use super::temporal::{temporal, Temporal};
use super::window::{Window, WindowIndex};
use crate::analysis::args::ArgKey;
use crate::analysis::kernel_context::KernelClasses;
use crate::analysis::critical_path::{BoundBy, Shares};
use crate::analysis::steps;
use crate::model::args::Reader as ArgsReader;
use crate::model::{CatClass, Trace, NONE};
use crate::session::Session;

/// One step of a rank.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StepTime {
    /// N of `ProfilerStep#N`.
    pub number: u64,
    /// Step span start, absolute ns (rank clock).
    pub start_ns: i64,
    /// When the host entered the step (the `ProfilerStep#N` annotation's start), absolute ns:
    /// the step span starts later when the previous step's device work ran past it.
    pub cpu_start_ns: i64,
    /// Step span duration, ns.
    pub dur_ns: i64,
    /// In the incomplete tail (not in the statistics), as in the single-trace report.
    pub incomplete: bool,
}

/// One collective kernel on a rank.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Collective {
    /// Kernel name.
    pub name: Box<str>,
    /// Stream (the kernel lane's tid).
    pub stream: Box<str>,
    /// Kernel start, absolute ns (rank clock).
    pub start_ns: i64,
    /// Kernel end, absolute ns (rank clock).
    pub end_ns: i64,
    /// The step whose span holds the start.
    pub step: Option<u64>,
    /// Position among this stream's collectives of the same step (0-based).
    pub index_in_step: u32,
    /// `Process Group Name`, when written.
    pub group: Option<Box<str>>,
    /// `Seq` / `seq`, when written.
    pub seq: Option<i64>,
    /// Start of the window before it: the previous collective's end on the stream, else the
    /// start of its step, else the trace start; absolute ns (rank clock).
    pub window_start_ns: i64,
    /// What ran in `[window_start_ns, start_ns)`.
    pub before: Window,
}

/// GPU utilization of the rank's main device.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpuUse {
    /// Device id.
    pub device: i64,
    /// GPU Utilization, 0..=1, over the report's window.
    pub utilization: f64,
}

/// Everything the run analysis keeps of one rank (see the module docs).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RankSummary {
    /// File name as given.
    pub file: String,
    /// Rank, world size, backend.
    pub identity: RankIdentity,
    /// The trace's origin, absolute ns (rank clock): model time `t` is `origin_ns + t`.
    pub origin_ns: i64,
    /// Steps in start order.
    pub steps: Vec<StepTime>,
    /// Mean step duration of complete steps, ns.
    pub step_mean_ns: Option<f64>,
    /// Percentile 95 of complete step durations, ns.
    pub step_p95_ns: Option<f64>,
    /// GPU utilization of the device with most kernels.
    pub gpu: Option<GpuUse>,
    /// Peak allocated bytes over the GPU devices.
    pub peak_memory_bytes: Option<i64>,
    /// HTA temporal breakdown.
    pub temporal: Temporal,
    /// Collectives ordered by stream, then start.
    pub collectives: Vec<Collective>,
    /// Data-loading spans ([`super::window::data_loading`]), absolute ns (rank clock).
    pub data_loading: Vec<(i64, i64)>,
    /// What bounds its complete steps: their critical paths summed.
    pub critical: RankPath,
}

/// A rank's critical paths over its complete steps (all of them without complete steps).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RankPath {
    /// Time per class ([`BoundBy::ALL`] order), ns; sums to `wall_ns`.
    pub shares: Shares,
    /// The steps' wall time, ns.
    pub wall_ns: i64,
    /// Names of the slices holding most of the paths: (name, ns on the paths), most first.
    pub on_path: Vec<(String, i64)>,
    /// The paths as stretches of one class, in time order (what another rank that waited for
    /// this one was waiting on: `super::joined`).
    pub stretches: Vec<Stretch>,
}

/// A stretch of a rank's critical paths spent on one class, absolute ns (rank clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stretch {
    /// Start, absolute ns.
    pub start_ns: i64,
    /// End, absolute ns.
    pub end_ns: i64,
    /// What it was spent on.
    pub class: BoundBy,
    /// The collective (index into the rank's `collectives`) whose kernel it ran, or `NONE`.
    pub collective: u32,
}

impl RankPath {
    /// The class holding most of the paths, if any time was followed.
    pub fn bound_by(&self) -> Option<BoundBy> {
        (self.wall_ns > 0).then(|| BoundBy::most(&self.shares))
    }
}

/// Names kept in [`RankPath::on_path`] (enough to hold the ops a straggler's "why" names).
const ON_PATH_NAMES: usize = 50;

/// Sums the paths of the complete steps (or of all paths without complete steps) of `session`;
/// `collective_slices[k]` is collective `k`'s kernel slice.
fn rank_path(session: &Session, steps: &crate::analysis::steps::Steps, collective_slices: &[u32]) -> RankPath {
    let trace = session.trace();
    let complete: Vec<u64> = steps.steps.iter().filter(|s| !s.incomplete).map(|s| s.number).collect();
    let paths = session.critical_paths();
    let counted: Vec<&crate::analysis::critical_path::StepPath> =
        paths.iter().filter(|p| complete.is_empty() || p.step.is_some_and(|n| complete.contains(&n))).collect();
    let mut out = RankPath::default();
    let mut by_name: crate::model::strings::FxHashMap<crate::model::StrId, i64> = Default::default();
    let collective_of: crate::model::strings::FxHashMap<u32, u32> =
        collective_slices.iter().enumerate().map(|(k, &slice)| (slice, k as u32)).collect();
    for p in counted {
        out.wall_ns += p.wall_ns();
        for c in BoundBy::ALL {
            out.shares[c.index()] += p.shares[c.index()];
        }
        for g in &p.segments {
            if let Some(&name) = trace.slices.name.get(g.slice as usize) {
                *by_name.entry(name).or_default() += g.end_ns - g.start_ns;
            }
            let collective = collective_of.get(&g.slice).copied().unwrap_or(NONE);
            let (start_ns, end_ns) = (trace.origin_ns + g.start_ns, trace.origin_ns + g.end_ns);
            match out.stretches.last_mut() {
                Some(last) if last.end_ns == start_ns && last.class == g.class && last.collective == collective => {
                    last.end_ns = end_ns;
                }
                _ => out.stretches.push(Stretch { start_ns, end_ns, class: g.class, collective }),
            }
        }
    }
    let mut names: Vec<(String, i64)> = by_name.into_iter().map(|(n, ns)| (trace.strings.get(n).into_owned(), ns)).collect();
    names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    names.truncate(ON_PATH_NAMES);
    out.on_path = names;
    out
}

/// The summary of the trace loaded from `file`. GPU metrics and the memory series are the
/// session's own (built once: a rank opened later on the page reuses them).
pub fn summarize(file: &str, session: &Session) -> RankSummary {
    let trace = session.trace();
    let steps = session.steps(None);
    let origin = trace.origin_ns;
    let stats = steps.stats.as_ref().map(|s| s.duration);
    let gpu = session
        .gpus(None)
        .into_iter()
        .max_by_key(|m| (m.kernels, std::cmp::Reverse(m.device)))
        .map(|m| GpuUse {
            device: m.device,
            utilization: m.utilization,
        });
    let (collectives, collective_slices) = collectives(trace, &steps);
    let peak_memory_bytes = session
        .memory()
        .devices
        .iter()
        .filter(|d| d.device_type != 0)
        .map(|d| d.peak_allocated)
        .max();
    RankSummary {
        file: file.to_owned(),
        identity: identify(file, &trace.top_level),
        origin_ns: origin,
        steps: steps
            .steps
            .iter()
            .map(|s| StepTime {
                number: s.number,
                start_ns: origin + s.start_ns,
                cpu_start_ns: origin + s.cpu_start_ns,
                dur_ns: s.dur_ns(),
                incomplete: s.incomplete,
            })
            .collect(),
        step_mean_ns: stats.map(|d| d.mean),
        step_p95_ns: stats.map(|d| d.p95),
        gpu,
        peak_memory_bytes,
        temporal: temporal(trace, &steps),
        critical: rank_path(session, &steps, &collective_slices),
        collectives,
        data_loading: super::window::data_loading(trace)
            .into_iter()
            .map(|(a, b)| (origin + a, origin + b))
            .collect(),
    }
}

/// Argument keys of newer PyTorch's collective metadata.
struct GroupKeys {
    group: ArgKey,
    seq: ArgKey,
    seq_lower: ArgKey,
}

impl GroupKeys {
    fn new() -> Self {
        Self {
            group: ArgKey::new("Process Group Name"),
            seq: ArgKey::new("Seq"),
            seq_lower: ArgKey::new("seq"),
        }
    }

    /// (group, seq) from one args text.
    fn read(&self, b: &[u8]) -> (Option<Box<str>>, Option<i64>) {
        let group = self.group.raw(b).and_then(|raw| {
            match serde_json::from_slice::<serde_json::Value>(raw) {
                Ok(serde_json::Value::String(s)) => Some(s.into_boxed_str()),
                Ok(serde_json::Value::Number(n)) => Some(n.to_string().into_boxed_str()),
                _ => None,
            }
        });
        (group, self.seq.i64(b).or_else(|| self.seq_lower.i64(b)))
    }

    /// (group, seq) of kernel `i`: its own args, else those of the ops above its launch call.
    fn of_kernel(
        &self,
        trace: &Trace,
        args: &mut ArgsReader<'_>,
        i: usize,
    ) -> (Option<Box<str>>, Option<i64>) {
        let s = &trace.slices;
        let own = self.read(args.bytes(s.args[i]));
        if own.0.is_some() && own.1.is_some() {
            return own;
        }
        let mut p = s.launch.get(i).copied().unwrap_or(NONE);
        while p != NONE {
            let Some(&span) = s.args.get(p as usize) else {
                break;
            };
            let found = self.read(args.bytes(span));
            if found.0.is_some() && found.1.is_some() {
                return found;
            }
            p = s.parent.get(p as usize).copied().unwrap_or(NONE);
        }
        own
    }
}

/// The collectives of `trace` by stream, then start, with steps and windows, and each one's
/// kernel slice.
fn collectives(trace: &Trace, steps: &steps::Steps) -> (Vec<Collective>, Vec<u32>) {
    let s = &trace.slices;
    let keys = GroupKeys::new();
    // (stream, start, end, slice) of every collective kernel.
    let mut found: Vec<(Box<str>, i64, i64, usize)> = Vec::new();
    let classes = KernelClasses::new(trace);
    for lane in &trace.lanes {
        let stream: Box<str> = trace.strings.get(lane.tid).as_ref().into();
        for i in lane.slices.start as usize..lane.slices.end as usize {
            if trace.class(s.cat[i]) == CatClass::Kernel && classes.is_communication(s.name[i]) {
                found.push((stream.clone(), s.start_ns[i], s.end_ns(i), i));
            }
        }
    }
    found.sort_by(|a, b| (&a.0, a.1, a.2, a.3).cmp(&(&b.0, b.1, b.2, b.3)));
    let windows = WindowIndex::new(trace);
    let mut out: Vec<Collective> = Vec::with_capacity(found.len());
    let slices: Vec<u32> = found.iter().map(|f| f.3 as u32).collect();
    let mut args = trace.args.reader();
    for (stream, start, end, i) in found {
        let step = steps
            .steps
            .iter()
            .find(|st| st.start_ns <= start && start < st.end_ns)
            .map(|st| st.number);
        let prev = out.last().filter(|c| c.stream == stream);
        let w0 = match prev {
            Some(c) => c.end_ns - trace.origin_ns,
            None => steps
                .steps
                .iter()
                .find(|st| Some(st.number) == step)
                .map_or(0, |st| st.start_ns),
        };
        let index_in_step = prev
            .filter(|c| c.step == step)
            .map_or(0, |c| c.index_in_step + 1);
        let (group, seq) = keys.of_kernel(trace, &mut args, i);
        let w0 = w0.min(start);
        out.push(Collective {
            name: trace.strings.get(s.name[i]).as_ref().into(),
            stream,
            start_ns: trace.origin_ns + start,
            end_ns: trace.origin_ns + end,
            step,
            index_in_step,
            group,
            seq,
            window_start_ns: trace.origin_ns + w0,
            before: windows.of(w0, start),
        });
    }
    (out, slices)
}
