//! Long strings are cut, counted and never held whole: every path of the parse keeps the same
//! first 64 KiB of a long name, arg or top-level value, says so in `json_string_cut`, and
//! locates later problems at their true offsets; the CLI reads a 200 MB name and a gzip holding
//! a long string in bounded memory (r48).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use common::fingerprint;
use flate2::write::GzEncoder;
use flate2::Compression;
use kinetoscope::json::long::MAX_STRING_BYTES;
use kinetoscope::fork::Sequential;
use kinetoscope::load::{cut, join, parse, LoadFailure, Stream, StreamedPart};
use kinetoscope::model::Trace;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Long enough that a stream cuts it before holding it (more than the 1 MiB after which it looks).
const LONG: usize = 3 << 20;

/// `json` fed to a stream in pieces of `piece` bytes, read every `every` bytes.
fn streamed(json: &[u8], piece: usize, every: usize) -> Result<Trace, LoadFailure> {
    let mut stream = Stream::reading_every(every);
    for chunk in json.chunks(piece) {
        stream.push(chunk);
    }
    stream.finish()
}

/// `json` read by a stream from a reader giving at most `most` bytes a read.
fn filled(json: &[u8], most: usize, every: usize) -> Result<Trace, LoadFailure> {
    struct Trickle<'a>(&'a [u8], usize);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.1).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let mut stream = Stream::reading_every(every);
    let mut source = Trickle(json, most);
    while stream.fill_from(&mut source).unwrap() > 0 {}
    stream.finish()
}

/// `json` cut into up to three parts read on their own, sent encoded as the page's parse
/// workers send theirs, and joined: how many parts, and the trace (`None` when the join gives
/// up and the CLI would read sequentially).
fn joined(json: &[u8]) -> (usize, Option<Result<Trace, LoadFailure>>) {
    let cuts = cut(json.len() as u64, 3, &mut |at, buf| {
        let rest = json.get(at as usize..).unwrap_or_default();
        let n = buf.len().min(rest.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    })
    .unwrap();
    let n = cuts.len();
    let parts: Vec<StreamedPart> = cuts
        .into_iter()
        .map(|(piece, range)| {
            let mut stream = Stream::part(piece);
            for chunk in json[range.start as usize..range.end as usize].chunks(65_536) {
                stream.push(chunk);
            }
            StreamedPart::decode(&stream.finish_part().encode()).unwrap()
        })
        .collect();
    (n, join(parts, &Sequential))
}

/// Every stream of `json` (pieces straddling the strings, a piece holding a whole one, short
/// reads, parts read on their own and joined) gives the sequential parse: same model, same
/// diagnostics at the same places.
fn assert_every_path_alike(json: &[u8], what: &str) -> Trace {
    let whole = parse(json, &mut |_| {});
    let expected = whole.as_ref().map(fingerprint).map_err(Clone::clone);
    let same = |got: Result<Trace, LoadFailure>, how: &str| {
        let got = got.map(|t| fingerprint(&t));
        if let (Ok(a), Ok(b)) = (&got, &expected) {
            let diff = a.lines().zip(b.lines()).find(|(x, y)| x != y);
            assert!(diff.is_none() && a.lines().count() == b.lines().count(), "{what}: {how}: first difference {:.3000?}", diff);
        }
        assert!(got == expected, "{what}: {how}:\n{:.3000}\nagainst\n{:.3000}", format!("{got:?}"), format!("{expected:?}"));
    };
    for (piece, every) in [(65_536, 1 << 20), (8 << 20, 1 << 20), (4_099, 10_007), (333_333, 1)] {
        same(streamed(json, piece, every), &format!("pieces of {piece}, read every {every}"));
    }
    same(filled(json, 4_099, 100_003), "filled");
    let (parts, trace) = joined(json);
    if let Some(trace) = trace {
        same(trace, &format!("{parts} parts joined"));
    }
    whole.unwrap()
}

/// `n` bytes of text: `unit` repeated, a raw newline every 1,000 bytes when `lines`.
fn text(unit: &str, n: usize, lines: bool) -> String {
    let mut s = String::with_capacity(n + 4);
    while s.len() < n {
        s.push_str(if lines && s.len() % 1000 == 999 { "\n" } else { unit });
    }
    s
}

/// The long name: `a` up to one byte before the limit, an escaped quote across it, then `é`s
/// (two bytes each, so no cut falls on a character's middle unnoticed).
fn long_name() -> String {
    format!("{}\\\"{}", "a".repeat(MAX_STRING_BYTES - 1), text("é", LONG, false))
}

/// `n` short events on one line, from `ts`, each with a comma before it.
fn short_events(n: usize, ts: usize) -> String {
    (ts..ts + n).map(|t| format!(",{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"short\",\"pid\":1,\"tid\":2,\"ts\":{t},\"dur\":1}}")).collect()
}

/// A trace with four long strings (a name, an arg value with raw newlines, an arg key, a
/// top-level value after the events) in its third line, short events around them (where parts
/// are cut), `middle` inside the long event's args and `after` after the last event.
fn trace(middle: &str, after: &str) -> String {
    let note = text("x", LONG, true);
    let key = text("k", LONG, false);
    let device = text("d", LONG, false);
    format!(
        "{{\"traceEvents\":[\n{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"first\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":10}}{},\n\
         {{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"{}\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1,\"args\":{{\"note\": \"{note}\", \"External id\": 7{middle}, \"{key}\": 1}}}}{},\n\
         {{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"after\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1}}{after}\n],\n\
         \"deviceProperties\": [{{\"name\": \"{device}\"}}]}}\n",
        short_events(50, 10),
        long_name(),
        short_events(50, 100),
    )
}

