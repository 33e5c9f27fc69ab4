//! The Compare tab's stacked timelines (docs/viewer.md#compare-two-traces): the baseline panel
//! above the candidate panel, each a lane timeline painted like the main timeline from
//! its own tiles, time 0 at the chosen step's start in each trace, one shared time scale and window
//! (`state::stack`). A step picker chooses the step; the note says which step each panel shows
//! and how long it took.
//!
//! Input (as on the main timeline, acting on both panels): drag pans (and scrolls the panel's
//! lanes), ctrl+wheel zooms at the pointer, shift+wheel pans, wheel scrolls the panel; W/S/A/D
//! and 0 go to the stack while the pointer was last over it (`keys`). Hover shows name and
//! duration.
//!
//! Test ids: `compare-stack`, `compare-step` (a [`StepPicker`]: the aligned step's number),
//! `compare-step-note`, `compare-stack-reset`, panels `compare-stack-base|cand` with canvases
//! `compare-canvas-base|cand`, their `lane-labels` and `tooltip`.

use super::draw_list::RULER_H;
use super::theme::Theme;
use super::{observe_size, paint_canvas, wheel, Labels, Press, Tooltip, Wheel, CLICK_SLOP, LABEL_W};
use crate::control::Controller;
use crate::frame::Target;
use crate::panels::StepPicker;
use crate::state::format;
use crate::state::stack::{Pane, StackState};
use leptos::html;
use leptos::prelude::*;
use std::cell::Cell;
use std::rc::Rc;

/// The step picker, the note and both panels.
#[component]
pub fn StackedTimelines(ctl: Controller, theme: ReadSignal<Theme>) -> impl IntoView {
    let common = Memo::new(move |_| ctl.stack.with(StackState::common_steps));
    let focus = Memo::new(move |_| ctl.stack.with(|s| s.focus(Pane::Base).map(|f| f.number)));
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
                    on:click=move |_| ctl.stack_reset()>"Reset zoom"</button>
            </div>
            <StackPane ctl=ctl pane=Pane::Base theme=theme />
            <StackPane ctl=ctl pane=Pane::Cand theme=theme />
        </section>
    }
}

/// Which step each panel shows, its duration and the change: "Baseline: step 10, 14.5 ms ·
/// Candidate: step 10, 19.9 ms (+37.7%)".
fn note(s: &StackState) -> String {
    let step = |p: Pane| s.focus(p).map(|f| (f.number, (f.end_ns - f.start_ns) as f64));
    let side = |p: Pane| match step(p) {
        Some((n, d)) => format!("step {n}, {}", format::span_us(d / 1e3)),
        None if s.pane(p).layout.is_some() => "no step: trace start".to_owned(),
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

/// One panel: title, lane labels, canvas, tooltip.
#[component]
fn StackPane(ctl: Controller, pane: Pane, theme: ReadSignal<Theme>) -> impl IntoView {
    let canvas: NodeRef<html::Canvas> = NodeRef::new();
    let area: NodeRef<html::Div> = NodeRef::new();
    let press: Rc<Cell<Option<Press>>> = Rc::new(Cell::new(None));
    Effect::new(move |_| {
        ctl.stack.track();
        theme.track();
        crate::frame::request(Target::StackPane(pane as usize), move || {
            let Some(theme) = theme.try_get_untracked() else { return };
            let drawn = ctl.stack.with_untracked(|s| paint_canvas(canvas, theme, s.pane(pane)));
            if drawn.is_some() {
                ctl.stack.update_untracked(|s| s.frames += 1);
                ctl.publish();
            }
        });
    });
    // The panel unmounts with the Compare tab: its observer stops then.
    let observer = StoredValue::new_local(None);
    Effect::new(move |_| {
        if let Some(el) = area.get() {
            // Both panels have the same size; the baseline's tells the state.
            let o = observe_size(&el, canvas, move |w, h| {
                if pane == Pane::Base {
                    ctl.stack_resize(w, h);
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
            ctl.stack_focus(true);
            let Some(mut p) = press.get() else {
                if y > RULER_H {
                    ctl.stack_hover(pane, x, y - RULER_H);
                } else {
                    ctl.stack_hover_end();
                }
                return;
            };
            p.moved |= (x - p.x).abs() + (y - p.y).abs() > CLICK_SLOP;
            if p.moved {
                ctl.stack_view(|s| {
                    s.pan_px(p.last_x - x);
                    s.pane_mut(pane).scroll_by(p.last_y - y);
                });
            }
            p.last_x = x;
            p.last_y = y;
            press.set(Some(p));
        }
    };
    let on_up = move |_: web_sys::PointerEvent| press.set(None);
    let on_wheel = move |e: web_sys::WheelEvent| match wheel(&e) {
        Wheel::Zoom(factor) => ctl.stack_zoom(factor, f64::from(e.offset_x())),
        Wheel::Pan(dx) => ctl.stack_pan(dx),
        Wheel::Scroll(dy) => ctl.stack_scroll(pane, dy),
    };
    let tracks = Memo::new(move |_| ctl.stack.with(|s| s.pane(pane).tracks.clone()));
    let scroll = Memo::new(move |_| ctl.stack.with(|s| s.pane(pane).scroll_y));
    let hover = Memo::new(move |_| ctl.stack.with(|s| s.pane(pane).hover.clone()));
    let on_toggle = Callback::new(move |g: usize| ctl.stack_view(|s| s.pane_mut(pane).toggle_group(g)));
    let title = move || {
        let (who, name) = match pane {
            Pane::Base => ("Baseline", ctl.compare.with(|c| c.base.clone())),
            Pane::Cand => ("Candidate", ctl.state.with(|s| s.summary.as_ref().map(|x| x.file_name.clone()))),
        };
        format!("{who} · {}", name.unwrap_or_default())
    };
    view! {
        <div class="stack-pane" data-testid=format!("compare-stack-{}", pane.as_str())>
            <div class="stack-title">{title}</div>
            <div class="tl-body stack-body" node_ref=area>
                <Labels tracks=tracks.into() scroll=scroll.into() on_toggle=on_toggle />
                <canvas
                    data-testid=format!("compare-canvas-{}", pane.as_str())
                    node_ref=canvas
                    style:left=format!("{LABEL_W}px")
                    on:pointerenter=move |_| ctl.stack_focus(true)
                    on:pointerdown=on_down
                    on:pointermove=on_move
                    on:pointerup=on_up
                    on:pointerleave=move |_| ctl.stack_hover_end()
                    on:wheel=on_wheel
                ></canvas>
                <Tooltip hover=hover.into() />
            </div>
        </div>
    }
}
