//! The lane timeline: a toolbar (search, range readout, zoom buttons, help), the main
//! timeline's [`lane_canvas::LaneCanvas`] (lane labels, canvas, tooltip; pointer and wheel
//! input) and the key help overlay. Keys in [`keys`]; the stacked views ([`stack`], [`ranks`])
//! show one lane canvas per panel.
//!
//! Test ids: `timeline`, `timeline-canvas` (with the lane canvas's), `search-input`,
//! `search-count`, `search-next`, `search-prev`; `range-readout`, `range-clear`; `zoom-reset`;
//! `help-overlay`; `critical-toggle` (`aria-pressed`, `data-step`: the step whose path is shown,
//! absent for every step).

mod band;
pub mod draw_list;
mod keys;
mod lane_canvas;
mod lane_paint;
mod lane_source;
mod paint_canvas2d;
pub mod ranks;
pub mod stack;
pub mod theme;

use crate::control::Controller;
use crate::deferred::Deferred;
use crate::state::format;
use keys::Keys;
use lane_canvas::LaneCanvas;
use lane_source::LaneSource;
use leptos::ev;
use leptos::prelude::*;
use std::rc::Rc;
use theme::Theme;

/// The timeline panel.
#[component]
pub fn Timeline(ctl: Controller, theme: ReadSignal<Theme>) -> impl IntoView {
    let help = RwSignal::new(false);
    let keys = Rc::new(Keys::default());
    {
        let keys1 = keys.clone();
        let down = window_event_listener(ev::keydown, move |e| {
            if keys1.down(ctl, &e, help) {
                e.prevent_default();
            }
        });
        let keys2 = keys.clone();
        let up = window_event_listener(ev::keyup, move |e| keys2.up(&e));
        let keys3 = keys.clone();
        let blur = window_event_listener(ev::blur, move |_| keys3.clear());
        on_cleanup(move || {
            down.remove();
            up.remove();
            blur.remove();
        });
    }

    view! {
        <section class="timeline" data-testid="timeline">
            // A task after the rest: building the timeline in one task took over 50 ms at boot.
            <Deferred>
                <Toolbar ctl=ctl help=help />
            </Deferred>
            <LaneCanvas ctl=ctl theme=theme source=LaneSource::Main testid="timeline-canvas" keys=keys />
            <Show when=move || help.get()>
                <HelpOverlay on_close=Callback::new(move |()| help.set(false)) />
            </Show>
        </section>
    }
}

/// Search box, match count and navigation, range readout, reset and help buttons.
#[component]
fn Toolbar(ctl: Controller, help: RwSignal<bool>) -> impl IntoView {
    let count = Memo::new(move |_| {
        ctl.timeline.with(|t| {
            let text = t.search.text.trim();
            if text.is_empty() {
                return String::new();
            }
            match &t.search.hit {
                Some(h) if h.total == 0 => "no matches".to_owned(),
                Some(h) => match h.rank {
                    Some(r) if t.selected.as_ref().map(|d| d.slice.id) == h.hit.as_ref().map(|x| x.id) => {
                        format!("{r} / {}", h.total)
                    }
                    _ => format!("{} matches", h.total),
                },
                None => "searching…".to_owned(),
            }
        })
    });
    let range = Memo::new(move |_| ctl.timeline.with(|t| t.range));
    let on_key = move |e: web_sys::KeyboardEvent| {
        if e.key() == "Enter" {
            e.prevent_default();
            ctl.search_step(!e.shift_key());
        }
    };
    view! {
        <div class="tl-toolbar">
            <input
                type="search"
                placeholder="Search names and args (Enter: next)"
                data-testid="search-input"
                prop:value=move || ctl.timeline.with(|t| t.search.text.clone())
                on:input=move |e| ctl.search(event_target_value(&e))
                on:keydown=on_key
            />
            <button data-testid="search-prev" title="Previous match (Shift+Enter)" on:click=move |_| ctl.search_step(false)>"◀"</button>
            <button data-testid="search-next" title="Next match (Enter)" on:click=move |_| ctl.search_step(true)>"▶"</button>
            <span class="muted" data-testid="search-count">{move || count.get()}</span>
            <span class="spacer"></span>
            {move || range.get().map(|(a, b)| view! {
                <span class="range" data-testid="range-readout" data-start=a data-end=b>
                    {format!("Range {} ", format::span_us((b - a) / 1e3))}
                    <button data-testid="range-clear" title="Clear range (Esc)" on:click=move |_| ctl.set_range(None)>"×"</button>
                </span>
            })}
            <button data-testid="critical-toggle" class:on=move || ctl.critical.with(|c| c.shown)
                aria-pressed=move || ctl.critical.with(|c| c.shown).to_string()
                data-step=move || ctl.critical.with(|c| c.step.map(|n| n.to_string()))
                title=move || ctl.critical.with(|c| match c.step {
                    Some(n) => format!("Outline the critical path of step {n}, dim the rest (C)"),
                    None => "Outline every step's critical path, dim the rest (C)".to_owned(),
                })
                on:click=move |_| ctl.toggle_critical()>"Critical path"</button>
            <button data-testid="zoom-reset" title="Show everything (0)" on:click=move |_| ctl.reset_view()>"Reset zoom"</button>
            <button data-testid="help-button" title="Keyboard help (?)" on:click=move |_| help.update(|h| *h = !*h)>"?"</button>
        </div>
    }
}

/// The key help overlay (`?`).
#[component]
fn HelpOverlay(on_close: Callback<()>) -> impl IntoView {
    let rows = [
        ("W / S", "zoom in / out around the pointer"),
        ("A / D", "pan left / right"),
        ("drag", "pan and scroll"),
        ("wheel", "scroll lanes; Shift+wheel pans; Ctrl+wheel or pinch zooms"),
        ("click", "select a slice (details, flows)"),
        ("Shift+drag", "select a time range (tables follow it)"),
        ("F", "zoom to the selection or range"),
        ("0 / Home", "show the whole trace"),
        ("Enter / Shift+Enter", "next / previous search match"),
        ("C", "critical path: outline it, dim the rest (a step row picks the step)"),
        ("Esc", "clear selection and range"),
        ("?", "toggle this help"),
    ]
    .into_iter()
    .map(|(k, what)| view! { <tr><td><kbd>{k}</kbd></td><td>{what}</td></tr> })
    .collect_view();
    view! {
        <div class="help-overlay" data-testid="help-overlay" on:click=move |_| on_close.run(())>
            <div class="card">
                <h2>"Keyboard and mouse"</h2>
                <table>{rows}</table>
            </div>
        </div>
    }
}
