//! The tab bar (Summary | Ops | Kernels | Steps | Charts) and the analysis table panel: a name
//! filter, the ops' group-by-input-shape toggle, and a sortable table (click a header:
//! descending, click again: ascending). A thin view over [`TableState`]; changes go through the callbacks, which
//! send queries and publish `window.kinetoscope`.
//!
//! The scope select (`table-scope`: `trace`, `step`, `range`) rescopes the op and kernel tables;
//! scoped to a step, `table-step` holds its number and `table-step-prev` / `-next` move by one.
//! Clicking a row searches the timeline for its name, highlighting every occurrence; clicking a
//! step row explains that step ([`super::StepExplain`], below the table; its row gets
//! `data-selected="true"`).
//!
//! Test ids: `tab-<summary|ops|kernels|steps|charts>`, `table-filter`, `by-shape-toggle`,
//! `table-scope`, `table-step`, `op-table` / `kernel-table` / `step-table` with rows `op-row` / `kernel-row` / `step-row`,
//! headers `col-<key>` (`data-sort` = `desc` / `asc` on the sorted one), `table-error`,
//! `steps-unavailable` (the Steps tab of a trace without steps: why it is empty).
//! Cells carry the raw number in `data-value`; text is always rendered as text nodes.
//! Only the rows in view are built ([`scroll_table`]).

use super::scroll_table::{row_index, scroll_table, shown_text, width_ch};
use super::step_pick::StepPicker;
use crate::state::table::{cell_text, cell_value, Scope, Tab, TableState};
use leptos::prelude::*;
use protocol::{CellValue, StepMark, TableData};
use std::sync::Arc;

/// The tab buttons; `on_select` switches tabs.
#[component]
pub fn Tabs(tables: ReadSignal<TableState>, run_open: Memo<bool>, on_select: Callback<Tab>) -> impl IntoView {
    let buttons = Tab::ALL
        .into_iter()
        .map(|tab| {
            view! {
                <button
                    data-testid=format!("tab-{}", tab.as_str())
                    class:active=move || tables.with(|t| t.tab == tab)
                    hidden=move || tab == Tab::Run && !run_open.get()
                    on:click=move |_| on_select.run(tab)
                >
                    {tab.label()}
                </button>
            }
        })
        .collect_view();
    view! { <nav class="tabs" role="tablist">{buttons}</nav> }
}

/// The table of the current tab (nothing on the summary and charts tabs).
#[component]
#[allow(clippy::too_many_arguments)]
pub fn TablePanel(
    tables: ReadSignal<TableState>,
    steps: Memo<Vec<StepMark>>,
    range: Memo<Option<(f64, f64)>>,
    on_filter: Callback<String>,
    on_by_shape: Callback<bool>,
    on_sort: Callback<String>,
    on_scope: Callback<Scope>,
    on_row: Callback<String>,
    on_step: Callback<u64>,
    explained: Memo<Option<u64>>,
) -> impl IntoView {
    let tab = Memo::new(move |_| tables.with(|t| t.tab));
    let rows = RowActions { on_row, on_step, explained };
    move || {
        let tab = tab.get();
        (!matches!(tab, Tab::Summary | Tab::Findings | Tab::Charts | Tab::Compare | Tab::Run)).then(|| {
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
            let scope = matches!(tab, Tab::Ops | Tab::Kernels)
                .then(|| scope_select(tables, steps, range, on_scope));
            view! {
                <section class="card">
                    <div class="table-tools">
                        {filter}
                        {scope}
                        {toggle}
                        <span class="muted">{move || count_text(&tables.read())}</span>
                    </div>
                    {error}
                    {move || (tab == Tab::Steps && steps.with(Vec::is_empty)).then(no_steps_note)}
                    {move || table_view(tab, &tables.read(), on_sort, rows)}
                </section>
            }
        })
    }
}

