//! Request handling over the protocol types; knows nothing about transports or clocks.
//!
//! The wasm worker and the CLI both call [`Engine::load`]; they time it themselves.
//!
//! Each loaded trace is a [`Session`] (model, index, lazily built analyses). The comparison
//! view: [`Query::KeepAsBaseline`] keeps the current session as the baseline (the same
//! `Arc`, not a copy); a later load replaces only the current one, and [`Query::Compare`] diffs
//! baseline and current ([`crate::compare`]). Layout, tiles and hover queries name the trace
//! they address ([`TraceRef`]): the stacked compare view draws the baseline from its own
//! session's index.

use crate::analysis::explain::Which;
use crate::analysis::ops::OpOptions;
use crate::answer::comparison::{comparison_data, Names};
use crate::budget::Budget;
use crate::compare::{compare, CompareOptions};
use crate::index::search;
use crate::load::LoadFailure;
use crate::model::Trace;
use crate::ranks::{Hold, Opened, RunState};
use crate::session::Session;
use crate::answer;
use crate::analysis::steps;
use crate::analysis::device::device_properties;
use crate::analysis::work::peaks::Peaks;
use protocol::{
    Answer, ComparisonData, Layout, LoadError, MarkerCandidate, Query, StepMarking, TraceRef, TraceSummary,
};
use std::sync::{Arc, Weak};

mod loading;

pub use loading::{Joining, Loading, Prepared};

/// Buckets of [`Engine::warm_tiles`]: enough work for the JIT to optimize the tile code.
const WARM_BUCKETS: i64 = 256;

/// Step marker candidates offered at most (the page's picker).
const MARKER_CANDIDATES: usize = 20;

/// Holds the loaded trace, the comparison baseline and the last search, between requests.
#[derive(Default)]
pub struct Engine {
    /// The loaded trace.
    current: Option<Arc<Session>>,
    /// The trace kept as the comparison baseline; survives loads.
    baseline: Option<Arc<Session>>,
    /// The last comparison answered, for its `by_shape` (dropped by any load or baseline change).
    comparison: Option<Box<ComparisonData>>,
    /// The last search text and its compiled query per trace searched (tiles and search steps
    /// reuse them; the stacked ranks view searches every rank shown).
    searches: Vec<Compiled>,
    /// The distributed run being loaded or loaded; survives the loads of its ranks.
    run: Option<RunState>,
    /// The step marker given to the traces loaded next ([`Trace::step_marker`]).
    step_marker: Option<String>,
    /// The most JSON a load may hold (the browser's [`Budget::TAB`]; unlimited natively).
    budget: Budget,
}

/// What [`Engine::open_rank`] did.
pub enum RankOpen {
    /// The rank's model was kept: it is now the current trace, with this summary.
    Ready(Box<TraceSummary>),
    /// Its model was dropped: load file `index` of the run again, then [`Engine::keep_rank`].
    Reload(usize),
    /// No file of the open run (or no run) has that rank.
    Unknown,
}

/// Where a load goes once parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// It becomes the current trace (replacing it).
    Current,
    /// It is kept as file N of the open run (`HoldRanks`); the current trace stays.
    Held(usize),
}

/// A search text compiled over one trace, which it holds weakly (a dropped rank frees it).
struct Compiled {
    session: Weak<Session>,
    text: String,
    query: search::Query,
}

/// Compiled searches kept at most: the current trace, the baseline and the held ranks.
const SEARCHES: usize = protocol::MAX_HELD_RANKS + 2;

/// An answer and, for tiles, the rect words that travel beside it.
pub type Reply = (Answer, Option<Vec<u32>>);

impl Engine {
    /// A new engine with no trace loaded and no size limit (native memory).
    pub fn new() -> Self {
        Self::default()
    }

    /// A new engine whose loads refuse JSON over `budget` (the wasm worker: [`Budget::TAB`]),
    /// with [`crate::budget::TooBig`]'s sentence as the error (kind `too-big`).
    pub fn with_budget(budget: Budget) -> Self {
        Self { budget, ..Self::default() }
    }

    /// The most JSON a load may hold.
    pub fn budget(&self) -> Budget {
        self.budget
    }

    /// The loaded trace, if any.
    pub fn trace(&self) -> Option<&Trace> {
        self.current.as_deref().map(Session::trace)
    }

    /// The loaded trace's session, if any.
    pub fn session(&self) -> Option<&Arc<Session>> {
        self.current.as_ref()
    }

