//! Runs and ranks: open the traces of a distributed run (one Kineto trace per rank), find the
//! slow rank and say why. docs/runs.md documents the outputs and the definitions.
//!
//! ```text
//! per file:  Session ─summary::summarize─▶ RankSummary   (model dropped right after)
//! per run:   grouping::group ─▶ RunGroup ─collective::match_collectives─▶ Matching
//!            ─clock::estimate─▶ Clock ─collective::arrivals─▶ waits
//!            ─straggler::stragglers─▶ Straggler rows ─finding::detect─▶ RunFinding
//!            ─joined::join─▶ paths joined at collectives
//! output:    json (object, NDJSON rows), text
//! ```
//!
//! - [`rank`]: rank identity (`distributedInfo`, else the file name); [`grouping`]: ranks
//!   grouped into runs, missing / duplicate ranks.
//! - [`summary`]: the per-rank summary (steps, GPU utilization, peak memory, [`temporal`]
//!   breakdown, collectives with the [`window`] before each).
//! - [`collective`]: matching instances across ranks; arrivals and waits.
//! - [`clock`]: offsets from collective ends; as recorded vs aligned.
//! - [`straggler`], [`finding`]: who arrived last, the waiting it caused, why; run rules.
//!   [`delay`]: how late the straggler started and reached its worst collective, and why.
//! - [`joined`]: each rank's critical paths with its waits in collectives taken over by the
//!   last arrivers' paths.
//! - [`json`], [`text`], [`markdown`]: outputs. [`load`]: the native entry (files, directories, threads).
//!
//! Everything but `load` is plain analysis over summaries: no clock, file or thread.

pub mod clock;
pub mod collective;
pub mod delay;
pub mod finding;
pub mod grouping;
pub mod joined;
pub mod json;
pub mod markdown;
#[cfg(not(target_arch = "wasm32"))]
pub mod load;
pub mod rank;
pub mod straggler;
pub mod summary;
pub mod temporal;
pub mod text;
pub mod window;

pub use clock::ClockChoice;
#[cfg(not(target_arch = "wasm32"))]
pub use load::{run_files, summarize_files, FileError};
pub use summary::{summarize, RankSummary};

/// The rank of the run member at position `p` (positions index a run's ranks), if known.
pub(crate) fn rank_at(ranks: &[RankSummary], p: usize) -> Option<u32> {
    ranks.get(p).and_then(|r| r.identity.rank)
}

/// A problem with the run's inputs, stated plainly (missing ranks, count mismatches, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// snake_case kind, prefixed `run_` (`run_missing_ranks`, `run_duplicate_rank`, ...).
    pub kind: &'static str,
    /// One line for a human.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic of `kind`.
    pub fn new(kind: &'static str, message: String) -> Self {
        Self { kind, message }
    }
}

/// The analysis of one run.
#[derive(Clone, Debug)]
pub struct RunAnalysis {
    /// World size shared by the ranks.
    pub world_size: Option<u32>,
    /// Backend shared by the ranks.
    pub backend: Option<String>,
    /// Ranks, ascending (the "run rank positions" of the other fields index this).
    pub ranks: Vec<RankSummary>,
    /// Collective instances matched across ranks.
    pub matching: collective::Matching,
    /// Clock offsets and the time axis used.
    pub clock: clock::Clock,
    /// Arrivals and waits per instance (same order as `matching.instances`).
    pub times: Vec<collective::InstanceTimes>,
    /// One row per rank, most caused wait first.
    pub stragglers: Vec<straggler::Straggler>,
    /// Each rank's paths joined at collectives (same order as `ranks`).
    pub joined: Vec<joined::JoinedPath>,
    /// Rank x step heatmap cells.
    pub steps: Vec<finding::StepCell>,
    /// Run findings.
    pub findings: Vec<finding::RunFinding>,
    /// Everything stated about the inputs.
    pub diagnostics: Vec<Diagnostic>,
}

/// Groups `summaries` into runs and analyses each; `shared` diagnostics (unreadable files)
/// are given to every run. Runs ordered by (world size, backend).
pub fn analyze(
    summaries: Vec<RankSummary>,
    shared: &[Diagnostic],
    clock: ClockChoice,
) -> Vec<RunAnalysis> {
    grouping::group(summaries, shared)
        .into_iter()
        .map(|g| analyze_group(g, clock))
        .collect()
}

fn analyze_group(g: grouping::RunGroup, choice: ClockChoice) -> RunAnalysis {
    let mut diagnostics = g.diagnostics;
    let ranks = g.ranks;
    let matching = collective::match_collectives(&ranks);
    diagnostics.extend(matching.diagnostics.iter().cloned());
    let clock = clock::estimate(&ranks, &matching, choice, &mut diagnostics);
    let times = collective::arrivals(&ranks, &matching, &clock.applied_ns);
    let stragglers = straggler::stragglers(&ranks, &matching, &times, &clock.applied_ns);
    let findings = finding::detect(&ranks, &matching, &times, &stragglers);
    let joined = joined::join(&ranks, &matching, &times, &clock.applied_ns);
    RunAnalysis {
        world_size: g.world_size,
        backend: g.backend,
        steps: finding::step_cells(&ranks, &matching, &times),
        ranks,
        matching,
        clock,
        times,
        stragglers,
        joined,
        findings,
        diagnostics,
    }
}

/// Output format of [`render`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The human report ([`text::report`]).
    Text,
    /// One JSON object per run ([`json::run_json`], stamped `kinetoscope.run`); an array when
    /// there are several runs.
    Json,
    /// NDJSON rows ([`json::ndjson`]).
    Ndjson,
    /// GitHub Markdown ([`markdown::report`]).
    Markdown,
}

impl Format {
    /// `text`, `json`, `ndjson` or `md`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "text" => Some(Self::Text),
            "json" => Some(Self::Json),
            "ndjson" => Some(Self::Ndjson),
            "md" => Some(Self::Markdown),
            _ => None,
        }
    }
}

/// Renders analysed runs in `format`.
pub fn render(runs: &[RunAnalysis], format: Format) -> String {
    match format {
        Format::Text => runs.iter().map(text::report).collect::<Vec<_>>().join("\n"),
        Format::Markdown => runs.iter().map(markdown::report).collect::<Vec<_>>().join("\n"),
        Format::Json => {
            use crate::report::schema::{stamp, Schema};
            let values: Vec<serde_json::Value> = runs.iter().map(json::run_json).collect();
            let stamped: Vec<_> = values.iter().map(|v| stamp(Schema::Run, v)).collect();
            let text = match stamped.as_slice() {
                [one] => serde_json::to_string_pretty(one),
                many => serde_json::to_string_pretty(many),
            };
            let mut s = text.unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Ndjson => runs
            .iter()
            .enumerate()
            .map(|(i, r)| json::ndjson(i, r))
            .collect(),
    }
}
