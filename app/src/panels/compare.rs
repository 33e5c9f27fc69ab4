//! The Compare tab (docs/viewer.md#compare-two-traces): the baseline kept in the worker against the
//! loaded trace (the candidate, which the timeline shows). Verdict line, summary side by side with
//! absolute and relative deltas, op, kernel and module diff tables (click a header to sort: descending,
//! again: ascending), the ops' by-shape toggle, and the findings diff (new / gone / kept). A thin
//! view over [`CompareState`]; changes go through the [`Controller`].
//!
//! Test ids: `compare-button` / `compare-input` (header: keep the loaded trace as baseline and
//! pick the candidate), `compare` (panel), `compare-files`, `compare-clear`, `compare-error`,
//! `compare-verdict`, `compare-summary` (rows `compare-summary-row` with `data-key`),
//! `compare-by-shape`, `compare-ops` / `compare-kernels` / `compare-modules` (rows
//! `compare-op-row` / `compare-kernel-row` / `compare-module-row` with `data-status`; headers `col-<key>` with `data-sort`: `desc`, `asc`, or
//! `abs` on the column of the default order, largest |Δ| first; keys in
//! `state::compare`), `compare-findings` with lists `compare-findings-new|gone|kept` of
//! `compare-finding` items (`data-rule`). Numeric cells carry the raw number in `data-value`.

use super::scroll_table::{row_index, scroll_table, shown_text, width_ch};
use crate::control::Controller;
use crate::deferred::Deferred;
use crate::state::compare::{
    kernel_pair, module_pair, op_pair, rel_text, CompareState, DiffTable, KERNEL_COLUMNS,
    MODULE_COLUMNS, OP_COLUMNS,
};
use crate::state::format;
use crate::state::names::short_names;
use crate::timeline::stack::StackedTimelines;
use crate::timeline::theme::Theme;
use leptos::prelude::*;
use protocol::{ComparisonData, DeltaPair, FindingChange, SummaryDelta};
use std::sync::Arc;
use web_sys::File;

/// The header's "Compare with…" button: a label wrapping a file input.
#[component]
pub fn CompareButton(on_file: Callback<File>) -> impl IntoView {
    let on_change = super::loader::picked_file(on_file);
    view! {
        <label class="button" data-testid="compare-button"
            title="Keep the loaded trace as the baseline and open the candidate to compare with it">
            "Compare with…"
            <input type="file" data-testid="compare-input" accept=".json,.gz" on:change=on_change />
        </label>
    }
}

/// The Compare tab's content.
#[component]
pub fn ComparePanel(ctl: Controller, theme: ReadSignal<Theme>) -> impl IntoView {
    let compare = ctl.compare.read_only();
    let data = Memo::new(move |_| compare.with(|c| c.data.clone()));
    let base = Memo::new(move |_| compare.with(|c| c.base.clone()));
    let by_shape = Memo::new(move |_| compare.with(|c| c.by_shape));
    let files = move || match base.get() {
        None => view! {
            <p class="muted">
                "No baseline. Load the “before” trace, then pick the “after” trace with "
                <b>"Compare with…"</b>
                " (or open "<code>"?url=AFTER&base=BEFORE"</code>")."
            </p>
        }
        .into_any(),
        Some(base) => {
            let cand = data.get().map(|d| d.cand.clone());
            let busy = compare
                .with(|c| c.pending.is_some())
                .then_some(" · comparing…");
            view! {
                <p data-testid="compare-files">
                    "Baseline: "<b>{base}</b>" · Candidate: "
                    <b>{cand.unwrap_or_else(|| "—".to_owned())}</b>
                    <span class="muted">" (the timeline shows the candidate)"{busy}</span>
                    " "
                    <button data-testid="compare-clear" on:click=move |_| ctl.clear_baseline()>
                        "Clear baseline"
                    </button>
                </p>
            }
            .into_any()
        }
    };
    let error = move || {
        compare.with(|c| c.error.clone()).map(|message| {
            view! { <p class="error" data-testid="compare-error" role="alert">{message}</p> }
        })
    };
    let head = move || {
        data.get().map(|d| {
            view! {
                <p class="verdict" data-testid="compare-verdict">{d.verdict.clone()}</p>
                <p class="muted">{steps_text(&d)}</p>
                {summary_table(&d)}
            }
        })
    };
    // A diff table is rebuilt when the comparison or its own sort changes, not on any change of
    // the compare state (sorting one table rebuilt both: 80-150 ms); its column widths depend
    // on the comparison only, so a sort does not recompute them.
    let diff_view = move |table: DiffTable| {
        let widths = Memo::new(move |_| data.with(|d| d.as_ref().map(|d| diff_widths(d, table))));
        let shown = Memo::new(move |_| {
            compare.with(|c| {
                (
                    c.data.as_ref().map(|d| Arc::as_ptr(d) as usize),
                    c.sort(table).cloned(),
                )
            })
        });
        move || {
            // Read, not only tracked: a memo recomputes when read.
            let _ = shown.get();
            let widths = widths.get()?;
            diff_table(ctl, table, &compare.read_untracked(), widths)
        }
    };
    let body = move || {
        data.get().map(|d| {
            view! {
                <h3>"Ops"</h3>
                <label>
                    <input type="checkbox" data-testid="compare-by-shape"
                        prop:checked=move || by_shape.get()
                        on:change=move |ev| ctl.set_compare_by_shape(event_target_checked(&ev)) />
                    " Match by input shape"
                </label>
                // Each table in a task (and frame) of its own: built in one, the panel was
                // a task of 40-70 ms and its first frame another 50-90 ms.
                <Deferred>{diff_view(DiffTable::Ops)}</Deferred>
                <h3>"Kernels"</h3>
                <Deferred>{diff_view(DiffTable::Kernels)}</Deferred>
                {(!d.modules.is_empty()).then(|| view! {
                    <h3>"Modules " <span class="muted">"by path, in tree order until a header is clicked"</span></h3>
                    <Deferred>{diff_view(DiffTable::Modules)}</Deferred>
                })}
                {findings_diff(&d)}
            }
        })
    };
    view! {
        <section class="card compare" data-testid="compare">
            {files}
            {error}
            {head}
            <Show when=move || base.with(Option::is_some)>
                <h3>"Timelines, aligned at a step"</h3>
                <StackedTimelines ctl=ctl theme=theme />
            </Show>
            {body}
        </section>
    }
}

