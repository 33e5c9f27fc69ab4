//! Matching collective instances across ranks, and each instance's arrivals and waits.
//!
//! **Matching** ([`match_collectives`]), over the ranks of one run (positions in the run's
//! rank list):
//! - **By process group and sequence number** when every collective of every rank carries both
//!   (newer PyTorch): an instance is one `(group, seq)`; it needs at least two ranks.
//! - **Else by order on each communication stream**: the k-th collective of stream S on every
//!   rank (TraceLens / HTA). Streams are keyed by id when every rank has the same set of
//!   communication streams, else by order of first use (with a diagnostic).
//! - A stream whose collective count differs between ranks is not matched at all, and a name
//!   mismatch (kernel names compared up to the argument list) stops matching the stream there:
//!   both are diagnostics naming the ranks. Nothing is guessed.
//!
//! **Arrivals** ([`arrivals`]): per instance and rank, arrival = the kernel's start, end = its
//! end, both minus the rank's clock offset ([`super::clock`]); the last arriver makes the
//! others wait `wait = last arrival - own arrival`.
//!
//! Cost: O(c log c) for c collectives over all ranks.

use super::summary::{Collective, RankSummary};
use super::Diagnostic;
use std::collections::BTreeMap;

/// How instances were matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchMode {
    /// `(Process Group Name, Seq)`.
    ProcessGroup,
    /// k-th collective of each communication stream.
    StreamOrder,
}

impl MatchMode {
    /// `process_group_seq` or `stream_order`.
    pub fn key(self) -> &'static str {
        match self {
            Self::ProcessGroup => "process_group_seq",
            Self::StreamOrder => "stream_order",
        }
    }
}

/// One collective matched across ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// `stream 84 #3` or `pg 0 seq 12`.
    pub key: String,
    /// Kernel name (of the first member).
    pub name: String,
    /// Step of the first member's collective.
    pub step: Option<u64>,
    /// Index within its stream and step (first member).
    pub index_in_step: u32,
    /// Per run rank position: index into that rank's `collectives`, `None` when absent.
    pub members: Vec<Option<u32>>,
}

/// The matching of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matching {
    /// How instances were keyed.
    pub mode: MatchMode,
    /// Matched instances, ordered by key (stream, then order; or group, then seq).
    pub instances: Vec<Instance>,
    /// Collective kernels (over all ranks) in no instance.
    pub unmatched: usize,
    /// Count and name mismatches.
    pub diagnostics: Vec<Diagnostic>,
}

/// The instance (index into `m.instances`) holding collective `idx` of run rank position `p`.
pub fn instance_of(m: &Matching, p: usize, idx: u32) -> Option<usize> {
    m.instances.iter().position(|i| i.members.get(p).copied().flatten() == Some(idx))
}

/// Kernel name up to its argument list: `ncclKernel_AllReduce_RING_LL_Sum_float`.
fn base_name(name: &str) -> &str {
    name.split('(').next().unwrap_or(name).trim()
}

/// Matches the collectives of `ranks` (one run; see the module rules).
pub fn match_collectives(ranks: &[RankSummary]) -> Matching {
    let total: usize = ranks.iter().map(|r| r.collectives.len()).sum();
    let pg_mode = total > 0
        && ranks.iter().all(|r| {
            r.collectives
                .iter()
                .all(|c| c.group.is_some() && c.seq.is_some())
        });
    let mut m = Matching {
        mode: if pg_mode {
            MatchMode::ProcessGroup
        } else {
            MatchMode::StreamOrder
        },
        instances: Vec::new(),
        unmatched: 0,
        diagnostics: Vec::new(),
    };
    if ranks.len() >= 2 {
        if pg_mode {
            by_group(ranks, &mut m);
        } else {
            by_stream(ranks, &mut m);
        }
    }
    let matched: usize = m
        .instances
        .iter()
        .map(|i| i.members.iter().flatten().count())
        .sum();
    m.unmatched = total - matched;
    m
}

