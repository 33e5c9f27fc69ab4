//! Run benchmark (ignored; figures, not timed assertions): 256 synthetic ranks of ~25 MB
//! written to a temp dir and summarized by `run::load::summarize_files`; prints one JSON line
//! with wall times and peak RSS (VmHWM). Figures are kept in docs/runs.md.
//!
//! ```text
//! cargo test --release -p kinetoscope --test all bench_run:: -- --ignored --nocapture
//! KINETOSCOPE_RUN_BENCH_RANKS=32 KINETOSCOPE_RUN_BENCH_THREADS=2 cargo test ...   # smaller
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use kinetoscope::run::{self, ClockChoice, Format, RankSummary};
use kinetoscope::synth::run::{Delay, RunSpec};

/// The designed straggler's extra compute, ns.
const D_NS: i64 = 5_000_000;

/// Benchmark (ignored): 256 synthetic ranks of ~25 MB written to a temp dir, summarized with
/// 2 threads. Prints wall time and peak RSS (VmHWM); no timed assertion.
#[test]
#[ignore = "benchmark: writes ~6 GB to a temp dir"]
fn bench_summarize_256_ranks() {
    let ranks: u32 = std::env::var("KINETOSCOPE_RUN_BENCH_RANKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let threads: usize = std::env::var("KINETOSCOPE_RUN_BENCH_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let spec = RunSpec {
        ranks,
        world_size: ranks,
        steps: 10,
        collectives_per_step: 8,
        kernels_per_collective: 590,
        kernel_ns: 20_000,
        delays: vec![Delay {
            rank: ranks / 3,
            step: 4,
            collective: 2,
            extra_ns: D_NS,
        }],
        ..RunSpec::default()
    };
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().to_path_buf();
    let started = std::time::Instant::now();
    let paths = kinetoscope::synth::run::write_dir(&spec, &dir).unwrap();
    let bytes: u64 = paths
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    let gen_s = started.elapsed().as_secs_f64();
    let hwm_after_gen = vm_hwm_kb();
    let started = std::time::Instant::now();
    let results = run::load::summarize_files(std::slice::from_ref(&dir), threads).unwrap();
    let summarize_s = started.elapsed().as_secs_f64();
    let summaries: Vec<RankSummary> = results.into_iter().map(Result::unwrap).collect();
    let started = std::time::Instant::now();
    let mut runs = run::analyze(summaries, &[], ClockChoice::Auto);
    assert_eq!(runs.len(), 1);
    let run = runs.remove(0);
    let out = run::render(std::slice::from_ref(&run), Format::Json);
    let analyze_s = started.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "ranks": ranks, "threads": threads, "total_mb": bytes as f64 / 1e6,
            "mb_per_rank": bytes as f64 / 1e6 / f64::from(ranks),
            "generate_s": gen_s, "summarize_s": summarize_s, "analyze_render_s": analyze_s,
            "mb_per_s": bytes as f64 / 1e6 / summarize_s,
            "vm_hwm_mb_after_generate": hwm_after_gen / 1024, "vm_hwm_mb": vm_hwm_kb() / 1024,
            "json_bytes": out.len(), "straggler": run.stragglers.first().and_then(|s| run.ranks[s.member].identity.rank),
        })
    );
}

/// Peak resident set size of this process, kB (`VmHWM` in /proc/self/status; 0 elsewhere).
fn vm_hwm_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}
