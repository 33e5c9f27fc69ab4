//! `kinetoscope publish LOGDIR OUT`: a static folder any static host serves as is, at any
//! sub-path: the site, a copy of every trace under `logs/` at its path in LOGDIR, `index.json`
//! and one `run.json` per run ([`super::index`]), with step counts. Every URL in it is relative, so the page,
//! `?url=logs/...` and `?run=logs/.../run.json` work wherever the folder is put.
//!
//! Traces are copied as stored (`.gz` stays gzip). Unreadable files are named in `index.json`
//! and not copied. OUT may exist; what publish writes there is its own:
//! - **It mirrors LOGDIR.** Files under `OUT/logs` that this scan did not list (a trace deleted
//!   from LOGDIR, the `run.json` of a run gone) are removed, then directories left empty;
//!   `keep` (`--keep`) leaves them. Hidden entries (`.name`, a host's `.htaccess`) are left
//!   alone: publish never writes one.
//! - **It never writes through a link.** Whatever stands where a file goes (a symlink, maybe
//!   to a file outside OUT, or a hard link) is removed and the file created anew with
//!   `create_new` (`O_EXCL`, which refuses a link); a symlink where a directory goes is replaced
//!   by a directory. Removing never follows a link either, so nothing outside OUT changes.
//! - **It refuses overlaps**: OUT inside LOGDIR (the next scan would list the copies), LOGDIR
//!   inside OUT, OUT and the site inside one another (publish would overwrite its own input).
//!   An OUT it created for a publish that failed is removed again while still empty.

use super::index::{self, LOGS, RUN_MANIFEST};
use super::scan;
use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

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
    /// Stale files removed from `OUT/logs` (none with `keep`).
    pub removed: usize,
}

