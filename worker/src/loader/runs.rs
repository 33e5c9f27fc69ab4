//! A run's loads (docs/architecture.md#runs-in-the-browser): `RunStarted`, each file loaded
//! through the one load path with the run's id, `OpenRank` and `HoldRanks`. Which file loads
//! next is `ranks::loads`; this posts the replies and starts the sources.

use super::{load_error, Host, Loader, Source};
use crate::engine::RankOpen;
use crate::ranks::loads::{Next, RunLoads};
use protocol::FromWorker;

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
        self.follow(next);
    }

    /// Does what the run's loads say comes next.
    pub(super) fn follow(&mut self, next: Next<Source<H::File>>) {
        match next {
            Next::Load(job, source) => {
                let workers = self.run.as_ref().and_then(|r| r.workers);
                self.begin(job.id, workers);
                match source {
                    Source::Url { url, name } => self.host.fetch(job.id, url, name),
                    Source::File(file) => self.host.read(job.id, file),
                }
            }
            Next::RunLoaded => {
                let Some(id) = self.run.as_ref().map(|r| r.id) else { return };
                match self.engine.finish_run() {
                    Some(summary) => self.post_loaded(id, summary),
                    None => {
                        let error = load_error("io", "no file of the run could be loaded".into());
                        self.host.post(&FromWorker::Failed { id, error }, None);
                    }
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
