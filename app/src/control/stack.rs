//! Stacked-timeline intents (the compare view): open both panels at a step, zoom / pan / scroll
//! them together, hover, and route their answers. Each panel's layout and tiles go on its own
//! bridge channel (`StackBase`, `StackCand`; hovers on `StackHover`), so the stack never supersedes
//! the main timeline's queries, nor one panel the other's.

use super::Controller;
use crate::state::stack::{Pane, StackState};
use crate::state::timeline::TimelineState;
use leptos::prelude::*;
use protocol::{Answer, Channel, Query};

impl Controller {
    /// (Re)opens the stacked timelines aligned at step `step` (`None`: the first common step):
    /// resets both panels and asks for their aligned layouts.
    pub fn stack_open(self, step: Option<u64>) {
        if self.compare.with_untracked(|c| c.base.is_none()) {
            return;
        }
        let Some(queries) = self.stack.try_update(|s| s.open(step)) else { return };
        for (pane, query) in queries {
            self.ask_stack(pane, query, |t, id| t.sent(Channel::Layout, id));
        }
        self.publish();
    }

    /// The step picker changed.
    pub fn set_stack_step(self, step: u64) {
        self.stack_open(Some(step));
    }

    /// Sends `query` for panel `pane`, recording it in the panel with `record` first (a dead
    /// worker answers inside `query_on`).
    fn ask_stack(self, pane: Pane, query: Query, record: impl FnOnce(&mut TimelineState, u32)) {
        if self.state.with_untracked(|s| s.summary.is_none()) {
            return;
        }
        let Some(bridge) = self.get_bridge() else { return };
        let id = bridge.next_query_id();
        let channel = match (&query, pane) {
            (Query::Hover { .. }, _) => Channel::StackHover,
            (_, Pane::Base) => Channel::Stack(0),
            (_, Pane::Cand) => Channel::Stack(1),
        };
        self.stack.update_untracked(|s| record(s.pane_mut(pane), id));
        bridge.query_on(channel, id, query);
    }

    /// Asks for the tiles the panels lack.
    fn stack_fetch(self) {
        for (pane, request) in self.stack.with_untracked(StackState::tile_requests) {
            let query = Query::Tiles {
                trace: pane.trace(),
                lanes: request.lanes.clone(),
                start_ns: request.start_ns,
                end_ns: request.end_ns,
                resolution_ns: request.resolution_ns,
                search: None,
            };
            self.ask_stack(pane, query, |t, id| t.sent_tiles(id, request));
        }
    }

    /// Applies a view change to the stack, fetches what it needs and publishes.
    pub fn stack_view(self, change: impl FnOnce(&mut StackState)) {
        self.stack.update(change);
        self.stack_fetch();
        self.publish();
    }

    /// Zooms both panels by `factor` (< 1: in) around pixel `anchor`.
    pub fn stack_zoom(self, factor: f64, anchor: f64) {
        self.stack_view(|s| s.zoom(factor, anchor));
    }

    /// Pans both panels by `dx` pixels.
    pub fn stack_pan(self, dx: f64) {
        self.stack_view(|s| s.pan_px(dx));
    }

    /// Scrolls panel `pane`'s lanes by `dy` pixels.
    pub fn stack_scroll(self, pane: Pane, dy: f64) {
        self.stack_view(|s| s.pane_mut(pane).scroll_by(dy));
    }

    /// Shows the longer of the two aligned steps again.
    pub fn stack_reset(self) {
        self.stack_view(StackState::reset);
    }

    /// Keys and the wheel go to the stack (`true`, the pointer is over it) or the main timeline.
    pub fn stack_focus(self, active: bool) {
        if self.stack.with_untracked(|s| s.active != active) {
            self.stack.update_untracked(|s| s.active = active);
        }
    }

    /// True when the keys act on the stack.
    pub fn stack_active(self) -> bool {
        self.stack.with_untracked(|s| s.active && s.opened)
    }

    /// The pointer is at (`x`, `y`) of panel `pane`'s drawing area (below its ruler).
    pub fn stack_hover(self, pane: Pane, x: f64, y: f64) {
        let other = match pane {
            Pane::Base => Pane::Cand,
            Pane::Cand => Pane::Base,
        };
        let ask = self
            .stack
            .try_update(|s| {
                s.anchor = Some(x);
                // One hover channel for both panels: the other panel's pending hover is dropped.
                let o = s.pane_mut(other);
                o.hover = None;
                o.forget(Channel::Hover);
                s.pane_mut(pane).hover_at(x, y)
            })
            .flatten();
        if let Some(slice) = ask {
            self.ask_stack(pane, Query::Hover { trace: pane.trace(), slice }, |t, id| t.sent(Channel::Hover, id));
        }
        self.publish();
    }

    /// The pointer left the stack.
    pub fn stack_hover_end(self) {
        self.stack.update(|s| {
            s.anchor = None;
            for p in &mut s.panes {
                p.hover = None;
                p.forget(Channel::Hover);
            }
        });
        self.publish();
    }

    /// The panels' drawing area is `width` wide, each panel's tracks `height` high.
    pub fn stack_resize(self, width: f64, height: f64) {
        self.stack_view(|s| s.resize(width, height));
    }

    /// True when query `id` belongs to a panel.
    pub(super) fn stack_awaits(self, id: u32) -> bool {
        self.stack.with_untracked(|s| s.awaiting(id).is_some())
    }

    /// A panel's answer arrived.
    pub(super) fn stack_answer(self, id: u32, answer: Answer, words: Option<Vec<u32>>) {
        self.stack.update(|s| {
            s.apply(id, answer, words);
        });
        self.stack_fetch();
        self.publish();
    }

    /// A panel's query failed (asked again on the next view change).
    pub(super) fn stack_failed(self, id: u32, message: &str) {
        web_sys::console::warn_1(&format!("stacked timeline query failed: {message}").into());
        self.stack.update(|s| {
            if let Some(p) = s.awaiting(id) {
                s.pane_mut(p).failed(id);
            }
        });
        self.publish();
    }
}
