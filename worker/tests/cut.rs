//! One file read as parts on their own (`load::cut`, `Stream::part`, `load::join`, as the CLI
//! does on several threads): the sequential parse on every real fixture, wherever the parts'
//! pieces are cut; truncated and malformed inputs give the same diagnostics at the same lines
//! and columns; a part that does not end at its cut makes `join` give up (the CLI then reads
//! the file sequentially); gzip is never cut; parts cut by shares take them. Parts that share their bytes out (`load::Shares`,
//! a reader done early taking half of another's unread bytes) join to the same trace, stolen
//! from in a set order and on threads. Parts sent encoded (as the page's parse workers send
//! theirs) join to the same trace, their slice columns merged straight from the bytes. A JSON
//! cut as it arrives (`load::Cutter`; `loader::inflate::Cuts`, a gzip's JSON as the page's
//! load worker gets it, reading only around the cuts) joins to the sequential parse too,
//! wherever its pieces end.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use common::fingerprint;
use kinetoscope::fork::{Sequential, Threads};
use kinetoscope::load::{cut, cut_by, join, parse, Arrived, Cut, Cutter, LoadFailure, Piece, Shares, Stream, StreamedPart};
use kinetoscope::loader::inflate::{Cuts, Inflate};
use kinetoscope::model::Trace;

/// Cuts `json` into at most `parts` parts reading only windows of it.
fn cuts(json: &[u8], parts: usize) -> Vec<(Piece, std::ops::Range<u64>)> {
    cut(json.len() as u64, parts, &mut |at, buf| read_at(json, at, buf)).unwrap()
}

/// Fills `buf` from byte `at` of `json`, as a file's read at an offset.
fn read_at(json: &[u8], at: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    let at = (at as usize).min(json.len());
    let n = buf.len().min(json.len() - at);
    buf[..n].copy_from_slice(&json[at..at + n]);
    Ok(n)
}

/// A part read from `shares` claim by claim: its index there and its stream.
struct Sharing {
    k: usize,
    stream: Stream,
}

impl Sharing {
    /// Reads one claim of at most `bytes`; false once the part is read.
    fn step(&mut self, shares: &Shares, json: &[u8], bytes: u64) -> bool {
        let range = shares.claim(self.k, bytes);
        self.stream.push(&json[range.start as usize..range.end as usize]);
        !range.is_empty()
    }

    /// Reads the rest of the part; its index and the part.
    fn finish(mut self, shares: &Shares, json: &[u8], bytes: u64) -> (usize, StreamedPart) {
        while self.step(shares, json, bytes) {}
        (self.k, self.stream.finish_part())
    }

    /// A part stolen for an idle reader, if any part has enough left.
    fn stolen(shares: &Shares, json: &[u8]) -> Option<Sharing> {
        let (k, piece, _) = shares.steal(&mut |at, buf| read_at(json, at, buf)).unwrap()?;
        Some(Sharing { k, stream: Stream::part(piece) })
    }
}

/// `read` (part index, part) joined in the file order `shares` gives.
fn join_shared(shares: &Shares, mut read: Vec<(usize, StreamedPart)>) -> Trace {
    let mut parts: Vec<usize> = read.iter().map(|&(k, _)| k).collect();
    parts.sort_unstable();
    assert_eq!(parts, (0..read.len()).collect::<Vec<_>>(), "every part read once");
    read.sort_by_key(|&(k, _)| shares.start(k));
    join(read.into_iter().map(|(_, p)| p).collect(), &Threads).expect("every part ends at its cut").unwrap()
}

/// Each part of `json` streamed from its own bytes in pieces of `piece` bytes.
fn streamed_parts(json: &[u8], parts: usize, piece: usize) -> Vec<StreamedPart> {
    cuts(json, parts)
        .into_iter()
        .map(|(p, range)| {
            let mut stream = Stream::part(p);
            for bytes in json[range.start as usize..range.end as usize].chunks(piece) {
                stream.push(bytes);
            }
            stream.finish_part()
        })
        .collect()
}

