//! Runs and ranks (`kinetoscope::run`): a synthetic run with a designed straggler and clock
//! skew, missing and duplicate ranks, the four real dlrm ranks and the two HTA ranks. The
//! benchmark is `bench_run.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use common::DLRM;
use kinetoscope::analysis::{gpu, steps};
use kinetoscope::run::collective::MatchMode;
use kinetoscope::run::{self, ClockChoice, Format, RankSummary, RunAnalysis};
use kinetoscope::synth::run::{generate, Delay, RunSpec, ALLREDUCE_KERNEL};
use serde_json::Value;

/// The designed straggler: rank 5 computes 5 ms more before collective 1 of step index 2.
const D_NS: i64 = 5_000_000;
const SLOW_RANK: u32 = 5;
const SLOW_STEP_INDEX: u32 = 2;
const SLOW_COLLECTIVE: u32 = 1;

fn spec() -> RunSpec {
    RunSpec {
        delays: vec![Delay {
            rank: SLOW_RANK,
            step: SLOW_STEP_INDEX,
            collective: SLOW_COLLECTIVE,
            extra_ns: D_NS,
        }],
        ..RunSpec::default()
    }
}

fn summarize(name: &str, bytes: Vec<u8>) -> RankSummary {
    let (engine, result) = common::load_bytes(name, bytes);
    result.unwrap_or_else(|e| panic!("{name}: {}", e.message));
    run::summarize(name, engine.session().unwrap())
}

fn synthetic(spec: &RunSpec) -> Vec<RankSummary> {
    generate(spec)
        .into_iter()
        .enumerate()
        .map(|(r, b)| summarize(&format!("rank-{r}.json"), b))
        .collect()
}

fn one_run(summaries: Vec<RankSummary>, clock: ClockChoice) -> RunAnalysis {
    let mut runs = run::analyze(summaries, &[], clock);
    assert_eq!(runs.len(), 1, "one run expected");
    runs.remove(0)
}

fn rank_of(run: &RunAnalysis, member: usize) -> u32 {
    run.ranks[member].identity.rank.unwrap()
}

fn diag<'a>(run: &'a RunAnalysis, kind: &str) -> Vec<&'a str> {
    run.diagnostics
        .iter()
        .filter(|d| d.kind == kind)
        .map(|d| d.message.as_str())
        .collect()
}

/// The straggler checks shared by the plain, process-group and skewed runs.
fn assert_straggler(run: &RunAnalysis) {
    let s = &spec();
    let per_rank = (s.steps * s.collectives_per_step) as usize;
    assert_eq!(run.matching.instances.len(), per_rank);
    assert_eq!(run.matching.unmatched, 0);
    let top = &run.stragglers[0];
    assert_eq!(rank_of(run, top.member), SLOW_RANK, "{:?}", run.stragglers);
    assert_eq!(
        top.delayed_count, 1,
        "only the designed collective was delayed"
    );
    let d = &top.delayed[0];
    let slow_step = u64::from(s.first_step + SLOW_STEP_INDEX);
    assert_eq!(
        (d.step, d.index_in_step),
        (Some(slow_step), SLOW_COLLECTIVE)
    );
    let inst = &run.matching.instances[d.instance];
    assert_eq!(inst.name, ALLREDUCE_KERNEL);
    // Every other rank waits D, up to the jitter (< 2 µs per kernel, 6 kernels).
    let t = &run.times[d.instance];
    assert_eq!(rank_of(run, t.last), SLOW_RANK);
    for a in t.arrivals.iter().filter(|a| a.member != t.last) {
        let err = (a.wait_ns - D_NS).abs() as f64 / D_NS as f64;
        assert!(
            err < 0.05,
            "rank {} waited {} ns for D = {D_NS}",
            rank_of(run, a.member),
            a.wait_ns
        );
    }
    // Why: the lengthened kernel (the phase's last, `reduce_kernel`) by about D.
    let (kernel, extra) = &top.kernels[0];
    assert_eq!(kernel, "void at::native::reduce_kernel<512, 1>");
    assert!((extra - D_NS).abs() < D_NS / 20, "extra {extra}");
    // No other rank delayed anything.
    assert!(run.stragglers[1..].iter().all(|r| r.delayed_count == 0));
    let f = run
        .findings
        .iter()
        .find(|f| f.rule == "straggler-rank")
        .expect("straggler-rank finding");
    assert_eq!(f.evidence[0].rank, Some(SLOW_RANK));
    assert_eq!(
        (f.evidence[0].step, f.evidence[0].collective),
        (Some(slow_step), Some(d.instance))
    );
    assert!(!run
        .findings
        .iter()
        .any(|f| f.rule == "straggler-rank" && f.evidence[0].rank != Some(SLOW_RANK)));
}