#[test]
fn long_strings_are_cut_alike_on_every_path_and_counted() {
    let json = trace("", "");
    let t = assert_every_path_alike(json.as_bytes(), "four long strings");
    let names: Vec<String> = (0..t.slices.name.len()).map(|i| t.strings.get(t.slices.name[i]).into_owned()).collect();
    let long = names.iter().find(|n| n.starts_with("aa")).unwrap();
    assert_eq!(long, &"a".repeat(MAX_STRING_BYTES - 1), "cut before the escape that crosses the limit");
    let i = names.iter().position(|n| n.starts_with("aa")).unwrap();
    // The raw newlines in the note are accepted by the tokenizer, not by serde_json.
    let args: serde_json::Value = serde_json::from_str(&t.args_text(t.slices.args[i]).replace('\n', " ")).unwrap();
    let args = args.as_object().unwrap();
    assert_eq!(args["External id"], 7);
    assert_eq!(args["note"].as_str().unwrap().len(), MAX_STRING_BYTES, "the arg value is cut too");
    assert!(args.keys().any(|k| k.len() == MAX_STRING_BYTES && k.starts_with('k')), "and the arg key");
    assert_eq!(t.slices.correlation.len(), 103);
    let (parts, _) = joined(json.as_bytes());
    assert!(parts > 1, "the joined path was taken");
    let (_, device) = t.top_level.iter().find(|(k, _)| k == "deviceProperties").unwrap();
    let device: serde_json::Value = serde_json::from_str(device).unwrap();
    assert_eq!(device[0]["name"].as_str().unwrap().len(), MAX_STRING_BYTES, "a top-level value stays JSON, cut");
    let lines = t.diagnostics.lines();
    let quote = json.find("\"a").unwrap();
    let longest = long_name().len();
    let expected = format!("json_string_cut (DataLoss): 4 × string longer than 64 KiB (a name, an arg value); its first 64 KiB kept; first at byte {quote}: the longest is {longest} bytes");
    assert!(lines.contains(&expected), "{lines:#?}");
}

