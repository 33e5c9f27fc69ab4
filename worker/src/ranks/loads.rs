//! The order of the loads a run makes in the page's worker: its files in order, a dropped rank
//! reloaded for `OpenRank`, the ranks a `HoldRanks` needs. One load runs at a time on the
//! worker's load path; during the run's first loads, each parse worker also loads whole files
//! (`side`: what the run keeps of them comes back, not their models), each taking the next file
//! not yet started. This state machine says which file loads next, where, for what, and what a
//! finished load means. The load worker (`crate::loader`) only starts the sources and posts the
//! replies; this file is natively tested.
//!
//! ```text
//! start ─▶ Load(file 0) ─ended─▶ Load(next file) … ─ended─▶ RunLoaded (once no side loads)
//! side(slot) ─▶ (next file) ─side_ended─▶ side(slot) …
//! open  ─▶ Load(file i, Reopen)  ─ended─▶ Reopened
//! hold  ─▶ Load(file i, Hold) ─ended─▶ Load(file j, Hold) … ─▶ Held { held-or-failed }
//! ```
//!
//! A reopen or a new hold supersedes a hold in progress: the superseded hold ends with its
//! remaining ranks failed ("superseded"), so its `RanksHeld` is always posted.

use std::collections::VecDeque;

/// Why a file of the run is being loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The run's first load of every file.
    Run,
    /// `OpenRank` of a rank whose model was dropped: it becomes the current trace.
    Reopen,
    /// `HoldRanks`: kept for the stacked view; the current trace stays.
    Hold,
}

/// One load: its id (the request's), the file, why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// The load id replies carry.
    pub id: u32,
    /// File index in the run.
    pub index: usize,
    /// Why.
    pub purpose: Purpose,
}

/// What to do after an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next<S> {
    /// Start this load from this source.
    Load(Job, S),
    /// Every file of the run was loaded once: finish the run analysis.
    RunLoaded,
    /// Hold `id` is done; these ranks failed to load (with why).
    Held { id: u32, failed: Vec<(u32, String)> },
    /// A superseded hold ended (post its `RanksHeld`), then start this load.
    HeldThenLoad { id: u32, failed: Vec<(u32, String)>, job: Job, source: S },
    /// Nothing to do.
    Idle,
}

/// A hold in progress.
#[derive(Clone, Debug)]
struct HoldJob {
    id: u32,
    /// (rank, file index) still to load.
    queue: VecDeque<(u32, usize)>,
    failed: Vec<(u32, String)>,
}

/// The loads of one open run.
#[derive(Clone, Debug)]
pub struct RunLoads<S> {
    /// The run load's id.
    pub id: u32,
    /// Parse worker cap for its loads.
    pub workers: Option<u32>,
    sources: Vec<S>,
    /// Per file: started by the run's first loads (here or on a parse worker).
    started: Vec<bool>,
    /// Per parse worker: the file it is loading whole, if any.
    sides: Vec<Option<usize>>,
    /// Parse workers that died: no file goes to them any more.
    gone: Vec<usize>,
    active: Option<Job>,
    /// The rank the active hold load is for.
    holding: Option<u32>,
    hold: Option<HoldJob>,
}

impl<S: Clone> RunLoads<S> {
    /// A run of `sources` started by load `id`; [`RunLoads::start`] gives its first load.
    pub fn new(id: u32, workers: Option<u32>, sources: Vec<S>) -> Self {
        let started = vec![false; sources.len()];
        Self { id, workers, sources, started, sides: Vec::new(), gone: Vec::new(), active: None, holding: None, hold: None }
    }

    /// The files, in run order.
    pub fn sources(&self) -> &[S] {
        &self.sources
    }

    /// The first file's load ([`Next::RunLoaded`] at once for a run of no file).
    pub fn start(&mut self) -> Next<S> {
        self.next_run_load()
    }

    /// True while the run's first loads are in progress.
    pub fn loading(&self) -> bool {
        self.active.is_some_and(|j| j.purpose == Purpose::Run) || self.side_loads()
    }

    /// During the run's first loads, the next file not yet started for parse worker `slot` to
    /// load whole, if any (and the slot is free).
    pub fn side(&mut self, slot: usize) -> Option<(usize, S)> {
        if self.sides.get(slot).is_some_and(Option::is_some) || self.gone.contains(&slot) {
            return None;
        }
        let index = self.started.iter().position(|s| !s)?;
        let source = self.sources.get(index)?.clone();
        self.started[index] = true;
        if self.sides.len() <= slot {
            self.sides.resize(slot + 1, None);
        }
        self.sides[slot] = Some(index);
        Some((index, source))
    }

    /// True once a parse worker took a file of the run's first loads, until they end.
    pub fn side_loads(&self) -> bool {
        self.sides.iter().any(Option::is_some)
    }

