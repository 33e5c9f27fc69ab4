//! A run's loads (docs/architecture.md#runs-in-the-browser): `RunStarted`, each file loaded
//! through the one load path with the run's id or whole by a parse worker (one per other core,
//! what the run keeps of the file coming back), `OpenRank` and `HoldRanks`. Which file loads
//! next, and where, is `ranks::loads`; this posts the replies and starts the sources.

use super::{load_error, Host, Loader, ParserEvent, Source};
use crate::engine::RankOpen;
use crate::intake::SILENT_MS;
use crate::ranks::loads::{Next, RunLoads};
use crate::run::summary::RankSummary;
use protocol::{FromWorker, Phase, RankInfo};

impl<H: Host> Loader<H> {
    /// Forgets the open run (a single trace is loaded next).
    pub(super) fn end_run(&mut self) {
        self.run = None;
        self.engine.end_run();
    }

    /// The manifest of run load `id` arrived, its entries resolved to sources (or why not).
    pub fn manifest_in(&mut self, id: u32, workers: Option<u32>, sources: Result<Vec<Source<H::File>>, String>) {
        if self.reading.is_none_or(|(r, _)| r != id) {
            return;
        }
        match sources {
            Ok(sources) => self.start_run(id, workers, sources),
            Err(message) => self.fail(id, "io", message),
        }
    }

    /// Starts run load `id` of `sources`: the first file now, the next when one is in.
    pub(super) fn start_run(&mut self, id: u32, workers: Option<u32>, sources: Vec<Source<H::File>>) {
        let names: Vec<String> = sources
            .iter()
            .map(|s| match s {
                Source::Url { name, .. } => name.clone(),
                Source::File(f) => H::file_name(f),
            })
            .collect();
        self.host.post(&FromWorker::RunStarted { id, names: names.clone() }, None);
        self.engine.begin_run(names);
        let mut run = RunLoads::new(id, workers, sources);
        let next = run.start();
        self.run = Some(run);
        self.start_sides();
        self.follow(next);
    }

    /// Parse workers for a run of several files, one per other core (or `?workers=N` but one):
    /// each loads whole the next file not yet started, while this worker loads the others.
    fn start_sides(&mut self) {
        let Some(run) = self.run.as_ref() else { return };
        let cores = run.workers.map_or_else(|| self.host.cores(), |w| w as usize);
        let n = cores.min(crate::load::MAX_PARTS).saturating_sub(1).min(run.sources().len().saturating_sub(1));
        if n == 0 {
            return;
        }
        self.stop_parsers();
        if let Err(e) = self.pool_for(n) {
            self.host.console_error(&format!("worker: cannot start parse workers for the run: {e}"));
            return;
        }
        self.pool.used = true;
        for slot in 0..n {
            self.next_side(slot);
        }
    }

    /// Sends parse worker `slot` the run's next file not yet started, if any.
    fn next_side(&mut self, slot: usize) {
        let Some(run) = self.run.as_mut() else { return };
        let id = run.id;
        let Some((index, source)) = run.side(slot) else { return };
        self.heard_side(slot);
        if let Err(e) = self.host.send_rank(slot, id, index, &source) {
            self.side_in(slot, id, Err(format!("parse worker {slot} could not be sent the file: {e}")), true);
        }
    }

    /// A parse worker's message, if it is about a run's file it loads whole; else the message
    /// back for the load's parts.
    pub(super) fn side_event(&mut self, slot: usize, event: ParserEvent<H::Buffer>) -> Option<ParserEvent<H::Buffer>> {
        let Some((id, index)) = self.run.as_ref().and_then(|r| Some((r.id, r.side_of(slot)?))) else { return Some(event) };
        self.heard_side(slot);
        match event {
            ParserEvent::Ranked { job, index: i, summary } if job == id && i == index => self.side_in(slot, id, Ok(*summary), false),
            ParserEvent::Failed { job, index: i, message } if job == id && i == index => self.side_in(slot, id, Err(message), false),
            ParserEvent::Progress { job, index: i, done } if job == id && i == index => {
                // A picked file's size is known here; a URL's only to the parse worker.
                let total_bytes = match self.run.as_ref().and_then(|r| r.sources().get(index)) {
                    Some(Source::File(file)) => Some(H::file_size(file)),
                    _ => None,
                };
                let (index, done_bytes) = (u32::try_from(index).unwrap_or(u32::MAX), done);
                self.host.post(&FromWorker::RankProgress { id, index, phase: Phase::Parsing, done_bytes, total_bytes }, None);
            }
            // Its file fails, and no other goes to it; the other parse workers go on.
            ParserEvent::Crashed(message) => {
                self.host.retire_parser(slot);
                self.side_in(slot, id, Err(format!("parse worker {slot} stopped: {message}")), true);
                return None;
            }
            ParserEvent::Ready => return Some(event),
            _ => {}
        }
        None
    }

    /// `RankLoaded` for run load `id` with a file's `info` (if the run knows the file), the
    /// load worker's memory and the parse worker that loaded it, if one did.
    pub(super) fn post_rank(&self, id: u32, info: Option<RankInfo>, parse_worker: Option<u32>) {
        let Some(mut info) = info else { return };
        let total = self.run.as_ref().map_or(0, |r| r.sources().len() as u32);
        info.memory_bytes = self.host.memory_bytes();
        info.parse_worker = parse_worker;
        self.host.post(&FromWorker::RankLoaded { id, total, info }, None);
    }

