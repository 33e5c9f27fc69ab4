//! Stacked timelines: the Compare tab's baseline panel above its candidate panel
//! (docs/viewer.md#compare-two-traces), and the panels the Run tab's ranks timeline stacks
//! ([`super::ranks`]). Each panel is a lane timeline drawn like the main timeline (its draw
//! list, replayed by `paint_canvas2d`; a ranks panel adds its collective band, `band`) from its
//! own tiles, time 0 at its origin, one shared time scale and window (`state::stack`). In the
//! compare view a step picker chooses the step; the note says which step each panel shows and
//! how long it took.
//!
//! Painting: a panel paints at most once per frame (the frame scheduler), only when what it
//! draws changed ([`PaintKey`]), and the panels painted in one frame share a budget
//! ([`FRAME_BUDGET_MS`]; those past it wait a frame), so eight ranks stay under 50 ms a frame.
//!
//! Input (as on the main timeline, acting on every panel): drag pans (and scrolls the panel's
//! lanes), ctrl+wheel zooms at the pointer, shift+wheel pans, wheel scrolls the panel; W/S/A/D
//! and 0 go to the stack while the pointer was last over it (`keys`). Hover shows name and
//! duration; a click goes to the panel's `on_click` (the ranks timeline selects).
//!
//! Test ids: `compare-stack`, `compare-step` (a [`StepPicker`]: the aligned step's number),
//! `compare-step-note`, `compare-stack-reset`, panels `compare-stack-base|cand` with canvases
//! `compare-canvas-base|cand`, their `lane-labels` and `tooltip`.

use super::draw_list::{draw_list, Surface, RULER_H};
use super::theme::Theme;
use super::{keys::now_ms, observe_size, paint_canvas2d, wheel, Labels, Press, Tooltip, Wheel, CLICK_SLOP, LABEL_W};
use crate::control::Controller;
use crate::frame::Target;
use crate::panels::StepPicker;
use crate::state::format;
use crate::state::stack::{Pane, Panel, StackId, StackState};
use crate::state::tiles::TileRequest;
use leptos::html;
use leptos::prelude::*;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// The step picker, the note and both panels.
#[component]
pub fn StackedTimelines(ctl: Controller, theme: ReadSignal<Theme>) -> impl IntoView {
    let common = Memo::new(move |_| ctl.stack.with(StackState::common_steps));
    let focus = Memo::new(move |_| ctl.stack.with(|s| s.focus(Pane::Base.index()).map(|f| f.number)));
    let note = Memo::new(move |_| ctl.stack.with(note));
    on_cleanup(move || ctl.stack_focus(false));
    view! {
        <section class="compare-stack" data-testid="compare-stack">
            <div class="tl-toolbar">
                <span>"Align at"</span>
                <StepPicker testid="compare-step" steps=common current=focus
                    on_pick=Callback::new(move |n| ctl.set_stack_step(n)) />
                <span class="muted" data-testid="compare-step-note">{move || note.get()}</span>
                <span class="spacer"></span>
                <button data-testid="compare-stack-reset" title="Show the aligned steps whole (0)"
                    on:click=move |_| ctl.stack_view(StackId::Compare, StackState::reset)>"Reset zoom"</button>
            </div>
            <ComparePane ctl=ctl pane=Pane::Base theme=theme />
            <ComparePane ctl=ctl pane=Pane::Cand theme=theme />
        </section>
    }
}

/// Which step each panel shows, its duration and the change: "Baseline: step 10, 14.5 ms ·
/// Candidate: step 10, 19.9 ms (+37.7%)".
fn note(s: &StackState) -> String {
    let step = |p: Pane| s.focus(p.index()).map(|f| (f.number, (f.end_ns - f.start_ns) as f64));
    let side = |p: Pane| match step(p) {
        Some((n, d)) => format!("step {n}, {}", format::span_us(d / 1e3)),
        None if s.pane(p.index()).is_some_and(|t| t.layout.is_some()) => "no step: trace start".to_owned(),
        None => "…".to_owned(),
    };
    let change = match (step(Pane::Base), step(Pane::Cand)) {
        (Some((_, b)), Some((_, c))) if b > 0.0 => format!(" ({:+.1}%)", (c - b) / b * 100.0),
        _ => String::new(),
    };
    let differ = match (step(Pane::Base), step(Pane::Cand)) {
        (Some((a, _)), Some((b, _))) if a != b => " · no step number in both: first step of each",
        _ => "",
    };
    format!("Baseline: {} · Candidate: {}{change}{differ}", side(Pane::Base), side(Pane::Cand))
}

