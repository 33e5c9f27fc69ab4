//! The trace summary after a successful load: facts in cards, counts in tables, and the lane
//! list (processes with their threads and streams).
//!
//! Test ids: `summary` (the panel), `summary-file` (file name), `summary-events` and
//! `summary-span` (formatted text, raw number in `data-value`: events, span in µs),
//! `phase-counts` and `category-counts` (tables: key, count; largest first), `lane-list`.
//! Rebuilt only when the summary changes (a memo), not on progress updates. [`LoadNotices`]:
//! `empty-state` and `truncation-banner` (texts from `state::notice`).

use crate::deferred::Deferred;
use crate::state::{format, notice, LoadState};
use leptos::prelude::*;
use protocol::{ProcessSummary, TraceSummary};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One line above the timeline: file name, size, devices, span, events, warnings.
/// Test id: `trace-header`.
#[component]
pub fn TraceHeader(state: ReadSignal<LoadState>) -> impl IntoView {
    let summary = Memo::new(move |_| state.with(|s| s.summary.clone()));
    move || {
        summary.get().map(|s| {
            let gpus: Vec<String> = s
                .processes
                .iter()
                .filter(|p| p.kind == "gpu")
                .map(|p| p.name.clone())
                .collect();
            let devices = if gpus.is_empty() { "CPU only".to_owned() } else { gpus.join(", ") };
            let warnings = match s.warnings.len() {
                0 => String::new(),
                n => format!(" · {n} {}", if n == 1 { "warning" } else { "warnings" }),
            };
            let truncated = if s.truncated { " · truncated" } else { "" };
            view! {
                <div class="trace-header" data-testid="trace-header">
                    <b>{s.file_name.clone()}</b>
                    {format!(
                        " · {} · {devices} · {} · {} events{warnings}{truncated}",
                        format::bytes(s.file_bytes),
                        format::span_us(s.span_us),
                        format::count(s.events),
                    )}
                </div>
            }
        })
    }
}

/// Under the header, where the eye is: that this is the demo and how to open one's own trace
/// (`demo-banner`), why the timeline is empty (`empty-state`), or where a cut-short file
/// stopped (`truncation-banner`); nothing for a whole trace of one's own with slices.
#[component]
pub fn LoadNotices(state: ReadSignal<LoadState>) -> impl IntoView {
    let summary = Memo::new(move |_| state.with(|s| s.summary.clone()));
    let demo = Memo::new(move |_| state.with(|s| s.demo));
    move || {
        summary.get().map(|s| {
            let demo = demo.get().then(|| view! { <section class="card notice" role="note" data-testid="demo-banner">{notice::DEMO}</section> });
            let empty = notice::empty_state(&s).map(|text| {
                let why = s.warnings.first().map(|w| view! { <p class="muted">"The parse says: "<code>{w.clone()}</code></p> });
                view! { <section class="card notice" role="status" data-testid="empty-state"><b>{text}</b>{why}</section> }
            });
            let truncated = notice::truncation(&s).map(|text| {
                view! { <section class="card notice warn" role="alert" data-testid="truncation-banner">{text}</section> }
            });
            view! { {demo}{empty}{truncated} }
        })
    }
}

/// Shows the last loaded trace's summary, if any.
#[component]
pub fn SummaryPanel(state: ReadSignal<LoadState>) -> impl IntoView {
    let summary = Memo::new(move |_| state.with(|s| s.summary.clone()));
    move || summary.get().map(|s| summary_view(&s))
}

fn summary_view(s: &Arc<TraceSummary>) -> impl IntoView {
    let warnings = (!s.warnings.is_empty()).then(|| {
        let items = s
            .warnings
            .iter()
            .map(|w| view! { <li>{w.clone()}</li> })
            .collect_view();
        view! {
            <section class="card warnings" data-testid="warnings">
                <h2>"Warnings"</h2>
                <ul>{items}</ul>
            </section>
        }
    });
    let (tables, lanes) = (s.clone(), s.clone());
    view! {
        <section class="summary" data-testid="summary">
            <div class="cards">
                {file_card(s)}
                {events_card(s)}
                {links_card(s)}
            </div>
            {warnings}
            // Below the fold after a load: each laid out in a frame of its own.
            <Deferred>
                <div class="tables">
                    {count_table("Event phases", "phase-counts", "ph", &tables.phases, true)}
                    {count_table("Categories", "category-counts", "category", &tables.categories, false)}
                </div>
            </Deferred>
            <Deferred>{lane_list(&lanes.processes, lanes.lanes)}</Deferred>
        </section>
    }
}

