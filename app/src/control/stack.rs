//! Stacked-timeline intents, for both stacked views ([`StackId`]: the Compare tab's and the Run
//! tab's ranks timeline): open the panels, zoom / pan / scroll them together, hover, and route
//! their answers. Each panel's layout and tiles go on its own bridge channel
//! ([`StackState::channel`]; hovers on `StackHover`), so a stack never supersedes the main
//! timeline's queries, nor one panel another's, nor one stack the other's.

use super::Controller;
use crate::state::stack::{StackId, StackState, RANKS_CHANNEL_BASE};
use crate::state::timeline::TimelineState;
use leptos::prelude::*;
use protocol::{Answer, Channel, Query};

impl Controller {
    /// The state of stack `which`.
    pub fn stack_of(self, which: StackId) -> RwSignal<StackState> {
        match which {
            StackId::Compare => self.stack,
            StackId::Ranks => self.rank_stack,
        }
    }

    /// (Re)opens the compare view's stacked timelines aligned at step `step` (`None`: the first
    /// common step): resets both panels and asks for their aligned layouts.
    pub fn stack_open(self, step: Option<u64>) {
        if self.compare.with_untracked(|c| c.base.is_none()) {
            return;
        }
        let Some(queries) = self.stack.try_update(|s| s.open_compare(step)) else { return };
        self.stack_layouts(StackId::Compare, queries);
    }

    /// Sends the layout queries [`StackState::open`] returned.
    pub(super) fn stack_layouts(self, which: StackId, queries: Vec<(usize, Query)>) {
        for (i, query) in queries {
            self.ask_stack(which, i, query, |t, id| t.sent(Channel::Layout, id));
        }
        self.publish();
    }

    /// The compare view's step picker changed.
    pub fn set_stack_step(self, step: u64) {
        self.stack_open(Some(step));
    }

    /// Sends `query` for panel `i` of stack `which`, recording it in the panel with `record`
    /// first (a dead worker answers inside `query_on`).
    fn ask_stack(self, which: StackId, i: usize, query: Query, record: impl FnOnce(&mut TimelineState, u32)) {
        let open = match which {
            StackId::Compare => self.state.with_untracked(|s| s.summary.is_some()),
            StackId::Ranks => self.run.with_untracked(|r| r.data.is_some()),
        };
        if !open {
            return;
        }
        let Some(bridge) = self.get_bridge() else { return };
        let id = bridge.next_query_id();
        let sig = self.stack_of(which);
        let channel = match &query {
            Query::Hover { .. } => Channel::StackHover,
            _ => sig.with_untracked(|s| s.channel(i)),
        };
        let mut recorded = false;
        sig.update_untracked(|s| {
            if let Some(t) = s.pane_mut(i) {
                record(t, id);
                recorded = true;
            }
        });
        if recorded {
            bridge.query_on(channel, id, query);
        }
    }

    /// Asks for the tiles the panels of stack `which` lack.
    fn stack_fetch(self, which: StackId) {
        for (i, trace, request) in self.stack_of(which).with_untracked(StackState::tile_requests) {
            let query = Query::Tiles {
                trace,
                lanes: request.lanes.clone(),
                start_ns: request.start_ns,
                end_ns: request.end_ns,
                resolution_ns: request.resolution_ns,
                search: request.search.clone(),
            };
            self.ask_stack(which, i, query, |t, id| t.sent_tiles(id, request));
        }
    }

    /// Applies a view change to stack `which`, fetches what it needs and publishes.
    pub fn stack_view(self, which: StackId, change: impl FnOnce(&mut StackState)) {
        self.stack_of(which).update(change);
        self.stack_fetch(which);
        self.publish();
    }

    /// The stack keys act on: the one the pointer was last over, if any.
    fn active_stack(self) -> Option<StackId> {
        [StackId::Compare, StackId::Ranks]
            .into_iter()
            .find(|&w| self.stack_of(w).with_untracked(|s| s.active && s.opened))
    }

    /// Zooms the active stack's panels by `factor` (< 1: in) around pixel `anchor`.
    pub fn stack_zoom(self, factor: f64, anchor: f64) {
        if let Some(which) = self.active_stack() {
            self.stack_view(which, |s| s.zoom(factor, anchor));
        }
    }

    /// Pans the active stack's panels by `dx` pixels.
    pub fn stack_pan(self, dx: f64) {
        if let Some(which) = self.active_stack() {
            self.stack_view(which, |s| s.pan_px(dx));
        }
    }

