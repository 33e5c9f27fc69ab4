//! The controller: owns the view-state signals and the worker bridge, turns user intents into
//! state changes and queries, and routes worker replies back into state.
//!
//! Every state change goes through a `commit*` method, which also publishes `window.kinetoscope`
//! synchronously (see `window_hook`). Loads: latest wins (in the bridge). Queries: latest wins per
//! channel (in the bridge), and each state keeps the id it awaits.
//!
//! Files: this one routes replies and publishes; [`load`] starts loads; [`posted`] opens
//! traces other pages post; [`tables`] drives the
//! table tabs; [`timeline`] drives the timeline (view changes, tiles, selection, search);
//! [`findings`] drives the cheatsheet; [`link`] keeps the URL fragment in step with the view and
//! restores shared links; [`flame`] the Flame tab's zoom, toggle and clicks; [`charts`] feeds the charts tab; [`compare`] keeps a baseline and
//! drives the Compare tab; [`stack`] drives the stacked timelines (the Compare tab's and the Run
//! tab's); [`run`] drives the Run tab and [`ranks`] its ranks timeline; [`explain`] explains a
//! step on the Steps tab; [`critical`] the critical path (Steps tab bars, the timeline's
//! overlay) and the What if panel; [`export`] saves the worker's HTML report; [`gallery`] fetches the run
//! gallery's listing.

mod charts;
mod compare;
mod critical;
mod explain;
mod export;
mod findings;
mod flame;
pub mod gallery;
mod link;
mod load;
mod posted;
mod ranks;
mod run;
mod stack;
mod tables;
pub mod timeline;

use crate::bridge::Bridge;
use crate::state::charts::ChartState;
use crate::state::compare::CompareState;
use crate::state::critical::CriticalState;
use crate::state::explain::ExplainState;
use crate::state::export::ExportState;
use crate::state::findings::FindingsState;
use crate::state::ranks::RanksState;
use crate::state::run::RunState;
use crate::state::stack::{StackState, RANKS_CHANNEL_BASE};
use crate::state::table::TableState;
use crate::state::timeline::TimelineState;
use crate::state::LoadState;
use crate::window_hook;
use leptos::prelude::*;
use protocol::{Answer, Channel, FromWorker, Query};

/// Longest wait after a load for the first timeline frame before the panels below it are built.
const SETTLE_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// Owns the load, table and timeline state and the worker bridge; cheap to copy into handlers.
#[derive(Clone, Copy)]
pub struct Controller {
    /// Load cycle and summary.
    pub state: RwSignal<LoadState>,
    /// Table tabs.
    pub tables: RwSignal<TableState>,
    /// Timeline.
    pub timeline: RwSignal<TimelineState>,
    /// Cheatsheet.
    pub findings: RwSignal<FindingsState>,
    /// Charts tab.
    pub charts: RwSignal<ChartState>,
    /// Baseline and comparison.
    pub compare: RwSignal<CompareState>,
    /// The Compare tab's stacked timelines.
    pub stack: RwSignal<StackState>,
    /// The open distributed run (the Run tab).
    pub run: RwSignal<RunState>,
    /// The Steps tab's step explanation.
    pub explain: RwSignal<ExplainState>,
    /// Critical paths, the timeline's toggle and the What if panel.
    pub critical: RwSignal<CriticalState>,
    /// Export report.
    pub export: RwSignal<ExportState>,
    /// The Run tab's ranks timeline: ranks, clock, search, selection.
    pub ranks: RwSignal<RanksState>,
    /// The Run tab's ranks timeline: its panels, one per held rank.
    pub rank_stack: RwSignal<StackState>,
    bridge: StoredValue<Option<Bridge>, LocalStorage>,
    link: StoredValue<link::LinkState, LocalStorage>,
}