    /// The file parse worker `slot` is loading whole.
    pub fn side_of(&self, slot: usize) -> Option<usize> {
        self.sides.get(slot).copied().flatten()
    }

    /// Parse worker `slot` died: its file failed ([`RunLoads::side_ended`]) and no other goes
    /// to it.
    pub fn side_lost(&mut self, slot: usize) -> Option<Next<S>> {
        self.gone.push(slot);
        self.side_ended(slot)
    }

    /// Parse worker `slot`'s file is in (or failed): [`Next::RunLoaded`] if it was the run's
    /// last load, else [`Next::Idle`]; `None` if the slot was loading none.
    pub fn side_ended(&mut self, slot: usize) -> Option<Next<S>> {
        self.sides.get_mut(slot)?.take()?;
        Some(if self.loading() || self.started.contains(&false) { Next::Idle } else { Next::RunLoaded })
    }

    /// The load in flight if its id is `id`.
    pub fn job(&self, id: u32) -> Option<Job> {
        self.active.filter(|j| j.id == id)
    }

    /// `OpenRank` `id` must reload file `index`: superseding any hold.
    pub fn reopen(&mut self, id: u32, index: usize) -> Next<S> {
        let superseded = self.end_hold();
        let next = self.load(Job { id, index, purpose: Purpose::Reopen });
        merge(superseded, next)
    }

    /// `HoldRanks` `id` must reload `reload` ((rank, file index), in order); `refused` failed
    /// already. Supersedes any hold in progress.
    pub fn hold(&mut self, id: u32, reload: Vec<(u32, usize)>, refused: Vec<(u32, String)>) -> Next<S> {
        let superseded = self.end_hold();
        self.hold = Some(HoldJob { id, queue: reload.into(), failed: refused });
        merge(superseded, self.next_hold())
    }

    /// Load `id` ended (`error`: why it failed). `None` when `id` is not this run's load.
    pub fn ended(&mut self, id: u32, error: Option<String>) -> Option<Next<S>> {
        let job = self.job(id)?;
        self.active = None;
        Some(match job.purpose {
            Purpose::Run => self.next_run_load(),
            Purpose::Reopen => Next::Idle,
            Purpose::Hold => {
                let rank = self.holding.take();
                if let (Some(hold), Some(rank), Some(error)) = (self.hold.as_mut(), rank, error) {
                    hold.failed.push((rank, error));
                }
                self.next_hold()
            }
        })
    }

    /// Load `id` was cancelled or replaced by a load from outside the run: forgets it (the run's
    /// own: its parse workers' files too).
    pub fn cancel(&mut self, id: u32) {
        if id == self.id {
            self.sides.clear();
        }
        if self.job(id).is_some() {
            self.active = None;
            self.holding = None;
        }
    }

    /// The run's next first load here: the next file not yet started; once none is left, the
    /// end of the run's loads when no parse worker is loading one.
    fn next_run_load(&mut self) -> Next<S> {
        match self.started.iter().position(|s| !s) {
            Some(index) => {
                self.started[index] = true;
                self.load(Job { id: self.id, index, purpose: Purpose::Run })
            }
            None if self.loading() => Next::Idle,
            None => Next::RunLoaded,
        }
    }

    fn load(&mut self, job: Job) -> Next<S> {
        match self.sources.get(job.index).cloned() {
            Some(source) => {
                self.active = Some(job);
                Next::Load(job, source)
            }
            None if job.purpose == Purpose::Run => Next::RunLoaded,
            None => Next::Idle,
        }
    }

    /// The hold's next load, or its end.
    fn next_hold(&mut self) -> Next<S> {
        let Some(hold) = self.hold.as_mut() else { return Next::Idle };
        while let Some((rank, index)) = hold.queue.pop_front() {
            let Some(source) = self.sources.get(index).cloned() else {
                hold.failed.push((rank, "no such file in the run".into()));
                continue;
            };
            let job = Job { id: hold.id, index, purpose: Purpose::Hold };
            self.active = Some(job);
            self.holding = Some(rank);
            return Next::Load(job, source);
        }
        match self.hold.take() {
            Some(h) => Next::Held { id: h.id, failed: h.failed },
            None => Next::Idle,
        }
    }

    /// Ends the hold in progress, if any: its remaining ranks fail as superseded.
    fn end_hold(&mut self) -> Option<(u32, Vec<(u32, String)>)> {
        let mut hold = self.hold.take()?;
        if self.active.is_some_and(|j| j.purpose == Purpose::Hold) {
            self.active = None;
            if let Some(rank) = self.holding.take() {
                hold.queue.push_front((rank, 0));
            }
        }
        hold.failed.extend(hold.queue.drain(..).map(|(r, _)| (r, "superseded by a newer request".to_owned())));
        Some((hold.id, hold.failed))
    }
}

