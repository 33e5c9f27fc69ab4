//! The two manifests `serve` answers and `publish` writes, in one format for both: `index.json`
//! beside the page (every run and trace, URLs relative to it) and one `run.json` per run (the
//! page's `?run=` manifest, `crate::ranks::manifest`, URLs relative to it).
//!
//! Traces live under [`LOGS`] in both layouts, at their path relative to the log directory, so
//! `logs/job42/rank-0.json.gz` means the same file on `kinetoscope serve` and on a published
//! folder; the run manifest of directory `job42` is `logs/job42/run.json`. URL path segments are
//! percent-encoded (a space or `#` in a directory name stays one segment).

use super::scan::{Listing, Run};
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
use serde_json::{json, Value};

/// The URL prefix (and published folder) of the traces.
pub const LOGS: &str = "logs";
/// The name of each run's manifest in its directory.
pub const RUN_MANIFEST: &str = "run.json";

/// What a URL path segment must escape: controls, space and the characters URLs give meaning.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// `path` (`/`-separated) as a URL path, each segment percent-encoded.
pub fn url_path(path: &str) -> String {
    path.split('/')
        .map(|s| utf8_percent_encode(s, SEGMENT).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// The URL of `rel` (a path under the log directory) relative to the page.
fn logs_url(rel: &str) -> String {
    if rel.is_empty() {
        LOGS.to_owned()
    } else {
        format!("{LOGS}/{}", url_path(rel))
    }
}

/// A run's name for people: its directory, or `root` for the log directory itself.
fn run_name<'a>(run: &'a Run, root: &'a str) -> &'a str {
    if run.dir.is_empty() {
        root
    } else {
        &run.dir
    }
}

/// `index.json`: `root` is the log directory's name, shown for a run at its top level.
pub fn index(listing: &Listing, root: &str) -> Value {
    let runs: Vec<Value> = listing
        .runs
        .iter()
        .map(|run| {
            let traces: Vec<Value> = run
                .traces
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name(),
                        "url": logs_url(&t.path),
                        "rank": t.rank,
                        "size": t.size,
                        "mtime_ms": t.mtime_ms,
                        "steps": t.steps,
                        "writing": t.writing,
                    })
                })
                .collect();
            json!({
                "name": run_name(run, root),
                "manifest": format!("{}/{RUN_MANIFEST}", logs_url(&run.dir)),
                "mtime_ms": run.mtime_ms(),
                "traces": traces,
            })
        })
        .collect();
    let unreadable: Vec<Value> =
        listing.unreadable.iter().map(|u| json!({"path": u.path, "reason": u.reason})).collect();
    json!({"schema": "kinetoscope.index", "root": root, "runs": runs, "unreadable": unreadable})
}

/// A run's `run.json`: its traces by rank, URLs relative to the run's directory.
pub fn run_manifest(run: &Run) -> Value {
    let ranks: Vec<Value> = run
        .traces
        .iter()
        .map(|t| match t.rank {
            Some(rank) => json!({"url": url_path(t.name()), "rank": rank}),
            None => json!({"url": url_path(t.name())}),
        })
        .collect();
    json!({ "ranks": ranks })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::scan::TraceFile;
    use super::*;

    fn run(dir: &str) -> Run {
        let trace = |path: &str, rank| TraceFile { path: path.into(), rank, size: 10, mtime_ms: 5, steps: None, writing: false };
        let prefix = if dir.is_empty() { String::new() } else { format!("{dir}/") };
        Run { dir: dir.into(), traces: vec![trace(&format!("{prefix}r#0.json"), Some(0)), trace(&format!("{prefix}x.json"), None)] }
    }

    #[test]
    fn urls_are_relative_and_encoded() {
        let listing = Listing { runs: vec![run("job 1"), run("")], unreadable: vec![] };
        let index = index(&listing, "logdir");
        assert_eq!(index["runs"][0]["manifest"], "logs/job%201/run.json");
        assert_eq!(index["runs"][0]["traces"][0]["url"], "logs/job%201/r%230.json");
        assert_eq!(index["runs"][1]["name"], "logdir");
        assert_eq!(index["runs"][1]["manifest"], "logs/run.json");
        let manifest = run_manifest(&run("a"));
        let parsed = crate::ranks::manifest::manifest(&manifest.to_string()).unwrap();
        assert_eq!(parsed[0].url, "r%230.json");
        assert_eq!(parsed[0].rank, Some(0));
        assert_eq!(parsed[1].rank, None);
    }
}
