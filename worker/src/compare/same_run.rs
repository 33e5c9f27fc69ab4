//! Whether the two traces of a comparison are ranks of one run: both name a rank in
//! `distributedInfo` and the ranks differ, with the same world size and backend, and the same
//! step numbers (`ProfilerStep#N`). Their difference is then not a change someone made: the
//! ranks ran the same program at the same time, and a rank whose collectives took less time
//! waited less for the others. The verdict says so instead of calling either an improvement.

use super::TraceFigures;
use crate::run::rank::{identify, RankIdentity, RankSource};
use crate::model::Trace;

/// Two ranks of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SameRun {
    /// The baseline's rank.
    pub base_rank: u32,
    /// The candidate's rank.
    pub cand_rank: u32,
    /// The run's world size.
    pub world_size: u32,
    /// The run's backend (`nccl`, `gloo`, ...), when named.
    pub backend: Option<String>,
}

/// The rank identity in `trace`'s `distributedInfo`, if it names a rank (a rank guessed from a
/// file name says too little to call two files one run).
pub fn distributed_info(trace: &Trace) -> Option<RankIdentity> {
    Some(identify("", &trace.top_level)).filter(|id| id.source == RankSource::DistributedInfo)
}

/// `Some` when `base` and `cand` are different ranks of one run (module rules).
pub fn same_run(base: &TraceFigures, cand: &TraceFigures) -> Option<SameRun> {
    let (b, c) = (base.rank.as_ref()?, cand.rank.as_ref()?);
    let (base_rank, cand_rank) = (b.rank?, c.rank?);
    let world_size = b.world_size?;
    let one_run = base_rank != cand_rank
        && c.world_size == Some(world_size)
        && b.backend == c.backend
        && base.step_numbers == cand.step_numbers;
    one_run.then(|| SameRun { base_rank, cand_rank, world_size, backend: b.backend.clone() })
}

impl SameRun {
    /// `0 and 1 of 8, nccl`.
    pub fn text(&self) -> String {
        let backend = self.backend.as_ref().map_or_else(String::new, |b| format!(", {b}"));
        format!("{} and {} of {}{backend}", self.base_rank, self.cand_rank, self.world_size)
    }
}