fn rank_label(ranks: &[RankSummary], pos: usize) -> String {
    super::rank_at(ranks, pos).map_or_else(|| format!("#{pos}"), |r| r.to_string())
}

fn instance(ranks: &[RankSummary], key: String, members: Vec<Option<u32>>) -> Option<Instance> {
    let (pos, idx) = members
        .iter()
        .enumerate()
        .find_map(|(p, m)| m.map(|i| (p, i)))?;
    let c: &Collective = ranks.get(pos)?.collectives.get(idx as usize)?;
    Some(Instance {
        key,
        name: c.name.to_string(),
        step: c.step,
        index_in_step: c.index_in_step,
        members,
    })
}

fn by_group(ranks: &[RankSummary], m: &mut Matching) {
    let mut groups: BTreeMap<(&str, i64), Vec<Option<u32>>> = BTreeMap::new();
    for (pos, r) in ranks.iter().enumerate() {
        for (i, c) in r.collectives.iter().enumerate() {
            let (Some(g), Some(seq)) = (c.group.as_deref(), c.seq) else {
                continue;
            };
            let members = groups
                .entry((g, seq))
                .or_insert_with(|| vec![None; ranks.len()]);
            if let Some(slot) = members.get_mut(pos) {
                *slot = Some(i as u32);
            }
        }
    }
    for ((g, seq), members) in groups {
        if members.iter().flatten().count() < 2 {
            continue;
        }
        let names = member_names(ranks, &members);
        if names.windows(2).any(|w| w[0].1 != w[1].1) {
            m.diagnostics
                .push(name_mismatch(ranks, &format!("pg {g} seq {seq}"), &names));
            continue;
        }
        m.instances
            .extend(instance(ranks, format!("pg {g} seq {seq}"), members));
    }
}

/// Each present member's (rank position, collective name without its arguments).
fn member_names<'r>(ranks: &'r [RankSummary], members: &[Option<u32>]) -> Vec<(usize, &'r str)> {
    members
        .iter()
        .enumerate()
        .filter_map(|(p, i)| Some((p, base_name(&ranks.get(p)?.collectives.get((*i)? as usize)?.name))))
        .collect()
}

fn name_mismatch(ranks: &[RankSummary], key: &str, names: &[(usize, &str)]) -> Diagnostic {
    let list: Vec<String> = names
        .iter()
        .map(|(p, n)| format!("rank {} {n:?}", rank_label(ranks, *p)))
        .collect();
    Diagnostic::new(
        "run_collective_name_mismatch",
        format!(
            "{key}: kernel names differ across ranks ({}); not matched from here on",
            list.join(", ")
        ),
    )
}

