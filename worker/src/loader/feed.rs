//! A part's bytes into its stream (`load::Stream::part`) where they sit outside the engine's
//! memory: a posted part fed to a parse worker in pieces ([`Feed`]), the load worker's own part of
//! posted bytes ([`parse_own`]) and a part of a file or URL read in slices ([`read_into`]), with
//! `Progress` every [`REPORT_BYTES`] and the time spent waiting for bytes.
//!
//! Each read copies the next bytes into the stream's own buffer ([`ViewRead`],
//! `Stream::fill_from`), where they are parsed while in cache. Generic over the transport's bytes
//! ([`View`]) and reads ([`Reads`]), so it is tested natively.

use super::slices::{read_slices, Reads, View};
use crate::load::{Piece, Stream, StreamedPart};
use std::future::Future;

/// Bytes of a posted part parsed between two `Progress` reports (8 MiB, as a file's slices).
pub const REPORT_BYTES: u64 = 8 << 20;

/// Bytes the load worker parses of its own posted part between two looks at its messages
/// (pieces given back to refill).
pub const OWN_STEP: u32 = 16 << 20;

/// Bytes of a [`View`] read in order: each read copies the next ones into `into`.
pub struct ViewRead<V> {
    view: V,
    /// Bytes read so far (an offset into the view).
    pub at: u64,
}

impl<V: View> ViewRead<V> {
    /// Reads `view` from byte `at`.
    pub fn new(view: V, at: u64) -> Self {
        Self { view, at }
    }
}

impl<V: View> std::io::Read for ViewRead<V> {
    fn read(&mut self, into: &mut [u8]) -> std::io::Result<usize> {
        // Views are below 4 GiB (the page refuses larger posted buffers, `control/posted.rs`), so
        // offsets fit u32.
        let at = u32::try_from(self.at).map_err(std::io::Error::other)?;
        let len = self.view.length().saturating_sub(at).min(u32::try_from(into.len()).unwrap_or(u32::MAX));
        self.view.sub(at, at + len).copy_to(&mut into[..len as usize]);
        self.at += u64::from(len);
        Ok(len as usize)
    }
}

/// Whether a `Progress` report is due after `done` bytes, `before` having been done at the
/// last look: a [`REPORT_BYTES`] boundary was passed between them.
pub fn report_due(before: u64, done: u64) -> bool {
    before / REPORT_BYTES != done / REPORT_BYTES
}

