//! The ranks of a distributed run opened in the engine (the page's multi-file or `?run=`
//! load): each file's [`RankSummary`] (kept for the whole run), the models of at most
//! [`KEEP_MODELS`] ranks (least recently used dropped; the caller reloads a dropped one from its
//! file when the user opens it), and the run analysis once every file is in.
//!
//! **Inputs**: the file names, then per file, in any order, either the session the engine just
//! loaded ([`RunState::keep`]) or why it failed ([`RunState::failed`]); then
//! [`RunState::finish`]. **Output**: [`protocol::RunData`], built from
//! [`crate::run::json::run_json`], so the page shows exactly what `kinetoscope run --json`
//! prints for the same files (unreadable files become `run_file_error` diagnostics, as there).
//!
//! The stacked ranks timeline pins up to [`protocol::MAX_HELD_RANKS`] models
//! ([`RunState::hold`]); its layouts and collective answers read the kept analysis ([`stack`]).
//!
//! **Memory**: summaries are small (steps, collectives, a few numbers); at most
//! [`KEEP_MODELS`] models besides the held ones are kept, plus the one being loaded.

pub mod loads;
pub mod manifest;
pub mod stack;

use crate::run::{self, ClockChoice, Diagnostic, RankSummary, RunAnalysis};
use crate::session::Session;
use protocol::{RankInfo, RunData, RunDiagnostic, TraceSummary, MAX_HELD_RANKS};
use std::sync::Arc;

pub use manifest::{manifest, ManifestRank};

/// Models kept at most besides the held ones (the current trace and the ranks opened last).
pub const KEEP_MODELS: usize = 3;

/// One file of the run.
struct RankFile {
    name: String,
    summary: Option<RankSummary>,
    error: Option<String>,
    /// The model and its page summary, while kept.
    session: Option<(Arc<Session>, TraceSummary)>,
}

/// What [`RunState::open`] found for a rank.
pub enum Opened {
    /// Its model is kept: now the current one.
    Kept(Arc<Session>, Box<TraceSummary>),
    /// Its model was dropped: reload file `index`, then [`RunState::keep`] it.
    Reload(usize),
}

/// What [`RunState::hold`] asks of the loader.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hold {
    /// Ranks held now, with their file index, whose model is not kept: reload each file, then
    /// [`RunState::keep`] it.
    pub reload: Vec<(u32, usize)>,
    /// Ranks that cannot be held, with why.
    pub refused: Vec<(u32, String)>,
}

/// A run being loaded or loaded.
pub struct RunState {
    files: Vec<RankFile>,
    /// File indices whose model is kept, least recently used first.
    used: Vec<usize>,
    /// File indices pinned by [`RunState::hold`] (never dropped by [`KEEP_MODELS`]).
    held: Vec<usize>,
    data: Option<Box<RunData>>,
    /// The analysis shown (the run with most ranks), for the stacked view's queries.
    analysis: Option<RunAnalysis>,
}

impl RunState {
    /// A run of the files `names` (in the order given), none loaded yet.
    pub fn new(names: Vec<String>) -> Self {
        let files = names
            .into_iter()
            .map(|name| RankFile { name, summary: None, error: None, session: None })
            .collect();
        Self { files, used: Vec::new(), held: Vec::new(), data: None, analysis: None }
    }

    /// Files in the run.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// True when the run has no file.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The name of file `index`.
    pub fn name(&self, index: usize) -> Option<&str> {
        self.files.get(index).map(|f| f.name.as_str())
    }

    /// Keeps file `index`'s loaded `session` (its rank summary, and the model as the most
    /// recently used, dropping the least recently used beyond [`KEEP_MODELS`]).
    pub fn keep(&mut self, index: usize, session: Arc<Session>, summary: TraceSummary) -> RankInfo {
        let Some(file) = self.files.get_mut(index) else {
            return RankInfo { index: index as u32, error: Some("no such file in the run".into()), ..RankInfo::default() };
        };
        if file.summary.is_none() {
            file.summary = Some(run::summarize(&file.name, &session));
        }
        file.error = None;
        file.session = Some((session, summary));
        self.touch(index);
        self.info(index)
    }

