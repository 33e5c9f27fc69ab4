//! Run findings: rules over the whole run, each with a title, a one-line "why" (the numbers
//! compared) and evidence (rank, step, collective instance). Also the step heatmap's outliers.
//!
//! Rules and thresholds (named constants below, each with its source):
//! - `straggler-rank`: one rank caused >= [`STRAGGLER_MIN_SHARE`] of all collective waiting and
//!   at least [`STRAGGLER_MIN_WAIT_NS`].
//! - `rank-imbalance`: max / median of the ranks' mean step time >= [`IMBALANCE_RATIO`].
//! - `collective-wait`: a rank waited in collectives >= [`COLLECTIVE_WAIT_SHARE`] of its step time.
//! - `comm-not-overlapped`: on a rank, communication >= [`COMM_MIN_SHARE`] of its busy GPU time
//!   and >= [`COMM_EXPOSED_SHARE`] of it runs with no computation beside it.
//!
//! The per-rank rules (`collective-wait`, `comm-not-overlapped`) give one finding naming every
//! rank that matches (evidence: one entry per rank; numbers of the worst): on 256 ranks, 256
//! copies of one sentence would hide the other findings.
//!
//! A separate struct from `crate::finding::Finding`: run findings cite ranks and collective
//! instances, not slices of one trace.

use super::collective::{InstanceTimes, Matching};
use super::straggler::Straggler;
use super::summary::RankSummary;
use super::rank_at;
use crate::analysis::stats::median;
use crate::text::{cut, pytorch_time as time};

/// `straggler-rank`: share of all collective wait one rank must cause (it is responsible for
/// most of the waiting; our threshold).
pub const STRAGGLER_MIN_SHARE: f64 = 0.5;
/// `straggler-rank`: least caused wait, ns (100 µs: below that, launch jitter).
pub const STRAGGLER_MIN_WAIT_NS: i64 = 100_000;
/// `rank-imbalance` and step outliers: ratio to the median (issue "Runs and ranks": 1.2).
pub const IMBALANCE_RATIO: f64 = 1.2;
/// `collective-wait`: share of step time spent waiting in collectives (issue: 20%).
pub const COLLECTIVE_WAIT_SHARE: f64 = 0.20;
/// `comm-not-overlapped`: communication at least this share of busy GPU time (same as the
/// single-trace rule's `COMM_MIN_KERNEL_SHARE`).
pub const COMM_MIN_SHARE: f64 = 0.05;
/// `comm-not-overlapped`: non-overlapped share of communication (same as the single-trace
/// rule's `COMM_EXPOSED_SHARE`, HTA's overlap inverted).
pub const COMM_EXPOSED_SHARE: f64 = 0.50;

/// What a finding points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// Global rank.
    pub rank: Option<u32>,
    /// Step number.
    pub step: Option<u64>,
    /// Index of the collective instance in the matching.
    pub collective: Option<usize>,
}

/// One run finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFinding {
    /// Rule id (`straggler-rank`, ...).
    pub rule: &'static str,
    /// One line for a human.
    pub title: String,
    /// The numbers compared.
    pub why: String,
    /// Where to look.
    pub evidence: Vec<Evidence>,
}

/// One cell of the rank x step heatmap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepCell {
    /// Run rank position.
    pub member: usize,
    /// Step number.
    pub step: u64,
    /// Step duration, ns.
    pub dur_ns: i64,
    /// Duration >= [`IMBALANCE_RATIO`] x the median of this step across ranks.
    pub outlier: bool,
    /// Time it waited in matched collectives whose kernel starts in this step, ns: step time
    /// minus this is the time not spent waiting for another rank.
    pub wait_ns: i64,
}

/// The heatmap cells, by step then rank position.
pub fn step_cells(ranks: &[RankSummary], m: &Matching, times: &[InstanceTimes]) -> Vec<StepCell> {
    let mut cells: Vec<StepCell> = ranks
        .iter()
        .enumerate()
        .flat_map(|(member, r)| {
            r.steps.iter().map(move |s| StepCell {
                member,
                step: s.number,
                dur_ns: s.dur_ns,
                outlier: false,
                wait_ns: 0,
            })
        })
        .collect();
    cells.sort_by_key(|c| (c.step, c.member));
    for (inst, t) in m.instances.iter().zip(times) {
        for a in &t.arrivals {
            let step = inst
                .members
                .get(a.member)
                .copied()
                .flatten()
                .and_then(|i| ranks.get(a.member)?.collectives.get(i as usize)?.step);
            let Some(step) = step else { continue };
            let at = cells.binary_search_by_key(&(step, a.member), |c| (c.step, c.member));
            if let Some(c) = at.ok().and_then(|k| cells.get_mut(k)) {
                c.wait_ns += a.wait_ns;
            }
        }
    }
    for group in cells.chunk_by_mut(|a, b| a.step == b.step) {
        let durs: Vec<i64> = group.iter().map(|c| c.dur_ns).collect();
        let Some(med) = median(&durs) else { continue };
        for c in group.iter_mut() {
            c.outlier = durs.len() > 1 && med > 0.0 && c.dur_ns as f64 >= IMBALANCE_RATIO * med;
        }
    }
    cells
}

