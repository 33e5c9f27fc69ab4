//! The human report of a run: ranks table, what bounds each rank (its own critical paths and
//! joined at collectives), step heatmap (outliers marked `*`), collectives, stragglers with
//! their "why", clock offsets, findings, diagnostics. Same numbers as
//! [`super::json`]; times printed by `crate::text::pytorch_time`.

use super::RunAnalysis;
use crate::text::{cut, printable, pytorch_time as time};
use std::fmt::Write as _;

/// Steps shown in the heatmap (the first ones; the JSON has them all).
const HEATMAP_STEPS: usize = 12;
/// Straggler rows shown.
const STRAGGLER_ROWS: usize = 5;

fn rank_label(run: &RunAnalysis, p: usize) -> String {
    super::rank_at(&run.ranks, p).map_or_else(|| "?".to_owned(), |r| r.to_string())
}

fn opt_time(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| time(v.round() as i64))
}

/// The report of one run.
pub fn report(run: &RunAnalysis) -> String {
    let mut out = String::new();
    let ws = run
        .world_size
        .map_or_else(|| "?".to_owned(), |w| w.to_string());
    let backend = run.backend.as_deref().unwrap_or("?");
    let _ = writeln!(
        out,
        "RUN  world size {ws}, backend {backend}, {} ranks loaded, clock {}",
        run.ranks.len(),
        run.clock.label()
    );
    ranks_table(run, &mut out);
    bound_by(run, &mut out);
    heatmap(run, &mut out);
    collectives(run, &mut out);
    stragglers(run, &mut out);
    if !run.findings.is_empty() {
        let _ = writeln!(out, "\nFINDINGS");
        for f in &run.findings {
            let _ = writeln!(
                out,
                "  [{}] {}\n      why: {}",
                f.rule,
                printable(&f.title),
                printable(&f.why)
            );
        }
    }
    if !run.diagnostics.is_empty() {
        let _ = writeln!(out, "\nDIAGNOSTICS");
        for d in &run.diagnostics {
            let _ = writeln!(out, "  {}: {}", d.kind, printable(&d.message));
        }
    }
    out
}

fn ranks_table(run: &RunAnalysis, out: &mut String) {
    let _ = writeln!(
        out,
        "\n{:>5} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9} {:>8} {:>10}  file",
        "rank",
        "steps",
        "step mean",
        "step p95",
        "compute",
        "comm excl",
        "idle",
        "overlap",
        "GPU util",
        "peak mem"
    );
    for (p, r) in run.ranks.iter().enumerate() {
        let t = &r.temporal;
        let _ = writeln!(
            out,
            "{:>5} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9} {:>8} {:>10}  {}",
            rank_label(run, p),
            r.steps.len(),
            opt_time(r.step_mean_ns),
            opt_time(r.step_p95_ns),
            time(t.compute_ns),
            time(t.comm_non_overlapped_ns),
            time(t.idle_ns),
            t.overlap_pct
                .map_or_else(|| "-".to_owned(), |v| format!("{v:.1}%")),
            r.gpu.map_or_else(
                || "-".to_owned(),
                |g| format!("{:.1}%", g.utilization * 100.0)
            ),
            r.peak_memory_bytes
                .map_or_else(|| "-".to_owned(), |b| format!("{:.1}MB", b as f64 / 1e6)),
            printable(&r.file)
        );
    }
}

/// Per rank: what bounds its own paths, and its paths joined at collectives (its waits taken
/// over by the last arrivers' paths).
fn bound_by(run: &RunAnalysis, out: &mut String) {
    use crate::analysis::critical_path::BoundBy;
    let _ = writeln!(out, "\nBOUND BY (critical paths of complete steps; joined: waits in collectives on the last arriver's path)");
    let name = |b: Option<BoundBy>| b.map_or("-", BoundBy::as_str);
    for (p, r) in run.ranks.iter().enumerate() {
        let Some(j) = run.joined.get(p) else {
            continue;
        };
        let on: Vec<String> = j.waited_on.iter().map(|&(q, ns)| format!("rank {}: {}", rank_label(run, q), time(ns))).collect();
        let _ = writeln!(
            out,
            "{:>5}  own {:<18} joined {:<18} waited {}{}",
            rank_label(run, p),
            name(r.critical.bound_by()),
            name(j.bound_by()),
            time(j.waited_ns),
            if on.is_empty() { String::new() } else { format!(" ({})", on.join(", ")) }
        );
    }
}

