//! The Flame tab: the call tree as an icicle chart on a `<canvas>` (roots at the top, a box's
//! width its share of its parent's CPU or GPU time, colored by kind: Python frame, op,
//! annotation, runtime call; threads and the root grey). Hover: name, calls, total, self and GPU
//! time. Click: zoom into the box (the breadcrumb above zooms back out) and select its first
//! call on the timeline, searching its name. Box geometry is [`FlameTree::layout`]'s, so the
//! boxes drawn, clicked and reported by `window.kinetoscope.flame` are the same rects.
//!
//! With a baseline kept (Compare), `flame-color` switches to coloring each box by its change
//! against the same call path in the baseline (grew, shrank, within ±2%: grey), the tree still
//! the current trace's (a differential flame graph; whole trace scope only).
//!
//! Test ids: `flame-panel`, `flame-canvas` (`data-metric`, `data-zoom`: the zoomed row),
//! `flame-color` (buttons, `data-color`: `kind` / `growth`), legend keys `data-key`,
//! `flame-metric` (buttons, `data-metric`, `aria-pressed`), `flame-crumb` (`data-index`: the
//! row), `flame-reset`, `flame-tooltip`, `flame-empty`.

use crate::control::Controller;
use crate::state::flame::{fit_label, FlameBox, FlameTree, Metric, LABEL_PAD_PX};
use crate::state::format;
use crate::timeline::draw_list::{CHAR_PX, LABEL_FONT};
use crate::timeline::theme::Theme;
use leptos::html::Canvas;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::CanvasRenderingContext2d as Ctx;

/// Fill per node kind (`report --tree --json`'s keys); text on them is dark in both themes.
fn kind_fill(kind: &str) -> &'static str {
    match kind {
        "python" => "#f3c46b",
        "op" => "#7fb0e0",
        "annotation" => "#9fd08a",
        "runtime" => "#e58a8a",
        _ => "#c4c8d0",
    }
}

/// Fill per change against the baseline: grew (red), shrank (blue), the same within 2% (grey).
fn growth_fill(growth: &str) -> &'static str {
    match growth {
        "grew" => "#e8766a",
        "shrank" => "#6aa0e8",
        _ => "#c4c8d0",
    }
}

/// The growth legend: change, label.
const GROWTH_LEGEND: [(&str, &str); 3] = [("grew", "grew > 2%"), ("shrank", "shrank > 2%"), ("same", "within ±2% of the baseline")];

/// The legend: kind, label.
const LEGEND: [(&str, &str); 5] =
    [("python", "Python frame"), ("op", "op"), ("annotation", "annotation / range"), ("runtime", "runtime call"), ("thread", "thread, all threads")];

