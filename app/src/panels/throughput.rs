//! The Steps tab's throughput setting: the work one step does, which the trace does not record
//! (batch size, tokens per step), as `kinetoscope report --batch-size N --tokens-per-step N`
//! takes it. Given, the Steps table gains Samples/s and Tokens/s per step (next to MFU %) and
//! this line says the run's rates: the work of the complete steps over their summed spans.
//!
//! Test ids: `batch-size`, `tokens-per-step` (number inputs; empty: not given),
//! `throughput-summary` (the run's rates, `data-samples-per-s` / `data-tokens-per-s` raw).

use crate::state::format;
use crate::state::table::TableState;
use leptos::prelude::*;
use protocol::Workload;

/// A positive whole number typed in an input; anything else means "not given".
fn parse_count(text: &str) -> Option<u64> {
    text.trim().parse().ok().filter(|&n| n > 0)
}

/// The run's rates from the Steps table's totals, as text; `None` with no figure given.
fn summary(t: &TableState) -> Option<(String, Option<f64>, Option<f64>)> {
    let data = t.data.as_ref().filter(|d| d.kind == "steps")?;
    let samples = data.totals.get("samples_per_s").copied();
    let tokens = data.totals.get("tokens_per_s").copied();
    if t.workload.is_empty() {
        return None;
    }
    let n = data.totals.get("complete_steps").copied().unwrap_or(0.0) as u64;
    if n == 0 {
        return Some(("no complete step: no rate".into(), None, None));
    }
    let parts: Vec<String> = samples
        .map(|v| format!("{} samples/s", format::rate(v)))
        .into_iter()
        .chain(tokens.map(|v| format!("{} tokens/s", format::rate(v))))
        .collect();
    Some((format!("over {n} complete steps: {}", parts.join(", ")), samples, tokens))
}

/// One figure's input: `get` reads it from the workload shown, `set` writes the typed value.
fn count_input(
    tables: ReadSignal<TableState>,
    on_workload: Callback<Workload>,
    (label, title, testid): (&'static str, &'static str, &'static str),
    get: fn(&Workload) -> Option<u64>,
    set: fn(&mut Workload, Option<u64>),
) -> impl IntoView {
    let on_change = move |ev: leptos::ev::Event| {
        let mut w = tables.with_untracked(|t| t.workload);
        set(&mut w, parse_count(&event_target_value(&ev)));
        on_workload.run(w);
    };
    view! {
        <label title=title>
            {label}
            <input type="number" min="1" step="1" class="count-input" data-testid=testid
                prop:value=move || tables.with(|t| get(&t.workload).map(|n| n.to_string()).unwrap_or_default())
                on:change=on_change />
        </label>
    }
}

/// The two inputs and the run's rates; changes go through `on_workload`.
#[component]
pub fn ThroughputInputs(tables: ReadSignal<TableState>, on_workload: Callback<Workload>) -> impl IntoView {
    let batch = ("Batch size ", "Samples per step (the global batch): adds Samples/s (kinetoscope report --batch-size N)", "batch-size");
    let tokens = ("Tokens / step ", "Tokens per step: adds Tokens/s (kinetoscope report --tokens-per-step N)", "tokens-per-step");
    view! {
        {count_input(tables, on_workload, batch, |w| w.batch_size, |w, n| w.batch_size = n)}
        {count_input(tables, on_workload, tokens, |w| w.tokens_per_step, |w, n| w.tokens_per_step = n)}
        {move || tables.with(summary).map(|(text, samples, tokens)| {
            let raw = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
            view! {
                <span class="muted" data-testid="throughput-summary"
                    data-samples-per-s=raw(samples) data-tokens-per-s=raw(tokens)>{text}</span>
            }
        })}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::TableData;

    #[test]
    fn counts_parse_whole_positive_numbers_only() {
        assert_eq!(parse_count(" 32 "), Some(32));
        assert_eq!(parse_count("0"), None);
        assert_eq!(parse_count("-4"), None);
        assert_eq!(parse_count("2.5"), None);
        assert_eq!(parse_count(""), None);
    }

    #[test]
    fn summary_reads_the_steps_totals() {
        let mut t = TableState::default();
        let mut data = TableData { kind: "steps".into(), ..TableData::default() };
        data.totals.insert("samples_per_s".into(), 1234.4);
        data.totals.insert("complete_steps".into(), 3.0);
        t.data = Some(data.into());
        assert_eq!(summary(&t), None, "no figure given");
        t.workload.batch_size = Some(8);
        assert_eq!(summary(&t), Some(("over 3 complete steps: 1,234 samples/s".into(), Some(1234.4), None)));
    }
}
