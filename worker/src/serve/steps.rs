//! The listing's step counts: how many distinct `ProfilerStep#N` a trace names, read as text in
//! one streaming pass (inflated when gzip), without parsing. It reads the whole file, so
//! `publish` counts while it copies and `serve` counts on a thread of its own after a listing
//! and shows the counts from the next listing on ([`StepCounts`]); the scan itself stays fast.
//! The same pass tells whether the file is complete (its gzip stream ends, its JSON closes):
//! the one check of a `.gz` still being written that needs no clock.

use flate2::read::MultiGzDecoder;
use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};

const MARK: &[u8] = b"ProfilerStep#";

/// What the pass over a file found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counted {
    /// Distinct `ProfilerStep#N` numbers in what could be read.
    pub steps: u32,
    /// The gzip stream (if any) ended and the JSON's last non-blank byte closes it (`}` or `]`);
    /// false for a file still being written or cut short.
    pub complete: bool,
}

/// Distinct `ProfilerStep#N` numbers in the file at `path`, and whether it is complete.
///
/// # Errors
/// The file cannot be opened, read or inflated (one line); a gzip stream that merely ends early
/// is not an error but an incomplete file.
pub fn count(path: &Path) -> Result<Counted, String> {
    let mut file = BufReader::new(File::open(path).map_err(|e| format!("cannot open: {e}"))?);
    // Peeked, not consumed: the decoder (or the plain reader) starts at byte 0.
    let gzip = file.fill_buf().is_ok_and(|b| b.starts_with(&[0x1f, 0x8b]));
    let mut input: Box<dyn Read> = if gzip { Box::new(MultiGzDecoder::new(file)) } else { Box::new(file) };
    let mut numbers = BTreeSet::new();
    let mut buf = vec![0u8; 1 << 20];
    // Bytes kept from the previous chunk so a mark cut at a chunk boundary is still found.
    let keep = MARK.len() + 20;
    let mut filled = 0;
    let mut last = None;
    let mut ended = true;
    loop {
        let n = match input.read(buf.get_mut(filled..).unwrap_or_default()) {
            Ok(n) => n,
            // A gzip member cut short: what came before it counts, the file is incomplete.
            Err(e) if gzip && e.kind() == std::io::ErrorKind::UnexpectedEof => {
                ended = false;
                0
            }
            Err(e) => return Err(format!("cannot read: {e}")),
        };
        last = buf.get(filled..filled + n).and_then(|b| b.iter().rev().find(|b| !b.is_ascii_whitespace()).copied()).or(last);
        let end = filled + n;
        let chunk = buf.get(..end).unwrap_or_default();
        // The last `keep` bytes are searched again with the next chunk (unless this is the end).
        let searchable = if n == 0 { end } else { end.saturating_sub(keep) };
        for at in memchr::memmem::find_iter(chunk, MARK).filter(|&at| at < searchable) {
            let digits = chunk.get(at + MARK.len()..).unwrap_or_default();
            let len = digits.iter().take_while(|b| b.is_ascii_digit()).count();
            if let Some(number) = std::str::from_utf8(digits.get(..len).unwrap_or_default()).ok().and_then(|d| d.parse::<u64>().ok()) {
                numbers.insert(number);
            }
        }
        if n == 0 {
            break;
        }
        buf.copy_within(searchable..end, 0);
        filled = end - searchable;
    }
    let steps = u32::try_from(numbers.len()).unwrap_or(u32::MAX);
    Ok(Counted { steps, complete: ended && matches!(last, Some(b'}' | b']')) })
}

/// A file as the cache knows it: path, size and modification time (a rewritten file is counted
/// again).
type Key = (PathBuf, u64, u64);

/// Whether the file of `key` still has its size and modification time.
fn unchanged((path, size, mtime_ms): &Key) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() == *size && m.modified().map_or(0, super::scan::ms_since_epoch) == *mtime_ms)
}

/// Step counts computed on a background thread, cached by [`Key`].
#[derive(Clone, Debug)]
pub struct StepCounts {
    known: Arc<Mutex<HashMap<Key, Counted>>>,
    todo: Sender<Key>,
}