    /// The active stack's width and the pointer's x over it (the keys' zoom anchor).
    pub fn stack_anchor(self) -> (f64, Option<f64>) {
        self.active_stack()
            .map_or((0.0, None), |w| self.stack_of(w).with_untracked(|s| (s.width(), s.anchor)))
    }

    /// Shows the active stack's default window again (its longest aligned step, or every
    /// trace whole on a run's clock).
    pub fn stack_reset(self) {
        if let Some(which) = self.active_stack() {
            self.stack_view(which, StackState::reset);
        }
    }

    /// `false`: keys and the wheel go to the main timeline (the pointer is over it); `true`
    /// is [`Controller::stack_focus_on`] the compare view.
    pub fn stack_focus(self, active: bool) {
        if active {
            self.stack_focus_on(StackId::Compare);
            return;
        }
        for which in [StackId::Compare, StackId::Ranks] {
            let sig = self.stack_of(which);
            if sig.with_untracked(|s| s.active) {
                sig.update_untracked(|s| s.active = false);
            }
        }
    }

    /// Keys and the wheel go to stack `which` (the pointer is over it).
    pub fn stack_focus_on(self, which: StackId) {
        for w in [StackId::Compare, StackId::Ranks] {
            let sig = self.stack_of(w);
            if sig.with_untracked(|s| s.active != (w == which)) {
                sig.update_untracked(|s| s.active = w == which);
            }
        }
    }

    /// True when the keys act on a stack.
    pub fn stack_active(self) -> bool {
        self.active_stack().is_some()
    }

    /// The pointer is at (`x`, `y`) of panel `i`'s drawing area (below its ruler).
    pub fn stack_hover(self, which: StackId, i: usize, x: f64, y: f64) {
        let ask = self
            .stack_of(which)
            .try_update(|s| {
                s.anchor = Some(x);
                // One hover channel for every panel: the others' pending hovers are dropped.
                for (_, p) in s.panels.iter_mut().enumerate().filter(|(k, _)| *k != i) {
                    p.timeline.hover = None;
                    p.timeline.forget(Channel::Hover);
                }
                let trace = s.panels.get(i)?.trace;
                Some((trace, s.pane_mut(i)?.hover_at(x, y)?))
            })
            .flatten();
        if let Some((trace, slice)) = ask {
            self.ask_stack(which, i, Query::Hover { trace, slice }, |t, id| t.sent(Channel::Hover, id));
        }
        self.publish();
    }

    /// The pointer left stack `which`.
    pub fn stack_hover_end(self, which: StackId) {
        self.stack_of(which).update(|s| {
            s.anchor = None;
            for p in &mut s.panels {
                p.timeline.hover = None;
                p.timeline.forget(Channel::Hover);
            }
        });
        self.publish();
    }

    /// Stack `which`'s drawing area is `width` wide, each panel's tracks `height` high.
    pub fn stack_resize(self, which: StackId, width: f64, height: f64) {
        self.stack_view(which, |s| s.resize(width, height));
    }

    /// The stack with a panel awaiting query `id`, sent on `channel` (a panel's channel
    /// names its stack; `StackHover` is shared).
    pub(super) fn stack_awaiting(self, channel: Channel, id: u32) -> Option<StackId> {
        let named = match channel {
            Channel::Stack(n) if n < RANKS_CHANNEL_BASE => Some(StackId::Compare),
            Channel::Stack(_) => Some(StackId::Ranks),
            _ => None,
        };
        [StackId::Compare, StackId::Ranks]
            .into_iter()
            .filter(|&w| named.is_none_or(|n| n == w))
            .find(|&w| self.stack_of(w).with_untracked(|s| s.awaiting(id).is_some()))
    }

    /// A panel's answer arrived.
    pub(super) fn stack_answer(self, which: StackId, id: u32, answer: Answer, words: Option<Vec<u32>>) {
        self.stack_of(which).update(|s| {
            s.apply(id, answer, words);
        });
        self.stack_fetch(which);
        self.publish();
    }

    /// A panel's query failed (asked again on the next view change).
    pub(super) fn stack_failed(self, which: StackId, id: u32, message: &str) {
        web_sys::console::warn_1(&format!("stacked timeline query failed: {message}").into());
        self.stack_of(which).update(|s| {
            if let Some(t) = s.awaiting(id).and_then(|i| s.pane_mut(i)) {
                t.failed(id);
            }
        });
        self.publish();
    }
}
