//! The tab bar (Summary | Ops | Kernels | Steps | Modules | Flame | Charts) and the analysis table panel: a name
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
//! The Modules tab's tree table is [`super::modules`]; it shares the filter, scope and sort. The
//! Flame tab shows the scope and a count here, its chart is [`super::FlamePanel`].
//!
//! Test ids: `tab-<summary|ops|kernels|steps|modules|flame|charts>`, `table-filter`, `by-shape-toggle`,
//! `table-scope`, `table-step`, `op-table` / `kernel-table` / `step-table` with rows `op-row` / `kernel-row` / `step-row`,
//! headers `col-<key>` (`data-sort` = `desc` / `asc` on the sorted one), `table-error`,
//! `column-chooser` (op and kernel tables: a `column-toggle` checkbox per column, `data-key`;
//! which columns show: `state::columns`), `col-resize` (the drag handle in each header but
//! Name's), `steps-unavailable` (the Steps tab of a trace without steps: why it is empty), `step-marker`
//! (the Steps tab's step marker picker, [`MarkerPicker`]), `batch-size` / `tokens-per-step` /
//! `throughput-summary` (the Steps tab's throughput setting, [`ThroughputInputs`]).
//! Cells carry the raw number in `data-value`; text is always rendered as text nodes.
//! Only the rows in view are built ([`scroll_table`]). A C++ template name shows the part that
//! tells it from its neighbours ([`short_names`]); its `title` holds the whole name.

use super::modules::{module_view, ModuleActions};
use super::scroll_table::{row_index, scroll_table, shown_text, width_ch};
use super::step_marker::MarkerPicker;
use super::throughput::ThroughputInputs;
use super::step_pick::StepPicker;
use crate::state::columns::MIN_WIDTH_CH;
use crate::state::names::short_names;
use crate::state::table::{cell_text, cell_value, Scope, Tab, TableState};
use leptos::prelude::*;
use protocol::{CellValue, StepMark, StepMarking, TableData};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use wasm_bindgen::JsCast;

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
    on_column: Callback<String>,
    on_resize: Callback<(String, usize)>,
    explained: Memo<Option<u64>>,
    marking: Memo<StepMarking>,
    on_marker: Callback<Option<String>>,
    on_workload: Callback<protocol::Workload>,
    modules: ModuleActions,
) -> impl IntoView {
    let tab = Memo::new(move |_| tables.with(|t| t.tab));
    let rows = RowActions { on_row, on_step, explained, on_resize };
    // The chooser is rebuilt when a column is toggled; its open state outlives it.
    let chooser_open = RwSignal::new(false);
    let choice = Memo::new(move |_| {
        tables.with(|t| {
            let data = t.data.as_ref().filter(|d| d.kind != "steps")?;
            let hidden = t.columns.hidden(&data.kind);
            let columns: Vec<(String, String, bool)> = data
                .columns
                .iter()
                .filter(|c| c.key != "name")
                .map(|c| (c.key.clone(), c.label.clone(), !hidden.contains(&c.key)))
                .collect();
            Some(columns)
        })
    });
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
            let filter = (!matches!(tab, Tab::Steps | Tab::Flame)).then(|| view! {
                        <input
                            type="search"
                            placeholder="Filter by name"
                            data-testid="table-filter"
                            prop:value=move || tables.with(|t| t.filter.clone())
                            on:input=move |ev| on_filter.run(event_target_value(&ev))
                        />
            });
            let scope = tab.scoped().then(|| scope_select(tables, steps, range, on_scope));
            let chooser = move || choice.get().map(|columns| column_chooser(columns, chooser_open, on_column));
            let marker = (tab == Tab::Steps).then(|| view! { <MarkerPicker marking=marking on_marker=on_marker /> });
            let workload = (tab == Tab::Steps).then(|| view! { <ThroughputInputs tables=tables on_workload=on_workload /> });
            view! {
                <section class="card">
                    <div class="table-tools">
                        {filter}
                        {marker}
                        {workload}
                        {scope}
                        {toggle}
                        {chooser}
                        <span class="muted">{move || count_text(&tables.read())}</span>
                    </div>
                    {error}
                    {move || (tab == Tab::Steps && steps.with(Vec::is_empty)).then(no_steps_note)}
                    {move || match tab {
                        Tab::Modules => module_view(&tables.read(), on_sort, modules),
                        // Drawn by `super::FlamePanel` below the tools.
                        Tab::Flame => None,
                        _ => table_view(tab, &tables.read(), on_sort, rows).map(IntoAny::into_any),
                    }}
                </section>
            }
        })
    }
}