fn joined(json: &[u8], parts: usize, piece: usize) -> Result<Trace, LoadFailure> {
    // On threads, as the CLI joins: the same trace as the sequential join the page does.
    join(streamed_parts(json, parts, piece), &Threads).expect("every part ends at its cut")
}

#[test]
fn every_fixture_read_in_parts_is_the_sequential_parse() {
    common::for_each_real_fixture(|path| {
        let json = common::json_bytes(path);
        let whole = fingerprint(&parse(&json, &mut |_| {}).unwrap());
        for (parts, piece) in [(2, 8 << 20), (3, 65_537), (5, 4_099)] {
            let got = cuts(&json, parts).len();
            assert!(got > 1 || json.len() < 100_000, "{path:?}: {got} parts of {parts}");
            let trace = joined(&json, parts, piece).unwrap();
            assert_eq!(fingerprint(&trace), whole, "{path:?} in {parts} parts, pieces of {piece}");
        }
    });
}

#[test]
fn parts_stolen_from_in_a_set_order_join_to_the_sequential_parse() {
    for path in common::real_fixtures() {
        let json = common::json_bytes(&path);
        let cuts = cuts(&json, 2);
        if cuts.len() < 2 || json.len() < 1 << 20 {
            continue;
        }
        let whole = fingerprint(&parse(&json, &mut |_| {}).unwrap());
        let claim = 65_537;
        let shares = Shares::new(&cuts, 4 * claim);
        let mut a = Sharing { k: 0, stream: Stream::part(cuts[0].0) };
        let b = Sharing { k: 1, stream: Stream::part(cuts[1].0) };
        for _ in 0..3 {
            a.step(&shares, &json, claim);
        }
        // B is done first and takes the second half of what A has not read.
        let mut read = vec![b.finish(&shares, &json, claim)];
        let mut c = Sharing::stolen(&shares, &json).expect("part 0 has bytes to steal");
        assert_eq!(c.k, 2);
        a.step(&shares, &json, claim);
        c.step(&shares, &json, claim);
        // Then A, which takes half of the stolen part's rest; then every part is read.
        read.push(a.finish(&shares, &json, claim));
        if let Some(d) = Sharing::stolen(&shares, &json) {
            read.push(d.finish(&shares, &json, claim));
        }
        read.push(c.finish(&shares, &json, claim));
        while let Some(e) = Sharing::stolen(&shares, &json) {
            read.push(e.finish(&shares, &json, claim));
        }
        assert!(read.len() >= 3, "{path:?}: {} parts", read.len());
        assert_eq!(fingerprint(&join_shared(&shares, read)), whole, "{path:?}");
    }
}

