//! Reading a trace file into the engine without holding it whole: a large JSON file is cut at
//! event boundaries (`load::cut`) and each part is read and parsed on a thread of its own,
//! then joined (`Engine::join`); gzip, a small file or one core is read on this thread
//! (`Engine::load_from`). A part reads its file straight into its stream's buffer
//! (`Stream::fill_from`).

use kinetoscope::engine::Engine;
use kinetoscope::fork::Threads;
use kinetoscope::load::{self, Piece, Stream, StreamedPart};
use protocol::TraceSummary;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Loads `path` into `engine` as `name`, on up to `threads` threads; the error is one line.
pub fn load_file(engine: &mut Engine, name: &str, path: &Path, threads: usize) -> Result<TraceSummary, String> {
    let cannot = |e: std::io::Error| format!("cannot read {path:?}: {e}");
    let mut file = File::open(path).map_err(cannot)?;
    let size = file.metadata().map_err(cannot)?.len();
    let parts = load::parts_for(usize::try_from(size).unwrap_or(usize::MAX), threads);
    let cuts = if parts > 1 { load::cut(size, parts, &mut |at, buf| read_at(&mut file, at, buf)).map_err(cannot)? } else { Vec::new() };
    if cuts.len() > 1 {
        let joining = engine.begin_parts(name, size).map_err(|e| e.message)?;
        let streamed = std::thread::scope(|scope| {
            let handles: Vec<_> = cuts.into_iter().map(|(piece, range)| scope.spawn(move || read_part(path, piece, range))).collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a read thread panicked".into()))).collect::<Result<Vec<_>, _>>()
        })?;
        if let Some(summary) = engine.join(joining, streamed, &Threads).map_err(|e| e.message)? {
            return Ok(summary);
        }
    }
    file.seek(SeekFrom::Start(0)).map_err(cannot)?;
    engine.load_from(name, &mut file, Some(size), &mut |_, _, _| {}).map_err(|e| e.message)
}

/// Reads part `piece` (bytes `range` of the file at `path`) on the calling thread.
fn read_part(path: &Path, piece: Piece, range: Range<u64>) -> Result<StreamedPart, String> {
    let cannot = |e: std::io::Error| format!("cannot read {path:?}: {e}");
    let mut file = File::open(path).map_err(cannot)?;
    file.seek(SeekFrom::Start(range.start)).map_err(cannot)?;
    let mut part = file.take(range.end - range.start);
    let mut stream = Stream::part(piece);
    while stream.fill_from(&mut part).map_err(cannot)? > 0 {}
    Ok(stream.finish_part())
}

/// Fills `buf` from byte `at` of `file` (fewer bytes only at its end).
fn read_at(file: &mut File, at: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    file.seek(SeekFrom::Start(at))?;
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}
