//! `kinetoscope bench`: parse + index throughput, then what the page asks for before its first
//! paint, then op-table range queries; one JSON line per measurement (docs/performance.md).
//! Timing lives here, never in the engine, which reads no clock.

use kinetoscope::budget::Budget;
use kinetoscope::engine::Engine;
use kinetoscope::load::{assemble, parse_part, plan};
use kinetoscope::model::Trace;
use protocol::Query;
use std::path::Path;
use std::time::Instant;

/// Loads `path` streamed from the file on `threads` threads (as `report` does on every core)
/// `runs` times, printing a line per run with the process's peak resident memory; run first,
/// before anything holds the file. With `python`, Python's `json.load` of the same file runs
/// right before each load, and a line gives both times and their ratio: so neither is timed on
/// cores just woken from idle, which on this VM cost the first load of a fresh process 0.1-0.3 s
/// (docs/performance.md).
pub fn streamed(path: &Path, runs: usize, threads: usize, python: Option<&str>) -> Result<(), String> {
    let file = path.display().to_string();
    for run in 0..runs {
        let anchor = python.map(|python| python_json_load(python, path)).transpose()?;
        let before = rss_kb("VmRSS");
        let started = Instant::now();
        let mut engine = Engine::new();
        let summary = crate::read::load_file(&mut engine, &file, path, threads)?;
        let secs = started.elapsed().as_secs_f64();
        let json = summary.json_bytes;
        // The process's peak says something only for the first load (later ones reuse its pages).
        let peak = (run == 0).then(|| rss_kb("VmHWM").saturating_sub(before) * 1024);
        let model = engine.trace().map_or(0, Trace::heap_bytes);
        let (args, args_raw) = engine
            .trace()
            .map_or((0, 0), |t| (t.args.heap_bytes(), t.args.len()));
        let line = serde_json::json!({
            "bench": "stream", "target": "native", "file": file, "run": run, "threads": threads, "json_bytes": json,
            "events": summary.events, "seconds": secs, "mb_per_s": json as f64 / 1e6 / secs,
            "peak_rss_bytes": peak, "rss_ratio": peak.map(|p| p as f64 / json.max(1) as f64),
            "model_bytes": model, "model_ratio": model as f64 / json.max(1) as f64, "args_bytes": args, "args_raw_bytes": args_raw,
        });
        println!("{line}");
        if let Some(anchor) = anchor {
            let line = serde_json::json!({
                "bench": "python_json_load", "target": "native", "file": file, "run": run, "threads": threads,
                "seconds": anchor, "mb_per_s": json as f64 / 1e6 / anchor, "stream_seconds": secs, "ratio": anchor / secs,
            });
            println!("{line}");
        }
    }
    Ok(())
}

/// Seconds Python's `json.load` takes on `path` (the file opened, read and parsed) in a fresh
/// interpreter: the anchor the streamed load is compared with.
fn python_json_load(python: &str, path: &Path) -> Result<f64, String> {
    const TIMED: &str = "import json, sys, time\nt = time.perf_counter()\nwith open(sys.argv[1], 'rb') as f:\n    json.load(f)\nprint(time.perf_counter() - t)";
    let out = std::process::Command::new(python)
        .args(["-c", TIMED])
        .arg(path)
        .output()
        .map_err(|e| format!("cannot run {python:?}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match (out.status.success(), text.trim().parse::<f64>()) {
        (true, Ok(secs)) => Ok(secs),
        _ => Err(format!("{python} json.load of {path:?} failed: {}", String::from_utf8_lossy(&out.stderr).trim())),
    }
}

/// A `kB` field of /proc/self/status (Linux; 0 elsewhere): `VmRSS` now, `VmHWM` the peak.
fn rss_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':')?.trim().strip_suffix("kB")?.trim().parse().ok())
        .unwrap_or(0)
}

