//! One loaded trace: its name, model and timeline index, and the analyses built from it on
//! first use (op index, GPU profiles, memory series, the whole trace's kernel table and steps,
//! findings).
//!
//! The engine holds the current trace and the comparison baseline as sessions (the baseline is
//! the same `Arc<Session>`, not a copy); the CLI's report reads a session too. So a number on
//! the page and in the CLI come from one place, and an analysis is built once per trace
//! whoever asks first.
//!
//! Invariants: a session never changes its trace (a new step marker makes a new session,
//! [`Session::with_step_marker`]); every lazily built analysis covers the whole
//! trace (range-limited tables are computed per query from the whole-trace indexes).

use crate::analysis::explain;
use crate::analysis::gpu::{metrics_window_of, GpuIndex, GpuMetrics};
use crate::analysis::kernel_context::KernelClasses;
use crate::analysis::kernels::{self, KernelTable};
use crate::analysis::memory::held::Held;
use crate::analysis::memory::{self, Memory};
use crate::analysis::ops::{OpIndex, OpOptions, OpTable};
use crate::analysis::steps::{self, Steps};
use crate::analysis::work::peaks::Peaks;
use crate::analysis::work::WorkIndex;
use crate::finding::{self, Finding};
use crate::index::Index;
use crate::model::Trace;
use crate::analysis::critical_path::{self, CriticalPaths, StepPath};
use std::sync::OnceLock;

/// Slices up to which a trace's step graphs are built when its paths are first asked by the
/// page ([`Session::prepare_what_if`]).
pub const KEEP_GRAPHS_SLICES: usize = 1 << 20;

/// One loaded trace and what has been built from it so far.
pub struct Session {
    name: String,
    trace: Trace,
    index: Index,
    ops: OnceLock<OpIndex>,
    gpu: OnceLock<GpuIndex>,
    memory: OnceLock<Memory>,
    held: OnceLock<Held>,
    findings: OnceLock<Vec<Finding>>,
    /// The whole trace's kernel table: the findings, the Kernels tab, a comparison and the
    /// roofline each ask for it, and it reads every kernel's args.
    kernels: OnceLock<KernelTable>,
    /// The whole trace's steps: the findings, the Steps tab, a step's explanation and the GPU
    /// metrics' window each ask for them.
    steps: OnceLock<Steps>,
    /// The whole trace's critical paths: the findings' impact, the report and the Steps tab.
    critical: OnceLock<Vec<StepPath>>,
    /// The step graphs behind them, kept once a what-if is asked (the page's What if panel),
    /// so each further what-if only re-runs the forward pass.
    graphs: OnceLock<CriticalPaths>,
    /// Peaks given by hand, over the table's for the trace's GPU.
    peaks: Option<Peaks>,
    work: OnceLock<WorkIndex>,
    /// Every kernel name's class (name table, then launching op): one value for the kernel
    /// table, findings, step breakdown and critical path.
    classes: OnceLock<KernelClasses>,
}

impl Session {
    /// A session over `trace` (named `name`, the file name), with its timeline index built.
    pub fn new(name: impl Into<String>, trace: Trace) -> Self {
        let index = Index::build(&trace);
        Self::indexed(name, trace, index)
    }

    /// A session over `trace` with its timeline index, `index`, built already (`Index::build`).
    pub fn indexed(name: impl Into<String>, trace: Trace, index: Index) -> Self {
        Self::from_parts(name.into(), trace, index)
    }

    /// This session's trace with steps marked by `marker` (`None`: `ProfilerStep#N`): the
    /// timeline index is kept (it knows nothing of steps), every lazily built analysis is
    /// dropped, since findings and GPU metrics read the steps.
    #[must_use]
    pub fn with_step_marker(self, marker: Option<String>) -> Self {
        let Self { name, mut trace, index, peaks, .. } = self;
        trace.step_marker = marker;
        Self { peaks, ..Self::from_parts(name, trace, index) }
    }

    /// This session with the GPU's peaks given by hand (`None`: the table's): the work index
    /// and the findings (`low-mfu` reads the peaks) are rebuilt on next use.
    #[must_use]
    pub fn with_peaks(self, peaks: Option<Peaks>) -> Self {
        let Self { name, trace, index, .. } = self;
        Self { peaks, ..Self::from_parts(name, trace, index) }
    }

    /// A session over an already indexed trace, nothing else built yet.
    fn from_parts(name: String, trace: Trace, index: Index) -> Self {
        Self {
            name,
            trace,
            index,
            ops: OnceLock::new(),
            gpu: OnceLock::new(),
            memory: OnceLock::new(),
            held: OnceLock::new(),
            findings: OnceLock::new(),
            kernels: OnceLock::new(),
            steps: OnceLock::new(),
            critical: OnceLock::new(),
            graphs: OnceLock::new(),
            peaks: None,
            work: OnceLock::new(),
            classes: OnceLock::new(),
        }
    }

    /// The file name the trace was loaded from.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The model.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The timeline index.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The op index (built on first use).
    pub fn ops(&self) -> &OpIndex {
        self.ops.get_or_init(|| OpIndex::new(&self.trace))
    }

