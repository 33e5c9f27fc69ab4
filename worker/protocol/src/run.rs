//! A distributed run on the wire: the ranks being loaded, and the run analysis answered by
//! `Query::Run`. [`RunData`] mirrors `kinetoscope run --json` key by key (docs/runs.md): the
//! worker fills it from that JSON, so the page shows the CLI's numbers. Times are µs (f64),
//! as in that JSON. Every field has a default, so a key the engine adds later is ignored and
//! one it drops reads as empty.

use serde::{Deserialize, Serialize};

/// The run analysis (`kinetoscope run --json`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunData {
    /// `distributedInfo.world_size` shared by the ranks.
    pub world_size: Option<u32>,
    /// `distributedInfo.backend`.
    pub backend: Option<String>,
    /// The rank the `straggler-rank` finding names (marked on the heatmap).
    pub straggler: Option<u32>,
    /// The time axis the collective times use (`aligned`, `recorded`, ...).
    pub clock: Option<String>,
    /// One row per rank, ascending.
    pub ranks: Vec<RunRank>,
    /// Rank x step heatmap cells.
    pub steps: Vec<RunStep>,
    /// Collectives matched across ranks.
    pub collectives: RunCollectives,
    /// Who arrived last at collectives, the wait it caused, and why.
    pub stragglers: Vec<RunStraggler>,
    /// Estimated clock offset per rank.
    pub offsets_us: Vec<RunOffset>,
    /// Run findings.
    pub findings: Vec<RunFinding>,
    /// Problems with the inputs (missing / duplicate ranks, mismatched collectives, ...).
    pub diagnostics: Vec<RunDiagnostic>,
}

/// One rank's row of the rank table.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunRank {
    /// Global rank.
    pub rank: Option<u32>,
    /// The file it was loaded from.
    pub file: String,
    /// Steps found.
    pub steps: u64,
    /// Mean step duration, µs.
    pub step_mean_us: Option<f64>,
    /// 95th percentile step duration, µs.
    pub step_p95_us: Option<f64>,
    /// HTA temporal breakdown, µs.
    pub breakdown_us: RunBreakdown,
    /// Communication overlapped by computation, percent.
    pub overlap_pct: Option<f64>,
    /// The device whose utilization is shown.
    pub gpu_device: Option<i64>,
    /// GPU utilization, percent 0-100.
    pub gpu_utilization_pct: Option<f64>,
    /// Peak allocated GPU memory, bytes.
    pub peak_memory_bytes: Option<f64>,
    /// Collective kernels on this rank.
    pub collectives: u64,
}

/// The temporal breakdown of one rank, µs.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunBreakdown {
    /// All kernel time.
    pub kernel_time: f64,
    /// Compute kernels.
    pub compute: f64,
    /// Communication not overlapped by compute.
    pub comm_non_overlapped: f64,
    /// Communication overlapped by compute.
    pub comm_overlapped: f64,
    /// Memcpy / memset.
    pub memory: f64,
    /// GPU idle.
    pub idle: f64,
}

/// One heatmap cell: a rank's step.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunStep {
    /// Global rank.
    pub rank: Option<u32>,
    /// Step number.
    pub step: u64,
    /// Step duration, µs.
    pub dur_us: f64,
    /// Much slower than this step on the other ranks.
    pub outlier: bool,
    /// Time it waited in collectives during the step, µs.
    pub wait_us: f64,
}

/// Collective matching across ranks.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunCollectives {
    /// How instances were keyed.
    pub mode: Option<String>,
    /// Instances matched across ranks.
    pub matched: u64,
    /// Collectives left unmatched.
    pub unmatched: u64,
    /// Per rank.
    pub per_rank: Vec<RunCollectiveRank>,
}

/// One rank's collectives.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunCollectiveRank {
    /// Global rank.
    pub rank: Option<u32>,
    /// Collective kernels.
    pub collectives: u64,
    /// Of which matched.
    pub matched: u64,
    /// Instances this rank reached last.
    pub last_arrivals: u64,
    /// Time this rank waited in collectives for the last one, µs.
    pub wait_us: f64,
}

/// A straggler row.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunStraggler {
    /// Global rank.
    pub rank: Option<u32>,
    /// Instances it reached last.
    pub last_arrivals: u64,
    /// Wait it caused the other ranks, µs.
    pub caused_wait_us: f64,
    /// Wait it did itself, µs.
    pub waited_us: f64,
    /// Instances it delayed.
    pub delayed_count: u64,
    /// The worst of them.
    pub delayed: Vec<RunDelayed>,
    /// What ran longer on it before those collectives.
    pub why: RunWhy,
}

