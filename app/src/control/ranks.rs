//! The Run tab's ranks timeline (docs/viewer.md#runs): choose the ranks, have the worker hold
//! their models (`HoldRanks`), open one stacked panel per held rank on the chosen clock, search
//! over every rank, and select a slice, whose collective instance is then marked on every rank.
//!
//! The panels are the stack [`StackId::Ranks`] (view changes, tiles and hover in
//! [`super::stack`]); this file adds what only the ranks have. Search counts and the
//! selection's two queries each use one channel (`StackSearch`, `StackSelect`) and are asked one
//! after another ([`RanksState`]), never in a loop over slices.

use super::Controller;
use crate::state::ranks::{Clock, RanksState, SelectNext};
use crate::state::stack::{StackId, StackState};
use crate::state::tracks;
use leptos::prelude::*;
use protocol::{Answer, Channel, Query};

impl Controller {
    /// Stacks `ranks` (at most 8; the worker reloads the models it does not keep): asks the
    /// worker to hold them; the panels open when it has.
    pub fn ranks_show(self, ranks: &[u32]) {
        let Some(bridge) = self.get_bridge() else { return };
        let Some(ranks) = self.ranks.try_update(|r| r.choose(ranks)) else { return };
        let id = bridge.next_query_id();
        self.ranks.update(|r| r.sent_hold(id));
        self.publish();
        bridge.hold_ranks(id, ranks);
    }

    /// Switches the clock: the held ranks' layouts are asked again, aligned by `clock`.
    pub fn ranks_clock(self, clock: Clock) {
        self.ranks.update(|r| r.clock = clock);
        if self.ranks.with_untracked(|r| r.hold.is_none() && !r.held.is_empty()) {
            self.ranks_open();
        } else {
            self.publish();
        }
    }

    /// A model is being reloaded for the hold (`RankProgress` of the `HoldRanks`).
    pub(super) fn ranks_progress(self, index: u32, done_bytes: u64, total_bytes: Option<u64>) {
        let pct = total_bytes.filter(|&t| t > 0).map(|t| done_bytes.saturating_mul(100) / t);
        self.ranks.update(|r| r.reloading = Some((index, pct)));
        self.publish();
    }

    /// `RanksHeld`: opens one panel per held rank.
    pub(super) fn ranks_held(self, id: u32, held: Vec<u32>, failed: Vec<(u32, String)>) {
        if self.ranks.try_update(|r| r.held(id, held, failed)) == Some(true) {
            self.ranks_open();
        }
        self.publish();
    }

    /// Opens the panels of the held ranks on the chosen clock, with the search and the marks
    /// of the selection carried over, and asks for their layouts.
    fn ranks_open(self) {
        let (panels, align, text) = self.ranks.with_untracked(|r| (r.panels(), r.clock.align(), r.search.typed.clone()));
        let Some(queries) = self.rank_stack.try_update(|s| s.open(panels, align)) else { return };
        self.rank_stack.update(|s| {
            for p in &mut s.panels {
                p.timeline.search.text.clone_from(&text);
            }
        });
        self.ranks_mark();
        self.stack_layouts(StackId::Ranks, queries);
        self.ranks_search(text);
    }

    /// Writes the selection's outline and the collective's bands into the panels.
    fn ranks_mark(self) {
        let (selection, bands) = self.ranks.with_untracked(|r| {
            let bands: Vec<_> = r.held.iter().map(|&rank| r.band(rank)).collect();
            (r.selection.clone(), bands)
        });
        self.rank_stack.update(|s| {
            for (i, (p, band)) in s.panels.iter_mut().zip(bands).enumerate() {
                p.band = band;
                p.timeline.selected = selection.as_ref().filter(|x| x.pane == i).and_then(|x| x.details.clone());
            }
        });
    }

    /// The search text changed: flags matches in every panel's tiles and counts them per rank.
    pub fn ranks_search(self, text: String) {
        self.stack_view(StackId::Ranks, |s| {
            for p in &mut s.panels {
                p.timeline.search.text.clone_from(&text);
            }
        });
        let first = self.ranks.try_update(|r| r.search_begin(&text)).flatten();
        if let Some(query) = first {
            self.ranks_ask(Channel::StackSearch, query, |r, id| r.search_sent(0, id));
        }
        self.publish();
    }

