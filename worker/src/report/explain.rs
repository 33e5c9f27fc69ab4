//! `kinetoscope report --explain-step N|slowest`: why one step is slow, as text (the sentences
//! the page shows, then the per-category and per-name differences) and as the `explanation`
//! object of `--json` (keys in docs/cli.md; evidence as slice ids, as `findings[]` has them).

use super::{cut, time, WIDTH};
use crate::analysis::explain::{sentences, Explanation, ItemDelta};
use serde_json::{json, Value};
use std::fmt::Write as _;

/// The `explanation` object.
pub fn json(e: &Explanation) -> Value {
    let items = |items: &[ItemDelta]| -> Vec<Value> {
        items
            .iter()
            .map(|i| {
                json!({
                    "name": i.name,
                    "step_us": i.step_ns as f64 / 1e3,
                    "median_us": i.median_ns / 1e3,
                    "delta_us": i.delta_ns() / 1e3,
                    "step_calls": i.step_calls,
                    "median_calls": i.median_calls,
                    "slice": i.slice,
                })
            })
            .collect()
    };
    json!({
        "step": e.step,
        "name": e.name,
        "slice": e.slice,
        "dur_us": e.dur_ns as f64 / 1e3,
        "median_us": e.median_ns / 1e3,
        "delta_us": e.delta_ns() / 1e3,
        "steps": e.steps,
        "categories": e.categories.iter().map(|c| json!({
            "category": c.category.key(),
            "step_us": c.step_ns as f64 / 1e3,
            "median_us": c.median_ns / 1e3,
            "delta_us": c.delta_ns() / 1e3,
        })).collect::<Vec<_>>(),
        "kernels": items(&e.kernels),
        "ops": items(&e.ops),
        "sentences": sentences(e),
    })
}

/// The text section.
pub fn text(e: &Explanation) -> String {
    let mut out = format!("WHY IS {} SLOW\n", e.name.to_uppercase());
    for s in sentences(e) {
        super::findings::wrap(&mut out, "  ", "    ", &s);
    }
    if e.alone {
        // The only complete step: its own numbers, no median (itself) and no delta (zero).
        let _ = writeln!(out, "\n  {:<60} {:>12} {:>7}", "", "step", "calls");
        for c in &e.categories {
            let _ = writeln!(out, "  {:<60} {:>12}", format!("category {}", c.category.label()), time(c.step_ns));
        }
        for (kind, items) in [("kernel", &e.kernels), ("op", &e.ops)] {
            for i in items {
                let _ = writeln!(out, "  {:<60} {:>12} {:>7}", cut(&format!("{kind} {}", i.name), 60), time(i.step_ns), i.step_calls);
            }
        }
        return out;
    }
    let _ = writeln!(out, "\n  {:<60} {:>12} {:>12} {:>12} {:>7} {:>7}", "", "step", "median", "delta", "calls", "median");
    for c in &e.categories {
        let _ = writeln!(
            out,
            "  {:<60} {:>12} {:>12} {:>12}",
            format!("category {}", c.category.label()),
            time(c.step_ns),
            time(c.median_ns.round() as i64),
            signed(c.delta_ns()),
        );
    }
    for (kind, items) in [("kernel", &e.kernels), ("op", &e.ops)] {
        for i in items {
            let _ = writeln!(
                out,
                "  {:<60} {:>12} {:>12} {:>12} {:>7} {:>7.1}",
                cut(&format!("{kind} {}", i.name), 60),
                time(i.step_ns),
                time(i.median_ns.round() as i64),
                signed(i.delta_ns()),
                i.step_calls,
                i.median_calls,
            );
        }
    }
    debug_assert!(out.lines().all(|l| l.chars().count() <= WIDTH + 20));
    out
}

fn signed(ns: f64) -> String {
    let t = time(ns.abs().round() as i64);
    if ns >= 0.0 {
        format!("+{t}")
    } else {
        format!("-{t}")
    }
}
