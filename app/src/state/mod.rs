//! Load state as a plain struct: what the panels show and what `window.kinetoscope` reports.
//!
//! Inputs: [`LoadState::begin`] when the user (or the start-up URL) asks for a trace, then the
//! worker's [`FromWorker`] replies for that load, already filtered to the current request id by
//! the bridge (latest wins). Output: status, progress, summary, error and the finished-load count.
//!
//! Invariants: `summary` and `error` are never both set; `progress` is set only while
//! `status == Loading`; `loads` grows by one per load that ends (success or failure), never for
//! an error that arrives while nothing is loading (a refused worker at start-up).
//!
//! Why a plain struct: the view keeps it in one signal and calls these methods, so the rules above
//! are tested natively (docs/contributing.md). Number formatting lives in [`format`].

pub mod charts;
pub mod columns;
pub mod compare;
pub mod critical;
pub mod explain;
pub mod export;
pub mod findings;
pub mod flame;
pub mod format;
pub mod glance;
pub mod gallery;
pub mod link;
pub mod memory;
pub mod modules;
pub mod names;
pub mod notice;
pub mod ranks;
pub mod roofline;
pub mod run;
pub mod stack;
pub mod table;
pub mod tiles;
pub mod timeline;
pub mod tracks;
pub mod viewport;

use protocol::{FromWorker, LoadError, Phase, StepMarking, TraceSummary};
use std::sync::Arc;

/// Where the app is in its load cycle; the strings are the `window.kinetoscope.status` contract.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Status {
    /// Nothing loaded or loading.
    #[default]
    Idle,
    /// A load is running.
    Loading,
    /// The last load succeeded.
    Ready,
    /// The last load (or the worker) failed.
    Error,
}

impl Status {
    /// The contract string: `idle`, `loading`, `ready` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Idle => "idle",
            Status::Loading => "loading",
            Status::Ready => "ready",
            Status::Error => "error",
        }
    }
}

/// The latest progress report of the running load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Stage of the load.
    pub phase: Phase,
    /// Bytes handled so far in this phase.
    pub done_bytes: u64,
    /// Bytes to handle in this phase, when known.
    pub total_bytes: Option<u64>,
}

impl Progress {
    /// Percent done, capped at 100; `None` when the total is unknown or zero.
    pub fn percent(&self) -> Option<u32> {
        let total = self.total_bytes.filter(|&t| t > 0)?;
        let pct = self.done_bytes.saturating_mul(100) / total;
        Some(u32::try_from(pct.min(100)).unwrap_or(100))
    }
}

/// Everything the page knows about loading.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadState {
    /// Current status.
    pub status: Status,
    /// Name of the file being loaded or last loaded.
    pub name: Option<String>,
    /// Progress of the running load.
    pub progress: Option<Progress>,
    /// Summary of the last successful load.
    pub summary: Option<Arc<TraceSummary>>,
    /// Why the last load failed.
    pub error: Option<LoadError>,
    /// Loads that ended, successfully or not.
    pub loads: u32,
    /// Protocol version the worker announced.
    pub protocol_version: Option<u32>,
    /// The first timeline frame after the load is drawn: the panels below the timeline are
    /// built from then on, so building them never delays that frame.
    pub settled: bool,
    /// How the loaded trace's steps are marked, and the Steps tab picker's candidates.
    pub steps: StepMarking,
    /// The Summary tab's glance of the loaded trace.
    pub glance: glance::GlanceState,
    /// The load is the built-in demo (the page was opened without a trace).
    pub demo: bool,
}

impl LoadState {
    /// Starts a load of `name`, dropping the previous summary and error.
    pub fn begin(&mut self, name: &str) {
        self.status = Status::Loading;
        self.name = Some(name.to_owned());
        self.progress = Some(Progress {
            phase: Phase::Reading,
            done_bytes: 0,
            total_bytes: None,
        });
        self.summary = None;
        self.error = None;
        self.settled = false;
        self.steps = StepMarking::default();
        self.glance = glance::GlanceState::default();
        self.demo = false;
    }