#[test]
fn synthetic_straggler_is_named_with_its_collective_and_cause() {
    let summaries = synthetic(&spec());
    let run = one_run(summaries.clone(), ClockChoice::Auto);
    assert_eq!(run.world_size, Some(8));
    assert_eq!(run.matching.mode, MatchMode::StreamOrder);
    assert!(run.diagnostics.is_empty(), "{:?}", run.diagnostics);
    assert!(
        !run.clock.aligned,
        "one clock: offsets {:?}",
        run.clock.estimated_ns
    );
    assert_straggler(&run);
    // Each rank's summary: 4 steps, 16 collectives, a peak of 64 MiB.
    for r in &summaries {
        assert_eq!((r.steps.len(), r.collectives.len()), (4, 16));
        assert_eq!(r.peak_memory_bytes, Some(64 << 20));
        assert!(r.temporal.comm_non_overlapped_ns > 0 && r.temporal.overlap_pct == Some(0.0));
    }
    // The slow step is the outlier on rank 5 only.
    let outliers: Vec<(u32, u64)> = run
        .steps
        .iter()
        .filter(|c| c.outlier)
        .map(|c| (rank_of(&run, c.member), c.step))
        .collect();
    assert!(
        outliers.is_empty() || outliers == [(SLOW_RANK, 12)],
        "{outliers:?}"
    );

    // The same run with newer PyTorch's process group / sequence args matches by them.
    let pg = RunSpec {
        process_group_args: true,
        ..spec()
    };
    let run_pg = one_run(synthetic(&pg), ClockChoice::Auto);
    assert_eq!(run_pg.matching.mode, MatchMode::ProcessGroup);
    assert_straggler(&run_pg);
    assert_eq!(run_pg.stragglers, run.stragglers);
}

#[test]
fn skewed_clocks_are_recovered_and_change_nothing() {
    let skew_us = [0, 37, -120, 250, -5, 1_000, -400, 60];
    let skewed = RunSpec {
        skew_ns: skew_us.iter().map(|u| u * 1000).collect(),
        ..spec()
    };
    let run = one_run(synthetic(&skewed), ClockChoice::Auto);
    assert!(run.clock.aligned, "offsets up to 1 ms are significant");
    for (p, &want) in skew_us.iter().enumerate() {
        let got = run.clock.estimated_ns[p].unwrap();
        assert!(
            (got - want * 1000).abs() <= 2_000,
            "rank {p}: offset {got} ns, skew {want} µs"
        );
    }
    assert_straggler(&run);
    let plain = one_run(synthetic(&spec()), ClockChoice::Auto);
    assert_eq!(
        run.stragglers, plain.stragglers,
        "alignment restores the unskewed result"
    );
    // As recorded, rank 5's +1 ms clock makes it look late everywhere: the result changes.
    let raw = one_run(synthetic(&skewed), ClockChoice::AsRecorded);
    assert!(!raw.clock.aligned);
    assert_ne!(raw.stragglers, plain.stragglers);
}

