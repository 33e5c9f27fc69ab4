//! The load worker's bookkeeping (`intake`): bytes arriving in pieces and parts coming back
//! from parse workers, natively (the wasm worker only adds transports and a clock).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::budget::Budget;
use kinetoscope::engine::Engine;
use kinetoscope::intake::{Incoming, PartsJob, Throttle, PROGRESS_EVERY_MS, SILENT_MS};
use kinetoscope::load::parse_part;

#[test]
fn throttle_reports_at_most_every_interval() {
    let mut t = Throttle::default();
    let due: Vec<bool> = [0.0, 10.0, 49.9, 50.0, 60.0, 100.0, 100.1].iter().map(|&ms| t.due(ms)).collect();
    assert_eq!(due, [true, false, false, true, false, true, false]);
    assert!((PROGRESS_EVERY_MS - 50.0).abs() < f64::EPSILON);
}

#[test]
fn incoming_appends_pieces_and_throttles_progress() {
    let mut incoming = Incoming::open(7, "t.json", Some(10), 2, Budget::TAB).unwrap();
    let mut reports = Vec::new();
    for (k, piece) in [&b"abcd"[..], b"ef", b"ghij"].iter().enumerate() {
        let now = k as f64 * 20.0; // 0, 20, 40 ms: only the first is due
        if let Some(r) = incoming.append(piece.len(), now, |into| into.copy_from_slice(piece)).unwrap() {
            reports.push(r);
        }
    }
    assert_eq!(reports, [(4, Some(10))]);
    assert_eq!((incoming.id, incoming.cores), (7, 2));
    assert_eq!(incoming.into_bytes(), ("t.json".to_owned(), b"abcdefghij".to_vec()));
}

#[test]
fn incoming_that_cannot_be_reserved_says_how_big() {
    let err = Incoming::open(1, "huge.json", Some(u64::MAX / 2), 1, Budget::UNLIMITED).unwrap_err().sentence("huge.json");
    assert!(err.starts_with("This tab ran out of memory at ") && err.ends_with("\"huge.json\""), "{err}");
}

