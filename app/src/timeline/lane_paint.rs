//! Painting a lane canvas: at most once per animation frame ([`crate::frame`]), the source's
//! state becomes a [`super::draw_list::DrawList`] (a stacked panel adds its collective band,
//! [`super::band`]), replayed on the canvas by [`super::paint_canvas2d`].
//!
//! The main timeline paints after every change and records its frame times. A stacked panel
//! paints only when what it draws changed ([`PaintKey`]), and the panels painted in one frame
//! share a budget ([`FRAME_BUDGET_MS`]; those past it wait a frame), so eight ranks stay under
//! 50 ms a frame.

use super::draw_list::{self, Surface};
use super::lane_source::LaneSource;
use super::paint_canvas2d;
use super::theme::Theme;
use crate::control::Controller;
use crate::frame::now_ms;
use crate::state::stack::Panel;
use crate::state::tiles::TileRequest;
use crate::state::timeline::TimelineState;
use leptos::html;
use leptos::prelude::*;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// What painting one canvas needs; cloned into each frame callback.
#[derive(Clone)]
pub(super) struct Painter {
    ctl: Controller,
    source: LaneSource,
    canvas: NodeRef<html::Canvas>,
    theme: ReadSignal<Theme>,
    /// What a stacked panel last painted: every panel's effect runs on any change of the stack
    /// (a tile answer for another panel, say), and eight ranks repainted for each such change
    /// made frames over 50 ms; an unchanged picture is not painted again.
    painted: Rc<RefCell<Option<PaintKey>>>,
}

impl Painter {
    /// A painter of `source` on `canvas`, nothing painted yet.
    pub fn new(ctl: Controller, source: LaneSource, canvas: NodeRef<html::Canvas>, theme: ReadSignal<Theme>) -> Self {
        Painter { ctl, source, canvas, theme, painted: Rc::new(RefCell::new(None)) }
    }

    /// Paints at the next frame.
    pub fn schedule(self) {
        crate::frame::request(self.source.target(), move || match self.source {
            LaneSource::Main => self.paint_main(),
            LaneSource::Stack(..) => self.paint_panel(),
        });
    }

    /// Paints the main timeline now and records the frame time (and the first paint after a
    /// load). A canvas with no trace is staged (hidden) and not painted.
    fn paint_main(&self) {
        let Some(theme) = self.theme.try_get_untracked() else { return };
        let Some((ms, has_tiles, loaded_at)) = self.ctl.timeline.with_untracked(|t| {
            t.layout.as_ref()?;
            let ms = paint(self.canvas, theme, t, None)?;
            Some((ms, t.has_tiles(), t.loaded_at))
        }) else {
            return;
        };
        let done = now_ms();
        let first = (has_tiles && loaded_at.is_some()).then(|| done - loaded_at.unwrap_or(done));
        self.source.painted(self.ctl, ms, first);
    }

    /// Paints the panel now, or at the next frame when this frame's panel budget is spent
    /// (the first panel of a frame always paints, so every panel gets its turn).
    fn paint_panel(self) {
        let (last_end, spent) = SPENT.get();
        let spent = if now_ms() - last_end > SAME_FRAME_GAP_MS { 0.0 } else { spent };
        if spent > FRAME_BUDGET_MS {
            self.schedule();
            return;
        }
        let Some(ms) = self.paint_changed_panel() else { return };
        SPENT.set((now_ms(), spent + ms));
        self.source.painted(self.ctl, ms, None);
    }

    /// Paints the panel now unless its picture is unchanged; returns the paint time in ms.
    fn paint_changed_panel(&self) -> Option<f64> {
        let LaneSource::Stack(which, i) = self.source else { return None };
        let theme = self.theme.try_get_untracked()?;
        self.ctl
            .stack_of(which)
            .try_with_untracked(|s| {
                let p = s.panels.get(i)?;
                let key = PaintKey::of(p, theme, self.canvas)?;
                if self.painted.borrow().as_ref() == Some(&key) {
                    return None;
                }
                let ms = paint(self.canvas, theme, &p.timeline, p.band)?;
                *self.painted.borrow_mut() = Some(key);
                Some(ms)
            })
            .flatten()
    }
}

