//! The directory scan behind `index.json`: every trace file under a log directory, grouped
//! into runs (a run = the directory that holds the traces), newest run first.
//!
//! A file is a candidate by name (`*.json`, `*.json.gz`, so `*.pt.trace.json[.gz]` too) and a
//! trace by its first [`SNIFF_BYTES`] (inflated when gzip): an object with a `"traceEvents"` key,
//! or an array whose first element has a `"ph"`. Nothing is parsed whole, so a directory of
//! 10,000 small files lists in tens of milliseconds (`tests/serve_scan.rs` prints the figure).
//! The rank comes from `distributedInfo` when it is in those bytes, else from the file name
//! (as `kinetoscope run` reads it). Candidates that cannot be read are listed with the reason;
//! candidates that are not traces are skipped. Hidden entries (`.name`) are not visited and
//! symlinked directories are not followed (no loops); a symlinked file is a trace only if it
//! resolves inside the log directory.
//!
//! A trace is *writing* when it changed in the last [`WRITING_MS`] or, plain JSON, its last
//! non-blank byte does not close the document (one small read of the tail). A gzip's end is
//! only known by inflating it all, which the step count does in the background
//! (`super::steps::Counted::complete`); the listing ORs both.

use crate::run::rank::rank_from_name;
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// A trace modified this recently (ms) is listed as still being written: profilers flush a
/// trace in bursts, seconds apart at most, and a finished trace is rarely opened this soon.
pub const WRITING_MS: u64 = 5_000;

/// How much of a file the sniff reads (inflated bytes for gzip). Kineto writes
/// `deviceProperties` and `distributedInfo` before `traceEvents`: a few KiB for 8 GPUs.
pub const SNIFF_BYTES: usize = 64 * 1024;

/// One trace file of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFile {
    /// Path relative to the log directory, `/`-separated.
    pub path: String,
    /// The rank from `distributedInfo`, else from the file name.
    pub rank: Option<u32>,
    /// File size in bytes (compressed size for `.gz`).
    pub size: u64,
    /// Modification time, ms since the Unix epoch (0 when the platform does not say).
    pub mtime_ms: u64,
    /// Distinct `ProfilerStep#N`, once counted ([`super::steps`]; the scan leaves it `None`).
    pub steps: Option<u32>,
    /// Still being written: recently modified or not complete (module header).
    pub writing: bool,
}

impl TraceFile {
    /// The file name (last path segment).
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// The traces of one directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// The directory relative to the log directory, `/`-separated; empty for the log directory.
    pub dir: String,
    /// Its traces, by rank then path.
    pub traces: Vec<TraceFile>,
}

impl Run {
    /// The newest trace's modification time.
    pub fn mtime_ms(&self) -> u64 {
        self.traces.iter().map(|t| t.mtime_ms).max().unwrap_or(0)
    }
}

/// A candidate file that could not be read, with why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    /// Path relative to the log directory.
    pub path: String,
    /// The reason, one line.
    pub reason: String,
}

/// The result of a scan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// Runs, newest first (ties by directory).
    pub runs: Vec<Run>,
    /// Candidates that could not be read, by path.
    pub unreadable: Vec<Unreadable>,
}

/// Scans `root` recursively.
///
/// # Errors
/// `root` itself cannot be read (one line naming it). Errors below it are listed instead.
pub fn scan(root: &Path) -> Result<Listing, String> {
    let canonical = root.canonicalize().map_err(|e| format!("cannot read {}: {e}", root.display()))?;
    std::fs::read_dir(&canonical).map_err(|e| format!("cannot list {}: {e}", root.display()))?;
    let mut scanner = Scanner::new(canonical.clone());
    let mut pending = vec![(canonical, String::new())];
    while let Some((dir, rel)) = pending.pop() {
        scanner.visit(&dir, rel, Some(&mut pending));
    }
    Ok(scanner.finish())
}

/// The traces of directory `dir` alone (`rel` from `root`, both canonical): one run at most.
pub fn scan_dir(root: &Path, dir: &Path, rel: &str) -> Listing {
    let mut scanner = Scanner::new(root.to_path_buf());
    scanner.visit(dir, rel.to_owned(), None);
    scanner.finish()
}

