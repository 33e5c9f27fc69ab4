//! Module tree benchmark (ignored; figures, not timed assertions): the largest with_stack
//! fixture (vLLM decode, graph capture) loaded, then the module tree (`analysis::modules`, what
//! `report --modules` prints) and the Modules tab's answer (`Query::Modules`) built five times
//! each; prints one JSON line with the best wall times (ms) and the tree's peak heap (bytes
//! above what the loaded trace holds).
//!
//! ```text
//! cargo test --release -p kinetoscope --test bench_modules -- --ignored --nocapture
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

mod common;
mod counting;

use counting::peak_of;
use protocol::Query;

const VLLM: &str = "tracelens__vllm_decode_full__graph_capture_rank_0.pt.trace.json.gz";

/// Best of five runs of `f`, ms.
fn best_ms(mut f: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

#[test]
#[ignore = "benchmark: run with --release --ignored --nocapture"]
fn bench_module_tree_on_the_largest_with_stack_fixture() {
    let path = common::real(VLLM);
    let json_bytes = common::json_bytes(&path).len();
    let mut engine = common::load_real(VLLM);
    let session = engine.session().unwrap().clone();
    let trace = session.trace();
    let mut rows = 0;
    let tree_ms = best_ms(|| rows = kinetoscope::analysis::modules::analyze(trace).rows.len());
    let peak = peak_of(|| {
        kinetoscope::analysis::modules::analyze(trace);
    });
    let answer_ms = best_ms(|| {
        engine.query(&Query::Modules { range_ns: None }).unwrap();
    });
    println!(
        "{}",
        serde_json::json!({
            "bench": "module_tree", "fixture": VLLM, "json_bytes": json_bytes, "slices": trace.slices.len(),
            "rows": rows, "tree_ms": tree_ms, "answer_ms": answer_ms, "tree_peak_heap_bytes": peak,
        })
    );
    assert!(rows > 0);
}