/// Why the Steps tab is empty (docs/definitions.md, "Traces without steps").
fn no_steps_note() -> impl IntoView {
    view! {
        <p class="muted" data-testid="steps-unavailable">
            {format!("{}: no step table, step breakdown or step chart; {}.", super::NO_STEPS, super::NO_STEP_RULES)}
        </p>
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

/// The scope: a select (whole trace, one profiler step, the selected range when there is one)
/// and, scoped to a step, a [`StepPicker`].
fn scope_select(
    tables: ReadSignal<TableState>,
    steps: Memo<Vec<StepMark>>,
    range: Memo<Option<(f64, f64)>>,
    on_scope: Callback<Scope>,
) -> impl IntoView {
    let scope = Memo::new(move |_| tables.with(|t| t.scope.clone()));
    let numbers =
        Memo::new(move |_| steps.with(|s| s.iter().map(|m| m.number).collect::<Vec<_>>()));
    let current = Memo::new(move |_| match scope.get() {
        Scope::Step(n, ..) => Some(n),
        _ => None,
    });
    let to_step = move |n: u64| {
        let step = steps.with_untracked(|s| s.iter().find(|m| m.number == n).cloned());
        if let Some(m) = step {
            on_scope.run(Scope::Step(m.number, m.start_ns, m.end_ns));
        }
    };
    let on_change = move |ev| match event_target_value(&ev).as_str() {
        "step" => {
            if let Some(n) = numbers.with_untracked(|n| n.first().copied()) {
                to_step(n);
            }
        }
        "range" => {
            if let Some((a, b)) = range.get_untracked() {
                on_scope.run(Scope::Range(a.floor() as i64, b.ceil() as i64));
            }
        }
        _ => on_scope.run(Scope::Trace),
    };
    let picker = move || {
        current.get().is_some().then(|| {
            view! {
                <StepPicker testid="table-step" steps=numbers current=current
                    on_pick=Callback::new(to_step) />
            }
        })
    };
    view! {
        <select data-testid="table-scope" prop:value=move || scope.get().kind() on:change=on_change>
            <option value="trace">"Whole trace"</option>
            <option value="step" disabled=move || steps.with(Vec::is_empty)>"One profiler step"</option>
            <option value="range" disabled=move || range.get().is_none()>"Selected range"</option>
        </select>
        {picker}
    }
}

/// What a row click does: a named row highlights its name, a step row explains its step
/// (`explained`: the step explained, whose row is marked).
#[derive(Clone, Copy)]
struct RowActions {
    on_row: Callback<String>,
    on_step: Callback<u64>,
    explained: Memo<Option<u64>>,
}

fn table_view(tab: Tab, t: &TableState, on_sort: Callback<String>, actions: RowActions) -> Option<impl IntoView> {
    let data: Arc<TableData> = t.data.clone()?;
    let (table_id, row_id) = match tab {
        Tab::Ops => ("op-table", "op-row"),
        Tab::Kernels => ("kernel-table", "kernel-row"),
        Tab::Steps | Tab::Summary | Tab::Findings | Tab::Charts | Tab::Compare | Tab::Run => {
            ("step-table", "step-row")
        }
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
    let order = t.visible_rows();
    let widths = (0..data.columns.len())
        .map(|c| (data.columns[c].key != "name").then(|| column_width(&data, &order, c)))
        .collect();
    let head = view! { <tr>{headers}</tr> }.into_any();
    let kind = Some(data.kind.clone());
    let name_col = data.columns.iter().position(|c| c.key == "name");
    let step_col = data.columns.iter().position(|c| c.key == "step").filter(|_| tab == Tab::Steps);
    Some(scroll_table(
        table_id,
        kind,
        widths,
        head,
        order.len(),
        move |k| row_view(&data, (name_col, step_col), k, order[k], row_id, actions).into_any(),
    ))
}

/// Column `c`'s width in `ch`: a text column's longest text, a number column's widest extreme
/// (formatting every cell of a 1,000-row table took 10-20 ms), with a `ch` to spare.
fn column_width(data: &TableData, order: &[usize], c: usize) -> usize {
    let column = &data.columns[c];
    let cells = order.iter().filter_map(|&i| data.rows[i].get(c));
    if column.unit == "text" {
        return width_ch(
            &column.label,
            cells.map(|cell| cell_text(cell, "text").chars().count()),
        );
    }
    let number = |cell: &CellValue| match cell {
        CellValue::Int(n) => *n as f64,
        CellValue::Float(x) => *x,
        CellValue::Text(_) | CellValue::Empty => 0.0,
    };
    let (mut low, mut high) = (None::<&CellValue>, None::<&CellValue>);
    for cell in cells {
        if low.is_none_or(|l| number(cell) < number(l)) {
            low = Some(cell);
        }
        if high.is_none_or(|h| number(cell) > number(h)) {
            high = Some(cell);
        }
    }
    let extremes = [low, high].into_iter().flatten();
    width_ch(
        &column.label,
        extremes.map(|cell| cell_text(cell, &column.unit).chars().count() + 1),
    )
}

/// Row `i` of `data` (whose name and step number are in columns `name_col` and `step_col`),
/// shown at position `k`, as `<tr data-testid=row_id>`.
fn row_view(
    data: &TableData,
    (name_col, step_col): (Option<usize>, Option<usize>),
    k: usize,
    i: usize,
    row_id: &'static str,
    actions: RowActions,
) -> impl IntoView {
    let name = match name_col.and_then(|c| data.rows[i].get(c)) {
        Some(CellValue::Text(n)) => Some(n.clone()),
        _ => None,
    };
    let step = match step_col.and_then(|c| data.rows[i].get(c)) {
        Some(CellValue::Int(n)) => u64::try_from(*n).ok(),
        _ => None,
    };
    let cells = data.columns.iter().zip(&data.rows[i]).map(|(c, cell)| {
        let text = cell_text(cell, &c.unit);
        if c.unit == "text" {
            let shown = shown_text(&text);
            view! { <td class="text" data-key=c.key.clone() title=text>{shown}</td> }.into_any()
        } else {
            view! {
                <td class="num" data-key=c.key.clone() data-value=cell_value(cell)>{text}</td>
            }
            .into_any()
        }
    });
    let title = match (&name, step) {
        (Some(_), _) => Some("Click: highlight on the timeline"),
        (None, Some(_)) => Some("Click: why this step took its time (below)"),
        (None, None) => None,
    };
    let selected = move || step.map(|n| (actions.explained.get() == Some(n)).to_string());
    view! {
        <tr data-testid=row_id aria-rowindex=row_index(k) title=title data-selected=selected on:click=move |_| {
            if let Some(n) = &name {
                actions.on_row.run(n.clone());
            } else if let Some(n) = step {
                actions.on_step.run(n);
            }
        }>{cells.collect_view()}</tr>
    }
}
