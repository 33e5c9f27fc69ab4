//! Which request paths may be read: only trace files under the log directory.
//!
//! The raw (still percent-encoded) URL path is split at `/` first and each segment decoded after,
//! so an encoded `%2f` can never become a separator. A segment that is empty (`//`, a leading
//! `/` of an absolute path), `.` or `..`, or that decodes to something holding `/`, `\`, NUL or
//! a drive colon, refuses the whole path (400); so does a hidden segment (`.name`, 404: the
//! listing never shows one, [`super::scan`]) and a path longer than [`MAX_PATH_BYTES`] or a
//! name longer than [`MAX_NAME_BYTES`] (414: no file has one). What is left is joined to the
//! log directory, canonicalized (symlinks resolved) and must still lie inside it; the file must
//! then sniff as a trace ([`super::scan::sniff_file`]), so no other file under the directory is
//! served either.

use super::scan::{is_candidate, sniff_file, SNIFF_BYTES};
use percent_encoding::percent_decode_str;
use std::path::{Path, PathBuf};

/// The longest request path read, percent-encoded.
pub const MAX_PATH_BYTES: usize = 8 * 1024;

/// The longest path segment, decoded: Linux's `NAME_MAX` (a longer name cannot be opened).
pub const MAX_NAME_BYTES: usize = 255;

/// Why a path was refused: the HTTP status to answer and a one-line reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// 400 for a malformed or escaping path, 403 for a file outside the log directory or not a
    /// trace, 404 for a file that does not exist or is hidden, 414 for a path too long.
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
/// A 400 [`Refusal`] for an empty, `.`, `..` or separator-holding segment, or bad UTF-8; 404 for
/// a hidden one; 414 as [`length`] says.
pub fn segments(raw: &str) -> Result<Vec<String>, Refusal> {
    length(raw)?;
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
        if decoded.starts_with('.') {
            return Err(refuse(404, "hidden files and directories are not served"));
        }
        out.push(decoded.into_owned());
    }
    Ok(out)
}

/// Checks the length of the raw (percent-encoded) request path `raw`, whole and per segment.
///
/// # Errors
/// A 414 [`Refusal`] when it is longer than [`MAX_PATH_BYTES`] or a segment decodes to more
/// than [`MAX_NAME_BYTES`]: no file has such a path, and the file system would fail on it.
pub fn length(raw: &str) -> Result<(), Refusal> {
    if raw.len() > MAX_PATH_BYTES {
        return Err(refuse(414, format!("the path is {} bytes long; no file has a path longer than {MAX_PATH_BYTES}", raw.len())));
    }
    match raw.split('/').map(|s| percent_decode_str(s).count()).find(|&n| n > MAX_NAME_BYTES) {
        Some(n) => Err(refuse(414, format!("a name in the path is {n} bytes long; no file has a name longer than {MAX_NAME_BYTES}"))),
        None => Ok(()),
    }
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

    #[test]
    fn hidden_and_overlong_segments_are_refused() {
        for raw in [".hidden.json", "run/.cache/t.json", "%2ehidden.json", ".git/config"] {
            assert_eq!(segments(raw).map_err(|r| r.status), Err(404), "{raw}");
        }
        let name = "a".repeat(MAX_NAME_BYTES);
        assert!(segments(&name).is_ok());
        assert_eq!(segments(&format!("{name}a")).map_err(|r| r.status), Err(414));
        assert_eq!(length(&"%61".repeat(MAX_NAME_BYTES)), Ok(()), "counted decoded");
        assert_eq!(length(&"a/".repeat(MAX_PATH_BYTES)).map_err(|r| r.status), Err(414));
    }
}
