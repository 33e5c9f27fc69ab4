//! The Steps tab's step marker picker, for a trace without `ProfilerStep#N` (inference servers,
//! scripts): a select listing the host annotations that repeat, with their counts; the one
//! chosen marks the steps (the Steps table, the step charts, the step findings and the ruler's
//! step marks), as `kinetoscope report --step-marker NAME` does. Shown only when the trace has
//! candidates (never for a trace with `ProfilerStep#N`).
//!
//! Test ids: `step-marker` (the select; option values are the annotation names, `""` for none).

use leptos::prelude::*;
use protocol::StepMarking;

/// Picks the step marker among `marking`'s candidates through `on_marker` (`None`: no marker).
#[component]
pub fn MarkerPicker(marking: Memo<StepMarking>, on_marker: Callback<Option<String>>) -> impl IntoView {
    let on_change = move |ev: leptos::ev::Event| {
        let name = event_target_value(&ev);
        on_marker.run(Some(name).filter(|n| !n.is_empty()));
    };
    move || {
        marking.with(|m| {
            (!m.candidates.is_empty()).then(|| {
                let current = m.marker.clone().unwrap_or_default();
                let options = m
                    .candidates
                    .iter()
                    .map(|c| {
                        let selected = c.name == current;
                        let label = format!("{} ({}×)", c.name, c.count);
                        view! { <option value=c.name.clone() selected=selected>{label}</option> }
                    })
                    .collect_view();
                view! {
                    <label title="A repeating annotation to use as the step (kinetoscope report --step-marker NAME)">
                        "Step marker "
                        <select data-testid="step-marker" on:change=on_change>
                            <option value="" selected=current.is_empty()>"none (ProfilerStep#N)"</option>
                            {options}
                        </select>
                    </label>
                }
            })
        })
    }
}
