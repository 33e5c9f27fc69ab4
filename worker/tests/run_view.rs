//! The engine's run state (what the page's Run tab reads): the four dlrm ranks loaded one by
//! one through the engine's load path give the same `RunData` as the native run entry
//! (`kinetoscope run --json`); at most `KEEP_MODELS` models are kept; opening a kept rank makes
//! it current, a dropped one asks for a reload.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::engine::{Engine, RankOpen, Target};
use kinetoscope::model::CatClass;
use kinetoscope::ranks::KEEP_MODELS;
use kinetoscope::run::{self, Format};
use protocol::{Align, Answer, Layout, Query, RunData, TraceRef};

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

/// An engine with the run of `files` (name, bytes) loaded one by one, as the page does.
fn run_engine(files: &[(String, Vec<u8>)]) -> Engine {
    let mut engine = Engine::new();
    engine.begin_run(files.iter().map(|(n, _)| n.clone()).collect());
    for (i, (n, bytes)) in files.iter().enumerate() {
        let summary = engine.load(n, bytes.clone(), &mut |_, _, _| {}).unwrap();
        engine.keep_rank(i, summary).unwrap();
    }
    engine.finish_run().unwrap();
    engine
}

/// Reloads the files `hold` asks for, as the worker does (`Target::Held`: the current trace stays).
fn hold(engine: &mut Engine, files: &[(String, Vec<u8>)], ranks: &[u32]) -> Vec<(u32, String)> {
    let hold = engine.hold_ranks(ranks);
    for &(_, index) in &hold.reload {
        let (n, bytes) = &files[index];
        let prepared = engine.prepare_to(Target::Held(index), n, bytes.clone(), 1, &mut |_, _, _| {}).unwrap();
        let part = kinetoscope::load::parse_part(&prepared.json, &prepared.plan, 0, &mut |_| {});
        engine.complete(prepared, vec![part]).unwrap();
    }
    hold.refused
}

fn layout_of(engine: &mut Engine, rank: u32, align: Align) -> Layout {
    match engine.query(&Query::Layout { trace: TraceRef::Rank(rank), align }).unwrap().0 {
        Answer::Layout(l) => l,
        other => panic!("not a layout: {other:?}"),
    }
}

#[test]
fn held_ranks_answer_beside_the_current_trace() {
    let files: Vec<(String, Vec<u8>)> = dlrm().iter().map(|p| (name(p), std::fs::read(p).unwrap())).collect();
    let mut engine = run_engine(&files);
    let current = engine.session().unwrap().name().to_owned();
    assert_eq!(current, files[3].0);
    // Rank 0's model was dropped (KEEP_MODELS = 3 of 4): it is reloaded; 9 is not in the run.
    assert!(engine.query(&Query::Layout { trace: TraceRef::Rank(0), align: Align::Recorded }).is_err());
    let refused = hold(&mut engine, &files, &[0, 1, 2, 3, 9]);
    assert_eq!(refused, vec![(9, "rank 9 is not in the run".to_owned())]);
    assert_eq!(engine.run().unwrap().held(), vec![0, 1, 2, 3]);
    assert_eq!(engine.session().unwrap().name(), current, "the current trace stays");

    // One CPU lane shown per rank (the main thread: the one with ProfilerStep#N), the other
    // threads folded, every GPU stream with kernels.
    for rank in 0..4 {
        let l = layout_of(&mut engine, rank, Align::Recorded);
        let cpu: Vec<_> = l.groups.iter().filter(|g| g.kind == "cpu" && !g.folded).collect();
        assert_eq!(cpu.iter().map(|g| g.lanes.len()).sum::<usize>(), 1, "rank {rank}: {cpu:?}");
        assert!(l.groups.iter().any(|g| g.kind == "gpu" && !g.lanes.is_empty()));
        assert!(l.groups.iter().filter(|g| g.folded).all(|g| g.kind == "cpu"));
        let steps = l.steps.first().unwrap();
        let (Answer::Tiles(t), Some(words)) = engine
            .query(&Query::Tiles {
                trace: TraceRef::Rank(rank),
                lanes: vec![cpu[0].lanes[0].lane],
                start_ns: steps.start_ns,
                end_ns: steps.end_ns,
                resolution_ns: 1,
                search: Some("ProfilerStep".into()),
            })
            .unwrap()
        else {
            panic!("no tiles")
        };
        let flagged = words.chunks(protocol::RECT_WORDS).filter(|w| w[4] & protocol::RECT_MATCH != 0).count();
        assert!(flagged >= 1, "the main thread holds the step, flagged by the search: {t:?}");
    }

    // Recorded: the earliest rank starts the axis; origins differ by the traces' origin gaps.
    let run = engine.run().unwrap().analysis().unwrap();
    let abs: Vec<i64> = run.ranks.iter().map(|r| r.origin_ns).collect();
    let first = *abs.iter().min().unwrap();
    let offsets: Vec<f64> = {
        let (Answer::Run(data), _) = engine.query(&Query::Run).unwrap() else { panic!() };
        data.offsets_us.iter().map(|o| o.offset_us.unwrap_or(0.0)).collect()
    };
    for rank in 0..4u32 {
        let recorded = layout_of(&mut engine, rank, Align::Recorded).origin_ns;
        assert_eq!(recorded, first - abs[rank as usize], "rank {rank}");
        // Aligned: shifted by the offset `run --json` prints (relative to the earliest start).
        let aligned = layout_of(&mut engine, rank, Align::Collectives).origin_ns;
        let shift = aligned - recorded;
        let d0 = layout_of(&mut engine, 0, Align::Collectives).origin_ns - layout_of(&mut engine, 0, Align::Recorded).origin_ns;
        let want = (offsets[rank as usize] - offsets[0]) * 1e3;
        assert!(((shift - d0) as f64 - want).abs() < 1.0, "rank {rank}: {} vs {want}", shift - d0);
    }
}

