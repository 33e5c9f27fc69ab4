//! The Steps tab's "why is this step slow?": the explained step's sentences (each citing a
//! slice links to it), then a compact table of categories, kernels and ops with the step's
//! time, the median step's, the difference and the calls; a kernel or op that ran in the step
//! links to its longest slice there. A link selects that slice on the timeline (outlined).
//! A thin view over [`ExplainState`]; the numbers are the engine's (`report --explain-step`).
//!
//! Test ids: `step-explain` (panel; `data-step` the step explained), `step-explain-sentence`
//! (with `step-explain-cite`, a button with `data-slice`, when the sentence cites a slice),
//! `step-explain-row` (`data-kind` = `category` | `kernel` | `op`, `data-name`), in it
//! `step-explain-link` (button, `data-slice`) for a kernel or op with evidence;
//! `step-explain-error`. Trace text is always text, never HTML.

use crate::control::Controller;
use crate::state::explain::{rows, ExplainState, Row};
use crate::state::format;
use leptos::prelude::*;
use protocol::{ExplanationData, SliceRef};
use std::sync::Arc;

/// The explanation of the step asked for (the slowest until a step row is clicked).
#[component]
pub fn StepExplain(ctl: Controller) -> impl IntoView {
    let data = Memo::new(move |_| ctl.explain.with(|e| e.data.clone()));
    let status = Memo::new(move |_| ctl.explain.with(status_text));
    let error = Memo::new(move |_| ctl.explain.with(|e| e.error.clone()));
    view! {
        <section class="card step-explain" data-testid="step-explain"
            data-step=move || data.get().map(|d| d.step.to_string())>
            <h3>{move || match data.get() {
                Some(d) => format!("Why {} took {}", d.name, format::span_us(d.dur_ns as f64 / 1e3)),
                None => "Why is this step slow?".to_owned(),
            }}</h3>
            <p class="muted">{move || status.get()}</p>
            {move || error.get().map(|m| view! {
                <p class="error" data-testid="step-explain-error" role="alert">{m}</p>
            })}
            {move || data.get().map(|d| body(ctl, &d))}
        </section>
    }
}

/// The line under the title: what is shown and how to pick another step.
fn status_text(e: &ExplainState) -> String {
    let pick = "click a step row above to explain that step";
    match (e.pending.is_some(), &e.data) {
        (true, _) => "Comparing the step with the median step…".to_owned(),
        // One complete step has no median to be compared with: its own numbers are shown.
        (false, Some(d)) if d.steps <= 1 => "The only complete step: nothing to compare it with; its own time by category, kernel and op".to_owned(),
        (false, Some(d)) => format!(
            "Against the median of {} complete steps ({}) · {pick}",
            d.steps,
            format::span_us(d.median_ns / 1e3),
        ),
        (false, None) => pick.to_owned(),
    }
}

fn body(ctl: Controller, d: &Arc<ExplanationData>) -> impl IntoView {
    let sentences = d
        .sentences
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let cite = d.sentence_slices.get(i).cloned().flatten().map(|r| {
                view! { " " {link(ctl, r, "step-explain-cite", "show".to_owned())} }
            });
            view! { <p data-testid="step-explain-sentence"><span>{s.clone()}</span>{cite}</p> }
        })
        .collect_view();
    let alone = d.steps <= 1;
    let rows = rows(d).into_iter().map(|r| row(ctl, r, alone)).collect_view();
    let head = if alone {
        view! { <tr><th>""</th><th>"name"</th><th class="num">"step"</th><th class="num">"calls"</th></tr> }.into_any()
    } else {
        view! {
            <tr>
                <th>""</th><th>"name"</th><th class="num">"step"</th><th class="num">"median"</th>
                <th class="num">"Δ"</th><th class="num">"calls (step / median)"</th>
            </tr>
        }
        .into_any()
    };
    view! {
        <div class="explain-sentences">{sentences}</div>
        <table class="explain-table" data-alone=alone.to_string()>
            <thead>{head}</thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// One row; `alone`: the trace's only complete step, shown without a median to compare with.
fn row(ctl: Controller, r: Row, alone: bool) -> impl IntoView {
    let delta = r.delta_text();
    let calls = r.calls_text();
    let worse = r.delta_ns() > 0.0;
    let name = match r.slice.clone() {
        Some(s) => link(ctl, s, "step-explain-link", r.name.clone()).into_any(),
        None => view! { <span title=r.name.clone()>{r.name.clone()}</span> }.into_any(),
    };
    view! {
        <tr data-testid="step-explain-row" data-kind=r.kind data-name=r.name.clone()>
            <td class="muted">{r.kind}</td>
            <td class="name">{name}</td>
            <td class="num">{format::span_us(r.step_ns as f64 / 1e3)}</td>
            {(!alone).then(|| view! {
                <td class="num">{format::span_us(r.median_ns / 1e3)}</td>
                <td class="num" class:worse=worse>{delta}</td>
            })}
            <td class="num">{if alone { r.step_calls_text() } else { calls }}</td>
        </tr>
    }
}

/// A button that selects `r` on the timeline.
fn link(ctl: Controller, r: SliceRef, testid: &'static str, text: String) -> impl IntoView {
    let id = r.id;
    let title = format!("Select {} on the timeline", r.name);
    view! {
        <button class="explain-link" data-testid=testid data-slice=id title=title
            on:click=move |_| ctl.select_evidence(r.clone())>
            {text}
        </button>
    }
}
