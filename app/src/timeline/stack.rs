//! Stacked timelines: the Compare tab's baseline panel above its candidate panel
//! (docs/viewer.md#compare-two-traces), and the panels the Run tab's ranks timeline stacks
//! ([`super::ranks`]). Each panel is a [`LaneCanvas`] of its [`LaneSource::Stack`], drawn like
//! the main timeline (a ranks panel adds its collective band) from its own tiles, time 0 at its
//! origin, one shared time scale and window (`state::stack`). In the compare view a step picker
//! chooses the step; the note says which step each panel shows and how long it took.
//!
//! Input (as on the main timeline, acting on every panel): drag pans (and scrolls the panel's
//! lanes), ctrl+wheel zooms at the pointer, shift+wheel pans, wheel scrolls the panel; W/S/A/D
//! and 0 go to the stack while the pointer was last over it (`keys`). Hover shows name and
//! duration; a click on a ranks panel selects.
//!
//! Test ids: `compare-stack`, `compare-step` (a [`StepPicker`]: the aligned step's number),
//! `compare-step-note`, `compare-stack-reset`, panels `compare-stack-base|cand` with canvases
//! `compare-canvas-base|cand`, their `lane-labels` and `tooltip`.

use super::lane_canvas::LaneCanvas;
use super::lane_source::LaneSource;
use super::theme::Theme;
use crate::control::Controller;
use crate::panels::StepPicker;
use crate::state::format;
use crate::state::stack::{Pane, StackId, StackState};
use leptos::prelude::*;

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

/// A compare panel: its title over the lane canvas of its [`LaneSource::Stack`].
#[component]
fn ComparePane(ctl: Controller, pane: Pane, theme: ReadSignal<Theme>) -> impl IntoView {
    let title = move || {
        let (who, name) = match pane {
            Pane::Base => ("Baseline", ctl.compare.with(|c| c.base.clone())),
            Pane::Cand => ("Candidate", ctl.state.with(|s| s.summary.as_ref().map(|x| x.file_name.clone()))),
        };
        format!("{who} · {}", name.unwrap_or_default())
    };
    let source = LaneSource::Stack(StackId::Compare, pane.index());
    view! {
        <div class="stack-pane" data-testid=format!("compare-stack-{}", pane.as_str())>
            <div class="stack-title">{title}</div>
            <LaneCanvas ctl=ctl theme=theme source=source testid=format!("compare-canvas-{}", pane.as_str()) />
        </div>
    }
}
