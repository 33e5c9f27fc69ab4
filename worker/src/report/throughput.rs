//! Throughput per step from the work each step does, which the trace does not record: samples
//! per second from the batch size and tokens per second from the tokens per step the user
//! gives (`report --batch-size N --tokens-per-step N`), next to MFU.
//!
//! Rules: a step's rate is its work over its span (`dur_ns`, the span the step breakdown
//! divides); the whole run's is the work of the complete steps over their summed spans (not a
//! mean of rates, which would weight short steps up). Incomplete steps are listed without a
//! rate. Output: `throughput` of `report --json`, and a text section.

use crate::analysis::steps::{step_name, Steps};
use crate::model::Trace;
use serde_json::{json, Value};
use std::fmt::Write as _;

pub use protocol::Workload;

/// `work` units over `ns`, per second (`None` over no time).
fn rate(work: Option<u64>, ns: i64) -> Option<f64> {
    (ns > 0).then_some(())?;
    Some(work? as f64 * 1e9 / ns as f64)
}

/// (samples/s, tokens/s) over the complete steps of `steps`.
pub fn overall(steps: &Steps, w: Workload) -> (Option<f64>, Option<f64>) {
    let complete: Vec<i64> = steps.steps.iter().filter(|s| !s.incomplete).map(|s| s.dur_ns()).collect();
    let (n, ns) = (complete.len() as u64, complete.iter().sum::<i64>());
    (rate(w.batch_size.map(|b| b * n), ns), rate(w.tokens_per_step.map(|t| t * n), ns))
}

/// (samples/s, tokens/s) of each step of `steps`, in order; `None` for an incomplete step or a
/// figure not given.
pub fn per_step(steps: &Steps, w: Workload) -> Vec<(Option<f64>, Option<f64>)> {
    steps
        .steps
        .iter()
        .map(|s| {
            let ns = if s.incomplete { 0 } else { s.dur_ns() };
            (rate(w.batch_size, ns), rate(w.tokens_per_step, ns))
        })
        .collect()
}

/// `throughput` of `report --json`: the figures given, the rates over the complete steps and
/// per step (`steps[]`: `name`, `dur_us`, `samples_per_s`, `tokens_per_s`, null for an
/// incomplete step or a figure not given).
pub fn json(trace: &Trace, steps: &Steps, w: Workload) -> Value {
    let (samples, tokens) = overall(steps, w);
    let rows: Vec<Value> = steps
        .steps
        .iter()
        .zip(per_step(steps, w))
        .map(|(s, (samples, tokens))| {
            json!({
                "name": step_name(trace, s.number),
                "dur_us": s.dur_ns() as f64 / 1e3,
                "samples_per_s": samples,
                "tokens_per_s": tokens,
            })
        })
        .collect();
    json!({
        "batch_size": w.batch_size,
        "tokens_per_step": w.tokens_per_step,
        "complete_steps": steps.steps.iter().filter(|s| !s.incomplete).count(),
        "samples_per_s": samples,
        "tokens_per_s": tokens,
        "steps": rows,
    })
}

/// The text section: the run's rates, then each step's.
pub fn text(trace: &Trace, steps: &Steps, w: Workload) -> String {
    let mut out = String::from("\nThroughput");
    let given: Vec<String> = w
        .batch_size
        .map(|b| format!("batch size {b}"))
        .into_iter()
        .chain(w.tokens_per_step.map(|t| format!("{t} tokens per step")))
        .collect();
    let _ = writeln!(out, " ({})", given.join(", "));
    let (samples, tokens) = overall(steps, w);
    let n = steps.steps.iter().filter(|s| !s.incomplete).count();
    if n == 0 {
        out.push_str("  no complete step: no rate\n");
        return out;
    }
    let both = |s: Option<f64>, t: Option<f64>| {
        let parts: Vec<String> = s.map(|v| format!("{} samples/s", per_s(v))).into_iter().chain(t.map(|v| format!("{} tokens/s", per_s(v)))).collect();
        parts.join(", ")
    };
    let _ = writeln!(out, "  over {n} complete steps: {}", both(samples, tokens));
    for (s, (samples, tokens)) in steps.steps.iter().zip(per_step(steps, w)).filter(|(s, _)| !s.incomplete) {
        let _ = writeln!(out, "  {:<24} {:>12}  {}", step_name(trace, s.number), crate::text::duration(s.dur_ns()), both(samples, tokens));
    }
    out
}

/// A rate with three significant digits (`45.6`, `123`), whole above that (`12345`).
fn per_s(v: f64) -> String {
    protocol::units::sig3(v)
}
