//! Answers: the engine's sessions turned into the protocol's wire types, every one the page
//! receives in one place (docs/architecture.md). Pure functions over read-only engine state; the
//! session caches what they are built from.
//!
//! ```text
//! Trace + Index ─layout──▶ Layout      (groups, lanes, step marks; once per load)
//!               ─tiles───▶ TileSet + rect words (LOD rects of the lanes asked for)
//!               ─details─▶ SliceDetails (args, parent/children, launch links, flows)
//!               ─search──▶ SearchHit   (count, next / previous match)
//! Trace ─summary──▶ TraceSummary (sent with `Loaded`; `kinetoscope info` prints the same),
//!       with ─about─▶ TraceAbout (GPUs, rank, versions, profiler options)
//! step stats + GPU metrics + critical paths ─glance─▶ Glance (the Summary tab's lead)
//! op / kernel / step tables ─tables─▶ TableData
//! findings ─findings─▶ FindingData (evidence as slice references)
//! step explanation ─explain─▶ ExplanationData (evidence as slice references)
//! critical paths + step graphs ─critical_path─▶ CriticalPathData, WhatIfData
//! GpuIndex + Memory ─counters─▶ CounterSet (utilization, SM efficiency, memory per bucket)
//! Memory + Held ─memory─▶ MemoryData (allocated, reserved, categories per bucket), LiveMemory
//! module tree (nn.Module frames) ─modules─▶ ModulesData (the Modules tab)
//! call tree (host slices by call path) ─call_tree─▶ CallTreeData (the Flame tab)
//! WorkIndex + kernel table ─roofline─▶ RooflineData (points, peaks); SliceWork (details)
//! Comparison + both sides' findings ─comparison─▶ ComparisonData
//! a rank's kernel + the run analysis ─collective─▶ CollectiveMatch (the instance on every rank)
//! ```
//!
//! Rects travel as `u32` words (see [`protocol::RECT_WORDS`]) so a frame's worth of rects costs
//! one transferred buffer rather than a JSON array the main thread would have to parse.

pub mod about;
pub mod call_tree;
pub mod collective;
pub mod comparison;
pub mod counters;
pub mod critical_path;
pub mod details;
pub mod explain;
pub mod findings;
pub mod glance;
pub mod layout;
pub mod memory;
pub mod modules;
pub mod roofline;
pub mod search;
pub mod summary;
pub mod tables;
pub mod tiles;

use crate::model::Trace;
use protocol::SliceRef;

/// The wire reference of slice `id`, or `None` for an unknown id.
pub fn slice_ref(trace: &Trace, id: u32) -> Option<SliceRef> {
    let s = &trace.slices;
    let i = id as usize;
    Some(SliceRef {
        id,
        name: trace.strings.get(*s.name.get(i)?).into_owned(),
        lane: s.lane.get(i)?.0,
        row: *s.row.get(i)?,
        start_ns: *s.start_ns.get(i)?,
        dur_ns: *s.dur_ns.get(i)?,
    })
}
