//! Steps as text (one row per `ProfilerStep#N`: spans and tb_plugin's breakdown, then an
//! average row, then duration statistics) and as `steps[]` / `step_stats` JSON.

use crate::analysis::steps::step_name;
use crate::model::Trace;
use super::{time, WIDTH};
use crate::analysis::breakdown::{Breakdown, CATEGORIES};
use crate::analysis::ops::us;
use crate::analysis::steps::{StepSpan, Steps};
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

const NAME_W: usize = 8;
const COL_W: usize = 9;
const HEADERS: [&str; 11] = [
    "CPU dur", "GPU dur", "Step dur", "Kernel", "Memcpy", "Memset", "Comm", "Runtime", "DataLoad",
    "CPU Exec", "Other",
];

/// The repeating annotations that could mark steps (`--step-marker`), one line each, then a
/// blank line; nothing without candidates.
pub fn candidates_text(candidates: &[(String, u64)]) -> String {
    if candidates.is_empty() {
        return String::new();
    }
    let mut out = "Repeating annotations (--step-marker candidates):\n".to_owned();
    for (name, count) in candidates {
        let _ = writeln!(out, "  {count:>7}x  {}", super::cut(&super::printable(name), WIDTH - 12));
    }
    out.push('\n');
    out
}

/// The steps table as text (fits [`WIDTH`] columns); without steps, `why` they are missing
/// (`analysis::unavailable::steps`).
pub fn steps_text(steps: &Steps, why: Option<&str>) -> String {
    let mut out = String::new();
    let title = "Steps (ProfilerStep#N; breakdown in tb_plugin's priority order)";
    let _ = writeln!(
        out,
        "==== {title} {}",
        "=".repeat(WIDTH.saturating_sub(title.len() + 6))
    );
    if steps.steps.is_empty() {
        // Say what is missing and how to get it: step tables, charts and rules all need steps.
        let why = why.unwrap_or("no steps");
        let mut first = why.chars();
        let why: String = first.next().map(|c| c.to_ascii_uppercase()).into_iter().chain(first).collect();
        super::findings::wrap(&mut out, "", "", &format!("{why}."));
        out.push('\n');
        return out;
    }
    let rule = "-".repeat(WIDTH);
    let mut header = format!("{:<NAME_W$}", "Step");
    for h in HEADERS {
        let _ = write!(header, " {h:>COL_W$}");
    }
    let _ = writeln!(out, "{rule}\n{header}\n{rule}");
    for s in &steps.steps {
        let mark = if s.incomplete { "*" } else { "" };
        let name = format!("#{}{mark}", s.number);
        row(
            &mut out,
            &name,
            [s.cpu_dur_ns(), s.gpu_dur_ns(), s.dur_ns()],
            &s.breakdown,
        );
    }
    let complete: Vec<&StepSpan> = steps.steps.iter().filter(|s| !s.incomplete).collect();
    if complete.len() > 1 {
        let n = complete.len() as i64;
        let avg = |f: fn(&StepSpan) -> i64| complete.iter().map(|s| f(s)).sum::<i64>() / n;
        let mut b = Breakdown::default();
        for (k, v) in b.ns.iter_mut().enumerate() {
            *v = complete.iter().map(|s| s.breakdown.ns[k]).sum::<i64>() / n;
        }
        let _ = writeln!(out, "{rule}");
        row(
            &mut out,
            "avg",
            [
                avg(StepSpan::cpu_dur_ns),
                avg(StepSpan::gpu_dur_ns),
                avg(StepSpan::dur_ns),
            ],
            &b,
        );
        let total: i64 = b.total().max(1);
        let mut line = format!("{:<w$}", "share", w = NAME_W + 3 * (COL_W + 1));
        for v in b.ns {
            let _ = write!(
                line,
                " {:>COL_W$}",
                format!("{:.1}%", v as f64 * 100.0 / total as f64)
            );
        }
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "{rule}");
    if steps.steps.iter().any(|s| s.incomplete) {
        let _ = writeln!(out, "* incomplete: launched too little device work (profiler stopped early?); not in the statistics");
    }
    if let Some(st) = &steps.stats {
        let d = &st.duration;
        let _ = writeln!(
            out,
            "Step time over {} steps: mean {}  std {}  min {}  max {}\n  median {}  p95 {}  p99 {}",
            d.count,
            time(d.mean.round() as i64),
            time(d.std.round() as i64),
            time(d.min),
            time(d.max),
            time(d.median.round() as i64),
            time(d.p95.round() as i64),
            time(d.p99.round() as i64),
        );
        if let Some(r) = st.cold_start_ratio {
            let _ = writeln!(
                out,
                "Cold start: the first step took {r:.2}x the median of the others"
            );
        }
    }
    out.push('\n');
    out
}

fn row(out: &mut String, name: &str, spans: [i64; 3], b: &Breakdown) {
    let _ = write!(out, "{name:<NAME_W$}");
    for v in spans.into_iter().chain(b.ns) {
        let _ = write!(out, " {:>COL_W$}", time(v));
    }
    out.push('\n');
}

/// The `steps[]` array of `report --json`: `name`, `cpu_start_us`, `cpu_dur_us`,
/// `gpu_dur_us`, `breakdown{kernel, memcpy, memset, communication, runtime, dataloader,
/// cpu_exec, other}` (stable), plus `gpu_start_us` (null without device work), `start_us` /
/// `dur_us` (the step span the breakdown divides) and `incomplete`. Times in µs from the
/// trace start.
pub fn steps_json(trace: &Trace, steps: &Steps, mfu: &[Option<f64>]) -> Value {
    Value::Array(
        steps
            .steps
            .iter()
            .zip(mfu.iter().copied().chain(std::iter::repeat(None)))
            .map(|(s, mfu)| {
                let mut b = Map::new();
                for c in CATEGORIES {
                    b.insert(c.key().to_owned(), json!(us(s.breakdown.get(c))));
                }
                json!({
                    "name": step_name(trace, s.number),
                    "cpu_start_us": us(s.cpu_start_ns),
                    "cpu_dur_us": us(s.cpu_dur_ns()),
                    "gpu_start_us": s.gpu.map(|g| us(g.0)),
                    "gpu_dur_us": us(s.gpu_dur_ns()),
                    "start_us": us(s.start_ns),
                    "dur_us": us(s.dur_ns()),
                    "incomplete": s.incomplete,
                    "breakdown": b,
                    "mfu_pct": mfu,
                })
            })
            .collect(),
    )
}

/// The `step_stats` object of `report --json`: statistics of the complete steps' durations
/// (`count`, `mean_us`, `std_us`, `median_us`, `p95_us`, `p99_us`, `min_us`, `max_us`) and
/// `cold_start_ratio`; `null` without steps.
pub fn step_stats_json(steps: &Steps) -> Value {
    let Some(st) = &steps.stats else {
        return Value::Null;
    };
    let d = &st.duration;
    json!({
        "count": d.count,
        "mean_us": d.mean / 1000.0,
        "std_us": d.std / 1000.0,
        "median_us": d.median / 1000.0,
        "p95_us": d.p95 / 1000.0,
        "p99_us": d.p99 / 1000.0,
        "min_us": us(d.min),
        "max_us": us(d.max),
        "cold_start_ratio": st.cold_start_ratio,
    })
}