impl StepCounts {
    /// Starts the counting thread.
    pub fn start() -> Self {
        let known = Arc::new(Mutex::new(HashMap::new()));
        let (todo, queue) = channel::<Key>();
        let cache = Arc::clone(&known);
        std::thread::spawn(move || {
            for key in queue {
                let done = cache.lock().map(|c| c.contains_key(&key)).unwrap_or(true);
                // A file that changed since it was queued is counted under its newer key, which
                // the next listing queues: a trace growing while the page polls is counted once
                // it settles, not once per poll (each a whole read, queued behind the others).
                if done || !unchanged(&key) {
                    continue;
                }
                // An unreadable file counts as no step rather than being retried forever.
                let steps = count(&key.0).unwrap_or(Counted { steps: 0, complete: true });
                if let Ok(mut c) = cache.lock() {
                    c.insert(key, steps);
                }
            }
        });
        Self { known, todo }
    }

    /// The count if known; otherwise queues the file and returns `None`.
    pub fn get(&self, path: PathBuf, size: u64, mtime_ms: u64) -> Option<Counted> {
        let key = (path, size, mtime_ms);
        let known = self.known.lock().ok().and_then(|c| c.get(&key).copied());
        if known.is_none() {
            let _ = self.todo.send(key);
        }
        known
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn distinct_steps_across_chunks_and_gzip() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        let mut text = String::from("{\"traceEvents\": [");
        for step in 0..3000 {
            // Each step twice (CPU and GPU annotation), padded so marks straddle 1 MiB chunks.
            text.push_str(&format!("{{\"name\": \"ProfilerStep#{step}\", \"pad\": \"{}\"}},", "x".repeat(700)));
            text.push_str(&format!("{{\"name\": \"ProfilerStep#{step}\"}},"));
        }
        text.push_str("{}]}");
        let plain = dir.join("t.json");
        std::fs::write(&plain, &text).unwrap();
        assert_eq!(count(&plain).unwrap(), Counted { steps: 3000, complete: true });
        let gz = dir.join("t.json.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, text.as_bytes()).unwrap();
        let gz_bytes = enc.finish().unwrap();
        std::fs::write(&gz, &gz_bytes).unwrap();
        assert_eq!(count(&gz).unwrap(), Counted { steps: 3000, complete: true });
        // Half the gzip (a job still writing it): the steps so far, incomplete.
        std::fs::write(&gz, &gz_bytes[..gz_bytes.len() / 2]).unwrap();
        let half = count(&gz).unwrap();
        assert!(!half.complete && half.steps > 100 && half.steps < 3000, "{half:?}");
        std::fs::write(&plain, &text[..text.len() / 2]).unwrap();
        assert!(!count(&plain).unwrap().complete);
        std::fs::write(&plain, "{\"traceEvents\": []}\n").unwrap();
        assert_eq!(count(&plain).unwrap(), Counted { steps: 0, complete: true });
    }

    #[test]
    fn a_file_changed_since_it_was_queued_is_not_counted_under_its_old_key() {
        let scratch = tempfile::tempdir().unwrap();
        let path = scratch.path().join("t.json");
        std::fs::write(&path, "{\"traceEvents\": [{\"name\": \"ProfilerStep#1\"}]}").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        let mtime_ms = meta.modified().map_or(0, super::super::scan::ms_since_epoch);
        let counts = StepCounts::start();
        // As listed before the file grew by a byte: never counted.
        let stale = (path.clone(), meta.len() - 1, mtime_ms);
        // Queued after the stale key: once it is counted, the stale one was seen.
        let current = (path.clone(), meta.len(), mtime_ms);
        assert_eq!(counts.get(stale.0.clone(), stale.1, stale.2), None);
        let mut counted = None;
        for _ in 0..200 {
            counted = counts.get(current.0.clone(), current.1, current.2);
            if counted.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(counted, Some(Counted { steps: 1, complete: true }));
        assert_eq!(counts.get(stale.0, stale.1, stale.2), None, "the stale key stays uncounted");
    }
}
