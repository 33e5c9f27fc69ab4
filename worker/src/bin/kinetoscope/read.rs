//! Reading a trace file into the engine without holding it whole: a large JSON file is cut at
//! event boundaries (`load::cut`) and each part is read and parsed on a thread of its own,
//! then joined (`Engine::join`); gzip, a small file or one core is read on this thread
//! (`Engine::load_from`). A part reads its file straight into its stream's buffer
//! (`Stream::fill_from`), claiming its bytes from `load::Shares`, so a thread done early takes
//! half of what another has left.
//!
//! `-` is stdin, and a path that is not a regular file (a FIFO, `/dev/stdin`) is read as it
//! comes, on this thread: JSON or gzip, told apart by its first bytes as a file's are. Neither
//! waits in silence: stdin at a terminal says it is read until Ctrl-D, and a FIFO no program
//! has opened for writing says so after [`FIFO_NOTICE`].

use kinetoscope::engine::Engine;
use kinetoscope::fork::Threads;
use kinetoscope::load::{self, Piece, Shares, Stream, StreamedPart};
use protocol::TraceSummary;
use std::fs::File;
use std::io::{IsTerminal, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

/// How long opening a FIFO may wait for a writer before a line on stderr says it waits.
const FIFO_NOTICE: Duration = Duration::from_secs(1);

/// True when `path` is `-`, the CLI's name for stdin.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Loads `path` (`-`: stdin) into `engine` as `name`, on up to `threads` threads; the error is
/// one line.
pub fn load_file(engine: &mut Engine, name: &str, path: &Path, threads: usize) -> Result<TraceSummary, String> {
    if is_stdin(path) {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            eprintln!("kinetoscope: reading the trace from stdin (Ctrl-D to end)");
        }
        return load_streamed(engine, name, &mut stdin.lock());
    }
    let cannot = |e: std::io::Error| format!("cannot read {path:?}: {e}");
    let mut file = open(path).map_err(cannot)?;
    let metadata = file.metadata().map_err(cannot)?;
    if !metadata.is_file() {
        return load_streamed(engine, name, &mut file);
    }
    let size = metadata.len();
    let parts = load::parts_for(usize::try_from(size).unwrap_or(usize::MAX), threads);
    let cuts = if parts > 1 { load::cut(size, parts, &mut |at, buf| read_at(&mut file, at, buf)).map_err(cannot)? } else { Vec::new() };
    if cuts.len() > 1 {
        let joining = engine.begin_parts(name, size).map_err(|e| e.message)?;
        let shares = Shares::new(&cuts, STEAL_BYTES);
        let read = std::thread::scope(|scope| {
            let shares = &shares;
            let handles: Vec<_> = cuts.into_iter().enumerate().map(|(k, (piece, _))| scope.spawn(move || read_parts(path, shares, k, piece))).collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a read thread panicked".into()))).collect::<Result<Vec<_>, _>>()
        })?;
        let mut read: Vec<(usize, StreamedPart)> = read.into_iter().flatten().collect();
        read.sort_by_key(|&(k, _)| shares.start(k));
        let streamed = read.into_iter().map(|(_, part)| part).collect();
        if let Some(summary) = engine.join(joining, streamed, &Threads).map_err(|e| e.message)? {
            return Ok(summary);
        }
    }
    file.seek(SeekFrom::Start(0)).map_err(cannot)?;
    engine.load_from(name, &mut file, Some(size), &mut |_, _, _| {}).map_err(|e| e.message)
}

/// Loads what `source` gives until it ends, on this thread.
fn load_streamed(engine: &mut Engine, name: &str, source: &mut dyn Read) -> Result<TraceSummary, String> {
    engine.load_from(name, source, None, &mut |_, _, _| {}).map_err(|e| e.message)
}

/// Opens `path`. Opening a FIFO waits for a program to open it for writing: if none has after
/// [`FIFO_NOTICE`], a line on stderr says what it waits for.
fn open(path: &Path) -> std::io::Result<File> {
    if !is_fifo(path) {
        return File::open(path);
    }
    let (opened, wait) = mpsc::channel::<()>();
    let shown = path.display().to_string();
    let notice = std::thread::spawn(move || {
        if wait.recv_timeout(FIFO_NOTICE) == Err(mpsc::RecvTimeoutError::Timeout) {
            eprintln!("kinetoscope: waiting for a program to write the trace into the FIFO {shown} (none has opened it yet)");
        }
    });
    let file = File::open(path);
    // The notice thread ends either way: told, or its sender dropped with this function.
    let _ = opened.send(());
    let _ = notice.join();
    file
}

/// True when `path` is a FIFO (a named pipe).
#[cfg(unix)]
fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Named pipes are Unix's.
#[cfg(not(unix))]
fn is_fifo(_: &Path) -> bool {
    false
}

/// Fewest unread bytes a part must have for an idle thread to take half: below, the window
/// read to cut it and the merge of one more part cost about what the idle core would save.
const STEAL_BYTES: u64 = 16 << 20;

/// Reads part `k` (`piece`) of the file at `path` on the calling thread, then parts taken from
/// the others while there are any: each with its index in `shares`.
fn read_parts(path: &Path, shares: &Shares, k: usize, piece: Piece) -> Result<Vec<(usize, StreamedPart)>, String> {
    let cannot = |e: std::io::Error| format!("cannot read {path:?}: {e}");
    let mut file = File::open(path).map_err(cannot)?;
    let mut read = Vec::new();
    let mut next = Some((k, piece));
    while let Some((k, piece)) = next {
        let mut stream = Stream::part(piece);
        let mut claimed = Claimed { file: &mut file, shares, k };
        while stream.fill_from(&mut claimed).map_err(cannot)? > 0 {}
        read.push((k, stream.finish_part()));
        next = shares.steal(&mut |at, buf| read_at(&mut file, at, buf)).map_err(cannot)?.map(|(k, piece, _)| (k, piece));
    }
    Ok(read)
}

/// Part `k` of `file` as a reader: each read claims its bytes from `shares` first.
struct Claimed<'a> {
    file: &'a mut File,
    shares: &'a Shares,
    k: usize,
}

impl Read for Claimed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let range = self.shares.claim(self.k, buf.len() as u64);
        let n = (range.end - range.start) as usize;
        if n > 0 {
            // Claimed bytes are read whole: a part that stole the rest starts right after them.
            self.file.seek(SeekFrom::Start(range.start))?;
            self.file.read_exact(&mut buf[..n])?;
        }
        Ok(n)
    }
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