impl Controller {
    /// Spawns the worker (a task later); `window.kinetoscope` waits for
    /// [`Controller::install_test_hook`].
    pub fn new() -> Self {
        let ctl = Controller {
            state: RwSignal::new(LoadState::default()),
            tables: RwSignal::new(TableState::default()),
            timeline: RwSignal::new(TimelineState::default()),
            findings: RwSignal::new(FindingsState::default()),
            charts: RwSignal::new(ChartState::default()),
            compare: RwSignal::new(CompareState::default()),
            stack: RwSignal::new(StackState::default()),
            run: RwSignal::new(RunState::default()),
            explain: RwSignal::new(ExplainState::default()),
            critical: RwSignal::new(CriticalState::default()),
            export: RwSignal::new(ExportState::default()),
            ranks: RwSignal::new(RanksState::default()),
            rank_stack: RwSignal::new(StackState::new(RANKS_CHANNEL_BASE)),
            bridge: StoredValue::new_local(None),
            link: StoredValue::new_local(link::LinkState::default()),
        };
        ctl.bridge.set_value(Some(Bridge::new(move |msg, channel, words| ctl.receive(msg, channel, words))));
        ctl.restore_columns();
        // In a task of its own: starting a worker costs the page 5-20 ms, which made the task
        // that mounts the page a long one.
        set_timeout(
            move || {
                if let Some(bridge) = ctl.get_bridge() {
                    bridge.start();
                }
            },
            std::time::Duration::ZERO,
        );
        ctl
    }

    /// Installs `window.kinetoscope` and publishes the current state to it.
    pub fn install_test_hook(self) {
        window_hook::install(move || self.refresh_test_hook());
        self.publish();
    }

    /// Routes one worker reply: an answer or a query failure to the consumer of the channel its
    /// query was sent on (the bridge recorded it when the query was sent), load and run
    /// replies to their states; a finished load asks for the layout and re-queries the table
    /// tab shown.
    fn receive(self, msg: FromWorker, channel: Option<Channel>, words: Option<Vec<u32>>) {
        match msg {
            FromWorker::Answer { id, answer } => {
                if let Some(channel) = channel {
                    self.answer(channel, id, *answer, words);
                }
            }
            FromWorker::QueryFailed { id, message } => {
                if let Some(channel) = channel {
                    self.query_failed(channel, id, message);
                }
            }
            FromWorker::RankProgress { id, index, done_bytes, total_bytes, .. }
                if self.ranks.with_untracked(|r| r.hold == Some(id)) =>
            {
                self.ranks_progress(index, done_bytes, total_bytes);
            }
            FromWorker::RanksHeld { id, held, failed } => self.ranks_held(id, held, failed),
            FromWorker::RunStarted { .. } | FromWorker::RankProgress { .. } | FromWorker::RankLoaded { .. } => {
                self.run_progress(msg);
            }
            FromWorker::Loaded { summary, layout, steps, .. } => {
                if self.mark_steps_for_link(&steps) {
                    return;
                }
                // Published once the queries are pending, so `idle()` never resolves in between.
                self.state.update(|s| {
                    s.loaded(summary);
                    s.steps = steps;
                });
                let span_ns = self.state.with_untracked(|s| {
                    s.summary.as_ref().map_or(0, |s| (s.span_us * 1000.0).ceil() as i64)
                });
                self.charts.update(|c| c.loaded(span_ns));
                if self.run_stack_next() || self.compare_loaded() {
                    return;
                }
                let now = crate::frame::now_ms();
                if layout.groups.iter().all(|g| g.lanes.is_empty()) {
                    self.settle();
                } else {
                    // In case no frame is ever drawn (a hidden page, a failed tile query).
                    set_timeout(move || self.settle(), SETTLE_AFTER);
                }
                self.timeline.update(|t| {
                    t.loaded_at = Some(now);
                    t.set_layout(*layout);
                });
                // A shared link's view first, so the first tiles asked for are the ones drawn;
                // then tiles before tables and charts, as the worker answers in order.
                self.restore();
                self.run_loaded();
                self.fetch();
                let idle = self.tables.with_untracked(|t| t.pending.is_none());
                if let Some(query) = self.tables.with_untracked(TableState::query).filter(|_| idle) {
                    self.send(query);
                }
                self.explain_default();
                self.critical_loaded();
                self.fetch_charts();
                self.publish();
            }
            FromWorker::Failed { error, id } if self.run.with_untracked(|r| r.open) => {
                self.run_failed(&error.message);
                self.commit(|s| s.apply(FromWorker::Failed { id, error }));
            }
            msg => self.commit(|s| s.apply(msg)),
        }
    }

    fn share_url_if_loaded(self) -> Option<String> {
        self.state
            .with_untracked(|s| s.summary.is_some())
            .then(|| self.share_url())
    }

