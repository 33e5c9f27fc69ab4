//! Findings as text (the "Findings" section of `kinetoscope report`) and as `findings[]` JSON
//! (keys: `rule`, `severity`, `title`, `why`, `meaning`, `try`, `evidence{slices, total,
//! range_ns, lanes}`, evidence slices most telling first; stable API, the UI maps the same
//! fields).

use super::{printable, WIDTH};
use crate::finding::Finding;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// `findings[]` for `report --json`.
pub fn findings_json(findings: &[Finding]) -> Value {
    Value::Array(
        findings
            .iter()
            .map(|f| {
                json!({
                    "rule": f.rule,
                    "severity": f.severity.as_str(),
                    "title": f.title,
                    "why": f.why,
                    "meaning": f.meaning,
                    "try": f.try_this,
                    "evidence": {
                        "slices": f.evidence.slices,
                        "total": f.evidence.total,
                        "range_ns": f.evidence.range_ns.map(|(a, b)| [a, b]),
                        "lanes": f.evidence.lanes,
                    },
                    "impact": f.impact.map(|i| json!({
                        "us": i.ns as f64 / 1000.0,
                        "per_step_us": i.per_step_ns as f64 / 1000.0,
                        "step_us": i.step_ns as f64 / 1000.0,
                        "pct": i.pct,
                        "steps": i.steps,
                    })),
                    "remedy": f.remedy.as_ref().map(|r| json!({
                        "what": r.what,
                        "saved_us": r.saved_ns as f64 / 1000.0,
                        "per_step_us": r.per_step_ns as f64 / 1000.0,
                        "pct": r.pct,
                    })),
                })
            })
            .collect(),
    )
}

/// The "Findings" section: one block per finding, alert first, wrapped to [`WIDTH`] columns;
/// a one-line note when there are none.
pub fn findings_text(findings: &[Finding]) -> String {
    let mut out = String::new();
    let title = "Findings (cheatsheet; whole trace)";
    let _ = writeln!(out, "==== {title} {}", "=".repeat(WIDTH.saturating_sub(title.len() + 6)));
    if findings.is_empty() {
        let _ = writeln!(out, "No findings.\n");
        return out;
    }
    for f in findings {
        let head = format!("[{}] {}: {}", f.severity.as_str(), f.rule, printable(&f.title));
        wrap(&mut out, "", "    ", &head);
        wrap(&mut out, "    why:   ", "           ", &printable(&f.why));
        wrap(&mut out, "    means: ", "           ", &f.meaning);
        wrap(&mut out, "    try:   ", "           ", &f.try_this);
        let e = &f.evidence;
        let range = e
            .range_ns
            .map(|(a, b)| format!(", {:.3}..{:.3} µs", a as f64 / 1e3, b as f64 / 1e3))
            .unwrap_or_default();
        let _ = writeln!(out, "    evidence: {} slices on {} lanes{range}", e.total, e.lanes.len());
    }
    out.push('\n');
    out
}

/// Appends `text` word-wrapped to [`WIDTH`] columns: the first line starts with `first`, the
/// others with `rest`. A word longer than a line is cut (kernel names can be).
pub(super) fn wrap(out: &mut String, first: &str, rest: &str, text: &str) {
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        let len = line.chars().count();
        if !empty && len + 1 + word.chars().count() > WIDTH {
            let _ = writeln!(out, "{line}");
            line = rest.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        let room = WIDTH.saturating_sub(line.chars().count());
        line.push_str(&super::cut(word, room));
        empty = false;
    }
    let _ = writeln!(out, "{line}");
}