/// Whether a file name may hold a trace: `*.json` or `*.json.gz`.
pub fn is_candidate(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".json") || lower.ends_with(".json.gz")
}

/// The scan's state: the canonical root, one reused sniff buffer, the listing so far.
struct Scanner {
    root: PathBuf,
    buf: Vec<u8>,
    listing: Listing,
}

impl Scanner {
    fn new(root: PathBuf) -> Self {
        Self { root, buf: vec![0; SNIFF_BYTES], listing: Listing::default() }
    }

    /// Lists `dir`'s traces as a run; its subdirectories go to `pending` when given.
    fn visit(&mut self, dir: &Path, rel: String, mut pending: Option<&mut Vec<(PathBuf, String)>>) {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => return self.unreadable(&rel, format!("cannot list the directory: {e}")),
        };
        let mut traces = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let child = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if let Some(pending) = pending.as_deref_mut() {
                    pending.push((entry.path(), child));
                }
            } else if is_candidate(&name) {
                if let Some(trace) = self.file(&entry.path(), child, kind.is_symlink()) {
                    traces.push(trace);
                }
            }
        }
        if !traces.is_empty() {
            traces.sort_by(|a, b| (a.rank.is_none(), a.rank, &a.path).cmp(&(b.rank.is_none(), b.rank, &b.path)));
            self.listing.runs.push(Run { dir: rel, traces });
        }
    }

    /// The listing, runs newest first.
    fn finish(self) -> Listing {
        let mut listing = self.listing;
        listing.runs.sort_by(|a, b| b.mtime_ms().cmp(&a.mtime_ms()).then_with(|| a.dir.cmp(&b.dir)));
        listing.unreadable.sort_by(|a, b| a.path.cmp(&b.path));
        listing
    }

    fn unreadable(&mut self, path: &str, reason: String) {
        self.listing.unreadable.push(Unreadable { path: path.to_owned(), reason });
    }

    /// The trace at `path`, or `None` (not a trace, or unreadable and listed as such).
    fn file(&mut self, path: &Path, rel: String, symlink: bool) -> Option<TraceFile> {
        if symlink && !path.canonicalize().is_ok_and(|p| p.starts_with(&self.root)) {
            self.unreadable(&rel, "a symlink that resolves outside the log directory (or nowhere)".into());
            return None;
        }
        match sniff_file(path, &mut self.buf) {
            Ok(Some(sniff)) => {
                let name = rel.rsplit('/').next().unwrap_or(&rel);
                let rank = sniff.rank.or_else(|| rank_from_name(name));
                let writing = now_ms().saturating_sub(sniff.mtime_ms) < WRITING_MS || !sniff.complete;
                Some(TraceFile { path: rel, rank, size: sniff.size, mtime_ms: sniff.mtime_ms, steps: None, writing })
            }
            Ok(None) => None,
            Err(reason) => {
                self.unreadable(&rel, reason);
                None
            }
        }
    }
}

/// What the sniff of a trace file found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sniff {
    /// `distributedInfo.rank`, when it is in the sniffed bytes.
    pub rank: Option<u32>,
    /// File size.
    pub size: u64,
    /// Modification time, ms since the Unix epoch.
    pub mtime_ms: u64,
    /// False for plain JSON whose last non-blank byte does not close it (`}` / `]`); true for
    /// gzip, whose end the sniff does not read.
    pub complete: bool,
}

/// Now, ms since the Unix epoch (0 if the clock is before it).
fn now_ms() -> u64 {
    ms_since_epoch(std::time::SystemTime::now())
}