    /// Marks steps by the annotation `marker` instead of `ProfilerStep#N` in the traces loaded
    /// next (`None`: `ProfilerStep#N`).
    pub fn set_step_marker(&mut self, marker: Option<String>) {
        self.step_marker = marker;
    }

    /// Marks steps on the loaded trace by the annotation `marker` (`None`: `ProfilerStep#N`),
    /// replacing its session so every step-dependent answer is recomputed. A session shared
    /// with the baseline or a run is copied, so those keep their steps.
    ///
    /// # Errors
    /// No trace is loaded.
    pub fn mark_steps(&mut self, marker: Option<String>) -> Result<(), String> {
        let current = self.current.take().ok_or("no trace is loaded")?;
        let session = Arc::try_unwrap(current)
            .unwrap_or_else(|shared| Session::new(shared.name(), shared.trace().clone()));
        self.current = Some(Arc::new(session.with_step_marker(marker)));
        self.comparison = None;
        Ok(())
    }

    /// Measures the loaded trace against the GPU peaks `spec` over the table's for its GPU
    /// (`Peaks::with_overrides`; `None`: the table's alone), replacing its session so every
    /// peak-dependent answer is recomputed. A shared session is copied, as in
    /// [`Engine::mark_steps`].
    ///
    /// # Errors
    /// No trace is loaded, or `spec` does not parse (the session is kept as it was).
    pub fn set_peaks(&mut self, spec: Option<&str>) -> Result<(), String> {
        let current = self.current.as_ref().ok_or("no trace is loaded")?;
        let given = match spec {
            Some(spec) => {
                let device = device_properties(current.trace()).into_iter().find(|d| !d.name.is_empty());
                let base = device.as_ref().and_then(crate::analysis::work::device_peaks);
                Some(Peaks::with_overrides(base.as_ref(), spec)?)
            }
            None => None,
        };
        let current = self.current.take().ok_or("no trace is loaded")?;
        let session = Arc::try_unwrap(current).unwrap_or_else(|shared| {
            Session::new(shared.name(), shared.trace().clone())
        });
        self.current = Some(Arc::new(session.with_peaks(given)));
        self.comparison = None;
        Ok(())
    }

    /// How the loaded trace's steps are marked, with the marker candidates when it has no
    /// `ProfilerStep#N` (sent with `Loaded`).
    pub fn step_marking(&self) -> StepMarking {
        let Some(trace) = self.trace() else {
            return StepMarking::default();
        };
        let marker = trace.step_marker.clone();
        let candidates = if marker.is_none() && !steps::profiler_steps(trace).is_empty() {
            Vec::new()
        } else {
            steps::marker_candidates(trace, MARKER_CANDIDATES)
                .into_iter()
                .map(|(name, count)| MarkerCandidate { name, count })
                .collect()
        };
        StepMarking { marker, candidates }
    }

    /// The timeline's layout of the loaded trace (sent with `Loaded`).
    pub fn layout(&self) -> Option<Layout> {
        self.trace().map(answer::layout::layout)
    }

    /// Computes the loaded trace's tiles at [`WARM_BUCKETS`] buckets and drops them. In a wasm
    /// worker the first run of the tile code is not yet optimized by the JIT (on a 100 MB trace
    /// the first full view took 85-95 ms, the next 7-11 ms); running it once at the end of the
    /// load, at a coarse resolution (15-18 ms), makes the first view's tiles fast.
    pub fn warm_tiles(&self) {
        let Some(session) = self.current.as_deref() else {
            return;
        };
        let trace = session.trace();
        let lanes: Vec<u32> = (0..trace.lanes.len() as u32).collect();
        let resolution_ns = (trace.end_ns / WARM_BUCKETS).max(1);
        answer::tiles::tiles(trace, session.index(), &lanes, (0, trace.end_ns), resolution_ns, None);
    }

    /// Starts a distributed run of the files `names` (loaded next, one by one, with
    /// [`Engine::prepare`] / [`Engine::complete`] and [`Engine::keep_rank`]); drops any other run.
    pub fn begin_run(&mut self, names: Vec<String>) {
        self.run = Some(RunState::new(names));
    }

    /// Forgets the open run (a single trace is loaded next).
    pub fn end_run(&mut self) {
        self.run = None;
    }

    /// Rank `rank`'s kept model, if the open run holds it.
    pub fn session_of_rank(&self, rank: u32) -> Option<Arc<Session>> {
        self.run.as_ref()?.session_of(rank)
    }

    /// The open run, if any.
    pub fn run(&self) -> Option<&RunState> {
        self.run.as_ref()
    }

