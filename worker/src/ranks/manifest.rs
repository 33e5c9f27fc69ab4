//! The run manifest the page's `?run=URL` names: the trace URLs of a run's ranks.

/// One entry of a run manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestRank {
    /// The trace's URL, relative to the manifest (or absolute).
    pub url: String,
    /// The rank the manifest states, if any (the analysis reads the rank from the trace's
    /// `distributedInfo` or its file name, as `kinetoscope run` does).
    pub rank: Option<u32>,
}

/// Reads a run manifest: `{"ranks": [{"url": "rank-0.json.gz", "rank": 0}, ...]}` (a bare
/// string is a URL too). Entries keep their order.
///
/// # Errors
/// Not JSON, no `ranks` array, an entry without a URL, or no entry at all.
pub fn manifest(text: &str) -> Result<Vec<ManifestRank>, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("the run manifest is not JSON: {e}"))?;
    let ranks = value
        .get("ranks")
        .and_then(|r| r.as_array())
        .ok_or("the run manifest has no \"ranks\" array")?;
    let mut out = Vec::with_capacity(ranks.len());
    for (i, entry) in ranks.iter().enumerate() {
        let url = entry.as_str().or_else(|| entry.get("url").and_then(|u| u.as_str()));
        let Some(url) = url.filter(|u| !u.trim().is_empty()) else {
            return Err(format!("entry {i} of the run manifest has no \"url\""));
        };
        let rank = entry.get("rank").and_then(|r| r.as_u64()).and_then(|r| u32::try_from(r).ok());
        out.push(ManifestRank { url: url.to_owned(), rank });
    }
    if out.is_empty() {
        return Err("the run manifest lists no rank".into());
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn manifest_entries_in_order() {
        let m = manifest(r#"{"ranks": [{"url": "rank-1.json.gz", "rank": 1}, "rank-0.json", {"url": "a/b.json"}]}"#).unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m[0], ManifestRank { url: "rank-1.json.gz".into(), rank: Some(1) });
        assert_eq!(m[1].url, "rank-0.json");
        assert_eq!(m[2].rank, None);
    }

    #[test]
    fn bad_manifests_say_why() {
        assert!(manifest("nope").unwrap_err().contains("not JSON"));
        assert!(manifest("{}").unwrap_err().contains("\"ranks\""));
        assert!(manifest(r#"{"ranks": [{"rank": 0}]}"#).unwrap_err().contains("entry 0"));
        assert!(manifest(r#"{"ranks": []}"#).unwrap_err().contains("no rank"));
    }
}