#[test]
fn a_selected_collective_is_found_on_every_rank() {
    use kinetoscope::synth::run::{generate, Delay, RunSpec};
    // Rank 2 computes 3 ms longer before collective 1 of step 2; clocks skewed by known amounts.
    let spec = RunSpec {
        ranks: 4,
        world_size: 4,
        steps: 3,
        delays: vec![Delay { rank: 2, step: 2, collective: 1, extra_ns: 3_000_000 }],
        skew_ns: vec![0, 250_000, -120_000, 40_000],
        ..RunSpec::default()
    };
    let files: Vec<(String, Vec<u8>)> =
        generate(&spec).into_iter().enumerate().map(|(r, b)| (format!("rank-{r}.json"), b)).collect();
    let mut engine = run_engine(&files);
    hold(&mut engine, &files, &[0, 1, 2, 3]);
    // Aligned by collectives, every rank's axis is shifted by its designed skew.
    let origins: Vec<i64> = (0..4).map(|r| layout_of(&mut engine, r, Align::Collectives).origin_ns).collect();
    let recorded: Vec<i64> = (0..4).map(|r| layout_of(&mut engine, r, Align::Recorded).origin_ns).collect();
    for r in 1..4 {
        let shift = (origins[r] - recorded[r]) - (origins[0] - recorded[0]);
        assert!((shift - spec.skew_ns[r]).abs() <= 5_000, "rank {r}: shift {shift} vs skew {}", spec.skew_ns[r]);
    }
    // Rank 0's collective kernels on its communication stream, in order; the one of step
    // index 2, #1.
    let session = engine.session_of_rank(0).unwrap();
    let t = session.trace();
    let s = &t.slices;
    let comm: Vec<usize> = (0..s.len())
        .filter(|&i| t.class(s.cat[i]) == CatClass::Kernel && t.strings.get(s.name[i]).contains("AllReduce"))
        .collect();
    assert_eq!(comm.len() as u32, spec.steps * spec.collectives_per_step);
    let k = comm[(2 * spec.collectives_per_step + 1) as usize];
    let Answer::Collective(Some(m)) = engine.query(&Query::Collective { trace: TraceRef::Rank(0), slice: k as u32 }).unwrap().0 else {
        panic!("not a matched collective")
    };
    assert_eq!(m.members.len(), 4);
    assert_eq!(m.last_rank, Some(2), "the delayed rank arrives last");
    let mine = m.members.iter().find(|x| x.rank == 0).unwrap();
    assert_eq!((mine.start_ns, mine.end_ns), (s.start_ns[k], s.end_ns(k)));
    let mut order: Vec<u32> = m.members.iter().map(|x| x.arrival).collect();
    order.sort_unstable();
    assert_eq!(order, vec![0, 1, 2, 3]);
    // The others waited the designed 3 ms (within 5 %); the last arriver not at all.
    for x in &m.members {
        if x.rank == 2 {
            assert_eq!(x.wait_us, 0.0);
        } else {
            assert!((x.wait_us - 3000.0).abs() <= 150.0, "rank {} waited {} µs", x.rank, x.wait_us);
        }
    }
    // A compute kernel is no collective.
    let compute = (0..s.len()).find(|&i| t.class(s.cat[i]) == CatClass::Kernel && !comm.contains(&i)).unwrap();
    let (answer, _) = engine.query(&Query::Collective { trace: TraceRef::Rank(0), slice: compute as u32 }).unwrap();
    assert_eq!(answer, Answer::Collective(None));
}

/// Writes the browser run benchmark's input (ignored; `e2e/tests/run-bench.spec.js`): 8
/// synthetic ranks of ~25 MB (the spec of `tests/bench_run.rs`) and a `run.json` manifest, into
/// `KINETOSCOPE_BENCH_RUN_DIR` (default `target/bench-data/run8`).
///
/// ```text
/// cargo test --release -p kinetoscope --test all run_view:: -- --ignored --nocapture
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