    /// Applies one worker reply that belongs to the current load (or to no load: `Ready`).
    pub fn apply(&mut self, msg: FromWorker) {
        match msg {
            FromWorker::Ready { protocol_version } => {
                self.protocol_version = Some(protocol_version)
            }
            FromWorker::Progress {
                phase,
                done_bytes,
                total_bytes,
                ..
            } => {
                if self.status == Status::Loading {
                    self.progress = Some(Progress {
                        phase,
                        done_bytes,
                        total_bytes,
                    });
                }
            }
            FromWorker::Loaded { summary, steps, .. } => {
                self.loaded(summary);
                self.steps = steps;
            }
            FromWorker::Failed { error, .. } => {
                self.end();
                self.status = Status::Error;
                self.summary = None;
                self.error = Some(error);
            }
            // Query replies belong to the table and timeline states, a run's files to the
            // run state.
            FromWorker::Answer { .. }
            | FromWorker::QueryFailed { .. }
            | FromWorker::RunStarted { .. }
            | FromWorker::RankProgress { .. }
            | FromWorker::RankLoaded { .. }
            | FromWorker::RanksHeld { .. } => {}
        }
    }

    /// The running load finished with `summary`.
    pub fn loaded(&mut self, summary: Box<TraceSummary>) {
        self.end();
        self.status = Status::Ready;
        self.summary = Some(Arc::from(summary));
    }

    /// Counts the running load as finished, if one is running.
    fn end(&mut self) {
        if self.status == Status::Loading {
            self.loads += 1;
        }
        self.progress = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(message: &str) -> LoadError {
        let (offset, line, column) = (Some(7), Some(1), Some(8));
        LoadError {
            kind: "malformed".into(),
            message: message.into(),
            offset,
            line,
            column,
        }
    }

    fn loaded(events: u64) -> FromWorker {
        let summary = TraceSummary {
            events,
            ..TraceSummary::default()
        };
        FromWorker::Loaded {
            id: 1,
            summary: Box::new(summary),
            layout: Box::default(),
            steps: StepMarking::default(),
        }
    }

    #[test]
    fn load_cycle_counts_and_clears() {
        let mut s = LoadState::default();
        assert_eq!(s.status.as_str(), "idle");
        s.begin("a.json");
        assert_eq!(s.status, Status::Loading);
        let total = Some(200);
        s.apply(FromWorker::Progress {
            id: 1,
            phase: Phase::Parsing,
            done_bytes: 50,
            total_bytes: total,
        });
        assert_eq!(
            s.progress.map(|p| (p.phase, p.percent())),
            Some((Phase::Parsing, Some(25)))
        );
        s.apply(loaded(3));
        assert_eq!((s.status, s.loads, s.progress), (Status::Ready, 1, None));
        assert_eq!(s.summary.as_ref().map(|x| x.events), Some(3));

        s.begin("b.json");
        assert!(s.summary.is_none());
        s.apply(FromWorker::Failed {
            id: 2,
            error: error("bad at byte 7"),
        });
        assert_eq!((s.status, s.loads), (Status::Error, 2));
        assert!(s.summary.is_none() && s.error.is_some());

        s.begin("c.json");
        assert!(s.error.is_none(), "a new load clears the error");
        s.apply(loaded(1));
        assert_eq!((s.status, s.loads), (Status::Ready, 3));
    }

    #[test]
    fn error_without_load_does_not_count() {
        let mut s = LoadState::default();
        s.apply(FromWorker::Ready {
            protocol_version: 9,
        });
        s.apply(FromWorker::Failed {
            id: 0,
            error: error("refused"),
        });
        assert_eq!(
            (s.status, s.loads, s.protocol_version),
            (Status::Error, 0, Some(9))
        );
    }

    #[test]
    fn progress_after_end_is_ignored() {
        let mut s = LoadState::default();
        s.begin("a");
        s.apply(loaded(1));
        s.apply(FromWorker::Progress {
            id: 1,
            phase: Phase::Reading,
            done_bytes: 1,
            total_bytes: None,
        });
        assert_eq!(s.progress, None);
    }

    #[test]
    fn percent_caps_and_handles_unknown() {
        let p = |done, total| Progress {
            phase: Phase::Reading,
            done_bytes: done,
            total_bytes: total,
        };
        assert_eq!(p(5, None).percent(), None);
        assert_eq!(p(5, Some(0)).percent(), None);
        assert_eq!(p(300, Some(200)).percent(), Some(100));
        assert_eq!(p(1, Some(3)).percent(), Some(33));
    }
}
