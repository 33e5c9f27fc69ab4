//! Starting loads: a URL (http(s) or relative) or a local file; a new load cancels the running
//! one and clears the tables and the timeline.

use super::Controller;
use crate::bridge::source;
use crate::state::table::TableState;
use leptos::prelude::*;
use web_sys::File;

impl Controller {
    /// Loads `url` (http(s) or relative), cancelling any running load.
    pub fn load_url(self, url: &str) {
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        let target = source::resolve_url(url);
        let name = target.as_ref().map_or(url, |t| t.name.as_str());
        self.begin(name);
        self.end_run();
        self.link.update_value(|l| l.local_file = false);
        let id = bridge.begin();
        match target {
            Ok(target) => bridge.fetch(id, &target),
            Err(error) => bridge.fail(id, error),
        }
    }

    /// Loads a local file, cancelling any running load.
    pub fn load_file(self, file: File) {
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        self.begin(&file.name());
        self.end_run();
        self.link.update_value(|l| l.local_file = true);
        let id = bridge.begin();
        bridge.read(id, file);
    }

    /// Cancels the running load (the worker is restarted if it was parsing).
    pub fn cancel_load(self) {
        if let Some(bridge) = self.get_bridge() {
            bridge.cancel();
        }
    }

    /// Builds the panels below the timeline once the first frame after a load is drawn (or
    /// when nothing will be: see the `Loaded` handler).
    pub(super) fn settle(self) {
        if self.state.with_untracked(|s| s.summary.is_some() && !s.settled) {
            self.commit(|s| s.settled = true);
        }
    }

    pub(super) fn begin(self, name: &str) {
        self.tables.update(TableState::reset);
        self.timeline.update(|t| t.reset());
        self.findings.update(|f| f.reset());
        self.explain_reset();
        // A report still being built belongs to the previous trace: never saved under the new name.
        self.export.set(crate::state::export::ExportState::default());
        self.charts.update(|c| c.loaded(0));
        self.stack.update(crate::state::stack::StackState::clear);
        self.commit(|s| s.begin(name));
    }
}
