//! The charts tab: asks the worker for the chart data one query at a time on the charts' own
//! channel (so the table panel and the timeline's counter tracks never supersede it), and
//! switches the histogram's kernel. The main thread only draws what comes back (`charts`).

use super::Controller;
use crate::state::table::Tab;
use leptos::prelude::*;
use crate::state::charts::StepStack;
use crate::state::memory::LiveKey;
use protocol::{Answer, Channel};

impl Controller {
    /// Sends the next chart query when the charts tab is shown and nothing is in flight.
    pub(super) fn fetch_charts(self) {
        if self.tables.with_untracked(|t| t.tab) != Tab::Charts {
            return;
        }
        let Some(query) = self.charts.with_untracked(|c| c.next_query()) else {
            return;
        };
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        let id = bridge.next_query_id();
        // Recorded as pending first: a dead worker answers synchronously inside `query_on`.
        self.charts.update(|c| c.sent(id));
        bridge.query_on(Channel::Charts, id, query);
        self.publish();
    }

    /// Applies a chart answer and asks for what is still missing.
    pub(super) fn chart_answer(self, id: u32, answer: Answer) {
        self.charts.update(|c| c.apply(id, answer));
        self.fetch_charts();
        self.publish();
    }

    /// A chart query failed: its chart stays empty with the message shown.
    pub(super) fn chart_failed(self, id: u32, message: String) {
        self.charts.update(|c| c.failed(id, message));
        self.fetch_charts();
        self.publish();
    }

    /// Shows kernel `name`'s duration histogram.
    pub fn select_chart_kernel(self, name: String) {
        self.charts.update(|c| c.select_kernel(name));
        self.fetch_charts();
        self.publish();
    }

    /// Stacks the step bars by the mode whose key is `key` (the select's value).
    pub fn stack_steps(self, key: String) {
        if let Some(stack) = StepStack::from_key(&key) {
            self.charts.update(|c| c.stack_steps(stack));
            self.publish();
        }
    }

    /// Shows the memory chart of device `label`.
    pub fn pick_memory_device(self, label: String) {
        if self.charts.try_update(|c| c.memory.pick_device(label)).unwrap_or(false) {
            self.fetch_charts();
        }
        self.publish();
    }

    /// The pointer is over the memory chart at `at_ns`: asks for the allocations live then
    /// (its own channel: a newer moment supersedes a pending one).
    pub fn memory_hover(self, at_ns: i64) {
        let Some(query) = self.charts.with_untracked(|c| c.memory.live_query(at_ns)) else {
            return;
        };
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        let id = bridge.next_query_id();
        self.charts.update(|c| c.memory.hover_sent(id));
        bridge.query_on(Channel::MemoryLive, id, query);
        self.publish();
    }

    /// Lists the peak's live allocations again.
    pub fn memory_back_to_peak(self) {
        self.charts.update(|c| c.memory.back_to_peak());
        self.publish();
    }

    /// Sorts the live allocations by `key`.
    pub fn sort_memory_live(self, key: LiveKey) {
        self.charts.update(|c| c.memory.sort_by(key));
        self.publish();
    }

    /// A live-allocations answer (or failure) to query `id`.
    pub(super) fn memory_live_answer(self, id: u32, answer: Result<Answer, String>) {
        self.charts.update(|c| match answer {
            Ok(Answer::MemoryLive(live)) => c.memory.apply_live(id, *live),
            _ => c.memory.live_failed(id),
        });
        self.publish();
    }
}
