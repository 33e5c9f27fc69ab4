//! A run as GitHub Markdown (`kinetoscope run --format md`, for a PR comment or a CI job
//! summary): the run line, ranks table, step heatmap (outliers in bold), stragglers with their
//! "why", findings and diagnostics. Same numbers and row limits as [`super::text`], in
//! [`crate::report::markdown`] tables (numbers right-aligned, names escaped).

use super::RunAnalysis;
use crate::report::markdown::{text as md, Align, Table, NAME_CHARS};
use crate::text::{cut, pytorch_time as time};
use std::fmt::Write as _;

/// Steps shown in the heatmap (the first ones; the JSON has them all), as in the text report.
const HEATMAP_STEPS: usize = 12;
/// Straggler rows shown, as in the text report.
const STRAGGLER_ROWS: usize = 5;

fn rank_label(run: &RunAnalysis, p: usize) -> String {
    super::rank_at(&run.ranks, p).map_or_else(|| "?".to_owned(), |r| r.to_string())
}

fn opt(v: Option<String>) -> String {
    v.unwrap_or_else(|| "-".to_owned())
}

/// The Markdown report of one run.
pub fn report(run: &RunAnalysis) -> String {
    let ws = run
        .world_size
        .map_or_else(|| "?".to_owned(), |w| w.to_string());
    let backend = md(run.backend.as_deref().unwrap_or("?"));
    let mut out = format!(
        "### kinetoscope run: world size {ws}, backend {backend}\n\n{} ranks loaded, clock {}, {} collectives matched ({}), {} collective kernels unmatched\n\n",
        run.ranks.len(),
        run.clock.label(),
        run.matching.instances.len(),
        run.matching.mode.key(),
        run.matching.unmatched
    );
    out.push_str(&ranks(run));
    out.push_str(&heatmap(run));
    out.push_str(&stragglers(run));
    out.push_str("#### Findings\n\n");
    if run.findings.is_empty() {
        out.push_str("No finding.\n");
    }
    for f in &run.findings {
        let _ = writeln!(
            out,
            "- **{}**: {} (why: {})",
            md(f.rule),
            md(&f.title),
            md(&f.why)
        );
    }
    if !run.diagnostics.is_empty() {
        out.push_str("\n#### Diagnostics\n\n");
        for d in &run.diagnostics {
            let _ = writeln!(out, "- {}: {}", md(d.kind), md(&d.message));
        }
    }
    out
}

fn ranks(run: &RunAnalysis) -> String {
    let mut table = Table::new(&[
        ("Rank", Align::Right),
        ("Steps", Align::Right),
        ("Step mean", Align::Right),
        ("Step p95", Align::Right),
        ("Compute", Align::Right),
        ("Comm excl", Align::Right),
        ("Idle", Align::Right),
        ("Overlap", Align::Right),
        ("GPU util", Align::Right),
        ("Peak mem", Align::Right),
        ("File", Align::Left),
    ]);
    for (p, r) in run.ranks.iter().enumerate() {
        let t = &r.temporal;
        let ns = |v: Option<f64>| opt(v.map(|v| time(v.round() as i64)));
        table.row(vec![
            rank_label(run, p),
            r.steps.len().to_string(),
            ns(r.step_mean_ns),
            ns(r.step_p95_ns),
            time(t.compute_ns),
            time(t.comm_non_overlapped_ns),
            time(t.idle_ns),
            opt(t.overlap_pct.map(|v| format!("{v:.1}%"))),
            opt(r.gpu.map(|g| format!("{:.1}%", g.utilization * 100.0))),
            opt(r
                .peak_memory_bytes
                .map(|b| format!("{:.1}MB", b as f64 / 1e6))),
            md(&cut(&r.file, NAME_CHARS)),
        ]);
    }
    format!("#### Ranks\n\n{}", table.render())
}

fn heatmap(run: &RunAnalysis) -> String {
    let mut numbers: Vec<u64> = run.steps.iter().map(|c| c.step).collect();
    numbers.dedup();
    if numbers.is_empty() {
        return String::new();
    }
    numbers.truncate(HEATMAP_STEPS);
    let heads: Vec<String> = numbers.iter().map(|n| format!("#{n}")).collect();
    let mut columns = vec![("Rank", Align::Right)];
    columns.extend(heads.iter().map(|h| (h.as_str(), Align::Right)));
    let mut table = Table::new(&columns);
    for p in 0..run.ranks.len() {
        let mut row = vec![rank_label(run, p)];
        row.extend(numbers.iter().map(|n| {
            run.steps
                .iter()
                .find(|c| c.member == p && c.step == *n)
                .map_or_else(
                    || "-".to_owned(),
                    |c| {
                        if c.outlier {
                            format!("**{}**", time(c.dur_ns))
                        } else {
                            time(c.dur_ns)
                        }
                    },
                )
        }));
        table.row(row);
    }
    format!(
        "#### Step times (rank x step; bold: >= 1.2x the step's median)\n\n{}",
        table.render()
    )
}

fn stragglers(run: &RunAnalysis) -> String {
    if run.times.is_empty() {
        return String::new();
    }
    let mut table = Table::new(&[
        ("Rank", Align::Right),
        ("Last", Align::Right),
        ("Caused wait", Align::Right),
        ("Waited", Align::Right),
        ("Delayed", Align::Right),
        (
            "Why (extra time before the collectives it delayed)",
            Align::Left,
        ),
    ]);
    for s in run.stragglers.iter().take(STRAGGLER_ROWS) {
        let why: Vec<String> = s.lead()
            .into_iter()
            .chain(
                s.kernels
                    .iter()
                    .take(2)
                    .map(|(n, d)| format!("kernel {} +{}", cut(n, 40), time(*d))),
            )
            .chain(
                s.ops
                    .iter()
                    .take(1)
                    .map(|(n, d)| format!("op {} +{}", cut(n, 30), time(*d))),
            )
            .collect();
        table.row(vec![
            rank_label(run, s.member),
            s.last_arrivals.to_string(),
            time(s.caused_wait_ns),
            time(s.waited_ns),
            s.delayed_count.to_string(),
            md(&why.join("; ")),
        ]);
    }
    format!(
        "#### Stragglers (who arrived last, and the waiting it caused)\n\n{}",
        table.render()
    )
}
