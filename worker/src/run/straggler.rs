//! Stragglers: per rank, how often it arrived last at a collective, how much waiting it caused
//! the others, and why: in the windows before the collectives it delayed, which kernels and
//! host ops took longer on it than on the median rank.
//!
//! **Rules.**
//! - Caused wait of rank p = Σ over instances where p arrived last of Σ the others' waits.
//! - p **delayed** an instance when it arrived last and the spread (last - first arrival) is at
//!   least [`DELAY_MIN_SPREAD_NS`]; smaller spreads are launch jitter, not a straggler.
//! - Why: for each delayed instance and each name in p's window ([`super::window`]), p's time
//!   minus the median over the other members of their time for that name (0 where a rank's
//!   top list lacks it); summed over the delayed instances; the [`WHY_TOP`] largest positive
//!   differences, for kernels and for ops. And the **late start**: how much later p's window
//!   began than the median of the others' (on the chosen time axis), summed; for the first
//!   collective of a step that is a late step start (data loading, the previous step's host
//!   work), which no kernel in the window explains.
//! - The **delay** at the instance it delayed most ([`super::delay`]): said before the names.
//!
//! Cost: O(i · r · k) for i instances, r ranks, k = `TOP_NAMES` names per window.

use super::collective::{InstanceTimes, Matching};
use super::delay::{delay, Delay};
use super::summary::RankSummary;
use super::window::Window;
use crate::analysis::stats::median;
use std::collections::BTreeMap;

/// An arrival spread below this (ns) is launch jitter: NCCL kernel launches on healthy ranks
/// land within tens of µs of each other.
pub const DELAY_MIN_SPREAD_NS: i64 = 50_000;
/// Names kept in a straggler's "why".
pub const WHY_TOP: usize = 5;
/// Delayed instances kept as evidence per rank (the largest caused waits).
pub const DELAYED_KEPT: usize = 20;

/// One instance a rank delayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delayed {
    /// Index into the matching's instances.
    pub instance: usize,
    /// Step of the instance.
    pub step: Option<u64>,
    /// Index within stream and step.
    pub index_in_step: u32,
    /// Σ of the others' waits at this instance, ns.
    pub caused_wait_ns: i64,
    /// Last - first arrival, ns.
    pub spread_ns: i64,
}

/// The straggler row of one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Straggler {
    /// Run rank position.
    pub member: usize,
    /// Instances where it arrived last.
    pub last_arrivals: u32,
    /// Waiting it caused the others, ns.
    pub caused_wait_ns: i64,
    /// Waiting it did itself, ns.
    pub waited_ns: i64,
    /// Instances it delayed (see the rules), largest caused wait first, at most [`DELAYED_KEPT`].
    pub delayed: Vec<Delayed>,
    /// Number of instances it delayed (before the cut).
    pub delayed_count: usize,
    /// Kernels that took longer on it than on the median rank: (name, extra ns), largest first.
    pub kernels: Vec<(String, i64)>,
    /// Host ops likewise.
    pub ops: Vec<(String, i64)>,
    /// Σ over delayed instances of (own window start - median of the others'), ns (>= 0 counts).
    pub late_start_ns: i64,
    /// How late it was at the instance it delayed most, and the largest gap before it.
    pub delay: Option<Delay>,
}

impl Straggler {
    /// The first words of its "why": its delay, else its summed late start.
    pub fn lead(&self) -> Option<String> {
        match &self.delay {
            Some(d) => Some(d.sentence()),
            None => (self.late_start_ns > 0)
                .then(|| format!("started {} late", crate::text::pytorch_time(self.late_start_ns))),
        }
    }
}

