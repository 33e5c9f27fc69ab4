//! `kinetoscope serve LOGDIR` as a live log directory: traces a running job writes appear in the
//! listing without a restart, marked `writing` while they grow or do not close yet (plain JSON
//! cut mid-array, a gzip stream cut short), and a trace growing while it is sent goes out as
//! long as it was at the request (its `Content-Length` held, the connection reusable).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use kinetoscope::serve::http;
use kinetoscope::serve::limits::Limits;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A server on an ephemeral port over `log`, with a one-file site beside it.
fn start(log: &Path) -> SocketAddr {
    let site = log.with_file_name("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("index.html"), "<!doctype html><title>site</title>").unwrap();
    let steps = kinetoscope::serve::steps::StepCounts::start();
    let logs = http::Logs { dir: log.canonicalize().unwrap(), root_name: "log".into(), steps };
    let served = http::Served { logs: Some(logs), site };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || http::run(served, "127.0.0.1:0".parse().unwrap(), Limits::default(), |a| tx.send(a).unwrap()));
    rx.recv_timeout(Duration::from_secs(10)).unwrap()
}

/// `/index.json`, parsed.
fn listing(addr: SocketAddr) -> Value {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(b"GET /index.json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    serde_json::from_slice(&raw[split + 4..]).unwrap()
}

/// `writing` of the trace named `name` in the listing, `None` while it is not listed.
fn writing(index: &Value, name: &str) -> Option<bool> {
    let traces = index["runs"].as_array().unwrap().iter().flat_map(|r| r["traces"].as_array().unwrap().iter());
    traces.filter(|t| t["name"] == name).map(|t| t["writing"].as_bool().unwrap()).next()
}

/// Polls the listing until trace `name` is listed with `writing == want` (the step count that
/// tells a gzip's end runs in the background), or 10 s pass.
fn wait_for(addr: SocketAddr, name: &str, want: bool) -> Option<bool> {
    let mut seen = None;
    for _ in 0..200 {
        seen = writing(&listing(addr), name);
        if seen == Some(want) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    seen
}

/// Sets `path`'s modification time a minute back: a file no longer growing.
fn settle(path: &Path) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();
}

/// A trace of `n` complete events, and the bytes up to the middle of its event array.
fn trace(n: usize) -> (String, usize) {
    let events: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"ph": "X", "name": "ProfilerStep#{i}", "pid": 1, "tid": 1, "ts": {}, "dur": 5}}"#, i * 10))
        .collect();
    let text = format!("{{\"traceEvents\": [{}]}}\n", events.join(",\n"));
    let half = text.len() / 2;
    (text, half)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[test]
fn traces_written_while_serving_appear_and_say_they_are_being_written() {
    let base = tempfile::tempdir().unwrap();
    let log = base.path().join("log");
    std::fs::create_dir_all(log.join("old")).unwrap();
    let (text, half) = trace(2000);
    std::fs::write(log.join("old/done.json"), &text).unwrap();
    settle(&log.join("old/done.json"));
    let addr = start(&log);
    assert_eq!(writing(&listing(addr), "done.json"), Some(false), "a finished trace");

    // A job starts writing while the server runs: listed at once, as writing.
    std::fs::create_dir_all(log.join("job")).unwrap();
    let plain = log.join("job/rank-0.json");
    std::fs::write(&plain, &text[..half]).unwrap();
    assert_eq!(writing(&listing(addr), "rank-0.json"), Some(true), "a fresh file, listed without a restart");
    // Not modified for a minute, but its array never closed: still writing.
    settle(&plain);
    assert_eq!(writing(&listing(addr), "rank-0.json"), Some(true), "plain JSON that does not close yet");
    // Closed, but written a moment ago: a job may append another file's worth yet.
    std::fs::write(&plain, &text).unwrap();
    assert_eq!(writing(&listing(addr), "rank-0.json"), Some(true), "modified in the last seconds");
    settle(&plain);
    assert_eq!(writing(&listing(addr), "rank-0.json"), Some(false), "once closed and quiet");

    // A gzip cut short by its writer: only inflating it all tells (the background count).
    let gz = log.join("job/rank-1.json.gz");
    let packed = gzip(text.as_bytes());
    std::fs::write(&gz, &packed[..packed.len() / 2]).unwrap();
    settle(&gz);
    assert_eq!(wait_for(addr, "rank-1.json.gz", true), Some(true), "a half-written gzip");
    std::fs::write(&gz, &packed).unwrap();
    settle(&gz);
    assert_eq!(wait_for(addr, "rank-1.json.gz", false), Some(false), "the whole gzip");
}

#[test]
fn a_trace_growing_while_it_is_sent_goes_out_as_long_as_it_was() {
    let base = tempfile::tempdir().unwrap();
    let log = base.path().join("log");
    std::fs::create_dir_all(&log).unwrap();
    let path = log.join("growing.json");
    // Larger than the socket buffers, so the server is still reading the file when it grows.
    let (text, _) = trace(300_000);
    let at_request = text.len() / 2;
    std::fs::write(&path, &text[..at_request]).unwrap();
    let addr = start(&log);

    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let ask = b"GET /logs/growing.json HTTP/1.1\r\nHost: localhost\r\n\r\n";
    stream.write_all(ask).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    while !head.ends_with("\r\n\r\n") {
        assert!(reader.read_line(&mut head).unwrap() > 0, "closed in the head: {head}");
    }
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let length: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length: ").map(|v| v.trim().parse().unwrap()))
        .unwrap();
    assert_eq!(length, at_request);
    // The job writes the rest while the body is on its way.
    std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(&text.as_bytes()[at_request..]).unwrap();
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    assert!(body == text.as_bytes()[..at_request], "the file as it was at the request");
    // Nothing past the announced length, and the connection still answers (keep-alive).
    stream.write_all(ask).unwrap();
    let mut next = String::new();
    reader.read_line(&mut next).unwrap();
    assert!(next.starts_with("HTTP/1.1 200"), "the next answer on this connection: {next:?}");
}