#[test]
fn missing_and_duplicate_ranks_are_stated() {
    let bytes = generate(&spec());
    let mut summaries: Vec<RankSummary> = bytes
        .iter()
        .enumerate()
        .filter(|(r, _)| *r != 2)
        .map(|(r, b)| summarize(&format!("rank-{r}.json"), b.clone()))
        .collect();
    summaries.push(summarize("rank-3-again.json", bytes[3].clone()));
    let run = one_run(summaries, ClockChoice::Auto);
    assert_eq!(run.ranks.len(), 7);
    let ranks: Vec<u32> = (0..7).map(|p| rank_of(&run, p)).collect();
    assert_eq!(ranks, [0, 1, 3, 4, 5, 6, 7], "nothing renumbered");
    assert_eq!(
        diag(&run, "run_missing_ranks"),
        ["world size 8 but 7 of 8 ranks loaded: ranks 2 missing (1 files)"]
    );
    let dup = diag(&run, "run_duplicate_rank");
    assert_eq!(dup.len(), 1);
    assert!(
        dup[0].starts_with("rank 3 appears in 2 files") && dup[0].contains("rank-3-again.json"),
        "{dup:?}"
    );
    assert_straggler(&run);
    let json = run::json::run_json(&run);
    assert_eq!(json["diagnostics"].as_array().unwrap().len(), 2);
    // NDJSON states them too, one row each, in the envelope of the other rows.
    let rows: Vec<Value> = run::json::ndjson(3, &run)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let diags: Vec<&Value> = rows.iter().filter(|r| r["kind"] == "diagnostic").collect();
    assert_eq!(diags.len(), 2);
    for (row, d) in diags.iter().zip(&run.diagnostics) {
        assert_eq!(row["run"], 3);
        assert_eq!(row["diagnostic"], d.kind);
        assert_eq!(row["message"], d.message.as_str());
    }
    assert_eq!(
        diags.iter().map(|r| &r["diagnostic"]).collect::<Vec<_>>(),
        ["run_duplicate_rank", "run_missing_ranks"]
    );
    assert_eq!(rows.iter().filter(|r| r["kind"] == "step").count(), 7 * 4);
}

#[test]
fn ranks_of_different_world_sizes_are_different_runs() {
    let mut summaries = synthetic(&RunSpec {
        ranks: 2,
        world_size: 2,
        ..RunSpec::default()
    });
    summaries.extend(synthetic(&RunSpec {
        ranks: 2,
        world_size: 4,
        ..RunSpec::default()
    }));
    let runs = run::analyze(summaries, &[], ClockChoice::Auto);
    let shapes: Vec<(Option<u32>, usize)> =
        runs.iter().map(|r| (r.world_size, r.ranks.len())).collect();
    assert_eq!(shapes, [(Some(2), 2), (Some(4), 2)]);
    assert_eq!(
        diag(&runs[1], "run_missing_ranks"),
        ["world size 4 but 2 of 4 ranks loaded: ranks 2-3 missing (2 files)"]
    );
}

#[test]
fn collective_mismatches_are_diagnostics_naming_ranks() {
    // Rank 3 lost its last collective: the stream is not matched at all.
    let mut summaries = synthetic(&RunSpec {
        ranks: 4,
        world_size: 4,
        ..RunSpec::default()
    });
    summaries[3].collectives.pop();
    let run = one_run(summaries, ClockChoice::Auto);
    assert_eq!(run.matching.instances.len(), 0);
    assert_eq!(run.matching.unmatched, 16 * 3 + 15);
    assert_eq!(
        diag(&run, "run_collective_count_mismatch"),
        ["stream 20: collective counts differ (rank 0 has 16, rank 1 has 16, rank 2 has 16, rank 3 has 15); stream not matched"]
    );
    // Rank 1 ran another kernel as collective 5: matching stops there.
    let mut summaries = synthetic(&RunSpec {
        ranks: 4,
        world_size: 4,
        ..RunSpec::default()
    });
    summaries[1].collectives[5].name = "ncclDevKernel_AllGather_RING_LL".into();
    let run = one_run(summaries, ClockChoice::Auto);
    assert_eq!(run.matching.instances.len(), 5);
    let names = diag(&run, "run_collective_name_mismatch");
    assert_eq!(names.len(), 1);
    assert!(
        names[0].starts_with("stream 20 #5: kernel names differ")
            && names[0].contains("rank 1 \"ncclDevKernel_AllGather_RING_LL\""),
        "{names:?}"
    );
}