    /// Keeps the trace just loaded as file `index` of the run (its rank summary, its model
    /// among the kept ones); `summary` is what its `Loaded` carried.
    pub fn keep_rank(&mut self, index: usize, summary: TraceSummary) -> Option<protocol::RankInfo> {
        let session = self.current.clone()?;
        Some(self.run.as_mut()?.keep(index, session, summary))
    }

    /// Keeps what the run needs of file `index`, loaded whole by a parse worker.
    pub fn keep_rank_summary(&mut self, index: usize, summary: crate::run::summary::RankSummary) -> Option<protocol::RankInfo> {
        Some(self.run.as_mut()?.keep_summary(index, summary))
    }

    /// File `index` of the run could not be loaded.
    pub fn rank_failed(&mut self, index: usize, message: String) -> Option<protocol::RankInfo> {
        Some(self.run.as_mut()?.failed(index, message))
    }

    /// Every file of the run is in: analyses the run, and makes the most recently loaded rank
    /// the current trace if the last load failed. Returns that trace's summary (`None`: no file
    /// of the run loaded).
    pub fn finish_run(&mut self) -> Option<TraceSummary> {
        let run = self.run.as_mut()?;
        run.finish();
        let (session, summary) = run.latest()?;
        self.set_current(session);
        Some(summary)
    }

    /// Pins the models of `ranks` of the open run for the stacked view ([`RunState::hold`]);
    /// with no run open, every rank is refused.
    pub fn hold_ranks(&mut self, ranks: &[u32]) -> Hold {
        match self.run.as_mut() {
            Some(run) => run.hold(ranks),
            None => Hold { reload: Vec::new(), refused: ranks.iter().map(|&r| (r, "no run is open".to_owned())).collect() },
        }
    }

    /// Makes rank `rank` of the open run the current trace, if its model is kept.
    pub fn open_rank(&mut self, rank: u32) -> RankOpen {
        match self.run.as_mut().and_then(|r| r.open(rank)) {
            Some(Opened::Kept(session, summary)) => {
                self.set_current(session);
                RankOpen::Ready(summary)
            }
            Some(Opened::Reload(index)) => RankOpen::Reload(index),
            None => RankOpen::Unknown,
        }
    }

    /// Replaces the current trace by `session` (a kept rank), dropping what belonged to the
    /// previous one.
    fn set_current(&mut self, session: Arc<Session>) {
        if self.current.as_ref().is_some_and(|c| Arc::ptr_eq(c, &session)) {
            return;
        }
        self.current = Some(session);
        self.comparison = None;
    }

    /// Answers `q` over the loaded trace (or the trace `q` names).
    ///
    /// # Errors
    /// A message when no trace is loaded (or the one named is not held).
    pub fn query(&mut self, q: &Query) -> Result<Reply, String> {
        if let Some(answer) = self.baseline_query(q) {
            return answer.map(|a| (a, None));
        }
        if let Some(reply) = self.timeline_query(q) {
            return reply;
        }
        if matches!(q, Query::Run) {
            let data = self.run.as_ref().ok_or("no run is open")?.data().ok_or("the run is still loading")?;
            return Ok((Answer::Run(Box::new(data.clone())), None));
        }
        let Some(session) = self.current.clone() else {
            return Err("no trace is loaded".into());
        };
        let trace = session.trace();
        let answer = match q {
            Query::Ops { by_shape, range_ns } => {
                let opts = OpOptions {
                    by_shape: *by_shape,
                    range: *range_ns,
                };
                Answer::Table(answer::tables::ops(&session.op_table(&opts), *by_shape))
            }
            Query::Kernels { range_ns } => Answer::Table(answer::tables::kernels(&session.kernels(*range_ns))),
            Query::Steps { workload } => {
                let steps = session.steps(None);
                let phases = crate::analysis::phases::analyze(trace, &steps, session.kernel_classes());
                Answer::Table(answer::tables::steps(&steps, &session.step_mfu(&steps), &phases, *workload))
            }
            Query::Resolve { key } => Answer::Details(
                answer::details::resolve(trace, key).and_then(|id| with_work(&session, id)),
            ),
            Query::Roofline => Answer::Roofline(Box::new(answer::roofline::roofline(&session))),
            Query::Counters {
                start_ns,
                end_ns,
                buckets,
            } => Answer::Counters(answer::counters::counters(
                session.gpu(),
                session.memory(),
                (*start_ns, *end_ns),
                *buckets,
            )),
            Query::Findings => Answer::Findings(answer::findings::wire(trace, session.findings())),
            Query::Histogram { name, bins } => {
                Answer::Histogram(answer::counters::histogram(trace, name, *bins))
            }
            Query::ExplainStep { step } => {
                let which = step.map_or(Which::Slowest, Which::Number);
                Answer::Explanation(Box::new(answer::explain::wire(trace, &session.explain(which)?)))
            }
            Query::Report { viewer_url } => Answer::Report(crate::report::html::export(&session, viewer_url.as_deref())),
            Query::CriticalPath => Answer::CriticalPath(Box::new(answer::critical_path::paths(&session))),
            Query::PathSegments { step, start_ns, end_ns } => {
                Answer::PathSegments(Box::new(answer::critical_path::segments(&session, *step, *start_ns, *end_ns)))
            }
            Query::WhatIf { edits } => Answer::WhatIf(Box::new(answer::critical_path::what_if(&session, edits))),
            Query::Glance => Answer::Glance(Box::new(answer::glance::glance(&session))),
            Query::Modules { range_ns } => Answer::Modules(Box::new(answer::modules::tree(trace, *range_ns))),
            Query::CallTree { range_ns, baseline } => {
                // A range is in the current trace's time: the baseline has no such range.
                let base = self.baseline.as_deref().filter(|_| *baseline && range_ns.is_none()).map(Session::trace);
                Answer::CallTree(Box::new(answer::call_tree::flame(trace, *range_ns, base)))
            }
            Query::Memory { device, buckets, top } => Answer::Memory(Box::new(answer::memory::chart(
                trace,
                session.memory(),
                session.memory_held(),
                device.as_deref(),
                trace.end_ns,
                *buckets,
                *top as usize,
            ))),
            Query::MemoryLive { device, at_ns, top } => Answer::MemoryLive(Box::new(answer::memory::live_at(
                trace,
                session.memory(),
                session.memory_held(),
                device,
                *at_ns,
                *top as usize,
            ))),
            _ => return Err("not a trace query".into()),
        };
        Ok((answer, None))
    }

