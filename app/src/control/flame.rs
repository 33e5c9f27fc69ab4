//! The Flame tab: the box clicked (zoom into it, select its first call on the timeline and
//! search its name, as a module row's click), the breadcrumb, the CPU / GPU toggle, the colors
//! (kind, or change against the baseline), and the
//! boxes drawn (kept for the pointer and `window.kinetoscope.flame`).

use super::Controller;
use crate::state::flame::{FlameBox, Metric};
use leptos::prelude::*;

impl Controller {
    /// Row `k` of the call tree was clicked: the chart zooms into it; a frame, range, op or
    /// runtime call also selects its first call in the scope and searches its name.
    pub fn pick_flame(self, k: usize) {
        let mut row = None;
        self.commit_tables(|t| {
            if let Some(f) = &mut t.flame {
                f.zoom_to(k);
                row = f.data.rows.get(k).cloned();
            }
        });
        let Some(first) = row.and_then(|r| r.first) else { return };
        self.search(first.name.clone());
        self.select_ref(first);
    }

    /// Zooms into row `k` (a breadcrumb; 0: zoom out) without touching the timeline.
    pub fn zoom_flame(self, k: usize) {
        self.commit_tables(|t| {
            if let Some(f) = &mut t.flame {
                f.zoom_to(k);
            }
        });
    }

    /// Sizes the boxes by CPU or GPU time.
    pub fn set_flame_metric(self, metric: Metric) {
        self.commit_tables(|t| {
            if let Some(f) = &mut t.flame {
                f.metric = metric;
            }
        });
    }

    /// Colors the boxes by their change against the baseline (`true`) or by kind, and asks
    /// for the tree again (with or without the baseline's totals).
    pub fn set_flame_growth(self, on: bool) {
        let mut query = None;
        self.commit_tables(|t| {
            t.flame_growth = on;
            query = t.query().filter(|_| t.tab == crate::state::table::Tab::Flame);
        });
        if let Some(query) = query {
            self.send(query);
        }
    }

    /// The chart drew `boxes`.
    pub fn flame_drawn(self, boxes: Vec<FlameBox>) {
        if self.tables.with_untracked(|t| t.flame.as_ref().is_some_and(|f| f.drawn != boxes)) {
            self.tables.update_untracked(|t| {
                if let Some(f) = &mut t.flame {
                    f.drawn = boxes;
                }
            });
            self.publish();
        }
    }
}
