//! Clock alignment between ranks, from collectives that finish together.
//!
//! Ranks on one host share a clock; across hosts the clocks differ by an offset. A collective
//! completes on all its ranks at the same moment (within a few µs on one host; REFERENCE.md
//! "Multi-rank definitions"), so for each rank p the offset to the reference rank (the lowest
//! loaded rank) is the **median over matched instances of (end on p - end on the reference)**;
//! the median ignores the few instances whose ends are skewed by a late completion poll.
//!
//! [`ClockChoice::Auto`] aligns when some offset is at least [`ALIGN_MIN_OFFSET_NS`]; below
//! that, the recorded times are as good as the estimate. Aligned times are `time - offset`.
//! A rank that shares no instance with the reference keeps offset 0, with a diagnostic.
//!
//! Cost: O(i log i) per rank for i instances.

use super::collective::Matching;
use super::summary::RankSummary;
use super::Diagnostic;
use crate::analysis::stats::median;

/// Offsets at least this large (ns) are clock skew, not completion jitter: collective ends
/// agree within a few µs on one host (REFERENCE.md), so 10 µs leaves a margin.
pub const ALIGN_MIN_OFFSET_NS: i64 = 10_000;

/// Which time axis waits and arrivals use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClockChoice {
    /// Aligned when offsets are significant ([`ALIGN_MIN_OFFSET_NS`]).
    #[default]
    Auto,
    /// The times each rank recorded.
    AsRecorded,
    /// Aligned by collective ends.
    Aligned,
}

/// Offsets of one run and whether they are applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Clock {
    /// Estimated offset per run rank position, ns (`None`: no instance shared with the
    /// reference).
    pub estimated_ns: Vec<Option<i64>>,
    /// Whether waits and arrivals use aligned times.
    pub aligned: bool,
    /// Offsets applied per rank position: the estimates when aligned, else zeros.
    pub applied_ns: Vec<i64>,
}

impl Clock {
    /// `aligned by collectives` or `as recorded`.
    pub fn label(&self) -> &'static str {
        if self.aligned {
            "aligned by collectives"
        } else {
            "as recorded"
        }
    }
}

/// Estimates offsets (see the module docs) and decides alignment by `choice`.
pub fn estimate(
    ranks: &[RankSummary],
    m: &Matching,
    choice: ClockChoice,
    diags: &mut Vec<Diagnostic>,
) -> Clock {
    let n = ranks.len();
    let mut estimated: Vec<Option<i64>> = vec![None; n];
    if let Some(first) = estimated.first_mut() {
        *first = Some(0);
    }
    for (p, slot) in estimated.iter_mut().enumerate().skip(1) {
        let deltas: Vec<i64> = m
            .instances
            .iter()
            .filter_map(|inst| {
                let end = |q: usize| -> Option<i64> {
                    let i = (*inst.members.get(q)?)?;
                    Some(ranks.get(q)?.collectives.get(i as usize)?.end_ns)
                };
                Some(end(p)? - end(0)?)
            })
            .collect();
        *slot = median(&deltas).map(|v| v.round() as i64);
        if slot.is_none() && !m.instances.is_empty() {
            let label = ranks
                .get(p)
                .and_then(|r| r.identity.rank)
                .map_or_else(|| format!("#{p}"), |r| r.to_string());
            diags.push(Diagnostic::new(
                "run_clock_unaligned",
                format!("rank {label} shares no matched collective with the reference rank; its clock is taken as is"),
            ));
        }
    }
    let significant = estimated
        .iter()
        .flatten()
        .any(|o| o.abs() >= ALIGN_MIN_OFFSET_NS);
    let aligned = match choice {
        ClockChoice::Auto => significant,
        ClockChoice::AsRecorded => false,
        ClockChoice::Aligned => true,
    };
    let applied_ns = estimated
        .iter()
        .map(|o| if aligned { o.unwrap_or(0) } else { 0 })
        .collect();
    Clock {
        estimated_ns: estimated,
        aligned,
        applied_ns,
    }
}