#[test]
fn rank_imbalance_compares_mean_step_times() {
    let mut summaries = synthetic(&RunSpec {
        ranks: 4,
        world_size: 4,
        ..RunSpec::default()
    });
    for s in &mut summaries[2].steps {
        s.dur_ns = s.dur_ns * 3 / 2;
    }
    summaries[2].step_mean_ns = summaries[2].step_mean_ns.map(|m| m * 1.5);
    let run = one_run(summaries, ClockChoice::Auto);
    let f = run
        .findings
        .iter()
        .find(|f| f.rule == "rank-imbalance")
        .expect("rank-imbalance");
    assert_eq!(f.evidence[0].rank, Some(2));
    assert!(f.why.contains("ratio 1.50 >= 1.2"), "{}", f.why);
    assert!(run
        .steps
        .iter()
        .filter(|c| c.outlier)
        .all(|c| rank_of(&run, c.member) == 2));
    assert_eq!(run.steps.iter().filter(|c| c.outlier).count(), 4);
}

#[test]
fn directories_expand_to_their_trace_files() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().to_path_buf();
    let spec = RunSpec {
        ranks: 3,
        world_size: 3,
        ..spec()
    };
    kinetoscope::synth::run::write_dir(&spec, &dir.join("nested")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a trace").unwrap();
    let out = run::load::run_files(std::slice::from_ref(&dir), 2, Format::Json);
    let json: Value = serde_json::from_str(&out.unwrap()).unwrap();
    assert_eq!(json["world_size"], 3);
    assert_eq!(json["ranks"].as_array().unwrap().len(), 3);
    assert_eq!(json["diagnostics"].as_array().unwrap().len(), 0);
    let missing = run::load::run_files(&[dir.join("absent.json")], 1, Format::Text).unwrap_err();
    assert!(
        missing.message.starts_with("no trace loaded:") && missing.message.contains("absent.json"),
        "{missing}"
    );
}

