//! Critical paths joined at collectives: a rank that waited in a collective for the last
//! arriver was, for that time, on the last arriver's path (the last arriver's path continues on
//! every rank; docs/definitions.md "Critical path").
//!
//! Each rank's own path runs through its collective kernels as `gpu_communication`, the wait
//! for a late rank inside. For every stretch of a rank's path in a collective kernel where it
//! waited (`collective::arrivals`: wait = last arrival - own arrival), the part of the wait the
//! stretch holds moves to the classes of the last arriver's path over the same moments (clock
//! offsets applied). One level: if the last arriver itself waited in an earlier collective
//! during that time, that time stays its `gpu_communication`. Moments the last arriver's path
//! does not cover (outside its complete steps) stay with the waiting rank's own class.
//!
//! Cost: O(s log s) per rank for s stretches on its path.

use super::collective::{InstanceTimes, Matching};
use super::summary::{RankSummary, Stretch};
use crate::analysis::critical_path::{BoundBy, Shares};
use crate::model::NONE;

/// A rank's paths with its waits in collectives replaced by the last arrivers' paths.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JoinedPath {
    /// Time per class ([`BoundBy::ALL`] order), ns; sums to the rank's path wall time.
    pub shares: Shares,
    /// Wait in collectives moved to other ranks' paths, ns.
    pub waited_ns: i64,
    /// (run rank position, ns of its path taken over), most first.
    pub waited_on: Vec<(usize, i64)>,
}

impl JoinedPath {
    /// The class holding most of the joined paths, if any time was followed.
    pub fn bound_by(&self) -> Option<BoundBy> {
        (self.shares.iter().sum::<i64>() > 0).then(|| BoundBy::most(&self.shares))
    }
}

/// The joined paths of every rank (same order as `ranks`); `offsets_ns[p]` is removed from
/// rank position `p`'s times, as in `arrivals`.
pub fn join(ranks: &[RankSummary], m: &Matching, times: &[InstanceTimes], offsets_ns: &[i64]) -> Vec<JoinedPath> {
    // (rank position, collective index) -> instance.
    let mut instance_of: crate::model::strings::FxHashMap<(usize, u32), usize> = Default::default();
    for (k, inst) in m.instances.iter().enumerate() {
        for (p, c) in inst.members.iter().enumerate() {
            if let Some(c) = c {
                instance_of.insert((p, *c), k);
            }
        }
    }
    let off = |p: usize| offsets_ns.get(p).copied().unwrap_or(0);
    ranks
        .iter()
        .enumerate()
        .map(|(p, rank)| {
            let mut out = JoinedPath { shares: rank.critical.shares, ..JoinedPath::default() };
            let mut on: Vec<(usize, i64)> = Vec::new();
            for st in rank.critical.stretches.iter().filter(|st| st.collective != NONE) {
                let Some(t) = instance_of.get(&(p, st.collective)).and_then(|&k| times.get(k)) else {
                    continue;
                };
                let Some(mine) = t.arrivals.iter().find(|a| a.member == p) else {
                    continue;
                };
                if t.last == p || mine.wait_ns <= 0 {
                    continue;
                }
                // The wait, in this rank's clock, as far as this stretch holds it.
                let (a, b) = (st.start_ns.max(mine.start_ns + off(p)), st.end_ns.min(mine.start_ns + off(p) + mine.wait_ns));
                if b <= a {
                    continue;
                }
                let Some(late) = ranks.get(t.last) else {
                    continue;
                };
                let shift = off(t.last) - off(p);
                let taken = add_overlap(&late.critical.stretches, a + shift, b + shift, &mut out.shares);
                out.shares[st.class.index()] -= taken;
                out.waited_ns += taken;
                match on.iter_mut().find(|(q, _)| *q == t.last) {
                    Some(entry) => entry.1 += taken,
                    None => on.push((t.last, taken)),
                }
            }
            on.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
            out.waited_on = on;
            out
        })
        .collect()
}

/// Adds to `shares` the classes of `stretches` over `[a, b)`; returns the ns added.
fn add_overlap(stretches: &[Stretch], a: i64, b: i64, shares: &mut Shares) -> i64 {
    let first = stretches.partition_point(|s| s.end_ns <= a);
    let mut added = 0;
    for s in stretches[first..].iter().take_while(|s| s.start_ns < b) {
        let ns = s.end_ns.min(b) - s.start_ns.max(a);
        if ns > 0 {
            shares[s.class.index()] += ns;
            added += ns;
        }
    }
    added
}