    /// Sends a search or selection query on `channel`, recorded with `record` first.
    fn ranks_ask(self, channel: Channel, query: Query, record: impl FnOnce(&mut RanksState, u32)) {
        let Some(bridge) = self.get_bridge() else { return };
        let id = bridge.next_query_id();
        self.ranks.update_untracked(|r| record(r, id));
        bridge.query_on(channel, id, query);
    }

    /// A click at (`x`, `y`) of panel `i`'s drawing area: selects the slice there (details,
    /// then its collective on every rank), or clears the selection.
    pub fn ranks_click(self, i: usize, x: f64, y: f64) {
        let hit = self.rank_stack.with_untracked(|s| {
            let t = s.pane(i)?;
            let track = tracks::track_at(&t.tracks, y + t.scroll_y)?;
            let tracks::TrackKind::Lane { lane, .. } = track.kind else { return None };
            let row = tracks::row_at(track, y + t.scroll_y)?;
            t.tiles.hit(lane, row, t.view.ns_at(x), t.view.ns_per_px() * 2.0).map(|r| r.slice)
        });
        let query = hit.and_then(|slice| self.ranks.try_update(|r| r.select(i, slice)).flatten());
        match query {
            Some(query) => self.ranks_ask(Channel::StackSelect, query, RanksState::select_sent),
            None => self.ranks.update(RanksState::deselect),
        }
        self.ranks_mark();
        self.publish();
    }

    /// True when query `id` on `channel` (`StackSelect` or `StackSearch`) is awaited.
    pub(super) fn ranks_awaits(self, channel: Channel, id: u32) -> bool {
        self.ranks.with_untracked(|r| match channel {
            Channel::StackSelect => r.awaits_select(id),
            _ => r.awaits_search(id),
        })
    }

    /// Enter (`forward`) or Shift+Enter in the search box: selects the next (previous) match
    /// across ranks, in rank order.
    pub fn ranks_search_step(self, forward: bool) {
        if let Some(query) = self.ranks.try_update(|r| r.search_step(forward)).flatten() {
            self.ranks_ask(Channel::StackSelect, query, RanksState::select_sent);
            self.publish();
        }
    }

    /// A search count (`StackSearch`) or a selection answer (`StackSelect`) arrived.
    pub(super) fn ranks_answer(self, channel: Channel, id: u32, answer: Answer) {
        match (channel, &answer) {
            (Channel::StackSearch, Answer::Search(hit)) => {
                let next = self.ranks.try_update(|r| r.search_apply(id, hit)).flatten();
                if let Some((i, query)) = next {
                    self.ranks_ask(Channel::StackSearch, query, |r, id| r.search_sent(i, id));
                }
            }
            _ => {
                match self.ranks.try_update(|r| r.select_apply(id, answer)) {
                    Some(SelectNext::Ask(query)) => self.ranks_ask(Channel::StackSelect, query, RanksState::select_sent),
                    Some(SelectNext::Reveal(i, r, query)) => {
                        let (start, dur) = (r.start_ns as f64, r.dur_ns as f64);
                        let others = self.ranks.with_untracked(|x| x.other_matches(i));
                        self.stack_view(StackId::Ranks, |s| {
                            s.reveal(i, r.lane, r.row, start, dur);
                            s.reveal_rows(others);
                        });
                        self.ranks_ask(Channel::StackSelect, query, RanksState::select_sent);
                    }
                    Some(SelectNext::Done) | None => {}
                }
                self.ranks_mark();
            }
        }
        self.publish();
    }

    /// A search count or a selection query failed.
    pub(super) fn ranks_failed(self, id: u32, message: &str) {
        web_sys::console::warn_1(&format!("ranks timeline query failed: {message}").into());
        self.ranks.update(|r| r.failed(id));
        self.publish();
    }

    /// A run starts or ends: the ranks timeline is forgotten.
    pub(super) fn ranks_clear(self) {
        self.ranks.update(RanksState::clear);
        self.rank_stack.update(StackState::clear);
    }
}
