//! Grouping of rank summaries into runs, before the cross-rank analysis ([`group`]).
//!
//! Files with the same `(world_size, backend)` (their [`super::rank`] identity) form one run;
//! another world size or backend is another run. Inside a run, a rank missing from
//! `0..world_size`, a rank found in several files, a rank outside the world and a file without
//! any rank are [`Diagnostic`]s stated plainly. Nothing is renumbered: of duplicate files the
//! first by file name is analysed and the others are named in the diagnostic.
//!
//! Cost: O(f log f) for f files.

use super::summary::RankSummary;
use super::Diagnostic;

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
    fn ranges_compress_runs() {
        assert_eq!(ranges(&[4, 5, 6, 7]), "4-7");
        assert_eq!(ranges(&[1, 3, 4, 9]), "1, 3-4, 9");
        assert_eq!(ranges(&[]), "");
    }
}