fn label(rank: Option<u32>) -> String {
    rank.map_or_else(|| "?".to_owned(), |r| r.to_string())
}

/// The rank the `straggler-rank` finding names, if any.
pub fn straggler(findings: &[RunFinding]) -> Option<u32> {
    findings
        .iter()
        .find(|f| f.rule == "straggler-rank")
        .and_then(|f| f.evidence.first()?.rank)
}

/// Every rule over one run.
pub fn detect(
    ranks: &[RankSummary],
    m: &Matching,
    times: &[InstanceTimes],
    stragglers: &[Straggler],
) -> Vec<RunFinding> {
    let mut out = Vec::new();
    straggler_rank(ranks, stragglers, &mut out);
    rank_imbalance(ranks, &mut out);
    collective_wait(ranks, m, times, &mut out);
    comm_not_overlapped(ranks, &mut out);
    out
}

fn straggler_rank(ranks: &[RankSummary], stragglers: &[Straggler], out: &mut Vec<RunFinding>) {
    let total: i64 = stragglers.iter().map(|s| s.caused_wait_ns).sum();
    for s in stragglers {
        if total <= 0
            || s.caused_wait_ns < STRAGGLER_MIN_WAIT_NS
            || (s.caused_wait_ns as f64) < STRAGGLER_MIN_SHARE * total as f64
        {
            continue;
        }
        let rank = rank_at(ranks, s.member);
        // The delay first: a late step start is what made the others wait; per-name
        // differences of a few µs come after it.
        let because = s
            .delay
            .as_ref()
            .map(super::delay::Delay::sentence)
            .or_else(|| reason(s))
            .map(|r| format!("; {r}"))
            .unwrap_or_default();
        out.push(RunFinding {
            rule: "straggler-rank",
            title: format!(
                "Rank {} is the straggler: it delayed {} collectives, making the others wait {}{because}",
                label(rank),
                s.delayed_count,
                time(s.caused_wait_ns)
            ),
            why: format!(
                "rank {} caused {} of {} collective wait ({:.0}% >= {:.0}%)",
                label(rank),
                time(s.caused_wait_ns),
                time(total),
                100.0 * s.caused_wait_ns as f64 / total as f64,
                100.0 * STRAGGLER_MIN_SHARE
            ),
            evidence: s.delayed.iter().map(|d| Evidence { rank, step: d.step, collective: Some(d.instance) }).collect(),
        });
    }
}

/// The largest of the straggler's explanations: late window start, a kernel, a host op.
fn reason(s: &Straggler) -> Option<String> {
    let kernel = s.kernels.first().map(|(n, d)| {
        (
            *d,
            format!(
                "before them its kernel {:?} ran {} longer than on the median rank",
                cut(n, 60),
                time(*d)
            ),
        )
    });
    let op = s.ops.first().map(|(n, d)| {
        (
            *d,
            format!(
                "before them its op {:?} ran {} longer than on the median rank",
                cut(n, 60),
                time(*d)
            ),
        )
    });
    let late = (s.late_start_ns > 0).then(|| {
        (
            s.late_start_ns,
            format!(
                "it started the work before them {} later than the median rank",
                time(s.late_start_ns)
            ),
        )
    });
    [late, kernel, op]
        .into_iter()
        .flatten()
        .max_by_key(|r| r.0)
        .map(|r| r.1)
}

fn rank_imbalance(ranks: &[RankSummary], out: &mut Vec<RunFinding>) {
    let means: Vec<(usize, f64)> = ranks
        .iter()
        .enumerate()
        .filter_map(|(p, r)| Some((p, r.step_mean_ns?)))
        .collect();
    let as_int: Vec<i64> = means.iter().map(|m| m.1.round() as i64).collect();
    let (Some(med), Some(&(p, max))) = (
        median(&as_int),
        means.iter().max_by(|a, b| a.1.total_cmp(&b.1)),
    ) else {
        return;
    };
    if means.len() < 2 || med <= 0.0 || max / med < IMBALANCE_RATIO {
        return;
    }
    let rank = rank_at(ranks, p);
    let slowest = ranks
        .get(p)
        .and_then(|r| {
            r.steps
                .iter()
                .filter(|s| !s.incomplete)
                .max_by_key(|s| s.dur_ns)
        })
        .map(|s| s.number);
    out.push(RunFinding {
        rule: "rank-imbalance",
        title: format!("Rank {} steps take {:.2}x the median rank's", label(rank), max / med),
        why: format!(
            "mean step time: rank {} {} vs median over {} ranks {} (ratio {:.2} >= {IMBALANCE_RATIO})",
            label(rank),
            time(max.round() as i64),
            means.len(),
            time(med.round() as i64),
            max / med
        ),
        evidence: vec![Evidence { rank, step: slowest, collective: None }],
    });
}

