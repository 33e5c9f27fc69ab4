//! Critical path intents: the paths (every step's shares) are asked once per load when the
//! Steps tab or the timeline's toggle first needs them; the toggle (button, `C`) outlines the
//! path of the step picked on the Steps tab (every step around the view when none is), whose
//! slices are asked as the overlay needs them; the What if panel's edits are sent to the
//! worker, which recomputes every step from its cached graphs (latest wins).

use super::Controller;
use crate::state::critical::CriticalState;
use crate::state::table::Tab;
use leptos::prelude::*;
use protocol::{Answer, Query};

impl Controller {
    /// Toggles the timeline's critical path overlay.
    pub fn toggle_critical(self) {
        self.critical.update(|c| c.shown = !c.shown);
        self.critical_changed();
    }

    /// Sets the overlay's toggle (a share link) without asking for anything until loaded.
    pub(super) fn set_critical_shown(self, shown: bool) {
        self.critical.update(|c| c.shown = shown);
        self.critical_changed();
    }

    /// Shows the path of step `step` only (`None`: every step).
    pub fn critical_step(self, step: Option<u64>) {
        if self.critical.with_untracked(|c| c.step) != step {
            self.critical.update(|c| c.step = step);
            self.critical_changed();
        }
    }

    /// A step's bound-by bar was clicked: its path is the one shown, and the timeline shows
    /// the step.
    pub fn critical_pick(self, step: Option<u64>) {
        self.critical_step(step);
        let span = self.critical.with_untracked(|c| {
            let d = c.data.as_ref()?;
            d.steps.iter().find(|p| step.is_some() && p.step == step).map(|p| (p.start_ns, p.end_ns))
        });
        if let Some((a, b)) = span {
            self.view(|t| t.view.show(a as f64, b as f64));
        }
    }

    /// Asks for the paths if the Steps tab or the toggle needs them, and for the path's
    /// slices the overlay lacks in the current view.
    pub(super) fn critical_fetch(self) {
        let needed = self.critical.with_untracked(|c| c.shown) || self.tables.with_untracked(|t| t.tab == Tab::Steps);
        if let Some(query) = self.critical.with_untracked(CriticalState::ask).filter(|_| needed) {
            self.ask(query);
        }
        let view = self.timeline.with_untracked(|t| (t.view.start, t.view.end));
        if let Some(query) = self.critical.with_untracked(|c| c.segments_query(view)) {
            self.ask(query);
        }
    }

    /// A new load (or step marking): the paths belonged to the previous session.
    pub(super) fn critical_loaded(self) {
        self.critical.update(CriticalState::reset);
        self.critical_changed();
    }

    /// Adds what-if edit `edit` and asks for the answer.
    pub fn what_if_add(self, edit: String) {
        if let Some(query) = self.critical.try_update(|c| c.what_if.add(&edit)).flatten() {
            self.send_what_if(query);
        }
        self.publish();
    }

    /// Removes what-if edit `k` and asks again (nothing when none is left).
    pub fn what_if_remove(self, k: usize) {
        if let Some(query) = self.critical.try_update(|c| c.what_if.remove(k)).flatten() {
            self.send_what_if(query);
        }
        self.publish();
    }

    fn send_what_if(self, query: Query) {
        // `ask` records the id and the time sent (before sending: a dead worker answers at once).
        self.ask(query);
    }

    /// The answer to a path or what-if query `id`.
    pub(super) fn critical_answer(self, id: u32, answer: Answer) {
        if !self.critical.with_untracked(|c| c.awaits(id)) {
            return;
        }
        let now = crate::frame::now_ms();
        if self.critical.try_update(|c| c.apply(id, answer, now)).unwrap_or(false) {
            // The paths just in may let the overlay ask for its slices.
            self.critical_fetch();
            self.overlay_changed();
            self.publish();
        }
    }

    /// Path or what-if query `id` failed.
    pub(super) fn critical_failed(self, id: u32, message: String) {
        if self.critical.try_update(|c| c.failed(id, message)).unwrap_or(false) {
            self.publish();
        }
    }

    /// The toggle or step changed: ask for the paths if needed, redraw.
    fn critical_changed(self) {
        self.critical_fetch();
        self.overlay_changed();
    }

    /// Rebuilds the overlay the timeline draws.
    fn overlay_changed(self) {
        let overlay = self.critical.with_untracked(CriticalState::overlay);
        let same = self.timeline.with_untracked(|t| t.critical == overlay);
        if !same {
            self.view(|t| t.critical = overlay);
        } else {
            self.publish();
        }
    }
}
