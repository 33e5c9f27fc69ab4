//! Timeline answers: the engine's model and index turned into the wire types the app's timeline,
//! details panel, search box and counter tracks draw from (protocol `Query`; docs/architecture.md).
//!
//! ```text
//! Trace + Index ─layout──▶ Layout      (groups, lanes, step marks; once per load)
//!               ─tiles───▶ TileSet + rect words (LOD rects of the lanes asked for)
//!               ─details─▶ SliceDetails (args, parent/children, launch links, flows)
//!               ─search──▶ SearchHit   (count, next / previous match)
//! finding::detect ─findings─▶ FindingData (evidence as slice references)
//! GpuIndex + Memory ─counters─▶ CounterSet (utilization, SM efficiency, memory per bucket)
//! ```
//!
//! Pure functions over read-only engine state; the engine caches what they are built from.
//! Rects travel as `u32` words (see [`protocol::RECT_WORDS`]) so a frame's worth of rects costs
//! one transferred buffer rather than a JSON array the main thread would have to parse.

pub mod counters;
pub mod details;
pub mod findings;
pub mod layout;
pub mod search;
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
