//! The root component and its controller: starts the first load, routes files and URLs to the
//! bridge, applies worker replies to the [`LoadState`] and [`TableState`] signals, and sends
//! table queries (tab switch, by-shape toggle, and again after a new load on a table tab).
//!
//! Every state change goes through [`Controller::commit`] / [`Controller::commit_tables`], which
//! also publish `window.kinetoscope` synchronously (see `testing`). With no `?url=` the page loads
//! [`DEMO_URL`]; a new load always supersedes the running one (latest wins, in the bridge), and a
//! new query supersedes the pending one.

use crate::bridge::{source, Bridge};
use crate::panels::{
    DropZone, ErrorPanel, OpenButton, ProgressPanel, SummaryPanel, TablePanel, Tabs,
};
use crate::state::table::{Tab, TableState};
use crate::state::LoadState;
use crate::testing;
use leptos::prelude::*;
use leptos::task::spawn_local;
use protocol::{FromWorker, Query};
use web_sys::File;

/// The trace shown when the page has no `?url=`.
const DEMO_URL: &str = "./public/demo.pt.trace.json.gz";

/// The page: header with the open button, drop overlay, progress, error, tabs, summary and tables.
#[component]
pub fn App() -> impl IntoView {
    let ctl = Controller::new();
    ctl.load_url(&start_url());
    let on_file = Callback::new(move |file: File| ctl.load_file(file));
    let on_select = Callback::new(move |tab: Tab| ctl.select_tab(tab));
    let on_filter = Callback::new(move |text: String| ctl.commit_tables(|t| t.filter = text));
    let on_by_shape = Callback::new(move |on: bool| ctl.set_by_shape(on));
    let on_sort = Callback::new(move |key: String| ctl.commit_tables(|t| t.toggle_sort(&key)));
    let state = ctl.state.read_only();
    let tables = ctl.tables.read_only();
    let loaded = Memo::new(move |_| state.with(|s| s.summary.is_some()));
    let on_summary = Memo::new(move |_| tables.with(|t| t.tab == Tab::Summary));
    view! {
        <header class="top">
            <h1>"Kinetoscope"</h1>
            <OpenButton on_file=on_file />
        </header>
        <DropZone on_file=on_file />
        <main>
            <ProgressPanel state=state />
            <ErrorPanel state=state />
            <Show when=move || loaded.get()>
                <Tabs tables=tables on_select=on_select />
            </Show>
            <Show when=move || on_summary.get()>
                <SummaryPanel state=state />
            </Show>
            <Show when=move || loaded.get()>
                <TablePanel tables=tables on_filter=on_filter on_by_shape=on_by_shape on_sort=on_sort />
            </Show>
        </main>
    }
}

/// Owns the load and table state and the worker bridge; cheap to copy into handlers.
#[derive(Clone, Copy)]
struct Controller {
    state: RwSignal<LoadState>,
    tables: RwSignal<TableState>,
    bridge: StoredValue<Option<Bridge>, LocalStorage>,
}

impl Controller {
    /// Spawns the worker and installs `window.kinetoscope`.
    fn new() -> Self {
        let state = RwSignal::new(LoadState::default());
        let tables = RwSignal::new(TableState::default());
        let bridge = StoredValue::new_local(None);
        let ctl = Controller {
            state,
            tables,
            bridge,
        };
        let spawned = Bridge::spawn(move |msg| ctl.receive(msg));
        bridge.set_value(Some(spawned));
        testing::install();
        ctl.publish();
        ctl
    }

    /// Routes one worker reply: tables to the table state, the rest to the load state; a
    /// finished load re-queries the table tab shown.
    fn receive(self, msg: FromWorker) {
        match msg {
            FromWorker::Table { .. } | FromWorker::QueryFailed { .. } => {
                self.commit_tables(|t| t.apply(msg));
            }
            FromWorker::Loaded { .. } => {
                // Published once the query is pending, so `idle()` never resolves in between.
                self.state.update(|s| s.apply(msg));
                if let Some(query) = self.tables.with_untracked(TableState::query) {
                    self.send(query);
                }
                self.publish();
            }
            msg => self.commit(|s| s.apply(msg)),
        }
    }

    fn get_bridge(self) -> Option<Bridge> {
        self.bridge.with_value(Clone::clone)
    }

    /// Loads `url` (http(s) or relative), cancelling any running load.
    fn load_url(self, url: &str) {
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        let target = source::resolve_url(url);
        let name = target.as_ref().map_or(url, |t| t.name.as_str());
        self.begin(name);
        let id = bridge.begin();
        match target {
            Ok(target) => spawn_local(source::stream_url(bridge, id, target)),
            Err(error) => bridge.fail(id, error),
        }
    }

    /// Loads a local file, cancelling any running load.
    fn load_file(self, file: File) {
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        self.begin(&file.name());
        let id = bridge.begin();
        spawn_local(source::stream_file(bridge, id, file));
    }

    fn begin(self, name: &str) {
        self.tables.update(TableState::reset);
        self.commit(|s| s.begin(name));
    }

    /// Switches tabs and asks for the new tab's table.
    fn select_tab(self, tab: Tab) {
        let mut query = None;
        self.commit_tables(|t| query = t.select(tab));
        if let Some(query) = query {
            self.send(query);
        }
    }

    /// Sets the ops' by-shape toggle and asks for the regrouped table.
    fn set_by_shape(self, on: bool) {
        let mut query = None;
        self.commit_tables(|t| query = t.set_by_shape(on));
        if let Some(query) = query {
            self.send(query);
        }
    }

    /// Sends `query` when a trace is loaded; its reply supersedes any pending one.
    fn send(self, query: Query) {
        if !self.state.with_untracked(|s| s.summary.is_some()) {
            return;
        }
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        // Marked pending first: a dead worker answers synchronously inside `query`.
        let id = bridge.next_query_id();
        self.commit_tables(|t| t.sent(id));
        bridge.query(id, query);
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

    fn publish(self) {
        self.state
            .with_untracked(|s| self.tables.with_untracked(|t| testing::publish(s, t)));
    }
}

/// The `?url=` query parameter, or the demo trace.
fn start_url() -> String {
    let search = window().location().search().unwrap_or_default();
    web_sys::UrlSearchParams::new_with_str(&search)
        .ok()
        .and_then(|params| params.get("url"))
        .filter(|url| !url.trim().is_empty())
        .unwrap_or_else(|| DEMO_URL.to_owned())
}