    /// An answer, to the state that sent its query on `channel` (ignored unless that state
    /// still awaits `id`: a load in between resets them).
    fn answer(self, channel: Channel, id: u32, answer: Answer, words: Option<Vec<u32>>) {
        match channel {
            Channel::Run => {
                if self.run.with_untracked(|r| r.awaits(id)) {
                    self.run_answer(id, answer);
                }
            }
            Channel::Charts => {
                if self.charts.with_untracked(|c| c.awaits(id)) {
                    self.chart_answer(id, answer);
                }
            }
            Channel::MemoryLive => self.memory_live_answer(id, Ok(answer)),
            Channel::Stack(_) | Channel::StackHover => {
                if let Some(which) = self.stack_awaiting(channel, id) {
                    self.stack_answer(which, id, answer, words);
                }
            }
            Channel::StackSelect | Channel::StackSearch => {
                if self.ranks_awaits(channel, id) {
                    self.ranks_answer(channel, id, answer);
                }
            }
            Channel::Findings => {
                if self.findings.with_untracked(|f| f.pending == Some(id)) {
                    self.findings.update(|f| {
                        f.apply(id, answer);
                    });
                    self.findings_arrived();
                    self.publish();
                }
            }
            Channel::Compare => {
                if self.compare.with_untracked(|c| c.awaits(id)) {
                    self.compare.update(|c| {
                        c.apply(id, answer);
                    });
                    self.publish();
                }
            }
            Channel::Table => {
                self.commit_tables(|t| t.apply(FromWorker::Answer { id, answer: Box::new(answer) }));
            }
            Channel::Explain => self.explain_answer(id, answer),
            Channel::Glance => {
                if self.state.with_untracked(|s| s.glance.pending == Some(id)) {
                    self.commit(|s| {
                        s.glance.apply(id, answer);
                    });
                }
            }
            Channel::Critical | Channel::PathSegments | Channel::WhatIf => self.critical_answer(id, answer),
            Channel::Report => self.export_answer(id, answer),
            Channel::Layout | Channel::Tiles | Channel::Details | Channel::Hover | Channel::Search | Channel::Counters => {
                if self.timeline.with_untracked(|t| t.awaits(id)) {
                    self.timeline_answer(id, answer, words);
                }
            }
        }
    }

    /// A timeline answer: applied, then the search followed, missing tiles asked for, and the
    /// findings asked once the first tiles are in.
    fn timeline_answer(self, id: u32, answer: Answer, words: Option<Vec<u32>>) {
        let tiles = matches!(answer, Answer::Tiles(_));
        self.timeline.update(|t| {
            t.apply(id, answer, words);
            if tiles && t.frames.tiles_ms.is_none() {
                t.frames.tiles_ms = t.loaded_at.map(|at| crate::frame::now_ms() - at);
            }
        });
        self.follow_search();
        self.fetch();
        // Findings and the glance take the worker a while: asked once the first tiles are in,
        // so they never delay the first timeline paint.
        let painted = self.timeline.with_untracked(TimelineState::has_tiles);
        let asked = self.findings.with_untracked(|f| f.list.is_some() || f.pending.is_some());
        if painted && !asked {
            self.ask(Query::Findings);
        }
        if painted && !self.state.with_untracked(|s| s.glance.asked()) {
            self.ask(Query::Glance);
        }
        self.publish();
    }

    /// A query that failed, to the state that sent it on `channel`.
    fn query_failed(self, channel: Channel, id: u32, message: String) {
        match channel {
            Channel::Run => {
                if self.run.with_untracked(|r| r.awaits(id)) {
                    self.run.update(|r| r.failed(id, message));
                    self.publish();
                }
            }
            Channel::Charts => {
                if self.charts.with_untracked(|c| c.awaits(id)) {
                    self.chart_failed(id, message);
                }
            }
            Channel::MemoryLive => self.memory_live_answer(id, Err(message)),
            Channel::Stack(_) | Channel::StackHover => {
                if let Some(which) = self.stack_awaiting(channel, id) {
                    self.stack_failed(which, id, &message);
                }
            }
            Channel::StackSelect | Channel::StackSearch => {
                if self.ranks_awaits(channel, id) {
                    self.ranks_failed(id, &message);
                }
            }
            Channel::Findings => {
                if self.findings.with_untracked(|f| f.pending == Some(id)) {
                    web_sys::console::warn_1(&format!("findings query failed: {message}").into());
                    self.findings.update(|f| f.pending = None);
                    self.publish();
                }
            }
            Channel::Compare => {
                if self.compare.with_untracked(|c| c.awaits(id)) {
                    self.compare.update(|c| {
                        c.failed(id, message);
                    });
                    self.publish();
                }
            }
            Channel::Table => self.commit_tables(|t| t.apply(FromWorker::QueryFailed { id, message })),
            Channel::Explain => self.explain_failed(id, message),
            Channel::Glance => {
                if self.state.with_untracked(|s| s.glance.pending == Some(id)) {
                    self.commit(|s| {
                        s.glance.failed(id, message);
                    });
                }
            }
            Channel::Critical | Channel::PathSegments | Channel::WhatIf => self.critical_failed(id, message),
            Channel::Report => self.export_failed(id, message),
            Channel::Layout | Channel::Tiles | Channel::Details | Channel::Hover | Channel::Search | Channel::Counters => {
                if self.timeline.with_untracked(|t| t.awaits(id)) {
                    web_sys::console::warn_1(&format!("timeline query failed: {message}").into());
                    self.timeline.update(|t| {
                        t.failed(id);
                    });
                    self.publish();
                }
            }
        }
    }

