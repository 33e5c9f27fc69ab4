//! A straggler's delay, named before any per-op difference: at the collective it delayed most,
//! how much later than the other ranks it started that step and reached the collective, and
//! the largest gap before the collective: data loading or one op.
//!
//! **Rules** (times on the chosen axis: each rank's clock offset removed).
//! - Start offset = own entry into the step (its `ProfilerStep#N` start) - median of the other
//!   ranks' entries into that step.
//! - Late = own arrival at the collective - median of the others' arrivals.
//! - Gaps, own minus the median of the others': data loading time (`enumerate(DataLoader)`
//!   spans) from entering the step (its `ProfilerStep#N` start) to the collective, and each
//!   top-level op's time in the window before the collective ([`super::window`]). The cause is the largest positive gap; data loading wins a tie, since the op gaps
//!   are often the ops run inside it.
//!
//! Cost: O(r · k) for r ranks and k = `TOP_NAMES` names per window.

use super::collective::{InstanceTimes, Matching};
use super::summary::RankSummary;
use super::window::time_in;
use crate::analysis::stats::median;
use crate::text::{cut, pytorch_time as time};

/// What took longest on the straggler before the collective, beyond the other ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// `enumerate(DataLoader)` spans.
    DataLoading,
    /// A top-level host op, by name.
    Op(String),
}

/// How late a straggler was at the collective it delayed most (see the module rules).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delay {
    /// Index into the matching's instances.
    pub instance: usize,
    /// Step of the straggler's collective.
    pub step: Option<u64>,
    /// Own step start - median of the others' starts of that step, ns.
    pub start_offset_ns: Option<i64>,
    /// Own arrival - median of the others' arrivals, ns.
    pub late_ns: i64,
    /// The largest positive gap before the collective and its size, ns.
    pub cause: Option<(Cause, i64)>,
}

/// The delay of rank position `member` at instance `worst` (index into the matching's
/// instances), the one it delayed most.
pub fn delay(
    ranks: &[RankSummary],
    m: &Matching,
    times: &[InstanceTimes],
    offsets_ns: &[i64],
    member: usize,
    worst: usize,
) -> Option<Delay> {
    let inst = m.instances.get(worst)?;
    let t = times.get(worst)?;
    let collective = |p: usize| ranks.get(p)?.collectives.get((*inst.members.get(p)?)? as usize);
    let own = collective(member)?;
    let others: Vec<usize> = t.arrivals.iter().map(|a| a.member).filter(|&p| p != member).collect();
    let offset = |p: usize| offsets_ns.get(p).copied().unwrap_or(0);
    let own_arrival = t.arrivals.iter().find(|a| a.member == member)?.start_ns;
    let arrivals: Vec<i64> = t.arrivals.iter().filter(|a| a.member != member).map(|a| a.start_ns).collect();
    // Where each rank entered the step (own clock) and when it reached the collective.
    let entry = |p: usize| {
        let r = ranks.get(p)?;
        let start = r.steps.iter().find(|s| Some(s.number) == own.step)?.cpu_start_ns;
        Some((r, start, collective(p)?.start_ns))
    };
    let other_starts: Vec<i64> = others.iter().filter_map(|&p| Some(entry(p)?.1 - offset(p))).collect();
    let start_offset_ns = entry(member)
        .zip(median(&other_starts))
        .map(|((_, s, _), med)| s - offset(member) - med.round() as i64);
    let loading_of = |p: usize| entry(p).map(|(r, s, at)| time_in(&r.data_loading, s, at));
    let gap = |own_ns: i64, theirs: Vec<i64>| own_ns - median(&theirs).unwrap_or(0.0).round() as i64;
    let loading = gap(
        loading_of(member).unwrap_or(0),
        others.iter().filter_map(|&p| loading_of(p)).collect(),
    );
    let op = own
        .before
        .ops
        .iter()
        .map(|(name, ns)| {
            let theirs = others
                .iter()
                .filter_map(|&p| collective(p))
                .map(|c| c.before.ops.iter().find(|(n, _)| n == name).map_or(0, |x| x.1))
                .collect();
            (gap(*ns, theirs), name)
        })
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1)));
    let cause = match op {
        Some((ns, name)) if ns > loading && ns > 0 => Some((Cause::Op(name.to_string()), ns)),
        _ => (loading > 0).then_some((Cause::DataLoading, loading)),
    };
    Some(Delay {
        instance: worst,
        step: own.step,
        start_offset_ns,
        late_ns: own_arrival - median(&arrivals)?.round() as i64,
        cause,
    })
}

impl Cause {
    /// `data loading` or `op "name"`.
    pub fn label(&self) -> String {
        match self {
            Self::DataLoading => "data loading".to_owned(),
            Self::Op(name) => format!("op {:?}", cut(name, 60)),
        }
    }

    /// `data_loading` or `op` (JSON).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::DataLoading => "data_loading",
            Self::Op(_) => "op",
        }
    }
}

impl Delay {
    /// One line: `started step 10 6.192ms after the others (median); reached the collective
    /// 7.1ms after them; largest gap before it: data loading +182.000us`.
    pub fn sentence(&self) -> String {
        let step = self.step.map_or_else(|| "its step".to_owned(), |n| format!("step {n}"));
        let started = match self.start_offset_ns {
            Some(ns) if ns > 0 => format!("started {step} {} after the others (median)", time(ns)),
            Some(ns) => format!("started {step} {} before the others (median)", time(-ns)),
            None => format!("in {step}"),
        };
        let cause = self
            .cause
            .as_ref()
            .map(|(c, ns)| format!("; largest gap before it: {} +{}", c.label(), time(*ns)))
            .unwrap_or_default();
        format!("{started}; reached the collective {} after them{cause}", time(self.late_ns))
    }
}
