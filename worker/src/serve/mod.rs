//! `kinetoscope serve LOGDIR` and `kinetoscope publish LOGDIR OUT`: a log directory of traces
//! for the page, served live for yourself or written out as a static folder for a team.
//!
//! ```text
//! LOGDIR ─scan─▶ Listing ─index─▶ index.json + one run.json per run
//!   serve:   http (axum): /index.json, /logs/PATH (guard ─▶ ServeFile), the site (ServeDir)
//!   publish: the site + logs/PATH copies + the same manifests, relative URLs only
//! ```
//!
//! - [`scan`]: which files are traces (sniffed, never parsed whole), their runs and ranks.
//! - [`guard`]: which request paths may be read (only trace files under LOGDIR).
//! - [`index`]: the manifest format both share, so a published folder and a live server
//!   answer the same URLs.
//! - [`steps`]: step counts, read after the scan (the whole file is read for them).
//! - [`page`]: `index.html` marked as having a listing (only then does the page ask for one).
//! - [`http`]: the server, its connections bounded by [`limits`] and every exchange checked by
//!   [`headers`] (Host, security headers, same-origin redirects); [`publish`]: the static folder.
//!
//! Native only: this is the one part of the library that reads files and binds sockets, for the
//! CLI (the engine itself stays free of both, `worker/clippy.toml`).

// Reading a directory of files and serving them is this module's job.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

pub mod guard;
pub mod headers;
pub mod http;
pub mod index;
pub mod limits;
pub mod page;
pub mod publish;
pub mod scan;
pub mod steps;

use std::path::{Path, PathBuf};

/// The built site's folder: `explicit` (`--site`) if given, else `dist/` of the repository the
/// binary sits in (`target/release/kinetoscope` -> `dist/`), else `dist/` of the repository it
/// was built from. It must hold `index.html`.
///
/// # Errors
/// No candidate holds `index.html` (the message says how to build the site).
pub fn find_site(explicit: Option<&Path>, exe: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = explicit {
        if !dir.join("index.html").is_file() {
            return Err(format!("--site {}: no index.html there (build it with `scripts/build-site DIR`)", dir.display()));
        }
        return Ok(dir.to_path_buf());
    }
    let beside_binary = exe.and_then(|e| e.ancestors().nth(3)).map(|repo| repo.join("dist"));
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist");
    beside_binary
        .into_iter()
        .chain([built_from])
        .find(|dir| dir.join("index.html").is_file())
        .ok_or_else(|| {
            "no built site found: run `scripts/serve` or `scripts/build-site` in the repository \
             (it writes dist/), or pass --site DIR"
                .to_owned()
        })
}

/// The log directory `path`, canonical.
///
/// # Errors
/// It cannot be read or is not a directory (one sentence naming it).
pub fn log_dir(path: &Path) -> Result<PathBuf, String> {
    let canonical = path.canonicalize().map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !canonical.is_dir() {
        return Err(format!(
            "{} is not a directory: give the log directory that holds the traces (one trace opens in the page, or with `kinetoscope report`)",
            path.display()
        ));
    }
    Ok(canonical)
}

/// The name shown for a log directory's top level: its last component.
pub fn root_name(logdir: &Path) -> String {
    logdir.file_name().map_or_else(|| logdir.display().to_string(), |n| n.to_string_lossy().into_owned())
}
