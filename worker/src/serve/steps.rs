//! The listing's step counts: how many distinct `ProfilerStep#N` a trace names, read as text in
//! one streaming pass (inflated when gzip), without parsing. It reads the whole file, so
//! `publish` counts while it copies and `serve` counts on a thread of its own after a listing
//! and shows the counts from the next listing on ([`StepCounts`]); the scan itself stays fast.

use flate2::read::MultiGzDecoder;
use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};

const MARK: &[u8] = b"ProfilerStep#";

/// Distinct `ProfilerStep#N` numbers in the file at `path`.
///
/// # Errors
/// The file cannot be read or inflated (one line).
pub fn count(path: &Path) -> Result<u32, String> {
    let mut file = BufReader::new(File::open(path).map_err(|e| format!("cannot open: {e}"))?);
    // Peeked, not consumed: the decoder (or the plain reader) starts at byte 0.
    let gzip = file.fill_buf().is_ok_and(|b| b.starts_with(&[0x1f, 0x8b]));
    let mut input: Box<dyn Read> = if gzip { Box::new(MultiGzDecoder::new(file)) } else { Box::new(file) };
    let mut numbers = BTreeSet::new();
    let mut buf = vec![0u8; 1 << 20];
    // Bytes kept from the previous chunk so a mark cut at a chunk boundary is still found.
    let keep = MARK.len() + 20;
    let mut filled = 0;
    loop {
        let n = input.read(buf.get_mut(filled..).unwrap_or_default()).map_err(|e| format!("cannot read: {e}"))?;
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
    Ok(u32::try_from(numbers.len()).unwrap_or(u32::MAX))
}

/// A file as the cache knows it: path, size and modification time (a rewritten file is counted
/// again).
type Key = (PathBuf, u64, u64);

/// Step counts computed on a background thread, cached by [`Key`].
#[derive(Clone, Debug)]
pub struct StepCounts {
    known: Arc<Mutex<HashMap<Key, u32>>>,
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
                if done {
                    continue;
                }
                // An unreadable file counts as no step rather than being retried forever.
                let steps = count(&key.0).unwrap_or(0);
                if let Ok(mut c) = cache.lock() {
                    c.insert(key, steps);
                }
            }
        });
        Self { known, todo }
    }

    /// The count if known; otherwise queues the file and returns `None`.
    pub fn get(&self, path: PathBuf, size: u64, mtime_ms: u64) -> Option<u32> {
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
        assert_eq!(count(&plain).unwrap(), 3000);
        let gz = dir.join("t.json.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, text.as_bytes()).unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        assert_eq!(count(&gz).unwrap(), 3000);
        std::fs::write(&plain, "{\"traceEvents\": []}").unwrap();
        assert_eq!(count(&plain).unwrap(), 0);
    }
}
