//! The Modules tab's tree table: one row per `nn.Module` (name, module id), indented by depth,
//! with a ▾ / ▸ button to collapse or expand it; headers sort siblings (click again: the other
//! way); the table tools' filter keeps the matches and their ancestors. Clicking a row selects
//! the module's earliest call on the timeline and searches its frame name, which highlights
//! every call. A trace without `nn.Module` frames says how to record them.
//!
//! Test ids: `module-table` with rows `module-row` (`data-depth`, `data-collapsed`,
//! `data-index`: the row's pre-order index), `module-toggle`, headers `col-<key>` (`data-sort`),
//! cells `data-key` / `data-value`, `module-expand-all`, `module-collapse-all`,
//! `modules-unavailable`, `modules-backward-note`.

use super::scroll_table::{row_index, scroll_table, width_ch};
use crate::state::modules::{ModuleColumn, ModuleTree, BACKWARD, COLUMNS};
use crate::state::table::{cell_text, TableState};
use leptos::prelude::*;
use protocol::CellValue;
use std::sync::Arc;

/// What the tree's buttons and rows do.
#[derive(Clone, Copy)]
pub struct ModuleActions {
    /// Collapse or expand row k.
    pub on_toggle: Callback<usize>,
    /// Collapse (`true`) or expand every row.
    pub on_all: Callback<bool>,
    /// Row k was clicked.
    pub on_pick: Callback<usize>,
}

/// The tree of `t` (nothing before it arrives).
pub fn module_view(t: &TableState, on_sort: Callback<String>, actions: ModuleActions) -> Option<AnyView> {
    let tree = t.modules.clone()?;
    if tree.data.rows.is_empty() {
        return Some(
            view! {
                <p class="muted" data-testid="modules-unavailable">
                    "No nn.Module frames in this trace: the module tree needs them. Record with "
                    <code>"torch.profiler.profile(with_stack=True)"</code>
                    " (PyTorch writes a python_function frame per module call; "
                    <code>"with_modules=True"</code>
                    " adds the module hierarchy to each op)."
                </p>
            }
            .into_any(),
        );
    }
    let columns: Vec<&'static ModuleColumn> =
        COLUMNS.iter().chain(tree.data.backward_tied.then_some(&BACKWARD)).collect();
    let order = t.module_rows();
    let widths: Vec<Option<usize>> = columns
        .iter()
        .map(|c| (c.key != "name").then(|| width_ch(c.label, std::iter::once(10))))
        .collect();
    let head = columns
        .iter()
        .map(|c| {
            let sort = t.sort.as_ref().filter(|s| s.key == c.key);
            let mark = match sort {
                Some(s) if s.desc => " ▼",
                Some(_) => " ▲",
                None => "",
            };
            let key = c.key.to_owned();
            view! {
                <th data-testid=format!("col-{}", c.key) data-sort=sort.map(|s| if s.desc { "desc" } else { "asc" })
                    class:num=c.key != "name" class:sorted=sort.is_some() title=c.title
                    on:click=move |_| on_sort.run(key.clone())>
                    {format!("{}{mark}", c.label)}
                </th>
            }
        })
        .collect_view();
    let head = view! { <tr>{head}</tr> }.into_any();
    let note = (!tree.data.backward_tied).then(|| {
        view! {
            <p class="muted" data-testid="modules-backward-note">
                "Backward GPU time: not told (no fwdbwd flows tie this trace's backward ops to forward ops)."
            </p>
        }
    });
    let tree = Arc::new(tree);
    let filtering = !t.filter.trim().is_empty();
    let table = scroll_table("module-table", Some("modules".into()), widths, head, order.len(), move |k| {
        row_view(&tree, &columns, (k, order[k]), filtering, actions).into_any()
    });
    Some(
        view! {
            <div class="table-tools">
                <button data-testid="module-expand-all" on:click=move |_| actions.on_all.run(false)>"Expand all"</button>
                <button data-testid="module-collapse-all" on:click=move |_| actions.on_all.run(true)>"Collapse all"</button>
            </div>
            {note}
            {table}
        }
        .into_any(),
    )
}

/// Row `i` of the tree shown at position `k`; `filtering`: the filter shows every match's
/// ancestors whatever is collapsed, so the toggle is drawn open.
fn row_view(
    tree: &ModuleTree,
    columns: &[&'static ModuleColumn],
    (k, i): (usize, usize),
    filtering: bool,
    actions: ModuleActions,
) -> impl IntoView {
    let r = &tree.data.rows[i];
    let collapsed = tree.collapsed.get(i).copied().unwrap_or(false) && !filtering;
    let toggle = tree.has_children(i).then(|| {
        view! {
            <button class="tree-toggle" data-testid="module-toggle" aria-expanded=(!collapsed).to_string()
                title=if collapsed { "Expand" } else { "Collapse" }
                on:click=move |e| {
                    e.stop_propagation();
                    actions.on_toggle.run(i);
                }>
                {if collapsed { "▸" } else { "▾" }}
            </button>
        }
    });
    let indent = format!("{}ch", 2 * usize::from(r.depth) + if toggle.is_some() { 0 } else { 3 });
    let name = view! {
        <td class="text" data-key="name" title=format!("nn.Module: {} (module id {})", r.name, r.module_id)
            style:padding-left=indent>
            {toggle}
            {r.name.clone()}
        </td>
    };
    // The name column is the first; the others are numbers.
    let numbers = columns
        .iter()
        .filter(|c| c.key != "name")
        .map(|c| {
            let value = tree.value(i, c.key);
            let cell = value.map_or(CellValue::Empty, CellValue::Int);
            let unit = if c.key == "occurrences" { "count" } else { "ns" };
            let raw = value.map(|n| n.to_string()).unwrap_or_default();
            view! { <td class="num" data-key=c.key data-value=raw>{cell_text(&cell, unit)}</td> }
        })
        .collect_view();
    let title = if r.first.is_some() { "Click: select its first call on the timeline, highlight every call" } else { "Not called in this scope" };
    view! {
        <tr data-testid="module-row" aria-rowindex=row_index(k) data-index=i data-depth=r.depth
            data-collapsed=collapsed.to_string() title=title on:click=move |_| actions.on_pick.run(i)>
            {name}
            {numbers}
        </tr>
    }
}
