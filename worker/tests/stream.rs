//! Streaming load: a trace fed in pieces gives the sequential parse of all of it, wherever
//! the pieces are cut, on every real fixture, the edge-case files, and truncated and
//! malformed inputs (same model, same diagnostics with the same offsets, lines and columns,
//! same fatal errors), while holding only the bytes not yet read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use common::fingerprint;
use kinetoscope::load::{parse, LoadFailure, Stream};
use kinetoscope::model::Trace;

/// `json` fed in pieces of `piece` bytes to a stream that reads every `every` bytes.
fn streamed(json: &[u8], piece: usize, every: usize) -> Result<Trace, LoadFailure> {
    let mut stream = Stream::reading_every(every);
    for chunk in json.chunks(piece.max(1)) {
        stream.push(chunk);
    }
    stream.finish()
}

/// A reader that gives at most `most` bytes per read, as a pipe or a socket may, and counts
/// its reads.
struct Trickle<'a> {
    rest: &'a [u8],
    most: usize,
    reads: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.reads += 1;
        let n = buf.len().min(self.most).min(self.rest.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

/// `json` read by the stream itself ([`Stream::fill_from`]) from a reader giving at most
/// `piece` bytes per read, reading every `every` bytes.
fn filled(json: &[u8], piece: usize, every: usize) -> Result<Trace, LoadFailure> {
    let mut stream = Stream::reading_every(every);
    let mut source = Trickle { rest: json, most: piece.max(1), reads: 0 };
    while stream.fill_from(&mut source).unwrap() > 0 {}
    stream.finish()
}

/// The sequential parse of `json`, fingerprinted: what every streamed read of it must give.
fn sequential(json: &[u8]) -> Result<String, LoadFailure> {
    parse(json, &mut |_| {}).map(|trace| fingerprint(&trace))
}

/// Same result as the sequential parse: the fingerprint, or the same failure.
fn assert_same(json: &[u8], piece: usize, every: usize, what: &str) {
    assert_same_as(&sequential(json), streamed(json, piece, every), piece, every, what);
}

fn assert_same_as(sequential: &Result<String, LoadFailure>, streamed: Result<Trace, LoadFailure>, piece: usize, every: usize, what: &str) {
    match (sequential, streamed) {
        (Ok(a), Ok(b)) => assert_eq!(&fingerprint(&b), a, "{what}: pieces of {piece}, read every {every}"),
        (Err(a), Err(b)) => assert_eq!(&b, a, "{what}: pieces of {piece}, read every {every}"),
        (a, b) => panic!("{what}: pieces of {piece}, read every {every}: sequential {:?}, streamed {:?}", a.as_ref().err(), b.err()),
    }
}

#[test]
fn every_fixture_streamed_in_pieces_is_the_sequential_parse() {
    common::for_each_real_fixture(|path| {
        let json = common::json_bytes(path);
        let what = path.display().to_string();
        // Parsed once: the five reads below are compared with it.
        let whole = sequential(&json);
        // Cuts at many kinds of positions: odd sizes straddle events, keys, numbers, strings.
        for (piece, every) in [(65_536, 1 << 20), (8 << 20, 1 << 20), (4_099, 10_007), (333_333, 1)] {
            assert_same_as(&whole, streamed(&json, piece, every), piece, every, &what);
        }
        // Read by the stream itself, in short reads.
        assert_same_as(&whole, filled(&json, 4_099, 100_003), 4_099, 100_003, &format!("{what} (filled)"));
    });
}

#[test]
fn every_edge_case_file_at_every_cut() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/edge");
    for kind in ["valid", "truncated", "invalid"] {
        for entry in std::fs::read_dir(dir.join(kind)).unwrap() {
            let path = entry.unwrap().path();
            let json = std::fs::read(&path).unwrap();
            if kinetoscope::input::is_gzip(&json) {
                continue;
            }
            for piece in [1, 2, 3, 7, 64] {
                assert_same(&json, piece, 1, &path.display().to_string());
            }
            assert_same_as(&sequential(&json), filled(&json, 7, 1), 7, 1, &format!("{} (filled)", path.display()));
        }
    }
}

