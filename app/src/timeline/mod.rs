//! The lane timeline: a toolbar (search, range readout, zoom buttons, help), sticky lane labels
//! in the DOM beside a canvas painted from the worker's level-of-detail tiles, a hover tooltip
//! and the key help overlay.
//!
//! Input handling (Perfetto's conventions): drag pans (and scrolls), shift-drag selects a range,
//! click selects, wheel scrolls lanes, shift+wheel or a horizontal swipe pans, ctrl+wheel (and
//! trackpad pinch) zooms around the pointer; keys in [`keys`]. Painting runs at most once per
//! animation frame, after any state change ([`crate::frame`]): the state becomes a
//! [`draw_list::DrawList`], replayed on the canvas by [`paint_canvas2d`].
//!
//! Test ids: `timeline`, `timeline-canvas`, `lane-labels` with `group-label` (button, folds the
//! group; `data-collapsed`), `lane-label` (`data-lane`) and `counter-label`; `search-input`,
//! `search-count`, `search-next`, `search-prev`; `range-readout`, `range-clear`; `zoom-reset`;
//! `tooltip`; `help-overlay`.

mod band;
pub mod draw_list;
mod keys;
mod paint_canvas2d;
pub mod ranks;
pub mod stack;
pub mod theme;

use crate::control::Controller;
use crate::deferred::Deferred;
use crate::frame::{self, Target};
use crate::state::format;
use crate::state::timeline::{Hover, TimelineState};
use crate::state::tracks::TrackKind;
use draw_list::{Surface, RULER_H};
use keys::Keys;
pub use keys::now_ms;
use leptos::ev;
use leptos::html;
use leptos::prelude::*;
use std::cell::Cell;
use std::rc::Rc;
use theme::Theme;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Width of the lane label column, CSS px.
const LABEL_W: f64 = 200.0;
/// Pointer travel below which a press is a click, CSS px.
const CLICK_SLOP: f64 = 4.0;

/// A press on the canvas in progress.
#[derive(Clone, Copy)]
struct Press {
    x: f64,
    y: f64,
    last_x: f64,
    last_y: f64,
    shift: bool,
    moved: bool,
}

/// The timeline panel.
#[component]
pub fn Timeline(ctl: Controller, theme: ReadSignal<Theme>) -> impl IntoView {
    let canvas: NodeRef<html::Canvas> = NodeRef::new();
    let area: NodeRef<html::Div> = NodeRef::new();
    let help = RwSignal::new(false);
    let keys = Rc::new(Keys::default());
    let press: Rc<Cell<Option<Press>>> = Rc::new(Cell::new(None));

    // The staged canvas is warmed up once the page is built, while the trace loads.
    crate::deferred::when_built(move || {
        if let Some(theme) = theme.try_get_untracked() {
            warm_up(ctl, canvas, theme);
        }
    });
    // Paint once per animation frame after any timeline or theme change.
    Effect::new(move |_| {
        ctl.timeline.track();
        theme.track();
        frame::request(Target::Timeline, move || {
            if let Some(theme) = theme.try_get_untracked() {
                paint(ctl, canvas, theme);
            }
        });
    });
    // Keep the canvas sized to its box (device pixels), and the state told of the size.
    Effect::new(move |_| {
        if let Some(el) = area.get() {
            // Lives as long as the page: the page never removes the timeline once shown.
            std::mem::forget(observe_size(&el, canvas, move |w, h| ctl.resize(w, h)));
        }
    });

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

    let on_down = {
        let press = press.clone();
        move |e: web_sys::PointerEvent| {
            if e.button() != 0 {
                return;
            }
            press.set(Some(Press::at(&e, canvas)));
        }
    };
    let on_move = {
        let (press, keys) = (press.clone(), keys.clone());
        move |e: web_sys::PointerEvent| {
            let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
            keys.anchor.set(Some(x));
            let Some(mut p) = press.get() else {
                if y > RULER_H {
                    ctl.hover(x, y - RULER_H);
                } else {
                    ctl.hover_end();
                }
                return;
            };
            p.moved |= (x - p.x).abs() + (y - p.y).abs() > CLICK_SLOP;
            if p.moved {
                if p.shift {
                    let (a, b) = ctl.timeline.with_untracked(|t| (t.view.ns_at(p.x), t.view.ns_at(x)));
                    ctl.set_range(Some((a, b)));
                } else {
                    ctl.view(|t: &mut TimelineState| {
                        t.view.pan_px(p.last_x - x);
                        t.scroll_by(p.last_y - y);
                    });
                }
            }
            p.last_x = x;
            p.last_y = y;
            press.set(Some(p));
        }
    };
    let on_up = {
        let press = press.clone();
        move |e: web_sys::PointerEvent| {
            let Some(p) = press.take() else { return };
            if !p.moved && p.y > RULER_H {
                ctl.click(f64::from(e.offset_x()), f64::from(e.offset_y()) - RULER_H);
            }
        }
    };
    let on_leave = {
        let keys = keys.clone();
        move |_: web_sys::PointerEvent| {
            keys.anchor.set(None);
            ctl.hover_end();
        }
    };
    let on_wheel = move |e: web_sys::WheelEvent| match wheel(&e) {
        Wheel::Zoom(factor) => ctl.zoom(factor, f64::from(e.offset_x())),
        Wheel::Pan(dx) => ctl.pan(dx),
        Wheel::Scroll(dy) => ctl.scroll(dy),
    };
    let tracks = Memo::new(move |_| ctl.timeline.with(|t| t.tracks.clone()));
    let scroll = Memo::new(move |_| ctl.timeline.with(|t| t.scroll_y));
    let hover = Memo::new(move |_| ctl.timeline.with(|t| t.hover.clone()));
    let on_toggle = Callback::new(move |g: usize| ctl.toggle_group(g));

    view! {
        <section class="timeline" data-testid="timeline">
            // A task after the rest: building the timeline in one task took over 50 ms at boot.
            <Deferred>
                <Toolbar ctl=ctl help=help />
            </Deferred>
            <div class="tl-body" node_ref=area>
                <Labels tracks=tracks.into() scroll=scroll.into() on_toggle=on_toggle />
                <canvas
                    data-testid="timeline-canvas"
                    node_ref=canvas
                    style:left=format!("{LABEL_W}px")
                    on:pointerenter=move |_| ctl.stack_focus(false)
                    on:pointerdown=on_down
                    on:pointermove=on_move
                    on:pointerup=on_up
                    on:pointerleave=on_leave
                    on:wheel=on_wheel
                ></canvas>
                <Tooltip hover=hover.into() />
            </div>
            <Show when=move || help.get()>
                <HelpOverlay on_close=Callback::new(move |()| help.set(false)) />
            </Show>
        </section>
    }
}

