//! The root component and its controller: starts the first load, routes files and URLs to the
//! bridge, and applies worker replies to the one [`LoadState`] signal.
//!
//! Every state change goes through [`Controller::commit`], which also publishes
//! `window.kinetoscope` synchronously (see `testing`). With no `?url=` the page loads
//! [`DEMO_URL`]; a new load always supersedes the running one (latest wins, in the bridge).

use crate::bridge::{source, Bridge};
use crate::panels::{DropZone, ErrorPanel, OpenButton, ProgressPanel, SummaryPanel};
use crate::state::LoadState;
use crate::testing;
use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::File;

/// The trace shown when the page has no `?url=`.
const DEMO_URL: &str = "./public/demo.pt.trace.json.gz";

/// The page: header with the open button, drop overlay, progress, error and summary panels.
#[component]
pub fn App() -> impl IntoView {
    let ctl = Controller::new();
    ctl.load_url(&start_url());
    let on_file = Callback::new(move |file: File| ctl.load_file(file));
    let state = ctl.state.read_only();
    view! {
        <header class="top">
            <h1>"Kinetoscope"</h1>
            <OpenButton on_file=on_file />
        </header>
        <DropZone on_file=on_file />
        <main>
            <ProgressPanel state=state />
            <ErrorPanel state=state />
            <SummaryPanel state=state />
        </main>
    }
}

/// Owns the load state and the worker bridge; cheap to copy into handlers.
#[derive(Clone, Copy)]
struct Controller {
    state: RwSignal<LoadState>,
    bridge: StoredValue<Bridge, LocalStorage>,
}

impl Controller {
    /// Spawns the worker and installs `window.kinetoscope`.
    fn new() -> Self {
        let state = RwSignal::new(LoadState::default());
        let bridge = Bridge::spawn(move |msg| Self::commit(state, |s| s.apply(msg)));
        state.with_untracked(testing::install);
        Controller {
            state,
            bridge: StoredValue::new_local(bridge),
        }
    }

    /// Loads `url` (http(s) or relative), cancelling any running load.
    fn load_url(self, url: &str) {
        let target = source::resolve_url(url);
        let name = target.as_ref().map_or(url, |t| t.name.as_str());
        Self::commit(self.state, |s| s.begin(name));
        let bridge = self.bridge.get_value();
        let id = bridge.begin();
        match target {
            Ok(target) => spawn_local(source::stream_url(bridge, id, target)),
            Err(error) => bridge.fail(id, error),
        }
    }

    /// Loads a local file, cancelling any running load.
    fn load_file(self, file: File) {
        Self::commit(self.state, |s| s.begin(&file.name()));
        let bridge = self.bridge.get_value();
        let id = bridge.begin();
        spawn_local(source::stream_file(bridge, id, file));
    }

    /// Changes the state and publishes it to `window.kinetoscope` in the same turn.
    fn commit(state: RwSignal<LoadState>, change: impl FnOnce(&mut LoadState)) {
        state.update(change);
        state.with_untracked(testing::publish);
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