fn heatmap(run: &RunAnalysis, out: &mut String) {
    let mut numbers: Vec<u64> = run.steps.iter().map(|c| c.step).collect();
    numbers.dedup();
    if numbers.is_empty() {
        return;
    }
    numbers.truncate(HEATMAP_STEPS);
    let _ = write!(
        out,
        "\nSTEP TIMES (rank x step, * = >= 1.2x the step's median)\n{:>5}",
        "rank"
    );
    for n in &numbers {
        let _ = write!(out, " {:>12}", format!("#{n}"));
    }
    out.push('\n');
    for p in 0..run.ranks.len() {
        let _ = write!(out, "{:>5}", rank_label(run, p));
        for n in &numbers {
            let cell = run.steps.iter().find(|c| c.member == p && c.step == *n);
            let text = cell.map_or_else(
                || "-".to_owned(),
                |c| format!("{}{}", time(c.dur_ns), if c.outlier { "*" } else { "" }),
            );
            let _ = write!(out, " {text:>12}");
        }
        out.push('\n');
    }
}

fn collectives(run: &RunAnalysis, out: &mut String) {
    let m = &run.matching;
    let _ = writeln!(
        out,
        "\nCOLLECTIVES  {} matched ({}), {} collective kernels unmatched",
        m.instances.len(),
        m.mode.key(),
        m.unmatched
    );
    if run.clock.estimated_ns.len() > 1 {
        let offsets: Vec<String> = run
            .clock
            .estimated_ns
            .iter()
            .enumerate()
            .map(|(p, o)| {
                format!(
                    "{}: {}",
                    rank_label(run, p),
                    o.map_or_else(|| "?".to_owned(), time)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "  clock offsets vs rank {}: {}",
            rank_label(run, 0),
            offsets.join(", ")
        );
    }
}

fn stragglers(run: &RunAnalysis, out: &mut String) {
    if run.times.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nSTRAGGLERS (who arrived last, and the waiting it caused)"
    );
    let _ = writeln!(
        out,
        "{:>5} {:>6} {:>12} {:>12} {:>8}  why (extra time before the collectives it delayed)",
        "rank", "last", "caused wait", "waited", "delayed"
    );
    for s in run.stragglers.iter().take(STRAGGLER_ROWS) {
        let why: Vec<String> = s.lead()
            .into_iter()
            .chain(s.kernels.iter().take(2).map(|(n, d)| {
                format!(
                    "kernel {} +{}",
                    printable(&cut(n, 40)),
                    time(*d)
                )
            }))
            .chain(s.ops.iter().take(1).map(|(n, d)| {
                format!("op {} +{}", printable(&cut(n, 30)), time(*d))
            }))
            .collect();
        let _ = writeln!(
            out,
            "{:>5} {:>6} {:>12} {:>12} {:>8}  {}",
            rank_label(run, s.member),
            s.last_arrivals,
            time(s.caused_wait_ns),
            time(s.waited_ns),
            s.delayed_count,
            why.join("; ")
        );
        for d in s.delayed.iter().take(3) {
            let key = run
                .matching
                .instances
                .get(d.instance)
                .map_or("", |i| i.key.as_str());
            let step = d.step.map_or_else(|| "-".to_owned(), |n| n.to_string());
            let _ = writeln!(
                out,
                "        delayed {key} (step {step}, collective {} of the step): others waited {}",
                d.index_in_step,
                time(d.caused_wait_ns)
            );
        }
    }
}
