//! One file read as parts on their own (`load::cut`, `Stream::part`, `load::join`, as the CLI
//! does on several threads): the sequential parse on every real fixture, wherever the parts'
//! pieces are cut; truncated and malformed inputs give the same diagnostics at the same lines
//! and columns; a part that does not end at its cut makes `join` give up (the CLI then reads
//! the file sequentially); gzip is never cut.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use common::fingerprint;
use kinetoscope::fork::{Sequential, Threads};
use kinetoscope::load::{cut, join, parse, LoadFailure, Piece, Stream, StreamedPart};
use kinetoscope::model::Trace;

/// Cuts `json` into at most `parts` parts reading only windows of it.
fn cuts(json: &[u8], parts: usize) -> Vec<(Piece, std::ops::Range<u64>)> {
    cut(json.len() as u64, parts, &mut |at, buf| {
        let at = at as usize;
        let n = buf.len().min(json.len() - at);
        buf[..n].copy_from_slice(&json[at..at + n]);
        Ok(n)
    })
    .unwrap()
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
    for path in common::real_fixtures() {
        let json = common::json_bytes(&path);
        let whole = fingerprint(&parse(&json, &mut |_| {}).unwrap());
        for (parts, piece) in [(2, 8 << 20), (3, 65_537), (5, 4_099)] {
            let got = cuts(&json, parts).len();
            assert!(got > 1 || json.len() < 100_000, "{path:?}: {got} parts of {parts}");
            let trace = joined(&json, parts, piece).unwrap();
            assert_eq!(fingerprint(&trace), whole, "{path:?} in {parts} parts, pieces of {piece}");
        }
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
            let wire: Vec<Vec<u8>> = streamed_parts(input, 3, 1 << 20).iter().map(StreamedPart::encode).collect();
            let parts = wire.iter().map(|bytes| StreamedPart::decode(bytes).unwrap()).collect();
            assert_eq!(fingerprint(&join(parts, &Sequential).unwrap().unwrap()), whole, "{name}");
            for bytes in &wire {
                assert!(StreamedPart::decode(&bytes[..bytes.len() - 1]).is_err(), "a part cut short");
                assert!(StreamedPart::decode(&bytes[4..]).is_err(), "no magic");
            }
        }
    }
}