    fn get_bridge(self) -> Option<Bridge> {
        self.bridge.with_value(Clone::clone)
    }

    /// Sends `query` when a trace is loaded and returns its id.
    fn ask(self, query: Query) -> Option<u32> {
        if !self.state.with_untracked(|s| s.summary.is_some()) {
            return None;
        }
        let bridge = self.get_bridge()?;
        let id = bridge.next_query_id();
        // Recorded as pending first: a dead worker answers synchronously inside `query`.
        match query.channel() {
            Channel::Table => self.tables.update(|t| t.sent(id)),
            Channel::Findings => self.findings.update_untracked(|f| f.pending = Some(id)),
            Channel::Compare => self.compare.update(|c| c.sent(id)),
            Channel::Run => self.run.update(|r| r.sent(id)),
            Channel::Explain => self.explain.update(|e| e.sent(id)),
            Channel::Glance => self.state.update_untracked(|s| s.glance.pending = Some(id)),
            Channel::Report => self.export.update(|e| e.sent(id)),
            Channel::Critical => self.critical.update_untracked(|c| c.sent(id)),
            Channel::PathSegments => {
                if let Query::PathSegments { step, start_ns, end_ns } = &query {
                    let key = (*step, *start_ns, *end_ns);
                    self.critical.update_untracked(|c| c.segments_sent(id, key));
                }
            }
            Channel::WhatIf => {
                let now = crate::frame::now_ms();
                self.critical.update_untracked(|c| c.what_if.sent(id, now));
            }
            channel => self.timeline.update_untracked(|t| t.sent(channel, id)),
        }
        bridge.query(id, query);
        Some(id)
    }

    /// Sends a table query; its reply supersedes any pending one.
    fn send(self, query: Query) {
        self.ask(query);
        self.publish();
    }

    /// Changes the load state and publishes it to `window.kinetoscope` in the same turn.
    fn commit(self, change: impl FnOnce(&mut LoadState)) {
        self.state.update(change);
        self.publish();
    }

    /// Changes the table state and publishes it to `window.kinetoscope` in the same turn.
    fn commit_tables(self, change: impl FnOnce(&mut TableState)) {
        self.tables.update(change);
        self.publish();
    }

    /// Tells `window.kinetoscope` that the state changed (its `idle()` may resolve) and
    /// schedules the URL fragment's update.
    pub fn publish(self) {
        self.schedule_fragment();
        self.with_states(window_hook::publish);
    }

    /// Rebuilds `window.kinetoscope`'s snapshot; it asks, when read after a change.
    fn refresh_test_hook(self) {
        let link = self.share_url_if_loaded();
        self.with_states(|s| window_hook::refresh(s, link.as_deref()));
    }

    /// Runs `f` with every state, untracked.
    fn with_states<R>(self, f: impl FnOnce(&window_hook::States) -> R) -> R {
        self.state.with_untracked(|load| {
            self.tables.with_untracked(|tables| {
                self.timeline.with_untracked(|timeline| {
                    self.findings.with_untracked(|findings| {
                        self.charts.with_untracked(|charts| {
                            self.compare.with_untracked(|compare| {
                                self.stack.with_untracked(|stack| {
                                    self.run.with_untracked(|run| {
                                        self.explain.with_untracked(|explain| {
                                            self.ranks.with_untracked(|ranks| {
                                                self.rank_stack.with_untracked(|rank_stack| {
                                                    self.critical.with_untracked(|critical| {
                                                        f(&window_hook::States {
                                                            load, tables, timeline, findings, charts, compare, stack, run, explain,
                                                            ranks, rank_stack, critical,
                                                        })
                                                    })
                                                })
                                            })
                                        })
                                    })
                                })
                            })
                        })
                    })
                })
            })
        })
    }
}
