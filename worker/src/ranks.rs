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
//! **Memory**: summaries are small (steps, collectives, a few numbers); at most
//! [`KEEP_MODELS`] models are held, plus the one being loaded.

use crate::run::{self, ClockChoice, Diagnostic, RankSummary};
use crate::session::Session;
use protocol::{RankInfo, RunData, RunDiagnostic, TraceSummary};
use std::sync::Arc;

/// Models kept at most (the current trace and the ranks opened last).
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

/// A run being loaded or loaded.
pub struct RunState {
    files: Vec<RankFile>,
    /// File indices whose model is kept, least recently used first.
    used: Vec<usize>,
    data: Option<Box<RunData>>,
}

impl RunState {
    /// A run of the files `names` (in the order given), none loaded yet.
    pub fn new(names: Vec<String>) -> Self {
        let files = names
            .into_iter()
            .map(|name| RankFile { name, summary: None, error: None, session: None })
            .collect();
        Self { files, used: Vec::new(), data: None }
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
    }

    /// The run analysis, once [`RunState::finish`]ed.
    pub fn data(&self) -> Option<&RunData> {
        self.data.as_deref()
    }

    /// Rank `rank`'s model: kept (now the most recently used) or to reload from its file.
    /// `None` when no file of the run has that rank. Among files of one rank, the one the
    /// analysis shows is opened.
    pub fn open(&mut self, rank: u32) -> Option<Opened> {
        let shown = self
            .data
            .as_ref()
            .and_then(|d| d.ranks.iter().find(|r| r.rank == Some(rank)))
            .map(|r| r.file.clone());
        let index = self.files.iter().position(|f| {
            let has_rank = f.summary.as_ref().and_then(|s| s.identity.rank) == Some(rank);
            has_rank && shown.as_ref().is_none_or(|name| *name == f.name)
        })?;
        match self.files.get(index).and_then(|f| f.session.clone()) {
            Some((session, summary)) => {
                self.touch(index);
                Some(Opened::Kept(session, Box::new(summary)))
            }
            None => Some(Opened::Reload(index)),
        }
    }

    /// Marks file `index` most recently used; drops models beyond [`KEEP_MODELS`].
    fn touch(&mut self, index: usize) {
        self.used.retain(|&i| i != index);
        self.used.push(index);
        while self.used.len() > KEEP_MODELS {
            let dropped = self.used.remove(0);
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

/// One entry of a run manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestRank {
    /// The trace's URL, relative to the manifest (or absolute).
    pub url: String,
    /// The rank the manifest states, if any (the analysis reads the rank from the trace's
    /// `distributedInfo` or its file name, as `kinetoscope run` does).
    pub rank: Option<u32>,
}

/// Reads a run manifest: `{"ranks": [{"url": "rank-0.json.gz", "rank": 0}, ...]}` (a bare
/// string is a URL too). Entries keep their order.
///
/// # Errors
/// Not JSON, no `ranks` array, an entry without a URL, or no entry at all.
pub fn manifest(text: &str) -> Result<Vec<ManifestRank>, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("the run manifest is not JSON: {e}"))?;
    let ranks = value
        .get("ranks")
        .and_then(|r| r.as_array())
        .ok_or("the run manifest has no \"ranks\" array")?;
    let mut out = Vec::with_capacity(ranks.len());
    for (i, entry) in ranks.iter().enumerate() {
        let url = entry.as_str().or_else(|| entry.get("url").and_then(|u| u.as_str()));
        let Some(url) = url.filter(|u| !u.trim().is_empty()) else {
            return Err(format!("entry {i} of the run manifest has no \"url\""));
        };
        let rank = entry.get("rank").and_then(|r| r.as_u64()).and_then(|r| u32::try_from(r).ok());
        out.push(ManifestRank { url: url.to_owned(), rank });
    }
    if out.is_empty() {
        return Err("the run manifest lists no rank".into());
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn manifest_entries_in_order() {
        let m = manifest(r#"{"ranks": [{"url": "rank-1.json.gz", "rank": 1}, "rank-0.json", {"url": "a/b.json"}]}"#).unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m[0], ManifestRank { url: "rank-1.json.gz".into(), rank: Some(1) });
        assert_eq!(m[1].url, "rank-0.json");
        assert_eq!(m[2].rank, None);
    }

    #[test]
    fn bad_manifests_say_why() {
        assert!(manifest("nope").unwrap_err().contains("not JSON"));
        assert!(manifest("{}").unwrap_err().contains("\"ranks\""));
        assert!(manifest(r#"{"ranks": [{"rank": 0}]}"#).unwrap_err().contains("entry 0"));
        assert!(manifest(r#"{"ranks": []}"#).unwrap_err().contains("no rank"));
    }
}