/// Per rank: stream key -> indexes of its collectives on that stream, in start order.
fn streams_of(ranks: &[RankSummary], m: &mut Matching) -> Vec<BTreeMap<String, Vec<u32>>> {
    let ids: Vec<Vec<&str>> = ranks
        .iter()
        .map(|r| {
            let mut v: Vec<&str> = r.collectives.iter().map(|c| &*c.stream).collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect();
    let same_ids = ids.windows(2).all(|w| w[0] == w[1]);
    if !same_ids {
        m.diagnostics.push(Diagnostic::new(
            "run_comm_streams_differ",
            "communication stream ids differ across ranks; streams matched by order of first use"
                .to_owned(),
        ));
    }
    ranks
        .iter()
        .map(|r| {
            let mut by: BTreeMap<String, Vec<u32>> = BTreeMap::new();
            let mut first_use: Vec<(i64, &str)> = Vec::new();
            for (i, c) in r.collectives.iter().enumerate() {
                by.entry(c.stream.to_string()).or_default().push(i as u32);
                first_use.push((c.start_ns, &c.stream));
            }
            if same_ids {
                return by
                    .into_iter()
                    .map(|(k, v)| (format!("stream {k}"), v))
                    .collect();
            }
            first_use.sort_unstable();
            let mut order: Vec<&str> = Vec::new();
            for (_, s) in first_use {
                if !order.contains(&s) {
                    order.push(s);
                }
            }
            order
                .iter()
                .enumerate()
                .filter_map(|(n, s)| Some((format!("comm stream #{n}"), by.get(*s)?.clone())))
                .collect()
        })
        .collect()
}

fn by_stream(ranks: &[RankSummary], m: &mut Matching) {
    let per_rank = streams_of(ranks, m);
    let mut keys: Vec<&String> = per_rank.iter().flat_map(|s| s.keys()).collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        let lists: Vec<Option<&Vec<u32>>> = per_rank.iter().map(|s| s.get(key)).collect();
        let counts: Vec<usize> = lists.iter().map(|l| l.map_or(0, Vec::len)).collect();
        if counts.windows(2).any(|w| w[0] != w[1]) {
            let list: Vec<String> = counts
                .iter()
                .enumerate()
                .map(|(p, n)| format!("rank {} has {n}", rank_label(ranks, p)))
                .collect();
            m.diagnostics.push(Diagnostic::new(
                "run_collective_count_mismatch",
                format!(
                    "{key}: collective counts differ ({}); stream not matched",
                    list.join(", ")
                ),
            ));
            continue;
        }
        for k in 0..counts.first().copied().unwrap_or(0) {
            let members: Vec<Option<u32>> = lists
                .iter()
                .map(|l| l.and_then(|l| l.get(k).copied()))
                .collect();
            let names = member_names(ranks, &members);
            if names.windows(2).any(|w| w[0].1 != w[1].1) {
                m.diagnostics
                    .push(name_mismatch(ranks, &format!("{key} #{k}"), &names));
                break;
            }
            m.instances
                .extend(instance(ranks, format!("{key} #{k}"), members));
        }
    }
}

/// One rank's part in an instance, on the chosen time axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// Run rank position.
    pub member: usize,
    /// Kernel start (arrival), ns, offset removed.
    pub start_ns: i64,
    /// Kernel end, ns, offset removed.
    pub end_ns: i64,
    /// 0 = first to arrive (ties: lower rank first).
    pub order: u32,
    /// Last arrival - own arrival, ns.
    pub wait_ns: i64,
}

/// Arrivals of one instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceTimes {
    /// Arrivals in run rank order (members only).
    pub arrivals: Vec<Arrival>,
    /// Run rank position of the last arriver (ties: the higher rank).
    pub last: usize,
    /// Last arrival - first arrival, ns.
    pub spread_ns: i64,
}

/// Arrivals and waits of every instance (same order as `m.instances`); `offsets_ns[p]` is
/// removed from rank position `p`'s times.
pub fn arrivals(ranks: &[RankSummary], m: &Matching, offsets_ns: &[i64]) -> Vec<InstanceTimes> {
    m.instances
        .iter()
        .map(|inst| {
            let mut arr: Vec<Arrival> = inst
                .members
                .iter()
                .enumerate()
                .filter_map(|(p, i)| {
                    let c = ranks.get(p)?.collectives.get((*i)? as usize)?;
                    let off = offsets_ns.get(p).copied().unwrap_or(0);
                    Some(Arrival {
                        member: p,
                        start_ns: c.start_ns - off,
                        end_ns: c.end_ns - off,
                        order: 0,
                        wait_ns: 0,
                    })
                })
                .collect();
            // Every k below is in 0..arr.len(): `by_time` is a permutation of those indexes.
            let mut by_time: Vec<usize> = (0..arr.len()).collect();
            by_time.sort_by_key(|&k| (arr[k].start_ns, arr[k].member));
            let first = by_time.first().map_or(0, |&k| arr[k].start_ns);
            let last_k = by_time.last().copied().unwrap_or(0);
            let last_at = arr.get(last_k).map_or(0, |a| a.start_ns);
            for (order, &k) in by_time.iter().enumerate() {
                arr[k].order = order as u32;
                arr[k].wait_ns = last_at - arr[k].start_ns;
            }
            let last = arr.get(last_k).map_or(0, |a| a.member);
            InstanceTimes {
                arrivals: arr,
                last,
                spread_ns: last_at - first,
            }
        })
        .collect()
}
