//! Test helpers: locate the shared fixtures, read (and gunzip) them, load through the engine.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

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

/// tb_plugin's numbers for a real fixture (`fixtures/oracle/STEM.tbhead.json`, REFERENCE.md §6).
pub fn oracle(fixture: &str) -> serde_json::Value {
    let stem = fixture.trim_end_matches(".gz").trim_end_matches(".json");
    let path = shared().join(format!("fixtures/oracle/{stem}.tbhead.json"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}