    /// Keeps `summary` for file `index`, loaded whole by a parse worker: its model is not here,
    /// so opening or holding it reloads the file.
    pub fn keep_summary(&mut self, index: usize, summary: RankSummary) -> RankInfo {
        let Some(file) = self.files.get_mut(index) else {
            return RankInfo { index: index as u32, error: Some("no such file in the run".into()), ..RankInfo::default() };
        };
        file.summary = Some(summary);
        file.error = None;
        self.info(index)
    }

    /// The first file with a summary (loaded once), if any.
    pub fn first_summarized(&self) -> Option<usize> {
        self.files.iter().position(|f| f.summary.is_some())
    }

    /// File `index` could not be loaded: `message` says why.
    pub fn failed(&mut self, index: usize, message: String) -> RankInfo {
        if let Some(file) = self.files.get_mut(index) {
            file.error = Some(message);
        }
        self.info(index)
    }

    /// The progress row of file `index`.
    pub fn info(&self, index: usize) -> RankInfo {
        let Some(file) = self.files.get(index) else {
            return RankInfo { index: index as u32, ..RankInfo::default() };
        };
        let summary = file.summary.as_ref();
        RankInfo {
            index: index as u32,
            name: file.name.clone(),
            rank: summary.and_then(|s| s.identity.rank),
            steps: summary.map_or(0, |s| s.steps.len() as u64),
            error: file.error.clone(),
            memory_bytes: None,
            parse_worker: None,
        }
    }

    /// The most recently used kept model, if any.
    pub fn latest(&self) -> Option<(Arc<Session>, TraceSummary)> {
        let index = *self.used.last()?;
        self.files.get(index)?.session.clone()
    }

    /// Analyses the run from the summaries in. Of several runs among the files (another world
    /// size or backend), the one with most ranks is shown; the others are named in a diagnostic.
    pub fn finish(&mut self) {
        let mut summaries = Vec::new();
        let mut shared = Vec::new();
        for f in &self.files {
            match (&f.summary, &f.error) {
                (Some(s), _) => summaries.push(s.clone()),
                (None, Some(e)) => shared.push(Diagnostic::new("run_file_error", format!("{}: {e}", f.name))),
                (None, None) => shared.push(Diagnostic::new("run_file_error", format!("{}: not loaded", f.name))),
            }
        }
        let runs = run::analyze(summaries, &shared, ClockChoice::Auto);
        let best = runs.iter().enumerate().max_by_key(|(i, r)| (r.ranks.len(), std::cmp::Reverse(*i))).map(|(i, _)| i);
        let mut data = best
            .and_then(|i| runs.get(i))
            .and_then(|r| serde_json::from_value::<RunData>(run::json::run_json(r)).ok())
            .unwrap_or_else(|| RunData {
                diagnostics: shared.iter().map(|d| RunDiagnostic { kind: d.kind.into(), message: d.message.clone() }).collect(),
                ..RunData::default()
            });
        if runs.is_empty() {
            data.diagnostics.push(RunDiagnostic {
                kind: "run_no_rank".into(),
                message: "no loaded trace has a rank (distributedInfo or file name)".into(),
            });
        }
        for (i, other) in runs.iter().enumerate().filter(|(i, _)| Some(*i) != best) {
            let files: Vec<&str> = other.ranks.iter().map(|r| r.file.as_str()).collect();
            data.diagnostics.push(RunDiagnostic {
                kind: "run_other_run".into(),
                message: format!(
                    "run {i} (world size {}, backend {}) is not shown: {}",
                    other.world_size.map_or("?".into(), |w| w.to_string()),
                    other.backend.as_deref().unwrap_or("?"),
                    files.join(", ")
                ),
            });
        }
        self.data = Some(Box::new(data));
        self.analysis = best.and_then(|i| runs.into_iter().nth(i));
    }

    /// The analysis shown, once [`RunState::finish`]ed.
    pub fn analysis(&self) -> Option<&RunAnalysis> {
        self.analysis.as_ref()
    }

    /// The run analysis, once [`RunState::finish`]ed.
    pub fn data(&self) -> Option<&RunData> {
        self.data.as_deref()
    }