/// The Flame tab's chart (shown while the tab is).
#[component]
pub fn FlamePanel(ctl: Controller, theme: ReadSignal<Theme>) -> impl IntoView {
    let node = NodeRef::<Canvas>::new();
    let resized = RwSignal::new(0u32);
    let listener = window_event_listener(leptos::ev::resize, move |_| resized.update(|n| *n = n.wrapping_add(1)));
    on_cleanup(move || listener.remove());
    let hover = RwSignal::new(None::<(usize, f64, f64)>);
    let shown = Memo::new(move |_| ctl.tables.with(|t| t.flame.as_ref().map(|f| (f.data.clone(), f.zoom, f.metric))));
    Effect::new(move |_| {
        let theme = theme.get();
        resized.track();
        if shown.get().is_none() {
            return;
        }
        let Some(canvas) = node.get() else { return };
        // In a task of its own: reading the width lays the new part out.
        crate::deferred::next_task(move || {
            let Some(tree) = ctl.tables.with_untracked(|t| t.flame.clone()) else { return };
            let width = f64::from(canvas.client_width()).max(200.0);
            let boxes = tree.layout(width);
            paint(&canvas, &tree, &boxes, width, theme);
            ctl.flame_drawn(boxes);
        });
    });
    let at = move |ev: &leptos::ev::MouseEvent| {
        let (x, y) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        ctl.tables.with_untracked(|t| t.flame.as_ref().and_then(|f| f.box_at(x, y).map(|b| (b.row, x, y))))
    };
    let on_move = move |ev: leptos::ev::MouseEvent| hover.set(at(&ev));
    let on_click = move |ev: leptos::ev::MouseEvent| {
        if let Some((row, ..)) = at(&ev) {
            hover.set(None);
            ctl.pick_flame(row);
        }
    };
    let metric = move || shown.get().map(|s| s.2).unwrap_or_default();
    let toggle = move |m: Metric, label: &'static str| {
        view! {
            <button data-testid="flame-metric" data-metric=m.key() class:active=move || metric() == m
                aria-pressed=move || (metric() == m).to_string() on:click=move |_| ctl.set_flame_metric(m)>{label}</button>
        }
    };
    let growth = Memo::new(move |_| shown.get().is_some_and(|s| s.0.against_baseline));
    let legend = move || {
        let keys: Vec<(&str, &str, &str)> = if growth.get() {
            GROWTH_LEGEND.iter().map(|(g, label)| (*g, growth_fill(g), *label)).collect()
        } else {
            LEGEND.iter().map(|(kind, label)| (*kind, kind_fill(kind), *label)).collect()
        };
        keys.into_iter()
            .map(|(key, fill, label)| view! { <span class="flame-key" data-key=key><i style=format!("background:{fill}")></i>{label}</span> })
            .collect_view()
    };
    // Colors by change: only while a baseline is kept.
    let based = Memo::new(move |_| ctl.compare.with(|c| c.base.is_some()));
    let wanted = Memo::new(move |_| ctl.tables.with(|t| t.flame_growth));
    let colors = move || {
        based.get().then(|| {
            let pick = move |on: bool, label: &'static str| {
                view! {
                    <button data-testid="flame-color" data-color=if on { "growth" } else { "kind" } class:active=move || wanted.get() == on
                        aria-pressed=move || (wanted.get() == on).to_string() on:click=move |_| ctl.set_flame_growth(on)>{label}</button>
                }
            };
            view! { <span class="flame-colors">{pick(false, "color by kind")}{pick(true, "color by change vs baseline")}</span> }
        })
    };
    view! {
        <section class="card" data-testid="flame-panel">
            <div class="table-tools">
                {toggle(Metric::Cpu, "CPU time")}
                {toggle(Metric::Gpu, "GPU time")}
                {colors}
                {move || crumbs(ctl)}
            </div>
            <div class="flame-legend muted">{legend}" · click a box: zoom in, select its first call, search its name"</div>
            {move || empty(ctl)}
            <div class="flame-wrap">
                <canvas data-testid="flame-canvas" class="flame-canvas" node_ref=node
                    data-metric=move || metric().key() data-zoom=move || shown.get().map(|s| s.1)
                    on:mousemove=on_move on:mouseleave=move |_| hover.set(None) on:click=on_click></canvas>
                {move || hover.get().and_then(|(row, x, y)| ctl.tables.with(|t| t.flame.as_ref().map(|f| tooltip(f, row, x, y))))}
            </div>
        </section>
    }
}

/// The zoomed node's path, each ancestor a button that zooms back to it, and "Reset zoom".
fn crumbs(ctl: Controller) -> Option<impl IntoView> {
    let (path, names): (Vec<usize>, Vec<String>) = ctl.tables.with(|t| {
        let f = t.flame.as_ref()?;
        let path = f.path(f.zoom);
        let names = path.iter().map(|&k| f.data.rows.get(k).map(|r| r.name.clone()).unwrap_or_default()).collect();
        Some((path, names))
    })?;
    let zoomed = path.len() > 1;
    let buttons = path
        .into_iter()
        .zip(names)
        .map(|(k, name)| {
            let title = name.clone();
            view! { <button class="flame-crumb" data-testid="flame-crumb" data-index=k title=title on:click=move |_| ctl.zoom_flame(k)>{name}</button> }
        })
        .collect_view();
    Some(view! {
        <span class="flame-crumbs">{buttons}</span>
        <button data-testid="flame-reset" prop:disabled=!zoomed on:click=move |_| ctl.zoom_flame(0)>"Reset zoom"</button>
    })
}

