//! The load worker's decisions, free of the web so they are tested natively: which load is
//! current (latest wins), what each `protocol::ToWorker` does, when bytes of a load are taken or
//! refused, when `Progress` is due, how a large input is planned into parts for parse workers
//! and joined (or read again as one stream), whether a URL is fetched in byte ranges for them
//! (`ranges`), how a gzip URL's JSON is cut into parts as the download worker inflates it
//! (`inflate`, `cutting`), which parse worker failed or went silent (`job`), and the order of a
//! run's loads; and the
//! messages and byte bookkeeping of the worker's transport: the app's messages (`inbox`), the
//! parse workers' (`parser`), a part fed in pieces (`feed`, `refill`), a file read with reads in
//! flight (`slices`), a URL's part read as its body arrives (`body`), a run's file loaded whole
//! by a parse worker (`rank`), a fetch's headers (`source`) and the download worker
//! (`download`). The wasm transport (`crate::web`)
//! implements [`Host`] (posting, sources, workers, the clock) and feeds events in; see
//! docs/architecture.md.
//!
//! Invariants: at most one load is being read or parsed; a new load drops the previous one,
//! whose bytes are then refused (which stops its source). Nothing here panics on input.

pub mod body;
mod bytes;
pub mod download;
pub mod feed;
mod cutting;
pub mod inflate;
mod host;
mod job;
pub mod inbox;
pub mod parser;
mod parts;
pub mod ranges;
pub mod rank;
pub mod refill;
mod runs;
pub mod slices;
pub mod source;

pub use host::{Attached, Host, ParserEvent, Source, Whole};

use crate::budget::Budget;
use crate::engine::{Engine, Target};
use crate::intake::{Incoming, LoadClock, Streaming};
use crate::ranks::loads::{Next, Purpose, RunLoads};
use job::Job;
use parts::Roster;
use protocol::{FromWorker, LoadError, Phase, ToWorker, TraceSummary, PROTOCOL_VERSION};

/// The first part of a job parsed here once every parse worker has its own: load id, input,
/// its stream and range.
type Here<F, B> = (u32, Whole<F, B>, crate::load::Stream, std::ops::Range<u64>);

/// The load worker's state: the engine (keeps the loaded trace), the load being read, received
/// or parsed in parts, the parse worker pool's bookkeeping and the open run.
pub struct Loader<H: Host> {
    /// The transport.
    pub host: H,
    engine: Engine,
    /// The load whose source is running: its id and `workers` count.
    reading: Option<(u32, Option<u32>)>,
    /// The last load's `workers` count, which `warm` boots parse workers for.
    workers: Option<u32>,
    /// The load whose bytes are parsed as they arrive (the default), and its clock.
    streaming: Option<(Streaming, LoadClock)>,
    /// The load whose bytes are arriving whole, for the parse workers (`?workers=N`, N > 1).
    pending: Option<Incoming>,
    /// The load whose parts the parse workers are parsing.
    job: Option<Job<Whole<H::File, H::Buffer>>>,
    here: Option<Here<H::File, H::Buffer>>,
    pool: Roster,
    /// The open run's loads, if a run is open.
    run: Option<RunLoads<Source<H::File>>>,
    /// Per parse worker loading a run's file: when it was last heard from, ms.
    side_heard: Vec<f64>,
    /// The summary last posted with `Loaded`, posted again by `SetStepMarker`.
    summary: Option<TraceSummary>,
    /// The load handed to a download worker and its URL, read again from it if its parts
    /// cannot be joined.
    pumped: Option<(u32, String)>,
}

impl<H: Host> Loader<H> {
    /// A loader over `host` with the tab's budget; posts `Ready`.
    pub fn new(host: H, budget: Budget) -> Self {
        host.post(&FromWorker::Ready { protocol_version: PROTOCOL_VERSION }, None);
        Self {
            host,
            engine: Engine::with_budget(budget),
            reading: None,
            workers: None,
            streaming: None,
            pending: None,
            job: None,
            here: None,
            pool: Roster::default(),
            run: None,
            side_heard: Vec::new(),
            summary: None,
            pumped: None,
        }
    }