/// `t` in ms since the Unix epoch (0 before it), as listings give modification times.
pub(super) fn ms_since_epoch(t: std::time::SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Reads the start of `path` into `buf` and sniffs it: `Ok(None)` for a file that is not a trace.
///
/// # Errors
/// The file cannot be opened or read, or its gzip stream is corrupt (the reason, one line).
pub fn sniff_file(path: &Path, buf: &mut [u8]) -> Result<Option<Sniff>, String> {
    // Checked before opening: opening a FIFO named `x.json` would block the scan.
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot stat: {e}"))?;
    if !meta.is_file() {
        return Ok(None);
    }
    let mut file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let mtime_ms = meta.modified().map_or(0, ms_since_epoch);
    let head = fill(&mut file, buf).map_err(|e| format!("cannot read: {e}"))?;
    let gzip = buf.get(..head).is_some_and(|b| b.starts_with(&[0x1f, 0x8b]));
    let complete = gzip || closes(&mut file, meta.len()).map_err(|e| format!("cannot read: {e}"))?;
    let len = if gzip {
        let raw = buf.get(..head).unwrap_or_default().to_vec();
        let mut gz = MultiGzDecoder::new(raw.as_slice().chain(file));
        fill(&mut gz, buf).map_err(|e| format!("cannot inflate the gzip stream: {e}"))?
    } else {
        head
    };
    let text = buf.get(..len).unwrap_or_default();
    Ok(is_trace(text).then(|| Sniff { rank: sniff_rank(text), size: meta.len(), mtime_ms, complete }))
}

/// Whether the last non-blank byte of the `len`-byte plain file closes a JSON document.
fn closes(file: &mut File, len: u64) -> std::io::Result<bool> {
    use std::io::{Seek, SeekFrom};
    // Kineto ends a trace with `}` and a newline or two; 64 bytes leave room for more blanks.
    let mut tail = [0u8; 64];
    let from = len.saturating_sub(tail.len() as u64);
    file.seek(SeekFrom::Start(from))?;
    let n = fill(file, &mut tail)?;
    let last = tail.get(..n).unwrap_or_default().iter().rev().find(|b| !b.is_ascii_whitespace());
    Ok(matches!(last, Some(b'}' | b']')))
}

/// Reads until `buf` is full or the input ends; the byte count.
fn fill(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = buf.get_mut(filled..).filter(|r| !r.is_empty()) {
        match input.read(rest) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Whether the start of a JSON document is a Chrome trace: an object with `"traceEvents"`, or
/// an array of events (`"ph"` in it).
pub fn is_trace(head: &[u8]) -> bool {
    let start = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    match start.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => memchr::memmem::find(start, b"\"traceEvents\"").is_some(),
        Some(b'[') => memchr::memmem::find(start, b"\"ph\"").is_some(),
        _ => false,
    }
}

/// `distributedInfo.rank` when it follows `"distributedInfo"` within a few hundred bytes.
pub fn sniff_rank(head: &[u8]) -> Option<u32> {
    let at = memchr::memmem::find(head, b"\"distributedInfo\"")?;
    let info = head.get(at..)?;
    let end = info.iter().position(|&b| b == b'}').unwrap_or(info.len()).min(512);
    let info = info.get(..end)?;
    let key = memchr::memmem::find(info, b"\"rank\"")?;
    let after = info.get(key + b"\"rank\"".len()..)?;
    let value = after.iter().position(|b| !b.is_ascii_whitespace() && *b != b':' && *b != b'"')?;
    let digits = after.get(value..)?;
    let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(digits.get(..n)?).ok()?.parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn traces_are_told_from_other_json_by_their_start() {
        assert!(is_trace(br#"{"schemaVersion": 1, "traceEvents": ["#));
        assert!(is_trace(b"\xef\xbb\xbf [ {\"ph\": \"X\"}"));
        assert!(!is_trace(br#"{"ranks": [{"url": "a.json"}]}"#));
        assert!(!is_trace(br#"[1, 2, 3]"#));
        assert!(!is_trace(b"\x00\x01binary"));
    }

    #[test]
    fn rank_from_distributed_info() {
        assert_eq!(sniff_rank(br#"{"distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8}}"#), Some(3));
        assert_eq!(sniff_rank(br#"{"distributedInfo": {"rank": "12"}}"#), Some(12));
        assert_eq!(sniff_rank(br#"{"distributedInfo": {"backend": "nccl"}, "rank": 4}"#), None);
        assert_eq!(sniff_rank(br#"{"traceEvents": []}"#), None);
    }

    #[test]
    fn candidates_by_name() {
        assert!(is_candidate("w0.pt.trace.json"));
        assert!(is_candidate("rank-1.JSON.gz"));
        assert!(!is_candidate("notes.txt"));
        assert!(!is_candidate("trace.json.bz2"));
    }
}
