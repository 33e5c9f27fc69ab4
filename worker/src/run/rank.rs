//! Rank identity of one trace file, and grouping of ranks into runs.
//!
//! **Identity** ([`identify`]): `distributedInfo.rank` / `world_size` / `backend` from the
//! trace's top level (what Kineto writes for `torch.distributed` jobs); without a rank there,
//! the file name: the last `rank-N`, `rank_N`, `rankN`, `worker-N`, `worker_N` or `workerN`
//! (`rank` preferred; `worker3_step_12.1694...pt.trace.json` -> 3, `num_workers_4` is no rank).
//!
//! **Runs** ([`group`]): files with the same `(world_size, backend)` form one run; another
//! world size or backend is another run. Inside a run, a rank missing from `0..world_size`, a
//! rank found in several files, a rank outside the world and a file without any rank are
//! [`Diagnostic`]s stated plainly. Nothing is renumbered: of duplicate files the first by file
//! name is analysed and the others are named in the diagnostic.
//!
//! Cost: one small JSON decode per file; grouping O(f log f) for f files.

use super::summary::RankSummary;
use super::Diagnostic;

/// Where a rank number came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankSource {
    /// The trace's `distributedInfo`.
    DistributedInfo,
    /// The file name (`rank-3`, `worker3`).
    FileName,
    /// Neither has one.
    Unknown,
}

/// Who wrote a trace in a distributed run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankIdentity {
    /// Global rank.
    pub rank: Option<u32>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<u32>,
    /// `distributedInfo.backend` (`nccl`, `gloo`, ...).
    pub backend: Option<String>,
    /// Where `rank` came from.
    pub source: RankSource,
}

/// The identity of the trace in `file_name` with top-level keys `top_level` (raw JSON values).
pub fn identify(file_name: &str, top_level: &[(String, String)]) -> RankIdentity {
    let info = top_level
        .iter()
        .find(|(k, _)| k == "distributedInfo")
        .and_then(|(_, v)| serde_json::from_str::<serde_json::Value>(v).ok());
    let field = |key: &str| info.as_ref().and_then(|i| i.get(key)).and_then(as_u32);
    let backend = info
        .as_ref()
        .and_then(|i| i.get("backend"))
        .and_then(|b| b.as_str())
        .map(str::to_owned);
    let (rank, source) = match field("rank") {
        Some(r) => (Some(r), RankSource::DistributedInfo),
        None => match rank_from_name(file_name) {
            Some(r) => (Some(r), RankSource::FileName),
            None => (None, RankSource::Unknown),
        },
    };
    RankIdentity {
        rank,
        world_size: field("world_size"),
        backend,
        source,
    }
}

