//! `kinetoscope publish LOGDIR OUT`: a static folder any static host serves as is, at any
//! sub-path: the site, a copy of every trace under `logs/` at its path in LOGDIR, `index.json`
//! and one `run.json` per run ([`super::index`]), with step counts. Every URL in it is relative, so the page,
//! `?url=logs/...` and `?run=logs/.../run.json` work wherever the folder is put.
//!
//! Traces are copied as stored (`.gz` stays gzip). Unreadable files are named in `index.json`
//! and not copied. OUT may exist (files are overwritten) but must not lie inside LOGDIR, or the
//! next scan would list the copies.

use super::index::{self, LOGS, RUN_MANIFEST};
use super::scan;
use std::path::Path;

/// What a publish wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Published {
    /// Runs (directories with traces).
    pub runs: usize,
    /// Trace files copied.
    pub traces: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Candidates left out because they could not be read.
    pub unreadable: usize,
}

/// Writes the folder.
///
/// # Errors
/// LOGDIR cannot be scanned, OUT lies inside it, or a file cannot be copied or written (one line
/// naming the file).
pub fn publish(logdir: &Path, site: &Path, out: &Path) -> Result<Published, String> {
    let root = logdir.canonicalize().map_err(|e| format!("cannot read {}: {e}", logdir.display()))?;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let target = out.canonicalize().map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    if target.starts_with(&root) {
        return Err(format!("{} is inside {}: publish to a folder outside it", out.display(), logdir.display()));
    }
    let mut listing = scan::scan(&root)?;
    copy_dir(site, &target)?;
    let mut published = Published { runs: listing.runs.len(), unreadable: listing.unreadable.len(), ..Published::default() };
    let logs = target.join(LOGS);
    for run in &mut listing.runs {
        let dir = logs.join(&run.dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for trace in &mut run.traces {
            let to = logs.join(&trace.path);
            let from = root.join(&trace.path);
            trace.steps = super::steps::count(&from).ok();
            published.bytes += std::fs::copy(&from, &to).map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))?;
            published.traces += 1;
        }
        write_json(&dir.join(RUN_MANIFEST), &index::run_manifest(run))?;
    }
    write_json(&target.join("index.json"), &index::index(&listing, &super::root_name(&root)))?;
    Ok(published)
}

fn write_json(path: &Path, value: &serde_json::Value) -> Result<(), String> {
    std::fs::write(path, value.to_string()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Copies the files of `from` into `to`, recursively.
fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("cannot list {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", from.display()))?;
        let (source, dest) = (entry.path(), to.join(entry.file_name()));
        if source.is_dir() {
            copy_dir(&source, &dest)?;
        } else {
            std::fs::copy(&source, &dest).map_err(|e| format!("cannot copy {} to {}: {e}", source.display(), dest.display()))?;
        }
    }
    Ok(())
}
