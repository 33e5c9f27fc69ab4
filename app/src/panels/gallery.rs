//! The run gallery: the runs of a served or published log directory, newest first, and their
//! traces (rank, size, date, steps once known) with a name filter. A trace's name opens it
//! (`?url=`), a run's "Open run" opens all its ranks as a run (`?run=`); both are plain links,
//! so they open in a new tab too and the share link of what they open holds. A trace still
//! being written says so (`trace-writing`): it opens as what is complete so far.

use crate::state::format;
use crate::state::gallery::{date, run_href, trace_href, GalleryState, RunEntry};
use leptos::prelude::*;

/// The gallery card.
#[component]
pub fn GalleryPanel(gallery: RwSignal<GalleryState>) -> impl IntoView {
    let root = move || gallery.with(|g| g.index.as_ref().map(|i| i.root.clone()).unwrap_or_default());
    let runs = Memo::new(move |_| gallery.with(GalleryState::visible));
    let unreadable = move || gallery.with(|g| g.index.as_ref().map(|i| i.unreadable.clone()).unwrap_or_default());
    view! {
        <section class="card gallery" data-testid="gallery">
            <h2>"Runs in " {root}</h2>
            <div class="table-tools">
                <input type="search" placeholder="Filter by name" data-testid="gallery-filter"
                    prop:value=move || gallery.with(|g| g.filter.clone())
                    on:input=move |ev| gallery.update(|g| g.filter = event_target_value(&ev)) />
                <span class="muted">{move || format::plural(runs.with(Vec::len) as u64, "run", "runs")}</span>
            </div>
            <Show when=move || runs.with(Vec::is_empty)>
                <p class="muted" data-testid="gallery-empty">"No trace here matches (the list updates as traces are written)."</p>
            </Show>
            // Keyed by the whole entry: a listing read again redraws a run whose traces grew.
            <For each=move || runs.get() key=Clone::clone let:run>
                <RunCard run=run />
            </For>
            <Show when=move || !unreadable().is_empty()>
                <h3>"Unreadable files"</h3>
                <ul data-testid="gallery-unreadable">
                    {move || unreadable().into_iter().map(|u| view! { <li><code>{u.path}</code>": "{u.reason}</li> }).collect_view()}
                </ul>
            </Show>
        </section>
    }
}

/// One run: its name, "Open run" and its traces' table.
#[component]
fn RunCard(run: RunEntry) -> impl IntoView {
    let ranks = run.traces.len() as u64;
    let name = run.name.clone();
    let rows = run
        .traces
        .into_iter()
        .map(|t| {
            view! {
                <tr data-testid="gallery-trace">
                    <td>
                        <a href=trace_href(&t.url) data-testid="open-trace">{t.name}</a>
                        {t.writing.then(|| view! {
                            <span class="muted" data-testid="trace-writing" title="still being written: opens as what is complete so far">" · writing"</span>
                        })}
                    </td>
                    <td class="num">{t.rank.map_or_else(|| "—".to_owned(), |r| r.to_string())}</td>
                    <td class="num">{format::bytes(t.size)}</td>
                    <td>{date(t.mtime_ms)}</td>
                    <td class="num">{t.steps.map_or_else(|| "—".to_owned(), |s| s.to_string())}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="gallery-run" data-testid="gallery-run" data-name=name>
            <h3>
                <span data-testid="run-name">{run.name}</span>
                <span class="muted">{format!(" · {} · {} ", format::plural(ranks, "trace", "traces"), date(run.mtime_ms))}</span>
                <a href=run_href(&run.manifest) data-testid="open-run">"Open run"</a>
            </h3>
            <table>
                <thead><tr><th>"Trace"</th><th class="num">"Rank"</th><th class="num">"Size"</th><th>"Date (UTC)"</th><th class="num">"Steps"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}