    /// Dispatches one message from the page, with what came beside it.
    pub fn message(&mut self, msg: ToWorker, attached: Attached<H::File, H::Buffer>) {
        match msg {
            ToWorker::Fetch { id, url, name, workers } => {
                self.end_run();
                self.begin(id, workers);
                self.host.fetch(id, url, name);
            }
            ToWorker::Read { id, workers } => match attached {
                Attached::File(file) => self.read_whole(id, workers, Whole::File(file)),
                _ => self.fail(id, "protocol", "Read message without a File".into()),
            },
            ToWorker::Bytes { id, name, workers } => match attached {
                Attached::Buffer(buffer) => self.read_whole(id, workers, Whole::Bytes { name, buffer }),
                _ => self.fail(id, "protocol", "Bytes message without an ArrayBuffer".into()),
            },
            ToWorker::FetchRun { id, url, workers } => {
                self.end_run();
                self.begin(id, workers);
                self.host.fetch_manifest(id, workers, url);
            }
            ToWorker::ReadRun { id, workers } => match attached {
                Attached::Files(files) if !files.is_empty() => self.start_run(id, workers, files.into_iter().map(Source::File).collect()),
                _ => self.fail(id, "protocol", "ReadRun message without Files".into()),
            },
            ToWorker::OpenRank { id, rank, workers } => self.open_rank(id, rank, workers),
            ToWorker::HoldRanks { id, ranks, workers } => self.hold_ranks(id, &ranks, workers),
            ToWorker::SetStepMarker { id, marker } => self.mark_steps(id, marker),
            ToWorker::SetPeaks { id, spec } => self.set_peaks(id, spec.as_deref()),
            ToWorker::Cancel { id } => self.cancel(id),
            ToWorker::Query { id, query } => match self.engine.query(&query) {
                Ok((answer, words)) => self.host.post(&FromWorker::Answer { id, answer: Box::new(answer) }, words.as_deref()),
                Err(message) => self.host.post(&FromWorker::QueryFailed { id, message }, None),
            },
        }
    }

    /// `Cancel`: drops load `id` if it is being read, received or parsed.
    fn cancel(&mut self, id: u32) {
        // The run's own load: its parse workers' files go too.
        let sides = self.run.as_ref().is_some_and(|r| r.id == id && r.side_loads());
        if let Some(run) = self.run.as_mut() {
            run.cancel(id);
        }
        if self.reading.is_some_and(|(r, _)| r == id) {
            self.reading = None;
        }
        let receiving = self.pending.as_ref().is_some_and(|p| p.id == id);
        if sides || receiving || self.job.as_ref().is_some_and(|j| j.id() == id) {
            self.pending = None;
            self.stop_parsers();
        }
    }

    /// Starts load `id` (its source follows), dropping the one being read or parsed.
    fn begin(&mut self, id: u32, workers: Option<u32>) {
        self.begin_here(id, workers);
        self.stop_parsers();
    }

    /// Starts load `id` here, leaving the parse workers to what they do (a run's side loads).
    fn begin_here(&mut self, id: u32, workers: Option<u32>) {
        self.reading = Some((id, workers));
        self.workers = workers;
        self.streaming = None;
        self.pending = None;
    }

    /// Load `id` ended: a run's file is kept (or noted as failed) and the run's next load
    /// starts; a rank reloaded for `OpenRank` is kept again; otherwise `Loaded` or `Failed`.
    fn loaded(&mut self, id: u32, reply: Result<TraceSummary, LoadError>, started_ms: f64) {
        let now = self.host.now_ms();
        let reply = reply.map(|mut summary| {
            summary.parse_ms = now - started_ms;
            summary
        });
        self.warm();
        let Some(job) = self.run.as_ref().and_then(|r| r.job(id)) else {
            return match reply {
                Ok(summary) => self.post_loaded(id, summary),
                Err(error) => self.host.post(&FromWorker::Failed { id, error }, None),
            };
        };
        let error = reply.as_ref().err().map(|e| e.message.clone());
        match (job.purpose, reply) {
            (Purpose::Run, reply) => {
                let info = match reply {
                    Ok(summary) => self.engine.keep_rank(job.index, summary),
                    Err(error) => self.engine.rank_failed(job.index, error.message),
                };
                self.post_rank(id, info, None);
            }
            (Purpose::Reopen, Ok(summary)) => {
                self.engine.keep_rank(job.index, summary.clone());
                self.post_loaded(id, summary);
            }
            (Purpose::Reopen, Err(error)) => self.host.post(&FromWorker::Failed { id, error }, None),
            // The engine kept a held rank's model as it completed the load (`Target::Held`).
            (Purpose::Hold, _) => {}
        }
        let next = self.run.as_mut().and_then(|r| r.ended(id, error)).unwrap_or(Next::Idle);
        self.follow(next);
    }

