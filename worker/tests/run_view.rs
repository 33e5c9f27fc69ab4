//! The engine's run state (what the page's Run tab reads): the four dlrm ranks loaded one by
//! one through the engine's load path give the same `RunData` as the native run entry
//! (`kinetoscope run --json`); at most `KEEP_MODELS` models are kept; opening a kept rank makes
//! it current, a dropped one asks for a reload.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use kinetoscope::engine::{Engine, RankOpen};
use kinetoscope::ranks::KEEP_MODELS;
use kinetoscope::run::{self, Format};
use protocol::{Answer, Query, RunData};

fn dlrm() -> Vec<std::path::PathBuf> {
    let dir = common::shared().join("fixtures/real");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("param__dlrm_kineto__worker"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 4, "the four dlrm ranks in {}", dir.display());
    files
}

fn name(p: &std::path::Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn ranks_loaded_one_by_one_match_the_cli() {
    let files = dlrm();
    let mut engine = Engine::new();
    engine.begin_run(files.iter().map(|p| name(p)).collect());
    assert!(engine.query(&Query::Run).is_err(), "no answer before every rank is in");
    for (i, p) in files.iter().enumerate() {
        let summary = engine.load(&name(p), std::fs::read(p).unwrap(), &mut |_, _, _| {}).unwrap();
        let info = engine.keep_rank(i, summary).unwrap();
        assert_eq!(info.rank, Some(i as u32), "{}", info.name);
        assert!(info.steps > 0);
        assert!(engine.run().unwrap().kept() <= KEEP_MODELS);
    }
    let current = engine.finish_run().unwrap();
    assert_eq!(current.file_name, name(&files[3]));
    let (Answer::Run(data), _) = engine.query(&Query::Run).unwrap() else { panic!("not a run answer") };
    let cli: RunData = serde_json::from_str(&run::load::run_files(&files, 1, Format::Json).unwrap()).unwrap();
    assert_eq!(*data, cli);
    assert_eq!(data.world_size, Some(8));
    assert_eq!(data.ranks.len(), 4);
    assert!(data.diagnostics.iter().any(|d| d.kind == "run_missing_ranks"), "{:?}", data.diagnostics);
    assert!(!data.steps.is_empty());

    // Rank 3 was loaded last: kept. Rank 0 was dropped (KEEP_MODELS = 3 of 4).
    assert!(matches!(engine.open_rank(3), RankOpen::Ready(s) if s.file_name == name(&files[3])));
    assert!(matches!(engine.open_rank(0), RankOpen::Reload(0)));
    assert!(matches!(engine.open_rank(7), RankOpen::Unknown));
    let again = engine.load(&name(&files[0]), std::fs::read(&files[0]).unwrap(), &mut |_, _, _| {}).unwrap();
    engine.keep_rank(0, again).unwrap();
    assert!(matches!(engine.open_rank(2), RankOpen::Ready(s) if s.file_name == name(&files[2])));
    assert_eq!(engine.run().unwrap().kept(), KEEP_MODELS);
    // The run analysis survives the reloads.
    let (Answer::Run(after), _) = engine.query(&Query::Run).unwrap() else { panic!("not a run answer") };
    assert_eq!(*after, cli);
}

#[test]
fn a_failed_rank_is_a_diagnostic_and_the_last_good_one_is_current() {
    let files = dlrm();
    let mut engine = Engine::new();
    let mut names: Vec<String> = files.iter().take(2).map(|p| name(p)).collect();
    names.push("broken.json".into());
    engine.begin_run(names);
    for (i, p) in files.iter().take(2).enumerate() {
        let summary = engine.load(&name(p), std::fs::read(p).unwrap(), &mut |_, _, _| {}).unwrap();
        engine.keep_rank(i, summary).unwrap();
    }
    let error = engine.load("broken.json", b"{\"traceEvents\": [".to_vec(), &mut |_, _, _| {}).err();
    let failed = engine.rank_failed(2, error.map_or("?".into(), |e| e.message)).unwrap();
    assert!(failed.error.is_some());
    let current = engine.finish_run().unwrap();
    assert_eq!(current.file_name, name(&files[1]));
    assert!(engine.trace().is_some());
    let (Answer::Run(data), _) = engine.query(&Query::Run).unwrap() else { panic!("not a run answer") };
    assert_eq!(data.ranks.len(), 2);
    assert!(data.diagnostics.iter().any(|d| d.kind == "run_file_error" && d.message.contains("broken.json")));
    // A single load afterwards ends the run.
    engine.end_run();
    assert!(engine.query(&Query::Run).is_err());
}

/// Writes the browser run benchmark's input (ignored; `e2e/tests/run-bench.spec.js`): 8
/// synthetic ranks of ~25 MB (the spec of `tests/bench_run.rs`) and a `run.json` manifest, into
/// `KINETOSCOPE_BENCH_RUN_DIR` (default `target/bench-data/run8`).
///
/// ```text
/// cargo test --release -p kinetoscope --test run_view -- --ignored --nocapture
/// ```
#[test]
#[ignore = "benchmark input: writes ~200 MB"]
fn write_browser_bench_run() {
    use kinetoscope::synth::run::{write_dir, Delay, RunSpec};
    let dir = std::env::var_os("KINETOSCOPE_BENCH_RUN_DIR").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-data/run8"),
        std::path::PathBuf::from,
    );
    let spec = RunSpec {
        ranks: 8,
        world_size: 8,
        steps: 10,
        collectives_per_step: 8,
        kernels_per_collective: 590,
        kernel_ns: 20_000,
        delays: vec![Delay { rank: 2, step: 4, collective: 2, extra_ns: 5_000_000 }],
        ..RunSpec::default()
    };
    let paths = write_dir(&spec, &dir).unwrap();
    let ranks: Vec<serde_json::Value> = paths
        .iter()
        .enumerate()
        .map(|(rank, p)| serde_json::json!({"url": name(p), "rank": rank}))
        .collect();
    std::fs::write(dir.join("run.json"), serde_json::json!({ "ranks": ranks }).to_string()).unwrap();
    let bytes: u64 = paths.iter().map(|p| std::fs::metadata(p).unwrap().len()).sum();
    println!("{}", serde_json::json!({"dir": dir, "ranks": paths.len(), "bytes": bytes}));
}
