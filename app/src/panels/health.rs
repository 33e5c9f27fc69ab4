//! Trace health in the Summary tab: each check of `info`'s health section (launch calls without
//! device work, device activities without a launch call, outside the capture window, overlapping
//! on a stream, starting before their launch call), with its count, share and a few examples
//! that select the slice and bring it into view; then the clock offset, truncation and what the
//! parse skipped. The numbers are the summary's `health`, the same as `info --json`'s.
//!
//! Test ids: `health` (the block), `health-row` (`data-key` = the check's `info --json` key,
//! `data-count`, `data-of`), `health-example` (`data-slice`), `health-clock-offset`
//! (`data-value`, µs), `health-truncated`, `health-skipped` (`data-key`, `data-count`).

use crate::control::Controller;
use crate::state::{format, LoadState};
use leptos::prelude::*;
use protocol::{HealthCheck, HealthSummary};

/// The health block of the last loaded trace's summary, if any.
#[component]
pub fn HealthPanel(ctl: Controller, state: ReadSignal<LoadState>) -> impl IntoView {
    let health = Memo::new(move |_| state.with(|s| s.summary.as_ref().map(|s| s.health.clone())));
    move || health.get().map(|h| health_view(ctl, &h))
}

fn health_view(ctl: Controller, h: &HealthSummary) -> impl IntoView {
    let checks = [
        ("launches_without_activity", "Launch calls that ran nothing", &h.launches_without_activity),
        ("activities_without_launch", "Device activities without a launch call", &h.activities_without_launch),
        ("outside_window", "Device activities outside the capture window", &h.outside_window),
        ("stream_overlaps", "Device activities overlapping on their stream", &h.stream_overlaps),
        ("before_launch", "Device activities starting before their launch", &h.before_launch),
    ];
    let rows = checks.into_iter().map(|(key, label, c)| row(ctl, key, label, c)).collect_view();
    let offset = h.clock_offset_us.map(|us| {
        view! {
            <p data-testid="health-clock-offset" data-value=us>
                {format!("Estimated CPU/GPU clock offset: {}", format::span_us(us))}
            </p>
        }
    });
    let truncated = h.truncated.then(|| {
        view! { <p data-testid="health-truncated">"The file is truncated: the event array never closes."</p> }
    });
    let skipped = h
        .skipped
        .iter()
        .map(|(kind, n)| {
            view! {
                <li data-testid="health-skipped" data-key=kind.clone() data-count=*n>
                    {format!("{kind}: {}", format::count(*n))}
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="card health" data-testid="health">
            <h2>"Trace health"</h2>
            <table class="counts">
                <thead><tr><th>"Check"</th><th>"Events"</th><th>"Of"</th><th>"Examples"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            {offset}
            {truncated}
            <ul>{skipped}</ul>
        </section>
    }
}

fn row(ctl: Controller, key: &'static str, label: &'static str, c: &HealthCheck) -> impl IntoView {
    let share = if c.of == 0 { String::new() } else { format!(" ({:.1}%)", c.count as f64 * 100.0 / c.of as f64) };
    let examples = c
        .examples
        .iter()
        .map(|&id| {
            view! {
                <button class="slice-link" data-testid="health-example" data-slice=id
                    on:click=move |_| ctl.select_and_reveal(id)>
                    {format!("#{id}")}
                </button>
            }
        })
        .collect_view();
    view! {
        <tr data-testid="health-row" data-key=key data-count=c.count data-of=c.of>
            <th>{label}</th>
            <td>{format!("{}{share}", format::count(c.count))}</td>
            <td>{format::count(c.of)}</td>
            <td>{examples}</td>
        </tr>
    }
}