/// A trace split in parts that come back out of order completes only with the last part, keeps
/// the longest wait for bytes its workers report, and the model equals a sequential load.
#[test]
fn parts_back_in_any_order_complete_the_load() {
    // Large enough for the plan to cut it in parts (`load::MIN_SPLIT_BYTES` per part).
    let dlrm = common::json_bytes(&common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"));
    let mut bytes = Vec::new();
    kinetoscope::synth::inflate::inflate(&dlrm, 3 * kinetoscope::load::MIN_SPLIT_BYTES as u64, &mut bytes).unwrap();
    let mut engine = Engine::new();
    let prepared = engine.prepare("dlrm.json", bytes.clone(), 4, &mut |_, _, _| {}).unwrap();
    let n = prepared.plan.parts.len();
    assert!(n > 1, "the plan splits this trace");
    let parts: Vec<_> = (0..n).map(|i| parse_part(&prepared.json, &prepared.plan, i, &mut |_| {})).collect();
    let total = prepared.json.len() as u64;
    let mut job = PartsJob::new(3, prepared, 1000.0);
    assert_eq!(job.progress(0, 10, 1010.0), None, "not due 10 ms after the start");
    assert_eq!(job.progress(1, 20, 1060.0), Some((30, total)));
    let mut back: Vec<_> = parts.into_iter().enumerate().collect();
    back.reverse();
    let last = back.len() - 1;
    assert_eq!(job.waited_ms(), 0.0, "no wait reported yet");
    for (k, (index, part)) in back.into_iter().enumerate() {
        job.waited([40.0, 250.0, 90.0][k % 3]);
        assert_eq!(job.part(index, part), k == last, "complete only with the last part");
    }
    assert_eq!(job.waited_ms(), if last == 0 { 40.0 } else { 250.0 }, "the longest wait of one part's worker");
    let (prepared, parts) = job.into_parts();
    let merged = engine.complete(prepared, parts).unwrap();
    let (_, whole) = common::load_bytes("dlrm.json", bytes);
    assert_eq!(merged.events, whole.unwrap().events);
}

/// A parse worker that says nothing for `SILENT_MS` while its part is out stopped answering;
/// progress or a boot message keeps it alive, and a part back is never waited for.
#[test]
fn a_parse_worker_silent_too_long_is_named() {
    let dlrm = common::json_bytes(&common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"));
    let mut bytes = Vec::new();
    kinetoscope::synth::inflate::inflate(&dlrm, 2 * kinetoscope::load::MIN_SPLIT_BYTES as u64, &mut bytes).unwrap();
    let prepared = Engine::new().prepare("dlrm.json", bytes, 2, &mut |_, _, _| {}).unwrap();
    assert_eq!(prepared.plan.parts.len(), 2);
    let part0 = parse_part(&prepared.json, &prepared.plan, 0, &mut |_| {});
    let mut job = PartsJob::new(1, prepared, 1000.0);
    assert_eq!(job.silent(1000.0 + SILENT_MS), None, "silent for exactly the limit is fine");
    job.heard(1, 20_000.0);
    assert_eq!(job.silent(1000.0 + SILENT_MS + 1.0), Some(0), "part 0's worker was never heard");
    assert!(!job.part(0, part0));
    assert_eq!(job.silent(20_000.0 + SILENT_MS), None);
    let _ = job.progress(1, 100, 40_000.0);
    assert_eq!(job.silent(60_000.0 + SILENT_MS), Some(1), "progress at 40 s, silent since");
}

/// A streamed load (the page's default): pieces parsed as they arrive, progress throttled, the
/// model equal to a whole load's, for JSON and for gzip; a source that sends more than the
/// budget is stopped at the piece that passes it.
#[test]
fn streamed_pieces_give_the_whole_load() {
    use flate2::{write::GzEncoder, Compression};
    use kinetoscope::engine::Target;
    use kinetoscope::intake::Streaming;
    use std::io::Write as _;

    let json = common::json_bytes(&common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"));
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(&json).unwrap();
    let gz = gz.finish().unwrap();
    let mut whole = Engine::new();
    whole.load("t.json", json.clone(), &mut |_, _, _| {}).unwrap();
    let expected = common::fingerprint(whole.trace().unwrap());
    for bytes in [&json, &gz] {
        let mut engine = Engine::new();
        let size = Some(bytes.len() as u64);
        let mut streaming = Streaming::open(&mut engine, Target::Current, 5, "t.json", size).unwrap();
        let mut reports = Vec::new();
        for (k, piece) in bytes.chunks(1 << 16).enumerate() {
            if let Some(r) = streaming.append(piece.len(), k as f64 * 10.0, |into| into.copy_from_slice(piece)).unwrap() {
                reports.push(r);
            }
        }
        // Pieces 10 ms apart: the first is reported, then one in five (one per 50 ms).
        assert_eq!(reports.first(), Some(&(1 << 16, size)));
        assert_eq!(reports.len(), bytes.len().div_ceil(1 << 16).div_ceil(5), "{} bytes", bytes.len());
        let summary = streaming.finish(&mut engine).unwrap();
        assert_eq!(summary.file_bytes, bytes.len() as u64);
        assert_eq!(common::fingerprint(engine.trace().unwrap()), expected);
    }

    let mut engine = Engine::with_budget(Budget::new(json.len() as u64 - 1));
    let mut streaming = Streaming::open(&mut engine, Target::Current, 6, "t.json", None).unwrap();
    let passed = json.chunks(1 << 20).map(|piece| streaming.append(piece.len(), 0.0, |into| into.copy_from_slice(piece))).find_map(Result::err);
    let error = passed.expect("the budget stops the source");
    assert_eq!(error.kind, "too-big");
    assert!(error.message.starts_with("This trace is over "), "{}", error.message);
    assert!(Streaming::open(&mut engine, Target::Current, 7, "t.json", Some(json.len() as u64)).is_err(), "a declared size over it is refused");
}
