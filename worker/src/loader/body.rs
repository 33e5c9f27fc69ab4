//! A part of a URL fetched as one ranged request and parsed as its body arrives, chunk by chunk
//! ([`read_body_into`]). Generic over the transport's chunks ([`Body`]), so it is tested
//! natively; the browser's side is `web::source::FetchBody`.
//!
//! Why one request per part, read as it arrives: a 500 MB trace fetched in 16 MiB ranged
//! requests (two parts, each its own requests in turn) cost Chromium 1.9-2.2 s of CPU to receive
//! where two 250 MB requests cost 1.0 s (the same bytes, loopback server, 2026-11-30;
//! docs/performance.md), and each request's `arrayBuffer` waited for all its bytes before the
//! parse could start on them.

use super::feed::parse_from;
use super::slices::{Reading, View};
use crate::load::{Stream, StreamedPart};

/// A response body read in order as the transport receives it, and the worker's clock.
pub trait Body {
    /// The bytes a chunk holds.
    type View: View;
    /// Starts reading the next chunk: `None` at the body's end.
    fn next(&mut self) -> Reading<Option<Self::View>>;
    /// Milliseconds on the worker's clock.
    fn now_ms(&self) -> f64;
}

/// Parses `body`, the `len` bytes of a part, into `stream` as its chunks come; `progress(bytes
/// done)` every `feed::REPORT_BYTES`, and the read stops (`None`) once `go_on()` is false. The
/// part, and the ms spent waiting for chunks.
///
/// # Errors
/// The transport's words when a chunk cannot be read; a body longer or shorter than `len`.
pub async fn read_body_into<B: Body>(
    body: &mut B,
    mut stream: Stream,
    len: u64,
    progress: &mut dyn FnMut(u64),
    go_on: &mut dyn FnMut() -> bool,
) -> Result<Option<(StreamedPart, f64)>, String> {
    let (mut done, mut waited_ms) = (0, 0.0);
    let mut report = |now| {
        progress(now);
        go_on()
    };
    loop {
        let asked = body.now_ms();
        let chunk = body.next().await?;
        waited_ms += body.now_ms() - asked;
        let Some(chunk) = chunk else { break };
        let got = u64::from(chunk.length());
        if done + got > len {
            return Err(format!("the server sent more than the {len} bytes asked for"));
        }
        if parse_from(&mut stream, chunk, done, &mut report)?.is_none() {
            return Ok(None);
        }
        done += got;
    }
    if done < len {
        return Err(format!("the body ended after {done} of the {len} bytes asked for"));
    }
    Ok(go_on().then(|| (stream.finish_part(), waited_ms)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fork::Sequential;
    use crate::json::Form;
    use crate::load::{join, Piece};
    use crate::loader::feed::REPORT_BYTES;
    use crate::loader::slices::run_ready;

    /// A body of `bytes` in chunks of `chunk` bytes; each chunk (and the end) takes 2 ms to come.
    struct Chunks {
        bytes: Vec<u8>,
        chunk: usize,
        at: usize,
        now: f64,
        fail: bool,
    }

    impl Chunks {
        fn new(bytes: Vec<u8>, chunk: usize) -> Self {
            Self { bytes, chunk, at: 0, now: 0.0, fail: false }
        }
    }

    impl Body for Chunks {
        type View = Vec<u8>;

        fn next(&mut self) -> Reading<Option<Vec<u8>>> {
            self.now += 2.0;
            if self.fail {
                return Box::pin(std::future::ready(Err("connection reset".into())));
            }
            let to = (self.at + self.chunk).min(self.bytes.len());
            let chunk = (to > self.at).then(|| self.bytes[self.at..to].to_vec());
            self.at = to;
            Box::pin(std::future::ready(Ok(chunk)))
        }

        fn now_ms(&self) -> f64 {
            self.now
        }
    }

    fn trace(n: usize) -> Vec<u8> {
        let events: Vec<String> = (0..n).map(|i| format!(r#"{{"ph":"X","name":"e{i}","pid":1,"tid":1,"ts":{i},"dur":1}}"#)).collect();
        format!("[{}]", events.join(",")).into_bytes()
    }

    fn stream() -> Stream {
        Stream::part(Piece { start: 0, form: Form::Array, first: true })
    }

    fn slices_of(part: StreamedPart) -> usize {
        join(vec![part], &Sequential).and_then(Result::ok).map_or(0, |t| t.slices.len())
    }

    #[test]
    fn a_body_in_small_chunks_is_the_whole_part_with_progress_per_report_step() {
        let json = trace(350_000);
        let len = json.len() as u64;
        assert!(len > 2 * REPORT_BYTES);
        let mut body = Chunks::new(json, 64 << 10);
        let mut reports = Vec::new();
        let got = run_ready(read_body_into(&mut body, stream(), len, &mut |d| reports.push(d), &mut || true));
        let Ok(Some((part, waited_ms))) = got else { panic!("not read") };
        assert_eq!(slices_of(part), 350_000);
        assert_eq!(waited_ms, 2.0 * (len.div_ceil(64 << 10) + 1) as f64);
        assert_eq!(reports.iter().map(|d| d / REPORT_BYTES).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn a_body_shorter_or_longer_than_asked_is_an_error() {
        let json = trace(100);
        let len = json.len() as u64;
        let short = run_ready(read_body_into(&mut Chunks::new(json.clone(), 1000), stream(), len + 1, &mut |_| {}, &mut || true));
        assert_eq!(short.err(), Some(format!("the body ended after {len} of the {} bytes asked for", len + 1)));
        let long = run_ready(read_body_into(&mut Chunks::new(json, 1000), stream(), len - 1, &mut |_| {}, &mut || true));
        assert_eq!(long.err(), Some(format!("the server sent more than the {} bytes asked for", len - 1)));
    }

    #[test]
    fn a_failed_chunk_is_the_error_and_a_stop_ends_the_read() {
        let json = trace(350_000);
        let len = json.len() as u64;
        let mut failing = Chunks::new(json.clone(), 1 << 20);
        failing.fail = true;
        let failed = run_ready(read_body_into(&mut failing, stream(), len, &mut |_| {}, &mut || true));
        assert_eq!(failed.err().as_deref(), Some("connection reset"));
        let mut asked = 0;
        let stopped = run_ready(read_body_into(&mut Chunks::new(json, 1 << 20), stream(), len, &mut |_| {}, &mut || {
            asked += 1;
            asked < 2
        }));
        assert!(matches!(stopped, Ok(None)));
    }
}