    /// The session `which` names.
    fn session_of(&self, which: TraceRef) -> Result<Arc<Session>, String> {
        match which {
            TraceRef::Current => self.current.clone().ok_or_else(|| "no trace is loaded".into()),
            TraceRef::Baseline => self.baseline.clone().ok_or_else(|| "no baseline is kept".into()),
            TraceRef::Rank(r) => self
                .run
                .as_ref()
                .ok_or("no run is open")?
                .session_of(r)
                .ok_or_else(|| format!("rank {r}'s model is not held (HoldRanks first)")),
        }
    }

    /// Answers the queries that name their trace (layout, tiles, hover, details, search,
    /// collective); `None` for any other.
    fn timeline_query(&mut self, q: &Query) -> Option<Result<Reply, String>> {
        let which = match q {
            Query::Layout { trace, .. }
            | Query::Tiles { trace, .. }
            | Query::Hover { trace, .. }
            | Query::Details { trace, .. }
            | Query::Search { trace, .. }
            | Query::Collective { trace, .. } => *trace,
            _ => return None,
        };
        let session = match self.session_of(which) {
            Ok(s) => s,
            Err(e) => return Some(Err(e)),
        };
        let (trace, index) = (session.trace(), session.index());
        let answer = match q {
            Query::Layout { align, .. } => match (which, self.run.as_ref()) {
                (TraceRef::Rank(rank), Some(run)) => Answer::Layout(answer::layout::rank(trace, run, rank, *align)),
                _ => {
                    let other = match which {
                        TraceRef::Baseline => self.trace(),
                        _ => self.baseline.as_deref().map(Session::trace),
                    };
                    Answer::Layout(answer::layout::aligned(trace, index, other, *align))
                }
            },
            Query::Hover { slice, .. } => Answer::Details(answer::details::slice_details(trace, index, *slice)),
            // Hover skips the work: its first call builds the work index.
            Query::Details { slice, .. } => Answer::Details(with_work(&session, *slice)),
            Query::Search { text, from_slice, from_ns, forward, .. } => {
                let query = compile(&mut self.searches, &session, text);
                let cursor = from_slice.map_or(search::Cursor::Time(*from_ns), search::Cursor::Slice);
                Answer::Search(answer::search::step(trace, query, text, cursor, *forward))
            }
            Query::Collective { slice, .. } => {
                let Some(rank) = self.rank_of(which, &session) else {
                    return Some(Err("the trace is not a rank of the open run".into()));
                };
                let found = self.run.as_ref().and_then(|run| answer::collective::instance(trace, run, rank, *slice));
                Answer::Collective(found)
            }
            Query::Tiles { lanes, start_ns, end_ns, resolution_ns, search, .. } => {
                let text = search.as_deref().filter(|t| !t.is_empty());
                let compiled = text.map(|text| compile(&mut self.searches, &session, text));
                let (set, words) =
                    answer::tiles::tiles(trace, index, lanes, (*start_ns, *end_ns), *resolution_ns, compiled);
                return Some(Ok((Answer::Tiles(set), Some(words))));
            }
            _ => return None,
        };
        Some(Ok((answer, None)))
    }