/// A press on a canvas starting: captures the pointer.
impl Press {
    fn at(e: &web_sys::PointerEvent, canvas: NodeRef<html::Canvas>) -> Self {
        let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
        if let Some(c) = canvas.try_get_untracked().flatten() {
            let _ = c.set_pointer_capture(e.pointer_id());
        }
        Press { x, y, last_x: x, last_y: y, shift: e.shift_key(), moved: false }
    }
}

/// What a wheel event asks for (Perfetto's conventions).
enum Wheel {
    /// Ctrl+wheel or pinch: zoom by this factor around the pointer.
    Zoom(f64),
    /// Shift+wheel or a horizontal swipe: pan by px.
    Pan(f64),
    /// Wheel: scroll the lanes by px.
    Scroll(f64),
}

/// Reads a wheel event (and keeps the page from scrolling).
fn wheel(e: &web_sys::WheelEvent) -> Wheel {
    e.prevent_default();
    let scale = match e.delta_mode() {
        1 => 16.0,
        2 => 400.0,
        _ => 1.0,
    };
    let (dx, dy) = (e.delta_x() * scale, e.delta_y() * scale);
    if e.ctrl_key() || e.meta_key() {
        Wheel::Zoom((dy * 0.01).exp())
    } else if e.shift_key() {
        Wheel::Pan(if dx != 0.0 { dx } else { dy })
    } else if dx.abs() > dy.abs() {
        Wheel::Pan(dx)
    } else {
        Wheel::Scroll(dy)
    }
}

/// Paints `t` on `canvas` now (builds its draw list and replays it); returns the paint time in
/// ms, or `None` when the canvas is gone.
fn paint_canvas(canvas: NodeRef<html::Canvas>, theme: Theme, t: &TimelineState) -> Option<f64> {
    let (ctx, width, height, dpr) = paint_canvas2d::context(canvas)?;
    let started = now_ms();
    let list = draw_list::draw_list(t, theme, Surface { width, height, dpr });
    paint_canvas2d::replay(&ctx, &list);
    Some(now_ms() - started)
}

