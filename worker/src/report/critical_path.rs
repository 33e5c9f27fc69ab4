//! `report --critical-path` and `--what-if`: each step's path length, what it is bound by and
//! the slices that hold it (text and `critical_path` in `--json`), and the step times a what-if
//! answers (`what_if` in `--json`).

use super::{cut, time, title_line, WIDTH};
use crate::analysis::critical_path::{BoundBy, Edit, StepPath};
use crate::analysis::steps::step_name;
use crate::model::Trace;
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

fn pct(part: i64, whole: i64) -> f64 {
    if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    }
}

/// `ProfilerStep#N`, or for a trace without steps "capture" or "window K" when it was cut.
fn step_label(trace: &Trace, paths: &[StepPath], p: &StepPath) -> String {
    match p.step {
        Some(n) => step_name(trace, n),
        None if paths.len() == 1 => "capture window".to_owned(),
        None => format!("window {}", paths.iter().position(|q| q.start_ns == p.start_ns).map_or(0, |k| k + 1)),
    }
}

/// `{class id: µs}` of every class.
fn shares_json(p: &StepPath) -> Value {
    let map: Map<String, Value> = BoundBy::ALL.iter().map(|c| (c.as_str().to_owned(), json!(us(p.shares[c.index()])))).collect();
    Value::Object(map)
}

/// `critical_path{}`: one object per step.
pub fn json(trace: &Trace, paths: &[StepPath]) -> Value {
    let s = &trace.slices;
    let steps: Vec<Value> = paths
        .iter()
        .map(|p| {
            let top: Vec<Value> = p
                .top
                .iter()
                .map(|e| {
                    let i = e.slice as usize;
                    json!({
                        "name": trace.strings.get(s.name[i]),
                        "cat": trace.strings.get(s.cat[i]),
                        "ts_us": us(s.start_ns[i]),
                        "dur_us": us(s.dur_ns[i]),
                        "on_path_us": us(e.ns),
                        "class": e.class.as_str(),
                    })
                })
                .collect();
            json!({
                "step": p.step,
                "start_us": us(p.start_ns),
                "end_us": us(p.end_ns),
                "wall_us": us(p.wall_ns()),
                "busy_us": us(p.busy_ns()),
                "bound_by": p.bound_by().as_str(),
                "shares_us": shares_json(p),
                "sync_waits": p.sync_waits,
                "segments": p.segments.len(),
                "top_events": top,
            })
        })
        .collect();
    json!({ "classes": BoundBy::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(), "steps": steps })
}

/// The text section: per step its length and bound-by shares, then the top events of the
/// slowest step's path.
pub fn text(trace: &Trace, paths: &[StepPath], top: usize) -> String {
    let mut out = format!("\n{}\n", title_line("Critical path (what bounds each step)", WIDTH));
    if paths.is_empty() {
        out.push_str("no step and no slice: nothing to follow\n");
        return out;
    }
    let _ = write!(out, "{:<22} {:>12} {:<20}", "Step", "Length", "Bound by");
    let shown: Vec<BoundBy> = BoundBy::ALL.into_iter().filter(|c| paths.iter().any(|p| p.shares[c.index()] > 0)).collect();
    for c in &shown {
        let _ = write!(out, " {:>9}", cut(short(*c), 9));
    }
    out.push('\n');
    for p in paths {
        let _ = write!(out, "{:<22} {:>12} {:<20}", cut(&step_label(trace, paths, p), 22), time(p.wall_ns()), p.bound_by().label());
        for c in &shown {
            let _ = write!(out, " {:>8.1}%", pct(p.shares[c.index()], p.wall_ns()));
        }
        out.push('\n');
    }
    if let Some(slowest) = paths.iter().max_by_key(|p| (p.wall_ns(), std::cmp::Reverse(p.start_ns))) {
        let _ = writeln!(out, "\nOn the path of {} ({}):", step_label(trace, paths, slowest), time(slowest.wall_ns()));
        let s = &trace.slices;
        for e in slowest.top.iter().take(top) {
            let name = trace.strings.get(s.name[e.slice as usize]);
            let _ = writeln!(
                out,
                "  {:>12} {:>6.1}%  {:<20} {}",
                time(e.ns),
                pct(e.ns, slowest.wall_ns()),
                e.class.label(),
                cut(&name, WIDTH - 44)
            );
        }
    }
    out
}

/// A column header for a class.
fn short(c: BoundBy) -> &'static str {
    match c {
        BoundBy::CpuOp => "CPU op",
        BoundBy::CpuOverhead => "Python",
        BoundBy::DataLoading => "data",
        BoundBy::LaunchDelay => "launch",
        BoundBy::GpuCompute => "GPU",
        BoundBy::GpuCommunication => "comm",
        BoundBy::MemcpyMemset => "memcpy",
        BoundBy::KernelGap => "k2k gap",
        BoundBy::SyncWait => "sync",
    }
}

/// `what_if{}`: the edits and each step's time before and after.
pub fn what_if_json(trace: &Trace, edits: &[Edit], before: &[StepPath], after: &[StepPath]) -> Value {
    let steps: Vec<Value> = before
        .iter()
        .zip(after)
        .map(|(b, a)| {
            json!({
                "step": b.step,
                "name": step_label(trace, before, b),
                "before_us": us(b.wall_ns()),
                "after_us": us(a.wall_ns()),
                "saved_us": us(b.wall_ns() - a.wall_ns()),
                "bound_by_before": b.bound_by().as_str(),
                "bound_by_after": a.bound_by().as_str(),
                "shares_after_us": shares_json(a),
            })
        })
        .collect();
    json!({ "edits": edits.iter().map(|e| e.text.as_str()).collect::<Vec<_>>(), "steps": steps })
}

/// The what-if's new step times, and which path became critical where the bound changed.
pub fn what_if_text(trace: &Trace, edits: &[Edit], before: &[StepPath], after: &[StepPath]) -> String {
    let names: Vec<&str> = edits.iter().map(|e| e.text.as_str()).collect();
    let mut out = format!("\n{}\n", title_line(&format!("What if {}", names.join(", ")), WIDTH));
    let _ = writeln!(out, "{:<22} {:>12} {:>12} {:>12}  Bound by after", "Step", "Before", "After", "Saved");
    let (mut total_before, mut total_after) = (0, 0);
    for (b, a) in before.iter().zip(after) {
        total_before += b.wall_ns();
        total_after += a.wall_ns();
        let bound = if a.bound_by() == b.bound_by() {
            a.bound_by().label().to_owned()
        } else {
            format!("{} (was {}: another path became critical)", a.bound_by().label(), b.bound_by().label())
        };
        let _ = writeln!(
            out,
            "{:<22} {:>12} {:>12} {:>11.1}%  {}",
            cut(&step_label(trace, before, b), 22),
            time(b.wall_ns()),
            time(a.wall_ns()),
            pct(b.wall_ns() - a.wall_ns(), b.wall_ns()),
            bound
        );
    }
    if before.len() > 1 {
        let n = before.len() as i64;
        let _ = writeln!(
            out,
            "{:<22} {:>12} {:>12} {:>11.1}%",
            "mean",
            time(total_before / n),
            time(total_after / n),
            pct(total_before - total_after, total_before)
        );
    }
    out
}
