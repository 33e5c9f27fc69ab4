//! The lane canvas: sticky lane labels in the DOM beside a canvas painted from level-of-detail
//! tiles, and a hover tooltip. The main timeline shows one, each stacked panel another; what
//! differs between them is their [`LaneSource`].
//!
//! Input (Perfetto's conventions): drag pans (and scrolls), shift-drag selects a range where
//! the source has one, click selects, wheel scrolls lanes, shift+wheel or a horizontal swipe
//! pans, ctrl+wheel (and trackpad pinch) zooms around the pointer. Painting runs at most once
//! per animation frame, after any change of the source or the theme ([`super::lane_paint`]).
//!
//! Test ids: the canvas's (a prop), `lane-labels` with `group-label` (button, folds the group;
//! `data-collapsed`, `data-group`), `group-pin` (main timeline: pins the group to the top;
//! `data-group`, `data-pinned`), `lane-label` (`data-lane`), `stack-row-label` (a Python stack's rows:
//! `data-lane`, `data-depth`) and `counter-label`; `tooltip`.

use super::draw_list::RULER_H;
use super::keys::Keys;
use super::lane_paint::{self, Painter};
use super::lane_source::LaneSource;
use super::theme::Theme;
use crate::control::Controller;
use crate::state::format;
use crate::state::timeline::Hover;
use crate::state::tracks::{self, TrackKind};
use leptos::html;
use leptos::prelude::*;
use std::cell::Cell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Width of the lane label column, CSS px.
const LABEL_W: f64 = 200.0;
/// Pointer travel below which a press is a click, CSS px.
const CLICK_SLOP: f64 = 4.0;

/// A press on the canvas in progress.
#[derive(Clone, Copy)]
struct Press {
    /// Where it started, CSS px of the canvas.
    x: f64,
    y: f64,
    /// Where the pointer was at the last move.
    last_x: f64,
    last_y: f64,
    /// Shift was held: the drag selects a range.
    shift: bool,
    /// It went past [`CLICK_SLOP`]: not a click.
    moved: bool,
}

