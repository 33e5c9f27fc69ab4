//! Every shared real trace loads, and its counts equal an independent count (serde_json::Value).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use serde_json::Value;
use std::collections::BTreeMap;

/// Counts by `ph` and `cat` over the event array, the slow and obvious way.
fn independent_counts(json: &[u8]) -> (u64, BTreeMap<String, u64>, BTreeMap<String, u64>) {
    // The speedscope fixture lacks its closing bracket (allowed by the format): close it.
    let doc: Value = serde_json::from_slice(json).unwrap_or_else(|_| {
        let mut fixed = json.to_vec();
        while fixed.last().is_some_and(|b| b.is_ascii_whitespace() || *b == b',') {
            fixed.pop();
        }
        fixed.push(b']');
        serde_json::from_slice(&fixed).expect("fixture parses once closed")
    });
    let events = match &doc {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o["traceEvents"].as_array().unwrap().clone(),
        _ => panic!("not a trace"),
    };
    let (mut phases, mut cats) = (BTreeMap::new(), BTreeMap::new());
    let mut n = 0;
    for ev in events.iter().filter_map(Value::as_object) {
        n += 1;
        let s = |k: &str| ev.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        *phases.entry(s("ph")).or_insert(0) += 1;
        *cats.entry(s("cat")).or_insert(0) += 1;
    }
    (n, phases, cats)
}

#[test]
fn every_real_fixture_loads_with_independent_counts() {
    for path in common::real_fixtures() {
        let (_, summary) = common::load(&path);
        let (events, phases, cats) = independent_counts(&common::json_bytes(&path));
        assert_eq!(summary.events, events, "{path:?} events");
        assert_eq!(summary.phases, phases, "{path:?} phases");
        assert_eq!(summary.categories, cats, "{path:?} categories");
        assert!(summary.lanes > 0, "{path:?} has lanes");
    }
}

#[test]
fn torch_cpu_traces_load() {
    for stem in ["matmul_add", "mlp_train", "many_small_ops", "dataloader"] {
        let path = common::shared().join(format!("fixtures/torch-cpu/{stem}.pt.trace.json"));
        let (_, summary) = common::load(&path);
        let (events, phases, cats) = independent_counts(&common::json_bytes(&path));
        assert_eq!((summary.events, &summary.phases, &summary.categories), (events, &phases, &cats), "{stem}");
        assert!(!summary.truncated, "{stem}");
    }
}

/// `raw` minified the obvious way: every byte through the tracker, whitespace outside strings
/// dropped.
fn minify(raw: &[u8]) -> Vec<u8> {
    let mut strings = kinetoscope::json::StringTracker::default();
    raw.iter().copied().filter(|&b| !strings.outside(b) || !matches!(b, b' ' | b'\n' | b'\r' | b'\t')).collect()
}

/// The args text the tokenizer writes as it reads equals the raw span minified on its own, for
/// every event of every real fixture and edge-case file.
#[test]
fn args_text_written_while_reading_is_the_span_minified() {
    use kinetoscope::json::{RawEvent, Tokenizer};
    // Edge-case files as they are (a cut gzip among them is left to its own tests).
    let edge = ["valid", "truncated", "invalid"].into_iter().flat_map(|dir| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/edge").join(dir);
        std::fs::read_dir(dir).unwrap().map(|e| std::fs::read(e.unwrap().path()).unwrap()).filter(|b| !b.starts_with(&[0x1f, 0x8b]))
    });
    let real = common::real_fixtures().into_iter().map(|path| common::json_bytes(&path));
    let mut checked = 0;
    for json in real.chain(edge) {
        let Ok(mut tokens) = Tokenizer::new(&json, 0) else { continue };
        let mut ev = RawEvent::default();
        while let Ok(true) = tokens.next_event(&mut ev) {
            let Some(raw) = ev.args else { continue };
            assert_eq!(ev.args_text.as_bytes(), minify(raw), "at byte {}: {}", ev.offset, String::from_utf8_lossy(raw));
            checked += 1;
        }
    }
    assert!(checked > 300_000, "{checked} args checked");
}

/// The same for spacings Kineto never writes: a space before a colon, escaped keys, nested
/// and empty containers, linked keys holding arrays or objects, CR LF.
#[test]
fn args_text_is_the_args_minified_whatever_the_spacing() {
    use kinetoscope::json::{RawEvent, Tokenizer};
    let args = [
        r#"{}"#,
        "{ \n }",
        r#"{"a":1}"#,
        "{\n      \"External id\": 1025,\"Ev Idx\": 0, \"Input Dims\": [[2048, 256], [], [256]]\n    }",
        "{ \"a\" : [ 1 , { \"b\" : \"x y\" } , [ ] , { } ] , \"c\":true,\"d\" :null }",
        "{\"correlation\" : [ 1, 2 ], \"name\": { \"k\" : \"v\" }, \"labels\":\t\"l a\" }",
        "{\"esc\\\" key\" : \"a \\\" b\", \"External id\":\r\n-7 , \"sort_index\": 3.5}",
    ];
    for args in args {
        let json = format!("[{{\"ph\": \"X\", \"args\": {args}}}]");
        let mut tokens = Tokenizer::new(json.as_bytes(), 0).unwrap();
        let mut ev = RawEvent::default();
        assert!(tokens.next_event(&mut ev).unwrap(), "{args}");
        assert_eq!(String::from_utf8_lossy(ev.args_text.as_bytes()), String::from_utf8_lossy(&minify(args.as_bytes())), "{args}");
    }
}
