//! The collective instance a kernel selected in the stacked ranks view belongs to: the slice's
//! start and stream (its lane's tid, as the rank summary records them) looked up in the run
//! analysis ([`crate::ranks::stack`]).

use crate::model::{CatClass, Trace};
use crate::ranks::RunState;
use protocol::CollectiveMatch;

/// The instance of kernel `slice` of `trace` (rank `rank` of `run`); `None` when the slice is
/// not a kernel of a matched collective.
pub fn instance(trace: &Trace, run: &RunState, rank: u32, slice: u32) -> Option<CollectiveMatch> {
    let i = slice as usize;
    let s = &trace.slices;
    if trace.class(*s.cat.get(i)?) != CatClass::Kernel {
        return None;
    }
    let lane = trace.lanes.get(s.lane.get(i)?.0 as usize)?;
    run.collective(rank, &trace.strings.get(lane.tid), *s.start_ns.get(i)?)
}
