//! Distributed runs: opening several files (or a folder) or a `?run=` manifest as one run,
//! routing the worker's per-file progress and the run analysis into [`RunState`], and opening
//! one rank's timeline at a step from the heatmap (then "Back to run").
//!
//! A run load is one load for the bridge (one id, latest wins); the worker loads its files one
//! after another and ends it with `Loaded` for the last rank loaded, after which the Run tab
//! asks for the analysis. Opening a rank is another load (`OpenRank`): the worker answers at
//! once from a kept model or reloads the rank's file; the run state survives it.

use super::Controller;
use crate::bridge::source;
use crate::state::run::{HeatCell, HeatMode, RunState};
use crate::state::table::Tab;
use leptos::prelude::*;
use protocol::{Answer, FromWorker, Query};
use web_sys::File;

impl Controller {
    /// Opens picked or dropped files: one is a trace (as before), several are a run; none (a
    /// folder without `*.json` / `*.json.gz`) is a load error that says so.
    pub fn load_files(self, files: Vec<File>) {
        if files.is_empty() {
            let message = "No trace file in that folder: nothing was opened (trace files end in \
                           .json or .json.gz)";
            return self.refuse_load("folder", "io", message.into());
        }
        if files.len() < 2 {
            if let Some(file) = files.into_iter().next() {
                self.load_file(file);
            }
            return;
        }
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        self.begin_run(&format!("{} traces", files.len()));
        self.link.update_value(|l| l.local_file = true);
        let id = bridge.begin();
        bridge.read_run(id, &files);
    }

    /// Opens the run whose manifest is at `url` (http(s) or relative to the page).
    pub fn load_run_url(self, url: &str) {
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        let target = source::resolve_url(url);
        self.begin_run(target.as_ref().map_or(url, |t| t.name.as_str()));
        self.link.update_value(|l| l.local_file = false);
        let id = bridge.begin();
        match target {
            Ok(target) => bridge.fetch_run(id, &target),
            Err(error) => bridge.fail(id, error),
        }
    }

    fn begin_run(self, name: &str) {
        self.begin(name);
        self.run.update(RunState::begin);
        self.ranks_clear();
        self.tables.update(|t| {
            t.select(Tab::Run);
        });
    }

    /// A single trace is opened: the run is forgotten (and its tab left).
    pub(super) fn end_run(self) {
        if self.run.with_untracked(|r| r.open) {
            self.run.update(RunState::clear);
            self.ranks_clear();
        }
        if self.tables.with_untracked(|t| t.tab == Tab::Run) {
            self.tables.update(|t| {
                t.select(Tab::Summary);
            });
        }
    }

    /// `RunStarted`, `RankProgress` or `RankLoaded` of the current run load.
    pub(super) fn run_progress(self, msg: FromWorker) {
        // The progress bar follows the file being loaded.
        if let FromWorker::RankProgress { phase, done_bytes, total_bytes, .. } = &msg {
            let progress = crate::state::Progress { phase: *phase, done_bytes: *done_bytes, total_bytes: *total_bytes };
            self.state.update(|s| {
                if s.status == crate::state::Status::Loading {
                    s.progress = Some(progress);
                }
            });
        }
        self.run.update(|r| match msg {
            FromWorker::RunStarted { names, .. } => r.started(names),
            FromWorker::RankProgress { index, phase, done_bytes, total_bytes, .. } => {
                r.progress(index, phase, done_bytes, total_bytes);
            }
            FromWorker::RankLoaded { total, info, .. } => r.rank_loaded(total, info),
            _ => {}
        });
        self.publish();
    }

    /// The run load or a rank's load failed: the run load's error shows on the Run tab; after
    /// a rank that could not be opened, the Run tab comes back (nothing else is loaded).
    pub(super) fn run_failed(self, message: &str) {
        self.run.update(|r| {
            if r.data.is_none() {
                r.error = Some(message.to_owned());
            }
            r.zoom_pending = false;
        });
        self.tables.update(|t| {
            t.select(Tab::Run);
        });
    }

    /// The answer to the run query.
    pub(super) fn run_answer(self, id: u32, answer: Answer) {
        match answer {
            Answer::Run(data) => self.run.update(|r| r.apply(id, *data)),
            _ => self.run.update(|r| r.failed(id, "not a run answer".into())),
        }
        self.publish();
    }

    /// A load ended with `Loaded` while a run is open: after the run load, asks for the run
    /// analysis; after opening a rank at a step, shows that step on the timeline.
    pub(super) fn run_loaded(self) {
        let (open, asked, zoom) = self.run.with_untracked(|r| {
            (r.open, r.data.is_some() || r.pending.is_some(), r.focus.filter(|_| r.zoom_pending))
        });
        if !open {
            return;
        }
        if !asked {
            self.ask(Query::Run);
        }
        if let Some((_, step)) = zoom {
            self.run.update_untracked(|r| r.zoom_pending = false);
            let mark = self.timeline.with_untracked(|t| {
                t.layout.as_ref().and_then(|l| l.steps.iter().find(|s| Some(s.number) == step).cloned())
            });
            if let Some(m) = mark {
                self.timeline.update(|t| t.view.show(m.start_ns as f64, m.end_ns as f64));
            }
        }
    }

    /// Opens rank `rank`'s timeline (at `step`, when given): its model becomes the current
    /// trace; the summary tab shows its file.
    pub fn open_rank(self, rank: u32, step: Option<u64>) {
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        let name = self
            .run
            .with_untracked(|r| r.data.as_ref()?.ranks.iter().find(|x| x.rank == Some(rank)).map(|x| x.file.clone()))
            .unwrap_or_else(|| format!("rank {rank}"));
        self.begin(&name);
        self.run.update(|r| {
            r.focus = Some((rank, step));
            r.zoom_pending = true;
        });
        self.tables.update(|t| {
            t.select(Tab::Summary);
        });
        let id = bridge.begin();
        bridge.open_rank(id, rank);
    }

    /// Stacks rank `a` (above, the baseline) and rank `b` (below) in the Compare tab's stacked
    /// timelines, aligned at a step both have: opens `a`, keeps it as the baseline, opens `b`.
    pub fn stack_ranks(self, a: u32, b: u32) {
        self.run.update(|r| r.stack_next = Some(b));
        self.open_rank(a, None);
    }

    /// A rank was loaded while stacking two: keeps it as the baseline and opens the second
    /// (true: this load is done).
    pub(super) fn run_stack_next(self) -> bool {
        let Some(b) = self.run.try_update(|r| r.stack_next.take()).flatten() else {
            return false;
        };
        if !self.keep_baseline() {
            return false;
        }
        self.open_rank(b, None);
        self.tables.update(|t| {
            t.select(Tab::Compare);
        });
        self.publish();
        true
    }

    /// Back to the Run tab.
    pub fn back_to_run(self) {
        self.select_tab(Tab::Run);
    }

    /// The heatmap shows `mode` (redrawn by the panel).
    pub fn set_heat_mode(self, mode: HeatMode) {
        self.run.update(|r| r.heat_mode = mode);
        self.publish();
    }

    /// The heatmap was drawn with these cells (for `window.kinetoscope.run.heatmap`).
    pub fn heatmap_drawn(self, cells: Vec<HeatCell>) {
        if self.run.with_untracked(|r| r.heatmap != cells) {
            self.run.update_untracked(|r| r.heatmap = cells);
            self.publish();
        }
    }
}
