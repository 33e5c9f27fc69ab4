//! Traces that do not come as a whole file: `-` reads stdin (JSON or gzip, as the file path
//! reads them), a FIFO no program writes to says what it waits for, and bytes after the
//! top-level value are named by their offset on every path of the parse (r48).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use common::fingerprint;
use kinetoscope::fork::Sequential;
use kinetoscope::load::{cut, join, parse, Stream};
use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_kinetoscope");

/// The CLI run with `args` and `stdin` as its standard input.
fn run_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    // Written while the CLI reads, so a trace larger than the pipe's buffer goes through.
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    out
}

/// `report --json`'s document without the file name (`stdin` for `-`).
fn report_without_name(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc.as_object_mut().unwrap().remove("file");
    doc
}

#[test]
fn dash_reads_json_or_gzip_from_stdin_as_the_file_path_reads_them() {
    let path = common::real("kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz");
    let gzip = std::fs::read(&path).unwrap();
    let json = common::json_bytes(&path);
    let from_path = Command::new(BIN).args(["report", "--json", path.to_str().unwrap()]).output().unwrap();
    let expected = report_without_name(&from_path);
    assert!(!expected["ops"].as_array().unwrap().is_empty());
    for (bytes, what) in [(&gzip, "gzip"), (&json, "JSON")] {
        let out = run_with_stdin(&["report", "--json", "-"], bytes);
        assert!(report_without_name(&out) == expected, "{what} on stdin");
        assert!(out.stderr.is_empty(), "{what}: nothing on stderr from a pipe: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = run_with_stdin(&["info", "--json", "-"], &gzip);
    let summary: protocol::TraceSummary = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((summary.file_name.as_str(), summary.format.as_str(), summary.file_bytes), ("stdin", "json-array+gzip", gzip.len() as u64));
    let out = run_with_stdin(&["info", "-"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "kinetoscope: stdin: the file is empty (0 bytes)\n");
}

#[cfg(unix)]
#[test]
fn a_fifo_without_a_writer_says_what_it_waits_for_then_reads_what_comes() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("trace.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: no mkfifo");
        return;
    }
    let child = Command::new(BIN).args(["info", fifo.to_str().unwrap()]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // The CLI waits in its open until a writer opens the FIFO; it says so after a second.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    writer.write_all(br#"{"traceEvents":[{"ph":"X","name":"op","pid":1,"tid":1,"ts":1,"dur":2}]}"#).unwrap();
    drop(writer);
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("events     1"), "{stdout}");
    let expected = format!("kinetoscope: waiting for a program to write the trace into the FIFO {} (none has opened it yet)\n", fifo.display());
    assert_eq!(stderr, expected);
}

/// `n` events in the object form (or the bare array), then `end`: the events array's and the
/// document's close, and what follows.
fn events_then(n: usize, end: &str) -> String {
    let events: Vec<String> = (0..n).map(|t| format!("{{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":{t},\"dur\":1}}")).collect();
    let head = if end.starts_with("]}") { "{\"traceEvents\":[" } else { "[" };
    format!("{head}\n{}\n{end}", events.join(",\n"))
}

#[test]
fn bytes_after_the_top_level_value_are_named_by_their_offset_on_every_path() {
    // What follows the events, and where in it the top-level value ends when bytes follow.
    let ends = [("]}\n\n  garbage\n", Some(2)), ("]} \n", None), ("]}{\"traceEvents\":[]}", Some(2)), ("]\u{0}", Some(1)), ("]\n", None), ("", None)];
    for (end, value_end) in ends {
        let json = events_then(300, end);
        let whole = parse(json.as_bytes(), &mut |_| {}).unwrap();
        let lines = whole.diagnostics.lines();
        let expected = value_end.map(|k| {
            let value_end = json.len() - end.len() + k;
            let at = value_end + json[value_end..].find(|c: char| !c.is_ascii_whitespace()).unwrap();
            format!("json_trailing_bytes (DataLoss): 1 × bytes after the end of the top-level JSON value; not read; first at byte {at}: the top-level value ends at byte {value_end}")
        });
        assert_eq!(lines.iter().find(|l| l.starts_with("json_trailing_bytes")), expected.as_ref(), "{end:?}");
        assert_eq!(whole.slices.name.len(), 300, "{end:?}: every event before the end read");
        // Streamed in pieces (one byte; the bytes after the end arriving after reading ended),
        // read by the stream itself, and cut into parts joined.
        let expected = fingerprint(&whole);
        for piece in [1, 7, 4_096, json.len()] {
            let mut stream = Stream::reading_every(64);
            json.as_bytes().chunks(piece).for_each(|c| stream.push(c));
            assert_eq!(fingerprint(&stream.finish().unwrap()), expected, "{end:?}: pieces of {piece}");
        }
        let mut stream = Stream::reading_every(64);
        let mut source = json.as_bytes();
        while stream.fill_from(&mut source).unwrap() > 0 {}
        assert_eq!(fingerprint(&stream.finish().unwrap()), expected, "{end:?}: filled");
        let cuts = cut(json.len() as u64, 3, &mut |at, buf| (&json.as_bytes()[at as usize..]).read(buf)).unwrap();
        assert!(cuts.len() > 1);
        let parts = cuts
            .into_iter()
            .map(|(piece, range)| {
                let mut stream = Stream::part(piece);
                stream.push(&json.as_bytes()[range.start as usize..range.end as usize]);
                stream.finish_part()
            })
            .collect::<Vec<_>>();
        assert_eq!(fingerprint(&join(parts, &Sequential).unwrap().unwrap()), expected, "{end:?}: parts joined");
    }
}

#[test]
fn the_cli_names_trailing_bytes_in_info() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.json");
    let json = events_then(3, "]}\n{\"traceEvents\":[]}\n");
    std::fs::write(&path, &json).unwrap();
    let out = Command::new(BIN).args(["info", path.to_str().unwrap()]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let at = json.find("]}\n{").unwrap() + 3;
    assert!(stdout.contains(&format!("json_trailing_bytes (DataLoss): 1 × bytes after the end of the top-level JSON value; not read; first at byte {at}: the top-level value ends at byte {}", at - 1)), "{stdout}");
}
