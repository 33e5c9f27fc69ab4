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

/// The two inputs and the run's rates; changes go through `on_workload`.
#[component]
pub fn ThroughputInputs(tables: ReadSignal<TableState>, on_workload: Callback<Workload>) -> impl IntoView {
    let set = move |edit: fn(&mut Workload, Option<u64>), ev: leptos::ev::Event| {
        let mut w = tables.with_untracked(|t| t.workload);
        edit(&mut w, parse_count(&event_target_value(&ev)));
        on_workload.run(w);
    };
    let shown = |n: Option<u64>| n.map(|n| n.to_string()).unwrap_or_default();
    view! {
        <label title="Samples per step (the global batch): adds Samples/s (kinetoscope report --batch-size N)">
            "Batch size "
            <input type="number" min="1" step="1" class="count-input" data-testid="batch-size"
                prop:value=move || tables.with(|t| shown(t.workload.batch_size))
                on:change=move |ev| set(|w, n| w.batch_size = n, ev) />
        </label>
        <label title="Tokens per step: adds Tokens/s (kinetoscope report --tokens-per-step N)">
            "Tokens / step "
            <input type="number" min="1" step="1" class="count-input" data-testid="tokens-per-step"
                prop:value=move || tables.with(|t| shown(t.workload.tokens_per_step))
                on:change=move |ev| set(|w, n| w.tokens_per_step = n, ev) />
        </label>
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