#[test]
fn small_documents_cut_at_every_byte() {
    let mut text = String::from("\u{feff}{\"schemaVersion\":1,\"deviceProperties\":[{\"name\":\"H100\"}],\"traceEvents\":[");
    for i in 0..40 {
        text.push_str(&format!(r#"{{"ph":"B","name":"b{i}","pid":"p","tid":1,"ts":{i}.5,"args":{{"k":"\u00e9 {i}","n":[1,2,{{"x":null}}]}}}} ,"#));
        text.push_str(&format!(r#"{{"ph":"s","cat":"c","id":"s{i}","pid":"p","tid":1,"ts":{i}}},  17 ,true,"#));
    }
    text.push_str(&r#"{"ph":"E","pid":"p","tid":1,"ts":999},"#.repeat(45));
    text.push_str(r#"{"ph":"C","name":"mem","pid":"p","ts":5,"args":{"v":1}},"#);
    text.push_str(r#"{"ph":"X","name":"neg","pid":1,"tid":2,"ts":3,"dur":-1},]"#);
    let closed = format!("{text},\"displayTimeUnit\":\"ns\",\"x\":{{\"y\":[1,\n2]}}}}  trailing");
    let events = text.find("\"traceEvents\":[").unwrap() + "\"traceEvents\":[".len();
    let bare = format!("[\n{}", &text[events..]);
    for json in [text.as_str(), closed.as_str(), bare.as_str()] {
        for cut in [json.len(), json.len() - 1, json.len() * 2 / 3, json.len() / 3, 120] {
            let json = &json.as_bytes()[..cut];
            for (piece, every) in [(1, 1), (5, 1), (13, 64), (1, 3000)] {
                assert_same(json, piece, every, &format!("document of {cut} bytes"));
            }
        }
    }
}

#[test]
fn syntax_errors_and_truncation_are_located_as_in_the_whole_text() {
    let json = common::json_bytes(&common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"));
    for cut in [json.len() / 2 + 17, json.len() - 3] {
        assert_same(&json[..cut], 65_536, 1 << 20, &format!("cut at {cut}"));
    }
    let mut broken = json.clone();
    let at = json.len() / 3;
    let colon = at + broken[at..].iter().position(|&b| b == b':').unwrap();
    broken[colon] = b'!';
    let trace = streamed(&broken, 65_536, 1 << 20).unwrap();
    assert!(fingerprint(&trace).contains("json_syntax_stop"));
    assert_same(&broken, 65_536, 1 << 20, "a bad byte in the middle");
    assert_same(&broken, 1 << 16, 1, "a bad byte in the middle, read at every piece");
}

#[test]
fn only_the_unread_tail_is_held() {
    let json = common::json_bytes(&common::real("kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz"));
    let mut stream = Stream::new();
    let mut most = 0;
    let mut model = 0;
    for chunk in json.chunks(1 << 16) {
        stream.push(chunk);
        most = most.max(stream.heap_bytes());
        model = stream.heap_bytes();
    }
    assert_eq!(stream.received(), json.len() as u64);
    // Events are read as the pieces arrive; the last ones when the input ends.
    let events = stream.events();
    let trace = stream.finish().unwrap();
    assert!(events > trace.stats.events * 9 / 10 && events <= trace.stats.events, "{events} of {}", trace.stats.events);
    // The text is never held whole: what the stream holds stays below the JSON it read.
    assert!(most < json.len(), "held {most} bytes for {} of JSON", json.len());
    assert!(model > 0);
}

#[test]
fn a_stream_filling_itself_stops_reading_once_reading_has_ended() {
    // A syntax error near the start of 20 MB: the excerpt is read, the rest is not.
    let mut json = br#"{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}, {"ph": x}"#.to_vec();
    json.resize(20 << 20, b' ');
    let mut stream = Stream::new();
    let mut source = Trickle { rest: &json, most: usize::MAX, reads: 0 };
    while stream.fill_from(&mut source).unwrap() > 0 {}
    assert!(source.reads < 5, "{} reads", source.reads);
    assert_eq!(stream.finish().map(|t| t.stats.events).ok(), parse(&json, &mut |_| {}).map(|t| t.stats.events).ok());
}

#[test]
fn a_stream_expecting_more_bytes_sizes_its_columns_for_them_and_builds_the_same_model() {
    // 24 MB of one-slice events: past the 16 MiB after which an expecting stream estimates.
    let mut json = b"[".to_vec();
    for i in 0..300_000u64 {
        json.extend_from_slice(format!("{{\"ph\":\"X\",\"name\":\"aten::op_{}\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":3}},\n", i % 7, i % 3, i * 5).as_bytes());
        json.resize(json.len() + 10, b' ');
    }
    json.extend_from_slice(b"{}]");
    let read = |stream: Stream| {
        let mut stream = stream;
        for piece in json.chunks(1 << 20) {
            stream.push(piece);
        }
        stream
    };
    let (plain, expecting) = (read(Stream::new()), read(Stream::new().expecting(2 * json.len() as u64)));
    // Sized for about twice its slices, where a column grown by doubling holds less than twice.
    assert!(expecting.heap_bytes() > plain.heap_bytes(), "{} against {}", expecting.heap_bytes(), plain.heap_bytes());
    assert_eq!(fingerprint(&expecting.finish().unwrap()), fingerprint(&plain.finish().unwrap()));
}