    /// Rank `rank`'s model: kept (now the most recently used) or to reload from its file.
    /// `None` when no file of the run has that rank. Among files of one rank, the one the
    /// analysis shows is opened.
    pub fn open(&mut self, rank: u32) -> Option<Opened> {
        let index = self.file_of(rank)?;
        match self.files.get(index).and_then(|f| f.session.clone()) {
            Some((session, summary)) => {
                self.touch(index);
                Some(Opened::Kept(session, Box::new(summary)))
            }
            None => Some(Opened::Reload(index)),
        }
    }

    /// The file of rank `rank`: among files of one rank, the one the analysis shows.
    fn file_of(&self, rank: u32) -> Option<usize> {
        let shown = self
            .data
            .as_ref()
            .and_then(|d| d.ranks.iter().find(|r| r.rank == Some(rank)))
            .map(|r| r.file.as_str());
        self.files.iter().position(|f| {
            let has_rank = f.summary.as_ref().and_then(|s| s.identity.rank) == Some(rank);
            has_rank && shown.is_none_or(|name| name == f.name)
        })
    }

    /// Pins the models of `ranks` (the first [`MAX_HELD_RANKS`]; unpinning the others) and
    /// says which must be reloaded and which cannot be held.
    pub fn hold(&mut self, ranks: &[u32]) -> Hold {
        let mut hold = Hold::default();
        self.held.clear();
        for (i, &rank) in ranks.iter().enumerate() {
            let index = match self.file_of(rank) {
                Some(_) if i >= MAX_HELD_RANKS => {
                    hold.refused.push((rank, format!("at most {MAX_HELD_RANKS} ranks are stacked at once")));
                    continue;
                }
                Some(index) => index,
                None => {
                    hold.refused.push((rank, format!("rank {rank} is not in the run")));
                    continue;
                }
            };
            if self.held.contains(&index) {
                continue;
            }
            self.held.push(index);
            match self.files.get(index).and_then(|f| f.session.as_ref()) {
                Some(_) => self.touch(index),
                None => hold.reload.push((rank, index)),
            }
        }
        self.evict();
        hold
    }

    /// Rank `rank`'s model, if kept.
    pub fn session_of(&self, rank: u32) -> Option<Arc<Session>> {
        let file = self.files.get(self.file_of(rank)?)?;
        file.session.as_ref().map(|(s, _)| s.clone())
    }

    /// The rank whose kept model is `session`, if any.
    pub fn rank_of_session(&self, session: &Arc<Session>) -> Option<u32> {
        let file = self.files.iter().find(|f| f.session.as_ref().is_some_and(|(s, _)| Arc::ptr_eq(s, session)))?;
        file.summary.as_ref()?.identity.rank
    }

    /// Ranks whose model is held now, ascending.
    pub fn held(&self) -> Vec<u32> {
        let mut ranks: Vec<u32> = self
            .held
            .iter()
            .filter_map(|&i| self.files.get(i))
            .filter(|f| f.session.is_some())
            .filter_map(|f| f.summary.as_ref()?.identity.rank)
            .collect();
        ranks.sort_unstable();
        ranks
    }

    /// Marks file `index` most recently used; drops models beyond [`KEEP_MODELS`].
    fn touch(&mut self, index: usize) {
        self.used.retain(|&i| i != index);
        self.used.push(index);
        self.evict();
    }

    /// Drops the least recently used models beyond [`KEEP_MODELS`] unpinned ones.
    fn evict(&mut self) {
        loop {
            let unpinned: Vec<usize> = self.used.iter().copied().filter(|i| !self.held.contains(i)).collect();
            let Some(&dropped) = unpinned.first().filter(|_| unpinned.len() > KEEP_MODELS) else {
                return;
            };
            self.used.retain(|&i| i != dropped);
            if let Some(f) = self.files.get_mut(dropped) {
                f.session = None;
            }
        }
    }

    /// How many models are kept (for tests).
    pub fn kept(&self) -> usize {
        self.files.iter().filter(|f| f.session.is_some()).count()
    }
}