/// A compare panel: the generic [`StackPane`] with the compare view's test ids and title.
#[component]
fn ComparePane(ctl: Controller, pane: Pane, theme: ReadSignal<Theme>) -> impl IntoView {
    let title = Signal::derive(move || {
        let (who, name) = match pane {
            Pane::Base => ("Baseline", ctl.compare.with(|c| c.base.clone())),
            Pane::Cand => ("Candidate", ctl.state.with(|s| s.summary.as_ref().map(|x| x.file_name.clone()))),
        };
        format!("{who} · {}", name.unwrap_or_default())
    });
    view! {
        <StackPane ctl=ctl which=StackId::Compare index=pane.index() theme=theme title=title
            testid=format!("compare-stack-{}", pane.as_str()) canvas_testid=format!("compare-canvas-{}", pane.as_str()) />
    }
}

/// One panel of stack `which`: title, lane labels, canvas, tooltip; the band of its panel
/// ([`crate::state::stack::Panel::band`]) drawn over the lanes.
#[component]
pub fn StackPane(
    ctl: Controller,
    which: StackId,
    index: usize,
    theme: ReadSignal<Theme>,
    #[prop(into)] title: Signal<String>,
    testid: String,
    canvas_testid: String,
    /// `data-rank` of the panel, when it shows a rank.
    #[prop(optional)]
    rank: Option<u32>,
    /// A click at (x, y) of the drawing area (below the ruler).
    #[prop(optional)]
    on_click: Option<Callback<(f64, f64)>>,
) -> impl IntoView {
    let stack = ctl.stack_of(which);
    let canvas: NodeRef<html::Canvas> = NodeRef::new();
    let area: NodeRef<html::Div> = NodeRef::new();
    let press: Rc<Cell<Option<Press>>> = Rc::new(Cell::new(None));
    // What this panel last painted: every panel's effect runs on any change of the stack (a
    // tile answer for another panel, say), and eight ranks repainted for each such change made
    // frames over 50 ms; an unchanged picture is not painted again.
    let painted: Rc<RefCell<Option<PaintKey>>> = Rc::new(RefCell::new(None));
    let job = PaintJob { ctl, stack, which, index, canvas, theme, painted };
    Effect::new(move |_| {
        stack.track();
        theme.track();
        job.clone().schedule();
    });
    // The panel unmounts with its tab: its observer stops then.
    let observer = StoredValue::new_local(None);
    Effect::new(move |_| {
        if let Some(el) = area.get() {
            // Every panel has the same size; the first one's tells the state.
            let o = observe_size(&el, canvas, move |w, h| {
                if index == 0 {
                    ctl.stack_resize(which, w, h);
                }
            });
            observer.set_value(o);
        }
    });
    on_cleanup(move || {
        observer.try_with_value(|o: &Option<super::SizeObserver>| {
            if let Some((o, _)) = o {
                o.disconnect();
            }
        });
    });
    let on_down = {
        let press = press.clone();
        move |e: web_sys::PointerEvent| {
            if e.button() == 0 {
                press.set(Some(Press::at(&e, canvas)));
            }
        }
    };
    let on_move = {
        let press = press.clone();
        move |e: web_sys::PointerEvent| {
            let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
            ctl.stack_focus_on(which);
            let Some(mut p) = press.get() else {
                if y > RULER_H {
                    ctl.stack_hover(which, index, x, y - RULER_H);
                } else {
                    ctl.stack_hover_end(which);
                }
                return;
            };
            p.moved |= (x - p.x).abs() + (y - p.y).abs() > CLICK_SLOP;
            if p.moved {
                ctl.stack_view(which, |s| {
                    s.pan_px(p.last_x - x);
                    if let Some(t) = s.pane_mut(index) {
                        t.scroll_by(p.last_y - y);
                    }
                });
            }
            p.last_x = x;
            p.last_y = y;
            press.set(Some(p));
        }
    };
    let on_up = move |e: web_sys::PointerEvent| {
        let Some(p) = press.take() else { return };
        if let Some(click) = on_click.filter(|_| !p.moved && p.y > RULER_H) {
            click.run((f64::from(e.offset_x()), f64::from(e.offset_y()) - RULER_H));
        }
    };
    let on_wheel = move |e: web_sys::WheelEvent| match wheel(&e) {
        Wheel::Zoom(factor) => ctl.stack_view(which, |s| s.zoom(factor, f64::from(e.offset_x()))),
        Wheel::Pan(dx) => ctl.stack_view(which, |s| s.pan_px(dx)),
        Wheel::Scroll(dy) => ctl.stack_view(which, |s| {
            if let Some(t) = s.pane_mut(index) {
                t.scroll_by(dy);
            }
        }),
    };
    let tracks = Memo::new(move |_| stack.with(|s| s.pane(index).map(|t| t.tracks.clone()).unwrap_or_default()));
    let scroll = Memo::new(move |_| stack.with(|s| s.pane(index).map_or(0.0, |t| t.scroll_y)));
    let hover = Memo::new(move |_| stack.with(|s| s.pane(index).and_then(|t| t.hover.clone())));
    let on_toggle = Callback::new(move |g: usize| {
        ctl.stack_view(which, |s| {
            if let Some(t) = s.pane_mut(index) {
                t.toggle_group(g);
            }
        });
    });
    view! {
        <div class="stack-pane" data-testid=testid data-rank=rank>
            <div class="stack-title">{move || title.get()}</div>
            <div class="tl-body stack-body" node_ref=area>
                <Labels tracks=tracks.into() scroll=scroll.into() on_toggle=on_toggle />
                <canvas
                    data-testid=canvas_testid
                    data-rank=rank
                    node_ref=canvas
                    style:left=format!("{LABEL_W}px")
                    on:pointerenter=move |_| ctl.stack_focus_on(which)
                    on:pointerdown=on_down
                    on:pointermove=on_move
                    on:pointerup=on_up
                    on:pointerleave=move |_| ctl.stack_hover_end(which)
                    on:wheel=on_wheel
                ></canvas>
                <Tooltip hover=hover.into() />
            </div>
        </div>
    }
}

