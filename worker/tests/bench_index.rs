//! Index benchmarks (ignored; figures, not timed assertions): build cost and bytes, LOD frame
//! time, search and details latency. One JSON line per measurement on stdout.
//!
//! ```text
//! cargo test --release -p kinetoscope --test all bench_index:: -- --ignored --nocapture
//! KINETOSCOPE_BENCH_TRACES=/tmp/a.json:/tmp/b.json cargo test --release ...   # other inputs
//! ```
//!
//! Default inputs: the largest real fixture, plus every `/tmp/ks_index_bench_*.json` (make them
//! with `cargo run --release -p kinetoscope -- inflate IN /tmp/ks_index_bench_300mb.json
//! --target-mb 300`, IN a real fixture).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::index::{Index, Query};
use kinetoscope::model::{LaneId, Trace};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

const FRAME_PX: i64 = 2000;

fn inputs() -> Vec<PathBuf> {
    if let Some(list) = std::env::var_os("KINETOSCOPE_BENCH_TRACES") {
        return std::env::split_paths(&list).collect();
    }
    let mut files = common::real_fixtures();
    files.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    let mut out = vec![files.pop().unwrap()];
    let mut generated: Vec<PathBuf> = std::fs::read_dir("/tmp")
        .map(|dir| dir.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    generated.retain(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("ks_index_bench_"))
    });
    generated.sort();
    out.extend(generated);
    out
}

/// Best of `runs` timings of `f`, in ms, and its last result.
fn best_ms<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        last = Some(f());
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    (best, last.unwrap())
}

/// Tiles of every lane over `[start, end)` at `FRAME_PX` pixels: (rects, lanes with rects).
fn frame(trace: &Trace, index: &Index, start: i64, end: i64) -> (usize, usize) {
    let res = ((end - start) / FRAME_PX).max(1);
    let mut rects = 0;
    let mut lanes = 0;
    for l in 0..trace.lanes.len() {
        let tile = index.lane_tile(trace, LaneId(l as u32), start, end, res);
        rects += tile.len();
        lanes += usize::from(!tile.is_empty());
    }
    (rects, lanes)
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn bench_index() {
    for path in inputs() {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let json_bytes = common::json_bytes(&path).len();
        let (engine, _) = common::load(&path);
        let trace = engine.trace().unwrap();
        let (build_ms, index) = best_ms(3, || Index::build(trace));
        let line = json!({
            "bench": "index_build", "file": file, "json_bytes": json_bytes, "slices": trace.slices.len(),
            "model_bytes": trace.heap_bytes(), "index_bytes": index.heap_bytes(), "ms": build_ms,
            "index_per_json": index.heap_bytes() as f64 / json_bytes as f64,
            "model_and_index_per_json": (trace.heap_bytes() + index.heap_bytes()) as f64 / json_bytes as f64,
        });
        println!("{line}");
        let span = trace.end_ns.max(1);
        // Full view, then zooms of 1/10, 1/1000, 1/100000 of the span centred on the middle
        // slice of the busiest lane (the middle of an inflated trace may be a gap).
        let busiest = trace.lanes.iter().max_by_key(|l| l.slices.len()).unwrap();
        let middle = busiest.slices.start + busiest.slices.len() as u32 / 2;
        let centre = trace.slices.start_ns[middle as usize];
        for (zoom, div) in [
            ("full", 1),
            ("1/10", 10),
            ("1/1000", 1000),
            ("1/100000", 100_000),
        ] {
            let width = (span / div).max(FRAME_PX);
            let start = if div == 1 { 0 } else { centre - width / 2 };
            let (ms, (rects, lanes)) = best_ms(5, || frame(trace, &index, start, start + width));
            let line = json!({
                "bench": "lod_frame", "file": file, "zoom": zoom, "px": FRAME_PX, "ms": ms, "rects": rects,
                "lanes": trace.lanes.len(), "lanes_drawn": lanes,
            });
            println!("{line}");
        }
        // The first search also sorts the args order (once per index).
        let (first_ms, _) = best_ms(1, || Query::new(trace, &index, "first"));
        let line = json!({"bench": "search_first", "file": file, "ms": first_ms, "index_bytes": index.heap_bytes()});
        println!("{line}");
        for q in [
            "aten::mm",
            "cudaLaunchKernel",
            "gemm",
            "[256,1,1]",
            "zzz-no-such-text",
        ] {
            let (compile_ms, query) = best_ms(3, || Query::new(trace, &index, q));
            let (ms, result) = best_ms(3, || query.run(trace, 100));
            let line = json!({
                "bench": "search", "file": file, "query": q, "compile_ms": compile_ms, "ms": ms, "matches": result.total,
            });
            println!("{line}");
        }
        let mut children = vec![0u32; trace.slices.len()];
        for &p in &trace.slices.parent {
            if let Some(c) = children.get_mut(p as usize) {
                *c += 1;
            }
        }
        let parent = (0..children.len())
            .max_by_key(|&i| children[i])
            .unwrap_or(0) as u32;
        let (ms, d) = best_ms(3, || index.details(trace, parent).unwrap());
        let line =
            json!({"bench": "details", "file": file, "ms": ms, "children": d.children_total});
        println!("{line}");
    }
}
