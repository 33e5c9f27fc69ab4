//! The tab bar (Summary | Ops | Kernels | Steps) and the analysis table panel: a name filter,
//! the ops' group-by-input-shape toggle, and a sortable table (click a header: descending, click
//! again: ascending). A thin view over [`TableState`]; changes go through the callbacks, which
//! send queries and publish `window.kinetoscope`.
//!
//! Test ids: `tab-<summary|ops|kernels|steps>`, `table-filter`, `by-shape-toggle`,
//! `op-table` / `kernel-table` / `step-table` with rows `op-row` / `kernel-row` / `step-row`,
//! headers `col-<key>` (`data-sort` = `desc` / `asc` on the sorted one), `table-error`.
//! Cells carry the raw number in `data-value`; text is always rendered as text nodes.

use crate::state::table::{cell_text, cell_value, Tab, TableState};
use leptos::prelude::*;
use protocol::TableData;
use std::sync::Arc;

/// The tab buttons; `on_select` switches tabs.
#[component]
pub fn Tabs(tables: ReadSignal<TableState>, on_select: Callback<Tab>) -> impl IntoView {
    let buttons = Tab::ALL
        .into_iter()
        .map(|tab| {
            view! {
                <button
                    data-testid=format!("tab-{}", tab.as_str())
                    class:active=move || tables.with(|t| t.tab == tab)
                    on:click=move |_| on_select.run(tab)
                >
                    {tab.label()}
                </button>
            }
        })
        .collect_view();
    view! { <nav class="tabs" role="tablist">{buttons}</nav> }
}

/// The table of the current tab (nothing on the summary tab).
#[component]
pub fn TablePanel(
    tables: ReadSignal<TableState>,
    on_filter: Callback<String>,
    on_by_shape: Callback<bool>,
    on_sort: Callback<String>,
) -> impl IntoView {
    let tab = Memo::new(move |_| tables.with(|t| t.tab));
    move || {
        let tab = tab.get();
        (tab != Tab::Summary).then(|| {
            let toggle = (tab == Tab::Ops).then(|| {
                view! {
                    <label>
                        <input
                            type="checkbox"
                            data-testid="by-shape-toggle"
                            prop:checked=move || tables.with(|t| t.by_shape)
                            on:change=move |ev| on_by_shape.run(event_target_checked(&ev))
                        />
                        " Group by input shape"
                    </label>
                }
            });
            let error = move || {
                tables.with(|t| t.error.clone()).map(|message| {
                    view! { <p class="card error" data-testid="table-error" role="alert">{message}</p> }
                })
            };
            // Steps have no name to filter on.
            let filter = (tab != Tab::Steps).then(|| view! {
                        <input
                            type="search"
                            placeholder="Filter by name"
                            data-testid="table-filter"
                            prop:value=move || tables.with(|t| t.filter.clone())
                            on:input=move |ev| on_filter.run(event_target_value(&ev))
                        />
            });
            view! {
                <section class="card">
                    <div class="table-tools">
                        {filter}
                        {toggle}
                        <span class="muted">{move || count_text(&tables.read())}</span>
                    </div>
                    {error}
                    {move || table_view(tab, &tables.read(), on_sort)}
                </section>
            }
        })
    }
}

fn count_text(t: &TableState) -> String {
    match &t.data {
        Some(data) => {
            let shown = t.visible_rows().len();
            let all = data.rows.len();
            let busy = if t.pending.is_some() {
                " · updating…"
            } else {
                ""
            };
            if shown == all {
                format!("{all} rows{busy}")
            } else {
                format!("{shown} of {all} rows{busy}")
            }
        }
        None if t.pending.is_some() => "loading…".to_owned(),
        None => String::new(),
    }
}

fn table_view(tab: Tab, t: &TableState, on_sort: Callback<String>) -> Option<impl IntoView> {
    let data: Arc<TableData> = t.data.clone()?;
    let (table_id, row_id) = match tab {
        Tab::Ops => ("op-table", "op-row"),
        Tab::Kernels => ("kernel-table", "kernel-row"),
        Tab::Steps | Tab::Summary => ("step-table", "step-row"),
    };
    let headers = data
        .columns
        .iter()
        .map(|c| {
            let sort = t.sort.as_ref().filter(|s| s.key == c.key);
            let mark = match sort {
                Some(s) if s.desc => " ▼",
                Some(_) => " ▲",
                None => "",
            };
            let key = c.key.clone();
            view! {
                <th
                    data-testid=format!("col-{}", c.key)
                    data-sort=sort.map(|s| if s.desc { "desc" } else { "asc" })
                    class:num=c.unit != "text"
                    class:sorted=sort.is_some()
                    on:click=move |_| on_sort.run(key.clone())
                >
                    {format!("{}{mark}", c.label)}
                </th>
            }
        })
        .collect_view();
    let rows = t
        .visible_rows()
        .into_iter()
        .map(|i| {
            let cells = data.columns.iter().zip(&data.rows[i]).map(|(c, cell)| {
                let text = cell_text(cell, &c.unit);
                if c.unit == "text" {
                    view! { <td class="text" data-key=c.key.clone()>{text}</td> }.into_any()
                } else {
                    view! {
                        <td class="num" data-key=c.key.clone() data-value=cell_value(cell)>{text}</td>
                    }
                    .into_any()
                }
            });
            view! { <tr data-testid=row_id>{cells.collect_view()}</tr> }
        })
        .collect_view();
    Some(view! {
        <div class="data-table">
            <table data-testid=table_id data-kind=data.kind.clone()>
                <thead><tr>{headers}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    })
}
