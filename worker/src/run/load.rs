//! The native entry of the run analysis: files and directories in, summaries or a rendered
//! report out. The only part of `run` that reads files and spawns threads (the analysis itself
//! takes summaries); not built for wasm, where the browser passes bytes.
//!
//! **Bounded memory.** At most `threads` ranks are loaded at once: each thread takes the next
//! file from an atomic index, reads and loads it through [`Engine::load`], keeps the
//! [`RankSummary`] and drops the file bytes and the model before the next. Peak memory is about
//! `threads` x (file + model) plus the summaries.
//!
//! **Directories** expand to the `*.json` / `*.json.gz` files inside, recursively (symlinked
//! directories are not followed), sorted.
//! **Errors** are values per file ([`FileError`], with the path); a run is still analysed from
//! the files that loaded, and the others become `run_file_error` diagnostics.

// The engine's one native entry that reads files and spawns threads (worker/clippy.toml keeps
// them out of everything else).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::summary::{summarize, RankSummary};
use super::{analyze, render, ClockChoice, Diagnostic, Format, RunAnalysis};
use crate::engine::Engine;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A file that could not be read or loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.as_os_str().is_empty() {
            return f.write_str(&self.message);
        }
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for FileError {}

/// `paths` with directories replaced by the trace files inside (recursive, sorted); files
/// are kept as given.
///
/// # Errors
/// A directory that cannot be listed.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, FileError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found)?;
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), FileError> {
    let err = |e: std::io::Error| FileError {
        path: dir.to_path_buf(),
        message: format!("cannot list: {e}"),
    };
    for entry in std::fs::read_dir(dir).map_err(err)? {
        let entry = entry.map_err(err)?;
        let path = entry.path();
        // `file_type` does not follow symlinks: a link back to a parent cannot loop the walk.
        if entry.file_type().map_err(err)?.is_dir() {
            walk(&path, out)?;
        } else if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(".json") || n.ends_with(".json.gz"))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Reads and summarizes one file.
///
/// # Errors
/// The file cannot be read, or the engine cannot load it.
pub fn summarize_file(path: &Path) -> Result<RankSummary, FileError> {
    let fail = |message: String| FileError {
        path: path.to_path_buf(),
        message,
    };
    let mut file = std::fs::File::open(path).map_err(|e| fail(format!("cannot read: {e}")))?;
    let size = file.metadata().ok().map(|m| m.len());
    let name = path
        .file_name()
        .map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy())
        .into_owned();
    let mut engine = Engine::new();
    engine
        .load_from(&name, &mut file, size, &mut |_, _, _| {})
        .map_err(|e| fail(e.message))?;
    let session = engine
        .session()
        .ok_or_else(|| fail("no trace after loading".to_owned()))?;
    Ok(summarize(&name, session))
}

/// Summaries of `paths` (directories expanded), in the expanded order, loading at most
/// `threads` (at least 1) files at once.
///
/// # Errors
/// A directory that cannot be listed; per-file failures are values in the list.
pub fn summarize_files(
    paths: &[PathBuf],
    threads: usize,
) -> Result<Vec<Result<RankSummary, FileError>>, FileError> {
    let files = expand(paths)?;
    let next = AtomicUsize::new(0);
    let threads = threads.clamp(1, files.len().max(1));
    let mut slots: Vec<Option<Result<RankSummary, FileError>>> = vec![None; files.len()];
    // Scoped threads: each takes the next file index until none is left, so at most `threads`
    // files are loaded at once whatever their number.
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(path) = files.get(i) else { break };
                        done.push((i, summarize_file(path)));
                    }
                    done
                })
            })
            .collect();
        for w in workers {
            // A panicking worker loses its files; they are reported below as errors.
            for (i, r) in w.join().unwrap_or_default() {
                if let Some(slot) = slots.get_mut(i) {
                    *slot = Some(r);
                }
            }
        }
    });
    Ok(slots
        .into_iter()
        .zip(&files)
        .map(|(s, path)| {
            s.unwrap_or_else(|| {
                Err(FileError {
                    path: path.clone(),
                    message: "the loading thread panicked".to_owned(),
                })
            })
        })
        .collect())
}

/// The whole pipeline for the CLI: [`analyze_files`], rendered in `format`.
///
/// # Errors
/// As [`analyze_files`].
pub fn run_files(paths: &[PathBuf], threads: usize, format: Format) -> Result<String, FileError> {
    analyze_files(paths, threads).map(|runs| render(&runs, format))
}

/// Summarizes `paths` on `threads` threads and analyses the runs (clock:
/// [`ClockChoice::Auto`]); files that fail to load become `run_file_error` diagnostics.
///
/// # Errors
/// No trace file given, a directory that cannot be listed, or no file loaded (the message
/// lists each file's error).
pub fn analyze_files(paths: &[PathBuf], threads: usize) -> Result<Vec<RunAnalysis>, FileError> {
    let results = summarize_files(paths, threads)?;
    let no_input = || FileError {
        path: PathBuf::new(),
        message: "no trace files given (directories hold no *.json / *.json.gz)".to_owned(),
    };
    if results.is_empty() {
        return Err(no_input());
    }
    let mut summaries = Vec::new();
    let mut errors = Vec::new();
    for r in results {
        match r {
            Ok(s) => summaries.push(s),
            Err(e) => errors.push(e),
        }
    }
    if summaries.is_empty() {
        let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
        return Err(FileError {
            path: PathBuf::new(),
            message: format!("no trace loaded: {}", list.join("; ")),
        });
    }
    let shared: Vec<Diagnostic> = errors
        .iter()
        .map(|e| Diagnostic::new("run_file_error", e.to_string()))
        .collect();
    let runs = analyze(summaries, &shared, ClockChoice::Auto);
    if runs.is_empty() {
        return Err(FileError {
            path: PathBuf::new(),
            message: "no loaded trace has a rank (distributedInfo or file name)".to_owned(),
        });
    }
    Ok(runs)
}