fn steps_text(d: &ComparisonData) -> String {
    let unit = if d.per_step {
        "op and kernel values per step"
    } else {
        "op and kernel values are totals"
    };
    format!(
        "Baseline {} steps · candidate {} steps · {unit}",
        d.base_steps, d.cand_steps
    )
}

/// A value of `unit` (`ns`, `pct`, `bytes`, `count`) with its sign when negative, or always
/// for deltas (`always`; percentages then in points).
fn signed(unit: &str, v: f64, always: bool) -> String {
    let sign = if v < 0.0 {
        "-"
    } else if always && v > 0.0 {
        "+"
    } else {
        ""
    };
    let m = v.abs();
    let magnitude = match unit {
        "ns" => format::span_us(m / 1e3),
        "pct" => format!("{m:.2}"),
        "bytes" => format::bytes(m as u64),
        _ if m.fract() == 0.0 => format::count(m as u64),
        _ => format!("{m:.2}"),
    };
    let suffix = match unit {
        "pct" if always => " pp",
        "pct" => "%",
        _ => "",
    };
    format!("{sign}{magnitude}{suffix}")
}

fn opt_text(unit: &str, v: Option<f64>, always: bool) -> String {
    v.map_or_else(|| "—".to_owned(), |v| signed(unit, v, always))
}