/// Paints panel `p` on `canvas` now (its timeline's draw list, then its band); returns the
/// paint time in ms, or `None` when the canvas is gone.
fn paint(canvas: NodeRef<html::Canvas>, theme: Theme, p: &Panel) -> Option<f64> {
    let (ctx, width, height, dpr) = paint_canvas2d::context(canvas)?;
    let started = now_ms();
    let surface = Surface { width, height, dpr };
    let mut list = draw_list(&p.timeline, theme, surface);
    if let Some(band) = p.band {
        list.cmds.extend(super::band::cmds(&p.timeline, band, theme, surface));
    }
    paint_canvas2d::replay(&ctx, &list);
    Some(now_ms() - started)
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

/// What painting one panel needs; cloned into each frame callback.
#[derive(Clone)]
struct PaintJob {
    ctl: Controller,
    stack: RwSignal<StackState>,
    which: StackId,
    index: usize,
    canvas: NodeRef<html::Canvas>,
    theme: ReadSignal<Theme>,
    /// What the panel last painted.
    painted: Rc<RefCell<Option<PaintKey>>>,
}

impl PaintJob {
    /// Paints the panel at the next frame, or the one after when this frame's panel budget is
    /// spent (the first panel of a frame always paints, so every panel gets its turn).
    fn schedule(self) {
        crate::frame::request(Target::StackPane(self.which, self.index), move || {
            let (last_end, spent) = SPENT.get();
            let spent = if now_ms() - last_end > SAME_FRAME_GAP_MS { 0.0 } else { spent };
            if spent > FRAME_BUDGET_MS {
                self.schedule();
                return;
            }
            let Some(ms) = self.paint() else { return };
            SPENT.set((now_ms(), spent + ms));
            self.stack.update_untracked(|s| s.frames += 1);
            self.ctl.publish();
        });
    }

    /// Paints the panel now unless its picture is unchanged; returns the paint time in ms.
    fn paint(&self) -> Option<f64> {
        let theme = self.theme.try_get_untracked()?;
        self.stack
            .try_with_untracked(|s| {
                let p = s.panels.get(self.index)?;
                let key = PaintKey::of(p, theme, self.canvas)?;
                if self.painted.borrow().as_ref() == Some(&key) {
                    return None;
                }
                let ms = paint(self.canvas, theme, p)?;
                *self.painted.borrow_mut() = Some(key);
                Some(ms)
            })
            .flatten()
    }
}
