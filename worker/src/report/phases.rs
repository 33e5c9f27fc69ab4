//! `report --phases`: each step's data loading, forward, backward, optimizer and the
//! communication they do not hide (text, and `phases` in `--json`).

use crate::analysis::ops::us;
use crate::analysis::phases::{Phase, Phases};
use crate::text::pytorch_time as time;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// `phases{}`: per step, CPU and GPU µs of each phase; which phases the trace cannot tell apart.
pub fn json(p: &Phases) -> Value {
    let by_phase = |ns: &[i64; 4]| -> serde_json::Map<String, Value> { Phase::ALL.iter().map(|&ph| (ph.key().to_owned(), json!(us(ns[ph as usize])))).collect() };
    json!({
        "not_told_apart": p.not_told_apart.iter().map(|ph| ph.key()).collect::<Vec<_>>(),
        "steps": p.steps.iter().map(|s| json!({
            "step": s.step,
            "cpu_us": by_phase(&s.cpu_ns),
            "gpu_us": by_phase(&s.gpu_ns),
            "communication_us": us(s.comm_ns),
            "communication_exposed_us": us(s.comm_exposed_ns),
        })).collect::<Vec<_>>(),
    })
}

/// The text section: one row per step, CPU / GPU time per phase.
pub fn text(p: &Phases) -> String {
    let mut out = String::from("\n==== Phases (CPU / GPU time per step; docs/definitions.md \"Phases\")\n");
    if p.steps.is_empty() {
        out.push_str("No steps: phases are per ProfilerStep#N.\n");
        return out;
    }
    let _ = write!(out, "{:>8}", "step");
    for ph in Phase::ALL {
        let _ = write!(out, " {:>23}", ph.key());
    }
    let _ = writeln!(out, " {:>23}", "comm exposed / all");
    for s in &p.steps {
        let _ = write!(out, "{:>8}", s.step);
        for ph in Phase::ALL {
            let _ = write!(out, " {:>23}", format!("{} / {}", time(s.cpu_ns[ph as usize]), time(s.gpu_ns[ph as usize])));
        }
        let _ = writeln!(out, " {:>23}", format!("{} / {}", time(s.comm_exposed_ns), time(s.comm_ns)));
    }
    if !p.not_told_apart.is_empty() {
        let names: Vec<&str> = p.not_told_apart.iter().map(|ph| ph.key()).collect();
        let _ = writeln!(out, "Not told apart (no markers in the trace; counted in forward): {}", names.join(", "));
    }
    out
}