#[test]
fn problems_after_a_long_string_are_located_at_their_bytes() {
    // A syntax error in the same event as the cut strings (located in what a stream still
    // holds, across its gaps), in the next event (after the gaps were let go, their newlines
    // counted), and the input ending inside a long string. Only the strings read before
    // reading stopped are counted, whatever a stream had cut ahead of it.
    let inside = trace(", \"oops\" 1", "");
    let after = trace("", ",\n{\"ph\":\"X\" oops}");
    for (json, what, cut) in [(inside.as_str(), "error in the long event", 2), (after.as_str(), "error after it", 3)] {
        let t = assert_every_path_alike(json.as_bytes(), what);
        let at = json.find(" 1,").or_else(|| json.find(" oops")).unwrap() + 1;
        let line = json[..at].matches('\n').count() + 1;
        let column = at - json[..at].rfind('\n').map_or(0, |p| p + 1) + 1;
        let lines = t.diagnostics.lines();
        let stop = lines.iter().find(|l| l.starts_with("json_syntax_stop")).unwrap();
        assert!(stop.contains(&format!("first at byte {at}: ")) && stop.ends_with(&format!("line {line}, column {column}")), "{what}: {stop}");
        assert!(lines.iter().any(|l| l.starts_with(&format!("json_string_cut (DataLoss): {cut} × "))), "{what}: {lines:#?}");
    }
    let json = trace("", "");
    let cut = &json[..json.find("xxxx\nxxx").unwrap() + 2 * LONG / 3];
    let t = assert_every_path_alike(cut.as_bytes(), "truncated inside a long string");
    let lines = t.diagnostics.lines();
    let start = cut.find("\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a").unwrap() + 1;
    assert!(lines.iter().any(|l| l.starts_with("json_truncated") && l.contains(&format!("first at byte {start}: incomplete event: line 3, column 1"))), "{lines:#?}");
    assert!(lines.iter().any(|l| l.starts_with("json_string_cut (DataLoss): 1 × ")), "the name, not the note the input ends in: {lines:#?}");
}

/// Runs the CLI with `args`: its output, and its peak resident memory in KiB (the kernel's
/// maximum RSS through GNU time when installed, else the `VmHWM` it reports while running).
fn run_measured(args: &[&str]) -> (Output, u64) {
    let bin = env!("CARGO_BIN_EXE_kinetoscope");
    let dir = tempfile::tempdir().unwrap();
    let time = Path::new("/usr/bin/time");
    if time.exists() {
        let report = dir.path().join("rss");
        let out = Command::new(time).arg("-f").arg("%M").arg("-o").arg(&report).arg(bin).args(args).output().unwrap();
        if let Ok(kb) = std::fs::read_to_string(&report).unwrap_or_default().trim().parse() {
            return (out, kb);
        }
    }
    let (stdout, stderr) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = Command::new(bin)
        .args(args)
        .stdout(Stdio::from(std::fs::File::create(&stdout).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&stderr).unwrap()))
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let exit = loop {
        let hwm = std::fs::read_to_string(&status).unwrap_or_default();
        let kb = hwm.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
        peak = peak.max(kb.unwrap_or(0));
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    (Output { status: exit, stdout: std::fs::read(stdout).unwrap(), stderr: std::fs::read(stderr).unwrap() }, peak)
}

