//! Rank identity of one trace file: `distributedInfo.rank` / `world_size` / `backend` from the
//! trace's top level (what Kineto writes for `torch.distributed` jobs); without a rank there,
//! the file name: the last `rank-N`, `rank_N`, `rankN`, `worker-N`, `worker_N` or `workerN`
//! (`rank` preferred; `worker3_step_12.1694...pt.trace.json` -> 3, `num_workers_4` is no rank).
//! The summaries carry it ([`super::summary`]); [`super::grouping`] groups them into runs by it.
//!
//! Cost: one small JSON decode per file.

/// Where a rank number came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RankSource {
    /// The trace's `distributedInfo`.
    DistributedInfo,
    /// The file name (`rank-3`, `worker3`).
    FileName,
    /// Neither has one.
    Unknown,
}

/// Who wrote a trace in a distributed run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