/// Writes the folder; `keep` leaves files under `OUT/logs` that LOGDIR no longer has.
///
/// # Errors
/// LOGDIR is not a readable directory, OUT and LOGDIR or the site overlap, or a file cannot be
/// copied, written or removed (one line naming the file).
pub fn publish(logdir: &Path, site: &Path, out: &Path, keep: bool) -> Result<Published, String> {
    let root = super::log_dir(logdir)?;
    let site = site.canonicalize().map_err(|e| format!("cannot read {}: {e}", site.display()))?;
    let mut created = Vec::new();
    let published = create_dirs(out, &mut created)
        .and_then(|()| out.canonicalize().map_err(|e| format!("cannot read {}: {e}", out.display())))
        .and_then(|target| {
            refuse_overlap(&root, &site, &target).map_err(|what| format!("{what}: publish to a folder of its own (OUT is {})", out.display()))?;
            write(&root, &site, &target, keep)
        });
    if published.is_err() {
        for dir in created.iter().rev() {
            // Only while empty: a folder a failed copy left files in stays, to be looked at.
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
    }
    published
}

/// Creates directory `path` and its missing parents, each pushed to `created` once made.
fn create_dirs(path: &Path, created: &mut Vec<PathBuf>) -> Result<(), String> {
    let mut ancestors: Vec<&Path> = path.ancestors().filter(|p| !p.as_os_str().is_empty()).collect();
    ancestors.reverse();
    for dir in ancestors.into_iter().filter(|dir| !dir.is_dir()) {
        std::fs::create_dir(dir).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        created.push(dir.to_path_buf());
    }
    Ok(())
}

/// Why OUT (`target`) may not be written, all three canonical.
fn refuse_overlap(root: &Path, site: &Path, target: &Path) -> Result<(), String> {
    if target.starts_with(root) {
        return Err(format!("OUT is inside the log directory {}", root.display()));
    }
    if root.starts_with(target) {
        return Err(format!("the log directory {} is inside OUT", root.display()));
    }
    if target.starts_with(site) || site.starts_with(target) {
        return Err(format!("OUT and the site {} are inside one another", site.display()));
    }
    Ok(())
}

/// The folder's content, into `target` (canonical, checked).
fn write(root: &Path, site: &Path, target: &Path, keep: bool) -> Result<Published, String> {
    let mut listing = scan::scan(root)?;
    copy_dir(site, target)?;
    mark_page(&target.join("index.html"))?;
    let mut published = Published { runs: listing.runs.len(), unreadable: listing.unreadable.len(), ..Published::default() };
    let logs = target.join(LOGS);
    real_dir(&logs)?;
    let mut written = HashSet::new();
    for run in &mut listing.runs {
        let dir = run.dir.split('/').filter(|s| !s.is_empty()).try_fold(logs.clone(), |parent, name| {
            let dir = parent.join(name);
            real_dir(&dir).map(|()| dir)
        })?;
        for trace in &mut run.traces {
            let to = logs.join(&trace.path);
            let from = root.join(&trace.path);
            let counted = super::steps::count(&from).ok();
            trace.steps = counted.map(|c| c.steps);
            trace.writing |= counted.is_some_and(|c| !c.complete);
            published.bytes += copy_file(&from, &to)?;
            published.traces += 1;
            written.insert(to);
        }
        let manifest = dir.join(RUN_MANIFEST);
        write_json(&manifest, &index::run_manifest(run))?;
        written.insert(manifest);
    }
    write_json(&target.join("index.json"), &index::index(&listing, &super::root_name(root)))?;
    if !keep {
        published.removed = prune(&logs, &written)?;
    }
    Ok(published)
}

/// Marks the copied `index.html` as having a listing ([`super::page`]).
fn mark_page(path: &Path) -> Result<(), String> {
    let html = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    std::fs::write(path, super::page::with_gallery(&html)).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn write_json(path: &Path, value: &serde_json::Value) -> Result<(), String> {
    create(path)?.write_all(value.to_string().as_bytes()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Copies the files of `from` into `to`, recursively.
fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    real_dir(to)?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("cannot list {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", from.display()))?;
        let (source, dest) = (entry.path(), to.join(entry.file_name()));
        if source.is_dir() {
            copy_dir(&source, &dest)?;
        } else {
            copy_file(&source, &dest)?;
        }
    }
    Ok(())
}

/// Copies `from` to a new file `to` ([`create`]); the bytes copied.
fn copy_file(from: &Path, to: &Path) -> Result<u64, String> {
    let mut source = File::open(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    std::io::copy(&mut source, &mut create(to)?).map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

/// A new, empty file at `path`: whatever stood there (a file, a link) is removed first, and
/// `create_new` refuses a link made since, so nothing is written through one.
fn create(path: &Path) -> Result<File, String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => return Err(format!("cannot write {}: a directory is in the way", path.display())),
        Ok(_) => std::fs::remove_file(path).map_err(|e| format!("cannot replace {}: {e}", path.display()))?,
        // Nothing there, or it cannot be read: `create_new` says which.
        Err(_) => {}
    }
    File::options().write(true).create_new(true).open(path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Makes `path` a directory of its own: kept if it is one, else what stands there (a symlink,
/// a file) is replaced by one.
fn real_dir(path: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => std::fs::remove_file(path).map_err(|e| format!("cannot replace {}: {e}", path.display()))?,
        Err(_) => {}
    }
    std::fs::create_dir(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// Removes every file under `dir` not in `written` (hidden entries aside), then directories
/// left empty; the number of files removed. A symlink is removed itself, never followed.
fn prune(dir: &Path, written: &HashSet<PathBuf>) -> Result<usize, String> {
    let mut removed = 0;
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if kind.is_dir() {
            removed += prune(&path, written)?;
            if std::fs::read_dir(&path).is_ok_and(|mut e| e.next().is_none()) {
                std::fs::remove_dir(&path).map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
            }
        } else if !written.contains(&path) {
            std::fs::remove_file(&path).map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
            removed += 1;
        }
    }
    Ok(removed)
}