#[test]
fn dlrm_ranks_open_as_one_run_with_their_own_numbers() {
    let paths: Vec<_> = DLRM.iter().map(|n| common::real(n)).collect();
    let summaries: Vec<RankSummary> = run::load::summarize_files(&paths, 2)
        .unwrap()
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let run = one_run(summaries, ClockChoice::Auto);
    assert_eq!(
        (run.world_size, run.backend.as_deref()),
        (Some(8), Some("nccl"))
    );
    assert_eq!(
        diag(&run, "run_missing_ranks"),
        ["world size 8 but 4 of 8 ranks loaded: ranks 4-7 missing (4 files)"]
    );
    let json = run::json::run_json(&run);
    for (p, name) in DLRM.iter().enumerate() {
        // The single-trace numbers, as `kinetoscope report --json` computes them (`Sections`).
        let engine = common::load_real(name);
        let trace = engine.trace().unwrap();
        let report_steps = steps::analyze(trace, None);
        let steps_json = kinetoscope::report::steps::steps_json(trace, &report_steps, &[]);
        let stats_json = kinetoscope::report::steps::step_stats_json(&report_steps);
        let gpus_json = kinetoscope::report::gpu::gpus_json(&gpu::gpu_metrics(trace, None));
        let row = &json["ranks"][p];
        assert_eq!(row["rank"], p);
        assert_eq!(row["file"], *name);
        assert_eq!(row["steps"], steps_json.as_array().unwrap().len());
        assert_eq!(row["step_mean_us"], stats_json["mean_us"]);
        assert_eq!(row["step_p95_us"], stats_json["p95_us"]);
        assert_eq!(row["gpu_utilization_pct"], gpus_json[0]["utilization_pct"]);
        let ours: Vec<&Value> = json["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["rank"] == p)
            .map(|s| &s["dur_us"])
            .collect();
        let theirs: Vec<&Value> = steps_json
            .as_array()
            .unwrap()
            .iter()
            .map(|s| &s["dur_us"])
            .collect();
        assert_eq!(ours, theirs, "{name}");
        let r = &run.ranks[p];
        for (s, t) in r.steps.iter().zip(&report_steps.steps) {
            assert_eq!(
                (s.number, s.start_ns - trace.origin_ns, s.dur_ns),
                (t.number, t.start_ns, t.dur_ns())
            );
        }
        // Counted independently with Python over the JSON (`scripts/check/nccl_counts.py`):
        // 5 ncclKernel_SendRecv and 3 ncclKernel_AllReduce kernels per rank, all on stream 84.
        let count = |prefix: &str| {
            r.collectives
                .iter()
                .filter(|c| c.name.starts_with(prefix))
                .count()
        };
        assert_eq!(
            (count("ncclKernel_SendRecv"), count("ncclKernel_AllReduce")),
            (5, 3),
            "{name}"
        );
        assert!(r.collectives.iter().all(|c| &*c.stream == "84"));
        assert!(
            r.collectives
                .iter()
                .all(|c| c.group.is_none() && c.seq.is_none()),
            "old-style args"
        );
    }
    assert_eq!(run.matching.mode, MatchMode::StreamOrder);
    assert_eq!(
        (run.matching.instances.len(), run.matching.unmatched),
        (8, 0)
    );
    assert!(run
        .matching
        .instances
        .iter()
        .all(|i| i.members.iter().all(Option::is_some)));
    assert_eq!(json["collectives"]["matched"], 8);
    // One host, one clock: collective ends agree within a few µs, so times stay as recorded.
    assert!(!run.clock.aligned);
    assert!(
        run.clock
            .estimated_ns
            .iter()
            .all(|o| o.unwrap().abs() < 10_000),
        "{:?}",
        run.clock.estimated_ns
    );
    // The first SendRecv: rank 2 arrived last (7.1 ms after rank 1, by the kernel starts).
    let first = &run.times[0];
    assert_eq!(rank_of(&run, first.last), 2);
    assert_eq!(
        first.spread_ns,
        1_694_128_201_431_422_000 - 1_694_128_201_424_306_000
    );
    // Rank 2 is the straggler because it entered ProfilerStep#10 late (its step starts
    // 6.9 ms after rank 1's), not because of a slower kernel: its windows start 5.57 ms late.
    let top = &run.stragglers[0];
    assert_eq!((rank_of(&run, top.member), top.delayed_count), (2, 4));
    assert!(
        (5_500_000..5_650_000).contains(&top.late_start_ns),
        "{}",
        top.late_start_ns
    );
    assert!(
        top.kernels.iter().all(|k| k.1 < 10_000),
        "no kernel explains it: {:?}",
        top.kernels
    );
    for format in [Format::Text, Format::Json] {
        let out = run::load::run_files(&paths, 2, format).unwrap();
        if std::env::var_os("KINETOSCOPE_PRINT").is_some() {
            println!("{out}");
        }
        assert!(
            out.contains("ranks 4-7 missing"),
            "{format:?} states the missing ranks"
        );
    }
    let nd = run::load::run_files(&paths, 2, Format::Ndjson).unwrap();
    assert_eq!(
        nd.lines().count(),
        1 + 4 + 8 * 4,
        "the missing ranks' diagnostic, 4 rank x step rows, 8 instances x 4 ranks"
    );
}

#[test]
fn hta_two_ranks_of_128_are_one_run() {
    let paths: Vec<_> = [
        "hta__trace_filter__sampled_rank-0.json.gz",
        "hta__trace_filter__sampled_rank-1.json.gz",
    ]
    .iter()
    .map(|n| common::real(n))
    .collect();
    let summaries: Vec<RankSummary> = run::load::summarize_files(&paths, 2)
        .unwrap()
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let run = one_run(summaries, ClockChoice::Auto);
    assert_eq!(run.world_size, Some(128));
    assert_eq!(run.ranks.len(), 2);
    assert_eq!(
        diag(&run, "run_missing_ranks"),
        ["world size 128 but 2 of 128 ranks loaded: ranks 2-127 missing (126 files)"]
    );
    // 8 SendRecv on stream 84 and 2 on stream 203 per rank (`scripts/check/nccl_counts.py`),
    // matched in order.
    assert_eq!(
        (run.matching.instances.len(), run.matching.unmatched),
        (10, 0)
    );
}

#[test]
fn outputs_have_stable_keys_and_rows() {
    let run = one_run(synthetic(&spec()), ClockChoice::Auto);
    let json = run::json::run_json(&run);
    for key in [
        "world_size",
        "backend",
        "clock",
        "ranks",
        "steps",
        "collectives",
        "stragglers",
        "offsets_us",
        "findings",
        "diagnostics",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(json["ranks"].as_array().unwrap().len(), 8);
    assert_eq!(json["steps"].as_array().unwrap().len(), 32);
    assert_eq!(json["stragglers"][0]["rank"], SLOW_RANK);
    let nd = run::json::ndjson(0, &run);
    let rows: Vec<Value> = nd
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.iter().filter(|r| r["kind"] == "step").count(), 32);
    assert_eq!(
        rows.iter().filter(|r| r["kind"] == "collective").count(),
        16 * 8
    );
    let text = run::text::report(&run);
    if std::env::var_os("KINETOSCOPE_PRINT").is_some() {
        println!("{text}");
    }
    assert!(
        text.contains("STRAGGLERS") && text.contains("straggler-rank"),
        "{text}"
    );
}

/// Issue #43: a collective joins the ranks' paths. `synth::paths::generate_run` (ground truth
/// by construction, µs): both ranks run 10 Python, 1 of aten::mm, a 5 launch delay and a GEMM
/// from 16; the all-reduce arrives 2 after it and both end 400 after the last arrival; the sync
/// returns 2 later, then 3 Python. Rank 1's GEMM is 1,000 longer (16-1116), so rank 0's
/// all-reduce (118-1518) waits 1,000 inside: its own path says communication; joined, those
/// 1,000 are rank 1's path over the same moments: its GEMM (998) and its cross-stream wait (2).
#[test]
fn a_collective_joins_the_ranks_paths() {
    use kinetoscope::analysis::critical_path::BoundBy;
    use kinetoscope::synth::paths::generate_run;
    const US: i64 = 1_000;
    let ranks: Vec<RankSummary> =
        generate_run(1_000 * US).into_iter().enumerate().map(|(r, b)| summarize(&format!("rank-{r}.json"), b)).collect();
    let run = one_run(ranks, ClockChoice::Auto);
    let shares = |s: &[i64; 9]| -> Vec<(&'static str, i64)> {
        BoundBy::ALL.iter().filter(|c| s[c.index()] != 0).map(|c| (c.as_str(), s[c.index()] / US)).collect()
    };
    let own: Vec<_> = run.ranks.iter().map(|r| shares(&r.critical.shares)).collect();
    let joined: Vec<_> = run.joined.iter().map(|j| shares(&j.shares)).collect();
    let common = [("cpu_op", 1), ("cpu_overhead", 13), ("launch_delay", 5)];
    let with = |rest: &[(&'static str, i64)]| -> Vec<(&'static str, i64)> {
        let mut v: Vec<_> = common.iter().chain(rest).copied().collect();
        v.sort_by_key(|(c, _)| BoundBy::ALL.iter().position(|b| b.as_str() == *c));
        v
    };
    assert_eq!(own[0], with(&[("gpu_compute", 100), ("gpu_communication", 1_400), ("sync_wait", 4)]), "rank 0's own path");
    assert_eq!(own[1], with(&[("gpu_compute", 1_100), ("gpu_communication", 400), ("sync_wait", 4)]), "rank 1's own path");
    assert_eq!(joined[0], with(&[("gpu_compute", 1_098), ("gpu_communication", 400), ("sync_wait", 6)]), "rank 0 joined");
    assert_eq!(joined[1], own[1], "the last arriver waited for no one");
    assert_eq!((run.joined[0].waited_ns, run.joined[0].waited_on.clone()), (1_000 * US, vec![(1, 1_000 * US)]));
    assert_eq!(run.ranks[0].critical.bound_by(), Some(BoundBy::GpuCommunication));
    assert_eq!(run.joined[0].bound_by(), Some(BoundBy::GpuCompute));
    let json = kinetoscope::run::json::run_json(&run);
    let j = &json["ranks"][0]["joined_path"];
    assert_eq!((j["bound_by"].as_str(), j["waited_us"].as_f64(), j["waited_on"][0]["rank"].as_u64()), (Some("gpu_compute"), Some(1_000.0), Some(1)));
}
