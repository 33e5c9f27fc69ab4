//! The error box: the engine's (or the network's) message for the failed load, with its kind
//! and position. Present in the DOM only while an error shows (test id `error`).

use crate::state::LoadState;
use leptos::prelude::*;
use protocol::LoadError;

/// Shows the last load's error, if any.
#[component]
pub fn ErrorPanel(state: ReadSignal<LoadState>) -> impl IntoView {
    let shown = Memo::new(move |_| state.with(|s| s.error.clone().map(|e| (e, s.name.clone()))));
    move || {
        shown.get().map(|(error, name)| {
            let title = match name {
                Some(name) => format!("Could not load {name}"),
                None => "Could not load the trace".to_owned(),
            };
            view! {
                <section class="card error" data-testid="error" role="alert"
                    data-kind=error.kind.clone()>
                    <h2>{title}</h2>
                    <p class="message">{error.message.clone()}</p>
                    <p class="detail">{detail(&error)}</p>
                    <p class="hint">"Open another trace to try again."</p>
                </section>
            }
        })
    }
}

/// `kind: malformed · byte 1234 · line 5, column 7`, with only the parts that are known.
fn detail(error: &LoadError) -> String {
    let mut parts = vec![format!("kind: {}", error.kind)];
    if let Some(offset) = error.offset {
        parts.push(format!("byte {offset}"));
    }
    match (error.line, error.column) {
        (Some(line), Some(column)) => parts.push(format!("line {line}, column {column}")),
        (Some(line), None) => parts.push(format!("line {line}")),
        _ => {}
    }
    parts.join(" · ")
}
