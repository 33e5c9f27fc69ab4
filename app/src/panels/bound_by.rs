//! The Steps tab's "Bound by": per step, a bar of its critical path stacked by class (the
//! nine classes of `report --critical-path`, one color each, with a legend), beside the step
//! table's breakdown. Clicking a bar picks that step for the timeline's critical path overlay
//! and shows the step on the timeline;
//! "all steps" picks every step. A thin view over [`CriticalState`]; the numbers are the
//! engine's.
//!
//! Test ids: `bound-by` (panel), `bound-by-legend` with `bound-by-class` (`data-class`),
//! `bound-by-row` (`data-step`, `data-bound-by`, `data-selected`) with `bound-by-part`
//! (`data-class`, `data-value`: ns), `bound-by-all`, `bound-by-error`.

use crate::control::Controller;
use crate::state::critical::{CriticalState, CLASS_COLORS};
use crate::state::format;
use leptos::prelude::*;
use protocol::{CriticalPathData, StepPathData};
use std::sync::Arc;

/// The bound-by bars of every step.
#[component]
pub fn BoundByPanel(ctl: Controller) -> impl IntoView {
    let data = Memo::new(move |_| ctl.critical.with(|c| c.data.clone()));
    let picked = Memo::new(move |_| ctl.critical.with(|c| c.step));
    let status = Memo::new(move |_| ctl.critical.with(status_text));
    view! {
        <section class="card bound-by" data-testid="bound-by">
            <h3>"What bounds each step (critical path)"</h3>
            <p class="muted">{move || status.get()}</p>
            {move || ctl.critical.with(|c| c.error.clone()).map(|m| view! {
                <p class="error" data-testid="bound-by-error" role="alert">{m}</p>
            })}
            {move || data.get().map(|d| body(ctl, d, picked))}
        </section>
    }
}

fn status_text(c: &CriticalState) -> String {
    match (&c.data, c.pending.is_some()) {
        (_, true) => "Following each step's critical path…".to_owned(),
        (Some(_), false) => "Each bar is a step's critical path by what it waited on · click one to show its path on the timeline (C)".to_owned(),
        (None, false) => String::new(),
    }
}

fn body(ctl: Controller, d: Arc<CriticalPathData>, picked: Memo<Option<u64>>) -> impl IntoView {
    let legend = d
        .classes
        .iter()
        .zip(&d.labels)
        .enumerate()
        .map(|(k, (id, label))| {
            let color = CLASS_COLORS.get(k).copied().unwrap_or("#888");
            view! {
                <span class="legend-item" data-testid="bound-by-class" data-class=id.clone()>
                    <i style=format!("background:{color}")></i>{label.clone()}
                </span>
            }
        })
        .collect_view();
    let longest = d.steps.iter().map(|p| p.end_ns - p.start_ns).max().unwrap_or(1).max(1);
    let rows = d.steps.iter().map(|p| row(ctl, &d, p, longest, picked)).collect_view();
    view! {
        <div class="legend" data-testid="bound-by-legend">{legend}</div>
        <button data-testid="bound-by-all" class:on=move || picked.get().is_none()
            on:click=move |_| ctl.critical_step(None)>"all steps"</button>
        <div class="bound-by-rows">{rows}</div>
    }
}

fn row(ctl: Controller, d: &CriticalPathData, p: &StepPathData, longest: i64, picked: Memo<Option<u64>>) -> impl IntoView {
    let wall = p.end_ns - p.start_ns;
    let step = p.step;
    let parts = p
        .shares_ns
        .iter()
        .enumerate()
        .filter(|(_, &ns)| ns > 0)
        .map(|(k, &ns)| {
            let class = d.classes.get(k).cloned().unwrap_or_default();
            let label = d.labels.get(k).cloned().unwrap_or_default();
            let pct = 100.0 * ns as f64 / longest as f64;
            let of = if wall > 0 { 100.0 * ns as f64 / wall as f64 } else { 0.0 };
            let title = format!("{label}: {} ({of:.1}% of the step)", format::span_us(ns as f64 / 1e3));
            let color = CLASS_COLORS.get(k).copied().unwrap_or("#888");
            view! {
                <span class="part" data-testid="bound-by-part" data-class=class data-value=ns title=title
                    style=format!("width:{pct:.3}%;background:{color}")></span>
            }
        })
        .collect_view();
    let bound = d.classes.iter().position(|c| *c == p.bound_by).and_then(|k| d.labels.get(k)).cloned().unwrap_or_default();
    let name = step.map_or_else(|| "capture".to_owned(), |n| format!("step {n}"));
    let title = format!("{name}: {} · bound by {bound} · click: its path on the timeline", format::span_us(wall as f64 / 1e3));
    view! {
        <div class="bound-by-row" data-testid="bound-by-row" data-step=step.map(|n| n.to_string())
            data-bound-by=p.bound_by.clone() data-selected=move || (step.is_some() && picked.get() == step).to_string()
            title=title on:click=move |_| ctl.critical_pick(step)>
            <span class="step">{name}</span>
            <span class="bar">{parts}</span>
            <span class="muted">{bound}</span>
        </div>
    }
}
