//! Timeline intents: view changes (zoom, pan, scroll, resize, fold), selection and hover,
//! range selection and search. Each change updates the timeline state, then [`Controller::fetch`]
//! asks for whatever tiles or counters the new view lacks.

use super::Controller;
use crate::state::tracks::{self, TrackKind};
use leptos::prelude::*;
use protocol::{Query, SliceRef, TraceRef};

/// Zoom factor of one W / S press (and per 100 ms while held).
pub const KEY_ZOOM: f64 = 0.8;
/// Share of the width one A / D press pans (and per 100 ms while held).
pub const KEY_PAN: f64 = 0.1;

impl Controller {
    /// Sends a timeline query.
    pub(super) fn ask_timeline(self, query: Query) -> Option<u32> {
        self.ask(query)
    }

    /// Asks for the tiles and counters the current view lacks.
    pub fn fetch(self) {
        if let Some(request) = self.timeline.with_untracked(|t| t.tile_request()) {
            let query = Query::Tiles {
                trace: TraceRef::Current,
                lanes: request.lanes.clone(),
                start_ns: request.start_ns,
                end_ns: request.end_ns,
                resolution_ns: request.resolution_ns,
                search: request.search.clone(),
            };
            if let Some(id) = self.ask(query) {
                self.timeline.update_untracked(|t| t.sent_tiles(id, request));
            }
        }
        if let Some(request) = self.timeline.with_untracked(|t| t.counter_request()) {
            let query = Query::Counters {
                start_ns: request.start_ns,
                end_ns: request.end_ns,
                buckets: request.buckets,
            };
            if let Some(id) = self.ask(query) {
                self.timeline.update_untracked(|t| t.sent_counters(id, request));
            }
        }
        self.critical_fetch();
    }

    /// Applies a view change, fetches what it needs and publishes.
    pub fn view(self, change: impl FnOnce(&mut crate::state::timeline::TimelineState)) {
        self.timeline.update(change);
        self.fetch();
        self.publish();
    }

    /// Zooms by `factor` (< 1: in) around pixel `anchor` of the drawing area.
    pub fn zoom(self, factor: f64, anchor: f64) {
        self.view(|t| t.view.zoom(factor, anchor));
    }

    /// Pans by `dx` pixels.
    pub fn pan(self, dx: f64) {
        self.view(|t| t.view.pan_px(dx));
    }

    /// Scrolls the tracks by `dy` pixels.
    pub fn scroll(self, dy: f64) {
        self.view(|t| t.scroll_by(dy));
    }

    /// Shows the whole trace.
    pub fn reset_view(self) {
        self.view(|t| t.view.reset());
    }

    /// Zooms to the selected slice, or to the selected range.
    pub fn zoom_to_selection(self) {
        self.view(|t| {
            if let Some(d) = &t.selected {
                let s = &d.slice;
                t.view.show(s.start_ns as f64, (s.start_ns + s.dur_ns) as f64);
            } else if let Some((a, b)) = t.range {
                t.view.show(a, b);
            }
        });
    }

    /// The drawing area changed size.
    pub fn resize(self, width: f64, height: f64) {
        self.view(|t| {
            t.view.resize(width);
            t.height = height.max(1.0);
            t.scroll_by(0.0);
        });
    }

    /// Folds or unfolds group `g`.
    pub fn toggle_group(self, g: usize) {
        self.view(|t| t.toggle_group(g));
    }

    /// Pins group `g` to the top of the timeline, or unpins it.
    pub fn toggle_pin(self, g: usize) {
        self.view(|t| t.toggle_pin(g));
    }

    /// Selects the slice under canvas point (`x`, `y`), or clears the selection if none.
    pub fn click(self, x: f64, y: f64) {
        let hit = self.timeline.with_untracked(|t| {
            let track = tracks::track_at(&t.tracks, y + t.scroll_y)?;
            let TrackKind::Lane { lane, .. } = track.kind else {
                return None;
            };
            let row = tracks::row_at(track, y + t.scroll_y)?;
            t.tiles
                .hit(lane, row, t.view.ns_at(x), t.view.ns_per_px() * 2.0)
                .map(|r| r.slice)
        });
        match hit {
            Some(slice) => self.select(slice),
            None => self.clear_selection(),
        }
    }