/// `report --json` of `path` in bounded memory: the long name cut in the op table, the cut
/// named by the findings; prints the peak RSS.
fn report_in_bounded_memory(path: &Path, most_kb: u64) {
    let (out, kb) = run_measured(&["report", "--json", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(kb < most_kb, "peak RSS {kb} KiB, bound {most_kb} KiB");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = doc["ops"].as_array().unwrap().iter().map(|op| op["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"after") && names.iter().any(|n| n.len() == MAX_STRING_BYTES && n.starts_with('a')), "{:.200?}", names);
    let findings = doc["findings"].to_string();
    assert!(findings.contains("data-losing diagnostics: json_string_cut 1"), "{findings:.2000}");
    eprintln!("{}: peak RSS {kb} KiB", path.display());
}

/// `info` of `path` names the cut: where the string starts and how long it was.
fn info_names_the_cut(path: &Path, longest: usize) {
    let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope")).args(["info", path.to_str().unwrap()]).output().unwrap();
    let info = String::from_utf8_lossy(&out.stdout);
    let quote = HEAD.len() - 1;
    assert!(info.contains(&format!("json_string_cut (DataLoss): 1 × string longer than 64 KiB (a name, an arg value); its first 64 KiB kept; first at byte {quote}: the longest is {longest} bytes")), "{info}");
}

/// What [`long_name_trace`] writes before the long name, its quote last.
const HEAD: &[u8] = b"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"ts\":1,\"dur\":5,\"pid\":1,\"tid\":1},{\"ph\":\"X\",\"name\":\"";

/// A trace whose second event's name is `len` bytes of `a`, written by `write` in pieces.
fn long_name_trace(len: usize, write: &mut dyn FnMut(&[u8])) {
    write(HEAD);
    let piece = vec![b'a'; 1 << 20];
    for _ in 0..len / piece.len() {
        write(&piece);
    }
    write(&piece[..len % piece.len()]);
    write(b"\",\"cat\":\"cpu_op\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":1},{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"after\",\"ts\":3,\"dur\":1,\"pid\":1,\"tid\":1}]}\n");
}

/// r48: one 200 MB name in a 200 MB file took 1.2 GB and 16 s to `report` (before the fix,
/// here: 1.24 GB peak RSS in the test build, 620 MB and 7.2 s in release); now it is cut as it
/// is read: 31 MB peak RSS, and the test takes 3.6 s.
#[test]
fn r48_a_200_mb_name_reports_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long_name.json");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    long_name_trace(200 << 20, &mut |b| file.write_all(b).unwrap());
    file.flush().unwrap();
    drop(file);
    report_in_bounded_memory(&path, 128 << 10);
    info_names_the_cut(&path, 200 << 20);
}

/// A gzip of [`long_name_trace`] with a name of `len` bytes, small: the name is 1 MiB of `a`
/// gzipped once and repeated as members (a multi-member gzip inflates to them all in order).
fn gzip_of_long_name(len: usize) -> Vec<u8> {
    let member = |bytes: &[u8]| {
        let mut gz = GzEncoder::new(Vec::new(), Compression::best());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    };
    let mut parts = Vec::new();
    long_name_trace(len, &mut |b| parts.push(b.to_vec()));
    let a_mib = member(&parts[1]);
    let mut out = member(&parts[0]);
    for p in &parts[1..parts.len() - 2] {
        assert_eq!(p.len(), 1 << 20);
        out.extend_from_slice(&a_mib);
    }
    for p in &parts[parts.len() - 2..] {
        out.extend_from_slice(&member(p));
    }
    out
}

/// r48: a 4.7 MB gzip holding a 1 GB string aborted the CLI with an allocation failure; before
/// the fix, a 256 MiB string took 1.58 GB peak RSS in the test build (1 GiB: 3.1 GB and 47 s in
/// release). Now 9 MB whatever the length (1 GiB: 10 MB, the ignored test below, left out of
/// the suite because the test build's unoptimized flate2 inflates 1 GiB in 8 s).
#[test]
fn r48_a_gzip_inflating_to_a_long_string_reports_in_bounded_memory() {
    gzip_case(256 << 20, false);
}

/// [`r48_a_gzip_inflating_to_a_long_string_reports_in_bounded_memory`] at the size:
/// `cargo test -p kinetoscope --test all long_strings:: -- --ignored`.
#[test]
#[ignore = "inflates 1 GiB twice: 23 s in the test build"]
fn r48_a_gzip_inflating_to_a_1_gib_string_reports_in_bounded_memory() {
    gzip_case(1 << 30, true);
}

/// A gzip of a `len`-byte name reports in bounded memory (and, with `info`, `info` names the
/// cut: another inflate of it, left to the long case).
fn gzip_case(len: usize, info: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long_name.json.gz");
    std::fs::write(&path, gzip_of_long_name(len)).unwrap();
    report_in_bounded_memory(&path, 128 << 10);
    if info {
        info_names_the_cut(&path, len);
    }
}
