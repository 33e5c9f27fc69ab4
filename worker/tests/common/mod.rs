//! Test helpers: locate the shared fixtures, read (and gunzip) them, load through the engine.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use kinetoscope::engine::Engine;
use protocol::TraceSummary;
use std::io::Read;
use std::path::PathBuf;

/// The shared folder beside the repo (`KINETOSCOPE_SHARED` overrides).
pub fn shared() -> PathBuf {
    match std::env::var_os("KINETOSCOPE_SHARED") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
    }
}

/// Every trace file in `fixtures/real/` (sorted).
pub fn real_fixtures() -> Vec<PathBuf> {
    let dir = shared().join("fixtures/real");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {dir:?}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json" || x == "gz"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "expected the real fixtures in {dir:?}");
    files
}

/// Runs `check` on every real fixture, on as many threads as there are cores, largest file
/// first: the whole-fixture parse tests are most of the suite's time, and the harness runs each
/// of them on one core. A check that panics fails the test (the scope re-raises it).
pub fn for_each_real_fixture(check: impl Fn(&std::path::Path) + Sync) {
    let mut files = real_fixtures();
    files.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).map_or(0, |m| m.len())));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(files.len());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while let Some(path) = files.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    check(path);
                }
            });
        }
    });
}

/// The four dlrm ranks (of a world of 8) in `fixtures/real`, by rank.
pub const DLRM: [&str; 4] = [
    "param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json",
    "param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json",
    "param__dlrm_kineto__worker2_step_12.1694128201554.pt.trace.json",
    "param__dlrm_kineto__worker3_step_12.1694128201557.pt.trace.json",
];

/// One real fixture by file name.
pub fn real(name: &str) -> PathBuf {
    shared().join("fixtures/real").join(name)
}

/// File bytes, gunzipped when gzip.
pub fn json_bytes(path: &std::path::Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap();
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    }
}

/// Loads `bytes` through the engine (as the worker and CLI do).
pub fn load_bytes(
    name: &str,
    bytes: Vec<u8>,
) -> (Engine, Result<TraceSummary, protocol::LoadError>) {
    let mut engine = Engine::new();
    let result = engine.load(name, bytes, &mut |_, _, _| {});
    (engine, result)
}

/// Loads a file; panics with the engine's message on failure.
pub fn load(path: &std::path::Path) -> (Engine, TraceSummary) {
    let (engine, result) = load_bytes(&path.to_string_lossy(), std::fs::read(path).unwrap());
    let summary = result.unwrap_or_else(|e| panic!("{path:?}: {}", e.message));
    (engine, summary)
}

/// Loads inline JSON text.
pub fn load_str(text: &str) -> (Engine, TraceSummary) {
    let (engine, result) = load_bytes("inline.json", text.as_bytes().to_vec());
    (engine, result.unwrap_or_else(|e| panic!("{}", e.message)))
}

/// A real fixture loaded through the engine; panics with the engine's message on failure.
pub fn load_real(name: &str) -> Engine {
    let (engine, result) = load_bytes(name, json_bytes(&real(name)));
    result.unwrap_or_else(|e| panic!("{name}: {}", e.message));
    engine
}

/// tb_plugin's numbers for a real fixture: `fixtures/oracle/STEM.tbhead.json`
/// (docs/definitions.md §6).
pub fn oracle(fixture: &str) -> serde_json::Value {
    oracle_if_any(fixture).unwrap_or_else(|| panic!("no oracle for {fixture}"))
}

/// tb_plugin's numbers for a real fixture, or `None` for the fixtures added after the plugin's
/// removal (they are checked against independent counts instead).
pub fn oracle_if_any(fixture: &str) -> Option<serde_json::Value> {
    let stem = fixture.trim_end_matches(".gz").trim_end_matches(".json");
    let path = shared().join(format!("fixtures/oracle/{stem}.tbhead.json"));
    let bytes = std::fs::read(&path).ok()?;
    Some(serde_json::from_slice(&bytes).unwrap())
}

/// Everything observable about a model, as text: summary, slices in display order with their
/// names, args and links, instants, counters, diagnostics (with offsets), truncation and
/// top-level keys. Ids are remapped by merging split parses; names are not.
pub fn fingerprint(t: &kinetoscope::model::Trace) -> String {
    use std::fmt::Write as _;
    let mut out = format!("{:?}\n", kinetoscope::answer::summary::summarize(t, "x", 0, 0, false));
    let s = &t.slices;
    // Display order: lane ids are creation order, which may differ between parse paths.
    let display = t.processes.iter().flat_map(|p| p.lanes.iter()).flat_map(|l| {
        let r = &t.lanes[l.0 as usize].slices;
        r.start as usize..r.end as usize
    });
    for i in display {
        let lane = &t.lanes[s.lane[i].0 as usize];
        let _ = writeln!(
            out,
            "{} {} {} {} {} {} {} {} {} {}",
            t.strings.get(lane.tid),
            s.start_ns[i],
            s.dur_ns[i],
            t.strings.get(s.name[i]),
            s.depth[i],
            s.row[i],
            t.args_text(s.args[i]),
            s.correlation[i],
            s.launch[i] != kinetoscope::model::NONE,
            s.offset[i]
        );
    }
    let i = &t.instants;
    for k in 0..i.ts_ns.len() {
        let lane = i.lane[k].0;
        let tid = t.lanes.get(lane as usize).map(|l| t.strings.get(l.tid).into_owned()).unwrap_or_default();
        let _ = writeln!(out, "instant {} {tid} {} {}", i.ts_ns[k], t.strings.get(i.name[k]), t.args_text(i.args[k]));
    }
    let c = &t.counters;
    for k in 0..c.ts_ns.len() {
        let pid = t.processes.get(c.process[k] as usize).map(|p| t.strings.get(p.pid).into_owned()).unwrap_or_default();
        let _ = writeln!(out, "counter {} {pid} {} {}", c.ts_ns[k], t.strings.get(c.name[k]), t.args_text(c.args[k]));
    }
    let _ = writeln!(out, "flows {} unlinked {}", t.flows.len(), t.flows_unlinked);
    let _ = writeln!(out, "diagnostics {:?}", t.diagnostics.lines());
    let _ = writeln!(out, "truncated {} form {:?} origin {} end {} top {:?}", t.truncated, t.form, t.origin_ns, t.end_ns, t.top_level);
    out
}