/// Labels, canvas and tooltip of `source`, in a `tl-body` that sizes the canvas.
#[component]
pub fn LaneCanvas(
    ctl: Controller,
    theme: ReadSignal<Theme>,
    source: LaneSource,
    /// The canvas's test id.
    #[prop(into)]
    testid: String,
    /// `data-rank` of the canvas, when it shows a rank.
    #[prop(optional)]
    rank: Option<u32>,
    /// Keys whose zoom anchor follows the pointer (the main timeline's).
    #[prop(optional)]
    keys: Option<Rc<Keys>>,
) -> impl IntoView {
    let canvas: NodeRef<html::Canvas> = NodeRef::new();
    let area: NodeRef<html::Div> = NodeRef::new();
    let press: Rc<Cell<Option<Press>>> = Rc::new(Cell::new(None));

    if source == LaneSource::Main {
        // The staged canvas is warmed up once the page is built, while the trace loads.
        crate::deferred::when_built(move || {
            if let Some(theme) = theme.try_get_untracked() {
                lane_paint::warm_up(ctl, canvas, theme);
            }
        });
    }
    let painter = Painter::new(ctl, source, canvas, theme);
    let repaint = painter.clone();
    Effect::new(move |_| {
        source.track(ctl);
        theme.track();
        painter.clone().schedule();
    });
    // Keep the canvas sized to its box (device pixels), and the source told of the size. The
    // observer stops when the canvas unmounts (a stacked panel with its tab). Resizing a canvas
    // clears it, and only the first stacked panel's size is state, so every canvas asks for its
    // own repaint: the other panels stayed blank until the pointer crossed them.
    let observer = StoredValue::new_local(None);
    Effect::new(move |_| {
        if let Some(el) = area.get() {
            let repaint = repaint.clone();
            observer.set_value(observe_size(&el, canvas, move |w, h| {
                source.resized(ctl, w, h);
                repaint.clone().schedule();
            }));
        }
    });
    on_cleanup(move || {
        observer.try_with_value(|o: &Option<SizeObserver>| {
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
        let (press, keys) = (press.clone(), keys.clone());
        move |e: web_sys::PointerEvent| {
            let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
            if let Some(k) = &keys {
                k.anchor.set(Some(x));
            }
            source.focus(ctl);
            let Some(mut p) = press.get() else {
                if y > RULER_H {
                    source.hover(ctl, x, y - RULER_H);
                } else {
                    source.hover_end(ctl);
                }
                return;
            };
            p.moved |= (x - p.x).abs() + (y - p.y).abs() > CLICK_SLOP;
            if p.moved {
                source.drag(ctl, (p.x, p.shift), x, (p.last_x - x, p.last_y - y));
            }
            p.last_x = x;
            p.last_y = y;
            press.set(Some(p));
        }
    };
    let on_up = move |e: web_sys::PointerEvent| {
        let Some(p) = press.take() else { return };
        if !p.moved && p.y > RULER_H {
            source.click(ctl, f64::from(e.offset_x()), f64::from(e.offset_y()) - RULER_H);
        }
    };
    let on_leave = move |_: web_sys::PointerEvent| {
        if let Some(k) = &keys {
            k.anchor.set(None);
        }
        source.hover_end(ctl);
    };
    let on_wheel = move |e: web_sys::WheelEvent| match wheel(&e) {
        Wheel::Zoom(factor) => source.zoom(ctl, factor, f64::from(e.offset_x())),
        Wheel::Pan(dx) => source.pan(ctl, dx),
        Wheel::Scroll(dy) => source.scroll(ctl, dy),
    };
    let tracks = Memo::new(move |_| source.with(ctl, |t| t.tracks.clone()).unwrap_or_default());
    let scroll = Memo::new(move |_| source.with(ctl, |t| t.scroll_y).unwrap_or(0.0));
    let hover = Memo::new(move |_| source.with(ctl, |t| t.hover.clone()).flatten());
    let on_toggle = Callback::new(move |g: usize| source.toggle_group(ctl, g));
    let on_pin = matches!(source, LaneSource::Main).then(|| Callback::new(move |g: usize| ctl.toggle_pin(g)));
    let class = match source {
        LaneSource::Main => "tl-body",
        LaneSource::Stack(..) => "tl-body stack-body",
    };

    view! {
        <div class=class node_ref=area>
            <Labels tracks=tracks.into() scroll=scroll.into() on_toggle=on_toggle on_pin=on_pin />
            <canvas
                data-testid=testid
                data-rank=rank
                node_ref=canvas
                style:left=format!("{LABEL_W}px")
                on:pointerenter=move |_| source.focus(ctl)
                on:pointerdown=on_down
                on:pointermove=on_move
                on:pointerup=on_up
                on:pointerleave=on_leave
                on:wheel=on_wheel
            ></canvas>
            <Tooltip hover=hover.into() />
        </div>
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
        // Setting a canvas's size clears it, even to the size it has: only a new size is set,
        // so a cleared canvas always differs from its last paint's key and is repainted.
        let (pw, ph) = ((w * dpr).round() as u32, (h * dpr).round() as u32);
        if c.width() != pw {
            c.set_width(pw);
        }
        if c.height() != ph {
            c.set_height(ph);
        }
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

/// Sticky lane labels: one per track, aligned with the canvas, scrolled with it; a group
/// label folds its group with `on_toggle`, and its star pins it with `on_pin` (main timeline).
#[component]
fn Labels(
    tracks: Signal<Vec<tracks::Track>>,
    scroll: Signal<f64>,
    on_toggle: Callback<usize>,
    on_pin: Option<Callback<usize>>,
) -> impl IntoView {
    let items = move || {
        tracks
            .get()
            .into_iter()
            .map(|t| {
                let style = format!("top:{}px;height:{}px", t.y, t.height);
                let title = t.label.clone();
                match t.kind {
                    TrackKind::Group { group, collapsed, pinned } => {
                        let pin = on_pin.map(|on_pin| {
                            let style = format!("top:{}px;height:{}px", t.y, t.height);
                            let (mark, title) = if pinned { ("★", "Unpin this group") } else { ("☆", "Pin this group to the top (the share link keeps it)") };
                            view! {
                                <button class="tl-pin" data-testid="group-pin" data-group=group data-pinned=pinned.to_string()
                                    style=style title=title aria-label=title on:click=move |_| on_pin.run(group)>{mark}</button>
                            }
                        });
                        view! {
                            <button
                                class="tl-label group"
                                data-testid="group-label"
                                data-collapsed=collapsed.to_string()
                                data-group=group
                                style=style
                                title=title
                                on:click=move |_| on_toggle.run(group)
                            >
                                {if collapsed { "▸ " } else { "▾ " }}{t.label}
                            </button>
                            {pin}
                        }
                        .into_any()
                    }
                    TrackKind::Lane { lane, rows, first_row } => {
                        // A thread's Python stack sits below its ops (`first_row` > 0): its rows
                        // are frame depths, outermost first, and say so.
                        let depths = (first_row > 0).then(|| {
                            (0..rows)
                                .map(|d| {
                                    let y = tracks::row_y(&t, first_row + d);
                                    let style = format!("top:{y}px;height:{}px", tracks::ROW_H);
                                    let title = format!("Python frame at depth {d} (0: outermost)");
                                    view! { <div class="tl-label depth" data-testid="stack-row-label" data-lane=lane data-depth=d style=style title=title>{format!("depth {d}")}</div> }
                                })
                                .collect_view()
                        });
                        view! {
                            <div class="tl-label lane" data-testid="lane-label" data-lane=lane style=style title=title>
                                {t.label}
                            </div>
                            {depths}
                        }
                        .into_any()
                    }
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