#[test]
fn parts_stolen_from_on_threads_join_to_the_sequential_parse() {
    for path in common::real_fixtures() {
        let json = common::json_bytes(&path);
        let cuts = cuts(&json, 2);
        if cuts.len() < 2 {
            continue;
        }
        let whole = fingerprint(&parse(&json, &mut |_| {}).unwrap());
        let claim = 4_099;
        let shares = Shares::new(&cuts, 4 * claim);
        // As the CLI reads: each thread reads its part, then steals until nothing is left.
        let read: Vec<(usize, StreamedPart)> = std::thread::scope(|scope| {
            let (shares, json) = (&shares, &json);
            let threads: Vec<_> = cuts
                .iter()
                .enumerate()
                .map(|(k, &(piece, _))| {
                    scope.spawn(move || {
                        let mut read = Vec::new();
                        let mut next = Some(Sharing { k, stream: Stream::part(piece) });
                        while let Some(part) = next {
                            read.push(part.finish(shares, json, claim));
                            next = Sharing::stolen(shares, json);
                        }
                        read
                    })
                })
                .collect();
            threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(fingerprint(&join_shared(&shares, read)), whole, "{path:?}");
    }
}

#[test]
fn parts_start_at_event_boundaries_and_cover_the_file() {
    let json = common::json_bytes(&common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"));
    let parts = cuts(&json, 4);
    assert_eq!(parts.len(), 4);
    assert_eq!(parts[0].1.start, 0);
    assert_eq!(parts[3].1.end, json.len() as u64);
    for pair in parts.windows(2) {
        assert_eq!(pair[0].1.end, pair[1].1.start);
        let at = pair[1].1.start as usize;
        let before = json[..at].iter().rposition(|b| !b.is_ascii_whitespace()).unwrap();
        assert_eq!((json[before], json[at..].iter().find(|b| !b.is_ascii_whitespace())), (b',', Some(&b'{')));
        assert!(!pair[1].0.first);
    }
    assert!(parts[0].0.first);
}

#[test]
fn parts_cut_by_shares_take_their_shares_and_join_to_the_sequential_parse() {
    // The page's load worker parses the first part itself and takes 3 shares of a picked file
    // to a parse worker's 2.
    let json = common::json_bytes(&common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"));
    let whole = fingerprint(&parse(&json, &mut |_| {}).unwrap());
    for shares in [[3, 2].as_slice(), &[3, 2, 2], &[1, 4]] {
        let parts = cut_by(json.len() as u64, shares, &mut |at, buf| read_at(&json, at, buf)).unwrap();
        assert_eq!(parts.len(), shares.len(), "{shares:?}");
        let total: u32 = shares.iter().sum();
        for ((_, range), &share) in parts.iter().zip(shares) {
            let got = (range.end - range.start) as f64 / json.len() as f64;
            let want = f64::from(share) / f64::from(total);
            assert!((got - want).abs() < 0.05, "{shares:?}: a part of {got:.3} of the file for a share of {want:.3}");
        }
        // As the page reads them: the first part's columns sized for the whole file once 16 MiB
        // are read (the others are joined into it), each other's for its own bytes.
        let mut streamed = parts.into_iter().map(|(p, range)| {
            let expect = if p.first { json.len() as u64 } else { range.end - range.start };
            let mut stream = Stream::part(p).expecting(expect);
            for piece in json[range.start as usize..range.end as usize].chunks(1 << 20) {
                stream.push(piece);
            }
            stream.finish_part()
        });
        // The others come back encoded; their slice columns are merged from those bytes.
        let first = streamed.next().unwrap();
        let wire: Vec<Vec<u8>> = streamed.map(|p| p.encode()).collect();
        let later = wire.into_iter().map(|bytes| StreamedPart::decode_later(bytes).unwrap());
        let parts: Vec<Arrived> = std::iter::once(first.into()).chain(later).collect();
        let trace = join(parts, &Sequential).expect("every part ends at its cut").unwrap();
        assert_eq!(fingerprint(&trace), whole, "{shares:?}");
    }
}

#[test]
fn truncation_and_syntax_errors_are_located_as_in_the_whole_file() {
    let json = common::json_bytes(&common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"));
    let mut broken = json.clone();
    let at = json.len() * 4 / 5;
    let colon = at + broken[at..].iter().position(|&b| b == b':').unwrap();
    broken[colon] = b'!';
    // On one line, the column counts from the file's first byte, in the first part.
    let one_line: Vec<u8> = broken.iter().map(|&b| if b == b'\n' { b' ' } else { b }).collect();
    let cases = [("truncated", &json[..json.len() * 9 / 10 + 7]), ("a bad byte in the last part", &broken[..]), ("one line", &one_line[..])];
    for (what, input) in cases {
        let whole = fingerprint(&parse(input, &mut |_| {}).unwrap());
        for piece in [1 << 20, 4_099] {
            let trace = joined(input, 3, piece).unwrap();
            let got = fingerprint(&trace);
            assert!(got.contains("json_"), "{what}: a diagnostic");
            assert_eq!(got, whole, "{what}, pieces of {piece}");
        }
    }
}

#[test]
fn a_part_that_does_not_end_at_its_cut_is_not_joined() {
    let json = common::json_bytes(&common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"));
    let mut broken = json.clone();
    let at = json.len() / 5;
    let colon = at + broken[at..].iter().position(|&b| b == b':').unwrap();
    broken[colon] = b'!';
    assert!(join(streamed_parts(&broken, 3, 1 << 20), &Sequential).is_none(), "a syntax error in the first part");
}

#[test]
fn gzip_and_documents_that_are_not_traces_are_one_part() {
    let gz = std::fs::read(common::real("kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz")).unwrap();
    assert_eq!(cuts(&gz, 4).len(), 1);
    assert_eq!(cuts(b"{\"a\": 1} nonsense", 4).len(), 1);
    assert_eq!(cuts(b"", 4).len(), 1);
}

#[test]
fn the_engine_joins_parts_into_the_summary_a_streamed_load_gives() {
    let json = common::json_bytes(&common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"));
    let (mut engine, streamed) = common::load_bytes("t.json", json.clone());
    // As a streamed load does, the parts' load drops the loaded trace before the parts come.
    let joining = engine.begin_parts("t.json", json.len() as u64).unwrap();
    assert!(engine.trace().is_none());
    let mut summary = engine.join(joining, streamed_parts(&json, 3, 1 << 20), &Threads).unwrap().unwrap();
    assert_eq!(summary.parse_workers, 3);
    summary.parse_workers = 1;
    assert_eq!(summary, streamed.unwrap());
    assert!(engine.trace().is_some());
}

#[test]
fn parts_sent_between_workers_encoded_join_to_the_same_trace() {
    for name in ["param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json", "kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz"] {
        let json = common::json_bytes(&common::real(name));
        let cut_short = &json[..json.len() - 5];
        for input in [&json[..], cut_short] {
            let whole = fingerprint(&parse(input, &mut |_| {}).unwrap());
            let mut read = streamed_parts(input, 3, 1 << 20);
            let wire: Vec<Vec<u8>> = read.iter().map(StreamedPart::encode).collect();
            let parts = wire.iter().map(|bytes| StreamedPart::decode(bytes).unwrap()).collect();
            assert_eq!(fingerprint(&join(parts, &Sequential).unwrap().unwrap()), whole, "{name}");
            // As the page joins: the first part read there, the others' slice columns merged
            // straight from their encodings.
            let first = read.swap_remove(0);
            let later = wire[1..].iter().map(|bytes| StreamedPart::decode_later(bytes.clone()).unwrap());
            let parts: Vec<Arrived> = std::iter::once(first.into()).chain(later).collect();
            assert_eq!(fingerprint(&join(parts, &Sequential).unwrap().unwrap()), whole, "{name}, merged from the encodings");
            for bytes in &wire {
                assert!(StreamedPart::decode(&bytes[..bytes.len() - 1]).is_err(), "a part cut short");
                assert!(StreamedPart::decode(&bytes[4..]).is_err(), "no magic");
                assert!(StreamedPart::decode_later(bytes[..bytes.len() - 1].to_vec()).is_err(), "a part cut short");
            }
        }
    }
}

#[test]
fn corrupt_parts_merged_from_their_encodings_are_errors_not_panics() {
    let json = common::json_bytes(&common::real("partx__profiler_trace_single_sample.json"));
    let wire: Vec<Vec<u8>> = streamed_parts(&json, 2, 1 << 20).iter().map(StreamedPart::encode).collect();
    assert_eq!(wire.len(), 2);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    // (refused at decode, joined to a trace, join gave up or refused)
    let (mut refused, mut joined, mut not_joined) = (0, 0, 0);
    for _ in 0..400 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut bad = wire[1].clone();
        let at = (seed % bad.len() as u64) as usize;
        bad[at] = bad[at].wrapping_add((seed >> 32) as u8 | 1);
        // Either an error or a part, which must then join without panicking.
        if let Ok(later) = StreamedPart::decode_later(bad) {
            let first = StreamedPart::decode(&wire[0]).unwrap();
            match join(vec![first.into(), later], &Sequential) {
                Some(Ok(trace)) => {
                    // A byte of event data changed: still a trace of the first part's events at least.
                    assert!(!trace.slices.is_empty());
                    joined += 1;
                }
                Some(Err(_)) | None => not_joined += 1,
            }
        } else {
            refused += 1;
        }
    }
    println!("corrupt parts: {refused} refused at decode, {joined} joined, {not_joined} not joined");
    // The join ran on corrupt parts that decode: most bytes of a part are its columns' data,
    // which the decoder cannot check, so most corrupt parts reach the join.
    assert_eq!(refused + joined + not_joined, 400);
    assert!(joined >= 100, "only {joined} of 400 corrupt parts joined ({refused} refused at decode)");
}

/// `json` fed to a [`Cutter`] cutting every `every` bytes (none past `until`) in pieces of
/// `piece` bytes, each part streamed as its bytes are handed on: the parts and where each starts.
fn cut_as_it_arrives(json: &[u8], every: u64, until: u64, piece: usize) -> (Vec<StreamedPart>, Vec<u64>) {
    let mut cutter = Cutter::new(every, until);
    let (mut parts, mut starts, mut current): (Vec<StreamedPart>, Vec<u64>, Option<Stream>) = (Vec::new(), Vec::new(), None);
    let mut handed = 0u64;
    let mut out = |cut: Cut| match cut {
        Cut::Part(p) => {
            assert_eq!(p.start, handed, "a part starts where the bytes handed on end");
            parts.extend(current.replace(Stream::part(p)).map(Stream::finish_part));
            starts.push(p.start);
        }
        Cut::Bytes(bytes) => {
            handed += bytes.len() as u64;
            current.as_mut().expect("bytes after a part started").push(bytes);
        }
    };
    for bytes in json.chunks(piece) {
        cutter.push(bytes, &mut out);
    }
    assert_eq!(cutter.finish(&mut out), json.len() as u64);
    assert_eq!(handed, json.len() as u64, "every byte handed on once");
    parts.extend(current.map(Stream::finish_part));
    (parts, starts)
}

#[test]
fn every_fixture_cut_as_it_arrives_is_the_sequential_parse() {
    common::for_each_real_fixture(|path| {
        let json = common::json_bytes(path);
        let whole = fingerprint(&parse(&json, &mut |_| {}).unwrap());
        let len = json.len() as u64;
        for (every, piece) in [(len / 4, 1 << 20), (len / 7, 65_536), (len / 3, 4_099)] {
            let (parts, starts) = cut_as_it_arrives(&json, every, u64::MAX, piece);
            assert!(parts.len() >= 3 || len < 1 << 20, "{path:?}: {} parts cutting every {every}", parts.len());
            for pair in starts.windows(2) {
                assert!(pair[1] - pair[0] >= every, "{path:?}: parts start {pair:?}, cutting every {every}");
            }
            let trace = join(parts, &Sequential).expect("every part ends at its cut").unwrap();
            assert_eq!(fingerprint(&trace), whole, "{path:?} cut every {every}, pieces of {piece}");
        }
    });
}

#[test]
fn a_cutter_cuts_at_boundaries_until_told_and_never_a_document_that_is_not_a_trace() {
    let json = common::json_bytes(&common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"));
    let len = json.len() as u64;
    let (parts, starts) = cut_as_it_arrives(&json, len / 10, len / 2, 65_536);
    // Cuts about every tenth until the middle: the last part takes the second half.
    assert!((4..=6).contains(&parts.len()), "{starts:?}");
    assert!(starts.iter().all(|&s| s < len / 2 + (4 << 20)), "{starts:?}");
    for &start in &starts[1..] {
        let next = start as usize + json[start as usize..].iter().position(|b| !b.is_ascii_whitespace()).unwrap();
        assert_eq!((json[start as usize - 1], json[next]), (b',', b'{'), "a cut at {start} is right after a comma before an event");
    }
    let mut junk = b"{\"a\": [".to_vec();
    junk.extend(std::iter::repeat_n(b'1', 3 << 20));
    for input in [&junk[..], b"", b"[]"] {
        let (parts, starts) = cut_as_it_arrives(input, 1000, u64::MAX, 4_099);
        assert_eq!((parts.len(), starts), (1, vec![0]), "one part of {} bytes", input.len());
    }
}


/// Parts streamed from a gzip's JSON as the load worker cuts it, their starts, how many pieces
/// went on unread, and the JSON's size (or why it stopped).
type Handed = (Vec<StreamedPart>, Vec<u64>, usize, Result<u64, kinetoscope::budget::TooBig>);

/// `json`, a gzip's as the download worker posts it, arriving `chunk` bytes at a time, cut as
/// the load worker cuts it ([`Cuts`], as `plan` says); each part streamed from what it handed on.
fn cut_as_inflated(json: &[u8], plan: Inflate, chunk: usize) -> Handed {
    let mut cuts = Cuts::new(plan, Some(json.len() as u64 / 10));
    let (mut parts, mut starts, mut unread): (Vec<StreamedPart>, Vec<u64>, usize) = (Vec::new(), Vec::new(), 0);
    let mut current: Option<Stream> = None;
    let mut out = |cut: Cut| match cut {
        Cut::Part(p) => {
            parts.extend(current.replace(Stream::part(p)).map(Stream::finish_part));
            starts.push(p.start);
        }
        Cut::Bytes(bytes) => current.as_mut().expect("bytes after a part started").push(bytes),
    };
    for (k, bytes) in json.chunks(chunk).enumerate() {
        match cuts.pass(bytes.len() as u64, (k * chunk / 10) as u64) {
            Ok(true) => {
                unread += 1;
                out(Cut::Bytes(bytes));
            }
            Ok(false) => cuts.push(bytes, &mut out),
            Err(too_big) => return (parts, starts, unread, Err(too_big)),
        }
    }
    let json_bytes = cuts.finish(&mut out);
    parts.extend(current.map(Stream::finish_part));
    (parts, starts, unread, Ok(json_bytes))
}

#[test]
fn a_gzip_cut_as_it_inflates_is_the_sequential_parse_reading_only_around_its_cuts() {
    for name in ["kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz", "param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"] {
        let json = common::json_bytes(&common::real(name));
        let whole = fingerprint(&parse(&json, &mut |_| {}).unwrap());
        let plan = Inflate { every: json.len() as u64 / 5, until: u64::MAX, max_json_bytes: u64::MAX };
        let chunk = 16_384;
        let (parts, starts, unread, end) = cut_as_inflated(&json, plan, chunk);
        assert_eq!(end.unwrap(), json.len() as u64, "{name}");
        assert!(parts.len() >= 4, "{name}: {starts:?}");
        // Read: the head's piece, and at each cut the pieces of its first look (64 KiB) and two.
        let pieces = json.len().div_ceil(chunk);
        assert!(pieces - unread <= 1 + parts.len() * (65_536 / chunk + 2), "{name}: {unread} of {pieces} pieces went on unread");
        let trace = join(parts, &Sequential).expect("every part ends at its cut").unwrap();
        assert_eq!(fingerprint(&trace), whole, "{name}");
    }
}

#[test]
fn a_gzip_inflating_past_the_budget_stops() {
    let json = common::json_bytes(&common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"));
    let max = json.len() as u64 / 3;
    let plan = Inflate { every: json.len() as u64 / 4, until: u64::MAX, max_json_bytes: max };
    let (_, _, _, end) = cut_as_inflated(&json, plan, 65_536);
    let too_big = end.unwrap_err();
    let kinetoscope::budget::Size::Inflating { json_bytes, read, file_bytes } = too_big.size else { panic!("{too_big:?}") };
    assert!(json_bytes > max && json_bytes <= max + 65_536, "{too_big:?}");
    assert_eq!((read, file_bytes), ((json_bytes - 65_536) / 10, json.len() as u64 / 10), "{too_big:?}");
}