fn file_card(s: &TraceSummary) -> impl IntoView {
    let json_rate = format::rate_mb_s(s.json_bytes, s.parse_ms);
    let file_rate = format::rate_mb_s(s.file_bytes, s.parse_ms);
    let rate = match (json_rate, file_rate) {
        (Some(json), Some(file)) if s.json_bytes != s.file_bytes => format!("{json} ({file} file)"),
        (Some(json), _) => json,
        _ => "—".to_owned(),
    };
    view! {
        <section class="card">
            <h2>"File"</h2>
            <dl>
                <dt>"Name"</dt>
                <dd data-testid="summary-file">{s.file_name.clone()}</dd>
                <dt>"Size"</dt>
                <dd>{format::bytes(s.file_bytes)}</dd>
                <dt>"JSON"</dt>
                <dd>{format::bytes(s.json_bytes)}</dd>
                <dt>"Format"</dt>
                <dd>{s.format.clone()}</dd>
                <dt>"Parse time"</dt>
                <dd data-testid="summary-parse" data-value=s.parse_ms.to_string()>
                    {format::millis(s.parse_ms)}
                </dd>
                <dt>"Throughput"</dt>
                <dd>{rate}</dd>
            </dl>
        </section>
    }
}

fn events_card(s: &TraceSummary) -> impl IntoView {
    let truncated = if s.truncated {
        "yes: the input ended early"
    } else {
        "no"
    };
    view! {
        <section class="card">
            <h2>"Events"</h2>
            <dl>
                <dt>"Events"</dt>
                <dd data-testid="summary-events" data-value=s.events.to_string()>
                    {format::count(s.events)}
                </dd>
                <dt>"Time span"</dt>
                <dd data-testid="summary-span" data-value=s.span_us.to_string()>
                    {format::span_us(s.span_us)}
                </dd>
                <dt>"Processes"</dt>
                <dd>{format::count(s.processes.len() as u64)}</dd>
                <dt>"Lanes"</dt>
                <dd>{format::count(s.lanes)}</dd>
                <dt>"Truncated"</dt>
                <dd data-testid="summary-truncated" class:bad=s.truncated>{truncated}</dd>
            </dl>
        </section>
    }
}

fn links_card(s: &TraceSummary) -> impl IntoView {
    let of = |n: u64| {
        format!(
            "{} of {}",
            format::count(n),
            format::count(s.links.device_activities)
        )
    };
    view! {
        <section class="card">
            <h2>"Links"</h2>
            <dl>
                <dt>"Flows linked"</dt>
                <dd>{format::count(s.flows.linked)}</dd>
                <dt>"Flows unlinked"</dt>
                <dd>{format::count(s.flows.unlinked)}</dd>
                <dt>"Device activities"</dt>
                <dd>{format::count(s.links.device_activities)}</dd>
                <dt>"With launch"</dt>
                <dd>{of(s.links.with_launch)}</dd>
                <dt>"With op"</dt>
                <dd>{of(s.links.with_op)}</dd>
            </dl>
        </section>
    }
}

/// A two-column (three with `explain_ph`) table of counts, largest first.
fn count_table(
    title: &'static str,
    testid: &'static str,
    key_header: &'static str,
    counts: &BTreeMap<String, u64>,
    explain_ph: bool,
) -> impl IntoView {
    let rows = format::by_count_desc(counts)
        .into_iter()
        .map(|(key, n)| {
            let meaning =
                explain_ph.then(|| view! { <td class="muted">{format::ph_meaning(key)}</td> });
            let shown = if key.is_empty() { "(none)" } else { key };
            view! {
                <tr data-key=key.to_owned()>
                    <td><code>{shown.to_owned()}</code></td>
                    {meaning}
                    <td class="num">{format::count(n)}</td>
                </tr>
            }
        })
        .collect_view();
    let meaning_header = explain_ph.then(|| view! { <th>"meaning"</th> });
    view! {
        <section class="card">
            <h2>{title}</h2>
            <table data-testid=testid>
                <thead>
                    <tr><th>{key_header}</th>{meaning_header}<th class="num">"events"</th></tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}

/// Processes in display order, each with a table of its lanes.
fn lane_list(processes: &[ProcessSummary], lanes: u64) -> impl IntoView {
    let blocks = processes
        .iter()
        .map(|p| {
            let rows = p
                .lanes
                .iter()
                .map(|l| {
                    view! {
                        <tr>
                            <td><code>{l.tid.clone()}</code></td>
                            <td>{l.name.clone()}</td>
                            <td class="num">{format::count(l.slices)}</td>
                            <td class="num">{l.depth}</td>
                        </tr>
                    }
                })
                .collect_view();
            view! {
                <div class="process" data-pid=p.pid.clone() data-kind=p.kind.clone()>
                    <h3>
                        {p.name.clone()}
                        <span class="muted">{format!(" · pid {} · {}", p.pid, p.kind)}</span>
                    </h3>
                    <table>
                        <thead>
                            <tr>
                                <th>"tid"</th><th>"lane"</th>
                                <th class="num">"slices"</th><th class="num">"depth"</th>
                            </tr>
                        </thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            }
        })
        .collect_view();
    let title = format!(
        "Processes and lanes ({})",
        format::plural(lanes, "lane", "lanes")
    );
    view! {
        <section class="card lanes" data-testid="lane-list">
            <h2>{title}</h2>
            {blocks}
        </section>
    }
}
