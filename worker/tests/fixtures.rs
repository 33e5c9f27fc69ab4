//! Every shared real trace loads, and its counts equal an independent count (serde_json::Value).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

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
