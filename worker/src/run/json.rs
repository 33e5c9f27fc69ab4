//! JSON outputs of a run: one object with stable keys ([`run_json`]) and NDJSON rows
//! ([`ndjson`]: one per diagnostic, one per rank x step and one per collective instance x
//! rank), both documented key by key in docs/runs.md. Times are µs (f64); NDJSON collective
//! times are µs from the run's first arrival on the chosen time axis.

use crate::analysis::critical_path::BoundBy;
use super::summary::RankPath;
use super::finding::RunFinding;
use super::{rank_at, RunAnalysis};
use crate::analysis::ops::us;
use serde_json::{json, Value};

fn names(v: &[(String, i64)]) -> Value {
    Value::Array(
        v.iter()
            .map(|(n, d)| json!({"name": n, "extra_us": us(*d)}))
            .collect(),
    )
}

/// Findings as `[{rule, title, why, evidence: [{rank, step, collective}]}]`.
pub fn findings_json(findings: &[RunFinding]) -> Value {
    Value::Array(
        findings
            .iter()
            .map(|f| {
                json!({
                    "rule": f.rule,
                    "title": f.title,
                    "why": f.why,
                    "evidence": f.evidence.iter().map(|e| json!({"rank": e.rank, "step": e.step, "collective": e.collective})).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// `shares_pct{CLASS}`: each class's time as a % of `wall_ns` (0 without time).
fn shares_pct(shares: &crate::analysis::critical_path::Shares, wall_ns: i64) -> serde_json::Map<String, Value> {
    let pct = |ns: i64| if wall_ns > 0 { 100.0 * ns as f64 / wall_ns as f64 } else { 0.0 };
    BoundBy::ALL.iter().map(|c| (c.as_str().to_owned(), json!(pct(shares[c.index()])))).collect()
}

/// A rank's critical-path summary: bound-by, shares and the names holding the paths.
fn rank_path_json(p: &RankPath) -> Value {
    json!({
        "bound_by": p.bound_by().map(BoundBy::as_str),
        "wall_us": us(p.wall_ns),
        "shares_pct": shares_pct(&p.shares, p.wall_ns),
        "top": p.on_path.iter().take(5).map(|(n, ns)| json!({"name": n, "on_path_us": us(*ns)})).collect::<Vec<_>>(),
    })
}

/// A rank's paths joined at collectives: bound-by and shares with its waits taken over by the
/// last arrivers' paths, and whose.
fn joined_json(run: &RunAnalysis, r: &super::summary::RankSummary, j: &super::joined::JoinedPath) -> Value {
    json!({
        "bound_by": j.bound_by().map(BoundBy::as_str),
        "shares_pct": shares_pct(&j.shares, r.critical.wall_ns),
        "waited_us": us(j.waited_ns),
        "waited_on": j.waited_on.iter().map(|&(q, ns)| json!({"rank": rank_at(&run.ranks, q), "us": us(ns)})).collect::<Vec<_>>(),
    })
}

/// The kernels and ops a straggler's "why" names that its own critical paths run through,
/// with their time there: the delay is on what bounds its steps only if they appear.
fn on_path(rank: &super::summary::RankSummary, s: &super::straggler::Straggler) -> Vec<Value> {
    s.kernels
        .iter()
        .chain(&s.ops)
        .filter_map(|(name, _)| rank.critical.on_path.iter().find(|(n, _)| n == name))
        .map(|(n, ns)| json!({"name": n, "on_path_us": us(*ns)}))
        .collect()
}

/// A straggler's delay at the collective it delayed most, with its sentence.
fn delay_json(run: &RunAnalysis, d: &super::delay::Delay) -> Value {
    json!({
        "text": d.sentence(),
        "collective": d.instance,
        "key": run.matching.instances.get(d.instance).map(|i| i.key.as_str()),
        "step": d.step,
        "start_offset_us": d.start_offset_ns.map(us),
        "late_us": us(d.late_ns),
        "cause": d.cause.as_ref().map(|(c, ns)| json!({"kind": c.kind(), "label": c.label(), "excess_us": us(*ns)})),
    })
}

/// The run as one JSON object (keys in docs/runs.md).
pub fn run_json(run: &RunAnalysis) -> Value {
    let ranks: Vec<Value> = run
        .ranks
        .iter()
        .enumerate()
        .map(|(p, r)| {
            let t = &r.temporal;
            json!({
                "rank": r.identity.rank,
                "file": r.file,
                "steps": r.steps.len(),
                "step_mean_us": r.step_mean_ns.map(|v| v / 1000.0),
                "step_p95_us": r.step_p95_ns.map(|v| v / 1000.0),
                "breakdown_us": {
                    "kernel_time": us(t.kernel_time_ns),
                    "compute": us(t.compute_ns),
                    "comm_non_overlapped": us(t.comm_non_overlapped_ns),
                    "comm_overlapped": us(t.comm_overlapped_ns),
                    "memory": us(t.memory_ns),
                    "idle": us(t.idle_ns),
                },
                "overlap_pct": t.overlap_pct,
                "gpu_device": r.gpu.map(|g| g.device),
                "gpu_utilization_pct": r.gpu.map(|g| g.utilization * 100.0),
                "peak_memory_bytes": r.peak_memory_bytes,
                "collectives": r.collectives.len(),
                "critical_path": rank_path_json(&r.critical),
                "joined_path": run.joined.get(p).map(|j| joined_json(run, r, j)),
            })
        })
        .collect();
    let steps: Vec<Value> = run
        .steps
        .iter()
        .map(|c| json!({"rank": rank_at(&run.ranks, c.member), "step": c.step, "dur_us": us(c.dur_ns), "outlier": c.outlier, "wait_us": us(c.wait_ns)}))
        .collect();
    let per_rank: Vec<Value> = (0..run.ranks.len())
        .map(|p| {
            let (mut matched, mut last, mut wait) = (0, 0, 0);
            for t in &run.times {
                if let Some(a) = t.arrivals.iter().find(|a| a.member == p) {
                    matched += 1;
                    wait += a.wait_ns;
                    last += usize::from(t.last == p);
                }
            }
            json!({
                "rank": rank_at(&run.ranks, p),
                "collectives": run.ranks.get(p).map_or(0, |r| r.collectives.len()),
                "matched": matched,
                "last_arrivals": last,
                "wait_us": us(wait),
            })
        })
        .collect();
    let stragglers: Vec<Value> = run
        .stragglers
        .iter()
        .map(|s| {
            json!({
                "rank": rank_at(&run.ranks, s.member),
                "last_arrivals": s.last_arrivals,
                "caused_wait_us": us(s.caused_wait_ns),
                "waited_us": us(s.waited_ns),
                "delayed_count": s.delayed_count,
                "delayed": s.delayed.iter().map(|d| json!({
                    "collective": d.instance,
                    "key": run.matching.instances.get(d.instance).map(|i| i.key.as_str()),
                    "step": d.step,
                    "index_in_step": d.index_in_step,
                    "caused_wait_us": us(d.caused_wait_ns),
                    "spread_us": us(d.spread_ns),
                })).collect::<Vec<_>>(),
                "why": {"delay": s.delay.as_ref().map(|d| delay_json(run, d)), "late_start_us": us(s.late_start_ns), "kernels": names(&s.kernels), "ops": names(&s.ops)},
                "why_on_path": run.ranks.get(s.member).map(|r| on_path(r, s)).unwrap_or_default(),
            })
        })
        .collect();
    let offsets: Vec<Value> = run
        .clock
        .estimated_ns
        .iter()
        .enumerate()
        .map(|(p, o)| json!({"rank": rank_at(&run.ranks, p), "offset_us": o.map(us)}))
        .collect();
    json!({
        "world_size": run.world_size,
        "backend": run.backend,
        "straggler": super::finding::straggler(&run.findings),
        "clock": run.clock.label(),
        "ranks": ranks,
        "steps": steps,
        "collectives": {
            "mode": run.matching.mode.key(),
            "matched": run.matching.instances.len(),
            "unmatched": run.matching.unmatched,
            "per_rank": per_rank,
        },
        "stragglers": stragglers,
        "offsets_us": offsets,
        "findings": findings_json(&run.findings),
        "diagnostics": run.diagnostics.iter().map(|d| json!({"kind": d.kind, "message": d.message})).collect::<Vec<_>>(),
    })
}

/// NDJSON rows of run number `index`: `kind: "diagnostic"` per diagnostic, `kind: "step"` per
/// rank x step, `kind: "collective"` per instance x rank (keys in docs/runs.md). Each line ends
/// in `\n`.
pub fn ndjson(index: usize, run: &RunAnalysis) -> String {
    let mut out = String::new();
    let mut line = |v: Value| {
        out.push_str(&v.to_string());
        out.push('\n');
    };
    // Diagnostics first: a reader that stops early (`head`) still learns what the inputs lacked.
    // `kind` is the row kind, so the diagnostic's own kind goes under `diagnostic`.
    for d in &run.diagnostics {
        line(
            json!({"kind": "diagnostic", "run": index, "diagnostic": d.kind, "message": d.message}),
        );
    }
    for c in &run.steps {
        line(json!({
            "kind": "step", "run": index, "rank": rank_at(&run.ranks, c.member), "step": c.step,
            "dur_us": us(c.dur_ns), "outlier": c.outlier,
        }));
    }
    let t0 = run
        .times
        .iter()
        .flat_map(|t| t.arrivals.iter().map(|a| a.start_ns))
        .min()
        .unwrap_or(0);
    for (i, (inst, t)) in run.matching.instances.iter().zip(&run.times).enumerate() {
        for a in &t.arrivals {
            line(json!({
                "kind": "collective", "run": index, "collective": i, "key": inst.key, "name": inst.name,
                "step": inst.step, "index_in_step": inst.index_in_step, "rank": rank_at(&run.ranks, a.member),
                "start_us": us(a.start_ns - t0), "end_us": us(a.end_ns - t0), "arrival_order": a.order,
                "last": t.last == a.member, "wait_us": us(a.wait_ns), "clock": run.clock.label(),
            }));
        }
    }
    out
}