/// A rank over a per-rank rule's threshold: `part_ns` of `total_ns` (share), the evidence.
struct Hit {
    share: f64,
    part_ns: i64,
    total_ns: i64,
    /// Busy GPU time (`comm-not-overlapped` only), ns.
    busy_ns: i64,
    rank: Option<u32>,
    /// The instance with the rank's largest wait (`collective-wait` only).
    instance: Option<usize>,
}

fn collective_wait(
    ranks: &[RankSummary],
    m: &Matching,
    times: &[InstanceTimes],
    out: &mut Vec<RunFinding>,
) {
    let mut hits: Vec<Hit> = Vec::new();
    for (p, r) in ranks.iter().enumerate() {
        let step_ns: i64 = r
            .steps
            .iter()
            .filter(|s| !s.incomplete)
            .map(|s| s.dur_ns)
            .sum();
        let mut waited = 0;
        let mut worst: Option<(i64, usize)> = None;
        for (i, t) in times.iter().enumerate() {
            if let Some(a) = t.arrivals.iter().find(|a| a.member == p) {
                waited += a.wait_ns;
                if worst.is_none_or(|w| a.wait_ns > w.0) {
                    worst = Some((a.wait_ns, i));
                }
            }
        }
        if step_ns > 0 && waited as f64 >= COLLECTIVE_WAIT_SHARE * step_ns as f64 {
            hits.push(Hit {
                share: waited as f64 / step_ns as f64,
                part_ns: waited,
                total_ns: step_ns,
                busy_ns: 0,
                rank: r.identity.rank,
                instance: worst.map(|w| w.1),
            });
        }
    }
    let Some(worst) = hits.iter().max_by(|a, b| a.share.total_cmp(&b.share)) else {
        return;
    };
    let (share, waited, step_ns, rank) = (worst.share, worst.part_ns, worst.total_ns, worst.rank);
    out.push(RunFinding {
        rule: "collective-wait",
        title: format!(
            "{} of {} ranks spend >= {:.0}% of their step time waiting in collectives (most: rank {}, {:.0}%)",
            hits.len(),
            ranks.len(),
            100.0 * COLLECTIVE_WAIT_SHARE,
            label(rank),
            100.0 * share
        ),
        why: format!(
            "rank {} waited {} of {} step time ({:.0}% >= {:.0}%)",
            label(rank),
            time(waited),
            time(step_ns),
            100.0 * share,
            100.0 * COLLECTIVE_WAIT_SHARE
        ),
        evidence: hits
            .iter()
            .map(|h| Evidence { rank: h.rank, step: h.instance.and_then(|i| m.instances.get(i)).and_then(|i| i.step), collective: h.instance })
            .collect(),
    });
}

fn comm_not_overlapped(ranks: &[RankSummary], out: &mut Vec<RunFinding>) {
    let mut hits: Vec<Hit> = Vec::new();
    for r in ranks {
        let t = &r.temporal;
        let comm = t.comm_overlapped_ns + t.comm_non_overlapped_ns;
        let busy = t.kernel_time_ns - t.idle_ns;
        if comm > 0
            && comm as f64 >= COMM_MIN_SHARE * busy as f64
            && t.comm_non_overlapped_ns as f64 >= COMM_EXPOSED_SHARE * comm as f64
        {
            hits.push(Hit {
                share: t.comm_non_overlapped_ns as f64 / comm as f64,
                part_ns: t.comm_non_overlapped_ns,
                total_ns: comm,
                busy_ns: busy,
                rank: r.identity.rank,
                instance: None,
            });
        }
    }
    let Some(worst) = hits.iter().max_by(|a, b| a.share.total_cmp(&b.share)) else {
        return;
    };
    let (share, exposed, comm, busy, rank) = (
        worst.share,
        worst.part_ns,
        worst.total_ns,
        worst.busy_ns,
        worst.rank,
    );
    out.push(RunFinding {
        rule: "comm-not-overlapped",
        title: format!(
            "{} of {} ranks run most communication with no compute beside it (most: rank {}, {:.0}%)",
            hits.len(),
            ranks.len(),
            label(rank),
            100.0 * share
        ),
        why: format!(
            "rank {}: {} of {} communication not overlapped ({:.0}% >= {:.0}%; communication is {:.0}% of busy GPU time >= {:.0}%)",
            label(rank),
            time(exposed),
            time(comm),
            100.0 * share,
            100.0 * COMM_EXPOSED_SHARE,
            100.0 * comm as f64 / busy.max(1) as f64,
            100.0 * COMM_MIN_SHARE
        ),
        evidence: hits.iter().map(|h| Evidence { rank: h.rank, step: None, collective: None }).collect(),
    });
}