    /// The op table (`key_averages()` semantics) for `opts`, from the op index.
    pub fn op_table(&self, opts: &OpOptions) -> OpTable {
        self.ops().table(&self.trace, opts)
    }

    /// Per-device kernel profiles (built on first use).
    pub fn gpu(&self) -> &GpuIndex {
        self.gpu.get_or_init(|| GpuIndex::new(&self.trace))
    }

    /// GPU metrics of every device over `range` (kernels clipped to it), or over the step
    /// window when `None` (tb_plugin's window), from the GPU profiles.
    pub fn gpus(&self, range: Option<(i64, i64)>) -> Vec<GpuMetrics> {
        self.gpu().metrics(range.unwrap_or_else(|| metrics_window_of(&self.trace, self.whole_steps())))
    }

    /// The memory series of the whole trace (built on first use).
    pub fn memory(&self) -> &Memory {
        self.memory.get_or_init(|| memory::analyze(&self.trace, None, 0))
    }

    /// What holds memory over the whole trace's steps: allocation lifetimes and categories,
    /// step peaks, leaks (built on first use).
    pub fn memory_held(&self) -> &Held {
        self.held.get_or_init(|| {
            let steps: Vec<(u64, i64, i64)> =
                self.whole_steps().steps.iter().map(|s| (s.number, s.cpu_start_ns, s.cpu_end_ns)).collect();
            Held::new(&self.trace, &steps)
        })
    }

    /// The kernel table over `range` (ns from the trace origin), or the whole trace (built
    /// on first use), with each row's achieved rates.
    pub fn kernels(&self, range: Option<(i64, i64)>) -> KernelTable {
        match range {
            Some(_) => kernels::kernel_table_with(&self.trace, range, Some(self.work()), self.kernel_classes()),
            None => self
                .kernels
                .get_or_init(|| kernels::kernel_table_with(&self.trace, None, Some(self.work()), self.kernel_classes()))
                .clone(),
        }
    }

    /// Every kernel name's class and what decided it (built on first use).
    pub fn kernel_classes(&self) -> &KernelClasses {
        self.classes.get_or_init(|| KernelClasses::new(&self.trace))
    }

    /// FLOPs and bytes per kernel, the GPU's peaks (built on first use).
    pub fn work(&self) -> &WorkIndex {
        self.work.get_or_init(|| WorkIndex::new(&self.trace, self.peaks.clone()))
    }

    /// MFU in % of each step of `steps` (a step analysis of this session's trace).
    pub fn step_mfu(&self, steps: &Steps) -> Vec<Option<f64>> {
        self.work().step_mfu(&self.trace, steps)
    }

    /// The steps over `range`, or the whole trace (built on first use).
    pub fn steps(&self, range: Option<(i64, i64)>) -> Steps {
        match range {
            Some(_) => steps::analyze(&self.trace, range),
            None => self.whole_steps().clone(),
        }
    }

    /// The whole trace's steps (built on first use).
    pub fn whole_steps(&self) -> &Steps {
        self.steps.get_or_init(|| steps::analyze(&self.trace, None))
    }

    /// The critical path of every step of the whole trace (built on first use, from the
    /// step graphs when they are kept).
    pub fn critical_paths(&self) -> &[StepPath] {
        self.critical.get_or_init(|| match self.graphs.get() {
            Some(graphs) => graphs.paths(),
            None => critical_path::analyze(&self.trace, self.whole_steps()),
        })
    }

    /// Builds and keeps the step graphs ahead of a what-if on a trace of up to
    /// [`KEEP_GRAPHS_SLICES`] slices (about 110 bytes of graph per slice: ~110 MB at most, a
    /// trace of ~350 MB): the page asks for the paths when its Steps tab, where the What if
    /// panel is, opens. After the load, so the load's memory budget never holds them.
    pub fn prepare_what_if(&self) {
        if self.trace.slices.len() <= KEEP_GRAPHS_SLICES {
            self.critical_graphs();
        }
    }

    /// The whole trace's step graphs for what-if answers (built on first use, then kept).
    pub fn critical_graphs(&self) -> &CriticalPaths {
        self.graphs.get_or_init(|| CriticalPaths::build(&self.trace, self.whole_steps()))
    }

    /// Why step `which` is slow, over the whole trace's steps.
    ///
    /// # Errors
    /// No complete step, or no step of that number.
    pub fn explain(&self, which: explain::Which) -> Result<explain::Explanation, String> {
        let mut e = explain::explain(&self.trace, self.whole_steps(), which)?;
        e.path = explain::PathContrast::of(&e, self.whole_steps(), self.critical_paths());
        e.phase = explain::PhaseDelta::of(&e, self.whole_steps(), &crate::analysis::phases::analyze(&self.trace, self.whole_steps(), self.kernel_classes()));
        Ok(e)
    }

    /// The cheatsheet findings, always over the whole trace (detected on first use).
    pub fn findings(&self) -> &[Finding] {
        self.findings.get_or_init(|| {
            finding::detect(finding::Inputs {
                trace: self.trace(),
                steps: self.whole_steps(),
                ops: self.op_table(&OpOptions::default()),
                kernels: self.kernels(None),
                gpus: self.gpus(None),
                gpu_index: self.gpu(),
                work: self.work(),
                classes: self.kernel_classes(),
            })
        })
    }
}