    /// Selects slice `id` and asks for its details.
    pub fn select(self, id: u32) {
        self.ask_timeline(Query::Details { slice: id, trace: TraceRef::Current });
        self.publish();
    }

    /// Selects a slice named by another's details (a link in the panel, a search match):
    /// brings it into view first.
    pub fn select_ref(self, r: SliceRef) {
        self.view(|t| t.reveal(r.lane, r.row, r.start_ns as f64, r.dur_ns as f64));
        self.select(r.id);
    }

    /// Selects slice `id` known only by id (a health example) and brings it into view once
    /// its details arrive.
    pub fn select_and_reveal(self, id: u32) {
        self.view(|t| t.reveal_selected = true);
        self.select(id);
    }

    /// Clears the selection.
    pub fn clear_selection(self) {
        self.view(|t| t.selected = None);
    }

    /// The pointer moved to canvas point (`x`, `y`): updates the hover and asks for the
    /// hovered slice's details when it changed.
    pub fn hover(self, x: f64, y: f64) {
        let ask = self.timeline.try_update(|t| t.hover_at(x, y)).flatten();
        if let Some(slice) = ask {
            self.ask_timeline(Query::Hover { trace: TraceRef::Current, slice });
        }
    }

    /// The pointer left the canvas.
    pub fn hover_end(self) {
        self.timeline.update(|t| t.hover = None);
    }

    /// Sets or clears the selected range; tables scoped to a range follow it.
    pub fn set_range(self, range: Option<(f64, f64)>) {
        let range = range.map(|(a, b)| (a.min(b), a.max(b)));
        self.view(|t| t.range = range);
        self.range_changed(range.map(|(a, b)| (a.floor() as i64, b.ceil() as i64)));
    }

    /// Sets the search text: flags matches in the tiles and counts them.
    pub fn search(self, text: String) {
        let from_ns = self.timeline.with_untracked(|t| t.view.start.max(0.0) as i64);
        self.view(|t| {
            t.search.text = text.clone();
            t.search.hit = None;
            t.search.navigate = false;
        });
        let text = text.trim().to_owned();
        if !text.is_empty() {
            self.ask_timeline(Query::Search {
                text,
                from_slice: None,
                from_ns,
                forward: true,
                trace: TraceRef::Current,
            });
        }
        self.publish();
    }

    /// Moves to the next (or previous) match and selects it.
    pub fn search_step(self, forward: bool) {
        let (text, hit, selected, from_ns) = self.timeline.with_untracked(|t| {
            (
                t.search.text.trim().to_owned(),
                t.search.hit.as_ref().and_then(|h| h.hit.clone()),
                t.selected.as_ref().map(|d| d.slice.id),
                t.view.start.max(0.0) as i64,
            )
        });
        if text.is_empty() {
            return;
        }
        match hit {
            // The count's first match is not selected yet: go there.
            Some(h) if forward && selected != Some(h.id) => self.select_ref(h),
            _ => {
                self.timeline.update_untracked(|t| t.search.navigate = true);
                self.ask_timeline(Query::Search {
                    text,
                    from_slice: hit.map(|h| h.id),
                    from_ns,
                    forward,
                    trace: TraceRef::Current,
                });
                self.publish();
            }
        }
    }

    /// After a search answer: moves to its match if next / previous asked for it.
    pub(super) fn follow_search(self) {
        if let Some(hit) = self.timeline.try_update_untracked(|t| t.take_navigation()).flatten() {
            self.select_ref(hit);
        }
    }

    /// Records one frame's draw time (not reactive: drawing must not trigger drawing) and
    /// publishes it.
    pub fn frame_drawn(self, ms: f64, first_paint_ms: Option<f64>) {
        let first = self.timeline.with_untracked(|t| t.frames.first_paint_ms.is_none()) && first_paint_ms.is_some();
        self.timeline.update_untracked(|t| {
            t.frames.push(ms);
            if first {
                t.frames.first_paint_ms = first_paint_ms;
            }
        });
        if first {
            // A task of its own, so the frame reaches the screen before the panels are built.
            set_timeout(move || self.settle(), std::time::Duration::ZERO);
        }
        self.publish();
    }
}
