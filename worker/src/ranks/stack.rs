//! What the stacked ranks timeline asks of the run analysis: where each rank's time 0 sits on
//! the run's shared axis, and the collective instance a selected kernel belongs to.
//!
//! **The shared axis** (docs/runs.md#ranks-on-one-timeline). A rank's model time `t` is
//! `origin_p + t` on its own clock (absolute ns); aligned by collectives it is
//! `origin_p + t - offset_p` ([`crate::run::clock`]). The axis starts at the earliest rank's
//! start on the chosen clock, `run0 = min_q(origin_q - offset_q)`, so rank `p` draws at axis 0
//! its own time `run0 + offset_p - origin_p` (0 for the earliest rank, negative for later ones).
//! As recorded, every offset is 0.
//!
//! **A selected collective**: the kernel's absolute start and stream identify it among the
//! rank's collectives ([`crate::run::summary::Collective`]); its instance gives every member's
//! kernel back in that member's own trace time, with the arrival order and waits the run report
//! prints.

use super::RunState;
use crate::run::collective::instance_of;
use crate::run::RunAnalysis;
use protocol::{CollectiveMatch, CollectiveMember};

/// Which clock the shared axis uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The times each rank recorded.
    Recorded,
    /// Shifted by the offsets estimated from collective ends.
    Collectives,
}

impl RunState {
    /// Rank `rank`'s own time drawn at 0 of the shared axis on `clock`; `None` before the run
    /// is analysed or when the rank is not in the analysis.
    pub fn axis_origin_ns(&self, rank: u32, clock: Clock) -> Option<i64> {
        axis_origin_ns(self.analysis()?, rank, clock)
    }

    /// The instance of the collective kernel of rank `rank` that starts at model time
    /// `start_ns` on stream `stream` (`None`: not a matched collective).
    pub fn collective(&self, rank: u32, stream: &str, start_ns: i64) -> Option<CollectiveMatch> {
        collective(self.analysis()?, rank, stream, start_ns)
    }
}

/// Offset of run rank position `p` on `clock`, ns.
fn offset(a: &RunAnalysis, p: usize, clock: Clock) -> i64 {
    match clock {
        Clock::Recorded => 0,
        Clock::Collectives => a.clock.estimated_ns.get(p).copied().flatten().unwrap_or(0),
    }
}

fn position(a: &RunAnalysis, rank: u32) -> Option<usize> {
    a.ranks.iter().position(|r| r.identity.rank == Some(rank))
}

/// See [`RunState::axis_origin_ns`].
pub fn axis_origin_ns(a: &RunAnalysis, rank: u32, clock: Clock) -> Option<i64> {
    let p = position(a, rank)?;
    let run0 = (0..a.ranks.len()).filter_map(|q| Some(a.ranks.get(q)?.origin_ns - offset(a, q, clock))).min()?;
    Some(run0 + offset(a, p, clock) - a.ranks.get(p)?.origin_ns)
}

/// See [`RunState::collective`].
pub fn collective(a: &RunAnalysis, rank: u32, stream: &str, start_ns: i64) -> Option<CollectiveMatch> {
    let p = position(a, rank)?;
    let summary = a.ranks.get(p)?;
    let abs = summary.origin_ns + start_ns;
    let idx = summary.collectives.iter().position(|c| c.start_ns == abs && &*c.stream == stream)?;
    let i = instance_of(&a.matching, p, idx as u32)?;
    let (inst, times) = (a.matching.instances.get(i)?, a.times.get(i)?);
    let members = times
        .arrivals
        .iter()
        .filter_map(|arr| {
            let r = a.ranks.get(arr.member)?;
            let c = r.collectives.get(inst.members.get(arr.member).copied().flatten()? as usize)?;
            Some(CollectiveMember {
                rank: r.identity.rank?,
                start_ns: c.start_ns - r.origin_ns,
                end_ns: c.end_ns - r.origin_ns,
                arrival: arr.order,
                wait_us: arr.wait_ns as f64 / 1e3,
            })
        })
        .collect();
    Some(CollectiveMatch {
        key: inst.key.clone(),
        name: inst.name.clone(),
        step: inst.step,
        index_in_step: inst.index_in_step,
        last_rank: a.ranks.get(times.last).and_then(|r| r.identity.rank),
        members,
    })
}