    /// Notes that parse worker `slot`, loading a run's file, was heard from now.
    fn heard_side(&mut self, slot: usize) {
        if self.side_heard.len() <= slot {
            self.side_heard.resize(slot + 1, 0.0);
        }
        self.side_heard[slot] = self.host.now_ms();
    }

    /// Fails the run's file of each parse worker silent for [`SILENT_MS`] (one that died
    /// without an `error` event, or hangs), as a load's parts are: no file goes to it again.
    pub(super) fn tick_sides(&mut self) {
        let now = self.host.now_ms();
        let Some(run) = self.run.as_ref() else { return };
        let id = run.id;
        let silent: Vec<usize> = (0..self.side_heard.len()).filter(|&s| run.side_of(s).is_some() && now - self.side_heard[s] > SILENT_MS).collect();
        for slot in silent {
            self.host.retire_parser(slot);
            let secs = SILENT_MS / 1000.0;
            self.side_in(slot, id, Err(format!("parse worker {slot} stopped answering: nothing from it for {secs} s")), true);
        }
    }

    /// Parse worker `slot`'s file of run `id` is in (or failed): `RankLoaded`, then its next
    /// file (none once the parse worker is `lost`), or the end of the run's loads.
    fn side_in(&mut self, slot: usize, id: u32, summary: Result<RankSummary, String>, lost: bool) {
        let Some(index) = self.run.as_ref().and_then(|r| r.side_of(slot)) else { return };
        let info = match summary {
            Ok(summary) => self.engine.keep_rank_summary(index, summary),
            Err(message) => self.engine.rank_failed(index, message),
        };
        self.post_rank(id, info, u32::try_from(slot).ok());
        let next = self.run.as_mut().and_then(|r| if lost { r.side_lost(slot) } else { r.side_ended(slot) }).unwrap_or(Next::Idle);
        self.next_side(slot);
        self.follow(next);
    }

    /// Does what the run's loads say comes next.
    pub(super) fn follow(&mut self, next: Next<Source<H::File>>) {
        match next {
            Next::Load(job, source) => {
                let workers = self.run.as_ref().and_then(|r| r.workers);
                // Beside the parse workers' whole files, this worker's own are parsed here alone.
                if self.run.as_ref().is_some_and(|r| r.side_loads()) {
                    self.begin_here(job.id, Some(1));
                } else {
                    self.begin(job.id, workers);
                }
                match source {
                    Source::Url { url, name } => self.host.fetch(job.id, url, name),
                    Source::File(file) => self.host.read(job.id, file),
                }
            }
            Next::RunLoaded => {
                let Some((id, workers)) = self.run.as_ref().map(|r| (r.id, r.workers)) else { return };
                // The parse workers that loaded files go, fresh ones come for the next load.
                if self.pool.used {
                    self.terminate_pool();
                    self.workers = workers;
                    self.warm();
                }
                match self.engine.finish_run() {
                    Some(summary) => self.post_loaded(id, summary),
                    // Every file loaded here failed: the first a parse worker loaded opens here.
                    None => match self.engine.run().and_then(|r| r.first_summarized()) {
                        Some(index) => {
                            let next = self.run.as_mut().map_or(Next::Idle, |run| run.reopen(id, index));
                            self.follow(next);
                        }
                        None => {
                            let error = load_error("io", "no file of the run could be loaded".into());
                            self.host.post(&FromWorker::Failed { id, error }, None);
                        }
                    },
                }
            }
            Next::Held { id, failed } => self.post_held(id, failed),
            Next::HeldThenLoad { id, failed, job, source } => {
                self.post_held(id, failed);
                self.follow(Next::Load(job, source));
            }
            Next::Idle => {}
        }
    }

    fn post_held(&self, id: u32, failed: Vec<(u32, String)>) {
        let held = self.engine.run().map(|r| r.held()).unwrap_or_default();
        self.host.post(&FromWorker::RanksHeld { id, held, failed }, None);
    }

    /// `OpenRank`: the kept model at once, else a reload of the rank's file as load `id`.
    pub(super) fn open_rank(&mut self, id: u32, rank: u32, workers: Option<u32>) {
        let Some(run) = self.run.as_mut() else {
            return self.fail(id, "io", "no run is open".into());
        };
        if run.loading() {
            return self.fail(id, "io", "the run is still loading".into());
        }
        run.workers = workers.or(run.workers);
        match self.engine.open_rank(rank) {
            RankOpen::Ready(summary) => {
                self.begin(id, workers);
                self.reading = None;
                self.post_loaded(id, *summary);
            }
            RankOpen::Reload(index) => {
                let next = self.run.as_mut().map_or(Next::Idle, |run| run.reopen(id, index));
                self.follow(next);
            }
            RankOpen::Unknown => self.fail(id, "io", format!("rank {rank} is not in the run")),
        }
    }

    /// `HoldRanks`: pins the ranks' models, reloading the dropped ones one after another.
    pub(super) fn hold_ranks(&mut self, id: u32, ranks: &[u32], workers: Option<u32>) {
        let refuse = |why: &str| ranks.iter().map(|&r| (r, why.to_owned())).collect();
        let Some(run) = self.run.as_mut() else {
            return self.post_held(id, refuse("no run is open"));
        };
        if run.loading() {
            return self.post_held(id, refuse("the run is still loading"));
        }
        run.workers = workers.or(run.workers);
        let hold = self.engine.hold_ranks(ranks);
        let next = self.run.as_mut().map_or(Next::Idle, |run| run.hold(id, hold.reload, hold.refused));
        self.follow(next);
    }
}
