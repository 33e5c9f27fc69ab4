//! Which request paths may be read: only trace files under the log directory.
//!
//! The raw (still percent-encoded) URL path is split at `/` first and each segment decoded after,
//! so an encoded `%2f` can never become a separator. A segment that is empty (`//`, a leading
//! `/` of an absolute path), `.` or `..`, or that decodes to something holding `/`, `\`, NUL or
//! a drive colon, refuses the whole path. What is left is joined to the log directory,
//! canonicalized (symlinks resolved) and must still lie inside it; the file must then sniff as a
//! trace ([`super::scan::sniff_file`]), so no other file under the directory is served either.

use super::scan::{is_candidate, sniff_file, SNIFF_BYTES};
use percent_encoding::percent_decode_str;
use std::path::{Path, PathBuf};

/// Why a path was refused: the HTTP status to answer and a one-line reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// 400 for a malformed or escaping path, 403 for a file outside the log directory or not a
    /// trace, 404 for a file that does not exist.
    pub status: u16,
    /// Why, for the response body and the tests.
    pub reason: String,
}

fn refuse(status: u16, reason: impl Into<String>) -> Refusal {
    Refusal { status, reason: reason.into() }
}

/// Decodes `raw` (the request path below the logs prefix, percent-encoded) into safe segments.
///
/// # Errors
/// A 400 [`Refusal`] for an empty, `.`, `..` or separator-holding segment, or bad UTF-8.
pub fn segments(raw: &str) -> Result<Vec<String>, Refusal> {
    let mut out = Vec::new();
    for segment in raw.split('/') {
        let decoded = percent_decode_str(segment)
            .decode_utf8()
            .map_err(|_| refuse(400, "the path is not UTF-8"))?;
        let bad = decoded.is_empty()
            || decoded == "."
            || decoded == ".."
            || decoded.contains(['/', '\\', '\0', ':']);
        if bad {
            return Err(refuse(400, format!("refused path segment {decoded:?}")));
        }
        out.push(decoded.into_owned());
    }
    Ok(out)
}

/// The canonical path of the directory `segments` names under `root` (canonical itself).
///
/// # Errors
/// 404 when it does not exist, 403 when it resolves outside `root`.
pub fn directory(root: &Path, segments: &[String]) -> Result<PathBuf, Refusal> {
    let path = inside(root, segments)?;
    if !path.is_dir() {
        return Err(refuse(404, "no such directory"));
    }
    Ok(path)
}

/// The canonical path of the trace file `segments` names under `root` (canonical itself).
///
/// # Errors
/// 404 when it does not exist, 403 when it resolves outside `root` or is not a trace.
pub fn trace_file(root: &Path, segments: &[String]) -> Result<PathBuf, Refusal> {
    let name = segments.last().ok_or_else(|| refuse(400, "no file named"))?;
    if !is_candidate(name) {
        return Err(refuse(403, "only trace files (*.json, *.json.gz) are served"));
    }
    let path = inside(root, segments)?;
    let mut buf = vec![0; SNIFF_BYTES];
    match sniff_file(&path, &mut buf) {
        Ok(Some(_)) => Ok(path),
        Ok(None) => Err(refuse(403, "not a trace file")),
        Err(reason) => Err(refuse(403, reason)),
    }
}

/// `root` joined with `segments`, canonicalized, checked to be inside `root`.
fn inside(root: &Path, segments: &[String]) -> Result<PathBuf, Refusal> {
    let joined = segments.iter().fold(root.to_path_buf(), |p, s| p.join(s));
    let canonical = joined.canonicalize().map_err(|_| refuse(404, "no such file"))?;
    if !canonical.starts_with(root) {
        return Err(refuse(403, "the path resolves outside the log directory"));
    }
    Ok(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traversal_segments_are_refused_encoded_or_not() {
        for raw in ["../etc/passwd", "a/%2e%2e/b.json", "%2E%2E/x.json", "a%2fb.json", "a%5cb.json", "/etc/passwd", "a//b.json", "C%3a/x.json", "./a.json", "a/%00.json"] {
            assert_eq!(segments(raw).map_err(|r| r.status), Err(400), "{raw}");
        }
        assert_eq!(segments("run%201/w0.pt.trace.json").ok(), Some(vec!["run 1".to_owned(), "w0.pt.trace.json".to_owned()]));
    }
}
