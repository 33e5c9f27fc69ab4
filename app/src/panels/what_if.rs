//! The Steps tab's What if panel: presets and a free edit in the `--what-if` grammar
//! (`gemm*0.5`, `launch=0`, `op:aten::copy_=0`); edits combine. The worker recomputes every
//! step from its cached graphs (never the main thread, never a proportional guess) and the
//! panel shows each step's new time, what it saves, the new bound-by shares, and which path
//! became critical when the bound changed. Same numbers as `report --json --what-if`.
//!
//! Test ids: `what-if` (panel), `what-if-preset` (`data-edit`), `what-if-input`,
//! `what-if-add`, `what-if-edit` (`data-edit`) with `what-if-remove`, `what-if-error`,
//! `what-if-row` (`data-step`, `data-before`, `data-after`: ns, `data-bound-before`,
//! `data-bound-after`) with `what-if-note` where another path became critical,
//! `what-if-latency` (`data-ms`).

use crate::control::Controller;
use crate::state::critical::{fractions, CLASS_COLORS, PRESETS};
use crate::state::format;
use leptos::prelude::*;
use protocol::{WhatIfData, WhatIfStep};
use std::sync::Arc;

/// Presets, the edit box, the edits applied and the answer.
#[component]
pub fn WhatIfPanel(ctl: Controller) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let add = move || {
        let edit = text.get_untracked();
        text.set(String::new());
        ctl.what_if_add(edit);
    };
    let presets = PRESETS
        .into_iter()
        .map(|(label, edit)| view! {
            <button data-testid="what-if-preset" data-edit=edit title=format!("Add {edit}")
                on:click=move |_| ctl.what_if_add(edit.to_owned())>{label}</button>
        })
        .collect_view();
    let edits = Memo::new(move |_| ctl.critical.with(|c| c.what_if.edits.clone()));
    let data = Memo::new(move |_| ctl.critical.with(|c| c.what_if.data.clone()));
    let labels = Memo::new(move |_| ctl.critical.with(|c| c.data.as_ref().map(|d| (d.classes.clone(), d.labels.clone()))));
    view! {
        <section class="card what-if" data-testid="what-if">
            <h3>"What if…"</h3>
            <p class="muted">"Each step recomputed from its dependency graph with the change applied (edits combine)."</p>
            <div class="what-if-presets">{presets}</div>
            <div class="what-if-form">
                <input data-testid="what-if-input" placeholder="gemm*0.5, launch=0, kernel:nccl=0, op:aten::copy_=0"
                    prop:value=move || text.get() on:input=move |e| text.set(event_target_value(&e))
                    on:keydown=move |e: web_sys::KeyboardEvent| if e.key() == "Enter" { add() } />
                <button data-testid="what-if-add" on:click=move |_| add()>"Add"</button>
            </div>
            <div class="what-if-edits">
                {move || edits.get().into_iter().enumerate().map(|(k, e)| view! {
                    <span class="chip" data-testid="what-if-edit" data-edit=e.clone()>
                        <code>{e.clone()}</code>
                        <button data-testid="what-if-remove" title="Remove" on:click=move |_| ctl.what_if_remove(k)>"×"</button>
                    </span>
                }).collect_view()}
            </div>
            {move || ctl.critical.with(|c| c.what_if.error.clone().or_else(|| c.what_if.data.as_ref().and_then(|d| d.error.clone())))
                .map(|m| view! { <p class="error" data-testid="what-if-error" role="alert">{m}</p> })}
            {move || data.get().filter(|d| d.error.is_none() && !edits.get().is_empty()).map(|d| table(&d, labels.get()))}
            {move || ctl.critical.with(|c| c.what_if.latency_ms).map(|ms| view! {
                <p class="muted" data-testid="what-if-latency" data-ms=format!("{ms:.1}")>{format!("answered in {ms:.0} ms")}</p>
            })}
        </section>
    }
}

fn table(d: &Arc<WhatIfData>, labels: Option<(Vec<String>, Vec<String>)>) -> impl IntoView {
    let (classes, labels) = labels.unwrap_or_default();
    let label_of = move |id: &str| classes.iter().position(|c| c == id).and_then(|k| labels.get(k)).cloned().unwrap_or_else(|| id.to_owned());
    let rows = d.steps.iter().map(|s| row(s, &label_of)).collect_view();
    let n = d.steps.len().max(1) as f64;
    let before: i64 = d.steps.iter().map(|s| s.before_ns).sum();
    let after: i64 = d.steps.iter().map(|s| s.after_ns).sum();
    let mean = (d.steps.len() > 1).then(|| view! {
        <tr class="mean"><td>"mean"</td>
            <td class="num">{format::span_us(before as f64 / n / 1e3)}</td>
            <td class="num">{format::span_us(after as f64 / n / 1e3)}</td>
            <td class="num">{saved_pct(before, after)}</td><td></td><td></td></tr>
    });
    view! {
        <table class="what-if-table">
            <thead><tr><th>"step"</th><th class="num">"before"</th><th class="num">"after"</th>
                <th class="num">"saved"</th><th>"bound by after"</th><th>"path after"</th></tr></thead>
            <tbody>{rows}{mean}</tbody>
        </table>
    }
}

fn saved_pct(before: i64, after: i64) -> String {
    if before > 0 {
        format!("{:.1}%", 100.0 * (before - after) as f64 / before as f64)
    } else {
        "–".to_owned()
    }
}

fn row(s: &WhatIfStep, label_of: &dyn Fn(&str) -> String) -> impl IntoView {
    let changed = s.bound_by_after != s.bound_by_before;
    let note = changed.then(|| {
        let text = format!(
            "another path became critical: now {}, was {}",
            label_of(&s.bound_by_after),
            label_of(&s.bound_by_before)
        );
        view! { <span class="muted" data-testid="what-if-note">{text}</span> }
    });
    let bar = fractions(&s.shares_after_ns)
        .into_iter()
        .enumerate()
        .filter(|(_, f)| *f > 0.0)
        .map(|(k, f)| {
            let color = CLASS_COLORS.get(k).copied().unwrap_or("#888");
            view! { <span class="part" style=format!("width:{:.3}%;background:{color}", f * 100.0)></span> }
        })
        .collect_view();
    let name = s.step.map_or_else(|| "capture".to_owned(), |n| format!("step {n}"));
    view! {
        <tr data-testid="what-if-row" data-step=s.step.map(|n| n.to_string()) data-before=s.before_ns
            data-after=s.after_ns data-bound-before=s.bound_by_before.clone() data-bound-after=s.bound_by_after.clone()>
            <td>{name}</td>
            <td class="num">{format::span_us(s.before_ns as f64 / 1e3)}</td>
            <td class="num">{format::span_us(s.after_ns as f64 / 1e3)}</td>
            <td class="num">{saved_pct(s.before_ns, s.after_ns)}</td>
            <td>{label_of(&s.bound_by_after)}" "{note}</td>
            <td><span class="bar small">{bar}</span></td>
        </tr>
    }
}
