//! Table tabs: switching tabs, the by-shape toggle, the scope (whole trace, a step, the selected
//! range), sorting, filtering and the columns shown; each change that needs new data sends the tab's query (the
//! charts tab asks for its own, see `charts`).

use super::Controller;
use crate::state::columns::NARROW_PX;
use crate::state::table::{Scope, Tab};
use leptos::prelude::*;

/// The localStorage key of the column choice of tables of `kind`.
fn storage_key(kind: &str) -> String {
    format!("kinetoscope.columns.{kind}")
}

/// The page's localStorage, when the browser allows it.
fn local_storage() -> Option<web_sys::Storage> {
    window().local_storage().ok().flatten()
}

impl Controller {
    /// Switches tabs and asks for the new tab's table.
    pub fn select_tab(self, tab: Tab) {
        let mut query = None;
        self.commit_tables(|t| query = t.select(tab));
        if let Some(query) = query {
            self.send(query);
        }
        self.explain_default();
        self.critical_fetch();
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

    /// Sets the work per step (batch size, tokens) and asks for the Steps table with its rates.
    pub fn set_workload(self, workload: protocol::Workload) {
        let mut query = None;
        self.commit_tables(|t| query = t.set_workload(workload));
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

    /// Shows or hides column `key` of the table shown, and keeps the choice in localStorage
    /// (`kinetoscope.columns.<kind>`), so the next visit shows the same columns.
    pub fn toggle_column(self, key: String) {
        let Some(kind) = self.tables.with_untracked(|t| t.data.as_ref().map(|d| d.kind.clone())) else {
            return;
        };
        self.commit_tables(|t| t.columns.toggle(&kind, &key));
        let stored = self.tables.with_untracked(|t| t.columns.stored(&kind));
        if let (Some(stored), Some(storage)) = (stored, local_storage()) {
            // A full or refused storage only loses the choice for the next visit.
            let _ = storage.set_item(&storage_key(&kind), &stored);
        }
    }

    /// Column `key` of the table shown was dragged to `ch` wide.
    pub fn resize_column(self, key: String, ch: usize) {
        let Some(kind) = self.tables.with_untracked(|t| t.data.as_ref().map(|d| d.kind.clone())) else {
            return;
        };
        self.commit_tables(|t| t.columns.resize(&kind, &key, ch));
    }

    /// Takes the tables' column defaults from the page's width and the choices kept in
    /// localStorage (at start-up).
    pub(super) fn restore_columns(self) {
        let width = window().inner_width().ok().and_then(|w| w.as_f64());
        let storage = local_storage();
        self.tables.update(|t| {
            t.columns.narrow = width.is_some_and(|w| w < NARROW_PX);
            for kind in ["ops", "kernels"] {
                let stored = storage.as_ref().and_then(|s| s.get_item(&storage_key(kind)).ok().flatten());
                if let Some(stored) = stored {
                    t.columns.restore(kind, &stored);
                }
            }
        });
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

    /// Collapses or expands row `k` of the module tree.
    pub fn toggle_module(self, k: usize) {
        self.commit_tables(|t| {
            if let Some(tree) = &mut t.modules {
                tree.toggle(k);
            }
        });
    }

    /// Collapses (`true`) or expands every row of the module tree.
    pub fn collapse_modules(self, collapsed: bool) {
        self.commit_tables(|t| {
            if let Some(tree) = &mut t.modules {
                tree.set_all(collapsed);
            }
        });
    }

    /// A module row was clicked: its earliest call in the scope is selected and brought into
    /// view, and its frame name becomes the timeline search, highlighting every call.
    pub fn pick_module(self, k: usize) {
        let Some(row) = self.tables.with_untracked(|t| t.modules.as_ref().and_then(|m| m.data.rows.get(k).cloned())) else {
            return;
        };
        self.search(format!("nn.Module: {}", row.name));
        if let Some(first) = row.first {
            self.select_ref(first);
        }
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