/// One row per run rank position, most caused wait first (ties: rank order).
/// `offsets_ns` are the applied clock offsets per rank position (window starts are aligned
/// with them, like the arrivals in `times`).
pub fn stragglers(
    ranks: &[RankSummary],
    m: &Matching,
    times: &[InstanceTimes],
    offsets_ns: &[i64],
) -> Vec<Straggler> {
    let mut rows: Vec<Straggler> = (0..ranks.len())
        .map(|member| Straggler {
            member,
            last_arrivals: 0,
            caused_wait_ns: 0,
            waited_ns: 0,
            delayed: Vec::new(),
            delayed_count: 0,
            kernels: Vec::new(),
            ops: Vec::new(),
            late_start_ns: 0,
            delay: None,
        })
        .collect();
    let mut why: Vec<(BTreeMap<String, i64>, BTreeMap<String, i64>)> =
        vec![Default::default(); ranks.len()];
    for (idx, (inst, t)) in m.instances.iter().zip(times).enumerate() {
        let caused: i64 = t.arrivals.iter().map(|a| a.wait_ns).sum();
        for a in &t.arrivals {
            if let Some(row) = rows.get_mut(a.member) {
                row.waited_ns += a.wait_ns;
            }
        }
        let Some(row) = rows.get_mut(t.last) else {
            continue;
        };
        row.last_arrivals += 1;
        row.caused_wait_ns += caused;
        if t.spread_ns < DELAY_MIN_SPREAD_NS {
            continue;
        }
        row.delayed_count += 1;
        row.delayed.push(Delayed {
            instance: idx,
            step: inst.step,
            index_in_step: inst.index_in_step,
            caused_wait_ns: caused,
            spread_ns: t.spread_ns,
        });
        let collective = |p: usize| {
            ranks
                .get(p)?
                .collectives
                .get((*inst.members.get(p)?)? as usize)
        };
        let window_start = |p: usize| {
            Some(collective(p)?.window_start_ns - offsets_ns.get(p).copied().unwrap_or(0))
        };
        let Some(own) = collective(t.last).map(|c| &c.before) else {
            continue;
        };
        let others: Vec<&Window> = t
            .arrivals
            .iter()
            .filter(|a| a.member != t.last)
            .filter_map(|a| Some(&collective(a.member)?.before))
            .collect();
        let other_starts: Vec<i64> = t
            .arrivals
            .iter()
            .filter(|a| a.member != t.last)
            .filter_map(|a| window_start(a.member))
            .collect();
        if let (Some(own_start), Some(med)) = (window_start(t.last), median(&other_starts)) {
            row.late_start_ns += (own_start - med.round() as i64).max(0);
        }
        if let Some(acc) = why.get_mut(t.last) {
            add_excess(
                &mut acc.0,
                &own.kernels,
                others.iter().map(|w| &w.kernels[..]),
            );
            add_excess(&mut acc.1, &own.ops, others.iter().map(|w| &w.ops[..]));
        }
    }
    for (row, (kernels, ops)) in rows.iter_mut().zip(why) {
        row.delayed
            .sort_by_key(|d| (std::cmp::Reverse(d.caused_wait_ns), d.instance));
        row.delayed.truncate(DELAYED_KEPT);
        row.delay = row
            .delayed
            .first()
            .and_then(|worst| delay(ranks, m, times, offsets_ns, row.member, worst.instance));
        row.kernels = top_positive(kernels);
        row.ops = top_positive(ops);
    }
    rows.sort_by_key(|r| (std::cmp::Reverse(r.caused_wait_ns), r.member));
    rows
}

/// Adds, per name of `own`, own time - median of the others' time for it.
fn add_excess<'a>(
    acc: &mut BTreeMap<String, i64>,
    own: &[(Box<str>, i64)],
    others: impl Iterator<Item = &'a [(Box<str>, i64)]> + Clone,
) {
    for (name, t) in own {
        let theirs: Vec<i64> = others
            .clone()
            .map(|w| w.iter().find(|(n, _)| n == name).map_or(0, |x| x.1))
            .collect();
        let med = median(&theirs).unwrap_or(0.0).round() as i64;
        *acc.entry(name.to_string()).or_default() += t - med;
    }
}

fn top_positive(map: BTreeMap<String, i64>) -> Vec<(String, i64)> {
    let mut v: Vec<(String, i64)> = map.into_iter().filter(|x| x.1 > 0).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(WHY_TOP);
    v
}