    /// Posts `Loaded` for the current trace, with its layout (tiles warmed first).
    fn post_loaded(&mut self, id: u32, summary: TraceSummary) {
        let layout = self.engine.layout().unwrap_or_default();
        self.engine.warm_tiles();
        let steps = self.engine.step_marking();
        let msg = FromWorker::Loaded { id, summary: Box::new(summary.clone()), layout: Box::new(layout), steps };
        self.summary = Some(summary);
        self.host.post(&msg, None);
    }

    /// `SetStepMarker`: re-marks the loaded trace's steps and posts `Loaded` again.
    fn mark_steps(&mut self, id: u32, marker: Option<String>) {
        let summary = self.summary.clone().filter(|_| self.engine.session().is_some());
        match (summary, self.engine.mark_steps(marker)) {
            (Some(summary), Ok(())) => self.post_loaded(id, summary),
            _ => self.host.post(&FromWorker::Failed { id, error: load_error("io", "no trace is loaded".into()) }, None),
        }
    }

    /// `SetPeaks`: measures the loaded trace against the given peaks and posts `Loaded`
    /// again (`Failed` with the reason when the spec does not parse).
    fn set_peaks(&mut self, id: u32, spec: Option<&str>) {
        let summary = self.summary.clone().filter(|_| self.engine.session().is_some());
        let error = match (summary, self.engine.set_peaks(spec)) {
            (Some(summary), Ok(())) => return self.post_loaded(id, summary),
            (None, _) => load_error("io", "no trace is loaded".into()),
            (Some(_), Err(why)) => load_error("peaks", why),
        };
        self.host.post(&FromWorker::Failed { id, error }, None);
    }

    /// Where load `id` goes: a held rank of the open run, or the current trace.
    fn target_of(&self, id: u32) -> Target {
        match self.run.as_ref().and_then(|r| r.job(id)) {
            Some(job) if job.purpose == Purpose::Hold => Target::Held(job.index),
            _ => Target::Current,
        }
    }

    /// The run's load `id` if it is one, with the file index progress reports name (not
    /// for a reopened rank, which loads as a trace of its own).
    fn rank_of(&self, id: u32) -> Option<u32> {
        let job = self.run.as_ref()?.job(id)?;
        (job.purpose != Purpose::Reopen).then_some(job.index as u32)
    }

    fn progress(&self, id: u32, phase: Phase, done_bytes: u64, total_bytes: Option<u64>) {
        self.host.post(&progress_msg(id, self.rank_of(id), phase, done_bytes, total_bytes), None);
    }

    fn fail(&mut self, id: u32, kind: &str, message: String) {
        self.loaded(id, Err(load_error(kind, message)), 0.0);
    }
}

/// `Progress` of load `id`, or `RankProgress` of file `rank` of run load `id`.
fn progress_msg(id: u32, rank: Option<u32>, phase: Phase, done_bytes: u64, total_bytes: Option<u64>) -> FromWorker {
    match rank {
        Some(index) => FromWorker::RankProgress { id, index, phase, done_bytes, total_bytes },
        None => FromWorker::Progress { id, phase, done_bytes, total_bytes },
    }
}

/// A load error of `kind` without a position.
fn load_error(kind: &str, message: String) -> LoadError {
    LoadError { kind: kind.into(), message, offset: None, line: None, column: None }
}