/// Paints `t` on `canvas` now (its draw list, then `band` if any); returns the paint time in
/// ms, or `None` when the canvas is gone.
fn paint(canvas: NodeRef<html::Canvas>, theme: Theme, t: &TimelineState, band: Option<(f64, f64)>) -> Option<f64> {
    let (ctx, width, height, dpr) = paint_canvas2d::context(canvas)?;
    let started = now_ms();
    let surface = Surface { width, height, dpr };
    let mut list = draw_list::draw_list(t, theme, surface);
    if let Some(band) = band {
        list.cmds.extend(super::band::cmds(t, band, theme, surface));
    }
    paint_canvas2d::replay(&ctx, &list);
    Some(now_ms() - started)
}

/// Warms the staged canvas up before a trace is shown, in two tasks of their own outside any
/// frame: the context's setup, then the palette and the label font ([`draw_list::warm_up`]).
/// On a cold 2-core machine these took 15-40 ms, and painted in the frames that laid out the
/// page being built they made long tasks. A trace shown by then is left as painted.
pub(super) fn warm_up(ctl: Controller, canvas: NodeRef<html::Canvas>, theme: Theme) {
    set_timeout(
        move || {
            if paint_canvas2d::context(canvas).is_some() {
                set_timeout(
                    move || {
                        let staged = ctl.timeline.with_untracked(|t| t.layout.is_none());
                        if let Some((ctx, w, h, _)) = paint_canvas2d::context(canvas).filter(|_| staged) {
                            paint_canvas2d::replay(&ctx, &draw_list::warm_up(theme, w, h));
                        }
                    },
                    std::time::Duration::ZERO,
                );
            }
        },
        std::time::Duration::ZERO,
    );
}

/// Everything a panel's picture depends on (see `draw_list`): equal keys paint equal pictures.
#[derive(PartialEq)]
struct PaintKey {
    /// View start, end and width; scroll and track height.
    view: [f64; 5],
    /// The canvas's size in device px (resizing a canvas clears it).
    size: (u32, u32),
    theme: Theme,
    /// The layout shown (its allocation) and the folded groups.
    layout: usize,
    collapsed: Vec<bool>,
    /// The tiles held: what they answer and how many rects.
    tiles: (Option<TileRequest>, usize),
    selected: Option<u32>,
    range: Option<(f64, f64)>,
    highlight: usize,
    search: String,
    band: Option<(f64, f64)>,
}

impl PaintKey {
    /// The key of panel `p` on `canvas` now; `None` when the canvas is gone.
    fn of(p: &Panel, theme: Theme, canvas: NodeRef<html::Canvas>) -> Option<Self> {
        let c = canvas.try_get_untracked().flatten()?;
        let t = &p.timeline;
        Some(PaintKey {
            view: [t.view.start, t.view.end, t.view.width, t.scroll_y, t.height],
            size: (c.width(), c.height()),
            theme,
            layout: t.layout.as_ref().map_or(0, |l| std::sync::Arc::as_ptr(l) as usize),
            collapsed: t.collapsed.clone(),
            tiles: (t.tiles.request.clone(), t.tiles.len()),
            selected: t.selected.as_ref().map(|d| d.slice.id),
            range: t.range,
            highlight: t.highlight.len(),
            search: t.search.text.clone(),
            band: p.band,
        })
    }
}

/// Paint time of stacked panels a frame may spend before the next panel waits for the next
/// frame, ms: eight ranks whose tiles arrived together painted in one frame of 60-90 ms.
const FRAME_BUDGET_MS: f64 = 20.0;

/// A gap between two paints longer than this means they are in different frames, ms (the
/// callbacks of one frame run back to back).
const SAME_FRAME_GAP_MS: f64 = 4.0;

thread_local! {
    /// When the last panel paint ended and what the frame it was in has spent on panels, ms.
    static SPENT: Cell<(f64, f64)> = const { Cell::new((f64::NEG_INFINITY, 0.0)) };
}