/// Warms the staged canvas up before a trace is shown, in two tasks of their own outside any
/// frame: the context's setup, then the palette and the label font ([`draw_list::warm_up`]).
/// On a cold 2-core machine these took 15-40 ms, and painted in the frames that laid out the
/// page being built they made long tasks. A trace shown by then is left as painted.
fn warm_up(ctl: Controller, canvas: NodeRef<html::Canvas>, theme: Theme) {
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

/// Paints the canvas now and records the frame time (and the first paint after a load). A
/// canvas with no trace is staged (hidden) and not painted.
fn paint(ctl: Controller, canvas: NodeRef<html::Canvas>, theme: Theme) {
    let Some((ms, has_tiles, loaded_at)) = ctl.timeline.with_untracked(|t| {
        t.layout.as_ref()?;
        let ms = paint_canvas(canvas, theme, t)?;
        Some((ms, t.has_tiles(), t.loaded_at))
    }) else {
        return;
    };
    let done = now_ms();
    let first = (has_tiles && loaded_at.is_some()).then(|| done - loaded_at.unwrap_or(done));
    ctl.frame_drawn(ms, first);
}

/// The observer keeping a canvas sized, with its callback; disconnect it to stop.
type SizeObserver = (web_sys::ResizeObserver, Closure<dyn Fn()>);

/// Sizes the canvas to `el` minus the label column whenever `el` resizes, and tells
/// `on_size(width, height below the ruler)`; the observer lives as long as the returned value.
///
/// The first size comes from the observer's initial callback, which runs at the next rendering
/// step right after the page's layout, not from a measurement here: reading `clientWidth` in
/// the mounting task forced a synchronous layout of the whole page (~40 ms at page boot).
fn observe_size(
    el: &web_sys::HtmlDivElement,
    canvas: NodeRef<html::Canvas>,
    on_size: impl Fn(f64, f64) + 'static,
) -> Option<SizeObserver> {
    let el2 = el.clone();
    let apply = move || {
        let Some(c) = canvas.try_get_untracked().flatten() else { return };
        let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
        let w = (f64::from(el2.client_width()) - LABEL_W).max(50.0);
        let h = f64::from(el2.client_height()).max(RULER_H + 20.0);
        c.set_width((w * dpr).round() as u32);
        c.set_height((h * dpr).round() as u32);
        let style = web_sys::HtmlElement::style(&c);
        let _ = style.set_property("width", &format!("{w}px"));
        let _ = style.set_property("height", &format!("{h}px"));
        on_size(w, h - RULER_H);
    };
    let callback = Closure::<dyn Fn()>::new(apply);
    let observer = web_sys::ResizeObserver::new(callback.as_ref().unchecked_ref()).ok()?;
    observer.observe(el);
    Some((observer, callback))
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
            <button data-testid="zoom-reset" title="Show everything (0)" on:click=move |_| ctl.reset_view()>"Reset zoom"</button>
            <button data-testid="help-button" title="Keyboard help (?)" on:click=move |_| help.update(|h| *h = !*h)>"?"</button>
        </div>
    }
}

/// Sticky lane labels: one per track, aligned with the canvas, scrolled with it; a group
/// label folds its group with `on_toggle`.
#[component]
fn Labels(tracks: Signal<Vec<crate::state::tracks::Track>>, scroll: Signal<f64>, on_toggle: Callback<usize>) -> impl IntoView {
    let items = move || {
        tracks
            .get()
            .into_iter()
            .map(|t| {
                let style = format!("top:{}px;height:{}px", t.y, t.height);
                let title = t.label.clone();
                match t.kind {
                    TrackKind::Group { group, collapsed } => view! {
                        <button
                            class="tl-label group"
                            data-testid="group-label"
                            data-collapsed=collapsed.to_string()
                            style=style
                            title=title
                            on:click=move |_| on_toggle.run(group)
                        >
                            {if collapsed { "▸ " } else { "▾ " }}{t.label}
                        </button>
                    }
                    .into_any(),
                    TrackKind::Lane { lane, .. } => view! {
                        <div class="tl-label lane" data-testid="lane-label" data-lane=lane style=style title=title>
                            {t.label}
                        </div>
                    }
                    .into_any(),
                    TrackKind::Counter { .. } => view! {
                        <div class="tl-label counter" data-testid="counter-label" style=style title=title>
                            {t.label}
                        </div>
                    }
                    .into_any(),
                }
            })
            .collect_view()
    };
    view! {
        <div class="tl-labels" data-testid="lane-labels" style:width=format!("{LABEL_W}px")>
            <div class="tl-ruler-spacer" style:height=format!("{RULER_H}px")></div>
            <div class="tl-label-clip">
                <div class="tl-label-track" style:transform=move || format!("translateY({}px)", -scroll.get())>
                    {items}
                </div>
            </div>
        </div>
    }
}

/// The hover tooltip: name, duration, self time, lane; how many slices a merged rect stands for.
#[component]
fn Tooltip(hover: Signal<Option<Hover>>) -> impl IntoView {
    move || {
        hover.get().map(|h| {
            let style = format!("left:{}px;top:{}px", h.x + LABEL_W + 14.0, h.y + RULER_H + 14.0);
            let times = h.details.as_ref().map(|d| {
                format!(
                    "{} · self {}",
                    format::span_us(d.slice.dur_ns as f64 / 1e3),
                    format::span_us(d.self_ns as f64 / 1e3)
                )
            });
            let more = (h.count > 1).then(|| format!("+{} more slices here at this zoom", h.count - 1));
            view! {
                <div class="tooltip" data-testid="tooltip" style=style>
                    <div class="tt-name">{h.name}</div>
                    <div>{times.unwrap_or_default()}</div>
                    <div class="muted">{h.lane}</div>
                    <div class="muted">{more.unwrap_or_default()}</div>
                </div>
            }
        })
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