/// Parses `raw` (the file's bytes) `runs` times on `threads` threads, printing a line per run;
/// the first run also times the first view and the op table.
pub fn run(path: &Path, raw: &[u8], runs: usize, threads: usize) -> Result<(), String> {
    let file = path.display().to_string();
    for run in 0..runs {
        let started = Instant::now();
        let decoded = kinetoscope::input::decode(raw.to_vec(), Budget::UNLIMITED, &mut |_| {});
        let json = decoded.map_err(|t| t.sentence(&file))?.json;
        let trace = parse_parallel(&json, threads)?;
        let secs = started.elapsed().as_secs_f64();
        let index_bytes = trace.heap_bytes();
        let line = serde_json::json!({
            "bench": "parse_index", "target": "native", "file": file, "run": run, "threads": threads,
            "file_bytes": raw.len(), "json_bytes": json.len(), "events": trace.stats.events,
            "seconds": secs, "mb_per_s": json.len() as f64 / 1e6 / secs,
            "events_per_s": trace.stats.events as f64 / secs,
            "index_bytes": index_bytes, "index_ratio": index_bytes as f64 / json.len().max(1) as f64,
        });
        println!("{line}");
        if run == 0 {
            first_view(&file, &json);
            op_ranges(&file, &trace);
            critical_path(&file, &trace);
            trees(&file, &trace);
        }
    }
    Ok(())
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Times what the page asks the worker for before its first timeline paint: the load's index,
/// the layout, then tiles and counters of the whole trace at 1,600 pixels.
fn first_view(file: &str, json: &[u8]) {
    let mut engine = Engine::new();
    let started = Instant::now();
    if engine.load(file, json.to_vec(), &mut |_, _, _| {}).is_err() {
        return;
    }
    let load_ms = ms(started);
    let started = Instant::now();
    let Some(layout) = engine.layout() else {
        return;
    };
    let layout_ms = ms(started);
    let lanes = layout.groups.iter().flat_map(|g| g.lanes.iter().map(|l| l.lane)).collect();
    let resolution_ns = (layout.end_ns / 1600).max(1);
    let tiles = Query::Tiles { trace: protocol::TraceRef::Current, lanes, start_ns: 0, end_ns: layout.end_ns, resolution_ns, search: None };
    let started = Instant::now();
    let rect_words = engine.query(&tiles).ok().and_then(|(_, words)| words).map_or(0, |w| w.len());
    let tiles_ms = ms(started);
    let started = Instant::now();
    let _ = engine.query(&Query::Counters { start_ns: 0, end_ns: layout.end_ns, buckets: 800 });
    let counters_ms = ms(started);
    let Some(trace) = engine.trace() else {
        return;
    };
    let started = Instant::now();
    let _ = kinetoscope::analysis::gpu::GpuIndex::new(trace);
    let gpu_index_ms = ms(started);
    let started = Instant::now();
    let _ = kinetoscope::analysis::memory::analyze(trace, None, 0);
    let memory_ms = ms(started);
    let line = serde_json::json!({
        "bench": "first_view", "target": "native", "file": file, "load_ms": load_ms,
        "layout_ms": layout_ms, "tiles_ms": tiles_ms, "rects": rect_words / protocol::RECT_WORDS,
        "counters_ms": counters_ms, "gpu_index_ms": gpu_index_ms, "memory_ms": memory_ms,
    });
    println!("{line}");
}

/// Times the op table: index build once, then range queries as a brushed timeline asks them.
fn op_ranges(file: &str, trace: &Trace) {
    use kinetoscope::analysis::ops::{OpIndex, OpOptions};
    let started = Instant::now();
    let index = OpIndex::new(trace);
    let build_ms = ms(started);
    let end = trace.end_ns;
    for (label, t0, t1) in [("whole", 0, end), ("half", end / 4, end * 3 / 4), ("tenth", end / 2, end / 2 + end / 10)] {
        let started = Instant::now();
        let table = index.table(trace, &OpOptions { by_shape: false, range: Some((t0, t1)) });
        let line = serde_json::json!({
            "bench": "op_table_range", "target": "native", "file": file, "range": label,
            "slices": trace.slices.len(), "index_build_ms": build_ms, "query_ms": ms(started), "rows": table.rows.len(),
        });
        println!("{line}");
    }
}

/// Times the critical path of every step (or window), as the findings' impact asks it at load,
/// then a what-if on graphs kept (what the page's What if panel asks), with the graphs' memory.
fn critical_path(file: &str, trace: &Trace) {
    use kinetoscope::analysis::critical_path::{analyze, CriticalPaths, Edit};
    let steps = kinetoscope::analysis::steps::analyze(trace, None);
    let started = Instant::now();
    let paths = analyze(trace, &steps);
    let analyze_ms = ms(started);
    let started = Instant::now();
    let graphs = CriticalPaths::build(trace, &steps);
    let build_ms = ms(started);
    let edits: Vec<Edit> = ["gemm*0.5", "launch=0"].iter().filter_map(|e| e.parse().ok()).collect();
    let started = Instant::now();
    let answered = graphs.what_if(trace, &edits);
    let what_if_ms = ms(started);
    let segments: usize = paths.iter().map(|p| p.segments.len()).sum();
    let n = paths.len().max(1) as f64;
    let line = serde_json::json!({
        "bench": "critical_path", "target": "native", "file": file, "slices": trace.slices.len(),
        "steps": steps.steps.len(), "paths": paths.len(), "analyze_ms": analyze_ms, "ms_per_path": analyze_ms / n,
        "graphs_build_ms": build_ms, "what_if_ms": what_if_ms, "what_if_paths": answered.len(),
        "largest_graph_bytes": graphs.largest_graph_bytes(), "all_graphs_bytes": graphs.heap_bytes(),
        "path_segment_bytes": segments * std::mem::size_of::<kinetoscope::analysis::critical_path::PathSegment>(),
    });
    println!("{line}");
}

/// Times the two trees the user's terms are built from: the call tree (`report --tree`, the
/// flame graph) and the `nn.Module` tree (`report --modules`, the Modules tab), with the size
/// each keeps (nodes and their child lists; modules: rows).
fn trees(file: &str, trace: &Trace) {
    let started = Instant::now();
    let tree = kinetoscope::analysis::call_tree::build(trace, None);
    let call_tree_ms = ms(started);
    let node = std::mem::size_of::<kinetoscope::analysis::call_tree::CallNode>();
    let call_tree_bytes: usize = tree.nodes.iter().map(|n| node + n.children.capacity() * 4).sum();
    let started = Instant::now();
    let modules = kinetoscope::analysis::modules::analyze(trace);
    let module_tree_ms = ms(started);
    let line = serde_json::json!({
        "bench": "trees", "target": "native", "file": file, "slices": trace.slices.len(),
        "call_tree_ms": call_tree_ms, "call_tree_nodes": tree.nodes.len(), "call_tree_bytes": call_tree_bytes,
        "module_tree_ms": module_tree_ms, "module_rows": modules.rows.len(),
        "module_rows_bytes": modules.rows.capacity() * std::mem::size_of::<kinetoscope::analysis::modules::ModuleRow>(),
    });
    println!("{line}");
}

/// Parses `json` in `threads` parts on scoped threads (the engine itself never spawns any).
fn parse_parallel(json: &[u8], threads: usize) -> Result<Trace, String> {
    let plan = plan(json, threads).map_err(|e| e.to_string())?;
    let parts = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..plan.parts.len())
            .map(|i| {
                let plan = &plan;
                scope.spawn(move || parse_part(json, plan, i, &mut |_| {}))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| "a parse thread panicked".to_owned()))
            .collect::<Result<Vec<_>, _>>()
    })?;
    assemble(json, &plan, parts).map_err(|e| e.to_string())
}