/// The "Columns" menu: a checkbox per column but Name (`column-toggle` with `data-key`), checked
/// when shown; `open` keeps the menu open across its rebuilds.
fn column_chooser(
    columns: Vec<(String, String, bool)>,
    open: RwSignal<bool>,
    on_column: Callback<String>,
) -> impl IntoView {
    let items = columns
        .into_iter()
        .map(|(key, label, shown)| {
            let k = key.clone();
            view! {
                <label>
                    <input type="checkbox" data-testid="column-toggle" data-key=key prop:checked=shown
                        on:change=move |_| on_column.run(k.clone()) />
                    " "{label}
                </label>
            }
        })
        .collect_view();
    view! {
        <details class="column-chooser" data-testid="column-chooser" prop:open=open.get_untracked()
            on:toggle=move |ev| open.set(event_target::<web_sys::HtmlDetailsElement>(&ev).open())>
            <summary title="Choose the columns shown (kept in this browser)">"Columns"</summary>
            <div class="column-list">{items}</div>
        </details>
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
    if let Some(f) = &t.flame {
        let d = &f.data;
        return format!("{} of {} call paths ({} under {}% of the total left out)", d.rows.len(), d.nodes, d.left_out, d.min_pct);
    }
    if let Some(tree) = &t.modules {
        let (shown, all) = (t.module_rows().len(), tree.data.rows.len());
        return if shown == all { format!("{all} modules") } else { format!("{shown} of {all} modules") };
    }
    match &t.data {
        Some(data) => {
            let shown = t.visible_rows().len();
            let all = data.rows.len();
            let busy = if t.pending.is_some() {
                " · updating…"
            } else {
                ""
            };
            let rows = if all == 1 { "row" } else { "rows" };
            if shown == all {
                format!("{all} {rows}{busy}")
            } else {
                format!("{shown} of {all} {rows}{busy}")
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
/// (`explained`: the step explained, whose row is marked); and what a header drag does.
#[derive(Clone, Copy)]
struct RowActions {
    on_row: Callback<String>,
    on_step: Callback<u64>,
    explained: Memo<Option<u64>>,
    /// A column was dragged to a width: (key, ch).
    on_resize: Callback<(String, usize)>,
}

fn table_view(tab: Tab, t: &TableState, on_sort: Callback<String>, actions: RowActions) -> Option<impl IntoView> {
    let on_resize = actions.on_resize;
    let data: Arc<TableData> = t.data.clone()?;
    let (table_id, row_id) = match tab {
        Tab::Ops => ("op-table", "op-row"),
        Tab::Kernels => ("kernel-table", "kernel-row"),
        Tab::Steps | Tab::Modules | Tab::Flame | Tab::Summary | Tab::Findings | Tab::Charts | Tab::Compare | Tab::Run => {
            ("step-table", "step-row")
        }
    };
    let keys: Vec<&str> = data.columns.iter().map(|c| c.key.as_str()).collect();
    let shown = Arc::new(t.columns.shown(&data.kind, &keys, t.sort.as_ref().map(|s| s.key.as_str())));
    let order = t.visible_rows();
    let widths: Vec<Option<usize>> = shown
        .iter()
        .map(|&c| {
            let key = &data.columns[c].key;
            (key != "name").then(|| {
                t.columns.width(&data.kind, key).unwrap_or_else(|| column_width(&data, &order, c))
            })
        })
        .collect();
    let headers = shown
        .iter()
        .zip(&widths)
        .enumerate()
        .map(|(at, (&i, &width))| (at, &data.columns[i], width))
        .map(|(at, c, width)| {
            let sort = t.sort.as_ref().filter(|s| s.key == c.key);
            let mark = match sort {
                Some(s) if s.desc => " ▼",
                Some(_) => " ▲",
                None => "",
            };
            let key = c.key.clone();
            let handle = width.map(|ch| resize_handle(at, ch, c.key.clone(), on_resize));
            view! {
                <th
                    data-testid=format!("col-{}", c.key)
                    data-sort=sort.map(|s| if s.desc { "desc" } else { "asc" })
                    class:num=c.unit != "text"
                    class:sorted=sort.is_some()
                    title=c.note.clone()
                    on:click=move |_| on_sort.run(key.clone())
                >
                    {format!("{}{mark}", c.label)}
                    {handle}
                </th>
            }
        })
        .collect_view();
    let head = view! { <tr>{headers}</tr> }.into_any();
    let kind = Some(data.kind.clone());
    let name_col = data.columns.iter().position(|c| c.key == "name");
    let step_col = data.columns.iter().position(|c| c.key == "step").filter(|_| tab == Tab::Steps);
    let shorts = Arc::new(short_names(data.rows.iter().map(|r| match name_col.and_then(|c| r.get(c)) {
        Some(CellValue::Text(n)) => n.as_str(),
        _ => "",
    })));
    Some(scroll_table(
        table_id,
        kind,
        widths,
        head,
        order.len(),
        move |k| {
            let short = shorts.get(order[k]).map(String::as_str);
            row_view(&data, (name_col, step_col), (k, order[k]), (short, &shown), row_id, actions).into_any()
        },
    ))
}

/// The drag handle at the right edge of header cell `at` (a column `ch` wide): while dragged,
/// its `<col>` follows the pointer (the table is not rebuilt); on release the width goes to
/// `on_resize` in `ch`. Its click does not sort.
fn resize_handle(at: usize, ch: usize, key: String, on_resize: Callback<(String, usize)>) -> impl IntoView {
    // (pointer x at the start, px per ch, the col element) while a drag runs.
    let drag: Rc<RefCell<Option<(f64, f64, web_sys::HtmlElement)>>> = Rc::default();
    let new_ch = move |start_x: f64, px_per_ch: f64, x: f64| {
        let px = ch as f64 * px_per_ch + (x - start_x);
        (px / px_per_ch).round().max(MIN_WIDTH_CH as f64) as usize
    };
    let (down, moved, up) = (drag.clone(), drag.clone(), drag);
    let on_down = move |e: web_sys::PointerEvent| {
        e.stop_propagation();
        e.prevent_default();
        let Some(handle) = e.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return };
        let Some(th) = handle.parent_element().and_then(|p| p.dyn_into::<web_sys::HtmlElement>().ok()) else { return };
        let col = th
            .closest("table")
            .ok()
            .flatten()
            .and_then(|table| table.query_selector(&format!("col:nth-child({})", at + 1)).ok().flatten())
            .and_then(|col| col.dyn_into::<web_sys::HtmlElement>().ok());
        let Some(col) = col else { return };
        let _ = handle.set_pointer_capture(e.pointer_id());
        let px_per_ch = f64::from(th.offset_width()) / ch.max(1) as f64;
        *down.borrow_mut() = Some((f64::from(e.client_x()), px_per_ch.max(1.0), col));
    };
    let on_move = move |e: web_sys::PointerEvent| {
        if let Some((start_x, px_per_ch, col)) = moved.borrow().as_ref() {
            let width = new_ch(*start_x, *px_per_ch, f64::from(e.client_x()));
            let _ = col.style().set_property("width", &format!("{width}ch"));
        }
    };
    let on_up = move |e: web_sys::PointerEvent| {
        if let Some((start_x, px_per_ch, _)) = up.borrow_mut().take() {
            on_resize.run((key.clone(), new_ch(start_x, px_per_ch, f64::from(e.client_x()))));
        }
    };
    view! {
        <span class="col-resize" data-testid="col-resize" title="Drag to resize this column"
            on:click=|e| e.stop_propagation() on:pointerdown=on_down on:pointermove=on_move
            on:pointerup=on_up></span>
    }
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
/// shown at position `k`, as `<tr data-testid=row_id>` with the cells of columns `shown`; the
/// name cell shows `short_name`, its `title` the whole name.
fn row_view(
    data: &TableData,
    (name_col, step_col): (Option<usize>, Option<usize>),
    (k, i): (usize, usize),
    (short_name, shown): (Option<&str>, &[usize]),
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
    let row = &data.rows[i];
    let cells = shown.iter().filter_map(|&c| Some((data.columns.get(c)?, row.get(c)?))).map(|(c, cell)| {
        let text = cell_text(cell, &c.unit);
        if c.unit == "text" {
            let shown = match short_name.filter(|_| c.key == "name") {
                Some(short) => shown_text(short),
                None => shown_text(&text),
            };
            view! { <td class="text" data-key=c.key.clone() title=text>{shown}</td> }.into_any()
        } else {
            // An empty phase cell says why (the phase cannot be told apart in this trace).
            let why = c.note.clone().filter(|_| matches!(cell, CellValue::Empty));
            view! {
                <td class="num" data-key=c.key.clone() data-value=cell_value(cell) title=why>{text}</td>
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