fn merge<S>(superseded: Option<(u32, Vec<(u32, String)>)>, next: Next<S>) -> Next<S> {
    match (superseded, next) {
        (None, next) => next,
        (Some((id, failed)), Next::Load(job, source)) => Next::HeldThenLoad { id, failed, job, source },
        (Some((id, failed)), _) => Next::Held { id, failed },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn job(id: u32, index: usize, purpose: Purpose) -> Job {
        Job { id, index, purpose }
    }

    #[test]
    fn a_run_loads_its_files_one_after_another() {
        let mut l = RunLoads::new(7, None, vec!["a", "b"]);
        assert_eq!(l.start(), Next::Load(job(7, 0, Purpose::Run), "a"));
        assert!(l.loading());
        assert_eq!(l.ended(8, None), None, "another load's end is not the run's");
        assert_eq!(l.ended(7, Some("bad json".into())), Some(Next::Load(job(7, 1, Purpose::Run), "b")));
        assert_eq!(l.ended(7, None), Some(Next::RunLoaded));
        assert!(!l.loading());
        assert_eq!(RunLoads::<&str>::new(1, None, vec![]).start(), Next::RunLoaded);
    }

    #[test]
    fn parse_workers_take_the_next_files_and_the_run_ends_with_the_last_load() {
        let mut l = RunLoads::new(7, None, vec!["a", "b", "c", "d"]);
        assert_eq!(l.start(), Next::Load(job(7, 0, Purpose::Run), "a"));
        assert_eq!(l.side(0), Some((1, "b")));
        assert_eq!(l.side(0), None, "one file at a time per parse worker");
        assert_eq!(l.side(1), Some((2, "c")));
        assert_eq!(l.side_of(1), Some(2));
        assert_eq!(l.ended(7, None), Some(Next::Load(job(7, 3, Purpose::Run), "d")), "here, the next file not started");
        assert_eq!(l.side_ended(0), Some(Next::Idle));
        assert_eq!(l.side(0), None, "every file is started");
        assert_eq!(l.side_ended(0), None, "parse worker 0 loads none");
        assert_eq!(l.ended(7, None), Some(Next::Idle), "parse worker 1 still loads c");
        assert!(l.loading());
        assert_eq!(l.side_ended(1), Some(Next::RunLoaded));
        assert!(!l.loading());
        assert_eq!(l.side(0), None, "no side loads after the run's first loads");
        let mut l = RunLoads::new(8, None, vec!["a", "b", "c"]);
        l.start();
        assert_eq!(l.side(0), Some((1, "b")));
        assert_eq!(l.side_lost(0), Some(Next::Idle));
        assert_eq!(l.side(0), None, "nothing goes to a parse worker that died");
        assert_eq!(l.ended(8, None), Some(Next::Load(job(8, 2, Purpose::Run), "c")), "its next file loads here");
    }

    #[test]
    fn a_hold_reloads_each_rank_and_reports_failures() {
        let mut l = RunLoads::new(1, None, vec!["r0", "r1", "r2"]);
        l.start();
        l.ended(1, None);
        l.ended(1, None);
        assert_eq!(l.ended(1, None), Some(Next::RunLoaded));
        let refused = vec![(9, "rank 9 is not in the run".to_owned())];
        assert_eq!(l.hold(5, vec![(0, 0), (2, 2)], refused.clone()), Next::Load(job(5, 0, Purpose::Hold), "r0"));
        assert_eq!(l.ended(5, Some("gone".into())), Some(Next::Load(job(5, 2, Purpose::Hold), "r2")));
        let failed = vec![refused[0].clone(), (0, "gone".to_owned())];
        assert_eq!(l.ended(5, None), Some(Next::Held { id: 5, failed }));
        assert_eq!(l.hold(6, vec![], vec![]), Next::Held { id: 6, failed: vec![] }, "nothing to reload");
    }

    #[test]
    fn a_reopen_or_a_newer_hold_supersedes_a_hold() {
        let mut l = RunLoads::new(1, None, vec!["r0", "r1", "r2"]);
        l.hold(5, vec![(0, 0), (1, 1)], vec![]);
        let superseded = vec![(0, "superseded by a newer request".to_owned()), (1, "superseded by a newer request".to_owned())];
        assert_eq!(
            l.reopen(6, 2),
            Next::HeldThenLoad { id: 5, failed: superseded, job: job(6, 2, Purpose::Reopen), source: "r2" }
        );
        assert_eq!(l.ended(5, None), None, "the superseded load's end is ignored");
        assert_eq!(l.ended(6, None), Some(Next::Idle));
        l.hold(7, vec![(1, 1)], vec![]);
        let newer = l.hold(8, vec![(2, 2)], vec![]);
        assert_eq!(
            newer,
            Next::HeldThenLoad {
                id: 7,
                failed: vec![(1, "superseded by a newer request".to_owned())],
                job: job(8, 2, Purpose::Hold),
                source: "r2"
            }
        );
        l.cancel(8);
        assert_eq!(l.job(8), None);
    }
}
