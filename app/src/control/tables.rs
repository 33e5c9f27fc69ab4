//! Table tabs: switching tabs, the by-shape toggle, the scope (whole trace, a step, the selected
//! range), sorting and filtering; each change that needs new data sends the tab's query (the
//! charts tab asks for its own, see `charts`).

use super::Controller;
use crate::state::table::{Scope, Tab};
use leptos::prelude::*;

impl Controller {
    /// Switches tabs and asks for the new tab's table.
    pub fn select_tab(self, tab: Tab) {
        let mut query = None;
        self.commit_tables(|t| query = t.select(tab));
        if let Some(query) = query {
            self.send(query);
        }
        self.explain_default();
        self.fetch_charts();
    }

    /// Sets the ops' by-shape toggle and asks for the regrouped table.
    pub fn set_by_shape(self, on: bool) {
        let mut query = None;
        self.commit_tables(|t| query = t.set_by_shape(on));
        if let Some(query) = query {
            self.send(query);
        }
    }

    /// Rescopes the op and kernel tables and asks for the current tab's table again.
    pub fn set_scope(self, scope: Scope) {
        let mut query = None;
        self.commit_tables(|t| query = t.set_scope(scope));
        if let Some(query) = query {
            self.send(query);
        }
    }

    /// Sets the name filter.
    pub fn set_filter(self, text: String) {
        self.commit_tables(|t| t.filter = text);
    }

    /// Sorts by column `key` (again: flips the direction).
    pub fn sort_by(self, key: String) {
        // In a task after the click's, so the click and the new rows' layout are not one long
        // task (as the compare diff's sort, `sort_compare`).
        crate::deferred::next_task(move || self.commit_tables(|t| t.toggle_sort(&key)));
    }

    /// A table row was clicked: its name becomes the timeline search, highlighting every
    /// occurrence.
    pub fn highlight_name(self, name: String) {
        self.search(name);
    }

    /// The selected range changed: a table scoped to the range follows it.
    pub(super) fn range_changed(self, range: Option<(i64, i64)>) {
        let scope = self.tables.with_untracked(|t| t.scope.clone());
        match (scope, range) {
            (Scope::Range(..), None) => self.set_scope(Scope::Trace),
            (_, Some((a, b))) => self.set_scope(Scope::Range(a, b)),
            _ => {}
        }
    }
}