    /// The rank of the run that `which` (its `session`) is: named, or the current trace when
    /// it is a rank's kept model.
    fn rank_of(&self, which: TraceRef, session: &Arc<Session>) -> Option<u32> {
        match which {
            TraceRef::Rank(r) => Some(r),
            TraceRef::Current => self.run.as_ref()?.rank_of_session(session),
            TraceRef::Baseline => None,
        }
    }

    /// Answers the baseline queries; `None` for any other query.
    fn baseline_query(&mut self, q: &Query) -> Option<Result<Answer, String>> {
        let answer = match q {
            Query::KeepAsBaseline => {
                let Some(session) = self.current.clone() else {
                    return Some(Err("no trace is loaded".into()));
                };
                self.comparison = None;
                let name = session.name().to_owned();
                self.baseline = Some(session);
                Ok(Answer::Baseline(Some(name)))
            }
            Query::ClearBaseline => {
                self.comparison = None;
                self.baseline = None;
                Ok(Answer::Baseline(None))
            }
            Query::Compare { by_shape } => self.compare(*by_shape).map(Answer::Comparison),
            _ => return None,
        };
        Some(answer)
    }

    /// The comparison of the baseline with the loaded trace (cached for the last `by_shape`).
    fn compare(&mut self, by_shape: bool) -> Result<Box<ComparisonData>, String> {
        if let Some(c) = self.comparison.as_ref().filter(|c| c.by_shape == by_shape) {
            return Ok(c.clone());
        }
        let Some(cand) = self.current.as_deref() else {
            return Err("no trace is loaded".into());
        };
        let Some(base) = self.baseline.as_deref() else {
            return Err("no baseline is kept".into());
        };
        let mut c = compare(base, cand, &CompareOptions { by_shape });
        // Rows in `kinetoscope diff`'s default order: largest |Δ| first, unchanged rows last.
        crate::compare::order(&mut c, (None, None));
        let names = Names {
            base: base.name(),
            cand: cand.name(),
        };
        let data = Box::new(comparison_data(&c, names, base.findings(), cand.findings()));
        self.comparison = Some(data.clone());
        Ok(data)
    }
}

/// The details of slice `id` of `session` with its work (a kernel with known FLOPs or bytes).
fn with_work(session: &Session, id: u32) -> Option<protocol::SliceDetails> {
    let mut d = answer::details::slice_details(session.trace(), session.index(), id)?;
    d.work = answer::roofline::slice_work(session, id);
    Some(d)
}

/// The compiled query for `text` over `session`, reusing a cached one (the cache keeps the last
/// [`SEARCHES`] traces searched, and forgets dropped ones).
fn compile<'a>(cache: &'a mut Vec<Compiled>, session: &Arc<Session>, text: &str) -> &'a search::Query {
    cache.retain(|c| c.session.strong_count() > 0);
    let at = match cache.iter().position(|c| c.session.upgrade().is_some_and(|s| Arc::ptr_eq(&s, session))) {
        Some(i) if cache.get(i).is_some_and(|c| c.text == text) => i,
        found => {
            if let Some(i) = found {
                cache.remove(i);
            }
            if cache.len() >= SEARCHES {
                cache.remove(0);
            }
            let query = search::Query::new(session.trace(), session.index(), text);
            cache.push(Compiled { session: Arc::downgrade(session), text: text.to_owned(), query });
            cache.len() - 1
        }
    };
    // `at` indexes `cache`: found above or just pushed.
    &cache[at].query
}

pub(crate) fn error(kind: &str, message: String, loc: Option<&crate::json::Location>) -> LoadError {
    LoadError {
        kind: kind.into(),
        message,
        offset: loc.map(|l| l.offset),
        line: loc.map(|l| l.line),
        column: loc.map(|l| l.column),
    }
}

pub(crate) fn failure(f: &LoadFailure, gzip: bool) -> LoadError {
    let mut message = f.to_string();
    if gzip && f.location.is_some() {
        message.push_str(" (offsets count decompressed bytes)");
    }
    error(f.kind, message, f.location.as_ref())
}
