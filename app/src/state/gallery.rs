//! The run gallery: the `index.json` that `kinetoscope serve` answers and `kinetoscope publish`
//! writes beside the page (format in `worker/src/serve/index.rs`), filtered by name.
//!
//! Inputs: [`GalleryState::parse`] with the listing's text, [`GalleryState::filter`] as the user
//! types. Output: [`GalleryState::visible`], runs newest first, each with the traces whose name
//! (or whose run's name) holds the filter. Links are page-relative `?url=` / `?run=` URLs, so
//! the gallery works at any sub-path. The listing is read again every few seconds while the
//! gallery shows (`control::gallery::poll_index`), so a running job's traces appear live.

use super::link::encode;
use serde::Deserialize;

/// `index.json`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Index {
    /// The log directory's name.
    #[serde(default)]
    pub root: String,
    /// Its runs (required: a JSON file without them is not a listing).
    pub runs: Vec<RunEntry>,
    /// Files that look like traces but could not be read.
    #[serde(default)]
    pub unreadable: Vec<Unreadable>,
}

/// One run: a directory of traces.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq, Hash)]
pub struct RunEntry {
    /// Its directory, relative to the log directory.
    pub name: String,
    /// Its `run.json`, relative to the page.
    pub manifest: String,
    /// Its newest trace's modification time, ms since the epoch.
    #[serde(default)]
    pub mtime_ms: u64,
    /// Its traces, by rank.
    pub traces: Vec<TraceEntry>,
}

/// One trace file.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq, Hash)]
pub struct TraceEntry {
    /// File name.
    pub name: String,
    /// URL relative to the page.
    pub url: String,
    /// Rank, when `distributedInfo` or the file name says.
    #[serde(default)]
    pub rank: Option<u32>,
    /// Bytes on disk.
    #[serde(default)]
    pub size: u64,
    /// Modification time, ms since the epoch.
    #[serde(default)]
    pub mtime_ms: u64,
    /// `ProfilerStep`s, once the listing knows them.
    #[serde(default)]
    pub steps: Option<u32>,
    /// Still being written (growing, or its JSON / gzip not complete yet): it opens as what is
    /// complete so far.
    #[serde(default)]
    pub writing: bool,
}

/// A file the listing could not read.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Unreadable {
    /// Path in the log directory.
    pub path: String,
    /// Why.
    pub reason: String,
}

/// The gallery's state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GalleryState {
    /// The listing, once read.
    pub index: Option<Index>,
    /// The name filter as typed.
    pub filter: String,
}

impl GalleryState {
    /// Reads `index.json`; runs are put newest first whatever order the file has.
    ///
    /// # Errors
    /// The text is not a listing (the serde message).
    pub fn parse(text: &str) -> Result<Index, String> {
        let mut index: Index = serde_json::from_str(text).map_err(|e| format!("index.json: {e}"))?;
        index.runs.sort_by(|a, b| b.mtime_ms.cmp(&a.mtime_ms).then_with(|| a.name.cmp(&b.name)));
        Ok(index)
    }

    /// The runs to show: a run whose name holds the filter with all its traces, else the runs
    /// with the traces whose name holds it (case-insensitive).
    pub fn visible(&self) -> Vec<RunEntry> {
        let Some(index) = &self.index else {
            return Vec::new();
        };
        let needle = self.filter.trim().to_lowercase();
        index
            .runs
            .iter()
            .filter_map(|run| {
                if needle.is_empty() || run.name.to_lowercase().contains(&needle) {
                    return Some(run.clone());
                }
                let traces: Vec<TraceEntry> =
                    run.traces.iter().filter(|t| t.name.to_lowercase().contains(&needle)).cloned().collect();
                (!traces.is_empty()).then(|| RunEntry { traces, ..run.clone() })
            })
            .collect()
    }
}

/// The page link that opens a trace.
pub fn trace_href(url: &str) -> String {
    format!("?url={}", encode(url))
}

/// The page link that opens a run.
pub fn run_href(manifest: &str) -> String {
    format!("?run={}", encode(manifest))
}

/// `YYYY-MM-DD HH:MM` (UTC) of ms since the epoch.
pub fn date(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, day_secs) = (secs / 86_400, secs % 86_400);
    // Days to a civil date (H. Hinnant's algorithm, shifted so March starts the year).
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}", day_secs / 3600, day_secs % 3600 / 60)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const INDEX: &str = r#"{"schema": "kinetoscope.index", "root": "log", "runs": [
        {"name": "old", "manifest": "logs/old/run.json", "mtime_ms": 1, "traces": [
            {"name": "rank-0.json", "url": "logs/old/rank-0.json", "rank": 0, "size": 10, "mtime_ms": 1}]},
        {"name": "new job", "manifest": "logs/new%20job/run.json", "mtime_ms": 2, "traces": [
            {"name": "a.json", "url": "logs/new%20job/a.json", "rank": null, "size": 5, "mtime_ms": 2, "writing": true},
            {"name": "rank-1.json", "url": "logs/new%20job/rank-1.json", "rank": 1, "size": 5, "mtime_ms": 2}]}],
        "unreadable": [{"path": "x.json", "reason": "cannot open"}]}"#;

    #[test]
    fn newest_first_and_filtered_by_run_or_trace_name() {
        let index = GalleryState::parse(INDEX).unwrap();
        assert_eq!(index.runs[0].name, "new job");
        assert_eq!(index.unreadable[0].reason, "cannot open");
        assert!(index.runs[0].traces[0].writing && !index.runs[1].traces[0].writing);
        let mut g = GalleryState { index: Some(index), filter: String::new() };
        assert_eq!(g.visible().len(), 2);
        g.filter = "RANK".into();
        let visible = g.visible();
        assert_eq!(visible.iter().map(|r| r.traces.len()).collect::<Vec<_>>(), vec![1, 1]);
        g.filter = "old".into();
        assert_eq!(g.visible()[0].traces.len(), 1);
        g.filter = "zzz".into();
        assert!(g.visible().is_empty());
    }

    #[test]
    fn links_survive_the_query_string() {
        assert_eq!(trace_href("logs/new%20job/a.json"), "?url=logs%2Fnew%2520job%2Fa.json");
        assert_eq!(run_href("logs/run.json"), "?run=logs%2Frun.json");
        assert!(GalleryState::parse("[]").is_err());
        assert!(GalleryState::parse(r#"{"name": "some other index.json"}"#).is_err());
    }

    #[test]
    fn dates_in_utc() {
        assert_eq!(date(0), "1970-01-01 00:00");
        assert_eq!(date(1_700_000_000_000), "2023-11-14 22:13");
        assert_eq!(date(951_782_400_000), "2000-02-29 00:00");
    }
}