/// Parses all of `bytes` into `stream`, `done` bytes of the part having come before them;
/// `report(bytes done)` as each [`REPORT_BYTES`] is passed, which stops the read (`None`) by
/// returning false. The bytes read.
///
/// # Errors
/// A read out of `bytes` that failed.
pub fn parse_from<V: View>(stream: &mut Stream, bytes: V, done: u64, report: &mut dyn FnMut(u64) -> bool) -> Result<Option<u64>, String> {
    let mut bytes = ViewRead::new(bytes, 0);
    loop {
        match stream.fill_from(&mut bytes) {
            Ok(0) => return Ok(Some(bytes.at)),
            Ok(got) => {
                let now = done + bytes.at;
                if report_due(now - got as u64, now) && !report(now) {
                    return Ok(None);
                }
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// A part whose bytes come in messages (`ReadPart` or `Open`, then `More`), parsed as each
/// arrives.
pub struct Feed {
    job: u32,
    index: u32,
    start: u64,
    stream: Stream,
    /// Bytes of the part (unknown until `End` for an `Open` part), and of them arrived.
    len: u64,
    done: u64,
    /// When the last bytes were parsed, and the ms spent since the first waiting for the next.
    idle_since: f64,
    waited_ms: f64,
}

/// What became of a piece fed to a part.
#[derive(Debug, PartialEq)]
pub enum Fed {
    /// Parsed: the piece goes back to be filled with the next bytes.
    Spent,
    /// The part is complete, encoded with the ms waited for its bytes, or failed.
    Done(Result<(Vec<u8>, f64), String>),
}

impl Feed {
    /// Part `index` of load `job`: bytes `piece.start..end`, the first expected from `now_ms`.
    pub fn new(job: u32, index: u32, piece: Piece, end: u64, now_ms: f64) -> Self {
        let len = end.saturating_sub(piece.start);
        Self::fed((job, index, piece.start), Stream::part(piece).expecting(len), len, now_ms)
    }

    /// Part `index` of load `job` from `piece.start`, its end told later ([`end`]), the first
    /// bytes expected from `now_ms`.
    pub fn open(job: u32, index: u32, piece: Piece, now_ms: f64) -> Self {
        Self::fed((job, index, piece.start), Stream::part(piece), u64::MAX, now_ms)
    }

    /// Part `index` of load `job` from byte `start`, `len` bytes into `stream`, none come yet.
    fn fed((job, index, start): (u32, u32, u64), stream: Stream, len: u64, now_ms: f64) -> Self {
        Self { job, index, start, stream, len, done: 0, idle_since: now_ms, waited_ms: 0.0 }
    }

    /// Parses `bytes`, the part's next; `Some` with the part encoded once it has them all, and
    /// the ms waited for them. `progress(bytes done)` every [`REPORT_BYTES`].
    fn take<V: View>(&mut self, bytes: V, now_ms: &dyn Fn() -> f64, progress: &mut dyn FnMut(u64)) -> Option<Result<(Vec<u8>, f64), String>> {
        if self.done > 0 {
            self.waited_ms += now_ms() - self.idle_since;
        }
        let mut report = |done| {
            progress(done);
            true
        };
        // Counted as arrived, parsed or not: a stream stopped by a syntax error reads no more.
        let arrived = u64::from(bytes.length());
        if let Err(e) = parse_from(&mut self.stream, bytes, self.done, &mut report) {
            return Some(Err(e));
        }
        self.done += arrived;
        self.idle_since = now_ms();
        self.complete()
    }

    /// The part encoded with the ms waited for its bytes, once they all came.
    fn complete(&mut self) -> Option<Result<(Vec<u8>, f64), String>> {
        (self.done >= self.len).then(|| {
            let stream = std::mem::take(&mut self.stream);
            Ok((stream.finish_part().encode(), self.waited_ms))
        })
    }
}

/// The part `feed` holds, part `index` of load `job`, ends at byte `end` of the input: `Some`
/// with it encoded (and let go) if its bytes all came, or why not when `feed` holds another
/// part or more bytes came than it has.
pub fn end(feed: &mut Option<Feed>, job: u32, index: u32, end: u64) -> Option<Result<(Vec<u8>, f64), String>> {
    let Some(f) = feed.as_mut().filter(|f| f.job == job && f.index == index) else {
        return Some(Err("the end of a part it was not sent".into()));
    };
    f.len = end.saturating_sub(f.start);
    let done = match f.done.cmp(&f.len) {
        std::cmp::Ordering::Greater => Some(Err(format!("{} bytes came for a part of {}", f.done, f.len))),
        _ => f.complete(),
    };
    if done.is_some() {
        *feed = None;
    }
    done
}

/// Feeds `bytes` of part `index` of load `job` to the part `feed` holds; the part is let go once
/// done (complete, failed, or not the part `feed` holds).
pub fn feed<V: View>(feed: &mut Option<Feed>, job: u32, index: u32, bytes: V, now_ms: &dyn Fn() -> f64, progress: &mut dyn FnMut(u64)) -> Fed {
    let taken = match feed.as_mut().filter(|f| f.job == job && f.index == index) {
        Some(f) => f.take(bytes, now_ms, progress),
        None => Some(Err("bytes for a part it was not sent".into())),
    };
    match taken {
        Some(done) => {
            *feed = None;
            Fed::Done(done)
        }
        None => Fed::Spent,
    }
}

/// Parses `view` (exactly a part's bytes) into `stream` in [`OWN_STEP`] steps, `pause` between
/// two; `progress(bytes done)` every [`REPORT_BYTES`] or so, and the parse stops (`None`) once
/// `go_on()` is false. The part, and no time waited.
///
/// # Errors
/// A read out of `view` that failed.
pub async fn parse_own<V: View, P: Future<Output = ()>>(
    view: &V,
    mut stream: Stream,
    progress: &mut dyn FnMut(u64),
    go_on: &mut dyn FnMut() -> bool,
    mut pause: impl FnMut() -> P,
) -> Result<Option<(StreamedPart, f64)>, String> {
    let mut report = |done| {
        let going = go_on();
        if going {
            progress(done);
        }
        going
    };
    let (mut at, len) = (0, view.length());
    while at < len {
        let to = at.saturating_add(OWN_STEP).min(len);
        if parse_from(&mut stream, view.sub(at, to), u64::from(at), &mut report)?.is_none() {
            return Ok(None);
        }
        at = to;
        if at < len {
            pause().await;
        }
    }
    Ok(go_on().then(|| (stream.finish_part(), 0.0)))
}

/// Parses bytes `range` of `from` into `stream` as they are read ([`read_slices`]);
/// `progress(bytes done)` per slice, and the read stops (`None`) once `go_on()` is false. The
/// part, and the ms spent waiting for reads.
///
/// # Errors
/// The transport's words when a slice cannot be read.
pub async fn read_into<R: Reads>(
    from: &R,
    mut stream: Stream,
    range: std::ops::Range<u64>,
    progress: &mut dyn FnMut(u64),
    go_on: &mut dyn FnMut() -> bool,
) -> Result<Option<(StreamedPart, f64)>, String> {
    let (mut bytes, mut done) = (Vec::new(), 0);
    let waited_ms = read_slices(from, range, |slice| {
        if !go_on() {
            return false;
        }
        bytes.resize(slice.length() as usize, 0);
        slice.copy_to(&mut bytes);
        stream.push(&bytes);
        done += bytes.len() as u64;
        progress(done);
        true
    })
    .await?;
    Ok(waited_ms.map(|ms| (stream.finish_part(), ms)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Form;
    use crate::loader::slices::{run_ready, tests::Input, Shape};
    use crate::fork::Sequential;
    use crate::load::{join, StreamedPart};
    use std::cell::Cell;

    /// A JSON array of `n` small events.
    fn trace(n: usize) -> Vec<u8> {
        let events: Vec<String> = (0..n).map(|i| format!(r#"{{"ph":"X","name":"e{i}","pid":1,"tid":1,"ts":{i},"dur":1}}"#)).collect();
        format!("[{}]", events.join(",")).into_bytes()
    }

    fn whole() -> Piece {
        Piece { start: 0, form: Form::Array, first: true }
    }

    /// The slices of a trace that is this one part.
    fn slices_of(part: StreamedPart) -> usize {
        join(vec![part], &Sequential).and_then(Result::ok).map_or(0, |t| t.slices.len())
    }

    fn slices_encoded(encoded: &[u8]) -> usize {
        StreamedPart::decode(encoded).map_or(0, slices_of)
    }

    #[test]
    fn a_view_is_read_in_order_from_its_offset() {
        let mut read = ViewRead::new(b"abcdef".to_vec(), 2);
        let mut into = [0; 3];
        assert_eq!(std::io::Read::read(&mut read, &mut into).ok(), Some(3));
        assert_eq!(&into, b"cde");
        assert_eq!(std::io::Read::read(&mut read, &mut into).ok(), Some(1));
        assert_eq!(into[0], b'f');
        assert_eq!(std::io::Read::read(&mut read, &mut into).ok(), Some(0));
        assert_eq!(read.at, 6);
    }

    #[test]
    fn progress_is_reported_each_time_a_report_step_is_passed() {
        let json = trace(350_000);
        assert!(json.len() as u64 > 2 * REPORT_BYTES);
        let mut stream = Stream::part(whole());
        let mut reports = Vec::new();
        let read = parse_from(&mut stream, json.clone(), 0, &mut |done| {
            reports.push(done);
            true
        });
        assert_eq!(read, Ok(Some(json.len() as u64)));
        assert_eq!(reports.iter().map(|d| d / REPORT_BYTES).collect::<Vec<_>>(), [1, 2]);
        let mut stream = Stream::part(whole());
        assert_eq!(parse_from(&mut stream, json, 0, &mut |_| false), Ok(None));
    }

    #[test]
    fn a_fed_part_is_done_once_all_its_bytes_came() {
        let json = trace(50);
        let end = json.len() as u64;
        let now = Cell::new(10.0);
        let clock = || {
            now.set(now.get() + 5.0);
            now.get()
        };
        let mut slot = Some(Feed::new(1, 0, whole(), end, 10.0));
        let (head, tail) = json.split_at(json.len() / 2);
        assert_eq!(feed(&mut slot, 1, 0, head.to_vec(), &clock, &mut |_| {}), Fed::Spent);
        assert!(slot.is_some());
        let Fed::Done(Ok((encoded, waited_ms))) = feed(&mut slot, 1, 0, tail.to_vec(), &clock, &mut |_| {}) else { panic!("not done") };
        assert!(slot.is_none());
        assert_eq!(slices_encoded(&encoded), 50);
        // The clock moved 5 ms between the end of the first piece and the second.
        assert_eq!(waited_ms, 5.0);
    }

    #[test]
    fn an_open_part_is_done_when_its_end_is_told() {
        let json = trace(50);
        let (head, tail) = json.split_at(json.len() / 2);
        let mut slot = Some(Feed::open(2, 0, whole(), 0.0));
        assert_eq!(feed(&mut slot, 2, 0, head.to_vec(), &|| 0.0, &mut |_| {}), Fed::Spent);
        assert_eq!(feed(&mut slot, 2, 0, tail.to_vec(), &|| 0.0, &mut |_| {}), Fed::Spent, "not done before its end is told");
        assert_eq!(end(&mut slot, 2, 1, json.len() as u64), Some(Err("the end of a part it was not sent".into())));
        let mut slot = Some(Feed::open(2, 0, whole(), 0.0));
        assert_eq!(feed(&mut slot, 2, 0, head.to_vec(), &|| 0.0, &mut |_| {}), Fed::Spent);
        // Told before its last bytes came: done with them.
        assert_eq!(end(&mut slot, 2, 0, json.len() as u64), None);
        let Fed::Done(Ok((encoded, _))) = feed(&mut slot, 2, 0, tail.to_vec(), &|| 0.0, &mut |_| {}) else { panic!("not done") };
        assert_eq!(slices_encoded(&encoded), 50);
        let mut slot = Some(Feed::open(2, 0, whole(), 0.0));
        assert_eq!(feed(&mut slot, 2, 0, json.clone(), &|| 0.0, &mut |_| {}), Fed::Spent);
        let Some(Ok((encoded, _))) = end(&mut slot, 2, 0, json.len() as u64) else { panic!("not done") };
        assert!(slot.is_none());
        assert_eq!(slices_encoded(&encoded), 50);
        let mut slot = Some(Feed::open(2, 0, whole(), 0.0));
        assert_eq!(feed(&mut slot, 2, 0, json.clone(), &|| 0.0, &mut |_| {}), Fed::Spent);
        assert_eq!(end(&mut slot, 2, 0, 10), Some(Err(format!("{} bytes came for a part of 10", json.len()))));
    }

    #[test]
    fn bytes_of_another_part_are_refused() {
        let mut slot = Some(Feed::new(1, 0, whole(), 10, 0.0));
        let other = feed(&mut slot, 1, 1, b"[".to_vec(), &|| 0.0, &mut |_| {});
        assert_eq!(other, Fed::Done(Err("bytes for a part it was not sent".into())));
        assert!(slot.is_none());
        assert_eq!(feed(&mut None, 2, 0, Vec::new(), &|| 0.0, &mut |_| {}), Fed::Done(Err("bytes for a part it was not sent".into())));
    }

    #[test]
    fn an_own_part_is_parsed_in_steps_and_can_be_stopped() {
        let json = trace(350_000);
        assert!(json.len() as u64 > u64::from(OWN_STEP));
        let pauses = Cell::new(0);
        let pause = || {
            pauses.set(pauses.get() + 1);
            std::future::ready(())
        };
        let got = run_ready(parse_own(&json, Stream::part(whole()), &mut |_| {}, &mut || true, pause));
        let Ok(Some((part, waited_ms))) = got else { panic!("not parsed") };
        assert_eq!((slices_of(part), waited_ms), (350_000, 0.0));
        assert_eq!(pauses.get(), json.len().div_ceil(OWN_STEP as usize) - 1);
        let stopped = run_ready(parse_own(&json, Stream::part(whole()), &mut |_| {}, &mut || false, || std::future::ready(())));
        assert!(matches!(stopped, Ok(None)));
    }

    #[test]
    fn a_part_read_in_slices_reports_per_slice() {
        let mut input = Input::new(0, Shape { slice: 1000, ahead: 2 });
        input.bytes = trace(100);
        let len = input.bytes.len() as u64;
        let mut reports = Vec::new();
        let got = run_ready(read_into(&input, Stream::part(whole()), 0..len, &mut |d| reports.push(d), &mut || true));
        let Ok(Some((part, _))) = got else { panic!("not read") };
        assert_eq!(slices_of(part), 100);
        assert_eq!(reports, (1..=len.div_ceil(1000)).map(|k| (k * 1000).min(len)).collect::<Vec<_>>());
        let stopped = run_ready(read_into(&input, Stream::part(whole()), 0..len, &mut |_| {}, &mut || false));
        assert!(matches!(stopped, Ok(None)));
    }
}
