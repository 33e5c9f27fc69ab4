//! Findings as text (the "Findings" section of `kinetoscope report`) and as `findings[]` JSON
//! (keys: `rule`, `severity`, `title`, `meaning`, `try`, `evidence{slices, total, range_ns,
//! lanes}`; stable API, the UI maps the same fields).

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
                    "meaning": f.meaning,
                    "try": f.try_this,
                    "evidence": {
                        "slices": f.evidence.slices,
                        "total": f.evidence.total,
                        "range_ns": f.evidence.range_ns.map(|(a, b)| [a, b]),
                        "lanes": f.evidence.lanes,
                    },
                })
            })
            .collect(),
    )
}

/// The "Findings" section: one block per finding, alert first; a one-line note when none.
pub fn findings_text(findings: &[Finding]) -> String {
    let mut out = String::new();
    let title = "Findings (cheatsheet; whole trace)";
    let _ = writeln!(out, "==== {title} {}", "=".repeat(WIDTH.saturating_sub(title.len() + 6)));
    if findings.is_empty() {
        let _ = writeln!(out, "No findings.\n");
        return out;
    }
    for f in findings {
        let _ = writeln!(out, "[{}] {}: {}", f.severity.as_str(), f.rule, printable(&f.title));
        let _ = writeln!(out, "    means: {}", f.meaning);
        let _ = writeln!(out, "    try:   {}", f.try_this);
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
