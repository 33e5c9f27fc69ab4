//! Starting loads: a URL (http(s) or relative) or a local file; a new load cancels the running
//! one and clears the tables and the timeline.

use super::Controller;
use crate::bridge::source;
use crate::state::table::TableState;
use protocol::LoadError;
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

    /// Loads the built-in demo from `url`, marked as the demo (the page says how to open a
    /// trace of one's own).
    pub fn load_demo(self, url: &str) {
        self.load_url(url);
        self.state.update(|s| s.demo = true);
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

    /// Ends a load of `name` at once, before any byte is read, with an error of `kind` saying
    /// `message` (nothing to open in a folder, a posted trace the page cannot take).
    pub(super) fn refuse_load(self, name: &str, kind: &str, message: String) {
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        self.begin(name);
        self.end_run();
        let id = bridge.begin();
        bridge.fail(id, LoadError { kind: kind.into(), message, offset: None, line: None, column: None });
    }

    /// Marks the loaded trace's steps by the annotation `marker` (`None`: `ProfilerStep#N`):
    /// the worker answers like a load, and the current view (tab, window, selection) is
    /// restored on it as a share link would be.
    pub fn set_step_marker(self, marker: Option<String>) {
        let mut link = self.current_link();
        link.marker.clone_from(&marker);
        self.restore_later(link);
        self.remark_steps(marker);
    }

    /// Measures the loaded trace against the GPU peaks `spec` (`bf16=…,fp32=…,gbps=…`; `None`:
    /// the peak table's): like [`Controller::set_step_marker`], the worker answers like a load
    /// and the current view is restored on it, so tables and charts refresh.
    pub fn set_peaks(self, spec: Option<String>) {
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        self.restore_later(self.current_link());
        let name = self.state.with_untracked(|s| s.name.clone()).unwrap_or_default();
        let id = bridge.begin();
        self.begin(&name);
        bridge.set_peaks(id, spec);
    }

    /// A load arrived while a share link waits with another step marker: has the worker
    /// re-mark the steps (the link is restored on that answer); true when it did.
    pub(super) fn mark_steps_for_link(self, loaded: &protocol::StepMarking) -> bool {
        let wanted = self.link.with_value(|l| l.pending.as_ref().map(|p| p.marker.clone()));
        match wanted.filter(|m| *m != loaded.marker) {
            Some(marker) => {
                self.remark_steps(marker);
                true
            }
            None => false,
        }
    }

    /// Sends `SetStepMarker` as a new load of the same trace, clearing what depends on it.
    fn remark_steps(self, marker: Option<String>) {
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        let name = self.state.with_untracked(|s| s.name.clone()).unwrap_or_default();
        let id = bridge.begin();
        self.begin(&name);
        bridge.set_step_marker(id, marker);
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
