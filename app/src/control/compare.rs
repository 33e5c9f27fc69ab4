//! Comparison intents (the Compare tab, docs/viewer.md#compare-two-traces): keep the loaded trace
//! as the baseline and load a candidate (a picked file, or for `?url=CAND&base=BASE` the candidate
//! URL once BASE has loaded), ask for the comparison after each load while a baseline is kept (with
//! the Compare part of a share link being restored: by-shape toggle, sorts, the stacked timelines'
//! step and window), open the stacked timelines, re-ask on the by-shape toggle, sort the diff
//! tables, clear the baseline.

use super::Controller;
use crate::state::compare::{CompareState, DiffTable};
use crate::state::stack::StackState;
use crate::state::table::Sort;
use crate::state::table::Tab;
use leptos::prelude::*;
use protocol::Query;
use web_sys::File;

impl Controller {
    /// Keeps the loaded trace as the baseline, loads `file` as the candidate and shows the
    /// Compare tab; with nothing loaded it is a plain load.
    pub fn compare_with(self, file: File) {
        if self.keep_baseline() {
            self.select_tab(Tab::Compare);
        }
        self.load_file(file);
    }

    /// Loads `base`, keeps it as the baseline once loaded, then loads `cand` (`?url=&base=`).
    pub fn load_pair(self, base: &str, cand: &str) {
        self.compare.update(|c| c.next_url = Some(cand.to_owned()));
        self.load_url(base);
    }

    /// A load finished: starts the queued candidate (true: nothing else to ask for this load),
    /// else asks for the comparison when a baseline is kept.
    pub(super) fn compare_loaded(self) -> bool {
        let next = self.compare.try_update(|c| c.next_url.take()).flatten();
        if let Some(url) = next {
            if self.keep_baseline() {
                self.select_tab(Tab::Compare);
                self.load_url(&url);
                return true;
            }
        }
        let link = self.link.with_value(|l| l.pending.as_ref().map(|p| p.compare.clone()));
        let link = link.unwrap_or_default();
        let sort = |s: Option<(String, bool)>| s.map(|(key, desc)| Sort { key, desc });
        self.compare.update(|c| {
            if c.base.is_some() && link != Default::default() {
                c.by_shape = link.by_shape;
                c.op_sort = sort(link.sort.clone());
                c.kernel_sort = sort(link.kernel_sort.clone());
            }
        });
        if let Some(query) = self.compare.with_untracked(CompareState::query) {
            self.ask(query);
            self.stack.update(|s| {
                s.clear();
                if let Some((a, b)) = link.window {
                    s.set_window(a, b);
                }
            });
            self.stack_open(link.step);
        }
        false
    }

    /// Drops the baseline in the worker and the comparison shown.
    pub fn clear_baseline(self) {
        self.compare.update(CompareState::clear);
        self.stack.update(StackState::clear);
        self.ask(Query::ClearBaseline);
        self.publish();
    }

    /// Sets the op diff's by-shape toggle and asks for the regrouped comparison.
    pub fn set_compare_by_shape(self, on: bool) {
        let query = self.compare.try_update(|c| c.set_by_shape(on)).flatten();
        if let Some(query) = query {
            self.ask(query);
        }
        self.publish();
    }

    /// Sorts diff table `table` by column `key` (again: flips the direction).
    pub fn sort_compare(self, table: DiffTable, key: String) {
        // The diff is rebuilt in a task after the click's: rebuilt in it, it and the layout of
        // the new rows were one task of 50-60 ms on a 2-core machine.
        crate::deferred::next_task(move || {
            self.compare.update(|c| c.toggle_sort(table, &key));
            self.publish();
        });
    }

    /// Keeps the loaded trace as the baseline; false when nothing is loaded.
    pub(super) fn keep_baseline(self) -> bool {
        let name = self
            .state
            .with_untracked(|s| s.summary.as_ref().map(|x| x.file_name.clone()));
        let Some(name) = name else {
            return false;
        };
        // Recorded first so the query's pending id survives `keep`.
        self.compare.update(|c| c.keep(&name));
        self.ask(Query::KeepAsBaseline).is_some()
    }
}