fn summary_table(d: &Arc<ComparisonData>) -> impl IntoView {
    let rows = d
        .summary
        .iter()
        .map(|r: &SummaryDelta| {
            let rel = r
                .rel_delta
                .map_or_else(|| "—".to_owned(), |x| format!("{:+.1}%", x * 100.0));
            let raw = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
            view! {
                <tr data-testid="compare-summary-row" data-key=r.key.clone()>
                    <td class="text">{r.label.clone()}</td>
                    <td class="num" data-key="base" data-value=raw(r.base)>{opt_text(&r.unit, r.base, false)}</td>
                    <td class="num" data-key="cand" data-value=raw(r.cand)>{opt_text(&r.unit, r.cand, false)}</td>
                    <td class="num" data-key="delta" data-value=raw(r.delta)>{opt_text(&r.unit, r.delta, true)}</td>
                    <td class="num" data-key="rel_delta" data-value=raw(r.rel_delta)>{rel}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="data-table">
            <table data-testid="compare-summary">
                <thead><tr>
                    <th>"Metric"</th><th class="num">"Baseline"</th><th class="num">"Candidate"</th>
                    <th class="num">"Delta"</th><th class="num">"Change"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// One sortable header cell.
fn header(
    ctl: Controller,
    table: DiffTable,
    c: &CompareState,
    key: String,
    label: String,
    num: bool,
) -> impl IntoView {
    let order = c.order(table).filter(|o| o.sort.key == key);
    let mark = match &order {
        Some(o) if o.abs => " ▼ |Δ|",
        Some(o) if o.sort.desc => " ▼",
        Some(_) => " ▲",
        None => "",
    };
    let sort = order.as_ref().map(|o| match (o.abs, o.sort.desc) {
        (true, _) => "abs",
        (false, true) => "desc",
        (false, false) => "asc",
    });
    view! {
        <th
            data-testid=format!("col-{key}")
            data-sort=sort
            class:num=num
            class:sorted=sort.is_some()
            on:click=move |_| ctl.sort_compare(table, key.clone())
        >
            {format!("{label}{mark}")}
        </th>
    }
}

/// The texts of the base, candidate and delta cells of one compared column.
fn pair_texts(unit: &str, p: DeltaPair) -> [String; 3] {
    let delta = p.cand - p.base;
    let rel = rel_text(p);
    // A relative change of an unchanged value says nothing.
    let delta_text = if rel.is_empty() || delta == 0.0 {
        signed(unit, delta, true)
    } else {
        format!("{} ({rel})", signed(unit, delta, true))
    };
    [
        signed(unit, p.base, false),
        signed(unit, p.cand, false),
        delta_text,
    ]
}

/// The base, candidate and delta cells of one compared column.
fn pair_cells(key: &str, unit: &'static str, p: DeltaPair) -> impl IntoView {
    let delta = p.cand - p.base;
    let [base, cand, delta_text] = pair_texts(unit, p);
    view! {
        <td class="num" data-key=format!("{key}_base") data-value=p.base.to_string()>{base}</td>
        <td class="num" data-key=format!("{key}_cand") data-value=p.cand.to_string()>{cand}</td>
        <td class="num delta" class:up={delta > 0.0} class:down={delta < 0.0}
            data-key=format!("{key}_delta") data-value=delta.to_string()>{delta_text}</td>
    }
}

/// The columns of `table`: (key, label, unit).
fn columns(table: DiffTable) -> &'static [(&'static str, &'static str, &'static str)] {
    match table {
        DiffTable::Ops => &OP_COLUMNS,
        DiffTable::Kernels => &KERNEL_COLUMNS,
        DiffTable::Modules => &MODULE_COLUMNS,
    }
}

/// The base, candidate and delta headers of a compared column: (key suffix, label suffix).
const SIDES: [(&str, &str); 3] = [("base", "B"), ("cand", "C"), ("delta", "Δ")];

/// The width of every column of `table`'s diff (see [`scroll_table`]), from every row's texts.
fn diff_widths(d: &ComparisonData, table: DiffTable) -> Vec<Option<usize>> {
    let rows = match table {
        DiffTable::Ops => d.ops.len(),
        DiffTable::Kernels => d.kernels.len(),
        DiffTable::Modules => d.modules.len(),
    };
    let statuses = (0..rows).filter_map(|i| status(d, table, i));
    let mut widths = vec![None, Some(width_ch("Status", statuses.map(str::len)))];
    for &(key, label, unit) in columns(table) {
        let texts: Vec<[String; 3]> = (0..rows)
            .filter_map(|i| pair(d, table, i, key))
            .map(|p| pair_texts(unit, p))
            .collect();
        for (side, (_, what)) in SIDES.into_iter().enumerate() {
            let label = format!("{label} {what}");
            widths.push(Some(width_ch(&label, texts.iter().map(|t| t[side].chars().count()))));
        }
    }
    widths
}

/// The diff of `table`: sortable headers, and the rows in the sort's order (those in view).
fn diff_table(
    ctl: Controller,
    table: DiffTable,
    c: &CompareState,
    widths: Vec<Option<usize>>,
) -> Option<impl IntoView> {
    let d = c.data.clone()?;
    let columns = columns(table);
    let (table_id, row_id) = match table {
        DiffTable::Ops => ("compare-ops", "compare-op-row"),
        DiffTable::Kernels => ("compare-kernels", "compare-kernel-row"),
        DiffTable::Modules => ("compare-modules", "compare-module-row"),
    };
    let order = match table {
        DiffTable::Ops => c.op_rows(),
        DiffTable::Kernels => c.kernel_rows(),
        DiffTable::Modules => c.module_rows(),
    };
    let mut heads = vec![
        header(ctl, table, c, "name".into(), "Name".into(), false).into_any(),
        header(ctl, table, c, "status".into(), "Status".into(), false).into_any(),
    ];
    for &(key, label, _) in columns {
        for (suffix, what) in SIDES {
            let label = format!("{label} {what}");
            heads.push(header(ctl, table, c, format!("{key}_{suffix}"), label, true).into_any());
        }
    }
    let head = view! { <tr>{heads}</tr> }.into_any();
    let shorts = match table {
        DiffTable::Ops => short_names(d.ops.iter().map(|r| r.name.as_str())),
        DiffTable::Kernels => short_names(d.kernels.iter().map(|r| r.name.as_str())),
        // In tree order a module reads as its own name, indented by depth; sorted, as the end
        // of its path (the whole path is the cell's title).
        DiffTable::Modules => d
            .modules
            .iter()
            .map(|r| {
                let parts: Vec<&str> = r.path.rsplit('/').take(3).collect();
                match c.module_sort {
                    None => format!("{}{}", "\u{a0}\u{a0}".repeat(usize::from(r.depth)), parts[0]),
                    Some(_) if usize::from(r.depth) < parts.len() => r.path.clone(),
                    Some(_) => format!("…/{}", parts.iter().rev().copied().collect::<Vec<_>>().join("/")),
                }
            })
            .collect(),
    };
    Some(scroll_table(
        table_id,
        None,
        widths,
        head,
        order.len(),
        move |k| {
            let short = shorts.get(order[k]).map_or("", String::as_str);
            diff_row(&d, table, (k, order[k]), short, columns, row_id)
        },
    ))
}

/// Row `i` of `table` in `d`'s diff, shown at position `k`; its name cell shows `short` (the
/// name's short form) and carries the whole name in `title`.
fn diff_row(
    d: &ComparisonData,
    table: DiffTable,
    (k, i): (usize, usize),
    short: &str,
    columns: &[(&str, &str, &'static str)],
    row_id: &'static str,
) -> AnyView {
    let with_shapes = |name: &str, shapes: &str| {
        if shapes.is_empty() {
            name.to_owned()
        } else {
            format!("{name} {shapes}")
        }
    };
    let name = match table {
        DiffTable::Ops => d.ops.get(i).map(|r| {
            (with_shapes(&r.name, &r.input_shapes), with_shapes(short, &r.input_shapes))
        }),
        DiffTable::Kernels => d.kernels.get(i).map(|r| (r.name.clone(), short.to_owned())),
        DiffTable::Modules => d.modules.get(i).map(|r| (r.path.clone(), short.to_owned())),
    };
    let (Some((name, short)), Some(status)) = (name, status(d, table, i)) else {
        return ().into_any();
    };
    let cells = columns
        .iter()
        .filter_map(|&(key, _, unit)| pair(d, table, i, key).map(|p| pair_cells(key, unit, p)))
        .collect_view();
    let class = format!("status-{status}");
    let shown = shown_text(&short);
    let data_status = status.to_owned();
    view! {
        <tr data-testid=row_id aria-rowindex=row_index(k) data-status=data_status class=class>
            <td class="text" data-key="name" title=name>{shown}</td>
            <td class="text" data-key="status">{status.to_owned()}</td>
            {cells}
        </tr>
    }
    .into_any()
}

/// The status of row `i` of `table` (same, changed, new, gone).
fn status(d: &ComparisonData, table: DiffTable, i: usize) -> Option<&str> {
    match table {
        DiffTable::Ops => d.ops.get(i).map(|r| r.status.as_str()),
        DiffTable::Kernels => d.kernels.get(i).map(|r| r.status.as_str()),
        DiffTable::Modules => d.modules.get(i).map(|r| r.status.as_str()),
    }
}

/// Both sides of column `key` of row `i` of `table`.
fn pair(d: &ComparisonData, table: DiffTable, i: usize, key: &str) -> Option<DeltaPair> {
    match table {
        DiffTable::Ops => d.ops.get(i).and_then(|r| op_pair(r, key)),
        DiffTable::Kernels => d.kernels.get(i).and_then(|r| kernel_pair(r, key)),
        DiffTable::Modules => d.modules.get(i).and_then(|r| module_pair(r, key)),
    }
}

fn findings_diff(d: &ComparisonData) -> impl IntoView {
    let list = |what: &'static str, title: &'static str, items: &[FindingChange]| {
        let lis = items
            .iter()
            .map(|f| {
                let text = f.cand_title.clone().or_else(|| f.base_title.clone()).unwrap_or_default();
                view! {
                    <li data-testid="compare-finding" data-rule=f.rule.clone() class=format!("finding {}", f.severity)>
                        <span class="badge">{f.severity.clone()}</span>" "
                        <code class="rule">{f.rule.clone()}</code>" "{text}
                    </li>
                }
            })
            .collect_view();
        view! {
            <div data-testid=format!("compare-findings-{what}")>
                <h4>{format!("{title} ({})", items.len())}</h4>
                <ul>{lis}</ul>
            </div>
        }
    };
    let f = &d.findings;
    view! {
        <section class="compare-findings" data-testid="compare-findings">
            <h3>"Findings"</h3>
            {list("new", "New in the candidate", &f.new)}
            {list("gone", "Gone since the baseline", &f.gone)}
            {list("kept", "In both", &f.kept)}
        </section>
    }
}
