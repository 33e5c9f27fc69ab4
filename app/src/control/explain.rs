//! Steps tab explanation intents: the slowest step is explained when the tab opens, a clicked
//! step row is explained instead, and an explanation's link selects its evidence on the
//! timeline (outlined, as a finding's evidence is).

use super::Controller;
use crate::state::explain::ExplainState;
use crate::state::table::Tab;
use leptos::prelude::*;
use protocol::{Answer, SliceRef};

impl Controller {
    /// Explains `ProfilerStep#step` (`None`: the slowest), unless it is shown or awaited.
    pub fn explain_step(self, step: Option<u64>) {
        // A step picked on the Steps tab is the one whose critical path the timeline shows.
        if step.is_some() {
            self.critical_step(step);
        }
        if let Some(query) = self.explain.try_update(|e| e.ask(step)).flatten() {
            self.ask(query);
        }
        self.publish();
    }

    /// On the Steps tab with nothing asked yet (it just opened, or a trace just loaded):
    /// explains the slowest step.
    pub(super) fn explain_default(self) {
        let steps_tab = self.tables.with_untracked(|t| t.tab == Tab::Steps);
        if steps_tab && self.explain.with_untracked(|e| e.asked.is_none()) {
            self.explain_step(None);
        }
    }

    /// Selects the evidence `slice` on the timeline, outlined.
    pub fn select_evidence(self, slice: SliceRef) {
        self.view(|t| t.highlight = vec![slice.clone()]);
        self.select_ref(slice);
    }

    /// The answer to explanation query `id`.
    pub(super) fn explain_answer(self, id: u32, answer: Answer) {
        if self
            .explain
            .try_update(|e| e.apply(id, answer))
            .unwrap_or(false)
        {
            self.publish();
        }
    }

    /// Explanation query `id` failed.
    pub(super) fn explain_failed(self, id: u32, message: String) {
        if self
            .explain
            .try_update(|e| e.failed(id, message))
            .unwrap_or(false)
        {
            self.publish();
        }
    }

    /// A new load: the explanation belonged to the previous trace.
    pub(super) fn explain_reset(self) {
        self.explain.update(ExplainState::reset);
    }
}