/// A JSON number or numeric string as u32.
fn as_u32(v: &serde_json::Value) -> Option<u32> {
    match v {
        serde_json::Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The rank in a file name (see the module rules), from its base name only.
pub fn rank_from_name(file_name: &str) -> Option<u32> {
    let base = file_name
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(file_name)
        .to_ascii_lowercase();
    ["rank", "worker"]
        .iter()
        .find_map(|key| last_number_after(&base, key))
}

/// The number after the last `key` (optionally followed by `-` or `_`) that has one.
fn last_number_after(text: &str, key: &str) -> Option<u32> {
    let bytes = text.as_bytes();
    let mut found = None;
    for (at, _) in text.match_indices(key) {
        let mut i = at + key.len();
        if matches!(bytes.get(i), Some(b'-' | b'_')) {
            i += 1;
        }
        let digits: &[u8] = bytes.get(i..).unwrap_or(&[]);
        let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        if let Some(number) = digits.get(..n).filter(|d| !d.is_empty()) {
            found = std::str::from_utf8(number)
                .ok()
                .and_then(|d| d.parse().ok())
                .or(found);
        }
    }
    found
}

/// Ranks of one run, before the cross-rank analysis.
#[derive(Clone, Debug)]
pub struct RunGroup {
    /// Shared `world_size` (`None` when the files do not say).
    pub world_size: Option<u32>,
    /// Shared backend.
    pub backend: Option<String>,
    /// One summary per rank, ascending rank, duplicates removed (see the module rules).
    pub ranks: Vec<RankSummary>,
    /// Missing / duplicate / out-of-range ranks, files left out.
    pub diagnostics: Vec<Diagnostic>,
}

/// Groups summaries into runs by `(world_size, backend)`, ordered by that key. Files without a
/// rank are left out with a diagnostic given to every run (and `shared` ones too).
pub fn group(mut summaries: Vec<RankSummary>, shared: &[Diagnostic]) -> Vec<RunGroup> {
    let mut common = shared.to_vec();
    summaries.retain(|s| {
        if s.identity.rank.is_none() {
            common.push(Diagnostic::new(
                "run_no_rank",
                format!(
                    "{:?}: no rank in distributedInfo or in the file name; left out",
                    s.file
                ),
            ));
        }
        s.identity.rank.is_some()
    });
    summaries.sort_by(|a, b| {
        let key = |s: &RankSummary| {
            (
                s.identity.world_size,
                s.identity.backend.clone(),
                s.identity.rank,
                s.file.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
    let mut groups: Vec<RunGroup> = Vec::new();
    for s in summaries {
        let same = groups.last().is_some_and(|g| {
            g.world_size == s.identity.world_size && g.backend == s.identity.backend
        });
        if !same {
            groups.push(RunGroup {
                world_size: s.identity.world_size,
                backend: s.identity.backend.clone(),
                ranks: Vec::new(),
                diagnostics: common.clone(),
            });
        }
        if let Some(g) = groups.last_mut() {
            g.ranks.push(s);
        }
    }
    for g in &mut groups {
        check_ranks(g);
    }
    groups
}

/// Removes duplicate ranks (keeping the first file) and states duplicates, ranks outside the
/// world and missing ranks.
fn check_ranks(g: &mut RunGroup) {
    let mut kept: Vec<RankSummary> = Vec::with_capacity(g.ranks.len());
    let mut dups: Vec<(u32, Vec<String>)> = Vec::new();
    for s in std::mem::take(&mut g.ranks) {
        match kept.last() {
            Some(prev) if prev.identity.rank == s.identity.rank => {
                let rank = prev.identity.rank.unwrap_or(u32::MAX);
                match dups.last_mut() {
                    Some((r, files)) if *r == rank => files.push(s.file),
                    _ => dups.push((rank, vec![prev.file.clone(), s.file])),
                }
            }
            _ => kept.push(s),
        }
    }
    for (rank, files) in dups {
        let Some((analysed, left_out)) = files.split_first() else {
            continue;
        };
        g.diagnostics.push(Diagnostic::new(
            "run_duplicate_rank",
            format!(
                "rank {rank} appears in {} files; analysed {analysed:?}, left out {left_out:?}",
                files.len()
            ),
        ));
    }
    let present: Vec<u32> = kept.iter().filter_map(|s| s.identity.rank).collect();
    if let Some(ws) = g.world_size {
        for &r in present.iter().filter(|&&r| r >= ws) {
            g.diagnostics.push(Diagnostic::new(
                "run_rank_out_of_range",
                format!("rank {r} is outside world size {ws}"),
            ));
        }
        let missing: Vec<u32> = (0..ws)
            .filter(|r| present.binary_search(r).is_err())
            .collect();
        if !missing.is_empty() {
            g.diagnostics.push(Diagnostic::new(
                "run_missing_ranks",
                format!(
                    "world size {ws} but {} of {ws} ranks loaded: ranks {} missing ({} files)",
                    ws as usize - missing.len(),
                    ranges(&missing),
                    missing.len()
                ),
            ));
        }
    }
    g.ranks = kept;
}

/// `4-7, 9` for sorted rank numbers.
pub fn ranges(sorted: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        // i <= j < len by the loop conditions.
        parts.push(if i == j {
            sorted[i].to_string()
        } else {
            format!("{}-{}", sorted[i], sorted[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_from_file_names() {
        assert_eq!(rank_from_name("rank-3.json.gz"), Some(3));
        assert_eq!(rank_from_name("rank12.json"), Some(12));
        assert_eq!(rank_from_name("worker3.pt.trace.json"), Some(3));
        assert_eq!(
            rank_from_name("param__dlrm_kineto__worker3_step_12.1694128201557.pt.trace.json"),
            Some(3)
        );
        assert_eq!(
            rank_from_name("resnet50_num_workers_4__worker0.pt.trace.json.gz"),
            Some(0)
        );
        assert_eq!(
            rank_from_name("graph_capture_rank_0.pt.trace.json.gz"),
            Some(0)
        );
        assert_eq!(rank_from_name("/runs/rank-9/trace.json"), None);
        assert_eq!(rank_from_name("trace.json"), None);
    }

    #[test]
    fn ranges_compress_runs() {
        assert_eq!(ranges(&[4, 5, 6, 7]), "4-7");
        assert_eq!(ranges(&[1, 3, 4, 9]), "1, 3-4, 9");
        assert_eq!(ranges(&[]), "");
    }

    #[test]
    fn distributed_info_wins_over_file_name() {
        let top = vec![(
            "distributedInfo".to_owned(),
            r#"{"backend":"nccl","rank":2,"world_size":8}"#.to_owned(),
        )];
        let id = identify("worker5.json", &top);
        assert_eq!(
            (id.rank, id.world_size, id.backend.as_deref(), id.source),
            (Some(2), Some(8), Some("nccl"), RankSource::DistributedInfo)
        );
        let id = identify("worker5.json", &[]);
        assert_eq!(
            (id.rank, id.world_size, id.source),
            (Some(5), None, RankSource::FileName)
        );
    }
}
