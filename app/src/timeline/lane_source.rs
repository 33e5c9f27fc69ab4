//! What a [`super::lane_canvas::LaneCanvas`] shows and where its input goes: the main timeline,
//! or one panel of a stacked view. The intents map onto the controller's calls; a stacked
//! panel moves its stack's shared window (pan and zoom act on every panel), scrolls its own
//! lanes, has no range (shift-drag pans), and only its first panel reports the size (every
//! panel has the same).

use crate::control::Controller;
use crate::frame::Target;
use crate::state::stack::StackId;
use crate::state::timeline::TimelineState;
use leptos::prelude::*;

/// The timeline a lane canvas shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneSource {
    /// The main timeline (`Controller::timeline`).
    Main,
    /// Panel `i` of stack `which`.
    Stack(StackId, usize),
}

impl LaneSource {
    /// The frame scheduler's target of its paint.
    pub fn target(self) -> Target {
        match self {
            LaneSource::Main => Target::Timeline,
            LaneSource::Stack(which, i) => Target::StackPane(which, i),
        }
    }

    /// `f` of the timeline shown (tracked); `None` while the panel is missing.
    pub fn with<R>(self, ctl: Controller, f: impl FnOnce(&TimelineState) -> R) -> Option<R> {
        match self {
            LaneSource::Main => Some(ctl.timeline.with(f)),
            LaneSource::Stack(which, i) => ctl.stack_of(which).with(|s| s.pane(i).map(f)),
        }
    }

    /// Subscribes the running effect to every change of what it shows.
    pub fn track(self, ctl: Controller) {
        match self {
            LaneSource::Main => ctl.timeline.track(),
            LaneSource::Stack(which, _) => ctl.stack_of(which).track(),
        }
    }

    /// The pointer is over the canvas: keys and the wheel go to it.
    pub fn focus(self, ctl: Controller) {
        match self {
            LaneSource::Main => ctl.stack_focus(false),
            LaneSource::Stack(which, _) => ctl.stack_focus_on(which),
        }
    }

    /// The pointer is at (`x`, `y`) of the drawing area (below the ruler).
    pub fn hover(self, ctl: Controller, x: f64, y: f64) {
        match self {
            LaneSource::Main => ctl.hover(x, y),
            LaneSource::Stack(which, i) => ctl.stack_hover(which, i, x, y),
        }
    }

    /// The pointer left the drawing area.
    pub fn hover_end(self, ctl: Controller) {
        match self {
            LaneSource::Main => ctl.hover_end(),
            LaneSource::Stack(which, _) => ctl.stack_hover_end(which),
        }
    }

    /// A press that started at canvas x `start_x` (`shift`: with shift held) was dragged to x
    /// `x`; (`dx`, `dy`): its last position minus this one, px. Selects the range from its
    /// start (shift, main timeline), or pans and scrolls by that move.
    pub(super) fn drag(self, ctl: Controller, (start_x, shift): (f64, bool), x: f64, (dx, dy): (f64, f64)) {
        match self {
            LaneSource::Main if shift => {
                let (a, b) = ctl.timeline.with_untracked(|t| (t.view.ns_at(start_x), t.view.ns_at(x)));
                ctl.set_range(Some((a, b)));
            }
            LaneSource::Main => ctl.view(|t| {
                t.view.pan_px(dx);
                t.scroll_by(dy);
            }),
            LaneSource::Stack(which, i) => ctl.stack_view(which, |s| {
                s.pan_px(dx);
                if let Some(t) = s.pane_mut(i) {
                    t.scroll_by(dy);
                }
            }),
        }
    }

    /// Zooms by `factor` around pixel `anchor` of the drawing area.
    pub fn zoom(self, ctl: Controller, factor: f64, anchor: f64) {
        match self {
            LaneSource::Main => ctl.zoom(factor, anchor),
            LaneSource::Stack(which, _) => ctl.stack_view(which, |s| s.zoom(factor, anchor)),
        }
    }

    /// Pans by `dx` px.
    pub fn pan(self, ctl: Controller, dx: f64) {
        match self {
            LaneSource::Main => ctl.pan(dx),
            LaneSource::Stack(which, _) => ctl.stack_view(which, |s| s.pan_px(dx)),
        }
    }

    /// Scrolls the lanes by `dy` px.
    pub fn scroll(self, ctl: Controller, dy: f64) {
        match self {
            LaneSource::Main => ctl.scroll(dy),
            LaneSource::Stack(which, i) => ctl.stack_view(which, |s| {
                if let Some(t) = s.pane_mut(i) {
                    t.scroll_by(dy);
                }
            }),
        }
    }

    /// A click at (`x`, `y`) of the drawing area: selects the slice there (the compare view's
    /// panels select nothing).
    pub fn click(self, ctl: Controller, x: f64, y: f64) {
        match self {
            LaneSource::Main => ctl.click(x, y),
            LaneSource::Stack(StackId::Ranks, i) => ctl.ranks_click(i, x, y),
            LaneSource::Stack(StackId::Compare, _) => {}
        }
    }

    /// Folds or unfolds group `g`.
    pub fn toggle_group(self, ctl: Controller, g: usize) {
        match self {
            LaneSource::Main => ctl.toggle_group(g),
            LaneSource::Stack(which, i) => ctl.stack_view(which, |s| {
                if let Some(t) = s.pane_mut(i) {
                    t.toggle_group(g);
                }
            }),
        }
    }

    /// The drawing area is `width` wide, the tracks `height` high.
    pub fn resized(self, ctl: Controller, width: f64, height: f64) {
        match self {
            LaneSource::Main => ctl.resize(width, height),
            LaneSource::Stack(which, 0) => ctl.stack_resize(which, width, height),
            LaneSource::Stack(..) => {}
        }
    }

    /// A frame was painted in `ms` (`first`: the first paint after a load, ms since it).
    pub fn painted(self, ctl: Controller, ms: f64, first: Option<f64>) {
        match self {
            LaneSource::Main => ctl.frame_drawn(ms, first),
            LaneSource::Stack(which, _) => {
                ctl.stack_of(which).update_untracked(|s| s.frames += 1);
                ctl.publish();
            }
        }
    }
}