/// A collective a straggler delayed.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunDelayed {
    /// Instance number.
    pub collective: u64,
    /// Instance key.
    pub key: Option<String>,
    /// Step.
    pub step: Option<u64>,
    /// Position in the step.
    pub index_in_step: u64,
    /// Wait caused, µs.
    pub caused_wait_us: f64,
    /// Arrival spread, µs.
    pub spread_us: f64,
}

/// Kernels and ops that ran longer on a straggler, after its delay.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunWhy {
    /// How late it was at the collective it delayed most (said first).
    pub delay: Option<RunDelay>,
    /// Kernels.
    pub kernels: Vec<RunExtra>,
    /// Ops.
    pub ops: Vec<RunExtra>,
}

/// A straggler's delay at the collective it delayed most.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunDelay {
    /// The sentence, as the CLI writes it.
    pub text: String,
    /// Step.
    pub step: Option<u64>,
    /// Its step start minus the other ranks' median, µs.
    pub start_offset_us: Option<f64>,
    /// Its arrival minus the other ranks' median, µs.
    pub late_us: f64,
    /// The largest gap before the collective.
    pub cause: Option<RunCause>,
}

/// What took longest on a straggler before a collective, beyond the other ranks.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunCause {
    /// `data_loading` or `op`.
    pub kind: String,
    /// `data loading` or `op "name"`.
    pub label: String,
    /// Own time minus the others' median, µs.
    pub excess_us: f64,
}

/// A name and the extra time it took, µs.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunExtra {
    /// Kernel or op name.
    pub name: String,
    /// Extra time, µs.
    pub extra_us: f64,
}

/// A rank's estimated clock offset.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunOffset {
    /// Global rank.
    pub rank: Option<u32>,
    /// Offset, µs (`None`: not estimable).
    pub offset_us: Option<f64>,
}

/// A run finding.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunFinding {
    /// Rule id.
    pub rule: String,
    /// One line.
    pub title: String,
    /// The numbers compared.
    pub why: String,
    /// Where to look.
    pub evidence: Vec<RunEvidence>,
}

/// Where a run finding points.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunEvidence {
    /// Global rank.
    pub rank: Option<u32>,
    /// Step.
    pub step: Option<u64>,
    /// Collective instance.
    pub collective: Option<u64>,
}

/// A problem with the run's inputs.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunDiagnostic {
    /// `run_missing_ranks`, `run_duplicate_rank`, ...
    pub kind: String,
    /// One line for a human.
    pub message: String,
}

/// One file of a run, as the worker reports it once loaded (`FromWorker::RankLoaded`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RankInfo {
    /// Position in the files given.
    pub index: u32,
    /// File name.
    pub name: String,
    /// Its rank (`distributedInfo` or the file name), if any.
    pub rank: Option<u32>,
    /// Steps found.
    pub steps: u64,
    /// Why it could not be loaded (`None`: loaded).
    pub error: Option<String>,
    /// The load worker's wasm memory after this file, bytes (a high-water mark: wasm memory
    /// never shrinks), when the worker knows it.
    pub memory_bytes: Option<u64>,
    /// The parse worker that loaded it whole, beside the load worker's own loads (`None`: the
    /// load worker did).
    pub parse_worker: Option<u32>,
}

/// The most rank models [`crate::ToWorker::HoldRanks`] holds at once (the stacked ranks
/// timeline shows at most this many ranks; each model costs about its JSON's size).
pub const MAX_HELD_RANKS: usize = 8;

/// One collective instance matched across the ranks of a run ([`crate::Answer::Collective`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CollectiveMatch {
    /// The instance's key in `kinetoscope run --json` (`stream 84 #3`, `pg 0 seq 12`).
    pub key: String,
    /// Kernel name.
    pub name: String,
    /// Step of the instance.
    pub step: Option<u64>,
    /// Position among its stream's collectives of the step.
    pub index_in_step: u32,
    /// The rank that arrived last.
    pub last_rank: Option<u32>,
    /// Every rank that ran it, by rank.
    pub members: Vec<CollectiveMember>,
}

/// One rank's kernel of a [`CollectiveMatch`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CollectiveMember {
    /// Global rank.
    pub rank: u32,
    /// Kernel start, ns in that rank's own trace time (as its layout and tiles).
    pub start_ns: i64,
    /// Kernel end, ns in that rank's trace time.
    pub end_ns: i64,
    /// Arrival order: 0 arrived first.
    pub arrival: u32,
    /// Time it waited for the last arriver, µs.
    pub wait_us: f64,
}