/// Why nothing is drawn: no host time (or no GPU time) in the scope.
fn empty(ctl: Controller) -> Option<impl IntoView> {
    let (metric, nothing) = ctl.tables.with(|t| t.flame.as_ref().map(|f| (f.metric, f.value(0) <= 0)))?;
    nothing.then(|| {
        let what = match metric {
            Metric::Cpu => "No host slices (Python frames, ranges, ops, runtime calls) start in this scope.",
            Metric::Gpu => "No GPU time was launched from a CPU thread in this scope.",
        };
        view! { <p class="muted" data-testid="flame-empty">{what}</p> }
    })
}

/// The hover card of row `row` at (`x`, `y`) CSS px in the canvas.
fn tooltip(f: &FlameTree, row: usize, x: f64, y: f64) -> Option<impl IntoView> {
    let r = f.data.rows.get(row)?;
    let us = |ns: i64| format::span_us(ns as f64 / 1e3);
    let style = format!("left:{}px;top:{}px", x + 14.0, y + 14.0);
    Some(view! {
        <div class="tooltip" data-testid="flame-tooltip" style=style>
            <div class="tt-name">{r.name.clone()}</div>
            <div class="muted">{format!("{} · {} calls", r.kind, format::count(r.calls))}</div>
            <div>{format!("CPU total {} · self {}", us(r.total_ns), us(r.self_ns))}</div>
            <div>{format!("GPU total {}", us(r.gpu_total_ns))}</div>
            {r.base_ns.map(|(cpu, gpu)| view! { <div class="muted">{format!("baseline: CPU {} · GPU {}", us(cpu), us(gpu))}</div> })}
        </div>
    })
}

/// Draws `boxes` of `tree` on `canvas`, `width` CSS px wide, as tall as the deepest box.
fn paint(canvas: &web_sys::HtmlCanvasElement, tree: &FlameTree, boxes: &[FlameBox], width: f64, theme: Theme) {
    let height = boxes.iter().map(|b| b.y + b.h).fold(0.0, f64::max);
    let dpr = window().device_pixel_ratio();
    canvas.set_width((width * dpr).round() as u32);
    canvas.set_height((height * dpr).round().max(1.0) as u32);
    let _ = web_sys::HtmlElement::style(canvas).set_property("height", &format!("{height}px"));
    let Some(ctx) = canvas.get_context("2d").ok().flatten().and_then(|c| c.dyn_into::<Ctx>().ok()) else { return };
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.set_fill_style_str(theme.colors().background);
    ctx.fill_rect(0.0, 0.0, width, height);
    ctx.set_font(LABEL_FONT);
    ctx.set_text_baseline("middle");
    for b in boxes {
        let Some(r) = tree.data.rows.get(b.row) else { continue };
        ctx.set_fill_style_str(tree.growth(b.row).map_or_else(|| kind_fill(&r.kind), growth_fill));
        // A 1 px gap between neighbours and bands, where there is room for it.
        let w = if b.w > 2.0 { b.w - 1.0 } else { b.w };
        ctx.fill_rect(b.x, b.y, w, b.h - 1.0);
        if let Some(label) = fit_label(&r.name, b.w, CHAR_PX) {
            ctx.set_fill_style_str("#10131a");
            let _ = ctx.fill_text(&label, b.x + LABEL_PAD_PX, b.y + b.h / 2.0);
        }
    }
}
